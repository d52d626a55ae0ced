"""Apache Kafka Connect and Sluice, side by side on the same broker and machine.

    .venv/bin/python bench/compare.py [--lines 1000000] [--latency-seconds 60]
        [--workloads a,b,c,d,e] [--converters json,string] [--output docs/benchmarks.md] [--no-chart]
    .venv/bin/python bench/compare.py --from-json docs/benchmarks.json   # re-render the page only

Starts one Kafka broker with the project's tooling, fetches Apache Kafka Connect
(``connect-runtime``, ``connect-json``, ``connect-file``) into the cache on first use,
measures Kafka's own producer and consumer performance tools as the upper bound, warms up
each system, then runs each workload once on Kafka Connect and once on Sluice
(alternating which goes first) — ``--rounds`` times, the report giving the medians — each on
a fresh worker process, fresh topics and files:

* (a) FileStreamSource → topic; (b) topic → FileStreamSink from a pre-filled topic;
  (c) both at once, end to end — each with JsonConverter (schemas off) and StringConverter;
* (d) end-to-end latency at 5,000 lines/s for ``--latency-seconds``;
* (e) a FileStreamSink on a 4-partition topic with ``tasks.max`` 1 and 2.

With ``--java-plugins`` Sluice runs Kafka's own Java file connectors — the connect-file jar
Kafka Connect runs, on Sluice's ``plugin.path``, picked with ``connector.plugin.version`` —
instead of its built-ins: the task code is then the same on both, and the runs measure the
runtime around it.

Every run checks that its output holds every input line exactly once; a run that does
not is reported as FAILED, with no figures, and the command exits with status 1.

Writes ``--output`` (the generated part of the page; the rest of an existing page is
kept), and next to it the chart (``.png``, unless ``--no-chart``) and the raw results
(``.json``). See ``bench/harness/runs.py`` for what exactly is measured.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.harness import report  # noqa: E402
from bench.harness.machine import describe_machine  # noqa: E402
from bench.harness.runs import (  # noqa: E402
    Context,
    Workload,
    build_workloads,
    kafka_bounds,
    run_workload,
    workload_dict,
)
from sluice_devtools import jars  # noqa: E402
from sluice_devtools.kafka import KafkaBroker  # noqa: E402

ALL_WORKLOADS = "a,b,c,d,e"
ALL_CONVERTERS = "json,string"


def _log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _sluice_default_master() -> str:
    from sluice.spark.session import DEFAULTS

    return DEFAULTS["spark.master"]


def _command_line(argv: list[str]) -> str:
    return shlex.join([".venv/bin/python", "bench/compare.py", *argv])


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lines", type=int, default=1_000_000, help="lines per throughput run (default 1,000,000)")
    parser.add_argument(
        "--latency-seconds",
        type=float,
        default=60.0,
        help="duration of the latency workload (d) at 5,000 lines/s (default 60)",
    )
    parser.add_argument("--workloads", default=ALL_WORKLOADS, help=f"comma-separated (default {ALL_WORKLOADS})")
    parser.add_argument(
        "--converters", default=ALL_CONVERTERS, help=f"converters for workloads a, b, c (default {ALL_CONVERTERS})"
    )
    parser.add_argument("--output", type=Path, default=REPO / "docs" / "benchmarks.md")
    parser.add_argument("--no-chart", action="store_true", help="do not draw the PNG chart")
    parser.add_argument(
        "--warmup-lines",
        type=int,
        default=None,
        help="lines of each system's warm-up run (default min(--lines, 50,000))",
    )
    parser.add_argument(
        "--idle-seconds", type=float, default=10.0, help="idle CPU measurement after the warm-up runs (default 10)"
    )
    parser.add_argument(
        "--settle-seconds",
        type=float,
        default=2.0,
        help="wait for late or repeated records before each correctness check (default 2)",
    )
    parser.add_argument(
        "--sluice-log-level",
        default="INFO",
        help="Sluice workers' --log-level (DEBUG logs every micro-batch; default INFO)",
    )
    parser.add_argument(
        "--java-plugins",
        action="store_true",
        help="Sluice runs Kafka's Java file connectors (connect-file) instead of its built-ins",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="runs of each workload on each system; the order flips every round and the report "
        "gives the medians (default 1)",
    )
    parser.add_argument("--work-dir", type=Path, help="keep the brokers', workers' and runs' files here")
    parser.add_argument("--from-json", type=Path, help="only re-render --output (and its chart) from these results")
    args = parser.parse_args(argv)
    args.workload_kinds = [w.strip() for w in args.workloads.split(",") if w.strip()]
    args.converter_ids = [c.strip() for c in args.converters.split(",") if c.strip()]
    for conv in args.converter_ids:
        if conv not in ("json", "string"):
            parser.error(f"unknown converter {conv!r} (json or string)")
    try:
        build_workloads(args.workload_kinds, args.converter_ids)
    except ValueError as exc:
        parser.error(str(exc))
    if args.lines < 1 or args.latency_seconds <= 0 or args.rounds < 1:
        parser.error("--lines, --latency-seconds and --rounds must be positive")
    return args


def run(args: argparse.Namespace, argv: list[str]) -> dict[str, Any]:
    workloads: list[Workload] = build_workloads(args.workload_kinds, args.converter_ids)
    warmup_lines = args.warmup_lines or min(args.lines, 50_000)
    started = time.monotonic()
    date = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    _log("fetching Kafka Connect and the Kafka and Spark jars (first use only)")
    jars.kafka_connect_classpath()
    jars.fetch_all()
    machine = describe_machine()
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="sluice-compare-"))
    work.mkdir(parents=True, exist_ok=True)
    broker = KafkaBroker(work / "kafka", heap="1g")
    results: dict[str, Any] = {
        "meta": {
            "load_before": os.getloadavg(),
            "date": date,
            "command": _command_line(argv),
            "machine": machine,
            "sluice_spark_master": _sluice_default_master(),
            "lines": args.lines,
            "latency_seconds": args.latency_seconds,
            "warmup_lines": warmup_lines,
            "idle_seconds": args.idle_seconds,
            "settle_seconds": args.settle_seconds,
            "json_name": args.output.with_suffix(".json").name,
            "sluice_java_plugins": bool(args.java_plugins),
            "rounds": args.rounds,
        },
        "workloads": [workload_dict(w) for w in workloads],
        "bounds": {},
        "warmup": [],
        "runs": [],
    }
    try:
        _log(f"starting a Kafka broker in {work / 'kafka'}")
        broker.start(timeout=120)
        ctx = Context(
            broker,
            work,
            args.lines,
            args.latency_seconds,
            args.settle_seconds,
            log=_log,
            sluice_log_level=args.sluice_log_level,
            java_plugins=jars.kafka_connect_classpath()[1] if args.java_plugins else None,
        )
        kinds = {w.kind for w in workloads}
        if kinds & {"a", "b", "c", "e"}:
            results["bounds"] = kafka_bounds(ctx, args.lines, need_partitioned="e" in kinds)
        for wl in workloads:  # fill the sink workloads' topics before any measured run
            if wl.kind in ("b", "e"):
                ctx.filled_topic(wl.converter, args.lines, wl.partitions)
        if "a" in kinds or "c" in kinds:
            ctx.input_file(args.lines)
        warmup = Workload("warmup", "c", "warm-up: (c) end to end, StringConverter", "string")
        for system in ("connect", "sluice"):
            results["warmup"].append(
                run_workload(ctx, system, warmup, lines=warmup_lines, idle_seconds=args.idle_seconds)
            )
        for round_ in range(args.rounds):
            # Which system goes first flips from workload to workload and from round to round:
            # a run right after another (its writes still being flushed) is not always the same one.
            for i, wl in enumerate(workloads):
                order = ("connect", "sluice") if (i + round_) % 2 == 0 else ("sluice", "connect")
                for system in order:
                    results["runs"].append({**run_workload(ctx, system, wl), "round": round_ + 1})
    finally:
        broker.stop()
        if args.work_dir is None:
            shutil.rmtree(work, ignore_errors=True)
    results["meta"]["duration_s"] = time.monotonic() - started
    results["meta"]["load_after"] = os.getloadavg()
    return results


def write_outputs(results: dict[str, Any], output: Path, chart: bool) -> list[Path]:
    output.parent.mkdir(parents=True, exist_ok=True)
    json_path = output.with_suffix(".json")
    png_path = output.with_suffix(".png")
    written = []
    if chart:
        try:
            report.render_chart(results, png_path)
            written.append(png_path)
        except ImportError:
            _log("matplotlib is not installed (pip install -e '.[bench]'): no chart")
            chart = False
    generated = report.render_markdown(results, png_path.name if chart else None)
    existing = output.read_text() if output.exists() else None
    output.write_text(report.merge_into_page(existing, generated))
    written.append(output)
    json_path.write_text(json.dumps(results, indent=1) + "\n")
    written.append(json_path)
    return written


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.from_json:
        results = json.loads(args.from_json.read_text())
    else:
        results = run(args, argv)
    for path in write_outputs(results, args.output, chart=not args.no_chart):
        _log(f"wrote {path}")
    failed = [r for r in results["runs"] + results["warmup"] if not r.get("ok")]
    for r in failed:
        _log(f"FAILED: {r['workload']} on {r['system']}: {r.get('error', '')[:500]}")
    ok = [r for r in results["runs"] if r.get("ok")]
    _log(f"{len(ok)} runs ok, {len(failed)} failed, in {results['meta']['duration_s'] / 60:.1f} min")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
