"""Acceptance: a cluster of ``sluice distributed`` workers coordinated through Kafka.

Writes on a follower are forwarded to the leader, work is spread over the workers and
every worker's REST API shows the same state; a SIGKILLed worker's connectors and tasks
run again elsewhere, resuming from the committed offsets; target states survive a
restart of the whole cluster.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition
from prometheus_client.parser import text_string_to_metric_families

from tests import http_client
from tests.helpers import wait_until
from tests.integration.workers import QUICK_GROUP_SETTINGS, DistributedWorker, start_together

pytestmark = pytest.mark.integration

CLUSTER = {
    **QUICK_GROUP_SETTINGS,
    # A clean stop repeats nothing only if the batch under way finishes before the task is
    # abandoned; a cold first batch on two busy cores can take 20 s, beyond Kafka's 5 s
    # default (after which the batch is delivered again: at least once).
    "task.shutdown.graceful.timeout.ms": "30000",
}


def _worker(tmp: Path, bootstrap: str, name: str, group: str) -> DistributedWorker:
    return DistributedWorker(tmp, bootstrap, name, group, extra=CLUSTER)


def _start_cluster(tmp: Path, prefix: str, bootstrap: str, group: str) -> list[DistributedWorker]:
    """Three workers of ``group`` named ``<prefix>0``..``<prefix>2``, started together."""
    return start_together([_worker(tmp / f"{prefix}{i}", bootstrap, f"{prefix}{i}", group) for i in range(3)])


def _topic_values(bootstrap: str, topic: str) -> list[str]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{topic}", "enable.auto.commit": False})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        consumer.assign([TopicPartition(topic, 0, low)])
        values: list[str] = []
        while len(values) < high - low:
            msg = consumer.poll(1.0)
            if msg is not None and msg.error() is None:
                values.append(msg.value().decode())
        return values
    finally:
        consumer.close()


def _states(worker: DistributedWorker) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """{connector: (state, [(task state, worker id)])} as one worker sees it."""
    body = worker.get("/connectors?expand=status").json()
    return {
        name: (entry["status"]["connector"]["state"], [(t["state"], t["worker_id"]) for t in entry["status"]["tasks"]])
        for name, entry in body.items()
    }


def _stored_position(worker: DistributedWorker, name: str) -> int | None:
    """The file position a FileStreamSource connector's stored offsets name, if any."""
    offsets = worker.get(f"/connectors/{name}/offsets").json().get("offsets") or []
    return offsets[0]["offset"].get("position") if offsets else None


def _source(tmp: Path, name: str, topic: str, lines: int) -> dict[str, str]:
    path = tmp / f"{name}.txt"
    path.write_text("".join(f"{name}-{i}\n" for i in range(lines)))
    return {"connector.class": "FileStreamSource", "file": str(path), "topic": topic}


def test_cluster_forwards_writes_spreads_work_and_survives_a_killed_worker(kafka_bootstrap, unique_name, tmp_path):
    group = unique_name
    first = _worker(tmp_path / "w1", kafka_bootstrap, "w1", group).start()
    second = _worker(tmp_path / "w2", kafka_bootstrap, "w2", group).start()
    workers = [first, second]
    try:
        # Create through both workers: one of them is a follower and forwards to the leader.
        for i, worker in enumerate([first, second, second]):
            name = f"{unique_name}-s{i}"
            r = http_client.post(
                f"{worker.url}/connectors",
                timeout=60,
                json={"name": name, "config": _source(tmp_path, name, f"{name}-t", 5)},
            )
            assert r.status_code == 201, r.text
            assert r.json()["tasks"] == []  # tasks are generated asynchronously in distributed mode
        names = [f"{unique_name}-s{i}" for i in range(3)]

        def all_running_everywhere() -> bool:
            views = [_states(w) for w in workers]
            return (
                all(
                    set(view) == set(names)
                    and all(
                        state == "RUNNING" and tasks and all(t == "RUNNING" for t, _ in tasks)
                        for state, tasks in view.values()
                    )
                    for view in views
                )
                and views[0] == views[1]
            )

        wait_until(all_running_everywhere, timeout=120, message=lambda: f"all RUNNING: {[_states(w) for w in workers]}")
        owners = {tasks[0][1] for _, tasks in _states(first).values()}
        assert owners == {first.url.removeprefix("http://"), second.url.removeprefix("http://")}  # spread
        for name in names:
            wait_until(
                lambda name=name: _topic_values(kafka_bootstrap, f"{name}-t") == [f"{name}-{i}" for i in range(5)],
                timeout=90,
                message=f"{name}'s lines in its topic",
                ignore=(KafkaException,),
            )

        # A quiet moment: every line's offset stored (delivery is at least once, so a kill
        # between a write and its offset commit would repeat lines after the move).
        for name in names:
            size = (tmp_path / f"{name}.txt").stat().st_size
            wait_until(
                lambda name=name, size=size: _stored_position(first, name) == size,
                timeout=60,
                message=lambda name=name: f"{name}'s offsets stored: {first.get(f'/connectors/{name}/offsets').text}",
            )

        # SIGKILL the worker that runs the first connector's task: it moves, and resumes
        # from the committed offsets (no line lost, none repeated).
        victim_id = _states(first)[names[0]][1][0][1]
        victim = first if first.url.endswith(victim_id) else second
        survivor = second if victim is first else first
        victim.kill()
        for name in names:
            with open(tmp_path / f"{name}.txt", "a") as more:
                more.write("".join(f"{name}-{i}\n" for i in range(5, 8)))

        def moved() -> bool:
            view = _states(survivor)
            return all(
                state == "RUNNING"
                and tasks
                and all(t == "RUNNING" and w == survivor.url.removeprefix("http://") for t, w in tasks)
                for state, tasks in view.values()
            )

        # session.timeout.ms + scheduled.rebalance.max.delay.ms, plus start-up on two cores
        wait_until(moved, timeout=90, message=lambda: f"work moved to the survivor: {_states(survivor)}")
        for name in names:
            wait_until(
                lambda name=name: _topic_values(kafka_bootstrap, f"{name}-t") == [f"{name}-{i}" for i in range(8)],
                timeout=90,
                message=lambda name=name: f"{name}: {_topic_values(kafka_bootstrap, f'{name}-t')}",
                ignore=(KafkaException,),
            )
        # the survivor's rebalance metrics: it joined, then took the work over, and leads
        samples = {
            sample.name: sample
            for family in text_string_to_metric_families(http_client.get(survivor.url + "/metrics", timeout=10).text)
            for sample in family.samples
        }
        assert samples["kafka_connect_worker_rebalance_completed_rebalances_total"].value >= 2
        assert samples["kafka_connect_worker_rebalance_epoch"].value >= 2
        assert samples["kafka_connect_worker_rebalance_leader_name"].labels["leader_name"] == survivor.url
        assert samples["kafka_connect_worker_rebalance_time_since_last_rebalance_ms"].value >= 0
        workers = [survivor]
    finally:
        for worker in workers:
            worker.stop()
        for worker in (first, second):
            worker.kill()


def test_target_states_survive_a_restart_of_the_whole_cluster(kafka_bootstrap, unique_name, tmp_path):
    group = unique_name
    worker = _worker(tmp_path / "w1", kafka_bootstrap, "w1", group).start()
    paused, stopped = f"{unique_name}-paused", f"{unique_name}-stopped"
    try:
        for name in (paused, stopped):
            r = http_client.put(
                f"{worker.url}/connectors/{name}/config", timeout=60, json=_source(tmp_path, name, f"{name}-t", 2)
            )
            assert r.status_code == 201, r.text
        wait_until(
            lambda: (
                set(_states(worker)) == {paused, stopped}
                and all(s == "RUNNING" and t for s, t in _states(worker).values())
            ),
            timeout=120,
            message=lambda: f"both RUNNING: {_states(worker)}",
        )
        assert http_client.put(f"{worker.url}/connectors/{paused}/pause", timeout=30).status_code == 202
        assert http_client.put(f"{worker.url}/connectors/{stopped}/stop", timeout=60).status_code == 204
        expected = {paused: ("PAUSED", "PAUSED"), stopped: ("STOPPED", None)}

        def settled(w: DistributedWorker) -> bool:
            view = _states(w)
            return (
                view[paused][0] == "PAUSED"
                and [t for t, _ in view[paused][1]] == ["PAUSED"]
                and view[stopped] == ("STOPPED", [])
            )

        wait_until(lambda: settled(worker), timeout=60, message=lambda: f"{expected}: {_states(worker)}")
    finally:
        assert worker.stop() == 0, worker.log()

    restarted = _worker(tmp_path / "w1-again", kafka_bootstrap, "w1-again", group).start()
    try:
        wait_until(lambda: settled(restarted), timeout=120, message=lambda: f"after restart: {_states(restarted)}")
        r = http_client.put(f"{restarted.url}/connectors/{stopped}/resume", timeout=30)
        assert r.status_code == 202
        wait_until(
            lambda: _states(restarted)[stopped][0] == "RUNNING" and _states(restarted)[stopped][1],
            timeout=90,
            message="resumed from STOPPED with tasks",
        )
    finally:
        assert restarted.stop() == 0, restarted.log()


def test_a_task_stops_committing_once_its_replacement_started_elsewhere(kafka_bootstrap, unique_name, tmp_path):
    """Zombie fencing on the status topic: once another worker reports the task RUNNING in
    a newer generation (its replacement started), the old instance commits no offsets."""
    from confluent_kafka import Producer

    from sluice.storage.kafka_formats import encode_status, task_status_key

    worker = _worker(tmp_path / "w1", kafka_bootstrap, "w1", unique_name).start()
    name = f"{unique_name}-v"
    report = tmp_path / "source.jsonl"
    try:
        r = http_client.put(
            f"{worker.url}/connectors/{name}/config",
            timeout=60,
            json={
                "connector.class": "VerifiableSource",
                "tasks.max": "1",
                "topic": f"{name}-t",
                "throughput": "100",
                "report.file": str(report),
            },
        )
        assert r.status_code == 201, r.text

        def committed_seqno() -> int:
            offsets = worker.get(f"/connectors/{name}/offsets").json()["offsets"]
            return offsets[0]["offset"]["seqno"] if offsets else -1

        def sent_seqno() -> int:
            from sluice.connectors.testing import read_report

            return max((e["seqno"] for e in read_report(report) if not e.get("committed")), default=-1)

        wait_until(lambda: committed_seqno() >= 20, timeout=120, message=lambda: f"committed {committed_seqno()}")

        # Kafka's task class name in the task config; the plugin version with the statuses,
        # on REST and in the status topic's records (Kafka Connect 4.3.1's format)
        from sluice.connectors.testing.report import plugin_version

        version = plugin_version()
        config = worker.get(f"/connectors/{name}/tasks").json()[0]["config"]
        assert config["task.class"] == "org.apache.kafka.connect.tools.VerifiableSourceTask"
        status = worker.get(f"/connectors/{name}/status").json()
        assert status["connector"]["version"] == status["tasks"][0]["version"] == version
        records = dict(_status_records(kafka_bootstrap, f"{unique_name}-status", name))
        for key in (f"status-connector-{name}", f"status-task-{name}-0"):
            written = json.loads(records[key])
            assert list(written) == ["state", "trace", "worker_id", "generation", "version"], records[key]
            assert (written["state"], written["version"]) == ("RUNNING", version), records[key]

        # A replacement on another worker announces itself, as the group's next owner would.
        producer = Producer({"bootstrap.servers": kafka_bootstrap})
        producer.produce(
            f"{unique_name}-status",
            key=task_status_key(name, 0).encode(),
            value=encode_status("RUNNING", "ghost:1", 1_000),
        )
        assert producer.flush(30) == 0

        def task_worker() -> str:
            return worker.get(f"/connectors/{name}/status").json()["tasks"][0]["worker_id"]

        wait_until(lambda: task_worker() == "ghost:1", timeout=30, message=lambda: f"task shown on {task_worker()}")
        fenced_at = committed_seqno()  # a batch that passed the check before may still land
        wait_until(
            lambda: sent_seqno() >= fenced_at + 200,
            timeout=60,
            message=lambda: f"the old instance keeps polling: sent {sent_seqno()}",
        )
        settled = committed_seqno()
        wait_until(lambda: sent_seqno() >= settled + 400, timeout=60, message=lambda: f"sent {sent_seqno()}")
        assert committed_seqno() == settled, "the fenced instance committed offsets"
        assert settled < sent_seqno() - 300
    finally:
        worker.stop()
        worker.kill()


def _status_records(bootstrap: str, status_topic: str, connector: str) -> list[tuple[str, bytes]]:
    """(key, value) of every connector and task status record of ``connector`` in the
    status topic (tombstones left out), in each partition's order."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"check-{status_topic}", "enable.auto.commit": False}
    )
    try:
        partitions = consumer.list_topics(status_topic, timeout=10).topics[status_topic].partitions
        written: list[tuple[str, bytes]] = []
        for partition in partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(status_topic, partition), timeout=10)
            consumer.assign([TopicPartition(status_topic, partition, low)])
            position = low
            while position < high:
                msg = consumer.poll(1.0)
                if msg is None or msg.error() is not None:
                    continue
                position = msg.offset() + 1
                key = (msg.key() or b"").decode()
                mine = key == f"status-connector-{connector}" or key.startswith(f"status-task-{connector}-")
                if mine and msg.value():
                    written.append((key, msg.value()))
        return written
    finally:
        consumer.close()


def _task_states_written(bootstrap: str, status_topic: str, connector: str) -> list[tuple[str, str]]:
    """(key, state) of every task status record of ``connector`` in the status topic."""
    return [
        (key, json.loads(value)["state"])
        for key, value in _status_records(bootstrap, status_topic, connector)
        if key.startswith("status-task-")
    ]


def test_a_clean_restart_of_the_whole_cluster_keeps_a_paused_connector_paused_and_files_flowing(
    kafka_bootstrap, unique_name, tmp_path
):
    """Every worker stopped in turn while their tasks move from one to the next, then a new
    cluster: the tasks are PAUSED everywhere and no worker ever wrote a FAILED status for
    them (an old owner's task abandoned during shutdown must not report). A file source and
    sink running beside them go on where they left: nothing lost, nothing repeated."""
    group, name = unique_name, f"{unique_name}-v"
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"line-{i}\n" for i in range(50)))
    topic = f"{unique_name}-t"

    def sink_lines() -> list[str]:
        return sink.read_text().splitlines() if sink.exists() else []

    config = {
        "connector.class": "org.apache.kafka.connect.tools.VerifiableSourceConnector",
        "tasks.max": "3",
        "topic": f"{name}-t",
        "throughput": "20",
    }

    def paused_everywhere(cluster: list[DistributedWorker]) -> bool:
        return all(
            _states(w).get(name, ("", []))[0] == "PAUSED" and [s for s, _ in _states(w)[name][1]] == ["PAUSED"] * 3
            for w in cluster
        )

    workers = _start_cluster(tmp_path, "w", kafka_bootstrap, group)
    try:
        assert http_client.put(f"{workers[0].url}/connectors/{name}/config", json=config, timeout=60).status_code == 201
        wait_until(
            lambda: all(
                _states(w).get(name, ("", []))[0] == "RUNNING"
                and [s for s, _ in _states(w)[name][1]] == ["RUNNING"] * 3
                for w in workers
            ),
            timeout=150,
            message=lambda: f"3 tasks RUNNING: {[_states(w) for w in workers]}",
        )
        assert http_client.put(f"{workers[1].url}/connectors/{name}/pause", timeout=30).status_code == 202
        for url, suffix, connector in (
            (workers[0].url, "src", {"connector.class": "FileStreamSource", "file": str(source), "topic": topic}),
            (workers[2].url, "sink", {"connector.class": "FileStreamSink", "file": str(sink), "topics": topic}),
        ):
            r = http_client.put(f"{url}/connectors/{unique_name}-{suffix}/config", timeout=60, json=connector)
            assert r.status_code == 201, r.text
        wait_until(
            lambda: paused_everywhere(workers),
            timeout=60,
            message=lambda: f"PAUSED everywhere: {[_states(w) for w in workers]}",
        )
        wait_until(lambda: len(sink_lines()) >= 50, timeout=150, message=lambda: f"50 lines, have {len(sink_lines())}")
    finally:
        codes = [w.stop() for w in workers]
    assert codes == [0, 0, 0], "\n".join(w.log()[-3000:] for w in workers)

    with source.open("a") as more:
        more.write("".join(f"line-{i}\n" for i in range(50, 100)))
    restarted = _start_cluster(tmp_path, "again", kafka_bootstrap, group)
    try:
        wait_until(
            lambda: paused_everywhere(restarted),
            timeout=150,
            message=lambda: f"PAUSED after the restart: {[_states(w) for w in restarted]}",
        )
        wait_until(
            lambda: len(sink_lines()) >= 100, timeout=150, message=lambda: f"100 lines, have {len(sink_lines())}"
        )
        assert sink_lines() == [f"line-{i}" for i in range(100)]  # nothing lost, nothing repeated
    finally:
        codes = [w.stop() for w in restarted]
    assert codes == [0, 0, 0], "\n".join(w.log()[-3000:] for w in restarted)
    written = _task_states_written(kafka_bootstrap, f"{group}-status", name)
    assert written and not [entry for entry in written if entry[1] == "FAILED"], written
