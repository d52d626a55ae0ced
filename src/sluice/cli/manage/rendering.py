"""What people read: aligned tables, state colours, configs as Java properties, statuses,
traces and offsets in short form. (``--json`` output is the server's JSON, printed as is.)"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TextIO


def render_table(
    headers: Sequence[str], rows: Iterable[Sequence[Any]], style: Callable[[str], str] | None = None
) -> str:
    """Rows under headers in aligned columns (two spaces apart, no trailing blanks).

    ``style`` (for colour) is applied to each padded data cell, so alignment holds."""
    body = [["" if cell is None else str(cell) for cell in row] for row in rows]
    head = [str(h) for h in headers]
    widths = [len(h) for h in head]
    for row in body:
        for i, cell in enumerate(row):
            first = cell.split("\n", 1)[0]
            if i < len(widths):
                widths[i] = max(widths[i], len(first))
    lines = []

    def line(cells: Sequence[str], styled: bool) -> str:
        parts = []
        last = len(cells) - 1
        for i, cell in enumerate(cells):
            text = cell.split("\n", 1)[0]
            padded = text if i == last else text.ljust(widths[i])
            parts.append(style(padded) if (styled and style) else padded)
        return "  ".join(parts).rstrip()

    lines.append(line(head, False))
    lines.extend(line(row, True) for row in body)
    return "\n".join(lines)


_STATE_COLOURS = {
    "RUNNING": "32",  # green
    "PAUSED": "33",  # yellow
    "STOPPED": "33",
    "FAILED": "31",  # red
    "UNASSIGNED": "36",  # cyan
    "RESTARTING": "36",
}


def colour_enabled(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def state_style(enabled: bool) -> Callable[[str], str] | None:
    if not enabled:
        return None

    def style(cell: str) -> str:
        code = _STATE_COLOURS.get(cell.strip())
        return f"\x1b[{code}m{cell}\x1b[0m" if code else cell

    return style


def _escape_key(key: str) -> str:
    import javaproperties

    return javaproperties.escape(key, ensure_ascii=False)


def _escape_value(value: str) -> str:
    out = (
        value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t").replace("\f", "\\f")
    )
    if out.startswith(" "):
        out = "\\" + out
    if len(value) > 1 and value.endswith(" "):  # trailing blanks are kept by the parser: show them
        out = out[:-1] + "\\ "
    return out


def format_properties(config: Mapping[str, str | None]) -> str:
    """A config as aligned Java properties (``name`` first, then sorted keys): readable,
    and a valid file for ``-d`` (``config NAME > c.properties``)."""
    keys = sorted(config, key=lambda k: (k != "name", k))
    escaped = [(_escape_key(k), "" if config[k] is None else _escape_value(str(config[k]))) for k in keys]
    width = max((len(k) for k, _ in escaped), default=0)
    return "\n".join(f"{k.ljust(width)} = {v}" if v else f"{k.ljust(width)} =" for k, v in escaped)


def task_summary(tasks: Sequence[Mapping[str, Any]]) -> str:
    """``[RUNNING, RUNNING, FAILED]`` → ``2 RUNNING, 1 FAILED``; ``-`` when none."""
    if not tasks:
        return "-"
    counts: dict[str, int] = {}
    for task in tasks:
        state = str(task.get("state"))
        counts[state] = counts.get(state, 0) + 1
    return ", ".join(f"{n} {state}" for state, n in counts.items())


def last_line(trace: str) -> str:
    lines = [ln.strip() for ln in trace.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def compact(value: Any) -> str:
    """An offset partition/offset for people: ``k=v, k2=v2``."""
    if isinstance(value, dict):
        return ", ".join(f"{k}={compact(v)}" for k, v in value.items()) or "{}"
    if isinstance(value, str):
        return value
    return json.dumps(value)


def time_ms(value: Any) -> str:
    if value is None:
        return "-"
    try:
        moment = datetime.datetime.fromtimestamp(int(value) / 1000, tz=datetime.UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return str(value)
    return moment.astimezone().isoformat(timespec="seconds")


def indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.rstrip().splitlines())


def connectors_table(expanded: Mapping[str, Any], style: Callable[[str], str] | None = None) -> str:
    rows = []
    for name in sorted(expanded):
        status = (expanded[name] or {}).get("status") or {}
        connector = status.get("connector") or {}
        rows.append(
            [
                name,
                status.get("type", "-"),
                connector.get("state", "-"),
                task_summary(status.get("tasks") or []),
                connector.get("worker_id", "-"),
            ]
        )
    return render_table(["NAME", "TYPE", "STATE", "TASKS", "WORKER"], rows, style)


def status_table(status: Mapping[str, Any], style: Callable[[str], str] | None = None) -> str:
    connector = status.get("connector") or {}
    rows = [["connector", connector.get("state", "-"), connector.get("worker_id", "-")]]
    for task in status.get("tasks") or []:
        rows.append([f"task {task.get('id')}", task.get("state", "-"), task.get("worker_id", "-")])
    return render_table(["", "STATE", "WORKER"], rows, style)


def status_traces(status: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(what, trace)`` of every part of a status that has a trace."""
    out = []
    connector = status.get("connector") or {}
    if connector.get("trace"):
        out.append((f"connector {status.get('name')}", str(connector["trace"])))
    for task in status.get("tasks") or []:
        if task.get("trace"):
            out.append((f"task {status.get('name')}-{task.get('id')}", str(task["trace"])))
    return out
