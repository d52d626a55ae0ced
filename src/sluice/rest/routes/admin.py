"""Logger levels under ``/admin/loggers`` (Kafka's ``LoggingResource``); which listeners
serve them is :class:`~sluice.rest.http_settings.AdminPathGate`'s business."""

from __future__ import annotations

from fastapi import Request, Response

from sluice.rest.entities import json_type_name, logger_level_json, parse_logger_level_request
from sluice.rest.requests import MISSING, JsonBody, json_response
from sluice.rest.routes.endpoint import Endpoint
from sluice.runtime.herder.base import BadRequestError, Herder

__all__ = ["admin_routes"]


def admin_routes(herder: Herder) -> list[Endpoint]:
    """``/admin/loggers`` and ``/admin/loggers/{logger}``, over ``herder``."""

    def logger_levels() -> Response:
        return json_response({name: logger_level_json(level) for name, level in herder.logger_levels().items()})

    def logger_level(logger: str) -> Response:
        return json_response(logger_level_json(herder.logger_level(logger)))

    def set_logger_level(request: Request, logger: str, body: JsonBody) -> Response:
        if isinstance(body, dict) and isinstance(body.get("level"), (dict, list)):
            raise BadRequestError(f"Field 'level' must be a JSON string, not {json_type_name(body['level'])}")
        level = parse_logger_level_request(None if body is MISSING else body)
        scope = request.query_params.get("scope", "worker")
        if scope.lower() == "cluster":
            herder.set_cluster_logger_level(logger, level)  # type: ignore[arg-type]
            return Response(status_code=204)
        # Kafka treats any other scope as worker (with a warning).
        return json_response(herder.set_worker_logger_level(logger, level))  # type: ignore[arg-type]

    return [
        Endpoint("GET", "/admin/loggers", "getLoggerLevels", logger_levels),
        Endpoint("GET", "/admin/loggers/{logger}", "getLoggerLevel", logger_level),
        Endpoint("PUT", "/admin/loggers/{logger}", "setLoggerLevel", set_logger_level),
    ]
