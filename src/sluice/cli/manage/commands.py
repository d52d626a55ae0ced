"""The subcommands of ``sluice connector``: one ``cmd_*`` function per command, each taking
a :class:`Context` and returning the exit code."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

from sluice.cli.manage.client import ConnectClient
from sluice.cli.manage.errors import EXIT_OK, EXIT_SERVER_ERROR, UsageError, WorkerError
from sluice.cli.manage.files import (
    PREDEFINED,
    etc_dir,
    load_connector_config,
    parse_assignments,
    parse_config_bytes,
    parse_offsets_bytes,
    read_bytes,
)
from sluice.cli.manage.rendering import (
    colour_enabled,
    compact,
    connectors_table,
    format_properties,
    indent,
    last_line,
    render_table,
    state_style,
    status_table,
    status_traces,
    time_ms,
)
from sluice.cli.manage.waiting import Spinner, wait_for_state


class Context:
    """What a command needs: the client, the parsed arguments and the output streams."""

    def __init__(self, args: argparse.Namespace, client: ConnectClient, prog: str) -> None:
        self.args = args
        self.client = client
        self.prog = prog
        self.out: TextIO = sys.stdout
        self.err: TextIO = sys.stderr
        self.json: bool = bool(getattr(args, "json", False))
        self.style = state_style(colour_enabled(self.out))

    def print(self, text: str = "") -> None:
        print(text, file=self.out)

    def note(self, text: str) -> None:
        print(text, file=self.err)

    def dump(self, data: Any) -> None:
        """The server's JSON, for scripts (nothing when the answer had no body)."""
        if data is not None:
            print(json.dumps(data, indent=2, ensure_ascii=False), file=self.out)


def _status_or_none(client: ConnectClient, name: str) -> Any:
    try:
        return client.connector_status(name)
    except WorkerError as exc:
        if exc.status == 404:
            return None
        raise


def _failures_of(status: Any) -> dict[str, str]:
    if not status:
        return {}
    name = status.get("name")
    out = {}
    connector = status.get("connector") or {}
    if connector.get("state") == "FAILED":
        out[f"connector {name}"] = str(connector.get("trace") or "")
    for task in status.get("tasks") or []:
        if task.get("state") == "FAILED":
            out[f"task {name}-{task.get('id')}"] = str(task.get("trace") or "")
    return out


def _settled_state(status: Any, default: str = "RUNNING") -> str:
    """The state a connector returns to after a restart or a config update."""
    state = ((status or {}).get("connector") or {}).get("state")
    return state if state in ("PAUSED", "STOPPED") else default


def _wait(ctx: Context, name: str, want: str, *, only_task: int | None = None, before: Any = None) -> int:
    spinner = Spinner(ctx.err)
    try:
        result = wait_for_state(
            ctx.client,
            name,
            want,
            ctx.args.timeout,
            only_task=only_task,
            stale_failures=_failures_of(before),
            spinner=spinner,
        )
    finally:
        spinner.clear()
    if result.exit_code == EXIT_OK:
        if not ctx.json:
            ctx.print(f"{name} is {want}" + (f" ({result.message})" if result.message else ""))
        return EXIT_OK
    ctx.note(f"{ctx.prog}: {result.message}")
    return result.exit_code


def cmd_load(ctx: Context) -> int:
    args = ctx.args
    loaded = load_connector_config(args.name, args.file, parse_assignments(args.set))
    client, name = ctx.client, args.name
    if loaded.renamed_from:
        ctx.note(f"note: the file names the connector '{loaded.renamed_from}'; it is loaded as '{name}'")
    before = _status_or_none(client, name) if args.wait else None
    if loaded.initial_state is not None:
        try:
            status_code, info = client.create_connector(name, loaded.config, loaded.initial_state)
        except WorkerError as exc:
            if exc.status != 409:
                raise
            ctx.note(f"note: {name} exists already; initial_state applies only when a connector is created")
            status_code, info = client.put_connector_config(name, loaded.config)
    else:
        status_code, info = client.put_connector_config(name, loaded.config)
    created = status_code == 201
    if ctx.json:
        ctx.dump(info)
    else:
        tasks = len((info or {}).get("tasks") or [])
        kind = (info or {}).get("type", "connector")
        plural = "" if tasks == 1 else "s"
        ctx.print(f"{'Created' if created else 'Updated'} {kind} connector {name} ({tasks} task{plural})")
    if not args.wait:
        return EXIT_OK
    if created:
        want = loaded.initial_state or "RUNNING"
    else:
        want = _settled_state(before)
    return _wait(ctx, name, want, before=before)


def cmd_unload(ctx: Context) -> int:
    ctx.client.delete_connector(ctx.args.name)
    if not ctx.json:
        ctx.print(f"Unloaded connector {ctx.args.name}")
    return EXIT_OK


def cmd_list(ctx: Context) -> int:
    args = ctx.args
    if args.predefined:
        return _list_predefined(ctx)
    if ctx.json:
        ctx.dump(ctx.client.connectors(args.expand or ()))
        return EXIT_OK
    expanded = ctx.client.connectors(["status"])
    if not expanded:
        ctx.print(f"No connectors on {ctx.client.url}")
        return EXIT_OK
    ctx.print(connectors_table(expanded, ctx.style))
    return EXIT_OK


def _list_predefined(ctx: Context) -> int:
    rows = []
    data = {}
    for name in sorted(PREDEFINED):
        path = etc_dir() / PREDEFINED[name]
        try:
            cls = parse_config_bytes(path.read_bytes(), str(path)).config.get("connector.class") or "-"
        except (OSError, UsageError):
            cls = "(missing)"
        data[name] = {"file": str(path), "connector.class": cls}
        rows.append([name, cls, str(path)])
    if ctx.json:
        ctx.dump(data)
    else:
        ctx.print(render_table(["NAME", "CONNECTOR CLASS", "FILE"], rows))
    return EXIT_OK


def cmd_plugins(ctx: Context) -> int:
    args = ctx.args
    if args.plugin:
        keys = ctx.client.plugin_config(args.plugin)
        if ctx.json:
            ctx.dump(keys)
            return EXIT_OK
        rows = []
        for key in keys or []:
            default = "(required)" if key.get("required") else key.get("default_value")
            rows.append(
                [
                    key.get("name"),
                    key.get("type"),
                    "null" if default is None else default,
                    key.get("importance"),
                    key.get("documentation") or "",
                ]
            )
        ctx.print(render_table(["KEY", "TYPE", "DEFAULT", "IMPORTANCE", "DOCUMENTATION"], rows))
        return EXIT_OK
    plugins = ctx.client.plugins(connectors_only=not args.all)
    if ctx.json:
        ctx.dump(plugins)
        return EXIT_OK
    rows = [[p.get("class"), p.get("type"), p.get("version", "-")] for p in plugins or []]
    ctx.print(render_table(["CLASS", "TYPE", "VERSION"], rows))
    return EXIT_OK


def cmd_status(ctx: Context) -> int:
    name = ctx.args.name
    if name is None:
        expanded = ctx.client.connectors(["status"])
        if ctx.json:
            ctx.dump(expanded)
            return EXIT_OK
        if not expanded:
            ctx.print(f"No connectors on {ctx.client.url}")
            return EXIT_OK
        ctx.print(connectors_table(expanded, ctx.style))
        failures = []
        for cname in sorted(expanded):
            for what, trace in status_traces((expanded[cname] or {}).get("status") or {}):
                failures.append(f"  {what}: {last_line(trace)}")
        if failures:
            ctx.print()
            ctx.print(f"Failures ('{ctx.prog} status NAME' shows the whole trace):")
            ctx.print("\n".join(failures))
        return EXIT_OK
    status = ctx.client.connector_status(name)
    if ctx.json:
        ctx.dump(status)
        return EXIT_OK
    ctx.print(f"{status.get('name', name)} ({status.get('type', 'unknown')})")
    ctx.print(status_table(status, ctx.style))
    for what, trace in status_traces(status):
        ctx.print()
        ctx.print(f"Trace of {what}:")
        ctx.print(indent(trace))
    return EXIT_OK


def cmd_config(ctx: Context) -> int:
    args = ctx.args
    name = args.name
    sets = parse_assignments(args.set)
    if args.file is None and not sets and not args.unset:
        config = ctx.client.connector_config(name)
        if ctx.json:
            ctx.dump(config)
        else:
            ctx.print(format_properties(config or {}))
        return EXIT_OK
    if args.file is not None:
        if args.unset:
            raise UsageError("--unset cannot be combined with -d FILE (the file replaces the whole config)")
        ctx.client.connector_info(name)  # an update, not a create: 404 for an unknown connector
        loaded = load_connector_config(name, args.file, sets)
        _, info = ctx.client.put_connector_config(name, loaded.config)
    else:
        patch: dict[str, str | None] = dict(sets)
        for key in args.unset:
            patch[key] = None
        info = ctx.client.patch_connector_config(name, patch)
    if ctx.json:
        ctx.dump(info)
    else:
        ctx.print(f"Updated connector {name}:")
        ctx.print(format_properties((info or {}).get("config") or {}))
    return EXIT_OK


def _target_command(verb: str, want: str, call: Callable[[ConnectClient, str], None]) -> Callable[[Context], int]:
    def run(ctx: Context) -> int:
        name = ctx.args.name
        call(ctx.client, name)
        if not ctx.json and not ctx.args.wait:
            ctx.print(f"{verb} {name}")
        if ctx.args.wait:
            return _wait(ctx, name, want)
        return EXIT_OK

    return run


cmd_pause = _target_command("Pause requested for", "PAUSED", ConnectClient.pause)
cmd_resume = _target_command("Resume requested for", "RUNNING", ConnectClient.resume)
cmd_stop = _target_command("Stopped", "STOPPED", ConnectClient.stop)


def cmd_restart(ctx: Context) -> int:
    args = ctx.args
    name = args.name
    if args.task is not None and (args.include_tasks or args.only_failed):
        raise UsageError("--task cannot be combined with --include-tasks or --only-failed")
    before = _status_or_none(ctx.client, name) if args.wait else None
    if args.task is not None:
        ctx.client.restart_task(name, args.task)
        if not ctx.json:
            ctx.print(f"Restarted task {name}-{args.task}")
        if not args.wait:
            return EXIT_OK
        return _wait(ctx, name, _settled_state(before), only_task=args.task, before=before)
    plan = ctx.client.restart(name, args.include_tasks, args.only_failed)
    if ctx.json:
        ctx.dump(plan)
    elif plan is None:
        ctx.print(f"Restarted connector {name}")
    else:
        ctx.print(f"Restarting {name}:")
        ctx.print(status_table(plan, ctx.style))
    if not args.wait:
        return EXIT_OK
    return _wait(ctx, name, _settled_state(before), before=before)


def cmd_topics(ctx: Context) -> int:
    name = ctx.args.name
    if ctx.args.reset:
        ctx.client.reset_topics(name)
        if not ctx.json:
            ctx.print(f"Reset the active topics of {name}")
        return EXIT_OK
    data = ctx.client.topics(name)
    if ctx.json:
        ctx.dump(data)
        return EXIT_OK
    topics = ((data or {}).get(name) or {}).get("topics") or []
    ctx.print("\n".join(topics) if topics else f"No active topics recorded for {name}")
    return EXIT_OK


def cmd_offsets(ctx: Context) -> int:
    args = ctx.args
    name = args.name
    if args.action == "get":
        data = ctx.client.offsets(name)
        if ctx.json:
            ctx.dump(data)
            return EXIT_OK
        offsets = (data or {}).get("offsets") or []
        if not offsets:
            ctx.print(f"No offsets committed for {name}")
            return EXIT_OK
        rows = [
            [compact(o.get("partition")), "null" if o.get("offset") is None else compact(o.get("offset"))]
            for o in offsets
        ]
        ctx.print(render_table(["PARTITION", "OFFSET"], rows))
        return EXIT_OK
    if args.action == "alter":
        if args.file is None:
            raise UsageError('offsets alter needs -d FILE with {"offsets": [...]}')
        body = parse_offsets_bytes(read_bytes(args.file), "standard input" if args.file == "-" else args.file)
        answer = ctx.client.alter_offsets(name, body)
    else:
        answer = ctx.client.reset_offsets(name)
    if ctx.json:
        ctx.dump(answer)
    else:
        ctx.print((answer or {}).get("message") or "Done")
    return EXIT_OK


def cmd_validate(ctx: Context) -> int:
    args = ctx.args
    if args.file is None and args.name is None:
        raise UsageError("validate needs -d FILE (or the name of a predefined connector)")
    loaded = load_connector_config(args.name, args.file, parse_assignments(args.set))
    plugin = loaded.config.get("connector.class")
    if not plugin:
        raise UsageError("the configuration has no connector.class, so there is no plugin to validate it against")
    result = ctx.client.validate(plugin, loaded.config) or {}
    error_count = int(result.get("error_count") or 0)
    if ctx.json:
        ctx.dump(result)
        return EXIT_SERVER_ERROR if error_count else EXIT_OK
    rows = []
    for item in result.get("configs") or []:
        value = item.get("value") or {}
        definition = item.get("definition") or {}
        key = value.get("name") or definition.get("name") or "?"
        errors = value.get("errors") or []
        if errors or args.all:
            shown = value.get("value")
            for i, error in enumerate(errors or [""]):
                rows.append([key if i == 0 else "", ("null" if shown is None else shown) if i == 0 else "", error])
    if rows:
        ctx.print(render_table(["KEY", "VALUE", "ERROR"], rows))
    if error_count:
        ctx.note(f"{ctx.prog}: the configuration has {error_count} error{'s' if error_count != 1 else ''}")
        return EXIT_SERVER_ERROR
    ctx.print(f"The configuration of {loaded.name or plugin} is valid for {result.get('name', plugin)}")
    return EXIT_OK


def cmd_loggers(ctx: Context) -> int:
    args = ctx.args
    if args.level is None:
        if args.scope is not None:
            raise UsageError("--scope applies only when setting a level with --level")
        if args.logger is None:
            data = ctx.client.loggers()
            if ctx.json:
                ctx.dump(data)
                return EXIT_OK
            rows = [
                [n, (v or {}).get("level"), time_ms((v or {}).get("last_modified"))] for n, v in (data or {}).items()
            ]
            ctx.print(render_table(["LOGGER", "LEVEL", "LAST MODIFIED"], rows))
            return EXIT_OK
        data = ctx.client.logger(args.logger)
        if ctx.json:
            ctx.dump(data)
            return EXIT_OK
        ctx.print(
            render_table(
                ["LOGGER", "LEVEL", "LAST MODIFIED"],
                [[args.logger, (data or {}).get("level"), time_ms((data or {}).get("last_modified"))]],
            )
        )
        return EXIT_OK
    if args.logger is None:
        raise UsageError("--level needs a LOGGER (use 'root' for every logger)")
    scope = args.scope or "worker"
    data = ctx.client.set_logger_level(args.logger, args.level, scope)
    if ctx.json:
        ctx.dump(data)
        return EXIT_OK
    if scope == "cluster":
        ctx.print(f"Level {args.level.upper()} requested for {args.logger} on every worker of the cluster")
    else:
        names = list(data or [])
        ctx.print(
            f"Level {args.level.upper()} set on {len(names)} logger{'s' if len(names) != 1 else ''}"
            + (":" if names else "")
        )
        for n in names:
            ctx.print(f"  {n}")
    return EXIT_OK
