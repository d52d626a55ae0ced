"""The storage sinks (Confluent's ``kafka-connect-storage-cloud`` and ``kafka-connect-hdfs``):
``S3SinkConnector`` and ``HdfsSinkConnector`` write records into files — Avro, Parquet,
JSON, text or raw bytes — partitioned into directories by Kafka partition, by field or by
time, committed exactly once."""

from sluice.connectors.storage.hdfs import HdfsSinkConnector, HdfsSinkTask
from sluice.connectors.storage.s3 import S3SinkConnector, S3SinkTask

__all__ = ["HdfsSinkConnector", "HdfsSinkTask", "S3SinkConnector", "S3SinkTask"]
