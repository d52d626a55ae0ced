"""JVM artifacts the worker needs at run time: Spark's Kafka connector jars fetched from
Maven Central and cached, the source-timestamp producer interceptor compiled once.

Jars are resolved with Apache Ivy (the ``ivy-*.jar`` PySpark bundles, so only Java is
needed) into ``$SLUICE_CACHE`` (default ``~/.cache/sluice``) on first use, and read from
there afterwards.

Modules (import them directly; this package stays import-light):

- :mod:`sluice.jvm.cache`: where things are cached.
- :mod:`sluice.jvm.java`: the ``java`` to run, checked to be recent enough.
- :mod:`sluice.jvm.jars`: jar sets resolved with Ivy; ``spark_kafka_jars()``.
- :mod:`sluice.jvm.java_build`: the package's Java sources compiled with ``javac``.
- :mod:`sluice.jvm.interceptor`: the source-timestamp producer interceptor's jar.

The development tooling of a source checkout (``devtools/``: local Kafka broker, Schema
Registry, databases, Spark cluster) builds on these modules; nothing here starts a service.
"""

from __future__ import annotations

__all__ = ["JvmArtifactError"]


class JvmArtifactError(RuntimeError):
    """A JVM artifact could not be provided: no suitable Java, a download failed, javac failed.

    The message says what went wrong and what to do about it; callers print it as is.
    """
