"""One route of the REST API, as the route modules list them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from starlette.responses import Response

__all__ = ["Endpoint"]


@dataclass(frozen=True)
class Endpoint:
    """``method`` and ``path`` served by ``handler``, under the ``operation_id`` that
    :mod:`sluice.rest.openapi` describes. A GET endpoint also serves HEAD, as JAX-RS does
    for every GET resource."""

    method: str
    path: str
    operation_id: str
    handler: Callable[..., Response]

    @property
    def methods(self) -> list[str]:
        return ["GET", "HEAD"] if self.method == "GET" else [self.method]
