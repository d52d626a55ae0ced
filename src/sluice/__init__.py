"""Sluice: Kafka Connect rebuilt in Python, with its data plane on Apache Spark."""

__version__ = "0.1.0"
