"""The ``java`` Sluice runs (Ivy, javac's JDK) and the check that it is recent enough."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

from sluice.jvm import JvmArtifactError

__all__ = ["JAVA_MIN_VERSION", "java_executable"]

JAVA_MIN_VERSION = 17


def java_executable() -> Path:
    """The ``java`` to run: ``$JAVA_HOME/bin/java`` if JAVA_HOME is set, else ``java`` on PATH.

    Raises :class:`~sluice.jvm.JvmArtifactError` when there is none or it is older than Java 17.
    """
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if not os.access(candidate, os.X_OK):
            raise JvmArtifactError(
                f"JAVA_HOME is set to {java_home!r} but {candidate} is not an executable. "
                f"Point JAVA_HOME at a Java {JAVA_MIN_VERSION}+ installation or unset it."
            )
        java = candidate
    else:
        found = shutil.which("java")
        if found is None:
            raise JvmArtifactError(
                f"Java {JAVA_MIN_VERSION} or newer is needed to run Kafka and Spark, "
                "but no `java` is on PATH and JAVA_HOME is not set. Install a JDK or JRE "
                "(Debian/Ubuntu: `apt-get install openjdk-17-jre-headless`; macOS: "
                "`brew install openjdk@17`) or set JAVA_HOME."
            )
        java = Path(found)
    _check_java_version(str(java))
    return java


@functools.cache
def _check_java_version(java: str) -> None:
    try:
        out = subprocess.run(
            [java, "-XshowSettings:properties", "-version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise JvmArtifactError(f"Could not run {java}: {exc}") from exc
    match = re.search(r"java\.specification\.version = (\S+)", out.stderr + out.stdout)
    if match is None:
        raise JvmArtifactError(f"Could not tell the version of {java}: {out.stderr.strip()[-500:]}")
    spec = match.group(1)
    major = int(spec.split(".")[1] if spec.startswith("1.") else spec.split(".")[0])
    if major < JAVA_MIN_VERSION:
        raise JvmArtifactError(
            f"{java} is Java {spec}; Spark and Kafka need Java {JAVA_MIN_VERSION} or newer. "
            "Install one and put it first on PATH or set JAVA_HOME."
        )
