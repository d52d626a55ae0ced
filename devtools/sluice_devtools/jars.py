"""The development tooling's JVM artifacts from Maven Central, fetched once into the cache.

Apache Kafka's broker and tools, Apache Kafka Connect (the benchmarks' and parity tests'
reference), the storage servers (s3proxy, Hadoop's HDFS minicluster) and single archives
(the Schema Registry's distribution; OpenSearch's and Elasticsearch's, unpacked with their
files' Unix modes), resolved with the Ivy machinery of :mod:`sluice.jvm.jars` into the same
cache, under the same file locks and with the same all-or-nothing directories.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import stat
import tempfile
import time
import zipfile
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar
from xml.sax.saxutils import quoteattr

from sluice.jvm import JvmArtifactError
from sluice.jvm.cache import jvm_dir
from sluice.jvm.connect_runtime import CONNECT_MODULES, CONNECT_VERSION, LOG4J_VERSION
from sluice.jvm.jars import COMPLETE_MARKER, Module, fetch_lock, jar_set, run_ivy, spark_kafka_jars

__all__ = [
    "DEBEZIUM_VERSION",
    "ELASTICSEARCH_VERSION",
    "HADOOP_VERSION",
    "HDFS_MINICLUSTER_MODULES",
    "KAFKA_BROKER_MODULES",
    "KAFKA_CONNECT_MODULES",
    "KAFKA_VERSION",
    "LOG4J_VERSION",
    "OPENSEARCH_VERSION",
    "S3PROXY_CLASSIFIER",
    "S3PROXY_JAR",
    "S3PROXY_VERSION",
    "debezium_postgres_plugin",
    "debezium_postgres_plugin_archive",
    "elasticsearch_home",
    "fetch_all",
    "fetch_archives",
    "hdfs_minicluster_classpath",
    "kafka_broker_classpath",
    "kafka_connect_classpath",
    "kafka_connect_test_plugins_classpath",
    "maven_archive",
    "mirror_maker_plugin",
    "opensearch_home",
    "s3proxy_classpath",
]

log = logging.getLogger(__name__)

# The project's Kafka release, broker and Connect alike, and the log4j2 backend both run with.
KAFKA_VERSION = CONNECT_VERSION

# The broker, its admin/perf tools (StorageTool, ProducerPerformance, ...) and a log4j2
# backend for Kafka's SLF4J logging.
KAFKA_BROKER_MODULES: tuple[Module, ...] = (
    ("org.apache.kafka", "kafka_2.13", KAFKA_VERSION),
    ("org.apache.kafka", "kafka-tools", KAFKA_VERSION),
    ("org.apache.logging.log4j", "log4j-core", LOG4J_VERSION),
    ("org.apache.logging.log4j", "log4j-slf4j-impl", LOG4J_VERSION),
)

# Apache Kafka Connect's runtime (with its JsonConverter) and the same log4j2 backend, for
# side-by-side benchmarks; the worker's own set for Java plugins. Spark's kafka-clients must
# never be on this classpath (connect-runtime 4.3.1 does not run with it).
KAFKA_CONNECT_MODULES: tuple[Module, ...] = CONNECT_MODULES

# The reference file connectors: not on Connect's classpath since Kafka 3.2, loaded from a
# plugin.path directory. Only the connect-file jar itself is kept (its dependencies are
# Connect's own).
KAFKA_CONNECT_FILE_MODULE: Module = ("org.apache.kafka", "connect-file", KAFKA_VERSION)
# Kafka's MockConnector/MockSourceConnector/MockSinkConnector (connectors that fail on
# demand) and the verifiable and schema sources, which Kafka ships apart since 3.6. They
# go on the worker's classpath: Connect loads org.apache.kafka.connect.tools classes from
# its own class loader, never from a plugin.path directory.
KAFKA_CONNECT_TEST_PLUGINS_MODULE: Module = ("org.apache.kafka", "connect-test-plugins", KAFKA_VERSION)

# Debezium's PostgreSQL connector, a Java plugin as users install it: the connector's jars
# and their dependencies (Debezium's core, the PostgreSQL driver, protobuf), not Kafka's
# own (Debezium declares those "provided": the worker has them).
DEBEZIUM_VERSION = "3.6.1.Final"
DEBEZIUM_POSTGRES_MODULE: Module = ("io.debezium", "debezium-connector-postgres", DEBEZIUM_VERSION)

# MirrorMaker 2's connectors (MirrorSource, MirrorCheckpoint, MirrorHeartbeat), a Java
# plugin: connect-mirror and its client library; the rest of their closure is Connect's.
MIRROR_MODULES: tuple[Module, ...] = (
    ("org.apache.kafka", "connect-mirror", KAFKA_VERSION),
    ("org.apache.kafka", "connect-mirror-client", KAFKA_VERSION),
)

# The S3 API server of sluice_devtools.storage_servers (Java 17): the one jar s3proxy
# publishes with its dependencies inside. Resolving the plain artifact's 198 dependencies
# one after another took five minutes on a cold cache, the longest wait of ./dev setup.
S3PROXY_VERSION = "4.0.0"
S3PROXY_JAR: Module = ("org.gaul", "s3proxy", S3PROXY_VERSION)
S3PROXY_CLASSIFIER = "jar-with-dependencies"

# The HDFS cluster of sluice_devtools.storage_servers: the Hadoop version PySpark's
# hadoop-client jars have (3.5.0 in PySpark 4.2). Hadoop's shaded minicluster holds
# MiniHadoopClusterManager and MiniDFSCluster with their dependencies inside (relocated);
# slf4j-reload4j gives them log4j 1 to log with. Nine jars, where hadoop-minicluster's 196
# took three and a half minutes to resolve one after another on a cold cache.
HADOOP_VERSION = "3.5.0"
HDFS_MINICLUSTER_MODULES: tuple[Module, ...] = (
    ("org.apache.hadoop", "hadoop-client-minicluster", HADOOP_VERSION),
    ("org.slf4j", "slf4j-reload4j", "1.7.36"),
)

# The search servers of sluice_devtools.search_servers: the "integ-test" distributions
# (the server and its transport module, Elasticsearch's also x-pack-core/security and apm;
# no plugins, no bundled JDK; Java 17), one zip each, unpacked once into the cache.
OPENSEARCH_VERSION = "2.19.6"
OPENSEARCH_ARCHIVE: Module = ("org.opensearch.distribution.integ-test-zip", "opensearch", OPENSEARCH_VERSION)
ELASTICSEARCH_VERSION = "8.19.21"
ELASTICSEARCH_ARCHIVE: Module = (
    "org.elasticsearch.distribution.integ-test-zip",
    "elasticsearch",
    ELASTICSEARCH_VERSION,
)


def kafka_broker_classpath() -> list[Path]:
    """The jars that run Apache Kafka's broker and tools (``java -cp``), fetched on first use."""
    return jar_set(f"kafka-{KAFKA_VERSION}", KAFKA_BROKER_MODULES)


def kafka_connect_classpath() -> tuple[list[Path], Path]:
    """Apache Kafka Connect: the runtime's jars (``java -cp``) and a ``plugin.path`` directory.

    The directory holds ``connect-file-<version>.jar`` (FileStreamSource/FileStreamSink)
    and nothing else that Connect would load; the classpath ends with Kafka's test plugins
    (the Mock connectors). Both are fetched on first use. Run the
    worker with ``org.apache.kafka.connect.cli.ConnectStandalone`` on this classpath
    only: it must not be mixed with :func:`sluice.jvm.jars.spark_kafka_jars`.
    """
    runtime = jar_set(f"kafka-connect-{KAFKA_VERSION}", KAFKA_CONNECT_MODULES)
    test_plugins = jar_set(
        f"kafka-connect-test-plugins-{KAFKA_VERSION}",
        (KAFKA_CONNECT_TEST_PLUGINS_MODULE,),
        keep=lambda artifact: artifact == KAFKA_CONNECT_TEST_PLUGINS_MODULE[1],
    )
    plugin = _plugin_dir(
        f"kafka-connect-file-{KAFKA_VERSION}",
        (KAFKA_CONNECT_FILE_MODULE,),
        keep=lambda artifact: artifact == KAFKA_CONNECT_FILE_MODULE[1],
    )
    return [*runtime, *test_plugins], plugin


def kafka_connect_test_plugins_classpath() -> list[Path]:
    """What a worker's ``CLASSPATH`` needs for Kafka's test connectors (Mock, Verifiable):
    their jar, and kafka-server-common (the Verifiable source's throttle), both of which a
    Kafka distribution has in ``libs/``."""
    classpath, _ = kafka_connect_classpath()
    test_plugins = [p for p in classpath if p.name.startswith("connect-test-plugins-")]
    server_common = [p for p in kafka_broker_classpath() if p.name.startswith("kafka-server-common-")]
    return [*test_plugins, *server_common]


# What the worker gives every plugin (Kafka's API and clients, logging) and kafka-clients'
# compression libraries, which come with it: not part of a plugin's directory.
_WORKER_OWN = ("kafka-", "connect-", "slf4j-", "log4j")
_KAFKA_CLIENTS_OWN = frozenset({"lz4-java", "snappy-java", "zstd-jni"})


def debezium_postgres_plugin() -> Path:
    """A directory of Debezium's PostgreSQL connector jars, fetched on first use: one plugin,
    to be linked or copied into a directory on ``plugin.path`` (the cache itself is not one)."""
    return _plugin_dir(
        f"debezium-connector-postgres-{DEBEZIUM_VERSION}",
        (DEBEZIUM_POSTGRES_MODULE,),
        keep=lambda artifact: artifact not in _KAFKA_CLIENTS_OWN and not artifact.startswith(_WORKER_OWN),
    )


def debezium_postgres_plugin_archive() -> Path:
    """Debezium's PostgreSQL connector as Debezium publishes it for Kafka Connect — its plugin
    archive (``debezium-connector-postgres-<version>-plugin.tar.gz`` on Maven Central),
    fetched and unpacked on first use: the ``debezium-connector-postgres`` directory a user
    unpacks into a ``plugin.path`` directory. It bundles the Connect API and Kafka's clients,
    which Kafka's plugin isolation takes from the worker instead."""
    unpacked = maven_archive(*DEBEZIUM_POSTGRES_MODULE, classifier="plugin")
    return unpacked / "debezium-connector-postgres"


def mirror_maker_plugin() -> Path:
    """A directory of MirrorMaker 2's connector jars (Kafka's ``connect-mirror`` and
    ``connect-mirror-client``), fetched on first use: one plugin, to be linked or copied into
    a directory on ``plugin.path``."""
    wanted = {artifact for _, artifact, _ in MIRROR_MODULES}
    return _plugin_dir(f"connect-mirror-{KAFKA_VERSION}", MIRROR_MODULES, keep=lambda artifact: artifact in wanted)


def _plugin_dir(name: str, modules: tuple[Module, ...], keep: Callable[[str], bool]) -> Path:
    """The cache directory of a jar set fetched to be one plugin: what a plugin.path entry links to."""
    return jar_set(name, modules, keep=keep)[0].parent


def s3proxy_classpath() -> list[Path]:
    """The jar that runs s3proxy (``org.gaul.s3proxy.Main``), fetched on first use."""
    organisation, artifact, revision = S3PROXY_JAR
    home = maven_archive(organisation, artifact, revision, ext="jar", classifier=S3PROXY_CLASSIFIER)
    return [home / f"{artifact}-{revision}-{S3PROXY_CLASSIFIER}.jar"]


def hdfs_minicluster_classpath() -> list[Path]:
    """The jars that run Hadoop's minicluster (``MiniHadoopClusterManager``), fetched on first use."""
    return jar_set(f"hadoop-client-minicluster-{HADOOP_VERSION}", HDFS_MINICLUSTER_MODULES)


def fetch_quickstart() -> dict[str, list[Path]]:
    """Fetch what the quickstart runs: a Kafka broker, and a worker's Spark Kafka jars.
    The other services' jars are fetched by whatever starts them, on first use."""
    return _side_by_side({"kafka-broker": kafka_broker_classpath, "spark-kafka": spark_kafka_jars})


def fetch_all() -> dict[str, list[Path]]:
    """Fetch every jar set the project uses, side by side; a no-op (and offline) once cached."""

    def kafka_connect() -> list[Path]:  # the benchmarks' reference, and Java plugins' tests
        classpath, plugins = kafka_connect_classpath()
        return [*classpath, plugins]

    return _side_by_side(
        {
            "kafka-broker": kafka_broker_classpath,
            "spark-kafka": spark_kafka_jars,
            "kafka-connect": kafka_connect,
            "debezium-postgres": lambda: [debezium_postgres_plugin()],
            "debezium-postgres-archive": lambda: [debezium_postgres_plugin_archive()],
            "connect-mirror": lambda: [mirror_maker_plugin()],
            "s3proxy": s3proxy_classpath,
            "hdfs-minicluster": hdfs_minicluster_classpath,
        }
    )


_T = TypeVar("_T")


def _side_by_side(fetches: Mapping[str, Callable[[], _T]]) -> dict[str, _T]:
    """Each fetch's result by name, the fetches run on threads of their own: a cold fetch
    waits on Maven Central for each of its artifacts in turn (s3proxy's 198 jars take
    minutes), so sets fetched together take as long as the slowest instead of the sum.
    Every fetch ends before the first failure, in the order given, is raised."""
    with ThreadPoolExecutor(max_workers=len(fetches)) as pool:  # its end waits for them all
        futures = {name: pool.submit(fetch) for name, fetch in fetches.items()}
    return {name: future.result() for name, future in futures.items()}


def opensearch_home() -> Path:
    """OpenSearch's distribution (``OPENSEARCH_HOME``: ``bin/``, ``config/``, ``lib/``), fetched on first use."""
    return _distribution_home(OPENSEARCH_ARCHIVE)


def elasticsearch_home() -> Path:
    """Elasticsearch's distribution (``ES_HOME``: ``bin/``, ``config/``, ``lib/``), fetched on first use."""
    return _distribution_home(ELASTICSEARCH_ARCHIVE)


def fetch_archives() -> dict[str, Path]:
    """Fetch the search servers' distributions (about 170 MB unpacked), side by side; a
    no-op once cached."""
    return _side_by_side({"opensearch": opensearch_home, "elasticsearch": elasticsearch_home})


def _distribution_home(module: Module) -> Path:
    """The one top directory (``<artifact>-<version>/``) of an unpacked distribution zip."""
    organisation, artifact, revision = module
    unpacked = maven_archive(organisation, artifact, revision, ext="zip")
    home = unpacked / f"{artifact}-{revision}"
    if not (home / "bin" / artifact).is_file():
        raise JvmArtifactError(f"{unpacked} holds no {artifact}-{revision}/bin/{artifact}; delete it and retry.")
    return home


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
    """A Maven Central archive (``tar.gz``/``tgz``/``zip``), fetched once and unpacked in the
    cache; or one ``jar``, kept as it is.

    Resolves exactly one artifact (``organisation:artifact:revision[:classifier]@ext``, no
    dependencies) with the same Ivy command line as the jar sets, unpacks it (or puts the jar)
    into ``<jvm cache>/<name>`` (default ``<artifact>-<revision>[-<classifier>]``) and returns
    that directory. As with jar sets, the directory is either complete (a marker file is
    written last) or absent, and concurrent fetches of it are serialised by a file lock; a
    downloaded archive is not kept once unpacked.
    """
    module: Module = (organisation, artifact, revision)
    dest_name = name or "-".join(p for p in (artifact, revision, classifier) if p)
    root = jvm_dir()
    dest = root / dest_name
    identity = {"module": list(module), "ext": ext, "classifier": classifier}
    if _archive_complete(dest, identity):
        return dest
    with fetch_lock(dest_name):
        if _archive_complete(dest, identity):
            return dest
        coords = ":".join([*module, *([classifier] if classifier else [])]) + f"@{ext}"
        log.info("Fetching %s from Maven Central into %s (first use only) ...", coords, dest)
        started = time.monotonic()
        work = Path(tempfile.mkdtemp(prefix=f".{dest_name}.", dir=root))
        try:
            retrieved = work / "retrieved"
            _ivy_retrieve_artifact(module, ext, classifier, retrieved, work, coords)
            archives = sorted(p for p in retrieved.iterdir() if p.is_file())
            if len(archives) != 1:
                raise JvmArtifactError(f"Resolving {coords} with Ivy retrieved {len(archives)} files, expected 1.")
            out = work / "out"
            out.mkdir()
            if ext == "jar":
                os.replace(archives[0], out / archives[0].name)
            else:
                _unpack(archives[0], ext, out)
                archives[0].unlink()
            (out / COMPLETE_MARKER).write_text(json.dumps(identity, indent=2) + "\n")
            if dest.exists():  # left by an interrupted older layout
                shutil.rmtree(dest)
            os.rename(out, dest)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        log.info("Fetched %s into %s in %.1fs", coords, dest, time.monotonic() - started)
    return dest


def _archive_complete(dest: Path, identity: Mapping[str, object]) -> bool:
    try:
        return bool(json.loads((dest / COMPLETE_MARKER).read_text()) == identity)
    except (OSError, ValueError):
        return False


def _unpack(archive: Path, ext: str, out: Path) -> None:
    import tarfile

    try:
        if ext == "zip":
            with zipfile.ZipFile(archive) as zf:
                for member in zf.namelist():
                    _check_member(member, out)
                zf.extractall(out)
                _apply_zip_modes(zf, out)
        else:
            with tarfile.open(archive) as tf:
                tf.extractall(out, filter="data")
    except (OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
        raise JvmArtifactError(f"Could not unpack {archive.name}: {exc}") from exc


def _apply_zip_modes(zf: zipfile.ZipFile, out: Path) -> None:
    """Give the unpacked files the Unix permissions the zip records (``zipfile`` drops them:
    launch scripts would lose their exec bits). The owner keeps read and write access."""
    for info in zf.infolist():
        mode = info.external_attr >> 16
        if info.create_system != 3 or not mode or stat.S_ISLNK(mode):  # not from Unix, or no mode
            continue
        owner = 0o700 if info.is_dir() else 0o600
        os.chmod(out / info.filename, stat.S_IMODE(mode) & 0o777 | owner)


def _check_member(member: str, out: Path) -> None:
    target = (out / member).resolve()
    if not target.is_relative_to(out.resolve()):
        raise JvmArtifactError(f"Archive member {member!r} would be written outside {out}.")


def _ivy_retrieve_artifact(
    module: Module, ext: str, classifier: str | None, retrieved: Path, work: Path, coords: str
) -> None:
    """One non-jar artifact of one module, without dependencies, into ``retrieved``."""
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
    run_ivy(ivy_xml, retrieved, "[artifact]-[revision](-[classifier]).[ext]", work, coords, confs=None)
