"""A sink connector that appends each record to a file, as a line ``<key> <value>``.

The task writes the file where it runs: in a Spark executor, so on a Spark cluster the
file is on the executors' machines.
"""

from __future__ import annotations

import os
from typing import TextIO

from sluice.api import (
    ConfigDef,
    ConfigType,
    Importance,
    NonEmptyString,
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
)
from sluice_example_counter import __version__

FILE_CONFIG = "file"

CONFIG_DEF = ConfigDef().define(
    FILE_CONFIG,
    ConfigType.STRING,
    validator=NonEmptyString(),
    importance=Importance.HIGH,
    documentation="Absolute path of the file to append the records to.",
)


class LineFileSinkConnector(SinkConnector):
    """Runs in the worker process. The framework's ``topics`` key says what to read."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def start(self, props: dict[str, str]) -> None:
        CONFIG_DEF.parse(props)
        self._props = dict(props)

    def task_class(self) -> type[SinkTask]:
        return LineFileSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]  # one file, one writer, whatever tasks.max says

    def stop(self) -> None:
        pass


class LineFileSinkTask(SinkTask):
    """Runs in a Spark executor; every call comes from the same thread, one at a time."""

    def __init__(self) -> None:
        self._file: TextIO | None = None

    def start(self, props: dict[str, str]) -> None:
        path = CONFIG_DEF.parse(props)[FILE_CONFIG]
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in stop()

    def put(self, records: list[SinkRecord]) -> None:
        assert self._file is not None
        for record in records:
            self._file.write(f"{record.key} {record.value}\n")

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        # The default pre_commit() calls this, then the worker commits current_offsets:
        # make the lines durable first.
        assert self._file is not None
        self._file.flush()
        os.fsync(self._file.fileno())

    def stop(self) -> None:
        # Called when the task stops or fails, right after close(), but not if the
        # executor died: nothing may depend on it.
        if self._file is not None:
            self._file.close()
            self._file = None
