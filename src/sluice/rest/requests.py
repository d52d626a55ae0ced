"""What the route modules share: reading a request as Kafka Connect's JAX-RS resources
read it (JSON body, boolean query parameters, task ids), and answering JSON.

Request bodies are read by the :data:`JsonBody` dependency rather than by FastAPI/pydantic
models, so that every malformed request gets Kafka's error body (see
:mod:`sluice.rest.errors` for the mapping and the list of deliberate deviations).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import Depends, Request

from sluice.rest.entities import loads_json
from sluice.rest.errors import jaxrs_message
from sluice.rest.responses import JsonResponse
from sluice.runtime.herder.base import BadRequestError, ConnectRestError

__all__ = [
    "MISSING",
    "JsonBody",
    "RawBody",
    "java_bool",
    "json_response",
    "require_body",
    "task_id",
]

MISSING: Any = object()  # no request body


def _is_json_media_type(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


# No Connect entity nests more than a few levels; deeper bodies are refused before any
# recursive code (ours or the herder's) walks them. Jackson's own limit is 1000 (500 in Kafka).
_MAX_NESTING_DEPTH = 100
_TOO_DEEP_MESSAGE = f"Request body is not valid JSON: nested more than {_MAX_NESTING_DEPTH} levels deep"
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


async def _raw_body(request: Request) -> bytes:
    """The request's bytes, kept for forwarding it to another worker and for checking its
    signature."""
    body = await request.body()
    request.state.raw_body = body
    return body


async def _json_body(request: Request) -> Any:
    """The decoded JSON body, or :data:`MISSING` when the request has none."""
    body = await _raw_body(request)
    if not body.strip():
        return MISSING
    content_type = request.headers.get("content-type")
    if content_type is not None and not _is_json_media_type(content_type):
        raise ConnectRestError(
            415,
            f"{jaxrs_message(415)}: Content-Type {content_type} is not supported; send application/json",
        )
    try:
        value = loads_json(body)
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


# The request's bytes as they came, for an endpoint that signs rather than reads them.
RawBody = Annotated[bytes, Depends(_raw_body)]

# The request's JSON body (or MISSING) as a handler parameter. The OpenAPI test recognises
# the handlers that read a body by this dependency's name, ``_json_body``.
JsonBody = Annotated[Any, Depends(_json_body)]


def require_body(body: Any) -> Any:
    """``body``, or a 400 when the request had none."""
    if body is MISSING:
        raise BadRequestError("Request body is missing: expected a JSON object")
    return body


def java_bool(request: Request, name: str, default: bool) -> bool:
    """A boolean query parameter as JAX-RS reads it: the first value, ``Boolean.valueOf``
    (only ``true``, case-insensitive, is true); absent or blank → ``default``."""
    values = request.query_params.getlist(name)
    if not values or not values[0].strip():
        return default
    return values[0].lower() == "true"


_INT_RE = re.compile(r"[+-]?[0-9]+")


def task_id(task: str) -> int:
    """A ``{task}`` path segment as JAX-RS converts it to ``Integer``; anything else is 404."""
    if _INT_RE.fullmatch(task):
        value = int(task)
        if -(2**31) <= value < 2**31:
            return value
    raise ConnectRestError(404, jaxrs_message(404))


def json_response(content: Any, status_code: int = 200, headers: dict[str, str] | None = None) -> JsonResponse:
    """``content`` as a JSON answer."""
    return JsonResponse(content, status_code=status_code, headers=headers)
