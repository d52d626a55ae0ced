"""Benchmark: many idle and busy tasks on one worker, Kafka Connect and Sluice side by side.

    .venv/bin/python bench/scale.py [--steps 1,10,30,100,300] [--busy-steps 1,10,30] [--rate 1000]
        [--kinds source,sink] [--systems kc,sluice] [--rounds 1] [--settle 20] [--sample 10]
        [--sluice-setting KEY=VALUE ...] [--output docs/benchmarks.md] [--json FILE]

Starts one broker with the project's tooling. Then, for each system, kind and phase, one
fresh standalone worker on it — never two at once: the machine has two cores, so one system
is measured and stopped before the other starts (which system goes first alternates from
round to round): Apache Kafka Connect 4.3.1 (``ConnectStandalone`` on its Maven Central
jars, the JVM options of Kafka's scripts) and Sluice (``sluice standalone``, Sluice's
default Spark master, ``spark.driver.memory=512m``), each with the worker settings of
:mod:`bench.harness.workers` that the other benchmarks use; ``--sluice-setting`` adds worker
properties to Sluice's (``sluice.task.hosts=4``, say). Every connector has one task
(``tasks.max`` 1, StringConverter):

* ``source``: a FileStreamSource over an empty file of its own; the idle ones all write
  into one topic (nothing ever reaches it), the busy ones each into a topic of its own;
* ``sink``: a FileStreamSink on an empty topic of its own (one partition; every topic is
  created up front with the admin client), into a file of its own.

**Idle phase** (``--steps``). Once the worker's ``GET /health`` answers 200, each step adds
connectors with ``POST /connectors``, one after the other, until the step's count is
reached. **Time to RUNNING** runs from the step's first ``POST`` until every task of every
connector so far is RUNNING, polled every 200 ms with ``GET /connectors?expand=status`` —
the body of ``GET /connectors/{c}/status`` of every connector in one answer: hundreds of
requests per poll would load the worker being measured — and then confirmed with each new
connector's own ``GET /connectors/{c}/status``; a task FAILED, or not RUNNING within
``--running-timeout`` seconds, fails the run with the states it had. Then the worker
settles for ``--settle`` seconds and is sampled over ``--sample`` seconds:

* **PSS, RSS** of the worker's whole process tree — the worker process and every descendant,
  found in ``/proc/*/stat`` by parent pid (for Sluice the Python driver, Spark's JVM,
  PySpark's daemon and its Python workers: the task hosts) — the sums of ``Pss`` and ``Rss``
  of each process's ``/proc/<pid>/smaps_rollup``, averaged over one sample a second. PSS
  counts the pages the tree's forked processes share once (RSS once per process), and pages
  shared with processes outside it (``libjvm.so`` with the broker's JVM) for its share only;
* **processes**: the most processes in the tree at a sample;
* **CPU**: ``utime + stime + cutime + cstime`` of ``/proc/<pid>/stat`` summed over the
  tree's live processes at the window's start and at its end: the time of every thread,
  live or ended, and of the children that ended and were reaped by a member of the tree
  (PySpark's daemon reaps its Python workers), so a process that ends within the window
  still counts; only a process re-parented out of the tree (its parent ended first) is
  missed. The difference, over the window's length, as % of one core.

**Busy phase** (``--busy-steps``, ``--rate``): the same steps on another fresh worker, but
from the moment a step's tasks are RUNNING until the phase ends the benchmark feeds each
of them ``--rate`` records/s of 100 bytes: a thread of the benchmark appends, every 20 ms,
the lines due by then to each busy source's file; a librdkafka producer of the benchmark
produces the records due into each busy sink's topic (no pre-filled backlog: a task gets
the rate, the figure is whether it keeps up with it and at what cost). Over the sample
window it counts per task the records **fed** (lines appended; records the broker
acknowledged) and **delivered** (the end offset of the source's topic; the sink's file size
/ 100 bytes), next to the tree's CPU and memory as above. The feeder shares the two cores
with the worker and the broker: a step it cannot feed at the rate shows the rate it was fed
at, and delivered below fed means the tasks fall behind.

The raw results (``--json``) hold more per step: the tree's CPU by process (the worker
process, ``java``, ``python``), the broker's CPU and the benchmark process's own (the
feeder's), the ``POST``s' time, the backlog fed but not delivered, and how long the worker
and its whole tree took to exit. A worker's tree must be gone before the next worker starts
(Sluice's Spark JVM outlives the driver while it writes its class-data archive).

Figures are medians over ``--rounds``. The section goes into ``--output`` between its own
markers (the first time after bench/startup.py's block; the rest of the page is left
alone) and is printed; ``--json`` writes the raw results. A run whose worker exits, or whose
step fails as above, stops there (its later steps show FAILED) and the command exits with 1.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import NewTopic

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.harness import data  # noqa: E402
from bench.harness.data import CONVERTERS  # noqa: E402
from bench.harness.machine import describe_machine  # noqa: E402
from bench.harness.page import log, merge_block, num, ratio  # noqa: E402
from bench.harness.procs import sample_tree, start_time, tree_memory, tree_pids  # noqa: E402
from bench.harness.workers import LABELS, BenchWorker, ConnectWorker, SluiceWorker, WorkerFailed  # noqa: E402
from sluice_devtools import jars  # noqa: E402
from sluice_devtools.kafka import KafkaBroker, quiet_client_logger  # noqa: E402

BEGIN = "<!-- BEGIN generated by bench/scale.py: do not edit by hand, rerun the command below -->"
END = "<!-- END generated by bench/scale.py -->"
AFTER = "<!-- END generated by bench/startup.py -->"  # where the block goes the first time
SYSTEM_NAMES = {"kc": "connect", "connect": "connect", "sluice": "sluice"}
KINDS = ("source", "sink")
PHASES = ("idle", "busy")
KIND_TITLES = {"source": "FileStreamSource", "sink": "FileStreamSink"}
STATUS_INTERVAL_S = 0.2  # time-to-RUNNING polls
FEED_INTERVAL_S = 0.02  # the feeder appends or produces what is due this often
MEMORY_INTERVAL_S = 1.0  # PSS/RSS samples in the sample window
# After the worker exited, how long what is left of its tree may take to go: Sluice's Spark JVM
# outlives the driver while it writes its class-data archive (sluice.jvm.class_data), which a
# kill would truncate; the next worker starts only once the tree is gone.
STOP_GRACE_S = 180.0


class StepFailed(Exception):
    """A step's tasks did not all reach RUNNING in time, or one FAILED."""


@dataclass(frozen=True)
class Task:
    """One connector (with its one task) and what it reads and writes."""

    name: str
    kind: str
    topic: str
    file: Path

    def config(self) -> dict[str, str]:
        where = {"topic": self.topic} if self.kind == "source" else {"topics": self.topic}
        return {
            "name": self.name,
            "connector.class": KIND_TITLES[self.kind],
            "tasks.max": "1",
            **CONVERTERS["string"][1],
            "file": str(self.file),
            **where,
        }


@dataclass
class Context:
    broker: KafkaBroker
    work: Path
    settle: float
    sample: float
    rate: int
    running_timeout: float
    sluice_settings: dict[str, str] = field(default_factory=dict)


# ------------------------------------------------------------------------------ feeding


class Feeder(threading.Thread):
    """Feeds each task it was given ``rate`` records/s from the moment it was added: every
    :data:`FEED_INTERVAL_S` it appends the lines due by then to a source's file (one
    ``write``), or produces the records due into a sink's topic. :meth:`fed` counts lines
    appended, or records the broker acknowledged."""

    def __init__(self, kind: str, rate: int, bootstrap: str) -> None:
        super().__init__(daemon=True, name=f"feeder-{kind}")
        self.kind, self.rate = kind, rate
        self.error: str | None = None
        self._lock = threading.Lock()
        self._tasks: list[tuple[Task, float]] = []  # (task, monotonic time it was added)
        self._due_done: dict[str, int] = {}  # records written or handed to the producer
        self._fed: dict[str, int] = {}
        self._fds: dict[str, int] = {}
        self._stopping = threading.Event()
        self._producer: Any = None
        if kind == "sink":
            self._producer = Producer(
                {"bootstrap.servers": bootstrap, "logger": quiet_client_logger(), "linger.ms": 5, "acks": "all"}
            )

    def add(self, tasks: list[Task]) -> None:
        now = time.monotonic()
        with self._lock:
            for task in tasks:
                if self.kind == "source":
                    self._fds[task.name] = os.open(task.file, os.O_WRONLY | os.O_APPEND)
                self._due_done[task.name] = 0
                self._fed[task.name] = 0
                self._tasks.append((task, now))

    def fed(self) -> dict[str, int]:
        with self._lock:
            return dict(self._fed)

    def _acker(self, name: str) -> Any:
        def on_delivery(err: object, _msg: object) -> None:
            if err is None:
                with self._lock:
                    self._fed[name] += 1
            elif self.error is None:
                self.error = f"producing into the topic of {name}: {err}"

        return on_delivery

    def run(self) -> None:
        ackers: dict[str, Any] = {}
        try:
            while not self._stopping.is_set():
                now = time.monotonic()
                with self._lock:
                    tasks = list(self._tasks)
                for task, added in tasks:
                    done = self._due_done[task.name]
                    due = int((now - added) * self.rate)
                    if due <= done:
                        continue
                    if self.kind == "source":
                        os.write(self._fds[task.name], b"".join(data.line(s) + b"\n" for s in range(done, due)))
                        with self._lock:
                            self._fed[task.name] = due
                    else:
                        acker = ackers.setdefault(task.name, self._acker(task.name))
                        for s in range(done, due):
                            while True:
                                try:
                                    self._producer.produce(task.topic, data.line(s), on_delivery=acker)
                                    break
                                except BufferError:
                                    self._producer.poll(0.05)
                    self._due_done[task.name] = due
                if self._producer is not None:
                    self._producer.poll(0)
                self._stopping.wait(FEED_INTERVAL_S)
        except Exception as exc:  # noqa: BLE001 - reported by the sample window, which fails the run
            self.error = f"{type(exc).__name__}: {exc}"

    def stop(self) -> None:
        self._stopping.set()
        if self.is_alive():
            self.join()
        if self._producer is not None:
            self._producer.flush(30)
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


class Delivered:
    """Records each busy task has delivered so far: the end offset of a source's topic, or
    a sink's file size / 100 bytes (every record is one 99-byte line and its newline)."""

    def __init__(self, kind: str, bootstrap: str) -> None:
        self.kind = kind
        self._consumer: Any = None
        if kind == "source":
            self._consumer = Consumer(
                {
                    "bootstrap.servers": bootstrap,
                    "logger": quiet_client_logger(),
                    "group.id": "bench-scale-watch",
                    "enable.auto.commit": False,
                }
            )

    def counts(self, tasks: list[Task]) -> dict[str, float]:
        if self.kind == "sink":
            out: dict[str, float] = {}
            for task in tasks:
                try:
                    out[task.name] = task.file.stat().st_size / data.LINE_BYTES
                except FileNotFoundError:
                    out[task.name] = 0.0
            return out
        return {
            task.name: float(
                self._consumer.get_watermark_offsets(TopicPartition(task.topic, 0), timeout=10, cached=False)[1]
            )
            for task in tasks
        }

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()


# ------------------------------------------------------------------------------ a worker


def create_topics(broker: KafkaBroker, names: list[str], timeout: float = 120.0) -> None:
    """Create ``names`` (one partition each) in one request and wait until each has a leader."""
    if not names:
        return
    admin = broker.admin_client()
    futures = admin.create_topics(
        [NewTopic(n, num_partitions=1, replication_factor=1) for n in names],
        operation_timeout=timeout,
        request_timeout=timeout,
    )
    for future in futures.values():
        future.result(timeout=timeout)
    deadline = time.monotonic() + timeout
    while True:
        topics = admin.list_topics(timeout=timeout).topics
        missing = [
            n
            for n in names
            if n not in topics
            or topics[n].error is not None
            or any(p.leader < 0 for p in topics[n].partitions.values())
        ]
        if not missing:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(missing)} topics have no leader after {timeout:.0f} s, e.g. {missing[:3]}")
        time.sleep(0.1)  # polling the broker's metadata, not a synchronisation by delay


def _wait_ready(worker: BenchWorker, client: httpx2.Client, timeout: float = 300.0) -> float:
    """Poll ``GET /health`` (both systems: ready once the worker has started) until it answers
    200; the monotonic time it first did."""
    deadline = time.monotonic() + timeout
    while True:
        worker.check_alive()
        with contextlib.suppress(httpx2.HTTPError):
            if client.get(worker.url + "/health").status_code == 200:
                return time.monotonic()
        if time.monotonic() > deadline:
            raise WorkerFailed(f"{worker.label}: GET /health did not answer 200 within {timeout:.0f} s")
        time.sleep(0.05)


def _status_text(status: dict[str, Any] | None) -> str:
    if status is None:
        return "not listed"
    tasks = ", ".join(t.get("state", "?") for t in status.get("tasks", []))
    return f"connector {status.get('connector', {}).get('state', '?')}, tasks [{tasks}]"


def _failed_trace(name: str, status: dict[str, Any]) -> str | None:
    for entry in [status.get("connector", {}), *status.get("tasks", [])]:
        if entry.get("state") == "FAILED":
            return f"{name} FAILED: {str(entry.get('trace', ''))[-2000:]}"
    return None


def _running(status: dict[str, Any] | None) -> bool:
    tasks = (status or {}).get("tasks", [])
    return bool(tasks) and all(t.get("state") == "RUNNING" for t in tasks)


def _not_running(worker: BenchWorker, client: httpx2.Client, names: list[str]) -> list[tuple[str, str]] | None:
    """(connector, what its status shows) of each of ``names`` whose tasks are not all
    RUNNING, from one ``GET /connectors?expand=status``; None if it did not answer 200.
    Raises :class:`StepFailed` if a connector or task FAILED."""
    r = client.get(worker.url + "/connectors?expand=status")
    if r.status_code != 200:
        return None
    body = r.json()
    pending = []
    for name in names:
        status = body.get(name, {}).get("status")
        if status is not None and (trace := _failed_trace(name, status)):
            raise StepFailed(trace)
        if not _running(status):
            pending.append((name, _status_text(status)))
    return pending


def _wait_running(worker: BenchWorker, client: httpx2.Client, names: list[str], deadline: float) -> float:
    """Poll until every task of every connector of ``names`` is RUNNING; the monotonic time
    of the poll that saw it (its request's start)."""
    pending: list[tuple[str, str]] | None = None
    while True:
        worker.check_alive()
        asked = time.monotonic()
        with contextlib.suppress(httpx2.HTTPError):
            pending = _not_running(worker, client, names)
        if pending == []:
            return asked
        if time.monotonic() > deadline:
            shown = "; ".join(f"{n}: {s}" for n, s in (pending or [])[:5])
            raise StepFailed(
                f"{worker.label}: {len(pending) if pending is not None else 'all'} of {len(names)} connectors "
                f"not RUNNING in time ({shown or 'GET /connectors?expand=status did not answer'})"
            )
        time.sleep(STATUS_INTERVAL_S)  # the poll interval


def _confirm(worker: BenchWorker, client: httpx2.Client, names: list[str]) -> None:
    """Each connector's own ``GET /connectors/{c}/status`` lists its tasks RUNNING."""
    for name in names:
        r = client.get(f"{worker.url}/connectors/{name}/status")
        status = r.json() if r.status_code == 200 else None
        if not _running(status):
            raise StepFailed(f"{worker.label}: GET /connectors/{name}/status shows {_status_text(status)}")


def _window(worker: BenchWorker, seconds: float, feeder: Feeder | None, each: Any = None) -> None:
    """Let ``seconds`` pass (a deliberate settle or sample window), checking every second
    that the worker and the feeder are alive and calling ``each()`` if given."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        time.sleep(min(MEMORY_INTERVAL_S, left))
        worker.check_alive()
        if feeder is not None and feeder.error:
            raise RuntimeError(f"the feeder failed: {feeder.error}")
        if each is not None:
            each()


def _measure(
    ctx: Context,
    worker: BenchWorker,
    tasks: list[Task],
    feeder: Feeder | None,
    delivered: Delivered | None,
) -> dict[str, Any]:
    """The sample window: the tree's CPU, memory and processes, and for a busy step what was
    fed and delivered per task."""
    pid = worker.pid
    broker_pid = ctx.broker.pid

    def counts() -> tuple[float, dict[str, int], dict[str, float]]:
        """(when, fed, delivered) per task; the time is the middle of the reads."""
        before = time.monotonic()
        fed = feeder.fed() if feeder is not None else {}
        got = delivered.counts(tasks) if delivered is not None else {}
        return (before + time.monotonic()) / 2, fed, got

    memory = [tree_memory(pid)]
    counted0, fed0, got0 = counts()
    started = time.monotonic()
    cpu0 = sample_tree(pid)
    broker0 = sample_tree(broker_pid).cpu_seconds if broker_pid else 0.0
    bench0 = time.process_time()
    _window(worker, ctx.sample, feeder, lambda: memory.append(tree_memory(pid)))
    cpu1 = sample_tree(pid)
    broker1 = sample_tree(broker_pid).cpu_seconds if broker_pid else 0.0
    bench1 = time.process_time()
    elapsed = time.monotonic() - started
    counted1, fed1, got1 = counts()
    out: dict[str, Any] = {
        "sample_s": elapsed,
        "cpu_pct": (cpu1.cpu_seconds - cpu0.cpu_seconds) / elapsed * 100,
        # the worker process ("root") and its descendants by command name ("java", "python")
        "cpu_pct_by_process": {
            kind: (cpu1.cpu_by_kind.get(kind, 0.0) - cpu0.cpu_by_kind.get(kind, 0.0)) / elapsed * 100
            for kind in sorted(set(cpu0.cpu_by_kind) | set(cpu1.cpu_by_kind))
        },
        "broker_cpu_pct": (broker1 - broker0) / elapsed * 100,
        "bench_cpu_pct": (bench1 - bench0) / elapsed * 100,
        "pss_mb": statistics.mean(m.pss_bytes for m in memory) / 2**20,
        "rss_mb": statistics.mean(m.rss_bytes for m in memory) / 2**20,
        "processes": max(m.processes for m in memory),
        "memory_samples": len(memory),
    }
    if feeder is not None and delivered is not None:
        span = counted1 - counted0
        fed = [(fed1[t.name] - fed0.get(t.name, 0)) / span for t in tasks]
        got = [(got1[t.name] - got0.get(t.name, 0.0)) / span for t in tasks]
        out.update(
            {
                "fed_per_task": statistics.mean(fed),
                "delivered_per_task": statistics.mean(got),
                "delivered_min": min(got),
                "delivered_max": max(got),
                "behind_records": sum(fed1.values()) - sum(got1.values()),
            }
        )
    return out


def _stop(worker: BenchWorker) -> dict[str, float]:
    """SIGTERM the worker (SIGKILL after 90 s), then wait until the rest of its process tree
    is gone too, so that the next worker runs alone; SIGKILL, by pid, whatever of it is still
    there :data:`STOP_GRACE_S` later (a pid counts only with the start time it had in the
    tree). The seconds until the worker exited, and until its whole tree had."""
    if worker.process is None:
        return {}
    members = [(p, start_time(p)) for p in tree_pids(worker.pid) if p != worker.pid]
    began = time.monotonic()
    worker.stop()
    exited = time.monotonic() - began
    deadline = time.monotonic() + STOP_GRACE_S
    left = [(p, s) for p, s in members if s is not None and start_time(p) == s]
    while left and time.monotonic() < deadline:
        time.sleep(0.1)  # polling /proc for the processes to go
        left = [(p, s) for p, s in left if start_time(p) == s]
    for pid, _ in left:
        log(f"{worker.label}: pid {pid} of its process tree still there {STOP_GRACE_S:.0f} s after it exited: SIGKILL")
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return {"stop_s": exited, "tree_gone_s": time.monotonic() - began}


def _worker(ctx: Context, system: str, run_dir: Path) -> BenchWorker:
    if system == "sluice":
        return SluiceWorker(run_dir, ctx.broker.bootstrap, system, extra=ctx.sluice_settings)
    return ConnectWorker(run_dir, ctx.broker.bootstrap, system)


def run_phase(ctx: Context, system: str, kind: str, phase: str, steps: list[int], round_no: int) -> dict[str, Any]:
    """One phase of one kind on a fresh worker of ``system``; never raises for a failed run
    (``ok`` False and ``error``, with the steps measured before it)."""
    run_id = f"r{round_no + 1}-{system}-{kind}-{phase}"
    run_dir = ctx.work / run_id
    (run_dir / "files").mkdir(parents=True)
    result: dict[str, Any] = {
        "round": round_no + 1,
        "system": system,
        "kind": kind,
        "phase": phase,
        "run": run_id,
        "ok": False,
        "steps": [],
    }
    count = max(steps)
    shared_topic = f"scale-{run_id}-idle"
    tasks = [
        Task(
            f"{run_id}-{i:03d}",
            kind,
            shared_topic if kind == "source" and phase == "idle" else f"scale-{run_id}-{i:03d}",
            run_dir / "files" / f"{i:03d}.{'in' if kind == 'source' else 'out'}",
        )
        for i in range(count)
    ]
    log(f"{run_id}: {LABELS[system]}, {KIND_TITLES[kind]} × {', '.join(map(str, steps))}, {phase}")
    worker = _worker(ctx, system, run_dir)
    feeder: Feeder | None = None
    delivered: Delivered | None = None
    client = httpx2.Client(timeout=120)
    try:
        create_topics(ctx.broker, sorted({t.topic for t in tasks}))
        if kind == "source":
            for task in tasks:
                task.file.touch()
        worker.launch()
        result["ready_s"] = _wait_ready(worker, client) - worker.started_at
        if phase == "busy":
            feeder = Feeder(kind, ctx.rate, ctx.broker.bootstrap)
            feeder.start()
            delivered = Delivered(kind, ctx.broker.bootstrap)
        done = 0
        for target in steps:
            new, so_far = tasks[done:target], tasks[:target]
            step: dict[str, Any] = {"tasks": target, "load_1min": os.getloadavg()[0]}
            t0 = time.monotonic()
            for task in new:
                r = client.post(worker.url + "/connectors", json={"name": task.name, "config": task.config()})
                if r.status_code != 201:
                    raise StepFailed(
                        f"{worker.label}: POST /connectors of {task.name} answered {r.status_code}: {r.text}"
                    )
            step["posts_s"] = time.monotonic() - t0
            running_at = _wait_running(worker, client, [t.name for t in so_far], t0 + ctx.running_timeout)
            step["running_s"] = running_at - t0
            _confirm(worker, client, [t.name for t in new])
            done = target
            if feeder is not None:
                feeder.add(new)
            _window(worker, ctx.settle, feeder)
            step.update(_measure(ctx, worker, so_far, feeder, delivered))
            pending = _not_running(worker, client, [t.name for t in so_far])
            if pending is None:
                raise StepFailed(f"{worker.label}: GET /connectors?expand=status failed after the sample window")
            if pending:
                raise StepFailed(
                    f"{worker.label}: {len(pending)} connectors no longer RUNNING after the sample window: "
                    + "; ".join(f"{n}: {s}" for n, s in pending[:5])
                )
            result["steps"].append(step)
            summary = (
                f"RUNNING after {step['running_s']:.1f} s; PSS {step['pss_mb']:.0f} MB, RSS {step['rss_mb']:.0f} MB, "
                f"{step['processes']} processes, CPU {step['cpu_pct']:.1f}% of a core"
            )
            if "delivered_per_task" in step:
                summary += (
                    f"; per task fed {step['fed_per_task']:,.0f}/s, delivered {step['delivered_per_task']:,.0f}/s "
                    f"(slowest {step['delivered_min']:,.0f})"
                )
            log(f"{run_id}: {target} tasks: {summary}")
        result["ok"] = True
    except (StepFailed, WorkerFailed, RuntimeError, OSError, httpx2.HTTPError, KafkaException) as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["log_tail"] = worker.log_tail(3000)
        log(f"{run_id}: FAILED: {result['error'][:2000]}")
    finally:
        client.close()
        if feeder is not None:
            feeder.stop()
        result.update(_stop(worker))
        if delivered is not None:
            delivered.close()
    return result


# ------------------------------------------------------------------------------ the run


def _machine() -> dict[str, Any]:
    """:func:`~bench.harness.machine.describe_machine`, with Sluice's version, the
    checkout's revision and Sluice's default Spark master."""
    from sluice import __version__
    from sluice.spark.session import DEFAULTS

    revision = subprocess.run(
        ["git", "-C", str(REPO), "describe", "--always", "--dirty"], capture_output=True, text=True
    ).stdout.strip()
    return {
        **describe_machine(),
        "sluice": __version__,
        "revision": revision or "unknown",
        "sluice_spark_master": DEFAULTS["spark.master"],
    }


def run(args: argparse.Namespace, command: str) -> dict[str, Any]:
    started = time.monotonic()
    log("fetching Kafka Connect and the Kafka and Spark jars (first use only)")
    jars.kafka_connect_classpath()
    jars.fetch_quickstart()
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="sluice-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": command,
        "machine": _machine(),
        "load_before": os.getloadavg(),
        "systems": args.system_list,
        "kinds": args.kind_list,
        "steps": args.step_list,
        "busy_steps": args.busy_step_list,
        "rate": args.rate,
        "rounds": args.rounds,
        "settle_s": args.settle,
        "sample_s": args.sample,
        "sluice_settings": args.sluice_settings,
        "runs": [],
    }
    broker = KafkaBroker(work / "kafka", heap="1g")
    try:
        log(f"starting a Kafka broker in {work / 'kafka'}")
        broker.start(timeout=120)
        ctx = Context(
            broker, work, args.settle, args.sample, args.rate, args.running_timeout, dict(args.sluice_settings)
        )
        for round_no in range(args.rounds):
            order = args.system_list if round_no % 2 == 0 else args.system_list[::-1]
            for system in order:
                for kind in args.kind_list:
                    for phase, steps in (("idle", args.step_list), ("busy", args.busy_step_list)):
                        if steps:
                            results["runs"].append(run_phase(ctx, system, kind, phase, steps, round_no))
    finally:
        broker.stop()
        if args.work_dir is None:
            shutil.rmtree(work, ignore_errors=True)
    results["load_after"] = os.getloadavg()
    results["duration_s"] = time.monotonic() - started
    return results


# ------------------------------------------------------------------------------ report


def _runs(results: dict[str, Any], system: str, kind: str, phase: str) -> list[dict[str, Any]]:
    return [r for r in results["runs"] if (r["system"], r["kind"], r["phase"]) == (system, kind, phase)]


def _value(runs: list[dict[str, Any]], tasks: int, key: str) -> float | None:
    """The median of ``key`` at the step of ``tasks`` over the runs that measured it."""
    values = [s[key] for r in runs for s in r["steps"] if s["tasks"] == tasks and s.get(key) is not None]
    return statistics.median(values) if values else None


def _cell(runs: list[dict[str, Any]], tasks: int, key: str, digits: int = 0) -> str:
    if not runs:
        return "not run"
    value = _value(runs, tasks, key)
    if value is None:
        return "**FAILED**" if any(not r["ok"] for r in runs) else "–"
    return num(value, digits)


def _delivered_cell(runs: list[dict[str, Any]], tasks: int) -> str:
    cell = _cell(runs, tasks, "delivered_per_task")
    slowest = _value(runs, tasks, "delivered_min")
    return cell if slowest is None or tasks == 1 else f"{cell} ({num(slowest)})"


def _table(results: dict[str, Any], kind: str, phase: str) -> list[str]:
    steps = results["steps"] if phase == "idle" else results["busy_steps"]
    c = _runs(results, "connect", kind, phase)
    s = _runs(results, "sluice", kind, phase)
    rows = []
    if phase == "idle":
        rows += [
            "| tasks | Kafka Connect: PSS, MB | RSS, MB | CPU, % of a core | to RUNNING, s | Sluice: PSS, MB | "
            "RSS, MB | processes | CPU, % of a core | to RUNNING, s | PSS: Sluice / KC | CPU: Sluice / KC |",
            "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for n in steps:
            rows.append(
                f"| {n} | {_cell(c, n, 'pss_mb')} | {_cell(c, n, 'rss_mb')} | {_cell(c, n, 'cpu_pct', 1)} | "
                f"{_cell(c, n, 'running_s', 1)} | {_cell(s, n, 'pss_mb')} | {_cell(s, n, 'rss_mb')} | "
                f"{_cell(s, n, 'processes')} | {_cell(s, n, 'cpu_pct', 1)} | {_cell(s, n, 'running_s', 1)} | "
                f"{ratio(_value(s, n, 'pss_mb'), _value(c, n, 'pss_mb'))} | "
                f"{ratio(_value(s, n, 'cpu_pct'), _value(c, n, 'cpu_pct'))} |"
            )
        return rows
    rows += [
        "| tasks | fed per task, records/s: KC / Sluice | Kafka Connect: delivered per task, records/s (slowest) | "
        "CPU, % of a core | PSS, MB | RSS, MB | Sluice: delivered per task, records/s (slowest) | "
        "CPU, % of a core | PSS, MB | RSS, MB | processes | PSS: Sluice / KC | CPU: Sluice / KC |",
        "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for n in steps:
        rows.append(
            f"| {n} | {_cell(c, n, 'fed_per_task')} / {_cell(s, n, 'fed_per_task')} | {_delivered_cell(c, n)} | "
            f"{_cell(c, n, 'cpu_pct', 1)} | {_cell(c, n, 'pss_mb')} | {_cell(c, n, 'rss_mb')} | "
            f"{_delivered_cell(s, n)} | {_cell(s, n, 'cpu_pct', 1)} | {_cell(s, n, 'pss_mb')} | "
            f"{_cell(s, n, 'rss_mb')} | {_cell(s, n, 'processes')} | "
            f"{ratio(_value(s, n, 'pss_mb'), _value(c, n, 'pss_mb'))} | "
            f"{ratio(_value(s, n, 'cpu_pct'), _value(c, n, 'cpu_pct'))} |"
        )
    return rows


def render(results: dict[str, Any]) -> str:
    m = results["machine"]
    loads = [s["load_1min"] for r in results["runs"] for s in r["steps"]]
    settings = results["sluice_settings"]
    extra = (", and " + ", ".join(f"`{k}={v}`" for k, v in settings.items())) if settings else ""
    rounds = results["rounds"]
    out = [
        BEGIN,
        "",
        "## Many tasks on one worker: idle and busy",
        "",
        f"Run of {results['date']} ({results['duration_s'] / 60:.0f} min). Machine: {m['cpu']}, {m['cores']} cores, "
        f"{m['memory_gb']:.0f} GB RAM, {m['os']}; Python {m['python']}, {m['java']}. One Kafka {m['kafka']} broker; "
        f"one standalone worker at a time on it: Apache Kafka Connect {m['kafka']} (`ConnectStandalone`, the JVM "
        f"options of Kafka's scripts) and Sluice {m['sluice']} (`{m['revision']}`; `sluice standalone` on Spark "
        f"{m['spark']}, its default master `{m['sluice_spark_master']}`, `spark.driver.memory=512m`{extra}), every "
        "other worker setting at its default. Each kind and phase runs on a fresh worker of each system, one system "
        f"after the other{' (which goes first alternating by round)' if rounds > 1 else ''}; "
        f"{rounds} round{'s' if rounds != 1 else ''}, figures are medians. Load average (1 min): "
        f"{results['load_before'][0]:.1f} at the start, {min(loads, default=0):.1f}–{max(loads, default=0):.1f} "
        f"at the steps, {results['load_after'][0]:.1f} at the end.",
        "",
        "```bash",
        results["command"],
        "```",
        "",
        "Connectors have one task each (StringConverter): FileStreamSources over empty files of their own, "
        "FileStreamSinks on empty topics of their own (one partition). Each step adds connectors through "
        "`POST /connectors` up to its count; **to RUNNING** is from the step's first `POST` until every task is "
        f"RUNNING (polled every {STATUS_INTERVAL_S * 1000:.0f} ms). Then the worker settles {results['settle_s']:g} s "
        f"and is sampled over {results['sample_s']:g} s: **PSS** and **RSS** of its whole process tree (the "
        "worker and all its descendants: for Sluice the Python driver, Spark's JVM and the Python workers of its "
        "task hosts; from `/proc/<pid>/smaps_rollup`, a sample a second; PSS counts the pages forked processes "
        "share once, RSS once per process), the most **processes** in it, and its **CPU** (user + system time of "
        "every process of the tree, and of children they reaped) as % of one core. In the busy phase the "
        f"benchmark feeds every task {results['rate']:,} records/s of 100 bytes from the moment it is RUNNING — "
        "lines appended to a source's file, records produced into a sink's topic — and counts per task the "
        "records fed and **delivered** (into the source's topic; into the sink's file) over the sample window; "
        "the slowest task in brackets. The feeder shares the cores: *fed* is the rate it achieved. "
        "`bench/scale.py`'s docstring says exactly how each figure is taken.",
        "",
    ]
    for kind in results["kinds"]:
        for phase in PHASES:
            if not (results["steps"] if phase == "idle" else results["busy_steps"]):
                continue
            title = "idle" if phase == "idle" else f"busy, {results['rate']:,} records/s per task"
            out += [f"#### {KIND_TITLES[kind]}, {title}", "", *_table(results, kind, phase), ""]
    failed = [r for r in results["runs"] if not r["ok"]]
    if failed:
        out += ["Failed runs (their later steps are left out):", ""]
        for r in failed:
            first = (r.get("error") or "failed").strip().splitlines()[0][:300]
            out.append(f"* {LABELS[r['system']]}, {r['kind']}, {r['phase']}, round {r['round']}: {first}")
        out.append("")
    out.append(END)
    return "\n".join(out)


# ------------------------------------------------------------------------------ main


def _int_list(text: str, what: str, parser: argparse.ArgumentParser) -> list[int]:
    try:
        values = sorted({int(v) for v in text.split(",") if v.strip()})
    except ValueError:
        parser.error(f"{what}: comma-separated task counts, e.g. 1,10,30")
    if any(v < 1 for v in values):
        parser.error(f"{what}: task counts must be positive")
    return values


def _names(text: str, allowed: dict[str, str], what: str, parser: argparse.ArgumentParser) -> list[str]:
    out = []
    for raw in (v.strip() for v in text.split(",") if v.strip()):
        if raw not in allowed:
            parser.error(f"{what}: unknown {raw!r} (choose from {', '.join(sorted(allowed))})")
        if allowed[raw] not in out:
            out.append(allowed[raw])
    if not out:
        parser.error(f"{what}: name at least one")
    return out


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--steps", default="1,10,30,100,300", help="idle task counts (default 1,10,30,100,300; '' skips)"
    )
    parser.add_argument("--busy-steps", default="1,10,30", help="busy task counts (default 1,10,30; '' skips)")
    parser.add_argument("--rate", type=int, default=1000, help="records/s fed to each busy task (default 1000)")
    parser.add_argument("--kinds", default="source,sink", help="source, sink or both (default source,sink)")
    parser.add_argument("--systems", default="kc,sluice", help="kc (Kafka Connect), sluice or both (default kc,sluice)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds, the first system alternating (default 1)")
    parser.add_argument("--settle", type=float, default=20.0, help="seconds between RUNNING and sampling (default 20)")
    parser.add_argument("--sample", type=float, default=10.0, help="seconds of the sample window (default 10)")
    parser.add_argument(
        "--running-timeout",
        type=float,
        default=600.0,
        help="fail a step whose tasks are not all RUNNING this many seconds after its first POST (default 600)",
    )
    parser.add_argument(
        "--sluice-setting",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a worker property for Sluice's workers (repeatable), e.g. sluice.task.hosts=4",
    )
    parser.add_argument("--output", type=Path, default=REPO / "docs" / "benchmarks.md")
    parser.add_argument("--json", type=Path, help="write the raw results here too")
    parser.add_argument("--work-dir", type=Path, help="keep the broker's and workers' files (and logs) here")
    args = parser.parse_args(argv)
    args.step_list = _int_list(args.steps, "--steps", parser)
    args.busy_step_list = _int_list(args.busy_steps, "--busy-steps", parser)
    if not args.step_list and not args.busy_step_list:
        parser.error("--steps and --busy-steps are both empty: nothing to measure")
    args.kind_list = _names(args.kinds, {k: k for k in KINDS}, "--kinds", parser)
    args.system_list = _names(args.systems, SYSTEM_NAMES, "--systems", parser)
    settings = {}
    for item in args.sluice_setting:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            parser.error(f"--sluice-setting {item!r}: expected KEY=VALUE")
        settings[key.strip()] = value.strip()
    args.sluice_settings = settings
    if args.rate < 1 or args.rounds < 1 or args.sample <= 0 or args.settle < 0 or args.running_timeout <= 0:
        parser.error("--rate, --rounds, --sample and --running-timeout must be positive, --settle not negative")
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    busiest = max(args.busy_step_list, default=0) * args.rate  # one kind and one worker at a time
    if busiest > 50_000:
        log(f"note: the busiest step is fed {busiest:,} records/s in total; on two cores the feeder may fall short")
    results = run(args, shlex.join([".venv/bin/python", "bench/scale.py", *argv]))
    block = render(results)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    text = args.output.read_text() if args.output.exists() else ""
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(merge_block(text, block, BEGIN, END, AFTER))
    print(block)
    log(f"wrote {args.output}")
    failed = [r for r in results["runs"] if not r["ok"]]
    for r in failed:
        log(f"FAILED: {r['run']}: {r.get('error', '')[:500]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
