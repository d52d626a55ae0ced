"""A class-data-sharing archive for the worker's Spark JVM: its start-up without most of the
class loading.

Spark's driver loads and verifies some ten thousand classes on every start, which is most
of the seconds a worker needs before it can run a task (and more when several workers
start at once on few cores). The JVM can dump the classes an application loaded into an
archive when it exits (``-XX:ArchiveClassesAtExit``) and map that archive at its next start
(``-XX:SharedArchiveFile``), which saves most of that loading (``bench/startup.py``
reports the workers' Spark sessions).

The first worker of a class path runs without an archive and has its JVM write one when it
exits, under a name of its own (``….<pid>.part``); a later worker adopts a finished part —
its worker is gone and it has not changed for a while — as the archive. The JVM checks an
archive against itself and its class path and ignores (with a warning) one that does not
match, so a stale archive costs only the time it would have saved. The key of an archive is
everything that decides what the JVM loads: the ``java`` executable, the PySpark install
and the jars given to Spark.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path

from sluice.jvm.cache import cache_dir

__all__ = ["ARCHIVE_OPTIONS", "class_data_options"]

log = logging.getLogger(__name__)

#: The JVM options that show the JVM manages an archive itself (the user's options win).
ARCHIVE_OPTIONS = ("-XX:SharedArchiveFile", "-XX:ArchiveClassesAtExit", "-Xshare:off")
#: A part not written to for this long, by a worker that is gone, is complete (a JVM dumps
#: its archive in seconds as it exits).
_SETTLED_S = 30.0
#: The JVM's notes about classes it cannot archive (signed jars, old class versions): not
#: the worker's business.
_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


def class_data_options(key_parts: Sequence[str], directory: Path | None = None) -> str:
    """The driver JVM's options for the archive of ``key_parts`` (what decides the classes
    it loads): use it when there is one, else write one at exit."""
    directory = directory or cache_dir("jvm", "cds")
    key = hashlib.sha256("\0".join(key_parts).encode()).hexdigest()[:20]
    archive = directory / f"spark-driver-{key}.jsa"
    _adopt_finished_part(directory, archive)
    if archive.is_file():
        return f"{_option('-XX:SharedArchiveFile=', archive)} {_QUIET}"
    part = directory / f"{archive.name}.{os.getpid()}.part"
    log.info("Spark's JVM writes a class-data archive when this worker stops; later workers start faster")
    return f"{_option('-XX:ArchiveClassesAtExit=', part)} {_QUIET}"


def _option(name: str, path: Path) -> str:
    """A JVM option naming ``path``, quoted as Spark splits ``extraJavaOptions`` when needed."""
    option = f"{name}{path}"
    if any(c.isspace() or c in "\"'\\" for c in option):
        option = '"' + option.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return option


def _adopt_finished_part(directory: Path, archive: Path) -> None:
    """Make a finished part the archive; delete the other finished ones (workers that
    started together each wrote one)."""
    now = time.time()
    for part in sorted(directory.glob(f"{archive.name}.*.part")):
        pid = part.name[len(archive.name) + 1 : -len(".part")]
        try:
            stat = part.stat()
        except FileNotFoundError:
            continue
        if not pid.isdigit() or _alive(int(pid)) or now - stat.st_mtime < _SETTLED_S:
            continue  # its JVM may still be writing it
        if stat.st_size == 0 or archive.is_file():
            part.unlink(missing_ok=True)
            continue
        with contextlib.suppress(OSError):
            os.replace(part, archive)  # atomic: a worker reading it sees all or nothing
            log.debug("Adopted the class-data archive %s", archive)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
