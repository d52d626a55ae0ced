"""The JSON response every REST answer uses."""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import JSONResponse

__all__ = ["JsonResponse"]


class JsonResponse(JSONResponse):
    """``application/json`` written as Starlette writes it (compact, UTF-8, no NaN), except
    that a lone UTF-16 surrogate in a string is written as its ``\\udXXX`` escape instead
    of failing the whole answer with a 500.

    Request bodies holding one are refused (see ``sluice.rest.requests``), but a connector
    config read from a properties file (``\\ud800`` is a valid escape there) or stored
    before that check can still hold one; answers about it must not break.
    """

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":"))
        # A surrogate can only occur inside a string literal, where backslashreplace's
        # "\udXXX" is exactly JSON's escape for that code unit.
        return text.encode("utf-8", "backslashreplace")
