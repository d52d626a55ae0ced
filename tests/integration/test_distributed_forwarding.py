"""Issue 14, item 1, on three ``sluice distributed`` workers: every request Kafka serves
only on the owner of a connector or task, or only on the leader, is sent to a worker that
is neither, and answers as Kafka's does. Owner-only requests (plain connector restart,
task restart) take two hops, worker → leader → owner; leader-only ones (create, config
put/patch, stop, restart with ``includeTasks``/``onlyFailed``, offsets alter/reset,
delete) one. Each restart is seen to happen: a FAILED mock connector or task runs again.

Who leads and who runs what is read from each worker's log line ``Assignment of
generation N: connectors [...], tasks [...] (leader URL)``, once all three report the
same completed round and the status topic agrees with it.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass
from typing import Any

import pytest

from tests import http_client
from tests.helpers import wait_until
from tests.integration.workers import DistributedWorker, distributed_cluster
from tests.integration.workers import connector_states as _states
from tests.integration.workers import connector_status as _status

pytestmark = pytest.mark.integration

MOCK = "org.apache.kafka.connect.tools.MockSourceConnector"
FAILURE_DELAY_MS = 8000  # long enough to see a restarted mock RUNNING before it fails again
RESTART_TIMEOUT = 60  # a restarted mock runs for FAILURE_DELAY_MS: polling sees it RUNNING

ASSIGNMENT = re.compile(
    r"Assignment of generation (\d+): connectors (\[[^\]]*\]), tasks (\[[^\]]*\]) \(leader (\S+?)\)"
)


@pytest.fixture(scope="module")
def cluster(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("forwarding")
    with distributed_cluster(base, kafka_bootstrap, f"forwarding-{base.name}") as workers:
        yield workers


# -- who leads, who owns what ------------------------------------------------------------------


@dataclass(frozen=True)
class Round:
    """One worker's view of the last completed round."""

    generation: int
    leader_url: str
    connectors: tuple[str, ...]
    tasks: tuple[tuple[str, int], ...]


def _last_round(worker: DistributedWorker) -> Round | None:
    """The worker's last logged assignment; None while a round is under way."""
    last: Round | None = None
    for line in worker.log_path.read_text(errors="replace").splitlines():
        if "Rebalance started" in line:
            last = None
        elif match := ASSIGNMENT.search(line):
            last = Round(
                int(match[1]),
                match[4].rstrip("/"),
                tuple(ast.literal_eval(match[2])),
                tuple(tuple(t) for t in ast.literal_eval(match[3])),
            )
    return last


@dataclass(frozen=True)
class Roles:
    leader: DistributedWorker
    owners: dict[Any, DistributedWorker]  # connector name or (connector, task) -> its worker

    def worker_id(self, work: Any) -> str:
        """The worker id (``host:port``) of the worker that runs ``work``."""
        return _worker_id(self.owners[work])

    def neither(self, cluster: list[DistributedWorker], work: Any) -> DistributedWorker:
        """A worker that neither leads nor runs ``work``."""
        excluded = {self.leader.url, self.owners[work].url}
        return next(w for w in cluster if w.url not in excluded)

    def follower(self, cluster: list[DistributedWorker], *work: Any) -> DistributedWorker:
        """A worker that does not lead, and runs none of ``work`` if there is one."""
        followers = [w for w in cluster if w.url != self.leader.url]
        owners = {self.owners[x].url for x in work if x in self.owners}
        return next((w for w in followers if w.url not in owners), followers[0])


def _worker_id(worker: DistributedWorker) -> str:
    return worker.url.split("://", 1)[1]


Expected = dict[str, tuple[str, list[str] | None]]  # connector -> (its state, its tasks' states or None: any)


def _roles(cluster: list[DistributedWorker], expected: Expected) -> Roles | None:
    """The roles once every worker reports the same completed round and every worker's
    status view shows ``expected`` on the owners."""
    rounds = [_last_round(w) for w in cluster]
    if any(r is None for r in rounds) or len({(r.generation, r.leader_url) for r in rounds}) != 1:
        return None
    leader = [w for w in cluster if w.url == rounds[0].leader_url]
    if len(leader) != 1:
        return None
    owners: dict[Any, DistributedWorker] = {}
    for worker, view in zip(cluster, rounds, strict=True):
        owners.update({c: worker for c in view.connectors})
        owners.update({t: worker for t in view.tasks})
    for name, (state, task_states) in expected.items():
        for worker in cluster:
            status = _status(worker, name)
            if not status or status["connector"]["state"] != state:
                return None
            if name in owners and status["connector"]["worker_id"] != _worker_id(owners[name]):
                return None
            if task_states is None:
                continue
            if [t["state"] for t in status["tasks"]] != task_states:
                return None
            for task in status["tasks"]:
                owner = owners.get((name, task["id"]))
                if owner is None or task["worker_id"] != _worker_id(owner):
                    return None
    return Roles(leader[0], owners)


def _plan(before: dict[str, Any], connector: bool, tasks: set[int]) -> dict[str, Any]:
    """Kafka's 202 answer to a restart with parameters: the status, with what restarts
    RESTARTING and without its trace."""
    plan = copy.deepcopy(before)
    for state in ([plan["connector"]] if connector else []) + [t for t in plan["tasks"] if t["id"] in tasks]:
        state["state"] = "RESTARTING"
        state.pop("trace", None)
    return plan


def _settled(cluster: list[DistributedWorker], expected: Expected, timeout: float = 150) -> Roles:
    def rounds() -> str:
        states = [[_states(w, n) for n in expected] for w in cluster]
        return f"rounds {[_last_round(w) for w in cluster]}, states {states}"

    return wait_until(
        lambda: _roles(cluster, expected),
        timeout=timeout,
        message=lambda: f"a settled cluster with {expected}: {rounds()}",
    )


# -- the tests --------------------------------------------------------------------------------


def test_owner_only_and_restart_requests_through_a_worker_that_is_neither_leader_nor_owner(cluster, unique_name):
    failing_task, failing_connector = f"{unique_name}-task", f"{unique_name}-conn"
    for name, mode in ((failing_task, "task-failure"), (failing_connector, "connector-failure")):
        r = http_client.put(
            f"{cluster[1].url}/connectors/{name}/config",
            timeout=60,
            json={"connector.class": MOCK, "mock_mode": mode, "delay_ms": str(FAILURE_DELAY_MS)},
        )
        assert r.status_code == 201, r.text
    failed: Expected = {failing_task: ("RUNNING", ["FAILED"]), failing_connector: ("FAILED", ["RUNNING"])}
    roles = _settled(cluster, failed)

    # Plain connector restart: the owner restarts the connector (worker -> leader -> owner).
    via = roles.neither(cluster, failing_connector)
    r = http_client.post(f"{via.url}/connectors/{failing_connector}/restart", timeout=120)
    assert (r.status_code, r.content) == (204, b""), r.text
    wait_until(
        lambda: _states(via, failing_connector)[0] == "RUNNING",
        timeout=RESTART_TIMEOUT,
        message=lambda: f"connector restarted: {_status(via, failing_connector)}",
    )
    assert _status(via, failing_connector)["connector"]["worker_id"] == roles.worker_id(failing_connector)

    # Task restart: the task's owner restarts it.
    via = roles.neither(cluster, (failing_task, 0))
    r = http_client.post(f"{via.url}/connectors/{failing_task}/tasks/0/restart", timeout=120)
    assert (r.status_code, r.content) == (204, b""), r.text
    wait_until(
        lambda: _states(via, failing_task)[1] == ["RUNNING"],
        timeout=RESTART_TIMEOUT,
        message=lambda: f"task restarted: {_status(via, failing_task)}",
    )
    assert _status(via, failing_task)["tasks"][0]["worker_id"] == roles.worker_id((failing_task, 0))

    # Both failed again: restarts with parameters are the leader's (a restart request).
    roles = _settled(cluster, failed)
    via = roles.follower(cluster, failing_task, (failing_task, 0))
    before = _status(via, failing_task)  # settled: names the owners
    r = http_client.post(f"{via.url}/connectors/{failing_task}/restart?includeTasks=true&onlyFailed=true", timeout=120)
    assert r.status_code == 202, r.text
    assert r.json() == _plan(before, connector=False, tasks={0})
    assert (r.json()["connector"]["state"], r.json()["tasks"][0]["state"]) == ("RUNNING", "RESTARTING")
    wait_until(
        lambda: _states(via, failing_task)[1] == ["RUNNING"],
        timeout=RESTART_TIMEOUT,
        message=lambda: f"failed task restarted: {_status(via, failing_task)}",
    )

    via = roles.follower(cluster, failing_connector, (failing_connector, 0))
    before = _status(via, failing_connector)
    r = http_client.post(f"{via.url}/connectors/{failing_connector}/restart?onlyFailed=true", timeout=120)
    assert r.status_code == 202, r.text
    assert r.json() == _plan(before, connector=True, tasks=set())
    assert (r.json()["connector"]["state"], r.json()["tasks"][0]["state"]) == ("RESTARTING", "RUNNING")
    wait_until(
        lambda: _states(via, failing_connector)[0] == "RUNNING",
        timeout=RESTART_TIMEOUT,
        message=lambda: f"failed connector restarted: {_status(via, failing_connector)}",
    )

    # Everything, failed or not.
    roles = _settled(cluster, {failing_connector: ("FAILED", ["RUNNING"])})
    via = roles.follower(cluster, failing_connector, (failing_connector, 0))
    before = _status(via, failing_connector)
    r = http_client.post(f"{via.url}/connectors/{failing_connector}/restart?includeTasks=true", timeout=120)
    assert r.status_code == 202, r.text
    assert r.json() == _plan(before, connector=True, tasks={0})
    assert (r.json()["connector"]["state"], r.json()["tasks"][0]["state"]) == ("RESTARTING", "RESTARTING")
    wait_until(
        lambda: _states(via, failing_connector)[0] == "RUNNING",
        timeout=RESTART_TIMEOUT,
        message=lambda: f"connector restarted: {_status(via, failing_connector)}",
    )
    wait_until(
        lambda: _states(via, failing_connector)[1] == ["RUNNING"],
        timeout=RESTART_TIMEOUT,
        message=lambda: f"task restarted: {_status(via, failing_connector)}",
    )

    # Unknown work: 404 from the worker called, as from Kafka's (it checks before routing).
    via = roles.follower(cluster)
    r = http_client.post(f"{via.url}/connectors/{failing_task}/tasks/7/restart", timeout=60)
    assert (r.status_code, r.json()["message"]) == (404, f"Unknown task: {failing_task}-7")
    r = http_client.post(f"{via.url}/connectors/{unique_name}-nope/restart", timeout=60)
    assert (r.status_code, r.json()["message"]) == (404, f"Unknown connector: {unique_name}-nope")

    for name in (failing_task, failing_connector):
        via = _settled(cluster, {}).neither(cluster, name)
        assert http_client.delete(f"{via.url}/connectors/{name}", timeout=60).status_code == 204


def test_leader_only_requests_through_a_worker_that_is_neither_leader_nor_owner(cluster, unique_name, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a\nb\nc\n")
    name = unique_name
    config = {"connector.class": "FileStreamSource", "file": str(source), "topic": f"{name}-t"}

    # Create: 201, Location naming the worker called (Kafka builds it there, not on the leader).
    via = _settled(cluster, {}).follower(cluster)
    r = http_client.post(f"{via.url}/connectors", json={"name": name, "config": config}, timeout=60)
    assert r.status_code == 201, r.text
    assert r.headers["location"] == f"{via.url}/connectors/{name}"
    assert r.json() == {"name": name, "config": {**config, "name": name}, "tasks": [], "type": "source"}

    roles = _settled(cluster, {name: ("RUNNING", ["RUNNING"])})
    via = roles.follower(cluster, name, (name, 0))
    changed = {**config, "topic": f"{name}-t2"}
    r = http_client.put(f"{via.url}/connectors/{name}/config", json=changed, timeout=60)
    assert r.status_code == 200, r.text
    assert r.json() == {
        "name": name,
        "config": {**changed, "name": name},
        "tasks": [{"connector": name, "task": 0}],
        "type": "source",
    }
    wait_until(
        lambda: all(
            w.get(f"/connectors/{name}/tasks").json()[0]["config"].get("topic") == f"{name}-t2" for w in cluster
        ),
        timeout=90,
        message="the new task config on every worker",
    )

    roles = _settled(cluster, {name: ("RUNNING", ["RUNNING"])})
    via = roles.follower(cluster, name, (name, 0))
    r = http_client.patch(f"{via.url}/connectors/{name}/config", json={"batch.size": "7"}, timeout=60)
    assert r.status_code == 200, r.text
    assert r.json()["config"] == {**changed, "name": name, "batch.size": "7"}
    wait_until(
        lambda: all(w.get(f"/connectors/{name}/tasks").json()[0]["config"].get("batch.size") == "7" for w in cluster),
        timeout=90,
        message="the patched task config on every worker",
    )

    roles = _settled(cluster, {name: ("RUNNING", ["RUNNING"])})
    via = roles.follower(cluster, name, (name, 0))
    r = http_client.put(f"{via.url}/connectors/{name}/stop", timeout=60)
    assert (r.status_code, r.content) == (204, b""), r.text
    wait_until(
        lambda: all(w.get(f"/connectors/{name}/tasks").json() == [] for w in cluster),
        timeout=60,
        message="no task configs on any worker",
    )
    wait_until(
        lambda: all(_status(w, name).get("tasks") == [] for w in cluster),
        timeout=60,
        message=lambda: f"no task statuses on any worker: {[_status(w, name) for w in cluster]}",
    )
    stopped: Expected = {name: ("STOPPED", None)}

    # Offsets of the stopped connector, altered and reset through a follower.
    roles = _settled(cluster, stopped)
    via = roles.follower(cluster, name)
    partition = {"filename": str(source)}
    r = http_client.patch(
        f"{via.url}/connectors/{name}/offsets",
        timeout=60,
        json={"offsets": [{"partition": partition, "offset": {"position": 2}}]},
    )
    assert r.status_code == 200, r.text
    assert r.json() == {"message": "The offsets for this connector have been altered successfully"}
    wait_until(
        lambda: all(
            w.get(f"/connectors/{name}/offsets").json()
            == {"offsets": [{"partition": partition, "offset": {"position": 2}}]}
            for w in cluster
        ),
        timeout=60,
        message="the altered offset on every worker",
    )

    via = _settled(cluster, stopped).follower(cluster, name)
    r = http_client.delete(f"{via.url}/connectors/{name}/offsets", timeout=60)
    assert r.status_code == 200, r.text
    assert r.json() == {"message": "The offsets for this connector have been reset successfully"}
    wait_until(
        lambda: all(w.get(f"/connectors/{name}/offsets").json() == {"offsets": []} for w in cluster),
        timeout=60,
        message="no offsets on any worker",
    )

    via = _settled(cluster, stopped).follower(cluster, name)
    r = http_client.delete(f"{via.url}/connectors/{name}", timeout=60)
    assert (r.status_code, r.content) == (204, b""), r.text
    wait_until(
        lambda: all(name not in w.get("/connectors").json() for w in cluster), timeout=60, message="deleted everywhere"
    )
