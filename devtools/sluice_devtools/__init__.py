"""Sluice's development tooling: local services for tests, the quickstart and benchmarks.

Not part of the shipped ``sluice`` package: this is the ``sluice-devtools`` distribution of
a source checkout (``devtools/`` beside ``src/``), installed editable by ``./dev setup``.
It builds on :mod:`sluice.jvm` (Java, the cache, Ivy) to fetch Apache Kafka from Maven
Central and run a real single-node KRaft broker, a Schema Registry, PostgreSQL/MariaDB
servers, S3 and HDFS servers, OpenSearch and Elasticsearch, a Spark standalone cluster, and
Apache Kafka Connect as a reference. ``sluice`` never imports it; it adds ``sluice dev`` and
``sluice quickstart`` to the ``sluice`` command through the ``sluice.cli_commands`` entry
points.

Modules (import them directly; this package stays import-light):

- :mod:`sluice_devtools.jars`: ``kafka_broker_classpath()``, ``kafka_connect_classpath()``,
  ``maven_archive()``, ``fetch_all()``, ``fetch_archives()``.
- :mod:`sluice_devtools.kafka`: ``KafkaBroker``.
- :mod:`sluice_devtools.registry`, :mod:`sluice_devtools.databases`,
  :mod:`sluice_devtools.storage_servers`, :mod:`sluice_devtools.search_servers`,
  :mod:`sluice_devtools.spark_cluster`: the other local services.
- :mod:`sluice_devtools.kafka_reference`: Kafka Connect's converters and transformations in
  a JVM, for parity tests.
- :mod:`sluice_devtools.cli`: ``sluice dev ...`` (``dev_main``; also ``python -m
  sluice_devtools.cli``); :mod:`sluice_devtools.quickstart`: ``sluice quickstart``.
"""

from __future__ import annotations

__all__ = ["DevToolsError"]


class DevToolsError(RuntimeError):
    """A local-service tool failed: a broker did not start, a port is taken, a package is missing.

    The message says what went wrong and what to do about it; callers print it as is.
    (Java, download and javac failures are :class:`sluice.jvm.JvmArtifactError`.)
    """
