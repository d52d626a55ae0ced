"""The Kafka Connect REST API as a FastAPI application over a :class:`Herder`.

Thin by design: each handler parses its input, calls one herder method and serialises
the result. Handlers are plain ``def`` because herder methods block; FastAPI runs them
in its thread pool. Request bodies are read by :func:`_json_body` rather than by
FastAPI/pydantic models, so that every malformed request gets Kafka's error body (see
:mod:`sluice.rest.errors` for the mapping and the list of deliberate deviations).

Every route has an ``operation_id``: :mod:`sluice.rest.openapi` describes the operation
under that id, and ``GET /openapi.json`` serves the description of all of them.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import Depends, FastAPI, Request, Response
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from sluice.api.errors import NotFoundError
from sluice.rest import entities
from sluice.rest.basic_auth import BasicAuthMiddleware
from sluice.rest.errors import CatchAllMiddleware, install_error_handlers, jaxrs_message
from sluice.rest.forwarding import forward_request_handler
from sluice.rest.http_settings import AdminPathGate, ResponseHeadersMiddleware, parse_header_rules
from sluice.rest.openapi import openapi_document
from sluice.rest.responses import JsonResponse
from sluice.runtime.herder.base import BadRequestError, ConnectRestError, Herder, RequestForwardError

__all__ = ["create_app"]

_HEALTH_STATUS_CODES = {"healthy": 200, "starting": 503, "unhealthy": 500}

# Characters JAX-RS's UriBuilder.path() leaves unencoded in a path.
_PATH_SAFE = "/:@!$&'()*+,;=-._~"

_MISSING: Any = object()  # no request body


# --------------------------------------------------------------------------- request helpers


def _is_json_media_type(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


# No Connect entity nests more than a few levels; deeper bodies are refused before any
# recursive code (ours or the herder's) walks them. Jackson's own limit is 1000 (500 in Kafka).
_MAX_NESTING_DEPTH = 100
_TOO_DEEP_MESSAGE = f"Request body is not valid JSON: nested more than {_MAX_NESTING_DEPTH} levels deep"
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


async def _json_body(request: Request) -> Any:
    """The decoded JSON body, or ``_MISSING`` when the request has none."""
    body = await request.body()
    request.state.raw_body = body  # kept for forwarding the request to another worker
    if not body.strip():
        return _MISSING
    content_type = request.headers.get("content-type")
    if content_type is not None and not _is_json_media_type(content_type):
        raise ConnectRestError(
            415,
            f"{jaxrs_message(415)}: Content-Type {content_type} is not supported; send application/json",
        )
    try:
        value = entities.loads_json(body)
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, NaN/Infinity
        raise BadRequestError(f"Request body is not valid JSON: {exc}") from None
    except RecursionError:  # the decoder's own nesting limit
        raise BadRequestError(_TOO_DEEP_MESSAGE) from None
    _check_decoded(value)
    return value


def _check_decoded(value: Any) -> None:
    """Refuse a decoded body nested too deeply, or with a string (key or value) holding an
    unpaired UTF-16 surrogate (JSON's ``"\\ud800"`` escape): Python decodes it into a
    string that no UTF-8 writer accepts, so stored in a config or offset it would break
    every later answer that shows it."""
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        texts = (item,) if isinstance(item, str) else tuple(item) if isinstance(item, dict) else ()
        for text in texts:
            match = _SURROGATE_RE.search(text)
            if match:
                raise BadRequestError(
                    "Request body is not valid JSON: it contains an unpaired UTF-16 surrogate "
                    f"\\u{ord(match.group()):04x}"
                )
        if isinstance(item, (dict, list)):
            if level > _MAX_NESTING_DEPTH:
                raise BadRequestError(_TOO_DEEP_MESSAGE)
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))


JsonBody = Annotated[Any, Depends(_json_body)]


def _require_body(body: Any) -> Any:
    if body is _MISSING:
        raise BadRequestError("Request body is missing: expected a JSON object")
    return body


def _java_bool(request: Request, name: str, default: bool) -> bool:
    """A boolean query parameter as JAX-RS reads it: the first value, ``Boolean.valueOf``
    (only ``true``, case-insensitive, is true); absent or blank → ``default``."""
    values = request.query_params.getlist(name)
    if not values or not values[0].strip():
        return default
    return values[0].lower() == "true"


_INT_RE = re.compile(r"[+-]?[0-9]+")


def _task_id(task: str) -> int:
    """A ``{task}`` path segment as JAX-RS converts it to ``Integer``; anything else is 404."""
    if _INT_RE.fullmatch(task):
        value = int(task)
        if -(2**31) <= value < 2**31:
            return value
    raise ConnectRestError(404, jaxrs_message(404))


def _check_and_put_name(connector_name: str, config: dict[str, str | None]) -> None:
    """``ConnectorsResource.checkAndPutConnectorConfigName``."""
    included = config.get("name")
    if included is not None:
        if included != connector_name:
            raise BadRequestError(
                f"Connector name configuration ({included}) doesn't match connector name in the URL ({connector_name})"
            )
    else:
        config["name"] = connector_name


def _location(request: Request, name: str) -> str:
    """``Location`` of a created connector, resolved against the request base as Jersey does."""
    return str(request.base_url).rstrip("/") + "/connectors/" + quote(name, safe=_PATH_SAFE, errors="surrogatepass")


def _normalized_plugin_name(name: str) -> str:
    suffix = "Connector"
    if name.endswith(suffix) and len(name) > len(suffix):
        return name[: -len(suffix)]
    return name


def _json(content: Any, status_code: int = 200, headers: dict[str, str] | None = None) -> JsonResponse:
    return JsonResponse(content, status_code=status_code, headers=headers)


# --------------------------------------------------------------------------- middleware


class _StripTrailingSlash:
    """Serve ``/connectors/`` as ``/connectors`` (Jersey tolerates a trailing slash). Paths
    under a mounted application (the console's ``/ui/``) are theirs and left alone."""

    def __init__(self, app: ASGIApp, mounted: tuple[str, ...] = ()) -> None:
        self.app = app
        self.mounted = tuple(prefix + "/" for prefix in mounted)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path: str = scope["path"]
            if len(path) > 1 and path.endswith("/") and not path.startswith(self.mounted):
                scope = dict(scope)
                scope["path"] = path.rstrip("/") or "/"
                raw = scope.get("raw_path")
                if raw:
                    scope["raw_path"] = raw.rstrip(b"/") or b"/"
        await self.app(scope, receive, send)


# --------------------------------------------------------------------------- application


def create_app(
    herder: Herder,
    *,
    cors_allowed_origins: str = "",
    cors_allowed_methods: str = "",
    response_headers: str = "",
    mounts: dict[str, ASGIApp] | None = None,
    basic_auth_users: dict[str, str] | None = None,
    forwarding_ssl_context: Callable[[], ssl.SSLContext] | None = None,
) -> FastAPI:
    """The REST API of one worker, operating ``herder``.

    ``cors_allowed_origins``/``cors_allowed_methods`` are ``access.control.allow.origin``
    and ``access.control.allow.methods``; ``response_headers`` is
    ``response.http.headers.config`` (raises ValueError when it does not parse).
    ``mounts`` are applications served beside the API under their path prefixes (the
    console at ``/ui``), behind the same listeners and middleware. ``basic_auth_users``
    (Kafka's basic auth extension, :mod:`sluice.rest.basic_auth`) makes every request need
    one of those users' credentials. ``forwarding_ssl_context`` gives the SSL context of
    requests forwarded to another worker's https listener (built on first use, as Kafka's
    RestClient reads its TLS settings only for an https URL).
    """
    header_rules = parse_header_rules(response_headers)
    app = FastAPI(
        title="Sluice (Kafka Connect REST API)",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        redirect_slashes=False,
    )
    app.state.herder = herder
    app.state.forwarding_ssl_context = forwarding_ssl_context
    install_error_handlers(app)
    app.add_exception_handler(RequestForwardError, forward_request_handler)
    # add_middleware prepends: the last added is outermost. All sit inside Starlette's
    # ServerErrorMiddleware and outside the exception handlers and the router.
    app.add_middleware(CatchAllMiddleware)
    mounts = mounts or {}
    app.add_middleware(_StripTrailingSlash, mounted=tuple(mounts))
    if cors_allowed_origins.strip():
        # Jetty's CrossOriginFilter defaults, as Kafka Connect configures it.
        methods = [m.strip() for m in (cors_allowed_methods or "GET,POST,HEAD").split(",") if m.strip()]
        app.add_middleware(
            CORSMiddleware,
            allow_origins=[o.strip() for o in cors_allowed_origins.split(",") if o.strip()],
            allow_methods=methods,
            allow_headers=["X-Requested-With", "Content-Type", "Accept", "Origin"],
            allow_credentials=True,
        )
    if header_rules:
        app.add_middleware(ResponseHeadersMiddleware, rules=header_rules)
    app.add_middleware(AdminPathGate)
    if basic_auth_users is not None:
        app.add_middleware(BasicAuthMiddleware, users=basic_auth_users)  # outermost: before anything runs

    def get(path: str, operation_id: str):  # GET, and HEAD as JAX-RS serves it for every GET resource
        return app.api_route(path, methods=["GET", "HEAD"], operation_id=operation_id)

    # ---- root

    @get("/", "getServerInfo")
    def server_info() -> Response:
        return _json(herder.server_info())

    @get("/openapi.json", "getOpenApi")
    def openapi_json() -> Response:
        # A Sluice addition (Kafka Connect serves no API description); built once, on first use.
        document = getattr(app.state, "openapi_document", None)
        if document is None:
            document = app.state.openapi_document = openapi_document(app)
        return _json(document)

    @get("/metrics", "getMetrics")
    def metrics() -> Response:
        # A Sluice addition: Kafka Connect's metrics for Prometheus to scrape (Kafka: JMX).
        return Response(herder.metrics_text(), media_type="text/plain; version=0.0.4; charset=utf-8")

    @get("/health", "getHealth")
    def health() -> Response:
        status, message = herder.health()
        code = _HEALTH_STATUS_CODES.get(status, 500)
        return _json({"status": status, "message": message}, status_code=code)

    # ---- connectors

    @get("/connectors", "listConnectors")
    def list_connectors(request: Request) -> Response:
        names = herder.connectors()
        if "expand" not in request.query_params:
            return _json(list(names))
        expansions = request.query_params.getlist("expand")
        out: dict[str, dict[str, Any]] = {}
        for name in names:
            try:
                expanded: dict[str, Any] = {}
                for expansion in expansions:
                    if expansion == "status":
                        expanded["status"] = entities.connector_state_json(herder.connector_status(name))
                    elif expansion == "info":
                        expanded["info"] = entities.connector_info_json(herder.connector_info(name))
                    # unknown expansions are ignored, as in Kafka
                out[name] = expanded
            except NotFoundError:
                # removed while we looked it up: left out, as in Kafka
                continue
        return _json(out)

    @app.post("/connectors", operation_id="createConnector")
    def create_connector(request: Request, body: JsonBody) -> Response:
        name, config, initial_state = entities.parse_create_request(_require_body(body))
        _check_and_put_name(name, config)
        _created, info = herder.put_connector_config(name, config, allow_replace=False, initial_state=initial_state)
        return _json(
            entities.connector_info_json(info),
            status_code=201,
            headers={"Location": _location(request, name)},
        )

    @get("/connectors/{connector}", "getConnector")
    def get_connector(connector: str) -> Response:
        return _json(entities.connector_info_json(herder.connector_info(connector)))

    @app.delete("/connectors/{connector}", operation_id="deleteConnector")
    def delete_connector(connector: str) -> Response:
        herder.delete_connector(connector)
        return Response(status_code=204)

    @get("/connectors/{connector}/config", "getConnectorConfig")
    def get_connector_config(connector: str) -> Response:
        return _json(dict(herder.connector_config(connector)))

    @app.put("/connectors/{connector}/config", operation_id="putConnectorConfig")
    def put_connector_config(request: Request, connector: str, body: JsonBody) -> Response:
        config = entities.parse_config_map(_require_body(body))
        _check_and_put_name(connector, config)
        created, info = herder.put_connector_config(connector, config, allow_replace=True)
        if created:
            return _json(
                entities.connector_info_json(info),
                status_code=201,
                headers={"Location": _location(request, connector)},
            )
        return _json(entities.connector_info_json(info))

    @app.patch("/connectors/{connector}/config", operation_id="patchConnectorConfig")
    def patch_connector_config(connector: str, body: JsonBody) -> Response:
        patch = entities.parse_config_map(_require_body(body))
        return _json(entities.connector_info_json(herder.patch_connector_config(connector, patch)))

    @get("/connectors/{connector}/status", "getConnectorStatus")
    def connector_status(connector: str) -> Response:
        return _json(entities.connector_state_json(herder.connector_status(connector)))

    @app.post("/connectors/{connector}/restart", operation_id="restartConnector")
    def restart_connector(request: Request, connector: str) -> Response:
        include_tasks = _java_bool(request, "includeTasks", False)
        only_failed = _java_bool(request, "onlyFailed", False)
        state = herder.restart_connector(connector, include_tasks, only_failed)
        if state is None:
            return Response(status_code=204)
        return _json(entities.connector_state_json(state), status_code=202)

    @app.put("/connectors/{connector}/pause", operation_id="pauseConnector")
    def pause_connector(connector: str) -> Response:
        herder.pause_connector(connector)
        return Response(status_code=202)

    @app.put("/connectors/{connector}/resume", operation_id="resumeConnector")
    def resume_connector(connector: str) -> Response:
        herder.resume_connector(connector)
        return Response(status_code=202)

    @app.put("/connectors/{connector}/stop", operation_id="stopConnector")
    def stop_connector(connector: str) -> Response:
        herder.stop_connector(connector)
        return Response(status_code=204)

    @get("/connectors/{connector}/topics", "getConnectorTopics")
    def connector_topics(connector: str) -> Response:
        topics = list(herder.connector_active_topics(connector))
        return _json({connector: {"topics": topics}})

    @app.put("/connectors/{connector}/topics/reset", operation_id="resetConnectorTopics")
    def reset_connector_topics(connector: str) -> Response:
        herder.reset_connector_active_topics(connector)
        return Response(status_code=202)

    # ---- offsets

    @get("/connectors/{connector}/offsets", "getConnectorOffsets")
    def connector_offsets(connector: str) -> Response:
        return _json({"offsets": herder.connector_offsets(connector)})

    @app.patch("/connectors/{connector}/offsets", operation_id="alterConnectorOffsets")
    def alter_connector_offsets(connector: str, body: JsonBody) -> Response:
        offsets = entities.parse_offsets_request(None if body is _MISSING else body)
        return _json({"message": herder.alter_connector_offsets(connector, offsets)})

    @app.delete("/connectors/{connector}/offsets", operation_id="resetConnectorOffsets")
    def reset_connector_offsets(connector: str) -> Response:
        return _json({"message": herder.reset_connector_offsets(connector)})

    # ---- tasks

    @get("/connectors/{connector}/tasks", "getTaskConfigs")
    def task_configs(connector: str) -> Response:
        return _json([entities.task_info_json(t) for t in herder.task_configs(connector)])

    @get("/connectors/{connector}/tasks-config", "getTasksConfig")
    def tasks_config(connector: str) -> Response:
        # Deprecated in Kafka: {"<c>-<n>": {config}}.
        return _json({str(t.id): dict(t.config) for t in herder.task_configs(connector)})

    @get("/connectors/{connector}/tasks/{task}/status", "getTaskStatus")
    def task_status(connector: str, task: str) -> Response:
        return _json(entities.task_state_json(herder.task_status(connector, _task_id(task))))

    @app.post("/connectors/{connector}/tasks/{task}/restart", operation_id="restartTask")
    def restart_task(connector: str, task: str) -> Response:
        herder.restart_task(connector, _task_id(task))
        return Response(status_code=204)

    # ---- plugins

    @get("/connector-plugins", "listConnectorPlugins")
    def connector_plugins(request: Request) -> Response:
        connectors_only = _java_bool(request, "connectorsOnly", True)
        plugins = herder.connector_plugins(connectors_only=connectors_only)
        return _json([entities.plugin_info_json(p) for p in plugins])

    @get("/connector-plugins/{plugin}/config", "getPluginConfig")
    def plugin_config(plugin: str) -> Response:
        return _json([entities.config_key_info_json(k) for k in herder.plugin_config(plugin)])

    @app.put("/connector-plugins/{plugin}/config/validate", operation_id="validateConnectorConfig")
    def validate_config(plugin: str, body: JsonBody) -> Response:
        config = entities.parse_config_map(_require_body(body))
        included = config.get("connector.class")
        if included is not None and not _normalized_plugin_name(included).endswith(_normalized_plugin_name(plugin)):
            raise BadRequestError(f"Included connector type {included} does not match request type {plugin}")
        return _json(entities.config_infos_json(herder.validate_connector_config(config)))

    # ---- admin

    @get("/admin/loggers", "getLoggerLevels")
    def logger_levels() -> Response:
        return _json({name: entities.logger_level_json(level) for name, level in herder.logger_levels().items()})

    @get("/admin/loggers/{logger}", "getLoggerLevel")
    def logger_level(logger: str) -> Response:
        return _json(entities.logger_level_json(herder.logger_level(logger)))

    @app.put("/admin/loggers/{logger}", operation_id="setLoggerLevel")
    def set_logger_level(request: Request, logger: str, body: JsonBody) -> Response:
        if isinstance(body, dict) and isinstance(body.get("level"), (dict, list)):
            raise BadRequestError(f"Field 'level' must be a JSON string, not {entities.json_type_name(body['level'])}")
        level = entities.parse_logger_level_request(None if body is _MISSING else body)
        scope = request.query_params.get("scope", "worker")
        if scope.lower() == "cluster":
            herder.set_cluster_logger_level(logger, level)  # type: ignore[arg-type]
            return Response(status_code=204)
        # Kafka treats any other scope as worker (with a warning).
        return _json(herder.set_worker_logger_level(logger, level))  # type: ignore[arg-type]

    for prefix, mounted in mounts.items():
        app.add_route(prefix, _slash_redirect, methods=["GET", "HEAD"], include_in_schema=False)
        app.mount(prefix, mounted)
    return app


async def _slash_redirect(request: Request) -> Response:
    """``/ui`` → ``/ui/``: a mounted application's pages link relative to its root."""
    return Response(status_code=307, headers={"Location": request.url.path + "/"})
