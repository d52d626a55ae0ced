"""Builds the worker's SparkSession: Spark runs inside the worker process (the driver).

Spark's JVM logs through :mod:`logging`: the session starts the JVM itself, with Sluice's
log4j2 configuration (``log4j2.properties`` next to this module: one line per event,
``LEVEL logger: message``) and its standard error read by a thread that logs every line
again under the Java logger's name. So the JVM's lines land in the worker's log, in the
worker's format, and the worker's log level applies to them.

PySpark internals this module relies on (PySpark 4.0), and nothing else in Sluice does:
``SparkContext._gateway`` and ``SparkContext._ensure_initialized`` (to start the JVM with
its standard error captured), the sessions' ``_jvm`` py4j view (:func:`jvm_view`) and
``SparkContext._jsc`` (:func:`java_spark_context`); Spark's ``Utils.setLogLevel``
(:func:`_end_shell_log_filter`); the local scheduler backend's ``localEndpoint`` field and
its ``StopExecutor`` message (:func:`_stop_local_executor`); and py4j's ``INPUT_CONVERTER``
list with PySpark's NumPy converters in it (:func:`_without_numpy_converters`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import sys
import threading
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import IO, Any

from pyspark.sql import SparkSession
from pyspark.sql.types import NumpyArrayConverter, NumpyScalarConverter

__all__ = [
    "CLASS_DATA_SHARING_CONF",
    "TIMESTAMP_INTERCEPTOR_CONF",
    "JavaCallError",
    "build_spark_session",
    "java_call",
    "java_spark_context",
    "jvm_view",
    "set_jvm_log_level",
    "spark_version",
    "stop_spark_session",
]

log = logging.getLogger(__name__)

# Set when the producer interceptor that writes source records' timestamps is on the
# classpath (its class name): Spark's Kafka sink has no timestamp column of its own.
TIMESTAMP_INTERCEPTOR_CONF = "spark.sluice.source.timestamp.interceptor"
# false: Spark's JVM starts without Sluice's class-data archive (sluice.jvm.class_data).
CLASS_DATA_SHARING_CONF = "spark.sluice.driver.classDataSharing"

DEFAULTS = {
    # Each task host holds one Spark task slot for its life (a shared one runs many Connect
    # tasks, a dedicated one a single task), and split reads take more while they run, so
    # local mode gets more slots (threads) than cores; set spark.master to override.
    "spark.master": f"local[{max(32, 4 * (os.cpu_count() or 1))}]",
    "spark.app.name": "sluice",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.scheduler.mode": "FAIR",
    "spark.sql.shuffle.partitions": "4",
    # Tasks are I/O bound and short: keep Python workers alive between batches so the
    # task instance they hold can be reused.
    "spark.python.worker.reuse": "true",
    # Task hosts fork from a daemon that has their code loaded (sluice.spark.daemon).
    "spark.python.daemon.module": "sluice.spark.daemon",
    # Spark's cleaner waits for each broadcast's removal by default; a worker stopping while
    # it waits has the wait interrupted and Spark logs "ERROR Error cleaning broadcast"
    # (seen about once in nine `./dev quickstart --exit` runs). Nothing here needs the wait.
    "spark.cleaner.referenceTracking.blocking": "false",
}


LOG4J2_CONFIG_OPTION = "-Dlog4j2.configurationFile="
LOG4J2_SINGLE_CONTEXT_OPTION = "-Dlog4j2.contextSelector=org.apache.logging.log4j.core.selector.BasicContextSelector"
SERIAL_COLLECTOR_OPTION = "-XX:+UseSerialGC"
# -XX:+UseG1GC, -XX:+UseParallelGC, -XX:+UseZGC, -XX:+UseShenandoahGC, -XX:+UseEpsilonGC…
_CHOOSES_COLLECTOR = re.compile(r"-XX:[+-]Use\w+GC\b")
#: Spark's own loggers, which ``sluice.spark.log.level`` sets (log4j2.properties: WARN).
SPARK_LOGGERS = ("org.apache.spark", "org.sparkproject")

# A log4j event as log4j2.properties writes it: newlines inside it encoded as \\n.
_JVM_EVENT = re.compile(r"(TRACE|DEBUG|INFO|WARN|ERROR|FATAL) (\S+): (.*)")
_JVM_LEVELS = {
    "TRACE": logging.DEBUG,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
}
# The JVM's own start-up notices about the JDK features Spark's launcher always enables
# (e.g. "WARNING: Using incubator modules: jdk.incubator.vector"): not about the worker.
# And Spark's notice of the level its shells log at, which Sluice sets itself
# (:func:`_end_shell_log_filter`).
_JVM_NOTICES = ("WARNING: ", 'Setting default log level to "', "To adjust logging level use sc.setLogLevel(")
_jvm_output_log = logging.getLogger("sluice.spark.jvm")


def _runs_on_this_machine(master: str) -> bool:
    """Local mode, or a standalone master whose every address is the loopback."""
    if master.startswith("local"):
        return True
    if not master.startswith("spark://"):
        return False  # yarn, k8s://…: executors run elsewhere
    hosts = [address.rpartition(":")[0] or address for address in master[len("spark://") :].split(",")]
    return all(host in {"127.0.0.1", "localhost", "[::1]"} for host in hosts)


def _without_numpy_converters() -> None:
    """Take PySpark's NumPy converters out of the gateway's argument conversion.

    py4j asks each registered converter about every argument of a call to the JVM, and
    PySpark's NumPy converters find out whether NumPy is installed by importing
    ``pyspark.testing.utils``, which imports pandas: half a second of CPU and tens of
    megabytes in every worker, at its first call with an argument. Sluice passes no NumPy
    values to the JVM."""
    from py4j import protocol

    numpy_converters = (NumpyArrayConverter, NumpyScalarConverter)
    protocol.INPUT_CONVERTER[:] = [c for c in protocol.INPUT_CONVERTER if not isinstance(c, numpy_converters)]


_without_numpy_converters()


def spark_version() -> str:
    import pyspark

    return pyspark.__version__


def _log4j2_config() -> str:
    return str(resources.files("sluice.spark") / "log4j2.properties")


def _with_log4j2_config(java_options: str) -> str:
    """The driver's JVM options with Sluice's log4j2 configuration, unless they name one,
    and with one logging context for the whole JVM, unless they choose how contexts are."""
    if "log4j2.contextSelector" not in java_options:
        # log4j2 gives each class loader outside the application's its own context, and Kafka
        # Connect's runtime has a loader of its own in the JVM (sluice.jvm.boot): one context
        # makes a level set for a Java plugin's logger (/admin/loggers) the level it logs at.
        java_options = f"{LOG4J2_SINGLE_CONTEXT_OPTION} {java_options}".strip()
    if "log4j2.configurationFile" in java_options or "log4j.configurationFile" in java_options:
        return java_options
    option = LOG4J2_CONFIG_OPTION + _log4j2_config()
    if any(c.isspace() or c in "\"'\\" for c in option):
        option = '"' + option.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{option} {java_options}".strip()


def _with_serial_collector(java_options: str) -> str:
    """The driver's JVM options with the serial garbage collector, unless they choose one.

    The JVM picks G1 on a machine of two or more cores; G1 grows its heap towards the
    maximum to keep its own CPU share low, so a driver hosting Java tasks (Debezium, Kafka's
    file connectors) at full speed held a 1g heap in full and spent more CPU per record in
    G1's barriers and concurrent work than the serial collector, whose heap grows only with
    the data that stays live (docs/benchmarks.md). A driver whose Java tasks keep large live
    data on many cores may do better with ``-XX:+UseParallelGC`` or ``-XX:+UseG1GC`` in
    ``spark.driver.extraJavaOptions``."""
    if _CHOOSES_COLLECTOR.search(java_options):
        return java_options
    return f"{SERIAL_COLLECTOR_OPTION} {java_options}".strip()


def _driver_java_options(settings: Mapping[str, str]) -> str:
    """The driver's JVM options: the user's, with Sluice's logging, collector and class-data
    archive where the user's options do not set their own."""
    own = _with_serial_collector(_with_log4j2_config(settings.get("spark.driver.extraJavaOptions", "")))
    return _with_class_data_sharing({**settings, "spark.driver.extraJavaOptions": own})


def _with_class_data_sharing(settings: Mapping[str, str]) -> str:
    """The driver's JVM options with Sluice's class-data archive (:mod:`sluice.jvm.class_data`),
    unless ``spark.sluice.driver.classDataSharing`` is false or the options manage one."""
    from sluice.jvm.class_data import ARCHIVE_OPTIONS, class_data_options

    options = settings.get("spark.driver.extraJavaOptions", "")
    if settings.get(CLASS_DATA_SHARING_CONF, "true").strip().lower() == "false" or any(
        option in options for option in ARCHIVE_OPTIONS
    ):
        return options
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java") or "java"
    import pyspark

    key = [
        os.path.realpath(java),
        os.path.dirname(pyspark.__file__),
        pyspark.__version__,
        settings.get("spark.jars", ""),
        settings.get("spark.driver.extraClassPath", ""),
    ]
    return f"{class_data_options(key)} {options}".strip()


def jvm_view(spark: SparkSession) -> Any:
    """The session's py4j view of the JVM (PySpark's ``spark._jvm``: not public API, and
    the only way to reach JVM classes Spark has no Python wrapper for)."""
    return spark._jvm


class JavaCallError(Exception):
    """A call through PySpark's gateway raised in the JVM; the message is the Java stack
    trace (with its causes), as Java prints it."""


def java_call(spark: SparkSession, method: Any, *args: Any) -> Any:
    """``method(*args)``, a call through the gateway; a Java exception becomes
    :class:`JavaCallError` with its whole Java stack trace. (PySpark turns some Java
    exceptions into its own, whose message has no trace: the trace is read from the Java
    exception it keeps.)"""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors.exceptions.captured import CapturedException

    try:
        return method(*args)
    except CapturedException as exc:
        origin = getattr(exc, "_origin", None)  # the Java throwable
        if origin is None:
            raise JavaCallError(str(exc)) from None
        raise JavaCallError(_exception_string(spark, origin)) from None
    except Py4JJavaError as exc:
        raise JavaCallError(_exception_string(spark, exc.java_exception)) from None


def _exception_string(spark: SparkSession, java_exception: Any) -> str:
    utils = getattr(jvm_view(spark), "org.apache.spark.util.Utils")
    return str(utils.exceptionString(java_exception)).strip()


def java_spark_context(spark: SparkSession) -> Any:
    """The session's ``JavaSparkContext`` (PySpark's ``SparkContext._jsc``), to submit jobs
    whose functions are Java."""
    return spark.sparkContext._jsc


def _log_jvm_line(line: str) -> None:
    event = _JVM_EVENT.fullmatch(line)
    if event is not None:
        level, name, message = event.groups()
        message = message.replace("\\r", "").replace("\\n", "\n").rstrip("\n")
        logging.getLogger(name).log(_JVM_LEVELS[level], "%s", message)
    elif line.startswith(_JVM_NOTICES):
        _jvm_output_log.debug("%s", line)
    elif line.strip():
        # Not a log4j event: Spark's Python workers (their output goes to the JVM's
        # standard error) or the JVM itself.
        _jvm_output_log.info("%s", line)


def _forward_jvm_output(stream: IO[bytes]) -> None:
    """Log each line the JVM writes to its standard error, until it exits."""
    with stream:
        for raw in stream:
            with contextlib.suppress(Exception):  # never stop reading: the JVM would block on a full pipe
                _log_jvm_line(raw.decode("utf-8", "replace").rstrip("\r\n"))


def _launch_jvm(settings: Mapping[str, str]) -> None:
    """Start Spark's JVM (pyspark's py4j gateway, through spark-submit as pyspark does)
    with its standard error read into :mod:`logging`, unless it is already running."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return
    conf = SparkConf(loadDefaults=False)  # no JVM yet: the settings become spark-submit's --conf
    conf.setAll(list(settings.items()))
    read_fd, write_fd = os.pipe()
    # Read from the start: what a JVM that fails to start says is logged too, and a full
    # pipe never blocks it.
    threading.Thread(
        target=_forward_jvm_output, args=(os.fdopen(read_fd, "rb"),), name="sluice-spark-jvm-output", daemon=True
    ).start()
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stderr": write_fd})
    finally:
        os.close(write_fd)  # the JVM (and its children) hold their own copies
    SparkContext._ensure_initialized(gateway=gateway)


def build_spark_session(
    conf: Mapping[str, str], jars: Sequence[str], extra_python_paths: Sequence[str] = ()
) -> SparkSession:
    """Start (or return) the process's SparkSession with ``spark.*`` settings from the
    worker config and the Kafka connector jars. Executors run the same Python."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if extra_python_paths:
        current = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        os.environ["PYTHONPATH"] = os.pathsep.join([*current, *[p for p in extra_python_paths if p not in current]])
    settings = dict(DEFAULTS)
    settings.update(conf)
    if settings.get("spark.pyspark.python"):
        # Spark's property for the executors' Python; an embedded driver (this process
        # starts the JVM itself, not spark-submit) reads only the environment variable.
        os.environ["PYSPARK_PYTHON"] = settings["spark.pyspark.python"]
    if _runs_on_this_machine(settings["spark.master"]):
        # Executors (local mode: threads of this JVM; a cluster on 127.0.0.1: processes
        # of this machine) reach the driver on the loopback address. For a remote cluster
        # Spark's default (this host's name) applies, or set spark.driver.host.
        settings.setdefault("spark.driver.host", "127.0.0.1")
        settings.setdefault("spark.driver.bindAddress", "127.0.0.1")
        # Spark looks up this host's address when it starts, and warns when the host name
        # resolves to the loopback (as it often does on a laptop) unless SPARK_LOCAL_IP
        # says which address to use: the driver's own, here.
        os.environ.setdefault("SPARK_LOCAL_IP", settings["spark.driver.bindAddress"])
    user_jars = [j for j in settings.get("spark.jars", "").split(",") if j]
    settings["spark.jars"] = ",".join([*jars, *user_jars])
    settings["spark.driver.extraJavaOptions"] = _driver_java_options(settings)
    _launch_jvm(settings)
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    _end_shell_log_filter(spark)
    spark_level = settings.get("sluice.spark.log.level")
    if spark_level:
        for namespace in SPARK_LOGGERS:
            set_jvm_log_level(spark, namespace, spark_level)
    return spark


def _end_shell_log_filter(spark: SparkSession) -> None:
    """Spark started from Python logs as its shells do: a filter drops what loggers without a
    level of their own log below WARN. Only Spark's setting of the root level ends that
    (``SparkContext.setLogLevel`` skips it when the level is already the root's): it is set
    here to the configuration's own root level."""
    jvm = jvm_view(spark)
    root_level = jvm.org.apache.logging.log4j.LogManager.getRootLogger().getLevel()
    getattr(jvm, "org.apache.spark.util.Utils").setLogLevel(root_level)


def set_jvm_log_level(spark: SparkSession, namespace: str, level: str) -> None:
    """Set the level of the JVM's loggers named ``namespace`` or below it, as Kafka Connect's
    ``/admin/loggers`` does; ``level`` is a log4j name. ``root`` sets the root logger, which
    every logger without a level of its own follows (Java plugins'); the loggers
    log4j2.properties names (Spark's, Kafka's clients') keep theirs."""
    jvm = jvm_view(spark)
    configurator = jvm.org.apache.logging.log4j.core.config.Configurator
    java_level = jvm.org.apache.logging.log4j.Level.toLevel(level.upper())
    if namespace.lower() == "root":
        configurator.setRootLevel(java_level)
    else:
        configurator.setAllLevels(namespace, java_level)


def stop_spark_session(spark: Any) -> None:
    """Stop the worker's SparkSession, closing first the Kafka producers Spark keeps for
    its tasks (a JVM-wide cache that outlives the session: left open, they keep talking
    to the brokers until the process exits, and complain once the brokers are gone), and
    then, in local mode, the executor (:func:`_stop_local_executor`)."""
    try:
        kafka_producers = spark.sparkContext._jvm.org.apache.spark.sql.kafka010.producer
        _scala_object(kafka_producers, "InternalKafkaProducerPool").reset()
    except Exception as exc:  # noqa: BLE001 - Spark's Kafka connector not loaded: nothing to close
        log.debug("Could not close Spark's cached Kafka producers: %s", exc)
    _stop_local_executor(spark)
    spark.stop()


LOCAL_SCHEDULER_BACKEND = "org.apache.spark.scheduler.local.LocalSchedulerBackend"


def _stop_local_executor(spark: Any) -> bool:
    """In local mode, stop the executor (and its heartbeats) and wait until it has stopped;
    True when it did. ``SparkContext.stop`` only asks the local executor to stop, without
    waiting, and then removes the driver's heartbeat receiver: a heartbeat sent in between
    fails, and the executor logs a warning with a stack trace while the worker stops.
    Stopped here first, the executor sends no heartbeat after it (Spark's own later request
    finds it stopped). Reaches Spark internals (the backend's private endpoint, its
    ``StopExecutor`` message), so anything unexpected leaves the stop to Spark alone."""
    try:
        backend = spark.sparkContext._jsc.sc().schedulerBackend()
        if backend.getClass().getName() != LOCAL_SCHEDULER_BACKEND:
            return False  # a cluster's executors are stopped, and waited for, by Spark
        jvm = spark.sparkContext._jvm
        field = backend.getClass().getDeclaredField("localEndpoint")
        field.setAccessible(True)
        endpoint = field.get(backend)
        any_reply = _scala_object(jvm.scala.reflect, "ClassTag").Any()
        endpoint.askSync(_scala_object(jvm.org.apache.spark.scheduler.local, "StopExecutor"), any_reply)
    except Exception as exc:  # noqa: BLE001 - another Spark's internals: SparkContext.stop stops it
        log.debug("Could not stop the local executor ahead of Spark: %s", exc)
        return False
    return True


def _scala_object(package: Any, name: str) -> Any:
    """The Scala ``object`` ``name`` of a py4j package view (its ``name$.MODULE$``)."""
    return getattr(getattr(package, f"{name}$"), "MODULE$")
