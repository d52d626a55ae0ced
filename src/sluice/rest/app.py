"""The Kafka Connect REST API as a FastAPI application over a :class:`Herder`.

:func:`create_app` assembles the routes of :mod:`sluice.rest.routes` (one module per
resource, thin by design: parse the input, call the herder, serialise the result), the
error handlers and the middleware that implement the worker's HTTP settings.

Every route has an ``operation_id``: :mod:`sluice.rest.openapi` describes the operation
under that id, and ``GET /openapi.json`` serves the description of all of them.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable

from fastapi import FastAPI, Request, Response
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from sluice.rest.basic_auth import BasicAuthMiddleware
from sluice.rest.errors import CatchAllMiddleware, error_response, install_error_handlers
from sluice.rest.forwarding import forward_request_handler
from sluice.rest.http_settings import AdminPathGate, ResponseHeadersMiddleware, parse_header_rules
from sluice.rest.routes.admin import admin_routes
from sluice.rest.routes.connectors import connector_routes
from sluice.rest.routes.endpoint import Endpoint
from sluice.rest.routes.plugins import plugin_routes
from sluice.rest.routes.root import root_routes
from sluice.runtime.herder.base import Herder, RequestForwardError

__all__ = ["create_app"]

# Every route of the API, resource by resource, in the order they are matched (and listed
# in /openapi.json).
_RESOURCES: tuple[Callable[[Herder], list[Endpoint]], ...] = (
    root_routes,
    connector_routes,
    plugin_routes,
    admin_routes,
)


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


#: How long a request about connectors waits for a starting herder (Kafka's REST request
#: timeout), before it answers 500 "Request timed out" with what the worker is doing.
HERDER_START_WAIT_S = 90.0
_HERDER_START_POLL_S = 0.05


class _AwaitHerderStart:
    """Hold requests about connectors until the herder serves them, as Kafka's herder
    queues them until it has started (a distributed worker: until it has joined its group
    and has its first assignment). The worker's own resources (``/``, ``/health``, the
    plugins, the loggers) answer at once."""

    def __init__(self, app: ASGIApp, herder: Herder) -> None:
        self.app = app
        self.herder = herder

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (scope["path"] == "/connectors" or scope["path"].startswith("/connectors/")):
            deadline = asyncio.get_running_loop().time() + HERDER_START_WAIT_S
            while not self.herder.await_started(0):
                if asyncio.get_running_loop().time() >= deadline:
                    stage = self.herder.starting_stage()
                    message = "Request timed out" + (f". {stage}" if stage else "")
                    await error_response(500, message)(scope, receive, send)
                    return
                await asyncio.sleep(_HERDER_START_POLL_S)
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
    app.add_middleware(_AwaitHerderStart, herder=herder)
    app.add_middleware(AdminPathGate)
    if basic_auth_users is not None:
        app.add_middleware(BasicAuthMiddleware, users=basic_auth_users)  # outermost: before anything runs

    for resource_routes in _RESOURCES:
        for endpoint in resource_routes(herder):
            app.add_api_route(
                endpoint.path, endpoint.handler, methods=endpoint.methods, operation_id=endpoint.operation_id
            )
    for prefix, mounted in mounts.items():
        app.add_route(prefix, _slash_redirect, methods=["GET", "HEAD"], include_in_schema=False)
        app.mount(prefix, mounted)
    return app


async def _slash_redirect(request: Request) -> Response:
    """``/ui`` → ``/ui/``: a mounted application's pages link relative to its root."""
    return Response(status_code=307, headers={"Location": request.url.path + "/"})
