"""JVM jars from Maven Central, fetched once into the cache and used offline afterwards.

Resolution runs Apache Ivy's command line (the ``ivy-*.jar`` that PySpark ships in its
``jars/`` directory), so a machine needs Java but not Maven. Each jar set is resolved
into a temporary directory next to its final place, a marker file listing the jars is
written, and the directory is renamed into place: a set is either complete or absent.
A file lock serialises concurrent fetches (Ivy's cache is not safe for parallel writers).
Ivy's own cache keeps only metadata afterwards: the jars would be a second copy.

Set ``SLUICE_IVY_SETTINGS`` to an ``ivysettings.xml`` to resolve through a mirror instead
of Ivy's default chain.

This module does not import pyspark (only ``sluice.spark`` does); it finds PySpark's
install directory and version through the import system's metadata.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
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

from sluice.devtools import DevToolsError
from sluice.devtools.cache import jvm_dir

__all__ = [
    "JAVA_MIN_VERSION",
    "KAFKA_BROKER_MODULES",
    "KAFKA_CONNECT_MODULES",
    "KAFKA_VERSION",
    "LOG4J_VERSION",
    "SPARK_VERSION",
    "fetch_all",
    "java_executable",
    "kafka_broker_classpath",
    "kafka_connect_classpath",
    "maven_archive",
    "pyspark_jars_dir",
    "spark_kafka_jars",
    "spark_kafka_module",
]

log = logging.getLogger(__name__)

KAFKA_VERSION = "4.3.1"
LOG4J_VERSION = "2.25.4"
JAVA_MIN_VERSION = 17
IVY_SETTINGS_ENV = "SLUICE_IVY_SETTINGS"

Module = tuple[str, str, str]  # (organisation, name, revision)

# The broker, its admin/perf tools (StorageTool, ProducerPerformance, ...) and a log4j2
# backend for Kafka's SLF4J logging.
KAFKA_BROKER_MODULES: tuple[Module, ...] = (
    ("org.apache.kafka", "kafka_2.13", KAFKA_VERSION),
    ("org.apache.kafka", "kafka-tools", KAFKA_VERSION),
    ("org.apache.logging.log4j", "log4j-core", LOG4J_VERSION),
    ("org.apache.logging.log4j", "log4j-slf4j-impl", LOG4J_VERSION),
)

# Apache Kafka Connect's runtime (with its JsonConverter) and the same log4j2 backend, for
# side-by-side benchmarks. A set of its own: Spark's kafka-clients 3.9.0 must never be on
# this classpath (connect-runtime 4.3.1 does not run with it).
KAFKA_CONNECT_MODULES: tuple[Module, ...] = (
    ("org.apache.kafka", "connect-runtime", KAFKA_VERSION),
    ("org.apache.kafka", "connect-json", KAFKA_VERSION),
    ("org.apache.logging.log4j", "log4j-core", LOG4J_VERSION),
    ("org.apache.logging.log4j", "log4j-slf4j-impl", LOG4J_VERSION),
)

# The reference file connectors: not on Connect's classpath since Kafka 3.2, loaded from a
# plugin.path directory. Only the connect-file jar itself is kept (its dependencies are
# Connect's own).
KAFKA_CONNECT_FILE_MODULE: Module = ("org.apache.kafka", "connect-file", KAFKA_VERSION)

_MARKER = ".sluice-complete.json"


def _installed_pyspark_version() -> str:
    try:
        return importlib.metadata.version("pyspark")
    except importlib.metadata.PackageNotFoundError:
        return ""


SPARK_VERSION = _installed_pyspark_version()


# ---------------------------------------------------------------------------------- Java


def java_executable() -> Path:
    """The ``java`` to run: ``$JAVA_HOME/bin/java`` if JAVA_HOME is set, else ``java`` on PATH.

    Raises :class:`DevToolsError` when there is none or it is older than Java 17.
    """
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if not os.access(candidate, os.X_OK):
            raise DevToolsError(
                f"JAVA_HOME is set to {java_home!r} but {candidate} is not an executable. "
                f"Point JAVA_HOME at a Java {JAVA_MIN_VERSION}+ installation or unset it."
            )
        java = candidate
    else:
        found = shutil.which("java")
        if found is None:
            raise DevToolsError(
                f"Java {JAVA_MIN_VERSION} or newer is needed to run Kafka and Spark, "
                "but no `java` is on PATH and JAVA_HOME is not set. Install a JDK or JRE "
                "(Debian/Ubuntu: `apt-get install openjdk-17-jre-headless`; macOS: "
                "`brew install openjdk@17`) or set JAVA_HOME."
            )
        java = Path(found)
    _check_java_version(str(java))
    return java


@functools.lru_cache(maxsize=None)
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
        raise DevToolsError(f"Could not run {java}: {exc}") from exc
    match = re.search(r"java\.specification\.version = (\S+)", out.stderr + out.stdout)
    if match is None:
        raise DevToolsError(f"Could not tell the version of {java}: {out.stderr.strip()[-500:]}")
    spec = match.group(1)
    major = int(spec.split(".")[1] if spec.startswith("1.") else spec.split(".")[0])
    if major < JAVA_MIN_VERSION:
        raise DevToolsError(
            f"{java} is Java {spec}; Kafka {KAFKA_VERSION} and Spark need Java "
            f"{JAVA_MIN_VERSION} or newer. Install one and put it first on PATH or set JAVA_HOME."
        )


# ------------------------------------------------------------------------------- PySpark


def pyspark_jars_dir() -> Path:
    """PySpark's bundled ``jars/`` directory (found without importing pyspark)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise DevToolsError("PySpark is not installed in this environment (run `./dev setup`).")
    for location in spec.submodule_search_locations:
        jars = Path(location) / "jars"
        if jars.is_dir():
            return jars
    raise DevToolsError(f"PySpark at {list(spec.submodule_search_locations)} has no jars/ directory.")


def _ivy_jar() -> Path:
    candidates = sorted(pyspark_jars_dir().glob("ivy-*.jar"))
    if not candidates:
        raise DevToolsError(f"No ivy-*.jar in {pyspark_jars_dir()}; is the PySpark install complete?")
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
        raise DevToolsError("PySpark is not installed in this environment (run `./dev setup`).")
    return ("org.apache.spark", f"spark-sql-kafka-0-10_{_scala_binary_version()}", SPARK_VERSION)


def _bundled_with_pyspark(artifact: str, bundled: Sequence[str]) -> bool:
    """Whether PySpark's jars/ already holds some version of ``artifact``.

    PySpark's jars are named ``<artifact>-<version>.jar``; a version starts with a digit.
    """
    prefix = artifact + "-"
    return any(name.startswith(prefix) and name[len(prefix) : len(prefix) + 1].isdigit() for name in bundled)


# ------------------------------------------------------------------------------- public


def kafka_broker_classpath() -> list[Path]:
    """The jars that run Apache Kafka's broker and tools (``java -cp``), fetched on first use."""
    return _jar_set(f"kafka-{KAFKA_VERSION}", KAFKA_BROKER_MODULES)


def kafka_connect_classpath() -> tuple[list[Path], Path]:
    """Apache Kafka Connect: the runtime's jars (``java -cp``) and a ``plugin.path`` directory.

    The directory holds ``connect-file-<version>.jar`` (FileStreamSource/FileStreamSink)
    and nothing else that Connect would load. Both are fetched on first use. Run the
    worker with ``org.apache.kafka.connect.cli.ConnectStandalone`` on this classpath
    only: it must not be mixed with :func:`spark_kafka_jars`.
    """
    runtime = _jar_set(f"kafka-connect-{KAFKA_VERSION}", KAFKA_CONNECT_MODULES)
    plugin = _jar_set(
        f"kafka-connect-file-{KAFKA_VERSION}",
        (KAFKA_CONNECT_FILE_MODULE,),
        keep=lambda artifact: artifact == KAFKA_CONNECT_FILE_MODULE[1],
    )
    return runtime, plugin[0].parent


def spark_kafka_jars() -> list[Path]:
    """Jars to add to ``spark.jars`` so PySpark can read and write Kafka.

    Spark's Kafka connector and those of its dependencies that PySpark does not already
    bundle (for Spark 4.0.0: spark-sql-kafka, spark-token-provider-kafka, kafka-clients,
    commons-pool2).
    """
    module = spark_kafka_module()
    bundled = [p.name for p in pyspark_jars_dir().glob("*.jar")]
    return _jar_set(
        f"spark-kafka-{module[2]}",
        (module,),
        keep=lambda artifact: not _bundled_with_pyspark(artifact, bundled),
    )


def fetch_all() -> dict[str, list[Path]]:
    """Fetch every jar set the project uses; a no-op (and offline) once cached."""
    connect_classpath, connect_plugins = kafka_connect_classpath()  # the benchmarks' reference
    return {
        "kafka-broker": kafka_broker_classpath(),
        "spark-kafka": spark_kafka_jars(),
        "kafka-connect": [*connect_classpath, connect_plugins],
    }


# ----------------------------------------------------------------------------- plumbing


def _jar_set(name: str, modules: Sequence[Module], keep: Callable[[str], bool] = lambda _artifact: True) -> list[Path]:
    root = jvm_dir()
    dest = root / name
    cached = _read_complete(dest, modules)
    if cached is not None:
        return cached
    with _file_lock(root / ".fetch.lock"):
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
                raise DevToolsError(f"Resolving {_coords(modules)} with Ivy retrieved no jars.")
            marker = {"modules": [list(m) for m in modules], "jars": jars}
            (out / _MARKER).write_text(json.dumps(marker, indent=2) + "\n")
            if dest.exists():  # a partial set left by an older, interrupted layout
                shutil.rmtree(dest)
            os.rename(out, dest)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        _drop_cached_artifacts(root / "ivy-cache")
        log.info("Fetched %s (%d jars) in %.1fs", name, len(jars), time.monotonic() - started)
    result = _read_complete(dest, modules)
    assert result is not None
    return result


def _drop_cached_artifacts(ivy_cache: Path) -> None:
    """Delete the jars in Ivy's cache (``<org>/<module>/<type>s/*.jar``), keeping its metadata."""
    for jar in ivy_cache.glob("*/*/*s/*.jar"):
        jar.unlink(missing_ok=True)


def _read_complete(dest: Path, modules: Sequence[Module]) -> list[Path] | None:
    try:
        marker = json.loads((dest / _MARKER).read_text())
    except (OSError, ValueError):
        return None
    if marker.get("modules") != [list(m) for m in modules]:
        return None
    jars = [dest / name for name in marker.get("jars", [])]
    if not jars or not all(j.is_file() for j in jars):
        return None
    return jars


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _coords(modules: Sequence[Module]) -> str:
    return ", ".join(":".join(m) for m in modules)


def _ivy_retrieve(modules: Sequence[Module], retrieved: Path, work: Path) -> None:
    java = java_executable()
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
    root = jvm_dir()
    command = [
        str(java),
        # keep Ivy's user dir out of $HOME (which may be read-only in CI)
        f"-Divy.default.ivy.user.dir={root / 'ivy-home'}",
        "-jar",
        str(_ivy_jar()),
        "-cache",
        str(root / "ivy-cache"),
        "-ivy",
        str(ivy_xml),
        "-confs",
        "default",
        "-retrieve",
        f"{retrieved}/[artifact]/[artifact]-[revision](-[classifier]).[ext]",
    ]
    settings = os.environ.get(IVY_SETTINGS_ENV)
    if settings:
        command[4:4] = ["-settings", settings]
    ivy_log = work / "ivy.log"
    with open(ivy_log, "w") as out:
        try:
            proc = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, timeout=1800)
        except subprocess.TimeoutExpired as exc:
            raise DevToolsError(f"Resolving {_coords(modules)} with Ivy timed out.") from exc
    if proc.returncode != 0 or not retrieved.is_dir():
        lines = ivy_log.read_text(errors="replace").splitlines()
        interesting = [ln.strip() for ln in lines if "::" in ln or "ERROR" in ln or "WARN" in ln]
        detail = "\n".join((interesting or lines)[-25:])
        raise DevToolsError(
            f"Could not download {_coords(modules)} from Maven Central with Ivy "
            f"(exit code {proc.returncode}). Check the network (or set {IVY_SETTINGS_ENV} "
            f"to an ivysettings.xml for a mirror) and retry.\n{detail}"
        )


# ----------------------------------------------------------------------- archives


def maven_archive(
    organisation: str,
    artifact: str,
    revision: str,
    *,
    ext: str = "tar.gz",
    classifier: str | None = None,
    name: str | None = None,
) -> Path:
    """A Maven Central archive (``tar.gz``/``tgz``/``zip``), fetched once and unpacked in the cache.

    Resolves exactly one artifact (``organisation:artifact:revision[:classifier]@ext``, no
    dependencies) with the same Ivy command line as the jar sets, unpacks it into
    ``<jvm cache>/<name>`` (default ``<artifact>-<revision>[-<classifier>]``) and returns that
    directory. As with jar sets, the directory is either complete (a marker file is written
    last) or absent, concurrent fetches are serialised by the same file lock, and the
    downloaded archive itself is not kept (neither here nor in Ivy's cache).
    """
    module: Module = (organisation, artifact, revision)
    dest_name = name or "-".join(p for p in (artifact, revision, classifier) if p)
    root = jvm_dir()
    dest = root / dest_name
    identity = {"module": list(module), "ext": ext, "classifier": classifier}
    if _archive_complete(dest, identity):
        return dest
    with _file_lock(root / ".fetch.lock"):
        if _archive_complete(dest, identity):
            return dest
        coords = ":".join([*module, *([classifier] if classifier else [])]) + f"@{ext}"
        log.info("Fetching %s from Maven Central into %s (first use only) ...", coords, dest)
        started = time.monotonic()
        work = Path(tempfile.mkdtemp(prefix=f".{dest_name}.", dir=root))
        try:
            retrieved = work / "retrieved"
            _ivy_retrieve_artifact(module, ext, classifier, retrieved, work)
            archives = sorted(p for p in retrieved.iterdir() if p.is_file())
            if len(archives) != 1:
                raise DevToolsError(f"Resolving {coords} with Ivy retrieved {len(archives)} files, expected 1.")
            out = work / "out"
            out.mkdir()
            _unpack(archives[0], ext, out)
            archives[0].unlink()
            (out / _MARKER).write_text(json.dumps(identity, indent=2) + "\n")
            if dest.exists():  # left by an interrupted older layout
                shutil.rmtree(dest)
            os.rename(out, dest)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        for cached in (root / "ivy-cache" / organisation / artifact).glob(f"*/{artifact}-{revision}*.{ext}"):
            cached.unlink(missing_ok=True)  # Ivy's copy of the archive: not needed again
        log.info("Fetched and unpacked %s in %.1fs", coords, time.monotonic() - started)
    return dest


def _archive_complete(dest: Path, identity: dict[str, object]) -> bool:
    try:
        return bool(json.loads((dest / _MARKER).read_text()) == identity)
    except (OSError, ValueError):
        return False


def _unpack(archive: Path, ext: str, out: Path) -> None:
    import tarfile
    import zipfile

    try:
        if ext == "zip":
            with zipfile.ZipFile(archive) as zf:
                for member in zf.namelist():
                    _check_member(member, out)
                zf.extractall(out)
        else:
            with tarfile.open(archive) as tf:
                tf.extractall(out, filter="data")
    except (OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
        raise DevToolsError(f"Could not unpack {archive.name}: {exc}") from exc


def _check_member(member: str, out: Path) -> None:
    target = (out / member).resolve()
    if not target.is_relative_to(out.resolve()):
        raise DevToolsError(f"Archive member {member!r} would be written outside {out}.")


def _ivy_retrieve_artifact(module: Module, ext: str, classifier: str | None, retrieved: Path, work: Path) -> None:
    """Like :func:`_ivy_retrieve` for one non-jar artifact of one module, without dependencies."""
    org, mod, rev = module
    classifier_attr = f" m:classifier={quoteattr(classifier)}" if classifier else ""
    ivy_xml = work / "ivy.xml"
    ivy_xml.write_text(
        '<ivy-module version="2.0" xmlns:m="http://ant.apache.org/ivy/maven">\n'
        '  <info organisation="sluice.local" module="archive"/>\n'
        "  <dependencies>\n"
        f'    <dependency org={quoteattr(org)} name={quoteattr(mod)} rev={quoteattr(rev)} transitive="false">\n'
        f"      <artifact name={quoteattr(mod)} type={quoteattr(ext)} ext={quoteattr(ext)}{classifier_attr}/>\n"
        "    </dependency>\n"
        "  </dependencies>\n"
        "</ivy-module>\n"
    )
    root = jvm_dir()
    command = [
        str(java_executable()),
        f"-Divy.default.ivy.user.dir={root / 'ivy-home'}",
        "-jar",
        str(_ivy_jar()),
        "-cache",
        str(root / "ivy-cache"),
        "-ivy",
        str(ivy_xml),
        "-retrieve",
        f"{retrieved}/[artifact]-[revision](-[classifier]).[ext]",
    ]
    settings = os.environ.get(IVY_SETTINGS_ENV)
    if settings:
        command[4:4] = ["-settings", settings]
    coords = ":".join([*module, *([classifier] if classifier else [])]) + f"@{ext}"
    ivy_log = work / "ivy.log"
    with open(ivy_log, "w") as out:
        try:
            proc = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, timeout=1800)
        except subprocess.TimeoutExpired as exc:
            raise DevToolsError(f"Resolving {coords} with Ivy timed out.") from exc
    if proc.returncode != 0 or not retrieved.is_dir():
        lines = ivy_log.read_text(errors="replace").splitlines()
        interesting = [ln.strip() for ln in lines if "::" in ln or "ERROR" in ln or "WARN" in ln]
        detail = "\n".join((interesting or lines)[-25:])
        raise DevToolsError(
            f"Could not download {coords} from Maven Central with Ivy (exit code {proc.returncode}). "
            f"Check the network (or set {IVY_SETTINGS_ENV} to an ivysettings.xml for a mirror) and retry.\n"
            f"{detail}"
        )
