"""``org.apache.kafka.connect.file.FileStreamSinkConnector`` and its task.

Each record value is written as its Java-style string form (``java_string``: strings
as they are, ``null``, ``{k=v, k2=v2}``, ``[a, b]``, ``Struct{f1=v1,f2=v2}``) followed by
``\\n``, to a file opened in append mode (UTF-8), or to stdout when ``file`` is unset.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

from sluice import __version__
from sluice.api.config import ConfigDef, ConfigType, Importance
from sluice.api.connector import Task
from sluice.api.data import java_string
from sluice.api.errors import ConnectError
from sluice.api.records import SinkBatch, SinkRecord, TopicPartition
from sluice.api.sink import SinkConnector, SinkTask

__all__ = ["FileStreamSinkConnector", "FileStreamSinkTask"]

log = logging.getLogger(__name__)

FILE_CONFIG = "file"

CONFIG_DEF = ConfigDef().define(
    FILE_CONFIG,
    ConfigType.STRING,
    None,
    importance=Importance.HIGH,
    documentation="Destination filename. If not specified, the standard output will be used",
)


class FileStreamSinkConnector(SinkConnector):
    """Writes record values to a file (or stdout), one line per record."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def task_class(self) -> type[Task]:
        return FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass  # no background monitoring

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def alter_offsets(self, connector_config: dict[str, str], offsets: Any) -> bool:
        # Nothing to do: this connector keeps no offsets of its own.
        return True


class FileStreamSinkTask(SinkTask):
    """Appends ``java_string(record.value)`` + ``\\n`` per record. Runs in a Spark
    executor, so ``file`` names a path on the executor's machine."""

    def __init__(self, output: TextIO | None = None) -> None:
        # ``output`` is for tests, as Kafka's FileStreamSinkTask(PrintStream) constructor.
        self._filename: str | None = None
        self._out: TextIO | None = output
        self._owns_out = False

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        self._filename = CONFIG_DEF.parse(props)[FILE_CONFIG]
        if self._out is not None and not self._owns_out:
            return  # an injected stream
        if self._filename is None:
            self._out = sys.stdout
            self._owns_out = False
        else:
            try:
                self._out = open(self._filename, "a", encoding="utf-8", newline="")  # noqa: SIM115
            except OSError as e:
                raise ConnectError(f"Couldn't find or create file '{self._filename}' for FileStreamSinkTask") from e
            self._owns_out = True

    def put(self, records: list[SinkRecord]) -> None:
        if not records or self._out is None:
            return
        self._write([r.value for r in records])

    def put_batch(self, batch: SinkBatch) -> None:
        """What :meth:`put` writes, from the batch's values: no record object is made."""
        if not len(batch) or self._out is None:
            return
        self._write(batch.values)

    def _write(self, values: list[Any]) -> None:
        assert self._out is not None
        try:
            text = "\n".join(values)  # strings, as StringConverter gives them: written as they are
        except TypeError:  # another kind among them: Java's string form of each
            text = "\n".join([java_string(v) for v in values])
        self._out.write(text + "\n")
        # Kafka's task prints to an unbuffered file stream: a record is in the file once
        # put() returns. One write of the whole batch does the same here.
        self._out.flush()

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        log.debug("Flushing output stream for %s", self._filename or "stdout")
        if self._out is not None:
            self._out.flush()

    def stop(self) -> None:
        out, self._out = self._out, None
        if out is not None and self._owns_out:
            out.close()
        elif out is not None:
            out.flush()
        self._owns_out = False
