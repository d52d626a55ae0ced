"""Kafka Connect's own runtime for Java plugins: its jars, the JVM task host built against
them, and the bootstrap that loads both in a class loader of their own inside Spark's JVM.

Java plugins — connector jars on ``plugin.path`` — run with Apache Kafka Connect's runtime
(``connect-runtime`` and its dependencies, from Maven Central): Kafka's plugin isolation
finds and loads them, and Kafka's worker classes run their tasks. Spark's JVM has its own,
older ``kafka-clients`` and Jackson, so the runtime lives apart, in a class loader whose
parent is the JVM's platform loader (``IsolatedRuntime.java``); only logging is shared with
Spark. Two jars of Sluice's own Java, compiled here once with ``javac`` into the cache:

* the *boot* jar (``boot/*.java``, against PySpark's jars): on ``spark.jars``, so that the
  driver and the executors can make the isolated loader and start a task host in it;
* the *host* jar (``host/*.java``, against the runtime): the JVM task host and the driver's
  registry of Java plugins, loaded in the isolated loader with the runtime.

:func:`runs_java_plugins` tells whether ``plugin.path`` (or ``CLASSPATH``) holds any Java
plugin at all: a worker without one never starts any of this.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from sluice.jvm.jars import Module, jar_set, pyspark_jars_dir
from sluice.jvm.java_build import compiled_sources_jar

__all__ = [
    "CONNECT_MODULES",
    "CONNECT_VERSION",
    "EXTRA_CLASSPATH_SETTING",
    "LOG4J_VERSION",
    "boot_jar",
    "connect_runtime_jars",
    "extra_classpath",
    "host_classpath",
    "java_plugin_locations",
    "runs_java_plugins",
]

#: The Kafka Connect release whose runtime runs Java plugins.
CONNECT_VERSION = "4.3.1"
LOG4J_VERSION = "2.25.4"

#: Kafka Connect's runtime (with its JsonConverter and transforms) and a log4j2 backend (the
#: benchmarks' reference worker uses the backend; the task host shares Spark's logging).
CONNECT_MODULES: tuple[Module, ...] = (
    ("org.apache.kafka", "connect-runtime", CONNECT_VERSION),
    ("org.apache.kafka", "connect-json", CONNECT_VERSION),
    ("org.apache.logging.log4j", "log4j-core", LOG4J_VERSION),
    ("org.apache.logging.log4j", "log4j-slf4j-impl", LOG4J_VERSION),
)

# Jars of the runtime's set that the isolated loader leaves out: logging comes from Spark's.
_SHARED_WITH_SPARK = ("slf4j-api-", "log4j-")

#: The runtime setting (``TaskRuntime.java``) that lists :func:`extra_classpath`'s jars.
EXTRA_CLASSPATH_SETTING = "sluice.runtime.classpath.extra"

BOOT_MARKER = "sluice/jvmhost/boot/IsolatedRuntime.class"
HOST_MARKER = "sluice/jvmhost/TaskHost.class"


def connect_runtime_jars() -> list[Path]:
    """The jars of Kafka Connect's runtime, fetched from Maven Central on first use."""
    return jar_set(f"kafka-connect-{CONNECT_VERSION}", CONNECT_MODULES)


def host_classpath() -> list[Path]:
    """What the isolated loader loads: the runtime's jars but logging's, the host jar, and
    the jars of the worker's ``CLASSPATH`` (:func:`extra_classpath`)."""
    jars = connect_runtime_jars()
    runtime = [jar for jar in jars if not jar.name.startswith(_SHARED_WITH_SPARK)]
    host = compiled_sources_jar("host", jars, "jvm-host", HOST_MARKER)
    return [*runtime, host, *extra_classpath()]


def extra_classpath(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The jars the ``CLASSPATH`` environment variable names (``dir/*``: every jar in
    ``dir``), as Kafka's start scripts add them to Connect's class path: plugins that Kafka
    loads only from its own class path — its test connectors in ``org.apache.kafka.connect.tools``
    — are put there."""
    value = (os.environ if environ is None else environ).get("CLASSPATH", "")
    found: list[Path] = []
    for entry in value.split(os.pathsep):
        if not entry:
            continue
        if entry.endswith("*"):
            found.extend(sorted(Path(entry[:-1] or ".").glob("*.jar")))
        elif Path(entry).exists():
            found.append(Path(entry))
    return found


def boot_jar() -> Path:
    """The bootstrap classes, for ``spark.jars``."""
    spark_jars = sorted(pyspark_jars_dir().glob("*.jar"))
    return compiled_sources_jar("boot", spark_jars, "jvm-boot", BOOT_MARKER)


def classpath_string(jars: Sequence[Path]) -> str:
    return os.pathsep.join(str(jar) for jar in jars)


def java_plugin_locations(plugin_path: Iterable[str]) -> list[Path]:
    """The entries of ``plugin.path`` directories that Kafka Connect would load Java plugins
    from: a jar, or a directory holding jars or class files (a plugin's own directory).
    Python plugins (modules and packages) are not among them."""
    found = []
    for directory in plugin_path:
        root = Path(directory)
        if root.is_file() and root.suffix in (".jar", ".zip"):
            found.append(root)
            continue
        if not root.is_dir():
            continue
        for entry in sorted(root.iterdir()):
            if entry.is_file() and entry.suffix in (".jar", ".zip") or entry.is_dir() and _holds_java(entry):
                found.append(entry)
    return found


def runs_java_plugins(plugin_path: Iterable[str], environ: Mapping[str, str] | None = None) -> bool:
    """Whether a worker needs Kafka Connect's runtime: Java plugins on ``plugin.path``, or
    jars on ``CLASSPATH`` (where Kafka's own test connectors load from)."""
    return bool(java_plugin_locations(plugin_path) or extra_classpath(environ))


def _holds_java(directory: Path) -> bool:
    return any(name.endswith((".jar", ".class")) for _root, _dirs, files in os.walk(directory) for name in files)
