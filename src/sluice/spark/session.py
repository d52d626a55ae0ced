"""Builds the worker's SparkSession: Spark runs inside the worker process (the driver)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from pyspark.sql import SparkSession

__all__ = ["TIMESTAMP_INTERCEPTOR_CONF", "build_spark_session", "spark_version"]

# Set when the producer interceptor that writes source records' timestamps is on the
# classpath (its class name): Spark's Kafka sink has no timestamp column of its own.
TIMESTAMP_INTERCEPTOR_CONF = "spark.sluice.source.timestamp.interceptor"

DEFAULTS = {
    # Connect tasks mostly wait on I/O (an idle source long-polls inside its Spark task),
    # so local mode gets more task slots than cores; set spark.master to override.
    "spark.master": f"local[{max(4, 2 * (os.cpu_count() or 1))}]",
    "spark.app.name": "sluice",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.scheduler.mode": "FAIR",
    "spark.sql.shuffle.partitions": "4",
    # Tasks are I/O bound and short: keep Python workers alive between batches so the
    # task instance they hold can be reused.
    "spark.python.worker.reuse": "true",
}


def _runs_on_this_machine(master: str) -> bool:
    """Local mode, or a standalone master whose every address is the loopback."""
    if master.startswith("local"):
        return True
    if not master.startswith("spark://"):
        return False  # yarn, k8s://…: executors run elsewhere
    hosts = [address.rpartition(":")[0] or address for address in master[len("spark://"):].split(",")]
    return all(host in {"127.0.0.1", "localhost", "[::1]"} for host in hosts)


def spark_version() -> str:
    import pyspark

    return pyspark.__version__


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
    user_jars = [j for j in settings.get("spark.jars", "").split(",") if j]
    settings["spark.jars"] = ",".join([*jars, *user_jars])
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(settings.get("sluice.spark.log.level", "WARN"))
    return spark
