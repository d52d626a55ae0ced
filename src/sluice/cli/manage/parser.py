"""The argument parser of ``sluice connector``: global options, one subparser per command
(bound to its ``cmd_*`` function) and the types of their arguments."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from sluice.cli.manage.client import DEFAULT_URL, URL_ENV, USER_ENV
from sluice.cli.manage.commands import (
    Context,
    cmd_config,
    cmd_list,
    cmd_load,
    cmd_loggers,
    cmd_offsets,
    cmd_pause,
    cmd_plugins,
    cmd_restart,
    cmd_resume,
    cmd_status,
    cmd_stop,
    cmd_topics,
    cmd_unload,
    cmd_validate,
)
from sluice.cli.manage.tls import add_tls_options
from sluice.cli.manage.waiting import WAIT_TIMEOUT


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def _task_id(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a task number: {text}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("task numbers start at 0")
    return value


def build_parser(prog: str = "sluice connector") -> argparse.ArgumentParser:
    # --url and --json are accepted before and after the command. On the commands they
    # default to SUPPRESS so they do not overwrite a value given before the command.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--url", default=argparse.SUPPRESS, help=f"the Connect worker's REST URL (default: ${URL_ENV} or {DEFAULT_URL})"
    )
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print the server's JSON instead of tables"
    )
    common.add_argument(
        "--user",
        default=argparse.SUPPRESS,
        help=f"NAME:PASSWORD for a worker with basic authentication (default: ${USER_ENV})",
    )
    add_tls_options(common, default=argparse.SUPPRESS)

    parser = argparse.ArgumentParser(
        prog=prog,
        description="Manage the connectors of a Kafka Connect worker through its REST API.",
        epilog="Exit codes: 0 done, 1 error answered by the worker (or validation errors), 2 usage error, "
        "3 worker unreachable, 4 --wait saw a FAILED connector or task, 5 --wait timed out.",
    )
    parser.add_argument(
        "--url", default=None, help=f"the Connect worker's REST URL (default: ${URL_ENV} or {DEFAULT_URL})"
    )
    parser.add_argument("--json", action="store_true", default=False, help="print the server's JSON instead of tables")
    parser.add_argument(
        "--user", default=None, help=f"NAME:PASSWORD for a worker with basic authentication (default: ${USER_ENV})"
    )
    add_tls_options(parser, default=None)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, func: Callable[[Context], int], help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help, description=help)
        p.set_defaults(func=func)
        return p

    def waiting(p: argparse.ArgumentParser, what: str) -> None:
        p.add_argument("--wait", action="store_true", help=f"wait until {what}; FAILED ends the wait (exit 4)")
        p.add_argument(
            "--timeout",
            type=_positive_float,
            default=WAIT_TIMEOUT,
            metavar="SECONDS",
            help=f"how long --wait waits (default {WAIT_TIMEOUT:g})",
        )

    def file_option(p: argparse.ArgumentParser, help: str) -> None:
        p.add_argument("-d", "--file", "--config", dest="file", metavar="FILE", help=help)

    def set_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--set",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="set a config key (repeatable; applied over the file)",
        )

    p = command("load", cmd_load, "create a connector, or update its config (PUT /connectors/NAME/config)")
    p.add_argument("name", metavar="NAME", help="connector name; alone, a predefined connector (see list --predefined)")
    file_option(p, 'connector config: Java properties, a JSON map or {"name", "config"} (\'-\' reads stdin)')
    set_option(p)
    waiting(p, "the connector and its tasks are RUNNING (or the requested initial state)")

    p = command("unload", cmd_unload, "delete a connector")
    p.add_argument("name", metavar="NAME")

    p = command("list", cmd_list, "list connectors with their states")
    p.add_argument("--predefined", action="store_true", help="list the predefined connectors that load knows")
    p.add_argument(
        "--expand",
        action="append",
        choices=["status", "info"],
        help="with --json: GET /connectors?expand=… (repeatable)",
    )

    p = command("plugins", cmd_plugins, "list connector plugins, or show one plugin's config keys")
    p.add_argument("plugin", nargs="?", metavar="PLUGIN", help="a plugin class or alias: show its config definition")
    p.add_argument("--all", action="store_true", help="also converters, transformations and predicates")

    p = command(
        "status", cmd_status, "show a connector's status with its tasks and traces (all connectors without NAME)"
    )
    p.add_argument("name", nargs="?", metavar="NAME")

    p = command("config", cmd_config, "show a connector's config, or update it")
    p.add_argument("name", metavar="NAME")
    file_option(p, "replace the config with this file (properties or JSON)")
    set_option(p)
    p.add_argument("--unset", action="append", default=[], metavar="KEY", help="remove a config key (repeatable)")

    for verb, func, state, help in (
        ("pause", cmd_pause, "PAUSED", "pause a connector and its tasks"),
        ("resume", cmd_resume, "RUNNING", "resume a paused or stopped connector"),
        ("stop", cmd_stop, "STOPPED", "stop a connector and shut its tasks down (offsets can then be changed)"),
    ):
        p = command(verb, func, help)
        p.add_argument("name", metavar="NAME")
        waiting(p, f"the connector and its tasks are {state}")

    p = command("restart", cmd_restart, "restart a connector (and its tasks), or one task")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--include-tasks", action="store_true", help="restart the tasks too")
    p.add_argument("--only-failed", action="store_true", help="restart only the FAILED instances")
    p.add_argument("--task", type=_task_id, metavar="N", help="restart only task N")
    waiting(p, "the restarted connector and tasks are back in their state")

    p = command("topics", cmd_topics, "show the topics a connector has used")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--reset", action="store_true", help="forget the connector's active topics")

    p = command("offsets", cmd_offsets, "show, alter or reset a connector's offsets (alter/reset need it STOPPED)")
    offsets = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    for action, help in (
        ("get", "show the offsets"),
        ("alter", "alter offsets from a JSON file"),
        ("reset", "reset every offset"),
    ):
        q = offsets.add_parser(action, parents=[common], help=help, description=help)
        q.add_argument("name", metavar="NAME")
        if action == "alter":
            file_option(q, 'JSON {"offsets": [{"partition": {…}, "offset": {…}}]} (a bare list too; \'-\' reads stdin)')
        else:
            q.set_defaults(file=None)

    p = command("validate", cmd_validate, "validate a connector config; exit 1 when it has errors")
    p.add_argument("name", nargs="?", metavar="NAME", help="connector name (alone: a predefined connector)")
    file_option(p, "connector config: Java properties or JSON")
    set_option(p)
    p.add_argument("--all", action="store_true", help="show every key with its value, not only the errors")

    p = command("loggers", cmd_loggers, "show logger levels, or set one with --level")
    p.add_argument("logger", nargs="?", metavar="LOGGER")
    p.add_argument("--level", metavar="LEVEL", help="set the level (TRACE, DEBUG, INFO, WARN, ERROR, …)")
    p.add_argument("--scope", choices=["worker", "cluster"], help="with --level: this worker (default) or every worker")
    return parser
