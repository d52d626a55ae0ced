"""Diagnostic: where a benchmark's worker CPU goes, thread by thread (not a benchmark).

    .venv/bin/python bench/thread_cpu.py [--json FILE] -- <command and its arguments>

Runs the command (say ``.venv/bin/python bench/compare.py --java-plugins --workloads c
...``) and meanwhile samples, twice a second from ``/proc``, the CPU time of every thread of
the worker processes it starts: Kafka Connect's JVM (``ConnectStandalone``), Sluice's
driver JVM (Spark's ``SparkSubmit``) and Sluice's Python worker (``sluice.cli.main``). When
the command ends it prints, for each such process, its threads' cores over the process's
longest stretch above 0.9 cores — for a throughput run, while the records flow — and, with
``--json``, keeps the samples. Thread names are the kernel's, cut at 15 characters (a
Kafka Connect task thread is ``task-thread-<connector>``, a Java task on Sluice runs
Kafka's own task code on a thread of the same name; ``C2 CompilerThre`` is the JIT).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.harness.procs import CLOCK_TICKS, parse_stat  # noqa: E402

Sample = tuple[float, dict[str, tuple[str, float]]]  # (time, {tid: (name, CPU seconds)})

INTERVAL_S = 0.5
BUSY_CORES = 0.9


def _kind(pid: int) -> str | None:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    if "ConnectStandalone" in command or "ConnectDistributed" in command:
        return "Kafka Connect JVM"
    if "SparkSubmit" in command and "java" in command.split(" ", 1)[0]:
        return "Sluice driver JVM"
    if "sluice.cli.main" in command:
        return "Sluice Python worker"
    return None


def _threads(pid: int) -> dict[str, tuple[str, float]]:
    found: dict[str, tuple[str, float]] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            name, fields = parse_stat(Path(f"/proc/{pid}/task/{tid}/stat").read_bytes())
        except OSError:
            continue  # the thread ended
        found[tid] = (name, (int(fields[11]) + int(fields[12])) / CLOCK_TICKS)  # utime + stime
    return found


class Sampler:
    """Samples the workers' threads on a thread of its own until :meth:`stop`."""

    def __init__(self) -> None:
        self.kinds: dict[int, str] = {}
        self.samples: dict[int, list[Sample]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="thread-cpu-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(INTERVAL_S):
            now = time.monotonic()
            for entry in os.listdir("/proc"):
                if not entry.isdigit():
                    continue
                pid = int(entry)
                if pid not in self.kinds:
                    # looked at again every time: Spark's JVM starts as a shell script
                    # (spark-class) that then becomes java under the same pid
                    kind = _kind(pid)
                    if kind is None:
                        continue
                    self.kinds[pid] = kind
                    self.samples[pid] = []
                with contextlib.suppress(OSError):  # the process ended
                    self.samples[pid].append((now, _threads(pid)))


def busiest_stretch(samples: list[Sample]) -> tuple[Sample, Sample] | None:
    """The first and last sample of the longest run of intervals above ``BUSY_CORES``."""
    best: tuple[int, int] | None = None
    start: int | None = None
    for i in range(1, len(samples) + 1):
        busy = False
        if i < len(samples):
            (t0, before), (t1, after) = samples[i - 1], samples[i]
            used = sum(cpu for tid, (_, cpu) in after.items()) - sum(
                cpu for tid, (_, cpu) in before.items() if tid in after
            )
            busy = used / (t1 - t0) > BUSY_CORES
        if busy and start is None:
            start = i - 1
        elif not busy and start is not None:
            if best is None or i - 1 - start > best[1] - best[0]:
                best = (start, i - 1)
            start = None
    if best is None or best[1] - best[0] < 4:
        return None
    return samples[best[0]], samples[best[1]]


def report(sampler: Sampler) -> str:
    lines = []
    for pid, kind in sampler.kinds.items():
        stretch = busiest_stretch(sampler.samples[pid])
        if stretch is None:
            continue
        (t0, before), (t1, after) = stretch
        seconds = t1 - t0
        used = sorted(
            ((cpu - before.get(tid, (name, 0.0))[1], name) for tid, (name, cpu) in after.items()),
            reverse=True,
        )
        total = sum(cpu for cpu, _ in used)
        lines.append(f"{kind}, pid {pid}: {total / seconds:.2f} cores over {seconds:.1f} s")
        lines += [f"    {cpu / seconds:5.2f}  {name}" for cpu, name in used if cpu / seconds >= 0.01]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="keep the samples here")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    sampler = Sampler()
    sampler.start()
    try:
        returncode = subprocess.run(command, check=False).returncode
    finally:
        sampler.stop()
    print(report(sampler), flush=True)
    if args.json:
        kept = {str(pid): {"kind": kind, "samples": sampler.samples[pid]} for pid, kind in sampler.kinds.items()}
        args.json.write_text(json.dumps(kept))
    return returncode


if __name__ == "__main__":
    sys.exit(main())
