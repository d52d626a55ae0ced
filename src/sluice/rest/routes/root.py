"""The worker's own resources (Kafka's ``RootResource``), plus two Sluice additions:
the OpenAPI description and the Prometheus metrics."""

from __future__ import annotations

from fastapi import Request, Response

from sluice.rest.openapi.document import openapi_document
from sluice.rest.requests import json_response
from sluice.rest.routes.endpoint import Endpoint
from sluice.runtime.herder.base import Herder

__all__ = ["root_routes"]

_HEALTH_STATUS_CODES = {"healthy": 200, "starting": 503, "unhealthy": 500}


def root_routes(herder: Herder) -> list[Endpoint]:
    """``/``, ``/openapi.json``, ``/metrics`` and ``/health`` over ``herder``."""

    def server_info() -> Response:
        return json_response(herder.server_info())

    def openapi_json(request: Request) -> Response:
        # A Sluice addition (Kafka Connect serves no API description); built once, on first
        # use, from the routes of the application serving the request.
        app = request.app
        document = getattr(app.state, "openapi_document", None)
        if document is None:
            document = app.state.openapi_document = openapi_document(app)
        return json_response(document)

    def metrics() -> Response:
        # A Sluice addition: Kafka Connect's metrics for Prometheus to scrape (Kafka: JMX).
        return Response(herder.metrics_text(), media_type="text/plain; version=0.0.4; charset=utf-8")

    def health() -> Response:
        status, message = herder.health()
        code = _HEALTH_STATUS_CODES.get(status, 500)
        return json_response({"status": status, "message": message}, status_code=code)

    return [
        Endpoint("GET", "/", "getServerInfo", server_info),
        Endpoint("GET", "/openapi.json", "getOpenApi", openapi_json),
        Endpoint("GET", "/metrics", "getMetrics", metrics),
        Endpoint("GET", "/health", "getHealth", health),
    ]
