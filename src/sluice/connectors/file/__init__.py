"""FileStream connectors (``org.apache.kafka.connect.file``): a line-per-record file
source and sink, mainly for demos and tests."""

from sluice.connectors.file.sink import FileStreamSinkConnector, FileStreamSinkTask
from sluice.connectors.file.source import FileStreamSourceConnector, FileStreamSourceTask

__all__ = ["FileStreamSinkConnector", "FileStreamSinkTask", "FileStreamSourceConnector", "FileStreamSourceTask"]
