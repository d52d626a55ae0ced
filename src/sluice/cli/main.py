"""Command line: ``sluice standalone|distributed|connector|console`` and the Kafka-style aliases.

``connect-standalone worker.properties conn1.properties …`` behaves as Kafka's
script: exit code 3 when a connector given on the command line cannot be created,
1 for other start-up errors, 0 after a clean shutdown on SIGTERM/SIGINT.

Other distributions add commands through the ``sluice.cli_commands`` entry-point group
(name → a function taking the arguments after the command, returning the exit code). The
development tooling of a source checkout (``devtools/``, installed by ``./dev setup``)
adds ``sluice dev`` and ``sluice quickstart`` this way; without it they say so and fail.
"""

from __future__ import annotations

import argparse
import logging
import signal
import ssl
import sys
import threading
from collections.abc import Callable
from importlib.metadata import EntryPoint
from typing import Any

__all__ = ["COMMANDS_GROUP", "connect_distributed", "connect_standalone", "main", "setup_logging"]

EXIT_CONNECTOR_ERROR = 3

# Entry points adding `sluice <name>` commands: a function (argv after the name) -> exit code.
COMMANDS_GROUP = "sluice.cli_commands"

# Commands of the development tooling (the sluice-devtools distribution of a source
# checkout), listed in `sluice --help` whether or not it is installed.
DEVTOOLS_COMMANDS = {
    "dev": "local services for development: sluice dev kafka|spark|registry|postgres|mariadb start|stop|status, fetch",
    "quickstart": "local broker + Spark + a file source and sink, end to end",
}
BUILTIN_COMMANDS = ("standalone", "distributed", "connector", "console")
CONSOLE_PORT = 9021  # Control Center's
URL_ENV = "SLUICE_URL"


def setup_logging(level: str = "INFO") -> None:
    """The worker's logging on stderr: timestamped lines, libraries' INFO chatter hidden."""
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


def _wait_for_stop(stop: threading.Event) -> None:
    """Wait on the main thread until ``stop`` is set, waking once a second: a signal the
    kernel delivers to another of the process's threads only flags Python's handler, which
    runs when the main thread next runs Python code — an untimed wait would never return."""
    while not stop.wait(1.0):
        pass


def _serve(
    connect: Any, start: Callable[[], None], failure: str, failure_code: int, stop_event: threading.Event | None
) -> int:
    """Start a worker, serve until SIGTERM/SIGINT (or ``stop_event``), stop it."""
    from sluice.runtime.startup import EngineFailed

    log = logging.getLogger("sluice")
    stop = stop_event or threading.Event()
    connect.interrupted = stop  # also set by the worker itself when it cannot run
    if stop_event is None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
    try:
        start()
    except EngineFailed as exc:
        log.error("%s", exc)
        connect.stop()
        return 1
    except Exception as exc:
        log.error("%s: %s", failure, exc, exc_info=failure_code != EXIT_CONNECTOR_ERROR)
        connect.stop()
        return failure_code
    if not stop.is_set():  # not stopped (a signal) while it was starting
        log.info("Sluice worker started; REST API at %s", connect.url)
    _wait_for_stop(stop)
    connect.stop()
    fatal = getattr(connect, "fatal_error", None)
    if fatal is not None:
        log.error("The worker stopped: %s", fatal)
        return 1
    log.info("Sluice worker stopped")
    return 0


def run_standalone(worker_file: str, connector_files: list[str], stop_event: threading.Event | None = None) -> int:
    from sluice.cli.connect import StandaloneConnect, load_connector_file

    try:
        connect = StandaloneConnect(_load_worker_props(worker_file))
    except Exception as exc:  # noqa: BLE001 - any error starting the worker: said in one line, exit 1
        logging.getLogger("sluice").error("Could not start the worker: %s", exc)
        return 1
    try:
        connectors = [load_connector_file(f) for f in connector_files]
    except Exception as exc:  # noqa: BLE001 - a connector file's error (parse, provider, plugin): said, exit code 3
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
    except Exception as exc:  # noqa: BLE001 - any error starting the worker: said in one line, exit 1
        logging.getLogger("sluice").error("Could not start the worker: %s", exc)
        return 1
    return _serve(connect, connect.start, "Could not start the worker", 1, stop_event)


def _distributed(args: argparse.Namespace) -> int:
    if not args.from_env:
        if args.worker_properties is None:
            print("sluice distributed: give a worker properties file, or --from-env", file=sys.stderr)
            return 2
        return run_distributed(args.worker_properties)
    return run_distributed_from_env(args.worker_properties, print_only=args.print_config)


def run_distributed_from_env(
    worker_file: str | None,
    environ: dict[str, str] | None = None,
    print_only: bool = False,
    stop_event: threading.Event | None = None,
) -> int:
    """``sluice distributed --from-env``: the worker properties of the ``CONNECT_*``
    variables (over those of ``worker_file`` when given), as Confluent's image maps them."""
    import os

    from sluice.cli.container_env import log_levels_from_env, worker_props_from_env

    env = dict(os.environ if environ is None else environ)
    props = _load_worker_props(worker_file) if worker_file else {}
    props.update(worker_props_from_env(env))
    try:
        root, loggers = log_levels_from_env(env)
    except ValueError as exc:
        print(f"sluice distributed: {exc}", file=sys.stderr)
        return 2
    if print_only:
        for key, value in sorted(props.items()):
            secret = any(word in key for word in ("password", "jaas.config", "secret"))
            print(f"{key}={'[hidden]' if secret else value}")
        return 0
    if not props:
        print("sluice distributed --from-env: no CONNECT_* variable is set", file=sys.stderr)
        return 2
    from sluice.runtime.loggers import Loggers

    levels = Loggers()
    try:
        if root is not None:
            levels.set_level("root", root)
        for name, level in loggers.items():
            levels.set_level(name, level)
    except Exception as exc:  # noqa: BLE001 - a bad CONNECT_LOG4J_* value: said, exit code 2
        print(f"sluice distributed: CONNECT_LOG4J_*: {exc}", file=sys.stderr)
        return 2
    from sluice.cli.distributed import DistributedConnect

    try:
        connect = DistributedConnect(props)
    except Exception as exc:  # noqa: BLE001 - any error starting the worker: said in one line, exit 1
        logging.getLogger("sluice").error("Could not start the worker: %s", exc)
        return 1
    return _serve(connect, connect.start, "Could not start the worker", 1, stop_event)


def run_console(
    urls: str,
    host: str,
    port: int,
    title: str,
    stop_event: threading.Event | None = None,
    verify: ssl.SSLContext | bool = True,
) -> int:
    """Serve the web console for the Kafka Connect cluster at ``urls`` until SIGTERM/SIGINT;
    ``verify`` is how https workers are checked."""
    from sluice.console.app import standalone_console_app
    from sluice.rest.server import RestServer

    try:
        app = standalone_console_app(urls.split(","), title=title, verify=verify)
    except ValueError as exc:
        print(f"sluice console: {exc}", file=sys.stderr)
        return 2
    shown = f"[{host}]" if ":" in host else host
    server = RestServer(None, [f"http://{shown}:{port}"], app=app)
    try:
        server.start()
    except (OSError, RuntimeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        print(f"sluice console: cannot listen on {host}:{port}: {reason}", file=sys.stderr)
        return 1
    stop = stop_event or threading.Event()
    if stop_event is None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
    # printed once it serves: scripts and tests read the address from this line
    print(f"Console for {urls} at {server.url}/ui/", flush=True)
    _wait_for_stop(stop)
    server.stop()
    return 0


def _console(args: argparse.Namespace) -> int:
    import os

    from sluice.cli.manage import UsageError, tls_verify_from

    url = args.url or os.environ.get(URL_ENV) or "http://localhost:8083"
    try:
        verify = tls_verify_from(args)
    except UsageError as exc:
        print(f"sluice console: {exc.message}", file=sys.stderr)
        return 2
    return run_console(url, args.host, args.port, args.title, verify=verify)


def extension_commands() -> dict[str, EntryPoint]:
    """The commands other installed distributions add (``sluice.cli_commands`` entry points).

    A name the CLI already has is not replaced; of two distributions adding the same name,
    the first found wins.
    """
    from importlib.metadata import entry_points

    found: dict[str, EntryPoint] = {}
    for entry in entry_points(group=COMMANDS_GROUP):
        if entry.name not in BUILTIN_COMMANDS:
            found.setdefault(entry.name, entry)
    return found


def _run_extension(name: str, argv: list[str], extensions: dict[str, EntryPoint], log_level: str | None) -> int:
    entry = extensions.get(name)
    if entry is None:
        print(
            f"sluice {name} needs the development tooling from a source checkout: ./dev setup "
            "(it installs the sluice-devtools distribution, devtools/ beside src/, into the environment)",
            file=sys.stderr,
        )
        return 1
    try:
        command = entry.load()
    except (ImportError, AttributeError) as exc:
        print(f"sluice {name}: cannot load {entry.value} (entry point of {COMMANDS_GROUP}): {exc}", file=sys.stderr)
        return 1
    if log_level is not None:
        setup_logging(log_level)  # the command's own logging set-up then keeps this one
    return int(command(argv))


def build_parser(extensions: dict[str, EntryPoint] | None = None) -> argparse.ArgumentParser:
    """The ``sluice`` parser; commands added by other distributions take their arguments unparsed."""
    from sluice.cli.manage import add_tls_options

    if extensions is None:
        extensions = extension_commands()
    parser = argparse.ArgumentParser(prog="sluice", description="Kafka Connect in Python, on Spark.")
    parser.add_argument("--log-level", default=None, help="log level of the worker (default INFO)")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("standalone", help="run a standalone worker")
    p.add_argument("worker_properties")
    p.add_argument("connector_files", nargs="*")
    p.set_defaults(func=_standalone)
    p = sub.add_parser("distributed", help="run a distributed worker")
    p.add_argument("worker_properties", nargs="?", default=None)
    p.add_argument(
        "--from-env",
        action="store_true",
        help="worker properties from CONNECT_* environment variables, as Confluent's cp-kafka-connect "
        "image maps them (over the file's, when one is given); CONNECT_LOG4J_ROOT_LOGLEVEL and "
        "CONNECT_LOG4J_LOGGERS set log levels",
    )
    p.add_argument("--print-config", action="store_true", help="with --from-env: print the properties and exit")
    p.set_defaults(func=_distributed)
    p = sub.add_parser(
        "connector", help="manage connectors through a worker's REST API: sluice connector --help", add_help=False
    )
    p.set_defaults(func=None)
    p = sub.add_parser("console", help="a web console in front of a Kafka Connect cluster (Sluice or Apache Kafka's)")
    p.add_argument(
        "--url",
        default=None,
        help=f"the REST URL of a worker of the cluster, or several comma-separated (default: ${URL_ENV} or "
        "http://localhost:8083)",
    )
    p.add_argument("--host", default="127.0.0.1", help="the address to serve the console on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=CONSOLE_PORT, help=f"the port (default {CONSOLE_PORT}; 0: any free one)")
    p.add_argument("--title", default="Kafka Connect", help="the name the pages show for the cluster")
    add_tls_options(p)
    p.set_defaults(func=_console)
    for name in sorted({*DEVTOOLS_COMMANDS, *extensions}):
        entry = extensions.get(name)
        if name in DEVTOOLS_COMMANDS:
            text = DEVTOOLS_COMMANDS[name] + ("" if entry else " (needs the development tooling: ./dev setup)")
        else:
            text = f"added by {entry.dist.name}" if entry is not None and entry.dist is not None else "an added command"
        p = sub.add_parser(name, help=f"{text}; sluice {name} --help", add_help=False)
        p.set_defaults(func=None, extension=name)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "connector":
        from sluice.cli.manage import main as connector_main

        return connector_main(argv[1:], prog="sluice connector")
    extensions = extension_commands()
    parser = build_parser(extensions)
    # An added command parses its own arguments: they are left over here.
    args, rest = parser.parse_known_args(argv)
    extension = getattr(args, "extension", None)
    if extension is not None:
        return _run_extension(extension, rest, extensions, args.log_level)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    setup_logging(args.log_level or "INFO")
    return int(args.func(args))


def connect_standalone(argv: list[str] | None = None) -> int:
    return main(["standalone", *(sys.argv[1:] if argv is None else argv)])


def connect_distributed(argv: list[str] | None = None) -> int:
    return main(["distributed", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
