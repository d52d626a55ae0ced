"""JVM jars from Maven Central, fetched once into the cache and used offline afterwards.

Resolution runs Apache Ivy's command line (the ``ivy-*.jar`` that PySpark ships in its
``jars/`` directory), so a machine needs Java but not Maven. Each jar set is resolved
into a temporary directory next to its final place, a marker file listing the jars is
written, and the directory is renamed into place: a set is either complete or absent.
A file lock per set serialises concurrent fetches of the same set; different sets are
fetched side by side, each through an Ivy cache of its own in its temporary directory (Ivy's
cache is not safe for parallel writers), so nothing is kept twice.

The worker needs one set, :func:`spark_kafka_jars`. :func:`jar_set`, :func:`run_ivy` and
:func:`fetch_lock` are the building blocks, public for the development tooling's own sets
(Kafka's broker, Kafka Connect).

Set ``SLUICE_IVY_SETTINGS`` to an ``ivysettings.xml`` to resolve through a mirror instead
of Ivy's default chain.

This module does not import pyspark (only ``sluice.spark`` does); it finds PySpark's
install directory and version through the import system's metadata.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.metadata
import importlib.util
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from xml.sax.saxutils import quoteattr

from sluice.jvm import JvmArtifactError
from sluice.jvm.cache import jvm_dir
from sluice.jvm.java import java_executable

__all__ = [
    "COMPLETE_MARKER",
    "IVY_SETTINGS_ENV",
    "SPARK_VERSION",
    "Module",
    "fetch_lock",
    "jar_set",
    "maven_coordinates",
    "pyspark_jars_dir",
    "run_ivy",
    "spark_kafka_jars",
    "spark_kafka_module",
]

log = logging.getLogger(__name__)

IVY_SETTINGS_ENV = "SLUICE_IVY_SETTINGS"

Module = tuple[str, str, str]  # (organisation, name, revision)

# Written last into a complete directory of the cache (a jar set, an unpacked archive).
COMPLETE_MARKER = ".sluice-complete.json"


def _installed_pyspark_version() -> str:
    try:
        return importlib.metadata.version("pyspark")
    except importlib.metadata.PackageNotFoundError:
        return ""


SPARK_VERSION = _installed_pyspark_version()


# ------------------------------------------------------------------------------- PySpark


def pyspark_jars_dir() -> Path:
    """PySpark's bundled ``jars/`` directory (found without importing pyspark)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise JvmArtifactError("PySpark is not installed in this environment (run `./dev setup`).")
    for location in spec.submodule_search_locations:
        jars = Path(location) / "jars"
        if jars.is_dir():
            return jars
    raise JvmArtifactError(f"PySpark at {list(spec.submodule_search_locations)} has no jars/ directory.")


def _ivy_jar() -> Path:
    candidates = sorted(pyspark_jars_dir().glob("ivy-*.jar"))
    if not candidates:
        raise JvmArtifactError(f"No ivy-*.jar in {pyspark_jars_dir()}; is the PySpark install complete?")
    return candidates[-1]


def _scala_binary_version() -> str:
    for jar in pyspark_jars_dir().glob("spark-core_*.jar"):
        match = re.match(r"spark-core_(\d+\.\d+)-", jar.name)
        if match:
            return match.group(1)
    return "2.13"


def spark_kafka_module() -> Module:
    """Coordinates of Spark's Kafka connector matching the installed PySpark."""
    if not SPARK_VERSION:
        raise JvmArtifactError("PySpark is not installed in this environment (run `./dev setup`).")
    return ("org.apache.spark", f"spark-sql-kafka-0-10_{_scala_binary_version()}", SPARK_VERSION)


def _bundled_with_pyspark(artifact: str, bundled: Sequence[str]) -> bool:
    """Whether PySpark's jars/ already holds some version of ``artifact``.

    PySpark's jars are named ``<artifact>-<version>.jar``; a version starts with a digit.
    """
    prefix = artifact + "-"
    return any(name.startswith(prefix) and name[len(prefix) : len(prefix) + 1].isdigit() for name in bundled)


def spark_kafka_jars() -> list[Path]:
    """Jars to add to ``spark.jars`` so PySpark can read and write Kafka.

    Spark's Kafka connector and those of its dependencies that PySpark does not already
    bundle (for Spark 4.x: spark-sql-kafka, spark-token-provider-kafka, kafka-clients,
    commons-pool2).
    """
    module = spark_kafka_module()
    bundled = [p.name for p in pyspark_jars_dir().glob("*.jar")]
    return jar_set(
        f"spark-kafka-{module[2]}",
        (module,),
        keep=lambda artifact: not _bundled_with_pyspark(artifact, bundled),
    )


# ----------------------------------------------------------------------------- jar sets


def jar_set(name: str, modules: Sequence[Module], keep: Callable[[str], bool] = lambda _artifact: True) -> list[Path]:
    """The jars of ``modules`` and their dependencies, in ``<jvm cache>/<name>/``.

    Resolved with Ivy on first use (serialised by :func:`fetch_lock` of ``name``); afterwards read from
    the cache without running Java. ``keep`` filters by artifact name (the jars of the
    artifacts it rejects are not kept).
    """
    root = jvm_dir()
    dest = root / name
    cached = _read_complete(dest, modules)
    if cached is not None:
        return cached
    with fetch_lock(name):
        cached = _read_complete(dest, modules)  # another process may have finished meanwhile
        if cached is not None:
            return cached
        log.info("Fetching %s from Maven Central into %s (first use only) ...", name, dest)
        started = time.monotonic()
        work = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=root))
        try:
            retrieved = work / "retrieved"
            _ivy_retrieve(modules, retrieved, work)
            out = work / "out"
            out.mkdir()
            jars: list[str] = []
            for artifact_dir in sorted(p for p in retrieved.iterdir() if p.is_dir()):
                if not keep(artifact_dir.name):
                    continue
                for jar in sorted(artifact_dir.glob("*.jar")):
                    os.replace(jar, out / jar.name)
                    jars.append(jar.name)
            if not jars:
                raise JvmArtifactError(f"Resolving {maven_coordinates(modules)} with Ivy retrieved no jars.")
            marker = {"modules": [list(m) for m in modules], "jars": jars}
            (out / COMPLETE_MARKER).write_text(json.dumps(marker, indent=2) + "\n")
            if dest.exists():  # a partial set left by an older, interrupted layout
                shutil.rmtree(dest)
            os.rename(out, dest)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        log.info("Fetched %s (%d jars) in %.1fs", name, len(jars), time.monotonic() - started)
    result = _read_complete(dest, modules)
    assert result is not None
    return result


def _read_complete(dest: Path, modules: Sequence[Module]) -> list[Path] | None:
    try:
        marker = json.loads((dest / COMPLETE_MARKER).read_text())
    except (OSError, ValueError):
        return None
    if marker.get("modules") != [list(m) for m in modules]:
        return None
    jars = [dest / name for name in marker.get("jars", [])]
    if not jars or not all(j.is_file() for j in jars):
        return None
    return jars


@contextlib.contextmanager
def fetch_lock(name: str) -> Iterator[None]:
    """Held while ``<jvm cache>/<name>`` is fetched, so that two processes never fetch it together."""
    with open(jvm_dir() / f".fetch-{name}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def maven_coordinates(modules: Sequence[Module]) -> str:
    """``org:name:rev, ...`` for messages."""
    return ", ".join(":".join(m) for m in modules)


def _ivy_retrieve(modules: Sequence[Module], retrieved: Path, work: Path) -> None:
    deps = "\n".join(
        f"    <dependency org={quoteattr(org)} name={quoteattr(mod)} rev={quoteattr(rev)}/>"
        for org, mod, rev in modules
    )
    ivy_xml = work / "ivy.xml"
    ivy_xml.write_text(
        '<ivy-module version="2.0">\n'
        '  <info organisation="sluice.local" module="jar-set"/>\n'
        '  <dependencies defaultconfmapping="default->default">\n'
        f"{deps}\n"
        "  </dependencies>\n"
        "</ivy-module>\n"
    )
    run_ivy(
        ivy_xml, retrieved, "[artifact]/[artifact]-[revision](-[classifier]).[ext]", work, maven_coordinates(modules)
    )


def run_ivy(
    ivy_xml: Path, retrieved: Path, layout: str, work: Path, what: str, *, confs: str | None = "default"
) -> None:
    """Run Ivy's command line on ``ivy_xml``, retrieving into ``retrieved/<layout>``.

    ``layout`` is an Ivy retrieve pattern (``[artifact]-[revision].[ext]``); ``confs`` the
    configurations to resolve (None: Ivy's default). Ivy's cache and user directory are in
    ``work`` (one fetch's temporary directory, deleted after it: fetches of different sets
    run side by side, and Ivy's cache is not safe for parallel writers), its log
    ``work/ivy.log``; ``what`` names the artifacts in error messages. Call it holding
    :func:`fetch_lock`. Raises :class:`~sluice.jvm.JvmArtifactError` (with the interesting
    lines of Ivy's log) when Ivy fails, times out or retrieves nothing.
    """
    command = [
        str(java_executable()),
        # keep Ivy's user dir out of $HOME (which may be read-only in CI)
        f"-Divy.default.ivy.user.dir={work / 'ivy-home'}",
        "-jar",
        str(_ivy_jar()),
        "-cache",
        str(work / "ivy-cache"),
        "-ivy",
        str(ivy_xml),
        *(["-confs", confs] if confs else []),
        "-retrieve",
        f"{retrieved}/{layout}",
    ]
    settings = os.environ.get(IVY_SETTINGS_ENV)
    if settings:
        command[4:4] = ["-settings", settings]
    ivy_log = work / "ivy.log"
    with open(ivy_log, "w") as out:
        try:
            proc = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, timeout=1800)
        except subprocess.TimeoutExpired as exc:
            raise JvmArtifactError(f"Resolving {what} with Ivy timed out.") from exc
    if proc.returncode != 0 or not retrieved.is_dir():
        lines = ivy_log.read_text(errors="replace").splitlines()
        interesting = [ln.strip() for ln in lines if "::" in ln or "ERROR" in ln or "WARN" in ln]
        detail = "\n".join((interesting or lines)[-25:])
        raise JvmArtifactError(
            f"Could not download {what} from Maven Central with Ivy "
            f"(exit code {proc.returncode}). Check the network (or set {IVY_SETTINGS_ENV} "
            f"to an ivysettings.xml for a mirror) and retry.\n{detail}"
        )
