"""WorkerGroupMember's side of the protocol, with an in-process fake of Kafka's group
coordinator (the real one is exercised by tests/integration/test_group_membership.py)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from sluice.runtime.distributed.member import WorkerGroupMember
from sluice.runtime.distributed.protocol import (
    CONFIG_MISMATCH,
    Assignment,
    TaskId,
    decode_assignment,
    decode_metadata,
)


class FakeGroup:
    """Kafka's group coordinator, reduced to what the member relies on: a round completes
    when every live member has sent its JoinGroup; the first live member leads; the
    first sub-protocol of the leader's list that every member offers is chosen."""

    def __init__(self) -> None:
        self.clients: list[FakeClient] = []
        self.generation = 0
        self.coordinator_up = True
        self.rounds: list[dict[str, Any]] = []

    def factory(self, **kwargs: Any) -> FakeClient:
        client = FakeClient(self, kwargs["handler"], f"member-{len(self.clients) + 1}", kwargs)
        self.clients.append(client)
        return client

    def live(self) -> list[FakeClient]:
        return [c for c in self.clients if c.alive]

    def maybe_complete(self) -> None:
        members = self.live()
        if not members or not all(c.joining for c in members):
            return
        self.generation += 1
        leader = members[0]
        names = [name for name, _ in leader.offered if all(name in dict(c.offered) for c in members)]
        protocol = names[0]
        metadata = [(c.member_id, dict(c.offered)[protocol]) for c in members]
        assignments = leader.handler.perform_assignment(leader.member_id, protocol, metadata, self.generation)
        self.rounds.append(
            {
                "protocol": protocol,
                "members": [c.member_id for c in members],
                "metadata": {m: decode_metadata(d) for m, d in metadata},
                "assignments": {m: decode_assignment(a) for m, a in assignments.items()},
            }
        )
        for c in members:
            c.joining = False
            c.rejoin = False
            c.done = True
            c.handler.on_join_complete(self.generation, c.member_id, protocol, assignments[c.member_id])
            c.handler.on_state_change()

    def rebalance(self) -> None:
        """What the broker does when membership changes: everybody must rejoin."""
        for c in self.live():
            c.request_rejoin()


class FakeClient:
    def __init__(self, group: FakeGroup, handler: Any, member_id: str, config: dict[str, Any]) -> None:
        self.group = group
        self.handler = handler
        self._member_id = member_id
        self.config = config
        self.alive = True
        self.rejoin = True
        self.joining = False
        self.done = False
        self.offered: list[tuple[str, bytes]] = []
        self.closed_with: bool | None = None
        self.heartbeats = 0

    def need_rejoin(self) -> bool:
        return self.rejoin

    def request_rejoin(self) -> None:
        self.rejoin = True
        self.handler.on_state_change()

    def start_join(self) -> None:
        if self.joining:
            return
        self.joining = True
        self.offered = self.handler.group_protocols()
        for other in self.group.live():  # the broker tells the others through heartbeats
            if not other.joining and not other.rejoin:
                other.request_rejoin()
        self.group.maybe_complete()

    def join_in_progress(self) -> bool:
        return self.joining

    def take_join_result(self) -> bool | None:
        if self.done:
            self.done = False
            return True
        return None

    def coordinator_known(self) -> bool:
        return self.group.coordinator_up

    def poll_heartbeat(self) -> None:
        self.heartbeats += 1

    def leave_group(self, reason: str | None, timeout_ms: int) -> None:
        self.left = reason
        self.rejoin = True
        self._member_id = self._member_id + "'"
        self.group.rebalance()

    @property
    def member_id(self) -> str | None:
        return self._member_id

    @property
    def generation_id(self) -> int:
        return self.group.generation

    def close(self, *, leave_group: bool, timeout_ms: int) -> None:
        self.alive = False
        self.closed_with = leave_group
        if leave_group:
            self.group.rebalance()


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.running: set[str | TaskId] = set()

    def on_assigned(self, assignment: Assignment, generation: int) -> None:
        self.events.append(("assigned", generation, assignment))
        self.running |= set(assignment.connectors) | set(assignment.tasks)

    def on_revoked(self, leader: str | None, connectors: list[str], tasks: list[TaskId]) -> None:
        self.events.append(("revoked", leader, list(connectors), list(tasks)))
        self.running -= set(connectors) | set(tasks)

    def last_assignment(self) -> Assignment:
        return [e for e in self.events if e[0] == "assigned"][-1][2]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Harness:
    def __init__(self, configured: dict[str, int], *, offset: int = 5, max_delay_ms: int = 10_000) -> None:
        self.group = FakeGroup()
        self.clock = Clock()
        self.configured = dict(configured)
        self.offset = offset
        self.max_delay_ms = max_delay_ms
        self.members: dict[str, WorkerGroupMember] = {}
        self.listeners: dict[str, Recorder] = {}
        self.snapshots: dict[str, tuple[int, dict[str, int]]] = {}

    def add(self, name: str, protocol: str = "sessioned") -> WorkerGroupMember:
        listener = Recorder()

        def snapshot() -> tuple[int, dict[str, int]]:
            return self.snapshots.get(name, (self.offset, dict(self.configured)))

        member = WorkerGroupMember(
            bootstrap_servers="unused:9092",
            group_id="g",
            worker_url=f"http://{name}:8083",
            listener=listener,
            config_snapshot=snapshot,
            heartbeat_interval_ms=1000,
            scheduled_rebalance_max_delay_ms=self.max_delay_ms,
            protocol=protocol,
            clock=self.clock,
            group_client_factory=self.group.factory,
        )
        self.members[name] = member
        self.listeners[name] = listener
        return member

    def poll_all(self, rounds: int = 6) -> None:
        for _ in range(rounds):
            for member in list(self.members.values()):
                if not member._closed:
                    member.poll(0)

    def running(self) -> dict[str, set[Any]]:
        return {n: set(r.running) for n, r in self.listeners.items() if not self.members[n]._closed}


def all_work(configured: dict[str, int]) -> set[Any]:
    return set(configured) | {(c, i) for c, n in configured.items() for i in range(n)}


# ---------------------------------------------------------------------------------------


def test_members_join_and_share_the_work() -> None:
    h = Harness({"a": 3, "b": 3})
    for name in ("w1", "w2", "w3"):
        h.add(name)
    h.poll_all()
    running = h.running()
    assert set().union(*running.values()) == all_work(h.configured)
    assert sum(len(r) for r in running.values()) == len(all_work(h.configured))
    assert h.group.rounds[-1]["protocol"] == "sessioned"
    w1 = h.members["w1"]
    assert w1.is_leader and not h.members["w2"].is_leader
    assert {m.leader_url for m in h.members.values()} == {"http://w1:8083"}
    assert {m.generation for m in h.members.values()} == {1}
    assert w1.protocol_version == 2
    # The leader knows who runs what.
    owner = next(n for n, r in running.items() if "a" in r)
    assert w1.owner_url("a") == f"http://{owner}:8083"
    owner_task = next(n for n, r in running.items() if ("b", 2) in r)
    assert w1.owner_url(("b", 2)) == f"http://{owner_task}:8083"
    assert h.members["w2"].owner_url("a") is None  # only the leader knows
    # Metadata carried each member's URL and config offset.
    metadata = h.group.rounds[-1]["metadata"]
    assert {s.url for s in metadata.values()} == {f"http://w{i}:8083" for i in (1, 2, 3)}
    assert {s.config_offset for s in metadata.values()} == {5}


def test_revocation_is_reported_before_the_assignment_then_the_member_rejoins() -> None:
    h = Harness({"a": 4})
    h.add("w1")
    h.poll_all()
    assert h.running()["w1"] == all_work(h.configured)
    h.add("w2")
    h.group.rebalance()
    h.poll_all(rounds=2)  # w1 starts its join, w2's completes the round; w1 then sees it
    events = h.listeners["w1"].events
    revoked = [e for e in events if e[0] == "revoked"]
    assert revoked and revoked[0][1] == "member-1" and len(revoked[0][3]) == 2
    # on_revoked came first, then on_assigned with the complete (reduced) assignment.
    assert events[-2][0] == "revoked" and events[-1][0] == "assigned"
    full = events[-1][2]
    assert full.revoked_tasks == revoked[0][3]
    assert set(full.tasks) == {t for t in h.running()["w1"] if isinstance(t, tuple)}
    assert h.group.clients[0].rejoin  # second phase requested by the member itself
    h.poll_all()
    running = h.running()
    assert running["w1"] | running["w2"] == all_work(h.configured)
    assert len([t for t in running["w2"] if isinstance(t, tuple)]) == 2


def test_metadata_advertises_the_current_assignment_without_revocations() -> None:
    h = Harness({"a": 2})
    h.add("w1")
    h.poll_all()
    h.members["w1"].request_rejoin()
    h.poll_all()
    advertised = h.group.rounds[-1]["metadata"]["member-1"].assignment
    assert advertised is not None
    assert advertised.connectors == ["a"] and advertised.tasks == [("a", 0), ("a", 1)]
    assert advertised.revoked_tasks == [] and advertised.delay_ms == 0


def test_delay_makes_members_rejoin_when_it_expires() -> None:
    h = Harness({"a": 3, "b": 3}, max_delay_ms=2000)
    for name in ("w1", "w2", "w3"):
        h.add(name)
    h.poll_all()
    lost = h.running()["w3"]
    h.members["w3"].stop(leave_group=False)
    h.group.rebalance()  # the coordinator noticed (session timeout)
    h.poll_all()
    assert h.listeners["w1"].last_assignment().delay_ms == 2000
    assert not (h.running()["w1"] | h.running()["w2"]) & lost
    rounds = len(h.group.rounds)

    h.clock.now += 1.999
    h.poll_all()
    assert len(h.group.rounds) == rounds  # not before the delay
    h.clock.now += 0.001
    h.poll_all()
    assert len(h.group.rounds) > rounds
    assert h.running()["w1"] | h.running()["w2"] == all_work(h.configured)
    assert h.listeners["w1"].last_assignment().delay_ms == 0


def test_eager_protocol_revokes_everything_before_each_round() -> None:
    h = Harness({"a": 2})
    h.add("w1", protocol="eager")
    h.poll_all()
    assert h.group.rounds[-1]["protocol"] == "default"
    assert h.members["w1"].protocol_version == 0
    h.add("w2", protocol="eager")
    h.group.rebalance()
    h.poll_all()
    events = h.listeners["w1"].events
    assert ("revoked", "member-1", ["a"], [("a", 0), ("a", 1)]) in events
    running = h.running()
    assert running["w1"] | running["w2"] == all_work(h.configured)
    assert not running["w1"] & running["w2"]


def test_one_eager_member_makes_the_group_eager() -> None:
    h = Harness({"a": 1})
    h.add("w1", protocol="sessioned")
    h.add("w2", protocol="eager")
    h.poll_all()
    assert h.group.rounds[-1]["protocol"] == "default"
    assert h.members["w1"].protocol_version == 0


def test_switching_to_eager_stops_work_that_moved() -> None:
    h = Harness({"a": 2})
    h.add("w1", protocol="sessioned")
    h.poll_all()
    assert h.running()["w1"] == all_work(h.configured)
    h.add("w2", protocol="eager")  # the group falls back to the eager protocol
    h.group.rebalance()
    h.poll_all()
    assert h.group.rounds[-1]["protocol"] == "default"
    running = h.running()
    assert running["w1"] | running["w2"] == all_work(h.configured)
    assert not running["w1"] & running["w2"]


def test_compatible_members_speak_v1() -> None:
    h = Harness({"a": 1})
    h.add("w1", protocol="sessioned")
    h.add("w2", protocol="compatible")
    h.poll_all()
    assert h.group.rounds[-1]["protocol"] == "compatible"
    assert h.members["w2"].protocol_version == 1


def test_leader_behind_the_config_returns_a_failed_assignment() -> None:
    h = Harness({"a": 1})
    h.add("w1")
    h.add("w2")
    h.snapshots["w1"] = (3, {"a": 1})
    h.snapshots["w2"] = (9, {"a": 1, "b": 1})
    h.poll_all(rounds=1)
    first = h.group.rounds[0]["assignments"]
    assert {a.error for a in first.values()} == {CONFIG_MISMATCH}
    assert {a.config_offset for a in first.values()} == {9}
    assigned = h.listeners["w2"].last_assignment()
    assert assigned.failed and assigned.leader_url == "http://w1:8083"
    # The leader catches up; the members rejoin by themselves.
    h.snapshots["w1"] = (9, {"a": 1, "b": 1})
    h.poll_all()
    last = h.group.rounds[-1]["assignments"]
    assert {a.error for a in last.values()} == {0}
    assert h.running()["w1"] | h.running()["w2"] == all_work({"a": 1, "b": 1})


def test_leader_takes_a_fresh_snapshot_when_another_member_is_ahead() -> None:
    h = Harness({"a": 1})
    h.add("w1")
    h.add("w2")
    calls = {"n": 0}
    h.snapshots["w2"] = (9, {"a": 1, "b": 1})

    def w1_snapshot() -> tuple[int, dict[str, int]]:
        calls["n"] += 1
        return (3, {"a": 1}) if calls["n"] == 1 else (9, {"a": 1, "b": 1})

    h.members["w1"]._config_snapshot = w1_snapshot
    h.poll_all()
    first = h.group.rounds[0]["assignments"]
    assert {a.error for a in first.values()} == {0}
    assert {a.config_offset for a in first.values()} == {9}
    assert h.running()["w1"] | h.running()["w2"] == all_work({"a": 1, "b": 1})


def test_coordinator_unreachable_for_a_heartbeat_interval_revokes_everything() -> None:
    h = Harness({"a": 1})
    h.add("w1")
    h.poll_all()
    assert h.running()["w1"] == {"a", ("a", 0)}
    h.group.coordinator_up = False
    h.members["w1"].poll(0)
    h.clock.now += 0.5
    h.members["w1"].poll(0)
    assert h.running()["w1"] == {"a", ("a", 0)}  # not yet
    h.clock.now += 0.5
    h.members["w1"].poll(0)
    assert h.running()["w1"] == set()
    assert h.members["w1"].assignment is None
    h.group.coordinator_up = True
    h.poll_all()
    assert h.running()["w1"] == {"a", ("a", 0)}


def test_wakeup_makes_poll_return_early() -> None:
    h = Harness({"a": 1})
    member = h.add("w1")
    h.poll_all()
    h.clock.now = 0.0  # a real-time poll below: use the wall clock
    member._clock = time.monotonic
    started = time.monotonic()
    threading.Timer(0.2, member.wakeup).start()
    member.poll(10_000)
    assert time.monotonic() - started < 5
    # A wakeup before poll makes the next poll return at once.
    member.wakeup()
    started = time.monotonic()
    member.poll(10_000)
    assert time.monotonic() - started < 1


def test_poll_waits_for_its_timeout_when_nothing_happens() -> None:
    h = Harness({"a": 1})
    member = h.add("w1")
    h.poll_all()
    member._clock = time.monotonic
    started = time.monotonic()
    member.poll(300)
    assert 0.25 <= time.monotonic() - started < 3


def test_stop_leaves_the_group_and_poll_after_stop_returns() -> None:
    h = Harness({"a": 1})
    member = h.add("w1")
    h.poll_all()
    member.stop()
    assert h.group.clients[0].closed_with is True
    member.stop()  # idempotent
    member.poll(1000)  # returns at once


def test_unknown_protocol_setting_is_refused() -> None:
    h = Harness({})
    with pytest.raises(Exception, match="Unknown Connect protocol compatibility mode"):
        h.add("w1", protocol="cooperative")


def test_heartbeat_failure_makes_the_member_rejoin() -> None:
    h = Harness({"a": 1})
    member = h.add("w1")
    h.poll_all()
    client = h.group.clients[0]

    def broken() -> None:
        raise RuntimeError("heartbeat loop died")

    client.poll_heartbeat = broken  # type: ignore[method-assign]
    rounds = len(h.group.rounds)
    member.poll(0)
    assert len(h.group.rounds) == rounds + 1


def test_leave_group_keeps_the_work_and_rejoins_as_a_new_member() -> None:
    h = Harness({"a": 2})
    member = h.add("w1")
    h.poll_all()
    before = h.running()["w1"]
    member.leave_group("cannot read the config topic")
    assert h.group.clients[0].left == "cannot read the config topic"
    assert h.running()["w1"] == before  # nothing revoked
    h.poll_all()
    assert h.running()["w1"] == before
    assert member.member_id == "member-1'"
    assert member.is_leader


def test_request_rejoin_picks_up_a_config_change() -> None:
    h = Harness({"a": 1})
    h.add("w1")
    h.add("w2")
    h.poll_all()
    h.configured["b"] = 2
    h.offset = 8
    h.members["w2"].request_rejoin()
    h.poll_all()
    assert h.running()["w1"] | h.running()["w2"] == all_work({"a": 1, "b": 2})
    assert {m.assignment.config_offset for m in h.members.values() if m.assignment} == {8}


def test_a_connector_added_while_a_round_is_under_way_gets_a_round_of_its_own() -> None:
    """A rejoin requested while a join is in flight is absorbed by that join, whose
    assignment was computed from the older config: the member notices the newer config
    once the round completes and asks for another round, so the new connector runs."""
    h = Harness({"a": 1})
    for name in ("w1", "w2", "w3"):
        h.add(name)
    h.poll_all()
    rounds = len(h.group.rounds)
    h.snapshots["w3"] = (h.offset, dict(h.configured))  # w3 has not read the change yet
    h.members["w1"].request_rejoin()
    h.members["w1"].poll(0)
    h.members["w2"].poll(0)  # both in the round, with the old config
    h.configured["b"] = 1
    h.offset = 8
    h.members["w1"].request_rejoin()  # what the herders do on reading the change: absorbed
    h.members["w2"].request_rejoin()
    h.members["w3"].poll(0)  # the round completes on the old config
    assert len(h.group.rounds) == rounds + 1
    assert all_work({"b": 1}).isdisjoint(set().union(*h.running().values()))
    del h.snapshots["w3"]
    h.poll_all()
    assert set().union(*h.running().values()) == all_work({"a": 1, "b": 1})


def test_a_target_state_change_during_a_round_starts_no_other_round() -> None:
    """Pause and resume move the config topic's offset but no work: no extra round."""
    h = Harness({"a": 1})
    for name in ("w1", "w2", "w3"):
        h.add(name)
    h.poll_all()
    rounds = len(h.group.rounds)
    h.snapshots["w3"] = (h.offset, dict(h.configured))
    h.members["w1"].request_rejoin()
    h.members["w1"].poll(0)
    h.members["w2"].poll(0)
    h.offset = 9  # a target-state record, read while the round is under way
    h.members["w3"].poll(0)
    assert {m.assignment.config_offset for m in h.members.values() if m.assignment} == {5}
    del h.snapshots["w3"]
    h.poll_all()
    assert len(h.group.rounds) == rounds + 1


def test_a_failed_join_raises_and_the_next_poll_starts_afresh() -> None:
    from sluice.api.errors import ConnectError

    h = Harness({"a": 1})
    member = h.add("w1")
    client = h.group.clients[0]
    original = client.take_join_result
    client.start_join = lambda: setattr(client, "joining", True)  # type: ignore[method-assign]

    def failing() -> bool | None:
        raise ConnectError("Group membership failed: InconsistentGroupProtocolError")

    client.take_join_result = failing  # type: ignore[method-assign]
    with pytest.raises(ConnectError, match="InconsistentGroupProtocol"):
        member.poll(0)
    assert member._round_snapshot is None
    client.take_join_result = original  # type: ignore[method-assign]
    del client.start_join
    client.joining = False
    h.poll_all()
    assert h.running()["w1"] == {"a", ("a", 0)}


def test_client_id_defaults_to_kafka_connects() -> None:
    h = Harness({})
    h.add("w1")
    assert h.group.clients[0].config["client_config"] == {"client.id": "connect-w1:8083"}
