"""The standalone worker's offset file (``offset.storage.file.filename``, spec 5.4).

The file holds one Java-serialized ``java.util.HashMap<byte[], byte[]>``, exactly as
Kafka Connect's ``FileOffsetBackingStore`` writes it, so a Kafka Connect worker and a
Sluice worker can take over each other's offset file.

Differences from Kafka, all invisible to a reader of the file:

* The file is replaced atomically (temporary file in the same directory, ``fsync``,
  ``os.replace``, ``fsync`` of the directory) where Kafka truncates and rewrites it in
  place; a crash never leaves a half-written file.
* A ``None`` value removes its key; Kafka keeps ``key -> null`` in the file. Both read
  back as "no offset".
* The file's directory is created when missing.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import threading
from pathlib import Path

from sluice.api.errors import ConnectError, IllegalWorkerStateError
from sluice.storage.base import OffsetBackingStore
from sluice.storage.java_serialization import (
    JavaSerializationError,
    TruncatedStreamError,
    dump_hashmap,
    load_hashmap,
)
from sluice.storage.memory import _apply, _check_key, _check_value

__all__ = ["FileOffsetBackingStore"]

log = logging.getLogger(__name__)


class FileOffsetBackingStore(OffsetBackingStore):
    """Source offsets in a Java-serialized ``HashMap<byte[], byte[]>`` file. Thread-safe.

    :meth:`start` loads the file (a missing or empty file means no offsets; a truncated
    one is ignored with a warning, as Kafka ignores its ``EOFException``). Every
    :meth:`set` rewrites the whole file atomically before returning; if the write fails
    the error propagates and neither the file nor the in-memory offsets change.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = Path(path)
        self._lock = threading.RLock()
        self._data: dict[bytes, bytes] = {}
        self._started = False

    @property
    def path(self) -> Path:
        return self._path

    def start(self) -> None:
        with self._lock:
            log.info("Starting FileOffsetBackingStore with file %s", self._path)
            self._data = self._load()
            self._started = True

    def stop(self) -> None:
        with self._lock:
            # Every set() was durable when it returned: nothing to flush.
            self._started = False
            log.info("Stopped FileOffsetBackingStore")

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        with self._lock:
            self._check_started()
            return {_check_key(key): self._data.get(_check_key(key)) for key in keys}

    def set(self, values: dict[bytes, bytes | None]) -> None:
        checked = {_check_key(key): _check_value(value) for key, value in values.items()}
        with self._lock:
            self._check_started()
            updated = dict(self._data)
            _apply(updated, checked)
            self._save(updated)
            self._data = updated

    def all(self) -> dict[bytes, bytes]:
        with self._lock:
            self._check_started()
            return dict(self._data)

    # ------------------------------------------------------------------ internals

    def _check_started(self) -> None:
        if not self._started:
            raise IllegalWorkerStateError(f"FileOffsetBackingStore for {self._path} is not started")

    def _load(self) -> dict[bytes, bytes]:
        try:
            payload = self._path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as e:
            raise ConnectError(f"Could not read offset file {self._path}: {e}") from e
        if not payload:
            return {}
        try:
            raw = load_hashmap(payload)
        except TruncatedStreamError as e:
            log.warning(
                "Ignoring the truncated offset file %s (%s); starting with no offsets, as Kafka Connect does",
                self._path,
                e,
            )
            return {}
        except JavaSerializationError as e:
            raise ConnectError(f"Could not read offset file {self._path}: {e}") from e
        return {key: value for key, value in raw.items() if value is not None}

    def _save(self, data: dict[bytes, bytes]) -> None:
        payload = dump_hashmap(data)
        target = Path(os.path.realpath(self._path))  # keep a symlinked offset file a symlink
        directory = target.parent
        directory.mkdir(parents=True, exist_ok=True)
        try:
            mode: int | None = target.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = None
        tmp = directory / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
        fd = os.open(tmp, flags, 0o666)  # the umask applies, as for Java's new file
        try:
            with os.fdopen(fd, "wb") as f:
                if mode is not None and hasattr(os, "fchmod"):
                    os.fchmod(f.fileno(), mode)
                f.write(payload)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _fsync_directory(directory)


def _fsync_directory(directory: Path) -> None:
    if os.name == "nt":  # directories cannot be opened for fsync on Windows
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
