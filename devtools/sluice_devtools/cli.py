"""``sluice dev ...``: local services for development, tests and the quickstart.

    sluice dev fetch                          fetch (once) every JVM jar the project uses
    sluice dev console-screenshots [--out D]  the web console's pictures in the docs, taken again
    sluice dev chromium                       install (once) Debian's Chromium for the browser
                                              tests; prints its path and version
    sluice dev kafka start [--dir D] [--port P] [--sasl-ssl]   start a broker, print its
                                              bootstrap address; --sasl-ssl adds a SASL_SSL
                                              listener (user alice, password alice-secret) and
                                              prints its address and client settings
    sluice dev kafka status [--dir D]         exit code 0 when running, 1 when not
    sluice dev kafka stop [--dir D]
    sluice dev spark start|stop|status [--dir D]   a Spark standalone master and worker;
                                              start prints the master URL (spark.master)
    sluice dev registry start|stop|status [--dir D] [--port P]   a Schema Registry (Apicurio,
                                              Confluent-compatible API); start prints its URL
                                              (schema.registry.url)
    sluice dev postgres start|stop|status [--dir D] [--port P]   a private PostgreSQL server
                                              (installed from Debian's package if missing);
                                              start prints its JDBC URL (connection.url),
                                              user and password are sluice/sluice
    sluice dev mariadb start|stop|status [--dir D] [--port P]    the same for MariaDB
    sluice dev s3 start|stop|status [--dir D] [--port P]   an S3 API server (s3proxy, objects
                                              kept on disk); start prints its endpoint URL,
                                              then its bucket (sluice, created), access key,
                                              secret key and region
    sluice dev hdfs start|stop|status [--dir D] [--port P] [--http-port H]   an HDFS cluster
                                              (NameNode and DataNode, formatted at each start);
                                              start prints its URL (fs.defaultFS), then its
                                              WebHDFS URL
    sluice dev opensearch start|stop|status [--dir D] [--port P]   a single-node OpenSearch
                                              (plain HTTP, no security); start prints its URL
                                              (connection.url), then its version
    sluice dev elasticsearch start|stop|status [--dir D] [--port P]   the same for
                                              Elasticsearch (security off)

The default directories are ``<cache>/run/kafka``, ``<cache>/run/spark``,
``<cache>/run/registry``, ``<cache>/run/postgres``, ``<cache>/run/mariadb``,
``<cache>/run/s3``, ``<cache>/run/hdfs``, ``<cache>/run/opensearch`` and
``<cache>/run/elasticsearch``. Also runnable as ``python -m sluice_devtools.cli ...``.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from sluice.jvm import JvmArtifactError
from sluice_devtools import DevToolsError
from sluice_devtools.cache import run_dir
from sluice_devtools.processes import port_if_free

if TYPE_CHECKING:
    from sluice_devtools.kafka import KafkaBroker

# The ports the predefined storage sinks (etc/connect-s3-sink.properties,
# etc/connect-hdfs-sink.properties) expect: taken by `start` when free.
S3_DEFAULT_PORT = 9000
S3_DEFAULT_BUCKET = "sluice"
HDFS_DEFAULT_PORT = 8020
HDFS_DEFAULT_HTTP_PORT = 9870
# etc/connect-elasticsearch-sink.properties: connection.url=http://localhost:9200
SEARCH_DEFAULT_PORT = 9200
SEARCH_COMMANDS = ("opensearch", "elasticsearch")

__all__ = ["dev_main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sluice dev", description="Local services for developing and testing Sluice.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    fetch = commands.add_parser(
        "fetch", help="fetch (once) every JVM jar and server distribution the project uses into the cache"
    )
    fetch.add_argument(
        "--quickstart",
        action="store_true",
        help="only what the quickstart and a worker run: the Kafka broker's and Spark's Kafka jars",
    )
    commands.add_parser(
        "chromium",
        help="install (once) Debian's Chromium for the browser tests ($SLUICE_CHROMIUM overrides); "
        "print its path and version",
    )

    commands.add_parser(
        "console-screenshots",
        help="take the web console's pictures in docs/images again (sluice dev console-screenshots --help)",
        add_help=False,
    )

    kafka = commands.add_parser("kafka", help="a local single-node Kafka broker (KRaft)")
    actions = kafka.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, text in (
        ("start", "start the broker (if not running) and print its bootstrap address"),
        ("stop", "stop the broker"),
        ("status", "print whether the broker runs; exit code 0 if it does, 1 if not"),
    ):
        action = actions.add_parser(name, help=text, description=text)
        action.add_argument(
            "--dir",
            type=Path,
            default=None,
            help="the broker's work directory (default: <cache>/run/kafka)",
        )
        if name == "start":
            action.add_argument("--port", type=int, default=None, help="client port (default: a free one)")
            action.add_argument(
                "--sasl-ssl",
                action="store_true",
                help="add a SASL_SSL listener on another free port (PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, "
                "user alice, password alice-secret; TLS from a test CA in DIR/tls) and print its address "
                "and the Java client settings for it",
            )
            action.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for start-up")
        if name == "stop":
            action.add_argument("--timeout", type=float, default=30.0, help="seconds before SIGKILL")

    spark = commands.add_parser("spark", help="a local Spark standalone cluster (one master, one worker)")
    actions = spark.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, text in (
        ("start", "start master and worker (if not running) and print the master URL"),
        ("stop", "stop worker and master"),
        ("status", "print whether the cluster runs; exit code 0 if it does, 1 if not"),
    ):
        action = actions.add_parser(name, help=text, description=text)
        action.add_argument(
            "--dir", type=Path, default=None, help="the cluster's work directory (default: <cache>/run/spark)"
        )
        if name == "start":
            action.add_argument("--cores", type=int, default=2, help="cores the worker offers (default 2)")
            action.add_argument("--memory", default="1g", help="memory the worker offers (default 1g)")
            action.add_argument("--timeout", type=float, default=90.0, help="seconds to wait for start-up")
        if name == "stop":
            action.add_argument("--timeout", type=float, default=30.0, help="seconds before SIGKILL")

    registry = commands.add_parser(
        "registry", help="a local Schema Registry (Apicurio Registry, Confluent-compatible API)"
    )
    actions = registry.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, text in (
        ("start", "start the registry (if not running) and print its URL (schema.registry.url)"),
        ("stop", "stop the registry"),
        ("status", "print whether the registry runs; exit code 0 if it does, 1 if not"),
    ):
        action = actions.add_parser(name, help=text, description=text)
        action.add_argument(
            "--dir", type=Path, default=None, help="the registry's work directory (default: <cache>/run/registry)"
        )
        if name == "start":
            action.add_argument("--port", type=int, default=None, help="HTTP port (default: a free one)")
            action.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for start-up")
        if name == "stop":
            action.add_argument("--timeout", type=float, default=30.0, help="seconds before SIGKILL")

    for command, label in (("postgres", "PostgreSQL"), ("mariadb", "MariaDB")):
        database = commands.add_parser(
            command, help=f"a private local {label} server (database and user sluice/sluice)"
        )
        actions = database.add_subparsers(dest="action", required=True, metavar="ACTION")
        for name, text in (
            (
                "start",
                f"start {label} (if not running; installs the Debian package when missing) "
                "and print its JDBC URL (connection.url)",
            ),
            ("stop", f"stop {label}"),
            ("status", f"print whether {label} runs; exit code 0 if it does, 1 if not"),
        ):
            action = actions.add_parser(name, help=text, description=text)
            action.add_argument(
                "--dir", type=Path, default=None, help=f"the server's work directory (default: <cache>/run/{command})"
            )
            if name == "start":
                action.add_argument("--port", type=int, default=None, help="TCP port (default: a free one)")
                action.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for start-up")
            if name == "stop":
                action.add_argument("--timeout", type=float, default=30.0, help="seconds before SIGKILL")

    for command, noun, label, start_text, start_timeout in (
        (
            "s3",
            "the S3 server",
            "a local S3 API server (s3proxy; access key sluice, secret key sluice-secret)",
            "start the server (if not running) and print its endpoint URL, keys and region",
            60.0,
        ),
        (
            "hdfs",
            "the HDFS cluster",
            "a local HDFS cluster (NameNode and one DataNode; empty at each start)",
            "start the cluster (if not running) and print its URL (fs.defaultFS) and WebHDFS URL",
            120.0,
        ),
    ):
        storage = commands.add_parser(command, help=label)
        actions = storage.add_subparsers(dest="action", required=True, metavar="ACTION")
        for name, text in (
            ("start", start_text),
            ("stop", f"stop {noun}"),
            ("status", f"print whether {noun} runs; exit code 0 if it does, 1 if not"),
        ):
            action = actions.add_parser(name, help=text, description=text)
            action.add_argument(
                "--dir", type=Path, default=None, help=f"the server's work directory (default: <cache>/run/{command})"
            )
            if name == "start":
                port_help = "NameNode RPC port" if command == "hdfs" else "HTTP port"
                default_port = HDFS_DEFAULT_PORT if command == "hdfs" else S3_DEFAULT_PORT
                port_default = f"default: {default_port} if free, else a free one"
                action.add_argument("--port", type=int, default=None, help=f"{port_help} ({port_default})")
                if command == "hdfs":
                    action.add_argument(
                        "--http-port",
                        type=int,
                        default=None,
                        help=f"NameNode HTTP/WebHDFS port (default: {HDFS_DEFAULT_HTTP_PORT} if free, else a free one)",
                    )
                action.add_argument("--timeout", type=float, default=start_timeout, help="seconds to wait for start-up")
            if name == "stop":
                action.add_argument("--timeout", type=float, default=30.0, help="seconds before SIGKILL")

    for command, label in (("opensearch", "OpenSearch"), ("elasticsearch", "Elasticsearch")):
        search = commands.add_parser(command, help=f"a local single-node {label} cluster (plain HTTP, no security)")
        actions = search.add_subparsers(dest="action", required=True, metavar="ACTION")
        for name, text in (
            ("start", f"start {label} (if not running) and print its URL (connection.url) and version"),
            ("stop", f"stop {label}"),
            ("status", f"print whether {label} runs; exit code 0 if it does, 1 if not"),
        ):
            action = actions.add_parser(name, help=text, description=text)
            action.add_argument(
                "--dir", type=Path, default=None, help=f"the server's work directory (default: <cache>/run/{command})"
            )
            if name == "start":
                action.add_argument(
                    "--port",
                    type=int,
                    default=None,
                    help=f"HTTP port (default: {SEARCH_DEFAULT_PORT} if free, else a free one)",
                )
                action.add_argument("--heap", default="512m", help="the JVM's heap (default 512m)")
                action.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for start-up")
            if name == "stop":
                action.add_argument("--timeout", type=float, default=30.0, help="seconds before SIGKILL")
    return parser


def dev_main(argv: Sequence[str]) -> int:
    """Run ``sluice dev`` with the arguments after ``dev``; returns the exit code."""
    if list(argv[:1]) == ["console-screenshots"]:
        from sluice_devtools.console_screenshots import console_screenshots_main

        try:
            return console_screenshots_main(argv[1:])
        except (DevToolsError, JvmArtifactError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    args = _parser().parse_args(list(argv))
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # a line per request otherwise
    try:
        if args.command == "fetch":
            return _fetch(quickstart=args.quickstart)
        if args.command == "chromium":
            return _chromium()
        return _service(args)
    except (DevToolsError, JvmArtifactError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def _fetch(quickstart: bool) -> int:
    from sluice_devtools.jars import fetch_all, fetch_archives, fetch_quickstart

    started = time.monotonic()
    archives: dict[str, Path] = {}
    if quickstart:
        jar_sets = fetch_quickstart()
    else:
        with ThreadPoolExecutor(max_workers=2) as pool:  # the archives beside the jar sets
            archives_fetched = pool.submit(fetch_archives)
            jar_sets = fetch_all()
            archives = archives_fetched.result()
    for name, jars in jar_sets.items():
        print(f"{name}: {len(jars)} jars in {jars[0].parent}")
    for name, home in archives.items():
        print(f"{name}: {home}")
    elapsed = time.monotonic() - started
    if elapsed > 1:
        print(f"fetched in {elapsed:.1f}s", file=sys.stderr)
    return 0


def _chromium() -> int:
    from sluice_devtools.browsers import chromium_version, ensure_chromium

    executable = ensure_chromium()
    print(executable)
    print(chromium_version(executable))
    return 0


def _service_class(command: str) -> type:
    """The class running the local service of ``sluice dev <command>``."""
    if command == "kafka":
        from sluice_devtools.kafka import KafkaBroker

        return KafkaBroker
    if command == "spark":
        from sluice_devtools.spark_cluster import SparkStandaloneCluster

        return SparkStandaloneCluster
    if command == "registry":
        from sluice_devtools.registry import SchemaRegistry

        return SchemaRegistry
    if command in ("s3", "hdfs"):
        from sluice_devtools.storage_servers import HdfsCluster, S3Server

        return S3Server if command == "s3" else HdfsCluster
    if command in SEARCH_COMMANDS:
        from sluice_devtools.search_servers import ElasticsearchServer, OpenSearchServer

        return OpenSearchServer if command == "opensearch" else ElasticsearchServer
    from sluice_devtools.databases import MariaDbServer, PostgresServer

    return PostgresServer if command == "postgres" else MariaDbServer


def _service(args: argparse.Namespace) -> int:
    """``start`` prints what clients connect to; ``stop``; ``status`` exits 1 when not running."""
    service_class = _service_class(args.command)
    work_dir = args.dir if args.dir is not None else run_dir(args.command)
    if args.action == "start":
        if args.command == "spark":
            options = {"cores": args.cores, "memory": args.memory}
        elif args.command == "hdfs":  # Hadoop's usual ports when free: etc/connect-hdfs-sink.properties uses them
            options = {
                "port": args.port if args.port is not None else port_if_free(HDFS_DEFAULT_PORT),
                "http_port": args.http_port if args.http_port is not None else port_if_free(HDFS_DEFAULT_HTTP_PORT),
            }
        elif args.command == "s3":  # etc/connect-s3-sink.properties expects this port when it was free
            options = {"port": args.port if args.port is not None else port_if_free(S3_DEFAULT_PORT)}
        elif args.command in SEARCH_COMMANDS:  # etc/connect-elasticsearch-sink.properties: port 9200
            options = {
                "port": args.port if args.port is not None else port_if_free(SEARCH_DEFAULT_PORT),
                "heap": args.heap,
            }
        elif args.command == "kafka":
            options = {"port": args.port, "sasl_ssl": args.sasl_ssl}
        else:
            options = {"port": args.port}
        service = service_class(work_dir, **options)
        print(service.start(timeout=args.timeout))  # first line: what clients connect to
        if args.command == "s3":
            service.create_bucket(S3_DEFAULT_BUCKET)  # the bucket etc/connect-s3-sink.properties writes to
            print(f"bucket: {S3_DEFAULT_BUCKET}")
            print(f"access key: {service.access_key}")
            print(f"secret key: {service.secret_key}")
            print(f"region: {service.region}")
        elif args.command == "hdfs":
            print(f"webhdfs: {service.webhdfs_url}")
        elif args.command in SEARCH_COMMANDS:
            print(f"version: {service.distribution} {service.version()}")
        elif args.command == "kafka" and args.sasl_ssl:
            _print_sasl_ssl(service)
        return 0
    service = service_class(work_dir)
    if args.action == "stop":
        stopped = service.stop(timeout=args.timeout)
        print("stopped" if stopped else f"not running (dir {service.work_dir})")
        return 0
    status = service.status()
    print(status)
    return 0 if status.running else 1


def _print_sasl_ssl(broker: KafkaBroker) -> None:
    """The SASL_SSL address, then the client settings for it as a properties file holds them."""
    from sluice_devtools.kafka import SASL_MECHANISMS

    print(f"sasl_ssl: {broker.sasl_ssl_bootstrap}")
    print(
        f"# Java client settings for the SASL_SSL listener; sasl.mechanism may be any of {', '.join(SASL_MECHANISMS)}"
    )
    print(
        f"# (PEM truststore instead: ssl.truststore.type=PEM, ssl.truststore.location={broker.tls.ca_pem}, no password)"
    )
    for key, value in broker.client_properties().items():
        print(f"{key}={value}")


if __name__ == "__main__":
    sys.exit(dev_main(sys.argv[1:]))
