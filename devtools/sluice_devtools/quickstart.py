"""``sluice quickstart``: Kafka Connect's file quickstart, in Python, on Spark.

Starts a local Kafka broker, then a standalone worker (local Spark) running
FileStreamSource (input file → topic ``connect-test``) and FileStreamSink
(``connect-test`` → output file); appends lines to the input and shows them
arriving in the output, with the connectors' status from the REST API.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx2

from sluice.cli.connect import StandaloneConnect
from sluice.cli.main import setup_logging
from sluice_devtools.cache import run_dir
from sluice_devtools.kafka import KafkaBroker
from sluice_devtools.processes import free_port

__all__ = ["quickstart_main", "run_quickstart"]

TOPIC = "connect-test"


def _say(text: str) -> None:
    print(f"==> {text}", flush=True)


def _wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


def quickstart_main(argv: Sequence[str]) -> int:
    """``sluice quickstart`` with the arguments after ``quickstart``; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="sluice quickstart", description="Local broker + Spark + a file source and sink, end to end."
    )
    parser.add_argument("--lines", type=int, default=5, help="lines to append to the input file")
    parser.add_argument("--exit", action="store_true", help="stop everything after the demonstration")
    parser.add_argument("--dir", default=None, help="work directory (default: <cache>/run/quickstart)")
    args = parser.parse_args(list(argv))
    setup_logging()  # the worker's logging, as `sluice standalone` has it (or `sluice --log-level`'s)
    return run_quickstart(lines=args.lines, exit_after=args.exit, work_dir=args.dir)


def run_quickstart(lines: int = 5, exit_after: bool = False, work_dir: str | None = None) -> int:
    work = Path(work_dir) if work_dir else run_dir("quickstart", create=False)
    if work.exists():
        # A broker left running by an interrupted quickstart is stopped (by its pid)
        # before its directory is wiped: each run starts from a clean slate.
        KafkaBroker(work / "kafka").stop()
        shutil.rmtree(work)
    work.mkdir(parents=True)
    source_file, sink_file = work / "test.txt", work / "test.sink.txt"
    source_file.touch()

    _say("Starting a local Kafka broker (KRaft, one node)")
    broker = KafkaBroker(work / "kafka")
    bootstrap = broker.start()
    _say(f"Kafka is up at {bootstrap}")
    broker.create_topic(TOPIC)

    port = free_port()
    worker_props = {
        "bootstrap.servers": bootstrap,
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "true",
        "value.converter.schemas.enable": "true",
        "offset.storage.file.filename": str(work / "connect.offsets"),
        "listeners": f"http://127.0.0.1:{port}",
    }
    source = {
        "name": "local-file-source",
        "connector.class": "FileStreamSource",
        "tasks.max": "1",
        "file": str(source_file),
        "topic": TOPIC,
    }
    sink = {
        "name": "local-file-sink",
        "connector.class": "FileStreamSink",
        "tasks.max": "1",
        "file": str(sink_file),
        "topics": TOPIC,
    }
    _say("Starting a standalone Sluice worker (tasks run on local Spark)")
    connect = StandaloneConnect(worker_props)
    ok = False
    try:
        connect.start([(source, None), (sink, None)])
        url = connect.url
        _say(f"Worker REST API at {url}")
        client = httpx2.Client(base_url=url, timeout=10)

        def all_running() -> bool:
            for name in ("local-file-source", "local-file-sink"):
                r = client.get(f"/connectors/{name}/status")
                if r.status_code != 200:
                    return False
                body = r.json()
                for part in [body["connector"], *body["tasks"]]:
                    if part["state"] == "FAILED":
                        raise RuntimeError(f"{name} failed:\n{part.get('trace', '(no trace)')}")
                states = [body["connector"]["state"]] + [t["state"] for t in body["tasks"]]
                if not body["tasks"] or any(s != "RUNNING" for s in states):
                    return False
            return True

        _wait_for(all_running, 180, "the connectors and their tasks to be RUNNING")
        for name in ("local-file-source", "local-file-sink"):
            _say(f"GET /connectors/{name}/status")
            print(json.dumps(client.get(f"/connectors/{name}/status").json(), indent=2), flush=True)

        expected = [f"hello from sluice, line {i}" for i in range(1, lines + 1)]
        _say(f"Appending {lines} lines to {source_file}")
        with source_file.open("a", encoding="utf-8") as out:
            out.writelines(line + "\n" for line in expected)

        def arrived() -> bool:
            return sink_file.exists() and sink_file.read_text(encoding="utf-8").splitlines() == expected

        _wait_for(arrived, 120, f"{lines} lines in {sink_file}")
        _say(f"All {lines} lines arrived in {sink_file}:")
        for line in sink_file.read_text(encoding="utf-8").splitlines():
            print(f"    {line}", flush=True)
        ok = True
        if exit_after:
            return 0
        _say(
            f"Still running. Append lines to {source_file} and watch {sink_file}; "
            f"try: curl -s {url}/connectors?expand=status ; press Ctrl-C to stop."
        )
        seen = len(expected)
        while True:
            time.sleep(0.5)
            current = sink_file.read_text(encoding="utf-8").splitlines()
            for line in current[seen:]:
                print(f"    {line}", flush=True)
            seen = len(current)
    except KeyboardInterrupt:
        return 0
    except Exception as exc:  # noqa: BLE001 - whatever stops the quickstart is said in one line, with exit code 1
        print(f"sluice quickstart: {exc}", file=sys.stderr)
        return 1
    finally:
        _say("Stopping the worker and the broker")
        connect.stop()
        broker.stop()
        if not ok:
            print(f"(work directory kept for inspection: {work})", file=sys.stderr)
