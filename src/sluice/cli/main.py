"""Command line: ``sluice standalone|distributed|dev|quickstart`` and the Kafka-style aliases.

``connect-standalone worker.properties conn1.properties …`` behaves as Kafka's
script: exit code 3 when a connector given on the command line cannot be created,
1 for other start-up errors, 0 after a clean shutdown on SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["connect_distributed", "connect_standalone", "main"]

EXIT_CONNECTOR_ERROR = 3


def _setup_logging(level: str = "INFO") -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)",
        stream=sys.stderr,
    )
    # Libraries' INFO lines are about their own workings (connections, reconnections,
    # group coordination), not the worker's: at INFO the log says what the worker does.
    # "kafka" is kafka-python (group membership), "sluice.storage.librdkafka" the
    # librdkafka clients of the Kafka-backed stores.
    for noisy in ("py4j", "pyspark", "uvicorn.access", "httpx2", "httpcore", "kafka", "sluice.storage.librdkafka"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def _load_worker_props(path: str) -> dict[str, str]:
    import javaproperties

    with open(path, "rb") as fp:
        return dict(javaproperties.load(fp))


def _serve(
    connect: Any, start: Callable[[], None], failure: str, failure_code: int, stop_event: threading.Event | None
) -> int:
    """Start a worker, serve until SIGTERM/SIGINT (or ``stop_event``), stop it."""
    log = logging.getLogger("sluice")
    stop = stop_event or threading.Event()
    if stop_event is None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
    try:
        start()
    except Exception as exc:
        log.error("%s: %s", failure, exc, exc_info=failure_code != EXIT_CONNECTOR_ERROR)
        connect.stop()
        return failure_code
    log.info("Sluice worker started; REST API at %s", connect.url)
    stop.wait()
    connect.stop()
    log.info("Sluice worker stopped")
    return 0


def run_standalone(worker_file: str, connector_files: list[str], stop_event: threading.Event | None = None) -> int:
    from sluice.cli.connect import StandaloneConnect, load_connector_file

    try:
        connect = StandaloneConnect(_load_worker_props(worker_file))
    except Exception as exc:
        logging.getLogger("sluice").error("Could not start the worker: %s", exc)
        return 1
    try:
        connectors = [load_connector_file(f) for f in connector_files]
    except Exception as exc:
        logging.getLogger("sluice").error("Invalid connector file: %s", exc)
        return EXIT_CONNECTOR_ERROR
    return _serve(
        connect, lambda: connect.start(connectors), "Failed to create a connector", EXIT_CONNECTOR_ERROR, stop_event
    )


def _standalone(args: argparse.Namespace) -> int:
    return run_standalone(args.worker_properties, args.connector_files)


def run_distributed(worker_file: str, stop_event: threading.Event | None = None) -> int:
    from sluice.cli.distributed import DistributedConnect

    try:
        connect = DistributedConnect(_load_worker_props(worker_file))
    except Exception as exc:
        logging.getLogger("sluice").error("Could not start the worker: %s", exc)
        return 1
    return _serve(connect, connect.start, "Could not start the worker", 1, stop_event)


def _distributed(args: argparse.Namespace) -> int:
    return run_distributed(args.worker_properties)


def _dev(args: argparse.Namespace, rest: list[str]) -> int:
    from sluice.devtools.cli import dev_main

    return dev_main(rest)


def _quickstart(args: argparse.Namespace) -> int:
    from sluice.cli.quickstart import run_quickstart

    return run_quickstart(lines=args.lines, exit_after=args.exit, work_dir=args.dir)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sluice", description="Kafka Connect in Python, on Spark.")
    parser.add_argument("--log-level", default="INFO")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("standalone", help="run a standalone worker")
    p.add_argument("worker_properties")
    p.add_argument("connector_files", nargs="*")
    p.set_defaults(func=_standalone)
    p = sub.add_parser("distributed", help="run a distributed worker")
    p.add_argument("worker_properties")
    p.set_defaults(func=_distributed)
    p = sub.add_parser(
        "dev", help="local services for development: sluice dev kafka start|stop|status, fetch", add_help=False
    )
    p.set_defaults(func=None)
    p = sub.add_parser("quickstart", help="local broker + Spark + a file source and sink, end to end")
    p.add_argument("--lines", type=int, default=5, help="lines to append to the input file")
    p.add_argument("--exit", action="store_true", help="stop everything after the demonstration")
    p.add_argument("--dir", default=None, help="work directory (default: <cache>/run/quickstart)")
    p.set_defaults(func=_quickstart)
    p = sub.add_parser(
        "connector", help="manage connectors through a worker's REST API: sluice connector --help", add_help=False
    )
    p.set_defaults(func=None)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv and argv[0] == "dev":
        return _dev(argparse.Namespace(), argv[1:])
    if argv and argv[0] == "connector":
        from sluice.cli.manage import main as connector_main

        return connector_main(argv[1:], prog="sluice connector")
    args = parser.parse_args(argv)
    _setup_logging(args.log_level)
    return int(args.func(args))


def connect_standalone(argv: list[str] | None = None) -> int:
    return main(["standalone", *(sys.argv[1:] if argv is None else argv)])


def connect_distributed(argv: list[str] | None = None) -> int:
    return main(["distributed", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
