"""Building ``/openapi.json`` from an application's routes and :data:`OPERATIONS`."""

from __future__ import annotations

import copy
import re
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute

from sluice import __version__
from sluice.rest.openapi.operations import OPERATIONS, PATH_PARAMETERS
from sluice.rest.openapi.schemas import SCHEMAS

__all__ = ["OPENAPI_VERSION", "OpenApiError", "openapi_document"]

OPENAPI_VERSION = "3.1.0"


class OpenApiError(RuntimeError):
    """The routes and :data:`OPERATIONS` disagree (a programming error)."""


_TAGS = [
    {"name": "root", "description": "The worker itself."},
    {"name": "connectors", "description": "Connectors: create, configure, inspect, control."},
    {"name": "tasks", "description": "A connector's tasks."},
    {"name": "offsets", "description": "A connector's offsets."},
    {"name": "topics", "description": "Topics a connector has used."},
    {"name": "plugins", "description": "Installed plugins and config validation."},
    {"name": "admin", "description": "Logger levels (served where `admin.listeners` says)."},
    {"name": "internal", "description": "Requests between the workers of a distributed cluster (Kafka hides them)."},
]

_DESCRIPTION = (
    "The Kafka Connect REST API as Sluice serves it: the same paths, query parameters, JSON "
    "entities, status codes and error body as Apache Kafka Connect 4.x. Every error answers "
    '`{"error_code": <status>, "message": <text>}`; that includes 404 for unknown paths, '
    "405 for unsupported methods and, on endpoints that read a body, 400 for a body that is "
    "not JSON of the documented shape and 415 for a non-JSON Content-Type. A trailing slash "
    "is accepted on every path, and every GET is also served as HEAD."
)

_PATH_PARAM_RE = re.compile(r"{([^}:]+)(?::[^}]*)?}")


def _head_of(get_op: dict[str, Any], operation_id: str) -> dict[str, Any]:
    head = copy.deepcopy(get_op)
    head["summary"] = f"{get_op['summary']} (headers only)"
    head["operationId"] = operation_id
    head["responses"] = {
        code: {k: v for k, v in response.items() if k != "content"} for code, response in head["responses"].items()
    }
    return head


def openapi_document(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document of ``app``'s routes; raises :class:`OpenApiError` when a route
    has no description in :data:`OPERATIONS` or a description has no route."""
    paths: dict[str, dict[str, Any]] = {}
    used: set[str] = set()
    for route in app.routes:
        if not isinstance(route, APIRoute):
            continue
        operation_id = route.operation_id
        route_methods = route.methods or set()
        if operation_id is None or operation_id not in OPERATIONS:
            raise OpenApiError(f"Route {sorted(route_methods)} {route.path} has no description in OPERATIONS")
        if operation_id in used:
            raise OpenApiError(f"Operation id {operation_id} is used by two routes")
        used.add(operation_id)
        methods = {m.lower() for m in route_methods}
        if not methods <= {"get", "head", "post", "put", "patch", "delete"} or methods == {"head"}:
            raise OpenApiError(f"Route {route.path}: unexpected methods {sorted(methods)}")
        op = copy.deepcopy(OPERATIONS[operation_id])
        op["operationId"] = operation_id
        path_params = [copy.deepcopy(PATH_PARAMETERS[name]) for name in _PATH_PARAM_RE.findall(route.path)]
        if path_params:
            op["parameters"] = path_params + op.get("parameters", [])
        item = paths.setdefault(route.path, {})
        for method in sorted(methods - {"head"}):
            if method in item:
                raise OpenApiError(f"{method.upper()} {route.path} is served by two routes")
            item[method] = op
        if "head" in methods:
            if "get" not in methods:
                raise OpenApiError(f"Route {route.path} serves HEAD without GET")
            item["head"] = _head_of(op, f"{operation_id}Head")
    unused = set(OPERATIONS) - used
    if unused:
        raise OpenApiError(f"OPERATIONS describes operations no route serves: {sorted(unused)}")
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "Sluice: Kafka Connect REST API",
            "version": __version__,
            "description": _DESCRIPTION,
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "tags": copy.deepcopy(_TAGS),
        "paths": paths,
        "components": {"schemas": copy.deepcopy(SCHEMAS)},
    }
