"""Change data capture from PostgreSQL: Debezium's ``PostgresConnector`` (3.6.1.Final) on
Sluice against the same plugin on Apache Kafka Connect 4.3.1 — same broker, same PostgreSQL,
same machine, one run, alternating order.

    .venv/bin/python bench/debezium.py [--changes 300000] [--rounds 3] [--warmup-runs 1] [--txn-rows 1000]
        [--systems connect,sluice] [--output /tmp/sluice-debezium.json]

Starts a Kafka broker and a PostgreSQL server (``wal_level=logical``) with the project's
tooling. Each run has a table, a replication slot and a publication of its own and a fresh
worker process: the connector (``pgoutput``, ``snapshot.mode=no_data``, JSON with schemas)
starts and streams ``--warmup`` inserted rows (the worker's warm-up, unmeasured), is stopped
(``PUT /connectors/{c}/stop``: its task ends and its offset, the LSN, is kept), ``--changes``
rows are inserted in transactions of ``--txn-rows`` while it is stopped, and then it is
resumed: the run measures from the resume until the topic holds every change — the
connector catching up on a backlog in its slot, as after a restart or an outage. Changes/s,
CPU seconds per million changes of the worker's process tree, and the tree's peak RSS over
the whole run. Each run checks that the topic holds one change per inserted row (every id
once); a run that does not is FAILED. After one unmeasured run of each system, rounds
alternate which system goes first. Prints a table of the medians and writes every run to
``--output``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.harness.data import OffsetWatcher  # noqa: E402
from bench.harness.page import add_warmup_runs, alternating, chosen_systems, log, median, ratio  # noqa: E402
from bench.harness.procs import PeakRss, sample_tree  # noqa: E402
from bench.harness.workers import BenchWorker, ConnectWorker, SluiceWorker, java_task_settings  # noqa: E402
from sluice_devtools import jars  # noqa: E402
from sluice_devtools.databases import PostgresServer  # noqa: E402
from sluice_devtools.kafka import KafkaBroker  # noqa: E402
from tests.integration.workers import TEST_PLUGINS  # noqa: E402

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
SYSTEMS = ("connect", "sluice")
LABELS = {
    "connect": f"PostgresConnector {jars.DEBEZIUM_VERSION} on Kafka Connect 4.3.1",
    "sluice": f"PostgresConnector {jars.DEBEZIUM_VERSION} on Sluice",
}


class Names:
    """The PostgreSQL objects and the topic of one run."""

    def __init__(self, index: int) -> None:
        self.table = f"bench_{index:02d}"
        self.slot = f"bench_slot_{index:02d}"
        self.publication = f"bench_pub_{index:02d}"
        self.prefix = f"cdc{index:02d}"
        self.topic = f"{self.prefix}.public.{self.table}"


def _sql(db: PostgresServer, *statements: str) -> None:
    with db.connect(autocommit=True) as connection:
        for statement in statements:
            connection.execute(statement)


def _insert(db: PostgresServer, table: str, first: int, count: int, txn_rows: int) -> None:
    """Rows ``first`` .. ``first + count - 1`` (about 100 bytes each), ``txn_rows`` per transaction."""
    with db.connect(autocommit=True) as connection:
        for start in range(first, first + count, txn_rows):
            end = min(start + txn_rows, first + count) - 1
            connection.execute(
                f"INSERT INTO {table} SELECT g, md5(g::text) || md5((g + 1)::text), g * 7, now() "
                f"FROM generate_series({start}, {end}) g"
            )


def _prepare(db: PostgresServer, broker: KafkaBroker, names: Names) -> None:
    _sql(
        db,
        f"CREATE TABLE {names.table} (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount BIGINT NOT NULL, "
        "updated TIMESTAMPTZ NOT NULL)",
    )
    # the topic exists before either system runs: neither pays for its creation
    broker.create_topic(names.topic)


def _drop(db: PostgresServer, names: Names) -> None:
    """The run's slot (a slot left behind keeps WAL forever), publication and table."""
    deadline = time.monotonic() + 60
    with db.connect(autocommit=True) as connection:
        while True:
            rows = connection.execute(
                "SELECT active FROM pg_replication_slots WHERE slot_name = %s", (names.slot,)
            ).fetchall()
            if not rows:
                break
            if not rows[0][0]:
                connection.execute("SELECT pg_drop_replication_slot(%s)", (names.slot,))
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"replication slot {names.slot} still in use a minute after its worker stopped")
            time.sleep(0.2)
        connection.execute(f"DROP PUBLICATION IF EXISTS {names.publication}")
        connection.execute(f"DROP TABLE IF EXISTS {names.table}")


def _connector(db: PostgresServer, names: Names) -> dict[str, str]:
    return {
        "name": "cdc",
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "tasks.max": "1",
        "database.hostname": db.host,
        "database.port": str(db.port),
        "database.user": db.user,
        "database.password": db.password,
        "database.dbname": db.database,
        "topic.prefix": names.prefix,
        "plugin.name": "pgoutput",
        "slot.name": names.slot,
        "publication.name": names.publication,
        "publication.autocreate.mode": "filtered",
        "table.include.list": f"public.{names.table}",
        "snapshot.mode": "no_data",
        "key.converter": JSON_CONVERTER,
        "value.converter": JSON_CONVERTER,
    }


def _worker(system: str, run_dir: Path, bootstrap: str, plugins: Path) -> BenchWorker:
    if system == "connect":
        return ConnectWorker(run_dir, bootstrap, "connect", plugin_dirs=[plugins])
    return SluiceWorker(
        run_dir, bootstrap, "sluice", extra={"plugin.path": f"{TEST_PLUGINS},{plugins}", **java_task_settings()}
    )


def _wait(what: str, condition: Any, deadline: float, worker: BenchWorker) -> None:
    while not condition():
        worker.check_alive()
        trace = worker.failure_trace("cdc")
        if trace:
            raise RuntimeError(f"{what}: the connector FAILED:\n{trace}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not done in time\n{worker.log_tail()}")
        time.sleep(0.05)


def _state(worker: BenchWorker) -> tuple[str, list[str]]:
    answer = worker.request("GET", "/connectors/cdc/status")
    if answer.status_code != 200:
        return "", []
    body = answer.json()
    return body["connector"]["state"], [t["state"] for t in body.get("tasks", [])]


def _ids(bootstrap: str, topic: str, start: int, count: int) -> list[int]:
    """The ids in the keys of ``count`` change events of ``topic`` from offset ``start``."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "bench-debezium-check", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, 0, start)])
    ids: list[int] = []
    deadline = time.monotonic() + 300
    try:
        while len(ids) < count and time.monotonic() < deadline:
            for message in consumer.consume(10_000, 1.0):
                if message.error() is None and message.key() is not None:
                    ids.append(int(json.loads(message.key())["payload"]["id"]))
    finally:
        consumer.close()
    return ids[:count]


def run_once(
    system: str,
    index: int,
    label: str,
    work: Path,
    broker: KafkaBroker,
    db: PostgresServer,
    args: argparse.Namespace,
) -> dict[str, Any]:
    run_dir = work / label
    run_dir.mkdir()
    names = Names(index)
    result: dict[str, Any] = {"system": system, "run": label, "changes": args.changes, "ok": False}
    _prepare(db, broker, names)
    worker = _worker(system, run_dir, broker.bootstrap, work / "plugins")
    sampler: PeakRss | None = None
    end_offset = OffsetWatcher(broker.bootstrap, names.topic)
    try:
        worker.launch()
        sampler = PeakRss(worker.pid)
        sampler.start()
        worker.wait_rest_ready()
        worker.create_connector(_connector(db, names))
        _wait("start", lambda: _state(worker) == ("RUNNING", ["RUNNING"]), time.monotonic() + 180, worker)
        # streaming begins once the task has its slot: rows inserted now are changes it sends
        _insert(db, names.table, 1, args.warmup, args.txn_rows)
        _wait("warm-up", lambda: end_offset.total() >= args.warmup, time.monotonic() + 300, worker)
        answer = worker.request("PUT", "/connectors/cdc/stop")
        if answer.status_code not in (200, 202, 204):
            raise RuntimeError(f"stopping the connector answered {answer.status_code}: {answer.text}")
        _wait("stop", lambda: _state(worker) == ("STOPPED", []), time.monotonic() + 120, worker)
        offsets = worker.request("GET", "/connectors/cdc/offsets").json().get("offsets", [])
        if not offsets:
            raise RuntimeError("the stopped connector kept no offset: resuming would skip the backlog")
        _insert(db, names.table, args.warmup + 1, args.changes, args.txn_rows)
        total = args.warmup + args.changes
        started = time.monotonic()
        cpu_before = sample_tree(worker.pid).cpu_seconds
        answer = worker.request("PUT", "/connectors/cdc/resume")
        if answer.status_code not in (200, 202, 204):
            raise RuntimeError(f"resuming the connector answered {answer.status_code}: {answer.text}")
        _wait("backlog", lambda: end_offset.total() >= total, started + max(300.0, args.changes / 1_000), worker)
        elapsed = time.monotonic() - started
        cpu = sample_tree(worker.pid).cpu_seconds - cpu_before
        peak = sampler.stop()
        sampler = None
        written = end_offset.total()
        result.update(
            {
                "seconds": elapsed,
                "changes_per_s": args.changes / elapsed,
                "cpu_s_per_million": cpu / args.changes * 1e6,
                "peak_rss_mb": peak / 2**20,
                "events": written,
            }
        )
        if written != total:
            raise RuntimeError(f"{written:,} change events for {total:,} inserted rows")
        ids = _ids(broker.bootstrap, names.topic, args.warmup, args.changes)
        if sorted(ids) != list(range(args.warmup + 1, total + 1)):
            raise RuntimeError("the change events' ids are not the inserted rows' ids, each once")
        result["ok"] = True
    except Exception as exc:  # noqa: BLE001 - reported as a FAILED run
        result["error"] = str(exc)[-3000:]
    finally:
        if sampler is not None:
            sampler.stop()
        end_offset.close()
        worker.stop()
        _drop(db, names)
    figures = (
        f"{result['changes_per_s']:,.0f} changes/s, {result['cpu_s_per_million']:.1f} CPU s/M, "
        f"peak RSS {result['peak_rss_mb']:,.0f} MB"
        if "changes_per_s" in result
        else ""
    )
    log(f"{label}: {LABELS[system]}: {'ok' if result['ok'] else 'FAILED ' + result['error'][:300]} {figures}")
    return result


def table(runs: list[dict[str, Any]], systems: list[str]) -> str:
    """Markdown: the medians of the successful runs of each system, and the ratios to
    Kafka Connect's."""

    def of(system: str, key: str) -> float | None:
        return median([r for r in runs if r["system"] == system], key)

    rss_base = of("connect", "peak_rss_mb")
    rate_base = of("connect", "changes_per_s")
    lines = [
        "| system | runs ok | changes/s | vs Kafka Connect | CPU s per M changes | peak RSS MB "
        "| RSS vs Kafka Connect |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for system in systems:
        rate, cpu, rss = (of(system, k) for k in ("changes_per_s", "cpu_s_per_million", "peak_rss_mb"))
        ok = sum(1 for r in runs if r["system"] == system and r["ok"])
        total = sum(1 for r in runs if r["system"] == system)
        lines.append(
            f"| {LABELS[system]} | {ok}/{total} | {rate or 0:,.0f} | {ratio(rate, rate_base)} | {cpu or 0:.1f} | "
            f"{rss or 0:,.0f} | {ratio(rss, rss_base)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--changes", type=int, default=300_000)
    parser.add_argument("--warmup", type=int, default=10_000, help="rows streamed before the measured backlog")
    parser.add_argument("--txn-rows", type=int, default=1_000, help="rows per inserting transaction")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    add_warmup_runs(parser)
    parser.add_argument("--output", type=Path, default=Path("/tmp/sluice-debezium.json"))
    args = parser.parse_args(argv)
    systems = chosen_systems(parser, args.systems, SYSTEMS)
    if args.changes < 1 or args.warmup < 1 or args.txn_rows < 1 or args.rounds < 1:
        parser.error("--changes, --warmup, --txn-rows and --rounds must be at least 1")
    log("fetching Kafka Connect and Debezium's PostgreSQL connector (first use only)")
    jars.kafka_connect_classpath()
    jars.fetch_all()
    plugin = jars.debezium_postgres_plugin()
    work = Path(tempfile.mkdtemp(prefix="sluice-debezium-"))
    # PostgreSQL's files must be reachable by its service account when run as root
    db_dir = Path(tempfile.mkdtemp(prefix="sluice-debezium-pg-"))
    broker, db = KafkaBroker(work / "kafka", heap="1g"), PostgresServer(db_dir)
    runs: list[dict[str, Any]] = []
    try:
        broker.start(timeout=120)
        db.start(timeout=120)
        (work / "plugins").mkdir()
        (work / "plugins" / "debezium-connector-postgres").symlink_to(plugin, target_is_directory=True)
        index = 0
        # unmeasured runs: first runs are slower, whoever goes first
        for warmup, system in alternating(systems, args.warmup_runs):
            index += 1
            run_once(system, index, f"warmup{warmup}-{system}", work, broker, db, args)
        for round_, system in alternating(systems, args.rounds):
            index += 1
            result = run_once(system, index, f"r{round_}-{system}", work, broker, db, args)
            runs.append({**result, "round": round_})
    finally:
        db.stop()
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(db_dir, ignore_errors=True)
    args.output.write_text(json.dumps({"command": " ".join(sys.argv), "runs": runs}, indent=2))
    print(table(runs, systems))
    return 0 if all(r["ok"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
