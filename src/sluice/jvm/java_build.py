"""Compiles the project's small Java sources (shipped as package data: this package's, or
another package's named by ``package``) with the JDK's ``javac``, once per source and
classpath, into the cache."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from sluice.jvm import JvmArtifactError
from sluice.jvm.cache import cache_dir
from sluice.jvm.java import java_executable

__all__ = ["JavaBuildError", "compiled_classes", "compiled_jar"]


class JavaBuildError(JvmArtifactError):
    """No ``javac``, or it failed."""


def _javac() -> str:
    javac = shutil.which("javac", path=str(java_executable().parent)) or shutil.which("javac")
    if javac is None:
        raise JavaBuildError("javac (a JDK 17 or newer) is needed to compile Sluice's Java helpers; none was found.")
    return javac


def _target(source_name: str, classpath: Sequence[Path], kind: str, package: str) -> tuple[str, Path]:
    source = resources.files(package).joinpath(source_name).read_text(encoding="utf-8")
    digest = hashlib.sha256(source.encode("utf-8"))
    for jar in classpath:
        digest.update(b"\0" + Path(jar).name.encode("utf-8"))
    return source, cache_dir(kind, create=True) / digest.hexdigest()[:20]


def compiled_classes(
    source_name: str, classpath: Sequence[Path], kind: str, marker: str, *, package: str = "sluice.jvm"
) -> Path:
    """The directory of ``source_name``'s compiled classes under ``<cache>/<kind>/``;
    ``marker`` is a class file whose presence means the build is complete. The source is
    package data of ``package``."""
    source, target = _target(source_name, classpath, kind, package)
    if (target / marker).is_file():
        return target
    javac = _javac()
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        (work / source_name).write_text(source, encoding="utf-8")
        classes = work / "classes"
        classes.mkdir()
        proc = subprocess.run(
            [
                javac,
                "-nowarn",
                "-encoding",
                "UTF-8",
                "--release",
                "17",
                "-cp",
                os.pathsep.join(str(p) for p in classpath),
                "-d",
                str(classes),
                str(work / source_name),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode != 0:
            raise JavaBuildError(f"javac failed to compile {source_name}:\n{proc.stdout}{proc.stderr}")
        try:
            classes.rename(target)
        except OSError:
            if not (target / marker).is_file():  # not a concurrent build that won
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def compiled_jar(
    source_name: str, classpath: Sequence[Path], kind: str, marker: str, *, package: str = "sluice.jvm"
) -> Path:
    """``compiled_classes`` packed into a jar next to them (Spark ships jars, not directories)."""
    classes = compiled_classes(source_name, classpath, kind, marker, package=package)
    jar = classes.with_suffix(".jar")
    if jar.is_file():
        return jar
    partial = jar.with_name(f".{jar.name}.{os.getpid()}")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
        for path in sorted(classes.rglob("*.class")):
            out.write(path, path.relative_to(classes).as_posix())
    os.replace(partial, jar)
    return jar
