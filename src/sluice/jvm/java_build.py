"""Compiles the project's Java sources (shipped as package data: this package's, or
another package's named by ``package``) with the JDK's ``javac``, once per source and
classpath, into the cache: single files (:func:`compiled_jar`) and whole directories of
sources (:func:`compiled_sources_jar`, the JVM task host)."""

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

__all__ = ["JavaBuildError", "compiled_classes", "compiled_jar", "compiled_sources_jar"]


class JavaBuildError(JvmArtifactError):
    """No ``javac``, or it failed."""


def _javac() -> str:
    javac = shutil.which("javac", path=str(java_executable().parent)) or shutil.which("javac")
    if javac is None:
        raise JavaBuildError("javac (a JDK 17 or newer) is needed to compile Sluice's Java helpers; none was found.")
    return javac


def _sources(source_names: Sequence[str], package: str) -> dict[str, str]:
    files = resources.files(package)
    return {name: files.joinpath(name).read_text(encoding="utf-8") for name in source_names}


def _target(sources: dict[str, str], classpath: Sequence[Path], kind: str) -> Path:
    digest = hashlib.sha256()
    for name, text in sorted(sources.items()):
        digest.update(name.encode("utf-8") + b"\0" + text.encode("utf-8") + b"\0")
    for jar in classpath:
        digest.update(b"\0" + Path(jar).name.encode("utf-8"))
    return cache_dir(kind, create=True) / digest.hexdigest()[:20]


def compiled_classes(
    source_name: str, classpath: Sequence[Path], kind: str, marker: str, *, package: str = "sluice.jvm"
) -> Path:
    """The directory of ``source_name``'s compiled classes under ``<cache>/<kind>/``;
    ``marker`` is a class file whose presence means the build is complete. The source is
    package data of ``package``."""
    return _compiled(_sources([source_name], package), classpath, kind, marker)


def _compiled(sources: dict[str, str], classpath: Sequence[Path], kind: str, marker: str) -> Path:
    target = _target(sources, classpath, kind)
    if (target / marker).is_file():
        return target
    javac = _javac()
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        for name, text in sources.items():
            (work / Path(name).name).write_text(text, encoding="utf-8")
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
                *(str(work / Path(name).name) for name in sources),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode != 0:
            raise JavaBuildError(f"javac failed to compile {', '.join(sources)}:\n{proc.stdout}{proc.stderr}")
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
    return _jar_of(compiled_classes(source_name, classpath, kind, marker, package=package))


def compiled_sources_jar(
    directory: str, classpath: Sequence[Path], kind: str, marker: str, *, package: str = "sluice.jvm"
) -> Path:
    """Every ``*.java`` file of the package data directory ``directory`` compiled together,
    packed into a jar under ``<cache>/<kind>/``."""
    files = resources.files(package).joinpath(directory)
    names = sorted(f"{directory}/{entry.name}" for entry in files.iterdir() if entry.name.endswith(".java"))
    if not names:
        raise JavaBuildError(f"No Java sources in {package}/{directory}")
    return _jar_of(_compiled(_sources(names, package), classpath, kind, marker))


def _jar_of(classes: Path) -> Path:
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
