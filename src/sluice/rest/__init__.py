"""rest: the Kafka Connect REST API over a :class:`~sluice.runtime.herder.base.Herder`.

Thin by design: parse the request, call the herder, serialise the result.
"""

from sluice.rest.app import create_app
from sluice.rest.server import RestServer

__all__ = ["RestServer", "create_app"]
