"""The console's client of a Kafka Connect REST API: every page and action of the console
is one or more ordinary REST calls made here, so the console works in front of any
Kafka Connect–compatible worker (Sluice's or Apache Kafka Connect's)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

import httpx2

__all__ = ["ApiError", "ConnectApi", "UnreachableError", "path_of"]

REQUEST_TIMEOUT_S = 30.0
_NO_BODY: Any = object()


class ApiError(Exception):
    """The worker refused a request: its HTTP status and Kafka's error message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class UnreachableError(ApiError):
    """No worker answered (status 0)."""

    def __init__(self, message: str) -> None:
        super().__init__(0, message)


def path_of(*segments: str) -> str:
    """A REST path from raw segments, each percent-encoded whole (a connector may be named
    ``a/b "c" é``)."""
    return "/" + "/".join(quote(segment, safe="") for segment in segments)


class ConnectApi:
    """Calls one Kafka Connect cluster's REST API through the first of ``urls`` that answers.

    ``headers`` go with every request (the console passes the caller's ``Authorization``
    on, so the worker decides what the person may do)."""

    def __init__(
        self,
        urls: Sequence[str],
        *,
        headers: dict[str, str] | None = None,
        client: httpx2.AsyncClient | None = None,
    ) -> None:
        if not urls:
            raise ValueError("ConnectApi needs at least one URL")
        self.urls = [url.rstrip("/") for url in urls]
        self._headers = {"Accept": "application/json", **(headers or {})}
        self._client = client

    async def request(self, method: str, path: str, *, params: Any = None, body: Any = _NO_BODY) -> Any:
        """The decoded JSON body of a successful answer (``None`` when it has none)."""
        kwargs: dict[str, Any] = {"params": params, "headers": self._headers}
        if body is not _NO_BODY:
            kwargs["json"] = body
        reasons = []
        for url in self.urls:
            try:
                response = await self._http().request(method, url + path, **kwargs)
            except httpx2.TransportError as exc:  # the next worker of the cluster may answer
                reasons.append(f"{url}: {str(exc) or type(exc).__name__}")
                continue
            return _decoded(response)
        raise UnreachableError("No Kafka Connect worker answered (" + "; ".join(reasons) + ")")

    def _http(self) -> httpx2.AsyncClient:
        if self._client is None:
            self._client = httpx2.AsyncClient(timeout=REQUEST_TIMEOUT_S)
        return self._client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # -- the endpoints the console uses

    async def server_info(self) -> Any:
        return await self.request("GET", "/")

    async def connectors_expanded(self) -> dict[str, Any]:
        return await self.request("GET", "/connectors", params=[("expand", "status"), ("expand", "info")]) or {}

    async def status(self, name: str) -> Any:
        return await self.request("GET", path_of("connectors", name, "status"))

    async def config(self, name: str) -> dict[str, str]:
        return await self.request("GET", path_of("connectors", name, "config")) or {}

    async def topics(self, name: str) -> list[str]:
        answer = await self.request("GET", path_of("connectors", name, "topics")) or {}
        return list((answer.get(name) or {}).get("topics") or [])

    async def offsets(self, name: str) -> Any:
        return await self.request("GET", path_of("connectors", name, "offsets"))

    async def plugins(self) -> list[dict[str, Any]]:
        return await self.request("GET", "/connector-plugins", params={"connectorsOnly": "false"}) or []

    async def validate(self, plugin: str, config: dict[str, str]) -> Any:
        return await self.request("PUT", path_of("connector-plugins", plugin, "config", "validate"), body=config)

    async def create(self, name: str, config: dict[str, str]) -> Any:
        return await self.request("POST", "/connectors", body={"name": name, "config": config})

    async def put_config(self, name: str, config: dict[str, str]) -> Any:
        return await self.request("PUT", path_of("connectors", name, "config"), body=config)

    async def worker_metrics(self, worker_id: str) -> str | None:
        """``GET /metrics`` of the worker ``worker_id`` (its advertised ``host:port``, as
        statuses name it): Prometheus text, or None when it serves none (Apache Kafka
        Connect: JMX only) or cannot be reached."""
        scheme = self.urls[0].split("://", 1)[0]
        try:
            response = await self._http().get(f"{scheme}://{worker_id}/metrics", headers=self._headers)
        except httpx2.TransportError:
            return None
        if response.status_code != 200 or not response.headers.get("content-type", "").startswith("text/plain"):
            return None
        return response.text

    async def loggers(self) -> dict[str, Any]:
        return await self.request("GET", "/admin/loggers") or {}

    async def set_logger(self, logger: str, level: str, scope: str) -> Any:
        return await self.request(
            "PUT", path_of("admin", "loggers", logger), params={"scope": scope}, body={"level": level}
        )


def _decoded(response: httpx2.Response) -> Any:
    data: Any = None
    parsed = False
    if response.content.strip():
        try:
            data = response.json()
            parsed = True
        except ValueError:
            data = None
    if response.is_success:
        return data
    message = data.get("message") if isinstance(data, dict) else None
    if not message:
        text = response.text.strip()[:500] if not parsed else ""
        message = text or f"HTTP {response.status_code} {response.reason_phrase}".strip()
    raise ApiError(response.status_code, str(message))
