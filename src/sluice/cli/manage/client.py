"""The HTTP client of the Kafka Connect REST API: one method per endpoint the commands use,
and the worker's URL, normalised, with credentials written in it (``https://name:password@host``)
taken out for basic authentication."""

from __future__ import annotations

import ssl
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import httpx2

from sluice.cli.manage.errors import UnreachableError, UsageError, WorkerError
from sluice.cli.manage.tls import tls_hint

DEFAULT_URL = "http://localhost:8083"
URL_ENV = "SLUICE_URL"
USER_ENV = "SLUICE_USER"  # NAME:PASSWORD for a worker with basic authentication

# A Connect worker answers each request within 90 s (its own request timeout), so the
# client waits a little longer than that before giving up on an answer.
REQUEST_TIMEOUT = httpx2.Timeout(100.0, connect=10.0)


def normalize_url(url: str) -> str:
    """``localhost:8083`` → ``http://localhost:8083``; no trailing slash."""
    url = url.strip()
    if not url:
        raise UsageError("the worker URL is empty")
    if "://" not in url:
        url = "http://" + url
    return url.rstrip("/")


def _split_credentials(url: str) -> tuple[str, str | None]:
    """The URL without ``name:password@``, and those credentials (decoded) when it had them."""
    parts = urlsplit(url)
    if parts.username is None:
        return url, None
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    credentials = unquote(parts.username) + ":" + unquote(parts.password or "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)), credentials


def _segment(value: str) -> str:
    return quote(value, safe="")


_NO_BODY: Any = object()


class ConnectClient:
    """A small client of the Kafka Connect REST API; one method per endpoint used.

    Each method returns the decoded JSON body (``None`` when the answer has no body) and
    raises :class:`WorkerError` for an error answer and :class:`UnreachableError` when
    the worker cannot be reached."""

    def __init__(
        self,
        url: str,
        transport: httpx2.BaseTransport | None = None,
        user: str | None = None,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        url, from_url = _split_credentials(normalize_url(url))
        self.url = url
        credentials = user or from_url  # "name:password", as curl's --user takes it
        auth = None
        if credentials:
            name, _, password = credentials.partition(":")
            auth = httpx2.BasicAuth(name, password)
        self._http = httpx2.Client(
            base_url=self.url,
            timeout=REQUEST_TIMEOUT,
            transport=transport,
            headers={"Accept": "application/json"},
            auth=auth,
            verify=verify,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ConnectClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, method: str, path: str, *, params: Any = None, body: Any = _NO_BODY) -> tuple[int, Any]:
        """``(status, decoded JSON body or None)`` of a successful answer."""
        kwargs: dict[str, Any] = {"params": params}
        if body is not _NO_BODY:
            kwargs["json"] = body
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx2.TimeoutException as exc:
            raise UnreachableError(
                f"no answer from the Connect worker at {self.url} ({type(exc).__name__}); check --url or ${URL_ENV}"
            ) from None
        except (httpx2.TransportError, httpx2.InvalidURL) as exc:
            reason = str(exc) or type(exc).__name__
            raise UnreachableError(
                f"cannot connect to the Connect worker at {self.url}: {reason}; {self._tls_hint(reason)}"
                f"check --url or ${URL_ENV}"
            ) from None
        data: Any = None
        parsed = False
        if response.content.strip():
            try:
                data = response.json()
                parsed = True
            except ValueError:
                data = None
        if response.is_success:
            if response.content.strip() and not parsed:
                raise WorkerError(
                    response.status_code,
                    f"the worker at {self.url} answered {method} {path} with a body that is not JSON; "
                    "is it a Kafka Connect worker?",
                )
            return response.status_code, data
        message = data.get("message") if isinstance(data, dict) else None
        if not message:
            text = response.text.strip()[:500] if not parsed else ""
            message = text or f"HTTP {response.status_code} {response.reason_phrase}".strip()
        if response.status_code == 401:
            message = f"{message} Give credentials with --user NAME:PASSWORD or ${USER_ENV}"
        raise WorkerError(response.status_code, f"{message} (HTTP {response.status_code})")

    def _tls_hint(self, reason: str) -> str:
        return (tls_hint(reason) or "") if self.url.lower().startswith("https://") else ""

    def get(self, path: str, params: Any = None) -> Any:
        return self.request("GET", path, params=params)[1]

    # -- endpoints

    def server_info(self) -> Any:
        return self.get("/")

    def connectors(self, expand: Sequence[str] = ()) -> Any:
        return self.get("/connectors", params=[("expand", e) for e in expand] or None)

    def connector_info(self, name: str) -> Any:
        return self.get(f"/connectors/{_segment(name)}")

    def connector_config(self, name: str) -> Any:
        return self.get(f"/connectors/{_segment(name)}/config")

    def put_connector_config(self, name: str, config: Mapping[str, Any]) -> tuple[int, Any]:
        return self.request("PUT", f"/connectors/{_segment(name)}/config", body=dict(config))

    def patch_connector_config(self, name: str, patch: Mapping[str, Any]) -> Any:
        return self.request("PATCH", f"/connectors/{_segment(name)}/config", body=dict(patch))[1]

    def create_connector(self, name: str, config: Mapping[str, Any], initial_state: str | None) -> tuple[int, Any]:
        body: dict[str, Any] = {"name": name, "config": dict(config)}
        if initial_state is not None:
            body["initial_state"] = initial_state
        return self.request("POST", "/connectors", body=body)

    def delete_connector(self, name: str) -> None:
        self.request("DELETE", f"/connectors/{_segment(name)}")

    def connector_status(self, name: str) -> Any:
        return self.get(f"/connectors/{_segment(name)}/status")

    def pause(self, name: str) -> None:
        self.request("PUT", f"/connectors/{_segment(name)}/pause")

    def resume(self, name: str) -> None:
        self.request("PUT", f"/connectors/{_segment(name)}/resume")

    def stop(self, name: str) -> None:
        self.request("PUT", f"/connectors/{_segment(name)}/stop")

    def restart(self, name: str, include_tasks: bool, only_failed: bool) -> Any:
        params = {"includeTasks": str(include_tasks).lower(), "onlyFailed": str(only_failed).lower()}
        return self.request("POST", f"/connectors/{_segment(name)}/restart", params=params)[1]

    def restart_task(self, name: str, task: int) -> None:
        self.request("POST", f"/connectors/{_segment(name)}/tasks/{task}/restart")

    def topics(self, name: str) -> Any:
        return self.get(f"/connectors/{_segment(name)}/topics")

    def reset_topics(self, name: str) -> None:
        self.request("PUT", f"/connectors/{_segment(name)}/topics/reset")

    def offsets(self, name: str) -> Any:
        return self.get(f"/connectors/{_segment(name)}/offsets")

    def alter_offsets(self, name: str, body: Mapping[str, Any]) -> Any:
        return self.request("PATCH", f"/connectors/{_segment(name)}/offsets", body=dict(body))[1]

    def reset_offsets(self, name: str) -> Any:
        return self.request("DELETE", f"/connectors/{_segment(name)}/offsets")[1]

    def plugins(self, connectors_only: bool = True) -> Any:
        return self.get("/connector-plugins", params={"connectorsOnly": str(connectors_only).lower()})

    def plugin_config(self, plugin: str) -> Any:
        return self.get(f"/connector-plugins/{_segment(plugin)}/config")

    def validate(self, plugin: str, config: Mapping[str, Any]) -> Any:
        return self.request("PUT", f"/connector-plugins/{_segment(plugin)}/config/validate", body=dict(config))[1]

    def loggers(self) -> Any:
        return self.get("/admin/loggers")

    def logger(self, name: str) -> Any:
        return self.get(f"/admin/loggers/{_segment(name)}")

    def set_logger_level(self, name: str, level: str, scope: str) -> Any:
        return self.request("PUT", f"/admin/loggers/{_segment(name)}", params={"scope": scope}, body={"level": level})[
            1
        ]
