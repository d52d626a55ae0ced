"""Confluent's Replicator (``io.confluent.connect.replicator.ReplicatorSourceConnector``),
written for Sluice: copies topics from another Kafka cluster byte for byte, with the keys
of Confluent's configuration reference."""

from sluice.connectors.replicator.connector import ReplicatorSourceConnector
from sluice.connectors.replicator.task import ReplicatorSourceTask

__all__ = ["ReplicatorSourceConnector", "ReplicatorSourceTask"]
