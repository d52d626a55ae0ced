"""The class-data archive of the worker's Spark JVM: written by the first worker's JVM at
exit under a name of its own, adopted by a later worker once it is certainly finished."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from sluice.jvm.class_data import class_data_options

KEY = ["/usr/bin/java", "/venv/pyspark", "4.0.0", "a.jar,b.jar", ""]


def _archive_name(directory: Path) -> str:
    option = class_data_options(KEY, directory)
    part = Path(option.split()[0].split("=", 1)[1])
    return part.name.split(".jsa.")[0] + ".jsa"


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_without_an_archive_the_jvm_writes_one_of_its_own(tmp_path: Path) -> None:
    option = class_data_options(KEY, tmp_path)
    assert option.startswith("-XX:ArchiveClassesAtExit=")
    assert option.split()[0].endswith(f".{os.getpid()}.part")
    assert "-Xlog:cds=off" in option
    assert class_data_options([*KEY[:-1], "other.jar"], tmp_path) != option  # another key, another archive


def test_a_finished_part_of_a_gone_worker_becomes_the_archive(tmp_path: Path) -> None:
    name = _archive_name(tmp_path)
    finished = tmp_path / f"{name}.{_dead_pid()}.part"
    finished.write_bytes(b"archive")
    settled = time.time() - 60
    os.utime(finished, (settled, settled))
    assert (
        class_data_options(KEY, tmp_path)
        == f"-XX:SharedArchiveFile={tmp_path / name} -Xlog:cds=off -Xlog:cds+dynamic=off"
    )
    assert (tmp_path / name).read_bytes() == b"archive" and not finished.exists()


def test_a_part_that_may_still_be_written_is_left_alone(tmp_path: Path) -> None:
    name = _archive_name(tmp_path)
    recent = tmp_path / f"{name}.{_dead_pid()}.part"  # its JVM may still be dumping
    recent.write_bytes(b"half")
    own = tmp_path / f"{name}.{os.getpid()}.part"  # a live worker's
    own.write_bytes(b"half")
    settled = time.time() - 60
    os.utime(own, (settled, settled))
    assert class_data_options(KEY, tmp_path).startswith("-XX:ArchiveClassesAtExit=")
    assert recent.exists() and own.exists() and not (tmp_path / name).exists()


def test_a_path_with_spaces_is_quoted_for_spark(tmp_path: Path) -> None:
    directory = tmp_path / "a cache"
    directory.mkdir()
    assert class_data_options(KEY, directory).startswith('"-XX:ArchiveClassesAtExit=')
