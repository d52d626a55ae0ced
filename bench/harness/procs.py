"""CPU time and resident memory of a process and all its descendants, read from ``/proc``.

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
from dataclasses import dataclass

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class ProcInfo:
    ppid: int
    name: str  # the command name (comm): "java", "python", ...
    cpu_seconds: float  # utime + stime + cutime + cstime
    rss_bytes: int


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
        # the command name (field 2) may hold spaces and parentheses: split after the last ')'
        close = data.rfind(b")")
        name = data[data.find(b"(") + 1 : close].decode(errors="replace")
        fields = data[close + 2 :].split()
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
