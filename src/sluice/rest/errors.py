"""Error mapping of the REST API: every failure answers ``{"error_code": N, "message": T}``.

Mapping (``ConnectExceptionMapper`` in Kafka Connect):

* :class:`~sluice.api.errors.NotFoundError` → 404
* :class:`~sluice.api.errors.AlreadyExistsError` → 409
* :class:`~sluice.runtime.herder.base.ConnectRestError` (incl. ``BadRequestError``) → its ``status``
* Starlette/FastAPI ``HTTPException`` (unknown path, wrong method, too large a body) → its
  status, with JAX-RS's default text, e.g. ``HTTP 404 Not Found``, ``HTTP 405 Method Not Allowed``
* anything else → 500 with ``str(exc)`` (the exception's class name when that is empty)

Deviations from Kafka Connect 4.x (for ``docs/compatibility.md``)
-----------------------------------------------------------------

Kafka Connect answers 500 to several plain client mistakes, because Jackson's
deserialisation errors and null-pointer paths fall through to its catch-all. Sluice
answers 4xx instead, with the same ``{"error_code", "message"}`` body:

1. **Malformed JSON body** (any endpoint that reads a body): 400
   ``Request body is not valid JSON: <parser detail>``. Kafka: 500 with Jackson's message.
   ``NaN``/``Infinity`` are rejected as not JSON, as Jackson does.
2. **Body of the wrong JSON shape**: 400. Kafka: 500 ``Cannot deserialize value ...``.
   * body not an object (array, string, ...): ``Request body must be a JSON object, not array``
     (config maps: ``Request body must be a JSON object of connector configs, not array``);
   * ``config`` of ``POST /connectors`` not an object:
     ``Field 'config' must be a JSON object of connector configs, not array``;
   * a config value that is an object or array:
     ``Value of connector config '<k>' must be a string, number, boolean or null, not object``;
   * ``name`` of ``POST /connectors`` an object or array:
     ``Field 'name' must be a JSON string, not object``.
3. **Missing body** where one is required (``POST /connectors``, ``PUT``/``PATCH .../config``,
   ``PUT .../config/validate``): 400 ``Request body is missing: expected a JSON object``.
   Kafka: 500 (null entity).
4. **``POST /connectors`` without ``config``** (or ``"config": null``): 400
   ``Field 'config' is missing: the request body must contain a 'config' object``.
   Kafka: 500 (NullPointerException).
5. **Invalid ``initial_state``**: 400
   ``Invalid value <v> for initial_state: must be one of RUNNING, PAUSED, STOPPED (case-insensitive)``.
   Kafka: 500 (Jackson instantiation error).
6. **Unknown top-level fields in ``POST /connectors``** are ignored. Kafka: 500
   ``Unrecognized field ...`` (Jackson rejects unknown properties of typed entities).
7. **Non-JSON ``Content-Type``** on a request with a body to an endpoint that reads one:
   415 ``HTTP 415 Unsupported Media Type: Content-Type <t> is not supported; send application/json``.
   Kafka also answers 415 (JAX-RS ``@Consumes``), with the bare text
   ``HTTP 415 Unsupported Media Type``. ``application/json`` with any parameters and any
   ``application/*+json`` type are accepted. A body **without** a ``Content-Type`` is read
   as JSON (lenient; JAX-RS may refuse it). Endpoints that take no body ignore the body
   and its type.
8. **Errors raised while validating** (``PUT /connector-plugins/{p}/config/validate``) go
   through the normal mapping, so a config without ``connector.class`` answers 400
   ``Connector config {...} contains no connector type``. Kafka does not unwrap them there:
   500 with the message prefixed by the Java exception's class name.
9. **Non-integer task id** (``/connectors/{c}/tasks/{t}/...``): 404 ``HTTP 404 Not Found``,
   as in Kafka. Integer ids outside Java's 32-bit range are also 404 ``HTTP 404 Not Found``.
10. **Body nested more than 100 levels deep** (arrays/objects, any endpoint that reads a
    body): 400 ``Request body is not valid JSON: nested more than 100 levels deep``.
    Kafka: Jackson refuses more than 1000 levels, answered as 500.
11. **``level`` of ``PUT /admin/loggers/{logger}`` an object or array**: 400
    ``Field 'level' must be a JSON string, not object``. Kafka: 500 (Jackson cannot read it
    into its ``Map<String, String>``). A number or boolean is read as its text, as Jackson
    does, and then answers 404 ``invalid log level '5'.``
12. **A string (key or value) with an unpaired UTF-16 surrogate escape** (``"\\ud800"``) in
    any body: 400 ``Request body is not valid JSON: it contains an unpaired UTF-16 surrogate
    \\ud800``. Kafka accepts it (Java strings may hold one). Answers that show such a
    string anyway (for example a config from a properties file) write it with the
    ``\\udXXX`` escape.

Compatible behaviours worth knowing (not deviations): config values that are JSON numbers
or booleans are coerced to strings the way Jackson does (``1`` → ``"1"``, ``1.50`` →
``"1.50"``, ``true`` → ``"true"``), ``null`` stays null; a trailing slash is tolerated on
every path (served directly, not redirected); a 405 names in ``Allow`` every method the
path serves.

Additions: ``GET /openapi.json`` serves an OpenAPI 3.1 description of the whole API
(:mod:`sluice.rest.openapi`); Kafka Connect serves none.

Not served: the internal ``POST /connectors/{c}/tasks`` and ``PUT /connectors/{c}/fence``
(404 ``HTTP 404 Not Found``). ``OPTIONS`` answers 405 with ``Allow`` (JAX-RS answers 200
``text/plain`` listing the methods), except CORS preflights when CORS is enabled.
"""

from __future__ import annotations

import contextlib
import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sluice.api.errors import AlreadyExistsError, ConnectError, NotFoundError
from sluice.rest.responses import JsonResponse
from sluice.runtime.herder.base import ConnectRestError

__all__ = [
    "CatchAllMiddleware",
    "error_body",
    "error_response",
    "install_error_handlers",
    "jaxrs_message",
    "status_for",
]

log = logging.getLogger(__name__)


def error_body(status: int, message: str | None) -> dict[str, Any]:
    return {"error_code": status, "message": message}


def error_response(status: int, message: str | None, headers: dict[str, str] | None = None) -> JsonResponse:
    return JsonResponse(error_body(status, message), status_code=status, headers=headers)


def jaxrs_message(status: int) -> str:
    """JAX-RS's default exception text, e.g. ``HTTP 404 Not Found``."""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        return f"HTTP {status}"
    return f"HTTP {status} {phrase}"


def _exc_message(exc: BaseException) -> str:
    text = str(exc)
    return text if text else type(exc).__name__


def status_for(exc: BaseException) -> int:
    """The HTTP status an exception maps to."""
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, AlreadyExistsError):
        return 409
    if isinstance(exc, ConnectRestError):
        return exc.status
    if isinstance(exc, StarletteHTTPException):
        return exc.status_code
    if isinstance(exc, RequestValidationError):
        return 400
    return 500


async def _connect_error_handler(request: Request, exc: Exception) -> JsonResponse:
    status = status_for(exc)
    if status >= 500:
        log.error("Uncaught exception in REST call to %s %s", request.method, request.url.path, exc_info=exc)
    else:
        log.debug("REST call to %s %s failed with %d: %s", request.method, request.url.path, status, exc)
    return error_response(status, _exc_message(exc))


async def _http_exception_handler(request: Request, exc: Exception) -> JsonResponse:
    assert isinstance(exc, StarletteHTTPException)
    status = exc.status_code
    detail = exc.detail
    default_phrase = None
    with contextlib.suppress(ValueError):
        default_phrase = HTTPStatus(status).phrase
    message = jaxrs_message(status) if not detail or detail == default_phrase else str(detail)
    headers = dict(exc.headers) if exc.headers else {}
    if status == 405:
        # Starlette names only the methods of the first route that matched the path; JAX-RS
        # names every method the resource serves (GET and PUT of .../config, for example).
        allowed = _allowed_methods(request)
        if allowed:
            headers["Allow"] = ", ".join(allowed)
    return error_response(status, message, headers=headers or None)


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route serves on the request's path, sorted."""
    methods: set[str] = set()
    for route in getattr(request.app, "routes", ()):
        route_methods = getattr(route, "methods", None)
        if not route_methods:
            continue
        match, _child_scope = route.matches(request.scope)
        if match is not Match.NONE:
            methods.update(route_methods)
    return sorted(methods)


async def _validation_error_handler(request: Request, exc: Exception) -> JsonResponse:
    assert isinstance(exc, RequestValidationError)
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"{loc}: {err.get('msg', 'invalid')}" if loc else str(err.get("msg", "invalid")))
    return error_response(400, "; ".join(parts) or "Invalid request")


def install_error_handlers(app: FastAPI) -> None:
    """Register the mapping on ``app``; unexpected exceptions are answered by
    :class:`CatchAllMiddleware`, which must be added too."""
    app.add_exception_handler(ConnectError, _connect_error_handler)
    app.add_exception_handler(StarletteHTTPException, _http_exception_handler)
    app.add_exception_handler(RequestValidationError, _validation_error_handler)


class CatchAllMiddleware:
    """Answers any exception no handler took with 500 ``{"error_code": 500, "message": str(exc)}``.

    A pure ASGI middleware inside Starlette's ``ServerErrorMiddleware``, so the exception is
    answered and logged here rather than re-raised into the server.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_wrapper(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        except Exception as exc:
            log.error(
                "Uncaught exception in REST call to %s %s",
                scope.get("method"),
                scope.get("path"),
                exc_info=exc,
            )
            if started:  # too late for an error body; the connection is dropped
                raise
            response = error_response(status_for(exc), _exc_message(exc))
            await response(scope, receive, send)
