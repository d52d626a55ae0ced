"""CPU time and memory (RSS, and PSS: :func:`tree_memory`) of a process and all its
descendants, read from ``/proc``.

CPU time of a tree is the sum over its live processes of ``utime + stime + cutime +
cstime`` (``/proc/<pid>/stat``): the ``c*`` fields hold the time of children that exited
and were reaped, so a Spark Python worker that ends between two samples still counts
(its parent, a member of the tree, reaped it). The difference of two samples is the CPU
the tree spent in between.

RSS of a tree is the sum of its processes' RSS. Forked children share pages with their
parent, so the sum overstates the memory used; it is what ``ps`` and most monitors show
and what a container limit is compared with, so it is the figure reported.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class ProcInfo:
    ppid: int
    name: str  # the command name (comm): "java", "python", ...
    cpu_seconds: float  # utime + stime + cutime + cstime
    rss_bytes: int


def parse_stat(data: bytes) -> tuple[str, list[bytes]]:
    """A ``/proc/<pid>/stat`` (or ``/proc/<pid>/task/<tid>/stat``) line: the command name and
    the fields after it, from the state on (``[11]`` is utime, ``[12]`` stime)."""
    # the command name (field 2) may hold spaces and parentheses: split after the last ')'
    close = data.rfind(b")")
    return data[data.find(b"(") + 1 : close].decode(errors="replace"), data[close + 2 :].split()


def _scan() -> dict[int, ProcInfo]:
    procs: dict[int, ProcInfo] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        name, fields = parse_stat(data)
        try:
            ticks = int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
            procs[int(entry)] = ProcInfo(int(fields[1]), name, ticks / CLOCK_TICKS, int(fields[21]) * PAGE_SIZE)
        except (IndexError, ValueError):
            continue
    return procs


def _tree(root: int, procs: dict[int, ProcInfo]) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, info in procs.items():
        children.setdefault(info.ppid, []).append(pid)
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        if pid in procs:
            found.append(pid)
            stack.extend(children.get(pid, ()))
    return found


@dataclass(frozen=True)
class TreeSample:
    processes: int
    cpu_seconds: float
    rss_bytes: int
    cpu_by_kind: dict[str, float]  # "root", and the descendants by command name ("java", "python", ...)


def _kind(pid: int, root: int, name: str) -> str:
    if pid == root:
        return "root"
    for prefix in ("java", "python"):
        if name.startswith(prefix):
            return prefix
    return "other"


def sample_tree(root: int) -> TreeSample:
    """CPU seconds so far and current RSS of ``root`` and its descendants (zeros if gone)."""
    procs = _scan()
    pids = _tree(root, procs)
    by_kind: dict[str, float] = {}
    for p in pids:
        kind = _kind(p, root, procs[p].name)
        by_kind[kind] = by_kind.get(kind, 0.0) + procs[p].cpu_seconds
    return TreeSample(
        processes=len(pids),
        cpu_seconds=sum(procs[p].cpu_seconds for p in pids),
        rss_bytes=sum(procs[p].rss_bytes for p in pids),
        cpu_by_kind=by_kind,
    )


class PeakRss(threading.Thread):
    """Samples a process tree's RSS every ``interval`` seconds and keeps the peak."""

    def __init__(self, root: int, interval: float = 0.2) -> None:
        super().__init__(daemon=True, name=f"peak-rss-{root}")
        self.root, self.interval = root, interval
        self.peak_bytes = 0
        self.peak_processes = 0
        self._stopping = threading.Event()

    def run(self) -> None:
        while not self._stopping.is_set():
            sample = sample_tree(self.root)
            if sample.rss_bytes > self.peak_bytes:
                self.peak_bytes = sample.rss_bytes
            self.peak_processes = max(self.peak_processes, sample.processes)
            self._stopping.wait(self.interval)

    def stop(self) -> int:
        self._stopping.set()
        self.join()
        return self.peak_bytes


@dataclass(frozen=True)
class TreeMemory:
    processes: int
    rss_bytes: int
    pss_bytes: int


def tree_pids(root: int) -> list[int]:
    """``root`` and its live descendants (children found by their ``ppid``); empty if gone."""
    return _tree(root, _scan())


def on_cpus(cpus: set[int] | None) -> Callable[[], None] | None:
    """A ``preexec_fn`` that binds a child process (and all it starts) to ``cpus``; ``None``
    (any CPU) for ``None``."""
    return (lambda: os.sched_setaffinity(0, cpus)) if cpus else None


def pin_tree(root: int, cpus: set[int]) -> int:
    """Bind every thread of ``root`` and its descendants to ``cpus`` (``taskset -a -p``); the
    threads and processes they start later inherit it. Returns how many threads were bound."""
    bound = 0
    for pid in tree_pids(root):
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # ended meanwhile
        for tid in threads:
            try:
                os.sched_setaffinity(int(tid), cpus)
                bound += 1
            except OSError:
                pass  # ended meanwhile
    return bound


def tree_memory(root: int) -> TreeMemory:
    """RSS and PSS of ``root`` and its live descendants, from each one's
    ``/proc/<pid>/smaps_rollup`` (Linux 4.14 or newer; a process that ends meanwhile is left out).

    PSS (proportional set size) counts a page that n processes map as 1/n in each of them:
    summed over a tree, the pages its forked processes share count once (RSS counts them
    once per process), and pages shared with processes outside the tree (a JVM's
    ``libjvm.so`` with the broker's JVM, say) count for the tree's share only.
    """
    processes = rss = pss = 0
    for pid in tree_pids(root):
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
                text = f.read()
        except OSError:
            continue
        fields = {}
        for row in text.splitlines():
            name, _, rest = row.partition(b":")
            if name in (b"Rss", b"Pss"):
                fields[name] = int(rest.split()[0]) * 1024  # kB
        if b"Rss" in fields and b"Pss" in fields:
            processes += 1
            rss += fields[b"Rss"]
            pss += fields[b"Pss"]
    return TreeMemory(processes, rss, pss)


def start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks after boot, ``/proc/<pid>/stat`` field 22), or None if
    it is gone: with the pid, it names one process even after the pid is reused."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    try:
        return int(data[data.rfind(b")") + 2 :].split()[19])
    except (IndexError, ValueError):
        return None
