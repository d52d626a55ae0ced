"""What the runtime records for its metrics, owned by the objects that record it: a task's
reported totals over a window (:class:`TaskSeries`) and the time it spent in each state
(:class:`StateTimes`), the worker's start counters (:class:`WorkerCounters`) and a
distributed worker's rebalances (:class:`RebalanceStats`).

Tasks count where they run (:class:`sluice.taskhost.metering.TaskMeter`, on the executor)
and send their totals with each heartbeat; :class:`TaskSeries` keeps those of the last
window here and turns them into rates, averages and maxima, as Kafka's windowed ``Rate``,
``Avg`` and ``Max`` do over Kafka's default window (``metrics.sample.window.ms`` ×
``metrics.num.samples``, 30 s × 2). A task's states are timed here, on the worker, as the
worker reports them (Kafka's ``StateTracker``). :mod:`sluice.runtime.metrics.exposition`
turns a snapshot of all this into Kafka's metric names.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from sluice.runtime.herder.base import State

__all__ = ["WINDOW_S", "RebalanceStats", "StateTimes", "TaskSeries", "WorkerCounters"]

WINDOW_S = 60.0


class StateTimes:
    """How long one task instance has been in each state since its first one (Kafka's
    ``StateTracker``, behind ``running-ratio`` and ``pause-ratio``): not windowed, as in
    Kafka, the ratios cover the instance's whole life."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._state: State | None = None
        self._since = 0.0
        self._spent: dict[State, float] = {}

    def change(self, state: State) -> None:
        now = self._clock()
        with self._lock:
            if state is self._state:
                return
            if self._state is not None:
                self._spent[self._state] = self._spent.get(self._state, 0.0) + (now - self._since)
            self._state, self._since = state, now

    @property
    def state(self) -> State | None:
        return self._state

    def ratio(self, state: State) -> float:
        """The share of the instance's time spent in ``state``: 0 before its first state,
        NaN at the very instant of it (no time spent yet), as Kafka."""
        now = self._clock()
        with self._lock:
            if self._state is None:
                return 0.0
            current = now - self._since
            total = current + sum(self._spent.values())
            spent = self._spent.get(state, 0.0) + (current if state is self._state else 0.0)
        return spent / total if total > 0 else math.nan


class TaskSeries:
    """A running task's reported totals over the last window, and its instance's state times."""

    def __init__(self, window_s: float = WINDOW_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.window_s = window_s
        self._clock = clock
        self._samples: deque[tuple[float, dict[str, float]]] = deque()
        self._reported: dict[str, float] = {}  # every total heartbeats carried, merged
        self._lock = threading.Lock()
        self.states = StateTimes(clock)

    def begin(self) -> None:
        """A task instance started: its totals are all zero now (so what it does before its
        first report counts in the window's rates)."""
        with self._lock:
            self._samples.clear()
            self._samples.append((self._clock(), {}))

    def record(self, totals: dict[str, float]) -> None:
        now = self._clock()
        with self._lock:
            self._append(now, dict(totals))

    def report(self, changed: dict[str, float] | None) -> None:
        """A heartbeat's totals: those that changed since the instance's last heartbeat
        (every one in its first), or None when none did. Heartbeats may come before the
        supervisor sees the instance start (:meth:`begin`): they are merged apart from the
        window, so that none of them is lost."""
        now = self._clock()
        with self._lock:
            if changed is not None:
                self._reported.update(changed)
            self._append(now, dict(self._reported))

    def _append(self, now: float, totals: dict[str, float]) -> None:
        """(Lock held.) One report of ``totals``, a dict of the series' own."""
        if self._samples and any(totals.get(k, 0) < v for k, v in self._samples[-1][1].items() if k.endswith("total")):
            self._samples.clear()  # a new instance of the task: its totals start again
        self._samples.append((now, totals))
        while len(self._samples) > 2 and now - self._samples[1][0] >= self.window_s:
            self._samples.popleft()

    def latest(self) -> dict[str, float]:
        with self._lock:
            return dict(self._samples[-1][1]) if self._samples else {}

    def _ends(self) -> tuple[tuple[float, dict[str, float]], tuple[float, dict[str, float]]] | None:
        with self._lock:
            if not self._samples:
                return None
            return self._samples[0], self._samples[-1]

    def change(self, name: str) -> float:
        """How much a total grew over the window (since the instance started, while the
        window holds one report only)."""
        ends = self._ends()
        if ends is None:
            return 0.0
        (_, first), (_, last) = ends
        if first is last:
            first = {}
        return last.get(name, 0) - first.get(name, 0)

    def rate(self, name: str) -> float:
        """Per second over the window (0 before two reports)."""
        ends = self._ends()
        if ends is None:
            return 0.0
        (t0, first), (t1, last) = ends
        if t1 <= t0:
            return 0.0
        return (last.get(name, 0) - first.get(name, 0)) / (t1 - t0)

    def ratio(self, numerator: str, denominator: str) -> float:
        """The window's increase of one total over another's; NaN when the second did not
        move (Kafka's ``Avg`` of no event)."""
        change = self.change(denominator)
        if change <= 0:
            return math.nan
        return self.change(numerator) / change

    def window_max(self, name: str, events: str) -> float:
        """The largest of the ``name`` maxima the reports of the window carry (each report's is
        the largest since the one before); NaN when the total ``events`` did not move (Kafka's
        ``Max`` of no event)."""
        if self.change(events) <= 0:
            return math.nan
        with self._lock:
            samples = list(self._samples)
        # the oldest report is the window's starting point: its maximum is from before it
        recent = samples[1:] if len(samples) > 1 else samples
        return float(max(totals.get(name, 0) for _, totals in recent))


@dataclass
class WorkerCounters:
    """The worker's own totals (``connect-worker-metrics``), and the results of the
    connector and task starts of the last window, for the startup percentages (Kafka's
    ``Frequencies``)."""

    connector_startup_attempts: int = 0
    connector_startup_successes: int = 0
    connector_startup_failures: int = 0
    task_startup_attempts: int = 0
    task_startup_successes: int = 0
    task_startup_failures: int = 0
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)
    window_s: float = field(default=WINDOW_S, repr=False, compare=False)
    _results: dict[str, deque[tuple[float, bool]]] = field(
        default_factory=lambda: {"connector": deque(), "task": deque()}, init=False, repr=False, compare=False
    )
    _results_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def start_ended(self, kind: str, succeeded: bool) -> None:
        """A ``kind`` (``connector`` or ``task``) start succeeded or failed: counted in its
        total, and noted with its time for the window's percentages."""
        outcome = "successes" if succeeded else "failures"
        now = self.clock()
        with self._results_lock:
            name = f"{kind}_startup_{outcome}"
            setattr(self, name, getattr(self, name) + 1)
            self._results[kind].append((now, succeeded))
            self._forget(self._results[kind], now)

    def _forget(self, results: deque[tuple[float, bool]], now: float) -> None:
        while results and now - results[0][0] > self.window_s:
            results.popleft()

    def startup_share(self, kind: str, succeeded: bool) -> float:
        """The share of the ``kind`` (``connector`` or ``task``) starts of the window that
        succeeded (or failed); 0 when there was none, as Kafka's ``Frequencies``."""
        with self._results_lock:
            results = self._results[kind]
            self._forget(results, self.clock())
            if not results:
                return 0.0
            return sum(1 for _, ok in results if ok is succeeded) / len(results)


@dataclass
class RebalanceStats:
    """A distributed worker's rebalances (``connect-worker-rebalance-metrics``)."""

    completed: int = 0
    epoch: int = -1
    leader: str = ""
    started_at: float | None = None  # monotonic; set while a rebalance is under way
    last_completed_at: float | None = None
    total_ms: float = 0.0
    max_ms: float = 0.0

    def begin(self, now: float) -> None:
        if self.started_at is None:
            self.started_at = now

    def complete(self, now: float, epoch: int, leader: str | None) -> None:
        if self.started_at is not None:
            took = (now - self.started_at) * 1000.0
            self.total_ms += took
            self.max_ms = max(self.max_ms, took)
        self.started_at = None
        self.completed += 1
        self.epoch = epoch
        self.leader = leader or ""
        self.last_completed_at = now
