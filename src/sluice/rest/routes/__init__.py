"""The REST API's routes, one module per Kafka Connect resource.

Each module has one function that lists its resource's endpoints
(:class:`~sluice.rest.routes.endpoint.Endpoint`), their handlers closing over the herder
it is given; :func:`sluice.rest.app.create_app` adds them to the application from one
explicit, ordered list:

* :mod:`~sluice.rest.routes.root`: the worker itself (``/``, ``/openapi.json``,
  ``/metrics``, ``/health``), as Kafka's ``RootResource``;
* :mod:`~sluice.rest.routes.connectors`: ``/connectors/...``, with their offsets, topics
  and tasks, as ``ConnectorsResource``;
* :mod:`~sluice.rest.routes.plugins`: ``/connector-plugins/...``, as
  ``ConnectorPluginsResource``;
* :mod:`~sluice.rest.routes.admin`: ``/admin/loggers``, as ``LoggingResource``.

Handlers are plain ``def`` because herder methods block; FastAPI runs them in its thread
pool. Every route has an ``operation_id`` that :mod:`sluice.rest.openapi` describes.
"""
