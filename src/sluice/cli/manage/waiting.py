"""``--wait``: polling a connector's status until it reaches the expected state, fails or
the timeout passes, with a progress line on a terminal."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from sluice.cli.manage.client import ConnectClient
from sluice.cli.manage.errors import EXIT_FAILED, EXIT_OK, EXIT_TIMEOUT, WorkerError
from sluice.cli.manage.rendering import indent

WAIT_TIMEOUT = 60.0  # seconds: the default of --timeout
# A FAILED state that is already there before a restart or a config update, with the same
# trace, may be the old status not yet rewritten by an asynchronous worker: it ends the
# wait only once it is still there after this long.
STALE_FAILURE_GRACE = 5.0


@dataclass
class Progress:
    """Where a connector stands relative to the state a ``--wait`` expects."""

    done: bool
    failed: list[tuple[str, str]] = field(default_factory=list)  # (what, trace)
    summary: str = ""


def check_state(
    status: Mapping[str, Any],
    want: str,
    expected_tasks: Iterable[int] = (),
    only_task: int | None = None,
    ignore_failed: Callable[[str, str], bool] = lambda what, trace: False,
) -> Progress:
    """Compare a ConnectorStateInfo with ``want`` (RUNNING, PAUSED or STOPPED).

    RUNNING/PAUSED: the connector and every task in that state, and every task id of
    ``expected_tasks`` (from the connector's info) present. STOPPED: the connector
    STOPPED and no tasks left. With ``only_task``, only that task counts. A FAILED part
    (unless ``ignore_failed(what, trace)``) makes ``failed`` non-empty."""
    connector = status.get("connector") or {}
    tasks = list(status.get("tasks") or [])
    name = status.get("name", "?")
    failed: list[tuple[str, str]] = []
    if only_task is None and connector.get("state") == "FAILED":
        what, trace = f"connector {name}", str(connector.get("trace") or "")
        if not ignore_failed(what, trace):
            failed.append((what, trace))
    considered = [t for t in tasks if only_task is None or t.get("id") == only_task]
    for task in considered:
        if task.get("state") == "FAILED":
            what, trace = f"task {name}-{task.get('id')}", str(task.get("trace") or "")
            if not ignore_failed(what, trace):
                failed.append((what, trace))
    in_state = sum(1 for t in considered if t.get("state") == want)
    if only_task is not None:
        done = in_state == 1
        summary = f"task {only_task} {considered[0].get('state') if considered else 'not reported yet'}"
        return Progress(done, failed, summary)
    expected = set(expected_tasks)
    present = {t.get("id") for t in tasks}
    if want == "STOPPED":
        done = connector.get("state") == "STOPPED" and not tasks
    else:
        done = connector.get("state") == want and in_state == len(tasks) and expected <= present
    total = max(len(tasks), len(expected))
    summary = f"connector {connector.get('state', '-')}, tasks {in_state}/{total} {want}"
    return Progress(done, failed, summary)


class Spinner:
    """A progress line on stderr, only when stderr is a terminal."""

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.enabled = bool(getattr(stream, "isatty", lambda: False)())
        self._frame = 0
        self._shown = False

    def update(self, text: str) -> None:
        if not self.enabled:
            return
        frame = self.FRAMES[self._frame % len(self.FRAMES)]
        self._frame += 1
        self.stream.write(f"\r\x1b[K{frame} {text}")
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self.enabled and self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False


@dataclass
class WaitResult:
    exit_code: int
    status: Any = None
    message: str = ""


def wait_for_state(
    client: ConnectClient,
    name: str,
    want: str,
    timeout: float,
    *,
    only_task: int | None = None,
    stale_failures: Mapping[str, str] | None = None,
    spinner: Spinner | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> WaitResult:
    """Poll the connector's status until it is in ``want``, FAILED or ``timeout`` passed.

    ``stale_failures`` maps a part (``connector c``, ``task c-0``) to the trace it had
    FAILED with before the command: the same failure is taken for a status not yet
    rewritten for up to :data:`STALE_FAILURE_GRACE` seconds."""
    start = clock()
    deadline = start + timeout
    interval = 0.1
    stale = dict(stale_failures or {})
    last: Any = None
    summary = "no status yet"

    def ignore_failed(what: str, trace: str) -> bool:
        return stale.get(what) == trace and clock() - start < STALE_FAILURE_GRACE

    while True:
        try:
            status = client.connector_status(name)
            expected: list[int] = []
            if only_task is None and want != "STOPPED":
                info = client.connector_info(name)
                expected = [int(t["task"]) for t in info.get("tasks") or [] if isinstance(t, dict) and "task" in t]
        except WorkerError as exc:
            if exc.status != 404:  # no status yet, right after creation
                raise
            status = None
        if status is not None:
            last = status
            # a part seen out of its old failure no longer counts as stale
            parts = [(f"connector {name}", status.get("connector") or {})]
            parts += [(f"task {name}-{t.get('id')}", t) for t in status.get("tasks") or []]
            for what, part in parts:
                if part.get("state") != "FAILED":
                    stale.pop(what, None)
            progress = check_state(status, want, expected, only_task, ignore_failed)
            summary = progress.summary
            if progress.failed:
                lines = [f"{what} FAILED" + (f":\n{indent(trace)}" if trace else "") for what, trace in progress.failed]
                return WaitResult(EXIT_FAILED, status, "\n".join(lines))
            if progress.done:
                return WaitResult(EXIT_OK, status, summary)
        now = clock()
        if now >= deadline:
            return WaitResult(
                EXIT_TIMEOUT,
                last,
                f"timed out after {timeout:g} s waiting for {name} to be {want} ({summary})",
            )
        if spinner is not None:
            spinner.update(f"waiting for {name} to be {want}: {summary} ({now - start:.0f} s)")
        sleep(min(interval, max(deadline - now, 0)))
        interval = min(interval * 1.5, 0.5)
