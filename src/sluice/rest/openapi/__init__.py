"""The OpenAPI 3.1 description of the REST API, served at ``GET /openapi.json``.

Kafka Connect serves no such document; this endpoint is a Sluice addition.

How it is built, and why this way: every route of :func:`sluice.rest.app.create_app`
carries an ``operation_id``, and :data:`OPERATIONS` (:mod:`.operations`) describes each
one (summary, query parameters, request body, every status code with its JSON entity,
built on the entity schemas of :mod:`.schemas`). :func:`openapi_document`
(:mod:`.document`) walks the application's real routes and joins the two: the paths,
methods and path parameters come from the routes, the rest from this package.
A route without a description, or a description without a route, makes the build fail,
so the document cannot drift from the API (the unit tests build it).

FastAPI's own generator is not used because the handlers deliberately read bodies and
query parameters from the raw request (so every malformed request gets Kafka's
``{"error_code", "message"}`` body, see :mod:`sluice.rest.errors`), which leaves it
nothing to infer, and because it would document each GET+HEAD route with a duplicate
operation id. A hand-written JSON file was the other option; Python lets the many
operations share the entity schemas, error responses and parameters without
copy-and-paste, and keeps the description next to the check that it matches the routes.

The schemas describe what the server *accepts*, not only what a tidy client sends:
Kafka Connect (Jackson) coerces JSON numbers and booleans to strings in config maps,
reads ``includeTasks``/``onlyFailed``/``connectorsOnly`` with ``Boolean.valueOf`` and
treats an unknown ``scope`` or ``expand`` value as the default, and so does Sluice.
"""

from sluice.rest.openapi.document import OpenApiError, openapi_document
from sluice.rest.openapi.operations import OPERATIONS

__all__ = ["OPERATIONS", "OpenApiError", "openapi_document"]
