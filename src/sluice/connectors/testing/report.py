"""The report files of the verifiable connectors: one JSON object per line.

Kafka's ``VerifiableSourceTask``/``VerifiableSinkTask`` print these lines to stdout.
Sluice tasks run in Spark's Python workers — other processes, possibly other
machines — so they append them to the file named by ``report.file`` instead (stdout
when it is unset). The file is opened with ``O_APPEND`` and every ``write()`` carries
whole lines, so any number of tasks and processes on one machine can share a file
without their lines interleaving.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from sluice import __version__

__all__ = ["ReportWriter", "parse_report_line", "read_report"]

REPORT_FILE_CONFIG = "report.file"
REPORT_FILE_DOC = (
    "File that the tasks append their JSON report lines to (created if missing; one write() "
    "per batch of whole lines, with O_APPEND, so tasks and processes can share it). Unset: "
    "standard output, as Kafka's tools do. A path on the machine that runs the task (a Spark "
    "executor)."
)


def plugin_version() -> str:
    """The testing connectors' version: Sluice's."""
    return __version__


def _line(entry: dict[str, Any]) -> str:
    return json.dumps(entry, separators=(", ", ": "), default=str) + "\n"


class ReportWriter:
    """Appends report lines to a file (``O_APPEND``) or writes them to stdout.

    Thread-safe; :meth:`write` after :meth:`close` drops the lines (a task that was
    stopped reports nothing more).
    """

    def __init__(self, path: str | None) -> None:
        self.path = path or None
        self._fd: int | None = None
        self._closed = False
        self._lock = threading.Lock()

    def open(self) -> ReportWriter:
        """Open the file now (a path that cannot be written fails here, not later)."""
        with self._lock:
            if self.path is not None and self._fd is None and not self._closed:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return self

    def write(self, entries: Iterable[dict[str, Any]]) -> None:
        data = "".join(_line(e) for e in entries)
        if not data:
            return
        with self._lock:
            if self._closed:
                return
            if self.path is None:
                sys.stdout.write(data)
                sys.stdout.flush()
                return
            if self._fd is None:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            view = memoryview(data.encode("utf-8"))
            while view:  # a regular file takes it all in one call; loop only on a short write
                written = os.write(self._fd, view)
                view = view[written:]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def read_report(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every report line of a file, parsed; lines that are not JSON objects are skipped
    (a line still being written, or log output mixed into a stdout report)."""
    return list(_entries(path))


def parse_report_line(line: str | bytes) -> dict[str, Any] | None:
    """A report line parsed; None when it is not a JSON object (a line still being
    written, or log output mixed into a stdout report)."""
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


def _entries(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return
    with handle:
        for raw in handle:
            entry = parse_report_line(raw)
            if entry is not None:
                yield entry
