"""``sluice connector …``: manage the connectors of a Kafka Connect worker from a terminal.

The command talks to a worker only through the Kafka Connect REST API (any compatible
worker: Sluice or Apache Kafka Connect) and imports nothing of Sluice's runtime. People
get aligned tables; ``--json`` prints the server's JSON for scripts.

The worker's URL comes from ``--url``, else ``$SLUICE_URL``, else ``http://localhost:8083``.
An ``https`` worker's certificate is checked against the system's authorities, or the one
``--ca-cert`` (``$SLUICE_CA_CERT``) names; ``--insecure`` skips the check, and
``--client-cert``/``--client-key`` give a client certificate to a worker that asks for one.

Exit codes:

* 0 — done;
* 1 — the worker answered with an error (its ``message`` is printed), or ``validate``
  found errors in the configuration;
* 2 — usage error: bad arguments, or a file that cannot be read or parsed;
* 3 — the worker cannot be reached at the URL;
* 4 — ``--wait``: the connector or one of its tasks FAILED (the trace is printed);
* 5 — ``--wait``: the expected state was not reached within ``--timeout``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import ssl
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

import httpx2

__all__ = [
    "DEFAULT_URL",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_SERVER_ERROR",
    "EXIT_TIMEOUT",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
    "PREDEFINED",
    "ConnectClient",
    "ConnectorFile",
    "add_tls_options",
    "build_parser",
    "check_state",
    "format_properties",
    "main",
    "parse_config_bytes",
    "parse_offsets_bytes",
    "render_table",
    "tls_verify",
    "tls_verify_from",
]

EXIT_OK = 0
EXIT_SERVER_ERROR = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_FAILED = 4
EXIT_TIMEOUT = 5

DEFAULT_URL = "http://localhost:8083"
URL_ENV = "SLUICE_URL"
USER_ENV = "SLUICE_USER"  # NAME:PASSWORD for a worker with basic authentication
CA_CERT_ENV = "SLUICE_CA_CERT"  # PEM file of the authorities an https worker's certificate is checked against
CLIENT_CERT_ENV = "SLUICE_CLIENT_CERT"
CLIENT_KEY_ENV = "SLUICE_CLIENT_KEY"
CLIENT_KEY_PASSWORD_ENV = "SLUICE_CLIENT_KEY_PASSWORD"  # of an encrypted --client-key
HOME_ENV = "SLUICE_HOME"

#: Predefined connectors, loadable by name alone (``sluice connector load file-source``),
#: as ``confluent local services connect connector load``: name → file in the project's
#: ``etc/`` folder (``$SLUICE_HOME/etc`` when ``SLUICE_HOME`` is set).
PREDEFINED: dict[str, str] = {
    "file-source": "connect-file-source.properties",
    "file-sink": "connect-file-sink.properties",
    "jdbc-source": "connect-jdbc-source.properties",
    "jdbc-sink": "connect-jdbc-sink.properties",
    "hdfs-sink": "connect-hdfs-sink.properties",
    "s3-sink": "connect-s3-sink.properties",
    "elasticsearch-sink": "connect-elasticsearch-sink.properties",
}

# A Connect worker answers each request within 90 s (its own request timeout), so the
# client waits a little longer than that before giving up on an answer.
REQUEST_TIMEOUT = httpx2.Timeout(100.0, connect=10.0)
WAIT_TIMEOUT = 60.0
# A FAILED state that is already there before a restart or a config update, with the same
# trace, may be the old status not yet rewritten by an asynchronous worker: it ends the
# wait only once it is still there after this long.
STALE_FAILURE_GRACE = 5.0

WAITABLE_STATES = ("RUNNING", "PAUSED", "STOPPED")


# --------------------------------------------------------------------------- errors


class CliError(Exception):
    """An error that ends the command with ``exit_code`` and ``message`` on stderr."""

    exit_code = EXIT_SERVER_ERROR

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(CliError):
    exit_code = EXIT_USAGE


class WorkerError(CliError):
    """The worker answered with an error status (Connect's ``{"error_code","message"}``)."""

    exit_code = EXIT_SERVER_ERROR

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class UnreachableError(CliError):
    exit_code = EXIT_UNREACHABLE


# --------------------------------------------------------------------------- REST client


def normalize_url(url: str) -> str:
    """``localhost:8083`` → ``http://localhost:8083``; no trailing slash."""
    url = url.strip()
    if not url:
        raise UsageError("the worker URL is empty")
    if "://" not in url:
        url = "http://" + url
    return url.rstrip("/")


def tls_verify(
    ca_cert: str | None = None,
    insecure: bool = False,
    client_cert: str | None = None,
    client_key: str | None = None,
    key_password: str | None = None,
) -> ssl.SSLContext | bool:
    """How an https worker is checked: True (the system's authorities) when nothing is given,
    else an SSL context trusting ``ca_cert`` (a PEM file of CA certificates, or the worker's
    own certificate), checking nothing when ``insecure``, presenting ``client_cert`` (a PEM
    certificate chain, with its key in it or in ``client_key``). Raises :class:`UsageError`
    when a file cannot be used."""
    if not (ca_cert or insecure or client_cert or client_key):
        return True
    if client_key and not client_cert:
        raise UsageError("--client-key needs --client-cert (the certificate of the key)")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif ca_cert:
        try:
            context.load_verify_locations(cafile=ca_cert)
        except (OSError, ssl.SSLError) as exc:
            raise UsageError(f"--ca-cert {ca_cert}: not a readable PEM file of certificates ({exc})") from None
        # As a Java truststore does: any certificate given is trusted, a server's own included.
        context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    else:
        context.load_default_certs(ssl.Purpose.SERVER_AUTH)
    if client_cert:
        try:
            context.load_cert_chain(client_cert, client_key or None, password=key_password)
        except (OSError, ssl.SSLError) as exc:
            raise UsageError(
                f"--client-cert {client_cert}: cannot use it with its key ({exc}); an encrypted key needs "
                f"${CLIENT_KEY_PASSWORD_ENV}"
            ) from None
    return context


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
        return (_tls_hint(reason) or "") if self.url.lower().startswith("https://") else ""

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


# --------------------------------------------------------------------------- files


@dataclass
class ConnectorFile:
    """A connector configuration read from a file: Java properties, a flat JSON map, or a
    JSON create request ``{"name", "config", "initial_state"?}``."""

    config: dict[str, str | None]
    name: str | None = None
    initial_state: str | None = None
    #: the name the file gave, when the command loads it under another name
    renamed_from: str | None = None


def _config_value(key: str, value: Any, source: str) -> str | None:
    # What Kafka Connect's Map<String,String> bodies accept: scalars, as strings.
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    raise UsageError(
        f"{source}: the value of '{key}' must be a string, a number or a boolean, not {type(value).__name__}"
    )


def _decode(data: bytes) -> str:
    # Java reads .properties as ISO-8859-1; a UTF-8 file (what editors write today) is
    # read as UTF-8 when it is valid UTF-8.
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def parse_config_bytes(data: bytes, source: str = "<config>") -> ConnectorFile:
    """Parse a connector configuration: JSON when the content starts with ``{``, else Java
    properties. Raises :class:`UsageError` with a message naming ``source``."""
    text = _decode(data)
    if text.lstrip().startswith(("{", "[")):
        try:
            parsed = json.loads(text)
        except ValueError as exc:
            raise UsageError(f"{source} is not valid JSON: {exc}") from None
        if not isinstance(parsed, dict):
            raise UsageError(f'{source}: expected a JSON object (a config map or {{"name": …, "config": {{…}}}})')
        name: str | None = None
        initial_state: str | None = None
        if "config" in parsed and isinstance(parsed.get("config"), dict):
            raw = parsed["config"]
            if parsed.get("name") is not None:
                if not isinstance(parsed["name"], str):
                    raise UsageError(f"{source}: 'name' must be a string")
                name = parsed["name"].strip()
            if parsed.get("initial_state") is not None:
                state = str(parsed["initial_state"]).upper()
                if state not in WAITABLE_STATES:
                    raise UsageError(
                        f"{source}: initial_state must be RUNNING, PAUSED or STOPPED, not {parsed['initial_state']}"
                    )
                initial_state = state
            # "tasks" and "type": a saved ConnectorInfo (``load --json``) loads back as is
            unknown = set(parsed) - {"name", "config", "initial_state", "tasks", "type"}
            if unknown:
                raise UsageError(f"{source}: unknown top-level field(s) {', '.join(sorted(unknown))}")
        else:
            raw = parsed
        config = {str(k): _config_value(str(k), v, source) for k, v in raw.items()}
        if name is None and isinstance(config.get("name"), str):
            name = config["name"]
    else:
        import javaproperties

        try:
            config = dict(javaproperties.loads(text))
        except ValueError as exc:  # InvalidUEscapeError
            raise UsageError(f"{source} is not a valid properties file: {exc}") from None
        name = config.get("name")
        initial_state = None
    if not config:
        raise UsageError(f"{source} holds no configuration")
    return ConnectorFile(config=config, name=name, initial_state=initial_state)


def parse_offsets_bytes(data: bytes, source: str = "<offsets>") -> dict[str, Any]:
    """Parse an offsets file for ``offsets alter``: ``{"offsets": [...]}`` or a bare list."""
    try:
        parsed = json.loads(_decode(data))
    except ValueError as exc:
        raise UsageError(f"{source} is not valid JSON: {exc}") from None
    if isinstance(parsed, list):
        parsed = {"offsets": parsed}
    if not isinstance(parsed, dict) or not isinstance(parsed.get("offsets"), list):
        raise UsageError(f'{source}: expected {{"offsets": [{{"partition": {{…}}, "offset": {{…}}}}, …]}}')
    return parsed


def _read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def etc_dir() -> Path:
    """The folder of the predefined connector files."""
    home = os.environ.get(HOME_ENV)
    if home:
        return Path(home) / "etc"
    # src/sluice/cli/manage.py → the project root
    return Path(__file__).resolve().parents[3] / "etc"


def predefined_file(name: str) -> Path:
    if name not in PREDEFINED:
        known = ", ".join(sorted(PREDEFINED))
        raise UsageError(
            f"'{name}' is not a predefined connector (predefined: {known}); give a config file with -d FILE"
        )
    path = etc_dir() / PREDEFINED[name]
    if not path.is_file():
        raise UsageError(f"the file of predefined connector '{name}' is missing: {path} (set ${HOME_ENV}?)")
    return path


def parse_assignments(items: Iterable[str], what: str = "--set") -> dict[str, str]:
    """``["k=v", …]`` → ``{"k": "v"}``."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{what} expects KEY=VALUE, got '{item}'")
        out[key.strip()] = value
    return out


def load_connector_config(
    name: str | None, file: str | None, overrides: Mapping[str, str] | None = None
) -> ConnectorFile:
    """The config from ``file`` (or the predefined connector ``name``), with ``overrides``
    applied and ``name`` set to the connector's name."""
    if file is not None:
        parsed = parse_config_bytes(_read_bytes(file), "standard input" if file == "-" else file)
    elif name is not None:
        path = predefined_file(name)
        parsed = parse_config_bytes(path.read_bytes(), str(path))
    else:
        raise UsageError("give a connector config file with -d FILE")
    parsed.config.update(overrides or {})
    if name is not None:
        if file is not None and parsed.name and parsed.name != name:
            parsed.renamed_from = parsed.name
        parsed.config["name"] = name
        parsed.name = name
    return parsed


# --------------------------------------------------------------------------- rendering


def render_table(
    headers: Sequence[str], rows: Iterable[Sequence[Any]], style: Callable[[str], str] | None = None
) -> str:
    """Rows under headers in aligned columns (two spaces apart, no trailing blanks).

    ``style`` (for colour) is applied to each padded data cell, so alignment holds."""
    body = [["" if cell is None else str(cell) for cell in row] for row in rows]
    head = [str(h) for h in headers]
    widths = [len(h) for h in head]
    for row in body:
        for i, cell in enumerate(row):
            first = cell.split("\n", 1)[0]
            if i < len(widths):
                widths[i] = max(widths[i], len(first))
    lines = []

    def line(cells: Sequence[str], styled: bool) -> str:
        parts = []
        last = len(cells) - 1
        for i, cell in enumerate(cells):
            text = cell.split("\n", 1)[0]
            padded = text if i == last else text.ljust(widths[i])
            parts.append(style(padded) if (styled and style) else padded)
        return "  ".join(parts).rstrip()

    lines.append(line(head, False))
    lines.extend(line(row, True) for row in body)
    return "\n".join(lines)


_STATE_COLOURS = {
    "RUNNING": "32",  # green
    "PAUSED": "33",  # yellow
    "STOPPED": "33",
    "FAILED": "31",  # red
    "UNASSIGNED": "36",  # cyan
    "RESTARTING": "36",
}


def _colour_enabled(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def state_style(enabled: bool) -> Callable[[str], str] | None:
    if not enabled:
        return None

    def style(cell: str) -> str:
        code = _STATE_COLOURS.get(cell.strip())
        return f"\x1b[{code}m{cell}\x1b[0m" if code else cell

    return style


def _escape_key(key: str) -> str:
    import javaproperties

    return javaproperties.escape(key, ensure_ascii=False)


def _escape_value(value: str) -> str:
    out = (
        value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t").replace("\f", "\\f")
    )
    if out.startswith(" "):
        out = "\\" + out
    if len(value) > 1 and value.endswith(" "):  # trailing blanks are kept by the parser: show them
        out = out[:-1] + "\\ "
    return out


def format_properties(config: Mapping[str, str | None]) -> str:
    """A config as aligned Java properties (``name`` first, then sorted keys): readable,
    and a valid file for ``-d`` (``config NAME > c.properties``)."""
    keys = sorted(config, key=lambda k: (k != "name", k))
    escaped = [(_escape_key(k), "" if config[k] is None else _escape_value(str(config[k]))) for k in keys]
    width = max((len(k) for k, _ in escaped), default=0)
    return "\n".join(f"{k.ljust(width)} = {v}" if v else f"{k.ljust(width)} =" for k, v in escaped)


def task_summary(tasks: Sequence[Mapping[str, Any]]) -> str:
    """``[RUNNING, RUNNING, FAILED]`` → ``2 RUNNING, 1 FAILED``; ``-`` when none."""
    if not tasks:
        return "-"
    counts: dict[str, int] = {}
    for task in tasks:
        state = str(task.get("state"))
        counts[state] = counts.get(state, 0) + 1
    return ", ".join(f"{n} {state}" for state, n in counts.items())


def _last_line(trace: str) -> str:
    lines = [ln.strip() for ln in trace.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _compact(value: Any) -> str:
    """An offset partition/offset for people: ``k=v, k2=v2``."""
    if isinstance(value, dict):
        return ", ".join(f"{k}={_compact(v)}" for k, v in value.items()) or "{}"
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _time_ms(value: Any) -> str:
    if value is None:
        return "-"
    try:
        moment = datetime.datetime.fromtimestamp(int(value) / 1000, tz=datetime.UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return str(value)
    return moment.astimezone().isoformat(timespec="seconds")


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.rstrip().splitlines())


def connectors_table(expanded: Mapping[str, Any], style: Callable[[str], str] | None = None) -> str:
    rows = []
    for name in sorted(expanded):
        status = (expanded[name] or {}).get("status") or {}
        connector = status.get("connector") or {}
        rows.append(
            [
                name,
                status.get("type", "-"),
                connector.get("state", "-"),
                task_summary(status.get("tasks") or []),
                connector.get("worker_id", "-"),
            ]
        )
    return render_table(["NAME", "TYPE", "STATE", "TASKS", "WORKER"], rows, style)


def status_table(status: Mapping[str, Any], style: Callable[[str], str] | None = None) -> str:
    connector = status.get("connector") or {}
    rows = [["connector", connector.get("state", "-"), connector.get("worker_id", "-")]]
    for task in status.get("tasks") or []:
        rows.append([f"task {task.get('id')}", task.get("state", "-"), task.get("worker_id", "-")])
    return render_table(["", "STATE", "WORKER"], rows, style)


def status_traces(status: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(what, trace)`` of every part of a status that has a trace."""
    out = []
    connector = status.get("connector") or {}
    if connector.get("trace"):
        out.append((f"connector {status.get('name')}", str(connector["trace"])))
    for task in status.get("tasks") or []:
        if task.get("trace"):
            out.append((f"task {status.get('name')}-{task.get('id')}", str(task["trace"])))
    return out


# --------------------------------------------------------------------------- waiting


@dataclass
class Progress:
    """Where a connector stands relative to the state a ``--wait`` expects."""

    done: bool
    failed: list[tuple[str, str]] = field(default_factory=list)  # (what, trace)
    summary: str = ""


def check_state(
    status: Mapping[str, Any],
    want: str,
    expected_tasks: Iterable[int] = (),
    only_task: int | None = None,
    ignore_failed: Callable[[str, str], bool] = lambda what, trace: False,
) -> Progress:
    """Compare a ConnectorStateInfo with ``want`` (RUNNING, PAUSED or STOPPED).

    RUNNING/PAUSED: the connector and every task in that state, and every task id of
    ``expected_tasks`` (from the connector's info) present. STOPPED: the connector
    STOPPED and no tasks left. With ``only_task``, only that task counts. A FAILED part
    (unless ``ignore_failed(what, trace)``) makes ``failed`` non-empty."""
    connector = status.get("connector") or {}
    tasks = list(status.get("tasks") or [])
    name = status.get("name", "?")
    failed: list[tuple[str, str]] = []
    if only_task is None and connector.get("state") == "FAILED":
        what, trace = f"connector {name}", str(connector.get("trace") or "")
        if not ignore_failed(what, trace):
            failed.append((what, trace))
    considered = [t for t in tasks if only_task is None or t.get("id") == only_task]
    for task in considered:
        if task.get("state") == "FAILED":
            what, trace = f"task {name}-{task.get('id')}", str(task.get("trace") or "")
            if not ignore_failed(what, trace):
                failed.append((what, trace))
    in_state = sum(1 for t in considered if t.get("state") == want)
    if only_task is not None:
        done = in_state == 1
        summary = f"task {only_task} {considered[0].get('state') if considered else 'not reported yet'}"
        return Progress(done, failed, summary)
    expected = set(expected_tasks)
    present = {t.get("id") for t in tasks}
    if want == "STOPPED":
        done = connector.get("state") == "STOPPED" and not tasks
    else:
        done = connector.get("state") == want and in_state == len(tasks) and expected <= present
    total = max(len(tasks), len(expected))
    summary = f"connector {connector.get('state', '-')}, tasks {in_state}/{total} {want}"
    return Progress(done, failed, summary)


class Spinner:
    """A progress line on stderr, only when stderr is a terminal."""

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.enabled = bool(getattr(stream, "isatty", lambda: False)())
        self._frame = 0
        self._shown = False

    def update(self, text: str) -> None:
        if not self.enabled:
            return
        frame = self.FRAMES[self._frame % len(self.FRAMES)]
        self._frame += 1
        self.stream.write(f"\r\x1b[K{frame} {text}")
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self.enabled and self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False


@dataclass
class WaitResult:
    exit_code: int
    status: Any = None
    message: str = ""


def wait_for_state(
    client: ConnectClient,
    name: str,
    want: str,
    timeout: float,
    *,
    only_task: int | None = None,
    stale_failures: Mapping[str, str] | None = None,
    spinner: Spinner | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> WaitResult:
    """Poll the connector's status until it is in ``want``, FAILED or ``timeout`` passed.

    ``stale_failures`` maps a part (``connector c``, ``task c-0``) to the trace it had
    FAILED with before the command: the same failure is taken for a status not yet
    rewritten for up to :data:`STALE_FAILURE_GRACE` seconds."""
    start = clock()
    deadline = start + timeout
    interval = 0.1
    stale = dict(stale_failures or {})
    last: Any = None
    summary = "no status yet"

    def ignore_failed(what: str, trace: str) -> bool:
        return stale.get(what) == trace and clock() - start < STALE_FAILURE_GRACE

    while True:
        try:
            status = client.connector_status(name)
            expected: list[int] = []
            if only_task is None and want != "STOPPED":
                info = client.connector_info(name)
                expected = [int(t["task"]) for t in info.get("tasks") or [] if isinstance(t, dict) and "task" in t]
        except WorkerError as exc:
            if exc.status != 404:  # no status yet, right after creation
                raise
            status = None
        if status is not None:
            last = status
            # a part seen out of its old failure no longer counts as stale
            parts = [(f"connector {name}", status.get("connector") or {})]
            parts += [(f"task {name}-{t.get('id')}", t) for t in status.get("tasks") or []]
            for what, part in parts:
                if part.get("state") != "FAILED":
                    stale.pop(what, None)
            progress = check_state(status, want, expected, only_task, ignore_failed)
            summary = progress.summary
            if progress.failed:
                lines = [
                    f"{what} FAILED" + (f":\n{_indent(trace)}" if trace else "") for what, trace in progress.failed
                ]
                return WaitResult(EXIT_FAILED, status, "\n".join(lines))
            if progress.done:
                return WaitResult(EXIT_OK, status, summary)
        now = clock()
        if now >= deadline:
            return WaitResult(
                EXIT_TIMEOUT,
                last,
                f"timed out after {timeout:g} s waiting for {name} to be {want} ({summary})",
            )
        if spinner is not None:
            spinner.update(f"waiting for {name} to be {want}: {summary} ({now - start:.0f} s)")
        sleep(min(interval, max(deadline - now, 0)))
        interval = min(interval * 1.5, 0.5)


# --------------------------------------------------------------------------- commands


class Context:
    """What a command needs: the client, the parsed arguments and the output streams."""

    def __init__(self, args: argparse.Namespace, client: ConnectClient, prog: str) -> None:
        self.args = args
        self.client = client
        self.prog = prog
        self.out: TextIO = sys.stdout
        self.err: TextIO = sys.stderr
        self.json: bool = bool(getattr(args, "json", False))
        self.style = state_style(_colour_enabled(self.out))

    def print(self, text: str = "") -> None:
        print(text, file=self.out)

    def note(self, text: str) -> None:
        print(text, file=self.err)

    def dump(self, data: Any) -> None:
        """The server's JSON, for scripts (nothing when the answer had no body)."""
        if data is not None:
            print(json.dumps(data, indent=2, ensure_ascii=False), file=self.out)


def _status_or_none(client: ConnectClient, name: str) -> Any:
    try:
        return client.connector_status(name)
    except WorkerError as exc:
        if exc.status == 404:
            return None
        raise


def _failures_of(status: Any) -> dict[str, str]:
    if not status:
        return {}
    name = status.get("name")
    out = {}
    connector = status.get("connector") or {}
    if connector.get("state") == "FAILED":
        out[f"connector {name}"] = str(connector.get("trace") or "")
    for task in status.get("tasks") or []:
        if task.get("state") == "FAILED":
            out[f"task {name}-{task.get('id')}"] = str(task.get("trace") or "")
    return out


def _settled_state(status: Any, default: str = "RUNNING") -> str:
    """The state a connector returns to after a restart or a config update."""
    state = ((status or {}).get("connector") or {}).get("state")
    return state if state in ("PAUSED", "STOPPED") else default


def _wait(ctx: Context, name: str, want: str, *, only_task: int | None = None, before: Any = None) -> int:
    spinner = Spinner(ctx.err)
    try:
        result = wait_for_state(
            ctx.client,
            name,
            want,
            ctx.args.timeout,
            only_task=only_task,
            stale_failures=_failures_of(before),
            spinner=spinner,
        )
    finally:
        spinner.clear()
    if result.exit_code == EXIT_OK:
        if not ctx.json:
            ctx.print(f"{name} is {want}" + (f" ({result.message})" if result.message else ""))
        return EXIT_OK
    ctx.note(f"{ctx.prog}: {result.message}")
    return result.exit_code


def cmd_load(ctx: Context) -> int:
    args = ctx.args
    loaded = load_connector_config(args.name, args.file, parse_assignments(args.set))
    client, name = ctx.client, args.name
    if loaded.renamed_from:
        ctx.note(f"note: the file names the connector '{loaded.renamed_from}'; it is loaded as '{name}'")
    before = _status_or_none(client, name) if args.wait else None
    if loaded.initial_state is not None:
        try:
            status_code, info = client.create_connector(name, loaded.config, loaded.initial_state)
        except WorkerError as exc:
            if exc.status != 409:
                raise
            ctx.note(f"note: {name} exists already; initial_state applies only when a connector is created")
            status_code, info = client.put_connector_config(name, loaded.config)
    else:
        status_code, info = client.put_connector_config(name, loaded.config)
    created = status_code == 201
    if ctx.json:
        ctx.dump(info)
    else:
        tasks = len((info or {}).get("tasks") or [])
        kind = (info or {}).get("type", "connector")
        plural = "" if tasks == 1 else "s"
        ctx.print(f"{'Created' if created else 'Updated'} {kind} connector {name} ({tasks} task{plural})")
    if not args.wait:
        return EXIT_OK
    if created:
        want = loaded.initial_state or "RUNNING"
    else:
        want = _settled_state(before)
    return _wait(ctx, name, want, before=before)


def cmd_unload(ctx: Context) -> int:
    ctx.client.delete_connector(ctx.args.name)
    if not ctx.json:
        ctx.print(f"Unloaded connector {ctx.args.name}")
    return EXIT_OK


def cmd_list(ctx: Context) -> int:
    args = ctx.args
    if args.predefined:
        return _list_predefined(ctx)
    if ctx.json:
        ctx.dump(ctx.client.connectors(args.expand or ()))
        return EXIT_OK
    expanded = ctx.client.connectors(["status"])
    if not expanded:
        ctx.print(f"No connectors on {ctx.client.url}")
        return EXIT_OK
    ctx.print(connectors_table(expanded, ctx.style))
    return EXIT_OK


def _list_predefined(ctx: Context) -> int:
    rows = []
    data = {}
    for name in sorted(PREDEFINED):
        path = etc_dir() / PREDEFINED[name]
        try:
            cls = parse_config_bytes(path.read_bytes(), str(path)).config.get("connector.class") or "-"
        except (OSError, UsageError):
            cls = "(missing)"
        data[name] = {"file": str(path), "connector.class": cls}
        rows.append([name, cls, str(path)])
    if ctx.json:
        ctx.dump(data)
    else:
        ctx.print(render_table(["NAME", "CONNECTOR CLASS", "FILE"], rows))
    return EXIT_OK


def cmd_plugins(ctx: Context) -> int:
    args = ctx.args
    if args.plugin:
        keys = ctx.client.plugin_config(args.plugin)
        if ctx.json:
            ctx.dump(keys)
            return EXIT_OK
        rows = []
        for key in keys or []:
            default = "(required)" if key.get("required") else key.get("default_value")
            rows.append(
                [
                    key.get("name"),
                    key.get("type"),
                    "null" if default is None else default,
                    key.get("importance"),
                    key.get("documentation") or "",
                ]
            )
        ctx.print(render_table(["KEY", "TYPE", "DEFAULT", "IMPORTANCE", "DOCUMENTATION"], rows))
        return EXIT_OK
    plugins = ctx.client.plugins(connectors_only=not args.all)
    if ctx.json:
        ctx.dump(plugins)
        return EXIT_OK
    rows = [[p.get("class"), p.get("type"), p.get("version", "-")] for p in plugins or []]
    ctx.print(render_table(["CLASS", "TYPE", "VERSION"], rows))
    return EXIT_OK


def cmd_status(ctx: Context) -> int:
    name = ctx.args.name
    if name is None:
        expanded = ctx.client.connectors(["status"])
        if ctx.json:
            ctx.dump(expanded)
            return EXIT_OK
        if not expanded:
            ctx.print(f"No connectors on {ctx.client.url}")
            return EXIT_OK
        ctx.print(connectors_table(expanded, ctx.style))
        failures = []
        for cname in sorted(expanded):
            for what, trace in status_traces((expanded[cname] or {}).get("status") or {}):
                failures.append(f"  {what}: {_last_line(trace)}")
        if failures:
            ctx.print()
            ctx.print(f"Failures ('{ctx.prog} status NAME' shows the whole trace):")
            ctx.print("\n".join(failures))
        return EXIT_OK
    status = ctx.client.connector_status(name)
    if ctx.json:
        ctx.dump(status)
        return EXIT_OK
    ctx.print(f"{status.get('name', name)} ({status.get('type', 'unknown')})")
    ctx.print(status_table(status, ctx.style))
    for what, trace in status_traces(status):
        ctx.print()
        ctx.print(f"Trace of {what}:")
        ctx.print(_indent(trace))
    return EXIT_OK


def cmd_config(ctx: Context) -> int:
    args = ctx.args
    name = args.name
    sets = parse_assignments(args.set)
    if args.file is None and not sets and not args.unset:
        config = ctx.client.connector_config(name)
        if ctx.json:
            ctx.dump(config)
        else:
            ctx.print(format_properties(config or {}))
        return EXIT_OK
    if args.file is not None:
        if args.unset:
            raise UsageError("--unset cannot be combined with -d FILE (the file replaces the whole config)")
        ctx.client.connector_info(name)  # an update, not a create: 404 for an unknown connector
        loaded = load_connector_config(name, args.file, sets)
        _, info = ctx.client.put_connector_config(name, loaded.config)
    else:
        patch: dict[str, str | None] = dict(sets)
        for key in args.unset:
            patch[key] = None
        info = ctx.client.patch_connector_config(name, patch)
    if ctx.json:
        ctx.dump(info)
    else:
        ctx.print(f"Updated connector {name}:")
        ctx.print(format_properties((info or {}).get("config") or {}))
    return EXIT_OK


def _target_command(verb: str, want: str, call: Callable[[ConnectClient, str], None]) -> Callable[[Context], int]:
    def run(ctx: Context) -> int:
        name = ctx.args.name
        call(ctx.client, name)
        if not ctx.json and not ctx.args.wait:
            ctx.print(f"{verb} {name}")
        if ctx.args.wait:
            return _wait(ctx, name, want)
        return EXIT_OK

    return run


cmd_pause = _target_command("Pause requested for", "PAUSED", ConnectClient.pause)
cmd_resume = _target_command("Resume requested for", "RUNNING", ConnectClient.resume)
cmd_stop = _target_command("Stopped", "STOPPED", ConnectClient.stop)


def cmd_restart(ctx: Context) -> int:
    args = ctx.args
    name = args.name
    if args.task is not None and (args.include_tasks or args.only_failed):
        raise UsageError("--task cannot be combined with --include-tasks or --only-failed")
    before = _status_or_none(ctx.client, name) if args.wait else None
    if args.task is not None:
        ctx.client.restart_task(name, args.task)
        if not ctx.json:
            ctx.print(f"Restarted task {name}-{args.task}")
        if not args.wait:
            return EXIT_OK
        return _wait(ctx, name, _settled_state(before), only_task=args.task, before=before)
    plan = ctx.client.restart(name, args.include_tasks, args.only_failed)
    if ctx.json:
        ctx.dump(plan)
    elif plan is None:
        ctx.print(f"Restarted connector {name}")
    else:
        ctx.print(f"Restarting {name}:")
        ctx.print(status_table(plan, ctx.style))
    if not args.wait:
        return EXIT_OK
    return _wait(ctx, name, _settled_state(before), before=before)


def cmd_topics(ctx: Context) -> int:
    name = ctx.args.name
    if ctx.args.reset:
        ctx.client.reset_topics(name)
        if not ctx.json:
            ctx.print(f"Reset the active topics of {name}")
        return EXIT_OK
    data = ctx.client.topics(name)
    if ctx.json:
        ctx.dump(data)
        return EXIT_OK
    topics = ((data or {}).get(name) or {}).get("topics") or []
    ctx.print("\n".join(topics) if topics else f"No active topics recorded for {name}")
    return EXIT_OK


def cmd_offsets(ctx: Context) -> int:
    args = ctx.args
    name = args.name
    if args.action == "get":
        data = ctx.client.offsets(name)
        if ctx.json:
            ctx.dump(data)
            return EXIT_OK
        offsets = (data or {}).get("offsets") or []
        if not offsets:
            ctx.print(f"No offsets committed for {name}")
            return EXIT_OK
        rows = [
            [_compact(o.get("partition")), "null" if o.get("offset") is None else _compact(o.get("offset"))]
            for o in offsets
        ]
        ctx.print(render_table(["PARTITION", "OFFSET"], rows))
        return EXIT_OK
    if args.action == "alter":
        if args.file is None:
            raise UsageError('offsets alter needs -d FILE with {"offsets": [...]}')
        body = parse_offsets_bytes(_read_bytes(args.file), "standard input" if args.file == "-" else args.file)
        answer = ctx.client.alter_offsets(name, body)
    else:
        answer = ctx.client.reset_offsets(name)
    if ctx.json:
        ctx.dump(answer)
    else:
        ctx.print((answer or {}).get("message") or "Done")
    return EXIT_OK


def cmd_validate(ctx: Context) -> int:
    args = ctx.args
    if args.file is None and args.name is None:
        raise UsageError("validate needs -d FILE (or the name of a predefined connector)")
    loaded = load_connector_config(args.name, args.file, parse_assignments(args.set))
    plugin = loaded.config.get("connector.class")
    if not plugin:
        raise UsageError("the configuration has no connector.class, so there is no plugin to validate it against")
    result = ctx.client.validate(plugin, loaded.config) or {}
    error_count = int(result.get("error_count") or 0)
    if ctx.json:
        ctx.dump(result)
        return EXIT_SERVER_ERROR if error_count else EXIT_OK
    rows = []
    for item in result.get("configs") or []:
        value = item.get("value") or {}
        definition = item.get("definition") or {}
        key = value.get("name") or definition.get("name") or "?"
        errors = value.get("errors") or []
        if errors or args.all:
            shown = value.get("value")
            for i, error in enumerate(errors or [""]):
                rows.append([key if i == 0 else "", ("null" if shown is None else shown) if i == 0 else "", error])
    if rows:
        ctx.print(render_table(["KEY", "VALUE", "ERROR"], rows))
    if error_count:
        ctx.note(f"{ctx.prog}: the configuration has {error_count} error{'s' if error_count != 1 else ''}")
        return EXIT_SERVER_ERROR
    ctx.print(f"The configuration of {loaded.name or plugin} is valid for {result.get('name', plugin)}")
    return EXIT_OK


def cmd_loggers(ctx: Context) -> int:
    args = ctx.args
    if args.level is None:
        if args.scope is not None:
            raise UsageError("--scope applies only when setting a level with --level")
        if args.logger is None:
            data = ctx.client.loggers()
            if ctx.json:
                ctx.dump(data)
                return EXIT_OK
            rows = [
                [n, (v or {}).get("level"), _time_ms((v or {}).get("last_modified"))] for n, v in (data or {}).items()
            ]
            ctx.print(render_table(["LOGGER", "LEVEL", "LAST MODIFIED"], rows))
            return EXIT_OK
        data = ctx.client.logger(args.logger)
        if ctx.json:
            ctx.dump(data)
            return EXIT_OK
        ctx.print(
            render_table(
                ["LOGGER", "LEVEL", "LAST MODIFIED"],
                [[args.logger, (data or {}).get("level"), _time_ms((data or {}).get("last_modified"))]],
            )
        )
        return EXIT_OK
    if args.logger is None:
        raise UsageError("--level needs a LOGGER (use 'root' for every logger)")
    scope = args.scope or "worker"
    data = ctx.client.set_logger_level(args.logger, args.level, scope)
    if ctx.json:
        ctx.dump(data)
        return EXIT_OK
    if scope == "cluster":
        ctx.print(f"Level {args.level.upper()} requested for {args.logger} on every worker of the cluster")
    else:
        names = list(data or [])
        ctx.print(
            f"Level {args.level.upper()} set on {len(names)} logger{'s' if len(names) != 1 else ''}"
            + (":" if names else "")
        )
        for n in names:
            ctx.print(f"  {n}")
    return EXIT_OK


# --------------------------------------------------------------------------- parser


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def _task_id(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a task number: {text}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("task numbers start at 0")
    return value


def _tls_hint(reason: str) -> str | None:
    """What to do about a failure of an https connection, from its error text."""
    if "CERTIFICATE_VERIFY_FAILED" in reason:
        return (
            f"the worker's certificate is not trusted: give its authority with --ca-cert FILE or "
            f"${CA_CERT_ENV} (--insecure skips the check); "
        )
    if "CERTIFICATE_REQUIRED" in reason.upper().replace(" ", "_"):
        return "the worker asks for a client certificate: give --client-cert FILE --client-key FILE; "
    if "disconnected without sending a response" in reason:
        # Over TLS 1.3 a worker refusing a client without certificate just closes the connection.
        return "if the worker asks for client certificates, give --client-cert FILE --client-key FILE; "
    return None


def _split_credentials(url: str) -> tuple[str, str | None]:
    """The URL without ``name:password@``, and those credentials (decoded) when it had them."""
    from urllib.parse import unquote, urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.username is None:
        return url, None
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    credentials = unquote(parts.username) + ":" + unquote(parts.password or "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)), credentials


def add_tls_options(parser: argparse.ArgumentParser, default: Any = None) -> None:
    """``--ca-cert``, ``--insecure``, ``--client-cert``, ``--client-key`` (also used by
    ``sluice console``); read back with :func:`tls_verify_from`."""
    parser.add_argument(
        "--ca-cert",
        metavar="FILE",
        default=default,
        help=f"PEM file of the authorities an https worker's certificate is checked against (default: ${CA_CERT_ENV}, "
        "else the system's)",
    )
    parser.add_argument(
        "--insecure",
        action="store_true",
        default=argparse.SUPPRESS if default is argparse.SUPPRESS else False,
        help="do not check an https worker's certificate",
    )
    parser.add_argument(
        "--client-cert",
        metavar="FILE",
        default=default,
        help=f"PEM certificate (chain) to present to a worker that asks for one (default: ${CLIENT_CERT_ENV})",
    )
    parser.add_argument(
        "--client-key",
        metavar="FILE",
        default=default,
        help=f"PEM private key of --client-cert, when not in that file (default: ${CLIENT_KEY_ENV}; "
        f"an encrypted key's password: ${CLIENT_KEY_PASSWORD_ENV})",
    )


def tls_verify_from(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> ssl.SSLContext | bool:
    """:func:`tls_verify` of the options :func:`add_tls_options` added, or their variables."""
    env = os.environ if environ is None else environ
    return tls_verify(
        ca_cert=getattr(args, "ca_cert", None) or env.get(CA_CERT_ENV) or None,
        insecure=bool(getattr(args, "insecure", False)),
        client_cert=getattr(args, "client_cert", None) or env.get(CLIENT_CERT_ENV) or None,
        client_key=getattr(args, "client_key", None) or env.get(CLIENT_KEY_ENV) or None,
        key_password=env.get(CLIENT_KEY_PASSWORD_ENV),
    )


def build_parser(prog: str = "sluice connector") -> argparse.ArgumentParser:
    # --url and --json are accepted before and after the command. On the commands they
    # default to SUPPRESS so they do not overwrite a value given before the command.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--url", default=argparse.SUPPRESS, help=f"the Connect worker's REST URL (default: ${URL_ENV} or {DEFAULT_URL})"
    )
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print the server's JSON instead of tables"
    )
    common.add_argument(
        "--user",
        default=argparse.SUPPRESS,
        help=f"NAME:PASSWORD for a worker with basic authentication (default: ${USER_ENV})",
    )
    add_tls_options(common, default=argparse.SUPPRESS)

    parser = argparse.ArgumentParser(
        prog=prog,
        description="Manage the connectors of a Kafka Connect worker through its REST API.",
        epilog="Exit codes: 0 done, 1 error answered by the worker (or validation errors), 2 usage error, "
        "3 worker unreachable, 4 --wait saw a FAILED connector or task, 5 --wait timed out.",
    )
    parser.add_argument(
        "--url", default=None, help=f"the Connect worker's REST URL (default: ${URL_ENV} or {DEFAULT_URL})"
    )
    parser.add_argument("--json", action="store_true", default=False, help="print the server's JSON instead of tables")
    parser.add_argument(
        "--user", default=None, help=f"NAME:PASSWORD for a worker with basic authentication (default: ${USER_ENV})"
    )
    add_tls_options(parser, default=None)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, func: Callable[[Context], int], help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help, description=help)
        p.set_defaults(func=func)
        return p

    def waiting(p: argparse.ArgumentParser, what: str) -> None:
        p.add_argument("--wait", action="store_true", help=f"wait until {what}; FAILED ends the wait (exit 4)")
        p.add_argument(
            "--timeout",
            type=_positive_float,
            default=WAIT_TIMEOUT,
            metavar="SECONDS",
            help=f"how long --wait waits (default {WAIT_TIMEOUT:g})",
        )

    def file_option(p: argparse.ArgumentParser, help: str) -> None:
        p.add_argument("-d", "--file", "--config", dest="file", metavar="FILE", help=help)

    def set_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--set",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="set a config key (repeatable; applied over the file)",
        )

    p = command("load", cmd_load, "create a connector, or update its config (PUT /connectors/NAME/config)")
    p.add_argument("name", metavar="NAME", help="connector name; alone, a predefined connector (see list --predefined)")
    file_option(p, 'connector config: Java properties, a JSON map or {"name", "config"} (\'-\' reads stdin)')
    set_option(p)
    waiting(p, "the connector and its tasks are RUNNING (or the requested initial state)")

    p = command("unload", cmd_unload, "delete a connector")
    p.add_argument("name", metavar="NAME")

    p = command("list", cmd_list, "list connectors with their states")
    p.add_argument("--predefined", action="store_true", help="list the predefined connectors that load knows")
    p.add_argument(
        "--expand",
        action="append",
        choices=["status", "info"],
        help="with --json: GET /connectors?expand=… (repeatable)",
    )

    p = command("plugins", cmd_plugins, "list connector plugins, or show one plugin's config keys")
    p.add_argument("plugin", nargs="?", metavar="PLUGIN", help="a plugin class or alias: show its config definition")
    p.add_argument("--all", action="store_true", help="also converters, transformations and predicates")

    p = command(
        "status", cmd_status, "show a connector's status with its tasks and traces (all connectors without NAME)"
    )
    p.add_argument("name", nargs="?", metavar="NAME")

    p = command("config", cmd_config, "show a connector's config, or update it")
    p.add_argument("name", metavar="NAME")
    file_option(p, "replace the config with this file (properties or JSON)")
    set_option(p)
    p.add_argument("--unset", action="append", default=[], metavar="KEY", help="remove a config key (repeatable)")

    for verb, func, state, help in (
        ("pause", cmd_pause, "PAUSED", "pause a connector and its tasks"),
        ("resume", cmd_resume, "RUNNING", "resume a paused or stopped connector"),
        ("stop", cmd_stop, "STOPPED", "stop a connector and shut its tasks down (offsets can then be changed)"),
    ):
        p = command(verb, func, help)
        p.add_argument("name", metavar="NAME")
        waiting(p, f"the connector and its tasks are {state}")

    p = command("restart", cmd_restart, "restart a connector (and its tasks), or one task")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--include-tasks", action="store_true", help="restart the tasks too")
    p.add_argument("--only-failed", action="store_true", help="restart only the FAILED instances")
    p.add_argument("--task", type=_task_id, metavar="N", help="restart only task N")
    waiting(p, "the restarted connector and tasks are back in their state")

    p = command("topics", cmd_topics, "show the topics a connector has used")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--reset", action="store_true", help="forget the connector's active topics")

    p = command("offsets", cmd_offsets, "show, alter or reset a connector's offsets (alter/reset need it STOPPED)")
    offsets = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    for action, help in (
        ("get", "show the offsets"),
        ("alter", "alter offsets from a JSON file"),
        ("reset", "reset every offset"),
    ):
        q = offsets.add_parser(action, parents=[common], help=help, description=help)
        q.add_argument("name", metavar="NAME")
        if action == "alter":
            file_option(q, 'JSON {"offsets": [{"partition": {…}, "offset": {…}}]} (a bare list too; \'-\' reads stdin)')
        else:
            q.set_defaults(file=None)

    p = command("validate", cmd_validate, "validate a connector config; exit 1 when it has errors")
    p.add_argument("name", nargs="?", metavar="NAME", help="connector name (alone: a predefined connector)")
    file_option(p, "connector config: Java properties or JSON")
    set_option(p)
    p.add_argument("--all", action="store_true", help="show every key with its value, not only the errors")

    p = command("loggers", cmd_loggers, "show logger levels, or set one with --level")
    p.add_argument("logger", nargs="?", metavar="LOGGER")
    p.add_argument("--level", metavar="LEVEL", help="set the level (TRACE, DEBUG, INFO, WARN, ERROR, …)")
    p.add_argument("--scope", choices=["worker", "cluster"], help="with --level: this worker (default) or every worker")
    return parser


def _fail(prog: str, error: CliError) -> int:
    print(f"{prog}: error: {error.message}", file=sys.stderr)
    return error.exit_code


def run(argv: Sequence[str], prog: str = "sluice connector", transport: httpx2.BaseTransport | None = None) -> int:
    """Parse ``argv`` and run the command; ``transport`` replaces the network (tests)."""
    parser = build_parser(prog)
    args = parser.parse_args(list(argv))
    url = args.url or os.environ.get(URL_ENV) or DEFAULT_URL
    user = getattr(args, "user", None) or os.environ.get(USER_ENV) or None
    try:
        verify = tls_verify_from(args)
        with ConnectClient(url, transport=transport, user=user, verify=verify) as client:
            return int(args.func(Context(args, client, prog)))
    except CliError as exc:
        return _fail(prog, exc)
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Entry point of ``sluice connector`` and of the ``sluice-connector`` script."""
    if argv is None:
        argv = sys.argv[1:]
        script = os.path.basename(sys.argv[0])
        prog = prog or (script if script and not script.endswith(".py") else "sluice-connector")
    return run(argv, prog or "sluice connector")


if __name__ == "__main__":
    sys.exit(main())
