"""The producer interceptor that writes source records' own timestamps (see
``SourceTimestampInterceptor.java``), built once against Spark's kafka-clients jar."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sluice.jvm import JvmArtifactError
from sluice.jvm.java_build import compiled_jar

__all__ = ["SOURCE_TIMESTAMP_INTERCEPTOR", "source_timestamp_interceptor_jar"]

SOURCE_TIMESTAMP_INTERCEPTOR = "sluice.kafka.SourceTimestampInterceptor"


def source_timestamp_interceptor_jar(spark_kafka_jars: Sequence[Path]) -> Path:
    """The interceptor's jar. Raises :class:`~sluice.jvm.JvmArtifactError` without a JDK's ``javac``."""
    clients = [p for p in spark_kafka_jars if Path(p).name.startswith("kafka-clients-")]
    if not clients:
        raise JvmArtifactError("no kafka-clients jar among Spark's Kafka jars")
    return compiled_jar(
        "SourceTimestampInterceptor.java", clients, "interceptor", "sluice/kafka/SourceTimestampInterceptor.class"
    )
