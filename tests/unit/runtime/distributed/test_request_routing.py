"""Where a distributed worker sends a REST request it cannot serve itself (Kafka's
``DistributedHerder.restartConnector``/``restartTask`` and ``HerderRequestHandler``):

* the owner of a connector or task acts on it, on its tick thread;
* the leader sends a request for work it does not run to the owner;
* any other worker sends it to the leader, which sends it on (two hops in all);
* with no target known, or after two hops, the answer is 409.

The herder runs over fakes of the worker and the group member (its tick thread is the
test's); the REST half runs the forwarding handler with a fake HTTP client.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request

from sluice.api.errors import NotFoundError
from sluice.rest import forwarding
from sluice.runtime.herder import distributed
from sluice.runtime.herder.base import ConnectRestError, RequestForwardError
from sluice.runtime.herder.distributed import DistributedHerder
from sluice.storage.memory import MemoryConfigBackingStore, MemoryStatusBackingStore
from tests.helpers import wait_until

LEADER = "http://leader:8083"
OWNER = "http://owner:8083"
NO_TARGET = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
CONFLICT = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"


class FakeWorker:
    """Records what the herder asks of the worker."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.generation = 1
        self.worker_id = "me:8083"
        self.admin_client = None
        self.reconfiguration_listener = None

    def stop_connector_instance(self, name: str) -> None:
        self.calls.append(("stop_connector", name))

    def start_connector(self, name: str, config: dict[str, str], target: Any) -> bool:
        self.calls.append(("start_connector", name))
        return False  # no task configs to generate

    def stop_task(self, name: str, task: int) -> None:
        self.calls.append(("stop_task", name, task))

    def stop_and_await_tasks(self, tasks: list[tuple[str, int]]) -> None:
        for name, task in tasks:
            self.stop_task(name, task)

    def host_tasks_of(self, name: str, config: dict[str, str]) -> None:
        pass

    def delivers_exactly_once(self, config: dict[str, str]) -> bool:
        return False

    def start_task(self, name: str, task: int, *args: Any, **kwargs: Any) -> None:
        self.calls.append(("start_task", name, task))


class FakeMember:
    """The group member as the herder reads it: the leader, and (on the leader only, and
    not while a rebalance is under way) who owns what."""

    def __init__(self, leader_url: str | None, is_leader: bool, owners: dict[Any, str] | None = None) -> None:
        self.leader_url = leader_url
        self.is_leader = is_leader
        self.owners = owners or {}
        self.rebalance_pending = False
        self.coordinator_unreachable = False
        self.woken = threading.Event()

    def owner_url(self, work: Any) -> str | None:
        if not self.is_leader or self.rebalance_pending:
            return None
        return self.owners.get(work)

    def wakeup(self) -> None:
        self.woken.set()


@pytest.fixture
def herder():
    config = MemoryConfigBackingStore()
    config.put_connector_config("c", {"connector.class": "x.Source", "tasks.max": "1"})
    config.put_task_configs("c", [{"task.class": "x.Task"}])
    worker = FakeWorker()
    herder = DistributedHerder(
        worker, config, MemoryStatusBackingStore(), lambda: "cluster", member_factory=None, sink_offsets=object()
    )  # type: ignore[arg-type]
    herder._assigned.set()  # a round completed
    herder.rebalance_wait_s = 0.05  # the tests of routing do not wait out rebalances
    stop = threading.Event()

    def tick() -> None:  # the herder's tick thread, reduced to applying queued events
        while not stop.is_set():
            member = herder.member
            if member is None:  # the test holds the tick thread back
                stop.wait(0.05)
            elif member.woken.wait(0.05):
                member.woken.clear()
                herder._drain_events()

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    yield herder
    stop.set()
    thread.join(5)


def _forward_url(call) -> str | None:
    with pytest.raises(RequestForwardError) as raised:
        call()
    assert raised.value.status == 409
    return raised.value.forward_url


def test_a_follower_that_does_not_own_the_work_sends_the_request_to_the_leader(herder):
    herder.member = FakeMember(LEADER, is_leader=False)
    assert _forward_url(lambda: herder.restart_connector("c", False, False)) == LEADER
    assert _forward_url(lambda: herder.restart_task("c", 0)) == LEADER
    # Restarts that write a restart request, and the other writes, are the leader's too.
    assert _forward_url(lambda: herder.restart_connector("c", True, False)) == LEADER
    assert _forward_url(lambda: herder.restart_connector("c", False, True)) == LEADER
    assert _forward_url(lambda: herder.stop_connector("c")) == LEADER
    assert _forward_url(lambda: herder.delete_connector("c")) == LEADER
    assert _forward_url(lambda: herder.alter_connector_offsets("c", [])) == LEADER
    assert _forward_url(lambda: herder.reset_connector_offsets("c")) == LEADER
    assert herder.worker.calls == []


def test_the_leader_sends_a_request_for_work_it_does_not_run_to_the_owner(herder):
    herder.member = FakeMember(LEADER, is_leader=True, owners={"c": OWNER, ("c", 0): "http://other:8083"})
    assert _forward_url(lambda: herder.restart_connector("c", False, False)) == OWNER
    assert _forward_url(lambda: herder.restart_task("c", 0)) == "http://other:8083"
    assert herder.worker.calls == []


def test_no_target_while_the_leader_rebalances_or_nobody_runs_the_work_or_no_leader_is_known(herder):
    member = herder.member = FakeMember(LEADER, is_leader=True, owners={"c": OWNER})
    member.rebalance_pending = True
    assert _forward_url(lambda: herder.restart_connector("c", False, False)) is None
    member.rebalance_pending = False
    assert _forward_url(lambda: herder.restart_task("c", 0)) is None  # held back: nobody runs it
    herder.member = FakeMember(None, is_leader=False)
    assert _forward_url(lambda: herder.restart_connector("c", False, False)) is None
    herder.member = FakeMember(LEADER, is_leader=False)
    herder._assigned.clear()  # work revoked, the round not complete yet
    assert _forward_url(lambda: herder.restart_task("c", 0)) is None


def _in_background(call) -> tuple[threading.Thread, list[Any]]:
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:  # noqa: BLE001 - the request's outcome, whatever it is, is what the test checks
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


@pytest.mark.parametrize("state", ["rejoin due", "round incomplete", "no leader yet"])
def test_a_write_during_a_rebalance_waits_for_it_then_runs(herder, state):
    """Kafka's herder holds requests while it rebalances: a delete sent just after another
    write started a round is carried out once the round completed, not answered 409."""
    herder.rebalance_wait_s = 30
    member = FakeMember(None if state == "no leader yet" else LEADER, is_leader=True)
    member.rebalance_pending = state == "rejoin due"
    if state == "round incomplete":
        herder._assigned.clear()
    herder.member = member
    thread, outcome = _in_background(lambda: herder.delete_connector("c"))
    thread.join(0.2)
    assert outcome == [] and herder.config_store.snapshot().contains("c")  # held, not refused
    member.rebalance_pending = False  # the round completes
    member.leader_url = LEADER
    herder._assigned.set()
    thread.join(10)
    assert outcome == [None]
    assert not herder.config_store.snapshot().contains("c")


def test_a_write_whose_rebalance_does_not_end_in_time_answers_409(herder):
    member = herder.member = FakeMember(LEADER, is_leader=True)
    member.rebalance_pending = True
    assert _forward_url(lambda: herder.delete_connector("c")) is None
    assert herder.config_store.snapshot().contains("c")


def test_a_restart_during_a_rebalance_goes_to_the_owner_the_round_named(herder):
    herder.rebalance_wait_s = 30
    member = herder.member = FakeMember(LEADER, is_leader=True, owners={("c", 0): OWNER})
    member.rebalance_pending = True  # owner_url() is None meanwhile
    thread, outcome = _in_background(lambda: herder.restart_task("c", 0))
    thread.join(0.2)
    assert outcome == []
    member.rebalance_pending = False
    thread.join(10)
    assert isinstance(outcome[0], RequestForwardError) and outcome[0].forward_url == OWNER


def test_unknown_work_is_not_found_wherever_the_request_arrives(herder):
    herder.member = FakeMember(LEADER, is_leader=False)
    with pytest.raises(NotFoundError, match="Unknown connector: nope"):
        herder.restart_connector("nope", False, False)
    with pytest.raises(NotFoundError, match="Unknown task: c-3"):
        herder.restart_task("c", 3)


@pytest.mark.parametrize("is_leader", [False, True])
def test_the_owner_restarts_its_work_on_the_tick_thread(herder, is_leader):
    herder.member = FakeMember(LEADER, is_leader=is_leader)
    herder._owned_connectors.add("c")
    herder._owned_tasks.add(("c", 0))
    assert herder.restart_connector("c", False, False) is None
    herder.restart_task("c", 0)
    assert herder.worker.calls == [
        ("stop_connector", "c"),
        ("start_connector", "c"),
        ("stop_task", "c", 0),
        ("start_task", "c", 0),
    ]
    assert herder._owned_connectors == {"c"} and herder._owned_tasks == {("c", 0)}


def test_work_revoked_before_the_tick_thread_acts_is_not_restarted_but_routed(herder):
    """The owner mid-rebalance: the request found the task here, the revocation stopped it
    before the tick thread got to the restart. Starting it again would run it twice; the
    request is routed instead, and with the round incomplete there is no target (409)."""
    member = FakeMember(LEADER, is_leader=False)
    herder._owned_tasks.add(("c", 0))  # herder.member is None: the tick thread waits
    outcome: list[BaseException | None] = []

    def request() -> None:
        try:
            herder.restart_task("c", 0)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - the request's outcome, whatever it is, is what the test checks
            outcome.append(exc)

    thread = threading.Thread(target=request)
    thread.start()
    wait_until(lambda: herder._events.qsize() == 1, timeout=10, message="restart queued for the tick thread")
    herder.member = member
    herder.on_revoked(None, [], [("c", 0)])  # the tick thread: a rebalance revokes the task
    member.wakeup()  # ... then runs the queued restart
    thread.join(10)
    assert isinstance(outcome[0], RequestForwardError) and outcome[0].forward_url is None
    assert herder.worker.calls == [("stop_task", "c", 0)]  # stopped by the revocation, not restarted
    assert herder._owned_tasks == set()


def test_an_owner_whose_tick_thread_does_not_answer_times_out_with_500(herder, monkeypatch):
    monkeypatch.setattr(distributed, "OWNER_REQUEST_TIMEOUT_S", 0.05)
    herder._owned_connectors.add("c")
    herder.member = None  # nobody applies the queued restart
    with pytest.raises(ConnectRestError) as raised:
        herder.restart_connector("c", False, False)
    assert (raised.value.status, str(raised.value)) == (500, "Request timed out")


# -- the REST half: forward_request_handler -----------------------------------------------


def _request(method: str, path: str, query: str = "", body: bytes = b"", host: str = "w1:8083") -> Request:
    name, port = host.split(":")
    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(b"host", host.encode()), (b"content-type", b"application/json")],
        "server": (name, int(port)),
        "client": ("127.0.0.1", 5000),
        "app": Starlette(),  # the application serving it, as routing sets it
    }
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return Request(scope, receive)


def _handle(request: Request, error: RequestForwardError):
    answer = asyncio.run(forwarding.forward_request_handler(request, error))
    return answer.status_code, json.loads(answer.body) if answer.body else None, answer.headers


@pytest.fixture
def http(monkeypatch):
    """The forwarded requests, answered by ``http.answer``."""

    class Http:
        def __init__(self) -> None:
            self.sent: list[dict[str, Any]] = []
            self.answer = httpx2.Response(204)

        def request(self, method: str, url: str, **kwargs: Any) -> httpx2.Response:
            self.sent.append({"method": method, "url": url, **kwargs})
            return self.answer

    fake = Http()
    monkeypatch.setattr(forwarding, "_send", fake.request)
    return fake


def test_no_target_answers_409_with_kafkas_message_whatever_the_herder_said(http):
    status, body, _ = _handle(_request("POST", "/connectors/c/restart"), RequestForwardError(None, "anything"))
    assert (status, body) == (409, {"error_code": 409, "message": NO_TARGET})
    assert http.sent == []


def test_a_follower_forwards_with_one_hop_left_and_the_leader_with_none(http):
    status, _, _ = _handle(_request("POST", "/connectors/c/tasks/0/restart"), RequestForwardError(LEADER, "x"))
    assert status == 204
    assert http.sent[-1]["url"] == f"{LEADER}/connectors/c/tasks/0/restart"
    assert http.sent[-1]["params"] == [("forward", "true")]
    status, _, _ = _handle(
        _request("POST", "/connectors/c/restart", "includeTasks=true&forward=true"), RequestForwardError(OWNER, "x")
    )
    assert status == 204
    assert http.sent[-1]["url"] == f"{OWNER}/connectors/c/restart"
    assert http.sent[-1]["params"] == [("includeTasks", "true"), ("forward", "false")]
    # A worker reached with forward=false that cannot serve the request gives up.
    status, body, _ = _handle(
        _request("POST", "/connectors/c/restart", "forward=false"), RequestForwardError(OWNER, "x")
    )
    assert (status, body) == (409, {"error_code": 409, "message": CONFLICT})
    assert len(http.sent) == 2


def test_a_forwarded_create_answers_with_the_location_of_the_worker_called(http):
    http.answer = httpx2.Response(201, json={"name": "c"}, headers={"Location": f"{LEADER}/connectors/c"})
    status, body, headers = _handle(
        _request("POST", "/connectors", body=b'{"name": "c", "config": {}}'), RequestForwardError(LEADER, "x")
    )
    assert (status, body, headers["location"]) == (201, {"name": "c"}, "http://w1:8083/connectors/c")
    assert http.sent[-1]["content"] == b'{"name": "c", "config": {}}'


def test_a_created_connector_is_answered_without_tasks_however_fast_its_owner_is(herder, monkeypatch):
    """Kafka answers a create or replace with the tasks of the snapshot from before the
    write: none for a new connector, even when its owner already stored task configs by
    the time the write was read back (a busy cluster), and the old ones for a replaced
    connector."""
    herder.member = FakeMember(LEADER, is_leader=True)
    monkeypatch.setattr(herder, "validate_connector_config", lambda config: type("Infos", (), {"error_count": 0})())
    monkeypatch.setattr(herder, "_type", lambda name, config: "source")
    store = herder.config_store
    write = store.put_connector_config

    def write_then_owner_generates_tasks(name: str, config: dict[str, str], target: Any = None) -> None:
        write(name, config, target)
        store.put_task_configs(name, [{"task.class": "x.Task"}, {"task.class": "x.Task"}])

    monkeypatch.setattr(store, "put_connector_config", write_then_owner_generates_tasks)
    created, info = herder.put_connector_config("new", {"connector.class": "x.Source"}, allow_replace=False)
    assert created and info.tasks == []
    assert store.snapshot().task_count("new") == 2  # they exist: the answer just predates them
    replaced, info = herder.put_connector_config("c", {"connector.class": "x.Source"}, allow_replace=True)
    assert not replaced and [task.task for task in info.tasks] == [0]
