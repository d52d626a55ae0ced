"""Bounce test of issue 5: a verifiable source and a verifiable sink with three tasks each on
three ``sluice distributed`` workers. The workers are restarted one by one in a clean round
(Kafka's system test does three; one restarts every worker and moves every task at least
once, in the suite's time), then one is SIGKILLed. Per source task,
the committed source seqnos and the sink's flushed seqnos have no gaps; after the clean
rounds, no duplicates either.

It runs twice: with Sluice's Python verifiable connectors (which write their reports to a
file), and with Kafka's own Java ones from ``connect-test-plugins`` 4.3.1 (issue 32), whose
tasks run in the JVM task host and print their reports to standard output, as in Kafka's
system tests: the workers' logs hold them.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import NewTopic

from sluice.connectors.testing.report import parse_report_line
from sluice_devtools.jars import kafka_connect_test_plugins_classpath
from tests import http_client
from tests.helpers import wait_until
from tests.integration.workers import DistributedWorker, start_together

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1500)]

STRING = "org.apache.kafka.connect.storage.StringConverter"
SETTINGS = {
    "key.converter": STRING,
    "value.converter": STRING,
    "session.timeout.ms": "8000",
    "heartbeat.interval.ms": "2000",
    "scheduled.rebalance.max.delay.ms": "3000",
    # A clean stop repeats nothing only if the batch under way finishes before the task is
    # abandoned; a cold first batch on two busy cores can take 20 s, beyond Kafka's 5 s
    # default (after which the batch is delivered again: at least once).
    "task.shutdown.graceful.timeout.ms": "30000",
    # The sinks report what they flushed within seconds: at the 60 s default, Kafka's Java
    # sink reports it up to a minute late, and the test waited for it twice.
    "offset.flush.interval.ms": "5000",
}
TASKS = 3


def _printed_entry(line: str) -> dict[str, Any] | None:
    """The JSON report a Java verifiable task printed on a line of a worker's log, if any."""
    start = line.find('{"')
    if start < 0 or '"seqno"' not in line:
        return None
    entry = parse_report_line(line[start:])
    if entry is None or "task" not in entry:
        return None
    # The sink prints the record's key and value, strings with StringConverter.
    entry["task"], entry["seqno"] = int(entry["task"]), int(entry["seqno"])
    return entry


class _Reports:
    """The report entries in the growing files ``paths()`` names, each file read on from
    where the last look ended: the test looks several times a second, and parsing megabytes
    of logs from the start each time cost more CPU than the workers under test."""

    def __init__(self, parse: Callable[[str], dict[str, Any] | None], paths: Callable[[], Iterable[Path]]) -> None:
        self._parse = parse
        self._paths = paths
        self._read: dict[Path, int] = {}
        self._entries: list[dict[str, Any]] = []

    def entries(self) -> list[dict[str, Any]]:
        for path in self._paths():
            start = self._read.get(path, 0)
            try:
                with path.open("rb") as file:
                    file.seek(start)
                    data = file.read()
            except FileNotFoundError:
                continue
            complete = data[: data.rfind(b"\n") + 1]  # a line still being written waits
            self._read[path] = start + len(complete)
            for line in complete.decode(errors="replace").splitlines():
                entry = self._parse(line)
                if entry is not None:
                    self._entries.append(entry)
        return self._entries


def _seqnos(entries: Iterable[dict[str, Any]], name: str, flag: str) -> dict[int, list[int]]:
    by_task: dict[int, list[int]] = defaultdict(list)
    for entry in entries:
        if entry.get("name") == name and entry.get(flag):
            by_task[entry["task"]].append(entry["seqno"])
    return by_task


def _no_gaps(seqnos: list[int]) -> bool:
    return bool(seqnos) and sorted(set(seqnos)) == list(range(max(seqnos) + 1))


@pytest.mark.parametrize("runtime", ["python", "java"])
def test_bounce_keeps_every_seqno(kafka_bootstrap, unique_name, tmp_path, runtime):
    from confluent_kafka.admin import AdminClient

    java = runtime == "java"
    env: dict[str, str] = {}
    plugin: dict[str, str] = {}
    if java:
        env["CLASSPATH"] = os.pathsep.join(map(str, kafka_connect_test_plugins_classpath()))
        plugin["connector.plugin.version"] = "4.3.1"

    topic = f"{unique_name}-t"
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    admin.create_topics([NewTopic(topic, TASKS, 1)])[topic].result(30)
    group = unique_name
    generation = [0]

    def new_worker(slot: int) -> DistributedWorker:
        generation[0] += 1
        name = f"w{slot}-{generation[0]}"
        worker = DistributedWorker(tmp_path / name, kafka_bootstrap, name, group, extra=SETTINGS, env=env)
        everyone.append(worker)
        return worker

    everyone: list[DistributedWorker] = []
    workers = [new_worker(i) for i in range(3)]
    source_report, sink_report = tmp_path / "source.jsonl", tmp_path / "sink.jsonl"
    source, sink = f"{unique_name}-src", f"{unique_name}-sink"

    if java:  # both connectors print into the workers' logs
        source_entries = sink_entries = _Reports(_printed_entry, lambda: [w.log_path for w in everyone]).entries
    else:
        source_entries = _Reports(parse_report_line, lambda: [source_report]).entries
        sink_entries = _Reports(parse_report_line, lambda: [sink_report]).entries

    try:
        start_together(workers)
        http_client.put(
            f"{workers[0].url}/connectors/{source}/config",
            timeout=60,
            json={
                "connector.class": "org.apache.kafka.connect.tools.VerifiableSourceConnector",
                "tasks.max": str(TASKS),
                "topic": topic,
                "throughput": "20",
                "report.file": str(source_report),
                **plugin,
            },
        ).raise_for_status()
        http_client.put(
            f"{workers[1].url}/connectors/{sink}/config",
            timeout=60,
            json={
                "connector.class": "org.apache.kafka.connect.tools.VerifiableSinkConnector",
                "tasks.max": str(TASKS),
                "topics": topic,
                "report.file": str(sink_report),
                **plugin,
            },
        ).raise_for_status()

        def all_running() -> bool:
            for name in (source, sink):
                r = workers[0].get(f"/connectors/{name}/status")
                if r.status_code != 200:
                    return False
                body = r.json()
                if (
                    body["connector"]["state"] != "RUNNING"
                    or [t["state"] for t in body["tasks"]] != ["RUNNING"] * TASKS
                ):
                    return False
            return True

        def committed_progress() -> dict[int, int]:
            return {t: max(s, default=-1) for t, s in _seqnos(source_entries(), source, "committed").items()}

        def bounce(slot: int, kill: bool) -> None:
            before = committed_progress()
            old = workers[slot]
            if kill:
                old.kill()
            else:
                assert old.stop() == 0, old.log()
            workers[slot] = new_worker(slot)
            workers[slot].start(timeout=180)
            wait_until(all_running, timeout=180, message=lambda: f"all RUNNING after bouncing {old.name}")
            # every source task commits more after the bounce
            wait_until(
                lambda: all(committed_progress().get(t, -1) > before.get(t, -1) + 5 for t in range(TASKS)),
                timeout=120,
                message=lambda: f"progress after bouncing {old.name}: {committed_progress()}",
            )

        wait_until(all_running, timeout=180, message="all RUNNING")
        for slot in range(3):
            bounce(slot, kill=False)
        clean_committed = _seqnos(source_entries(), source, "committed")
        for task in range(TASKS):
            assert clean_committed[task] == list(range(len(clean_committed[task]))), f"source task {task}"
        top = {t: max(clean_committed[t]) for t in range(TASKS)}
        wait_until(
            lambda: all(max(_seqnos(sink_entries(), sink, "flushed").get(t, [-1])) >= top[t] for t in range(TASKS)),
            timeout=120,
            message="the sink flushed what the source committed",
        )
        flushed = _seqnos(sink_entries(), sink, "flushed")
        for task in range(TASKS):
            upto = [s for s in flushed[task] if s <= top[task]]
            assert sorted(upto) == list(range(top[task] + 1)), f"sink, source task {task}: gaps or duplicates"

        bounce(1, kill=True)
        committed = _seqnos(source_entries(), source, "committed")
        final = {t: max(committed[t]) for t in range(TASKS)}
        wait_until(
            lambda: all(max(_seqnos(sink_entries(), sink, "flushed").get(t, [-1])) >= final[t] for t in range(TASKS)),
            timeout=120,
            message="the sink flushed what the source committed after the kill",
        )
        flushed = _seqnos(sink_entries(), sink, "flushed")
        for task in range(TASKS):
            assert _no_gaps(committed[task]), f"source task {task} after SIGKILL"
            assert _no_gaps([s for s in flushed[task] if s <= final[task]]), f"sink, source task {task} after SIGKILL"
    finally:
        for worker in workers:
            worker.kill()
