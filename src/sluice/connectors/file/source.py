"""``org.apache.kafka.connect.file.FileStreamSourceConnector`` and its task.

Reads a file (or stdin) line by line; each line becomes one record with a STRING value
on the configured topic. Lines end with ``\\n``, ``\\r`` or ``\\r\\n``; a ``\\r`` at the
end of the data read so far waits for the next byte (it may be the start of ``\\r\\n``).

Offsets: the source partition is ``{"filename": <file>}`` and the offset of a record is
``{"position": <bytes from the start of the file to just after the line and its
terminator>}``. Kafka counts decoded *characters* but resumes by skipping *bytes*, which
only agree for ASCII files; Sluice counts bytes, so resuming is exact for any UTF-8
file and the stored numbers are identical to Kafka's for ASCII files.
"""

from __future__ import annotations

import logging
import os
import re
import select
import stat
import sys
import threading
import time
from typing import Any, BinaryIO

from sluice import __version__
from sluice.api.config import ConfigDef, ConfigType, Importance, NonEmptyString
from sluice.api.connector import Task
from sluice.api.data import Schema
from sluice.api.errors import ConnectError
from sluice.api.records import SourceRecord
from sluice.api.source import ExactlyOnceSupport, SourceConnector, SourceTask

__all__ = ["FileStreamSourceConnector", "FileStreamSourceTask"]

log = logging.getLogger(__name__)

TOPIC_CONFIG = "topic"
FILE_CONFIG = "file"
TASK_BATCH_SIZE_CONFIG = "batch.size"
DEFAULT_TASK_BATCH_SIZE = 2000

FILENAME_FIELD = "filename"
POSITION_FIELD = "position"

CONFIG_DEF = (
    ConfigDef()
    .define(
        FILE_CONFIG,
        ConfigType.STRING,
        None,
        importance=Importance.HIGH,
        documentation="Source filename. If not specified, the standard input will be used",
    )
    .define(
        TOPIC_CONFIG,
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance=Importance.HIGH,
        documentation="The topic to publish data to",
    )
    .define(
        TASK_BATCH_SIZE_CONFIG,
        ConfigType.INT,
        DEFAULT_TASK_BATCH_SIZE,
        importance=Importance.LOW,
        documentation="The maximum number of records the source task can read from the file each time it is polled",
    )
)

_READ_SIZE = 1 << 20  # bytes read from the file at a time
_WAIT_SECONDS = 1.0  # for the file to appear
# At the end of the file, how long a poll waits before it looks again: 50 ms after lines
# came (a line's wait for delivery stays short), doubled with each empty look up to the
# 1 s Kafka's task always waits (an idle task wakes once a second, as Kafka's does: with
# hundreds of tasks in a host, 20 looks a second each would cost a core's share).
_IDLE_READ_WAIT_SECONDS = 0.05
_IDLE_READ_WAIT_MAX_SECONDS = 1.0
_TERMINATOR = re.compile(rb"\r\n|\r|\n")


def _file_of(config: dict[str, str]) -> str | None:
    return CONFIG_DEF.parse(config)[FILE_CONFIG]


class FileStreamSourceConnector(SourceConnector):
    """Streams lines of a file (or stdin) to a topic, with exactly one task."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)
        filename = CONFIG_DEF.parse(props)[FILE_CONFIG]
        log.info("Starting file source connector reading from %s", filename or "standard input")

    def task_class(self) -> type[Task]:
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        # Only one input stream makes sense.
        return [dict(self._props)]

    def stop(self) -> None:
        pass  # no background monitoring

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport | None:
        # A real file can be re-read from a stored position; stdin cannot.
        filename = _file_of(connector_config)
        return ExactlyOnceSupport.SUPPORTED if filename else ExactlyOnceSupport.UNSUPPORTED

    def alter_offsets(self, connector_config: dict[str, str], offsets: Any) -> bool:
        """Accept null offsets for anything; otherwise each offset must hold a
        non-negative integer ``position`` and each partition a ``filename``.

        ``offsets`` maps partitions to offsets; a partition may be a dict, a tuple of
        ``(key, value)`` pairs (see :func:`sluice.api.source.partition_key`) or ``None``.
        A list of ``(partition, offset)`` pairs is accepted as well."""
        filename = _file_of(connector_config)
        if not filename:
            raise ConnectError(
                f"Offsets cannot be modified if the '{FILE_CONFIG}' configuration is unspecified. "
                "This is because stdin is used for input and offsets are not tracked."
            )
        pairs = offsets.items() if hasattr(offsets, "items") else offsets
        for raw_partition, offset in pairs:
            if offset is None:
                continue  # tombstones are always allowed, to let users clean up
            if POSITION_FIELD not in offset:
                raise ConnectError(f"Offset objects should either be null or contain the key '{POSITION_FIELD}'")
            position = offset[POSITION_FIELD]
            if not isinstance(position, int) or isinstance(position, bool):
                raise ConnectError(
                    f"The value for the '{POSITION_FIELD}' key in the offset is expected to be a Long value"
                )
            if position < 0:
                raise ConnectError(
                    f"The value for the '{POSITION_FIELD}' key in the offset should be a non-negative value"
                )
            partition = _as_dict(raw_partition)
            if partition is None:
                raise ConnectError("Partition objects cannot be null")
            if FILENAME_FIELD not in partition:
                raise ConnectError(f"Partition objects should contain the key '{FILENAME_FIELD}'")
        # The task checks on start-up whether the position is valid for the file.
        return True


def _as_dict(partition: Any) -> dict[str, Any] | None:
    if partition is None:
        return None
    if isinstance(partition, dict):
        return partition
    if hasattr(partition, "items"):
        return dict(partition.items())
    return dict(partition)


class FileStreamSourceTask(SourceTask):
    """Reads lines from a file (or stdin). Runs in a Spark executor; ``stop()`` may be
    called from another thread and wakes a waiting ``poll()``."""

    def __init__(self) -> None:
        self._filename: str | None = None
        self._topic = ""
        self._batch_size = DEFAULT_TASK_BATCH_SIZE
        self._stream: BinaryIO | None = None
        self._regular_file = False  # whether _stream is a regular file (not a pipe, say)
        self._stdin_fd: int | None = None
        self._buffer = b""  # bytes read but not yet split into complete lines
        self._lines: list[str] = []  # complete lines not yet returned ...
        self._ends: list[int | None] = []  # ... and the position after each
        self._next = 0  # index into _lines of the next line to return
        self._position: int | None = None  # byte position of the start of _buffer (None: stdin)
        self._partition: dict[str, Any] | None = None
        self._stop_event = threading.Event()
        self._lock = threading.Lock()
        self._idle_wait_s = _IDLE_READ_WAIT_SECONDS  # the next wait at the end of the file

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        self._stop_event = threading.Event()
        filename = props.get(FILE_CONFIG)
        self._filename = filename if filename else None
        topic = props.get(TOPIC_CONFIG)
        if topic is None:
            raise ConnectError("FileStreamSourceTask config missing topic setting")
        self._topic = topic
        if TASK_BATCH_SIZE_CONFIG in props:
            try:
                self._batch_size = int(str(props[TASK_BATCH_SIZE_CONFIG]).strip())
            except ValueError as e:
                raise ConnectError("Invalid FileStreamSourceTask configuration") from e
        else:
            self._batch_size = DEFAULT_TASK_BATCH_SIZE
        self._buffer = b""
        self._lines, self._ends, self._next = [], [], 0
        self._idle_wait_s = _IDLE_READ_WAIT_SECONDS
        if self._filename is None:
            # Tracking offsets for stdin doesn't make sense.
            self._partition = None
            self._position = None
            self._stdin_fd = sys.stdin.fileno()
        else:
            self._partition = {FILENAME_FIELD: self._filename}
            self._position = 0

    # -- polling ----------------------------------------------------------------------

    def poll(self) -> list[SourceRecord] | None:
        if self._stop_event.is_set():
            return None
        if self._filename is not None and self._stream is None and not self._open():
            self._stop_event.wait(_WAIT_SECONDS)
            return None
        if self._next >= len(self._lines):
            try:
                got_data = self._read_lines()
            except (OSError, ValueError):
                return None  # the stream was closed by stop()
            if got_data:
                self._idle_wait_s = _IDLE_READ_WAIT_SECONDS
            if self._next >= len(self._lines):
                if not got_data:
                    self._stop_event.wait(self._idle_wait_s)
                    self._idle_wait_s = min(2 * self._idle_wait_s, _IDLE_READ_WAIT_MAX_SECONDS)
                return None
        return self._take(self._batch_size)

    def _open(self) -> bool:
        assert self._filename is not None
        try:
            stream = open(self._filename, "rb", buffering=0)  # noqa: SIM115 - closed in stop()
        except OSError:
            log.warning(
                "Couldn't find file %s for FileStreamSourceTask, sleeping to wait for it to be created", self._filename
            )
            return False
        try:
            offset = self.context.offset_storage_reader().offset({FILENAME_FIELD: self._filename})
            position = 0
            if offset is not None:
                last = offset.get(POSITION_FIELD)
                if last is not None and (not isinstance(last, int) or isinstance(last, bool)):
                    raise ConnectError("Offset position is the incorrect type")
                if last is not None:
                    log.debug("Found previous offset, trying to skip to file offset %s", last)
                    stream.seek(last)
                    position = last
        except BaseException:
            stream.close()
            raise
        with self._lock:
            self._stream = stream
            self._regular_file = stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
        self._position = position
        self._buffer = b""
        log.debug("Opened %s for reading", self._filename)
        return True

    def _read_chunk(self) -> bytes:
        stream = self._stream
        if stream is not None:
            size = _READ_SIZE
            if self._regular_file:
                # Its size says whether anything was appended: an idle task does not allocate
                # a whole read buffer every time it looks (that costs more than the look).
                size = min(size, os.fstat(stream.fileno()).st_size - stream.tell())
                if size <= 0:
                    return b""
            return stream.read(size) or b""
        fd = self._stdin_fd
        if fd is None:
            return b""
        ready, _, _ = select.select([fd], [], [], 0)
        if not ready:
            return b""
        return os.read(fd, _READ_SIZE)

    def _read_lines(self) -> bool:
        """Read what is available until at least one complete line is buffered (or no
        more data comes). Returns whether any bytes were read."""
        got_data = False
        self._lines, self._ends, self._next = [], [], 0
        while not self._lines:
            chunk = self._read_chunk()
            if not chunk:
                break
            got_data = True
            self._split(self._buffer + chunk if self._buffer else chunk)
        return got_data

    def _split(self, data: bytes) -> None:
        """Split ``data`` into complete lines, keeping the incomplete rest in _buffer."""
        base = self._position
        if b"\r" not in data:
            parts = data.split(b"\n")
            rest = parts.pop()
            sizes = [len(p) + 1 for p in parts]
        else:
            parts, sizes = [], []
            start = 0
            n = len(data)
            for m in _TERMINATOR.finditer(data):
                if m.end() == n and m.group() == b"\r":
                    break  # a trailing \r may be the first half of \r\n: wait for more
                parts.append(data[start : m.start()])
                sizes.append(m.end() - start)
                start = m.end()
            rest = data[start:]
        if not parts:
            self._buffer = rest
            return
        if data.isascii():
            lines = [p.decode("ascii") for p in parts]
        else:
            lines = [p.decode("utf-8", "replace") for p in parts]
        if base is None:
            ends: list[int | None] = [None] * len(lines)
        else:
            ends = []
            pos = base
            for size in sizes:
                pos += size
                ends.append(pos)
            self._position = pos
        self._lines, self._ends, self._next = lines, ends, 0
        self._buffer = rest

    def _take(self, limit: int) -> list[SourceRecord]:
        start = self._next
        stop = min(start + max(limit, 1), len(self._lines))
        self._next = stop
        topic, partition, schema = self._topic, self._partition, Schema.STRING_SCHEMA
        now = int(time.time() * 1000)
        lines = self._lines[start:stop]
        if partition is None:
            records = [SourceRecord(None, None, topic, None, None, None, schema, line, now) for line in lines]
        else:
            records = [
                SourceRecord(partition, {POSITION_FIELD: end}, topic, None, None, None, schema, line, now)
                for line, end in zip(lines, self._ends[start:stop], strict=False)
            ]
        if stop >= len(self._lines):
            self._lines, self._ends, self._next = [], [], 0
        return records

    def stop(self) -> None:
        self._stop_event.set()
        with self._lock:
            stream, self._stream = self._stream, None
        if stream is not None:
            try:
                stream.close()
            except OSError:
                log.exception("Failed to close FileStreamSourceTask stream")
