"""Test connectors shipped for users' own testing, as Kafka ships them in
``connect-runtime`` (``org.apache.kafka.connect.tools``): verifiable source and sink
connectors that report what they sent, committed, received and flushed, and mock
connectors that fail on demand. See ``docs/testing-connectors.md``.

As in Kafka, they can be used by class name (Kafka's or the Python path) or alias
(``VerifiableSource``, ``MockSink``, ...) but are left out of ``GET /connector-plugins``.
"""

from sluice.connectors.testing.mock import (
    MockConnector,
    MockSinkConnector,
    MockSinkTask,
    MockSourceConnector,
    MockSourceTask,
)
from sluice.connectors.testing.report import read_report
from sluice.connectors.testing.verifiable_sink import VerifiableSinkConnector, VerifiableSinkTask
from sluice.connectors.testing.verifiable_source import VerifiableSourceConnector, VerifiableSourceTask

__all__ = [
    "MockConnector",
    "MockSinkConnector",
    "MockSinkTask",
    "MockSourceConnector",
    "MockSourceTask",
    "VerifiableSinkConnector",
    "VerifiableSinkTask",
    "VerifiableSourceConnector",
    "VerifiableSourceTask",
    "read_report",
]
