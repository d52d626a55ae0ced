"""One measured run of one workload on one system, and Kafka's own throughput bounds.

A run starts a fresh worker process (its own offsets file, REST port and work directory)
with two *probe* connectors on the command line — a FileStreamSource and a
FileStreamSink moving 10 lines through a topic of their own — and measures

* ``rest_ready_s``: process start → ``GET /`` answers 200;
* ``first_record_s``: process start → the first probe line is in the probe sink file.

Then it deletes the probes, creates the workload's connectors on fresh topics and files
(fresh connector names, so fresh offsets and consumer groups) and measures, from the
creation request until the last record is delivered:

* ``records_per_s`` and ``mb_per_s`` (100-byte lines, 1 MB = 10^6 bytes);
* ``cpu_s_per_million``: CPU seconds of the worker process tree over that window;
* ``peak_rss_mb``: peak RSS of the worker process tree from process start to the end;
* for the latency workload, end-to-end latency percentiles.

Every run then checks correctness after a settling pause (nothing late or repeated
arrives) and fails, with no figures, if the output does not hold every input line
exactly once.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.harness import data
from bench.harness.data import CONVERTERS, CorrectnessError, InputFile, OffsetWatcher, RateWriter, Tail
from bench.harness.procs import PeakRss, sample_tree
from bench.harness.workers import CONNECT_LOG4J, SYSTEMS, BenchWorker, WorkerFailed, java_task_settings
from sluice.jvm.java import java_executable
from sluice_devtools.jars import kafka_broker_classpath
from sluice_devtools.kafka import KafkaBroker
from tests.integration.workers import TEST_PLUGINS, write_properties

PROBE_LINES = 10
# With Context.java_plugins: the version that picks Kafka's Java file connectors on Sluice.
JAVA_VERSION_KEY = "connector.plugin.version"
JAVA_FILE_VERSION = "4.3.1"
LATENCY_RATE = 5_000


class RunTimeout(Exception):
    """The workload did not finish in time."""


@dataclass(frozen=True)
class Workload:
    id: str  # "a-json", "e-2", ...
    kind: str  # a | b | c | d | e
    title: str
    converter: str  # key of data.CONVERTERS
    tasks: int = 1
    partitions: int = 1
    # Sink connector properties of a transformation chain (transforms.*, predicates.*), as
    # (key, value) pairs; sink workloads (b, c, e) only.
    transforms: tuple[tuple[str, str], ...] = ()
    # More worker properties for Sluice's workers (Kafka Connect's keep theirs).
    sluice_worker: tuple[tuple[str, str], ...] = ()


def build_workloads(kinds: list[str], converters: list[str]) -> list[Workload]:
    out: list[Workload] = []
    titles = {
        "a": "FileStreamSource → topic",
        "b": "topic → FileStreamSink",
        "c": "FileStreamSource → topic → FileStreamSink, end to end",
    }
    for kind in kinds:
        if kind in titles:
            for conv in converters:
                out.append(Workload(f"{kind}-{conv}", kind, f"({kind}) {titles[kind]}, {CONVERTERS[conv][0]}", conv))
        elif kind == "d":
            out.append(
                Workload(
                    "d",
                    "d",
                    f"(d) latency at {LATENCY_RATE:,} lines/s, source and sink, {CONVERTERS['json'][0]}",
                    "json",
                )
            )
        elif kind == "e":
            for tasks in (1, 2):
                out.append(
                    Workload(
                        f"e-{tasks}",
                        "e",
                        f"(e) 4-partition topic → FileStreamSink, tasks.max={tasks}, {CONVERTERS['string'][0]}",
                        "string",
                        tasks=tasks,
                        partitions=4,
                    )
                )
        else:
            raise ValueError(f"unknown workload {kind!r} (choose from a, b, c, d, e)")
    return out


@dataclass
class Context:
    broker: KafkaBroker
    work: Path
    lines: int
    latency_seconds: float
    settle_seconds: float = 2.0
    log: Callable[[str], None] = print
    sluice_log_level: str = "INFO"
    sluice_debug_loggers: tuple[str, ...] = ()  # Sluice loggers at DEBUG whatever sluice_log_level says
    # Kafka's connect-file plugin directory: Sluice runs those Java connectors, not its built-ins
    java_plugins: Path | None = None
    inputs: dict[int, InputFile] = field(default_factory=dict)
    filled: dict[tuple[str, int, int], str] = field(default_factory=dict)
    _counter: int = 0

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap

    def next_id(self, prefix: str) -> str:
        self._counter += 1
        return f"r{self._counter:02d}-{prefix}"

    def input_file(self, lines: int) -> InputFile:
        """The shared, read-only input file of ``lines`` lines (written once)."""
        if lines not in self.inputs:
            self.inputs[lines] = data.write_input(self.work / f"input-{lines}.txt", lines)
        return self.inputs[lines]

    def filled_topic(self, converter: str, lines: int, partitions: int = 1) -> str:
        """A topic holding input lines 0..lines-1 encoded for ``converter`` (filled once)."""
        key = (converter, lines, partitions)
        if key not in self.filled:
            topic = f"filled-{converter}-{lines}-p{partitions}"
            started = time.monotonic()
            self.broker.create_topic(topic, partitions)
            data.fill_topic(self.bootstrap, topic, lines, converter, partitions)
            self.log(f"filled {topic} with {lines:,} records in {time.monotonic() - started:.1f} s")
            self.filled[key] = topic
        return self.filled[key]


@dataclass
class Window:
    """The measured window of a run: its start time and the CPU counters at that time."""

    worker_pid: int
    broker_pid: int | None
    start: float = 0.0
    cpu: float = 0.0
    cpu_by_kind: dict[str, float] = field(default_factory=dict)
    broker_cpu: float = 0.0

    def begin(self) -> None:
        self.start = time.monotonic()
        sample = sample_tree(self.worker_pid)
        self.cpu, self.cpu_by_kind = sample.cpu_seconds, sample.cpu_by_kind
        self.broker_cpu = sample_tree(self.broker_pid).cpu_seconds if self.broker_pid else 0.0


def _connector(name: str, cls: str, converter: str, **props: Any) -> dict[str, str]:
    return {
        "name": name,
        "connector.class": cls,
        "tasks.max": "1",
        **CONVERTERS[converter][1],
        **{k.replace("_", "."): str(v) for k, v in props.items()},
    }


def _wait(
    what: str,
    done: Callable[[], bool],
    deadline: float,
    worker: BenchWorker,
    connectors: list[str],
    interval: float = 0.02,
) -> None:
    """Poll ``done`` until true; fail early if the worker exits or a connector/task FAILED."""
    next_check = 0.0
    while not done():
        now = time.monotonic()
        if now > deadline:
            raise RunTimeout(f"{worker.label}: {what} not reached in time")
        if now >= next_check:
            worker.check_alive()
            for name in connectors:
                trace = worker.failure_trace(name)
                if trace:
                    raise WorkerFailed(f"{worker.label}: connector {name} FAILED:\n{trace}")
            next_check = now + 2.0
        time.sleep(interval)


def run_workload(
    ctx: Context, system: str, wl: Workload, *, lines: int | None = None, idle_seconds: float = 0.0
) -> dict[str, Any]:
    """One run of ``wl`` on a fresh ``system`` worker. Never raises for a failed run: the
    result then has ``ok: False`` and ``error``."""
    lines = ctx.lines if lines is None else lines
    if wl.kind == "d":
        lines = int(LATENCY_RATE * ctx.latency_seconds)
    run_id = ctx.next_id(f"{wl.id}-{system}")
    run_dir = ctx.work / run_id
    run_dir.mkdir()
    result: dict[str, Any] = {"workload": wl.id, "system": system, "lines": lines, "ok": False, "run": run_id}
    ctx.log(f"{run_id}: {wl.title} on {SYSTEMS[system].label}, {lines:,} lines")

    # probe connectors, started with the worker
    probe_topic = f"{run_id}-probe"
    ctx.broker.create_topic(probe_topic)
    probe_in = data.write_input(run_dir / "probe.in", PROBE_LINES)
    probe_out = run_dir / "probe.out"
    java = system == "sluice" and ctx.java_plugins is not None
    pinned = {JAVA_VERSION_KEY: JAVA_FILE_VERSION} if java else {}
    probe_files = [
        write_properties(
            run_dir / "probe-source.properties",
            {
                **_connector("probe-source", "FileStreamSource", "string", file=probe_in.path, topic=probe_topic),
                **pinned,
            },
        ),
        write_properties(
            run_dir / "probe-sink.properties",
            {**_connector("probe-sink", "FileStreamSink", "string", file=probe_out, topics=probe_topic), **pinned},
        ),
    ]
    sluice_worker: dict[str, str | None] = dict(wl.sluice_worker) if system == "sluice" else {}
    if java:
        sluice_worker["plugin.path"] = f"{TEST_PLUGINS},{ctx.java_plugins}"
        sluice_worker.update(java_task_settings())
    extra = {"extra": sluice_worker} if sluice_worker else {}
    worker = SYSTEMS[system](run_dir, ctx.bootstrap, system, **extra)  # type: ignore[call-arg]
    worker.log_level = ctx.sluice_log_level
    worker.debug_loggers = ctx.sluice_debug_loggers
    sampler: PeakRss | None = None
    prepared: Prepared | None = None
    try:
        prepared = _prepare(ctx, wl, run_dir, run_id, lines)
        for config in prepared.connectors:
            config.update(pinned)
        worker.launch(*probe_files)
        sampler = PeakRss(worker.pid)
        sampler.start()
        deadline = worker.started_at + 300
        result["rest_ready_s"] = worker.wait_rest_ready() - worker.started_at
        probe_tail = Tail(probe_out)
        _wait("first probe record", lambda: probe_tail.poll() >= 1, deadline, worker, ["probe-source", "probe-sink"])
        assert probe_tail.first_seen is not None
        result["first_record_s"] = probe_tail.first_seen - worker.started_at
        _wait("all probe records", lambda: probe_tail.poll() >= PROBE_LINES, deadline, worker, ["probe-sink"])
        data.verify_file_ordered(probe_out, probe_in)
        worker.delete_connector("probe-source")
        worker.delete_connector("probe-sink")

        window = Window(worker.pid, ctx.broker.pid)
        window.begin()
        for config in prepared.connectors:
            worker.create_connector(config)
        timeout = max(180.0, lines / 2_000) + (ctx.latency_seconds if wl.kind == "d" else 0)
        outcome = prepared.run(worker, window, time.monotonic() + timeout)
        done = time.monotonic()
        end_sample = sample_tree(worker.pid)
        cpu = end_sample.cpu_seconds - window.cpu
        cpu_split = {
            kind: (end_sample.cpu_by_kind.get(kind, 0.0) - window.cpu_by_kind.get(kind, 0.0)) / lines * 1e6
            for kind in sorted(set(end_sample.cpu_by_kind) | set(window.cpu_by_kind))
        }
        broker_cpu = (sample_tree(ctx.broker.pid).cpu_seconds - window.broker_cpu) if ctx.broker.pid else 0.0
        peak = sampler.stop()
        elapsed = done - window.start
        result.update(
            {
                "seconds": elapsed,
                "records_per_s": lines / elapsed,
                "mb_per_s": lines * data.LINE_BYTES / elapsed / 1e6,
                "cpu_s": cpu,
                "cpu_s_per_million": cpu / lines * 1e6,
                "cpu_s_per_million_by_process": cpu_split,
                "broker_cpu_s_per_million": broker_cpu / lines * 1e6,
                "peak_rss_mb": peak / 2**20,
                "peak_processes": sampler.peak_processes,
                **outcome,
            }
        )
        prepared.verify(ctx.settle_seconds)
        if idle_seconds:
            before = sample_tree(worker.pid).cpu_seconds
            time.sleep(idle_seconds)
            result["idle_cpu_pct"] = (sample_tree(worker.pid).cpu_seconds - before) / idle_seconds * 100
        result["ok"] = True
    except (CorrectnessError, WorkerFailed, RunTimeout) as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"
        ctx.log(f"{run_id}: FAILED: {result['error'][:2000]}")
        for key in [k for k in result if k not in ("workload", "system", "lines", "ok", "run", "error")]:
            del result[key]  # a failed run reports no figures
        result["log_tail"] = worker.log_tail(3000)
    finally:
        if sampler is not None and sampler.is_alive():
            sampler.stop()
        worker.stop()
        if prepared is not None:
            prepared.close()
    if result["ok"]:
        summary = (
            f"{result['records_per_s']:,.0f} records/s, {result['cpu_s_per_million']:.1f} CPU s/M, "
            f"peak RSS {result['peak_rss_mb']:.0f} MB, REST {result['rest_ready_s']:.1f} s, "
            f"first record {result['first_record_s']:.1f} s"
        )
        if "latency_p99_ms" in result:
            summary += (
                f", latency p50/p99/max {result['latency_p50_ms']:.0f}/{result['latency_p99_ms']:.0f}/"
                f"{result['latency_max_ms']:.0f} ms"
            )
        ctx.log(f"{run_id}: ok: {summary}")
    return result


# ------------------------------------------------------------------------------ workloads


@dataclass
class Prepared:
    connectors: list[dict[str, str]]
    run: Callable[[BenchWorker, Window, float], dict[str, Any]]
    verify: Callable[[float], None]
    close: Callable[[], None] = lambda: None


def _prepare(ctx: Context, wl: Workload, run_dir: Path, run_id: str, lines: int) -> Prepared:
    conv = wl.converter
    names = [f"{run_id}-source", f"{run_id}-sink"]
    source_name, sink_name = names
    sink_file = run_dir / "sink.out"
    if wl.kind in ("a", "c"):
        topic = f"{run_id}-topic"
        ctx.broker.create_topic(topic)
        source = _connector(source_name, "FileStreamSource", conv, file=ctx.input_file(lines).path, topic=topic)
    if wl.kind == "a":
        watcher = OffsetWatcher(ctx.bootstrap, topic)
        state: dict[str, float] = {}

        def run_a(worker: BenchWorker, window: Window, deadline: float) -> dict[str, Any]:
            def done() -> bool:
                n = watcher.total()
                if n and "first" not in state:
                    state["first"] = time.monotonic()
                return n >= lines

            _wait(f"{lines:,} records in {topic}", done, deadline, worker, [source_name])
            return {"first_batch_s": state["first"] - window.start}

        def verify_a(settle: float) -> None:
            time.sleep(settle)
            data.verify_topic(ctx.bootstrap, topic, lines, conv)

        return Prepared([source], run_a, verify_a, watcher.close)

    if wl.kind in ("b", "c", "e"):
        if wl.kind == "c":
            sink_topic = topic
            connectors = [source]
        else:
            sink_topic = ctx.filled_topic(conv, lines, wl.partitions)
            connectors = []
        connectors.append(
            {
                **_connector(sink_name, "FileStreamSink", conv, file=sink_file, topics=sink_topic, tasks_max=wl.tasks),
                **dict(wl.transforms),
            }
        )
        tail = Tail(sink_file)

        def run_sink(worker: BenchWorker, window: Window, deadline: float) -> dict[str, Any]:
            _wait(
                f"{lines:,} lines in the sink file",
                lambda: tail.poll() >= lines,
                deadline,
                worker,
                [c["name"] for c in connectors],
            )
            assert tail.first_seen is not None
            return {"first_batch_s": tail.first_seen - window.start}

        def verify_sink(settle: float) -> None:
            time.sleep(settle)
            if tail.poll() != lines:
                raise CorrectnessError(f"the sink file has {tail.lines} lines after settling, expected {lines}")
            if wl.kind == "e":
                data.verify_file_unordered(sink_file, lines)
            else:
                data.verify_file_ordered(sink_file, ctx.input_file(lines))
            if wl.kind == "c":
                end = data.end_offsets(ctx.bootstrap, sink_topic)[0]
                if end != lines:
                    raise CorrectnessError(f"topic {sink_topic} holds {end} records, expected {lines}")

        return Prepared(connectors, run_sink, verify_sink)

    if wl.kind == "d":
        topic = f"{run_id}-topic"
        ctx.broker.create_topic(topic)
        source_file = run_dir / "latency.in"
        source_file.touch()
        connectors = [
            _connector(source_name, "FileStreamSource", conv, file=source_file, topic=topic),
            _connector(sink_name, "FileStreamSink", conv, file=sink_file, topics=topic),
        ]
        writer = RateWriter(source_file, LATENCY_RATE, ctx.latency_seconds)
        tail = Tail(sink_file, keep_arrivals=True)
        warmup_s = min(5.0, ctx.latency_seconds / 4)

        def run_d(worker: BenchWorker, window: Window, deadline: float) -> dict[str, Any]:
            _wait(
                "tasks RUNNING",
                lambda: all(worker.task_states(n) == ["RUNNING"] for n in names),
                deadline,
                worker,
                names,
                interval=0.1,
            )
            window.begin()  # measure from the first written line: connector start-up is not latency
            writer.start()
            _wait(
                f"{writer.total:,} lines in the sink file",
                lambda: tail.poll() >= writer.total and not writer.is_alive(),
                deadline,
                worker,
                names,
                interval=0.005,
            )
            measured = sorted(data.latency_ms(tail.arrivals, skip_seq=int(LATENCY_RATE * warmup_s)))
            everything = data.latency_ms(tail.arrivals, skip_seq=0)
            return {
                "latency_p50_ms": data.percentile(measured, 50),
                "latency_p99_ms": data.percentile(measured, 99),
                "latency_max_ms": measured[-1] if measured else float("nan"),
                "latency_max_including_warmup_ms": max(everything) if everything else float("nan"),
                "latency_warmup_s": warmup_s,
                "latency_samples": len(measured),
                "writer_max_behind_lines": writer.max_behind,
            }

        def verify_d(settle: float) -> None:
            time.sleep(settle)
            if tail.poll() != writer.total:
                raise CorrectnessError(f"the sink file has {tail.lines} lines after settling, expected {writer.total}")
            if data.file_digest(sink_file) != (writer.size, writer.digest.hexdigest()):
                raise CorrectnessError(
                    "the sink file differs from the lines written (lost, repeated or reordered lines)"
                )

        def close_d() -> None:
            writer.stop()

        return Prepared(connectors, run_d, verify_d, close_d)
    raise ValueError(wl.kind)


# --------------------------------------------------------------------------------- bounds


def _kafka_tool(ctx: Context, main: str, args: list[str], log_name: str) -> str:
    command = [
        str(java_executable()),
        "-Xmx1G",
        "-XX:+UseG1GC",
        f"-Dlog4j2.configurationFile=file:{CONNECT_LOG4J}",
        "-cp",
        os.pathsep.join(str(p) for p in kafka_broker_classpath()),
        main,
        *args,
    ]
    proc = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=1800)
    (ctx.work / log_name).write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise RuntimeError(f"{main} failed with {proc.returncode}:\n{(proc.stdout + proc.stderr)[-3000:]}")
    return proc.stdout


# The producer bound batches for throughput (the defaults, batch.size=16384 and linger.ms=5,
# reach about half of it on one partition); acks stays at its default, all.
BOUND_PRODUCER_PROPS = {"batch.size": "262144", "linger.ms": "10"}


def producer_bound(ctx: Context, lines: int, props: dict[str, str] | None = None) -> dict[str, Any]:
    """Kafka's ProducerPerformance: ``lines`` records of 100 bytes into a fresh topic."""
    topic = ctx.next_id("bound-producer")
    ctx.broker.create_topic(topic)
    extra = ["--producer-props", *(f"{k}={v}" for k, v in props.items())] if props else []
    out = _kafka_tool(
        ctx,
        "org.apache.kafka.tools.ProducerPerformance",
        [
            "--bootstrap-server",
            ctx.bootstrap,
            "--topic",
            topic,
            "--num-records",
            str(lines),
            "--record-size",
            str(data.LINE_BYTES),
            "--throughput",
            "-1",
            *extra,
        ],
        f"{topic}.log",
    )
    summary = [m for m in re.finditer(r"(\d+) records sent, ([\d.]+) records/sec", out)][-1]
    if int(summary.group(1)) != lines:
        raise RuntimeError(f"ProducerPerformance sent {summary.group(1)} records, not {lines}")
    return {
        "tool": "ProducerPerformance",
        "topic": topic,
        "records_per_s": float(summary.group(2)),
        "producer_props": dict(props or {}),
        "output": out.strip().splitlines()[-1],
    }


def consumer_bound(ctx: Context, topic: str, lines: int) -> dict[str, Any]:
    """Kafka's ConsumerPerformance reading ``lines`` records of ``topic``."""
    out = _kafka_tool(
        ctx,
        "org.apache.kafka.tools.ConsumerPerformance",
        [
            "--bootstrap-server",
            ctx.bootstrap,
            "--topic",
            topic,
            "--num-records",
            str(lines),
            "--timeout",
            "120000",
            "--group",
            f"bound-{topic}",
        ],
        f"bound-consumer-{topic}.log",
    )
    rows = [ln for ln in out.splitlines() if ln.count(",") >= 9]
    header = [h.strip() for h in rows[0].split(",")]
    values = dict(zip(header, (v.strip() for v in rows[-1].split(",")), strict=False))
    consumed = int(float(values["data.consumed.in.nMsg"]))
    if consumed < lines:
        raise RuntimeError(f"ConsumerPerformance read {consumed} records of {topic}, not {lines}")
    fetch_rate = float(values["fetch.nMsg.sec"])
    overall = float(values["nMsg.sec"])
    return {
        "tool": "ConsumerPerformance",
        "topic": topic,
        "records_per_s": fetch_rate or overall,
        "records_per_s_including_group_join": overall,
        "output": rows[-1].strip(),
    }


def kafka_bounds(ctx: Context, lines: int, need_partitioned: bool) -> dict[str, Any]:
    bounds: dict[str, Any] = {}
    producer = producer_bound(ctx, lines, BOUND_PRODUCER_PROPS)
    ctx.log(f"bound: ProducerPerformance {producer['records_per_s']:,.0f} records/s")
    defaults = producer_bound(ctx, lines)
    producer["records_per_s_default_props"] = defaults["records_per_s"]
    ctx.log(f"reference: ProducerPerformance with default producer settings {defaults['records_per_s']:,.0f} records/s")
    consumer = consumer_bound(ctx, producer["topic"], lines)
    ctx.log(f"bound: ConsumerPerformance {consumer['records_per_s']:,.0f} records/s")
    bounds["producer"], bounds["consumer"] = producer, consumer
    if need_partitioned:
        topic = ctx.filled_topic("string", lines, 4)
        bounds["consumer_4p"] = consumer_bound(ctx, topic, lines)
        ctx.log(f"bound: ConsumerPerformance on 4 partitions {bounds['consumer_4p']['records_per_s']:,.0f} records/s")
    return bounds


def bound_for(workload: Workload | dict[str, Any], bounds: dict[str, Any]) -> tuple[float, str] | None:
    """(records/s, description) of the Kafka bound that applies to a workload, if any."""
    kind = workload.kind if isinstance(workload, Workload) else workload["kind"]
    producer, consumer = bounds.get("producer"), bounds.get("consumer")
    if kind == "a" and producer:
        return producer["records_per_s"], "ProducerPerformance"
    if kind == "b" and consumer:
        return consumer["records_per_s"], "ConsumerPerformance"
    if kind == "c" and producer and consumer:
        slower = min((producer, consumer), key=lambda b: b["records_per_s"])
        return slower["records_per_s"], f"the slower of ProducerPerformance and ConsumerPerformance ({slower['tool']})"
    if kind == "e" and bounds.get("consumer_4p"):
        return bounds["consumer_4p"]["records_per_s"], "ConsumerPerformance, 4 partitions"
    return None


def workload_dict(wl: Workload) -> dict[str, Any]:
    """The workload as JSON-ready fields (the transform and worker properties only when set)."""
    out = dataclasses.asdict(wl)
    for key in ("transforms", "sluice_worker"):
        if out[key]:
            out[key] = dict(out[key])
        else:
            del out[key]
    return out
