"""Tests of sluice.storage, and helpers to run small Java programs against our bytes.

The Java helpers compile a program into a temporary directory at test time. Tests that
need only the JDK skip when ``javac`` is absent; tests that need Apache Kafka's own
classes (``JsonConverter``, ``FileOffsetBackingStore``) also skip when Kafka's jars are
not found in ``$SLUICE_KAFKA_LIBS`` (directories, ``os.pathsep``-separated), Sluice's
jar cache (``$SLUICE_CACHE``/``~/.cache/sluice``, ``jvm/*/``) or ``~/.m2/repository``.
Nothing is downloaded.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

JAVA = shutil.which("java")
JAVAC = shutil.which("javac")

requires_javac = pytest.mark.skipif(
    JAVA is None or JAVAC is None,
    reason="javac/java not on PATH: the Java interoperability check needs a JDK (17+)",
)

# artifact -> Maven group path under ~/.m2/repository
KAFKA_ARTIFACTS = {
    "connect-runtime": "org/apache/kafka",
    "connect-api": "org/apache/kafka",
    "connect-json": "org/apache/kafka",
    "kafka-clients": "org/apache/kafka",
    "jackson-core": "com/fasterxml/jackson/core",
    "jackson-databind": "com/fasterxml/jackson/core",
    "jackson-annotations": "com/fasterxml/jackson/core",
    "jackson-datatype-jdk8": "com/fasterxml/jackson/datatype",
    "jackson-module-blackbird": "com/fasterxml/jackson/module",
    "slf4j-api": "org/slf4j",
}
_OPTIONAL = {"jackson-datatype-jdk8"}


def _jar_groups() -> list[list[Path]]:
    """Candidate jar sets, each from one place so that versions stay consistent."""
    groups: list[list[Path]] = []
    for entry in os.environ.get("SLUICE_KAFKA_LIBS", "").split(os.pathsep):
        if entry:
            groups.append(sorted(Path(entry).expanduser().glob("*.jar")))
    cache = Path(os.environ.get("SLUICE_CACHE") or "~/.cache/sluice").expanduser()
    groups += [sorted(d.glob("*.jar")) for d in sorted((cache / "jvm").glob("*/")) if d.is_dir()]
    m2 = Path("~/.m2/repository").expanduser()
    groups.append(
        [
            jar
            for artifact, group in KAFKA_ARTIFACTS.items()
            for jar in sorted((m2 / group / artifact).glob(f"*/{artifact}-*.jar"), reverse=True)
        ]
    )
    return groups


def _version(jar: Path, artifact: str) -> str:
    return jar.name[len(artifact) + 1 : -len(".jar")]


def _classpath_from(jars: list[Path]) -> str | None:
    found: dict[str, Path] = {}
    for artifact in KAFKA_ARTIFACTS:
        pattern = re.compile(rf"^{re.escape(artifact)}-\d[\w.\-]*\.jar$")
        matches = [
            jar
            for jar in jars
            if pattern.match(jar.name) and not re.search(r"-(sources|javadoc|tests?)\.jar$", jar.name)
        ]
        if artifact.startswith(("connect-", "kafka-")) and "connect-runtime" in found:
            kafka_version = _version(found["connect-runtime"], "connect-runtime")
            matches = [jar for jar in matches if _version(jar, artifact) == kafka_version]
        if matches:
            found[artifact] = matches[0]
        elif artifact not in _OPTIONAL:
            return None
    return os.pathsep.join(str(jar) for jar in found.values())


@functools.lru_cache(maxsize=1)
def kafka_classpath() -> str | None:
    """A classpath with Kafka Connect's runtime and JSON converter, or None."""
    for jars in _jar_groups():
        classpath = _classpath_from(jars)
        if classpath is not None:
            return classpath
    return None


def requires_kafka_jars():
    classpath = kafka_classpath() if JAVAC else None
    return pytest.mark.skipif(
        classpath is None,
        reason="needs javac and Apache Kafka's connect-runtime/connect-json jars "
        "(set SLUICE_KAFKA_LIBS to a directory holding them, e.g. Kafka's libs/)",
    )


def compile_java(workdir: Path, class_name: str, source: str, classpath: str | None = None) -> str:
    """Compile ``source`` (public class ``class_name``); return the classpath to run it."""
    src = workdir / "src"
    out = workdir / "classes"
    src.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    java_file = src / f"{class_name}.java"
    java_file.write_text(source, encoding="utf-8")
    command = [JAVAC, "-encoding", "UTF-8", "-nowarn", "-d", str(out)]
    if classpath:
        command += ["-cp", classpath]
    result = subprocess.run([*command, str(java_file)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"javac failed:\n{result.stdout}\n{result.stderr}"
    return str(out) if not classpath else os.pathsep.join([str(out), classpath])


def run_java(classpath: str, class_name: str, *args: str, stdin: str | None = None) -> str:
    result = subprocess.run(
        [JAVA, "-cp", classpath, class_name, *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    assert result.returncode == 0, f"java {class_name} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout
