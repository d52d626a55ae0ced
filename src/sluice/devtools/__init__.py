"""The project's own tooling for local services: JVM jars, a Kafka broker, the dev CLI.

Nothing here is part of the runtime. It fetches Apache Kafka and Spark's Kafka connector
from Maven Central (through Apache Ivy, which PySpark bundles, so only Java is needed),
caches them under ``$SLUICE_CACHE`` (default ``~/.cache/sluice``), and runs a real
single-node KRaft broker for tests, the quickstart and benchmarks.

Modules (import them directly; this package stays import-light):

- :mod:`sluice.devtools.cache`: where things are cached.
- :mod:`sluice.devtools.jars`: ``kafka_broker_classpath()``, ``spark_kafka_jars()``.
- :mod:`sluice.devtools.kafka`: ``KafkaBroker``.
- :mod:`sluice.devtools.cli`: ``sluice dev ...`` (``dev_main``).
"""

from __future__ import annotations

__all__ = ["DevToolsError"]


class DevToolsError(RuntimeError):
    """A local-service tool failed: Java missing, a download failed, a broker did not start.

    The message says what went wrong and what to do about it; callers print it as is.
    """
