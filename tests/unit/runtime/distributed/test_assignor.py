"""The leader's incremental cooperative assignment, round by round.

:class:`Cluster` plays the members' side as :class:`WorkerGroupMember` does: each member
reports what it runs, applies its increment (drops what is revoked, adds what it gains),
and the leader's state is carried from round to round.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import pytest

from sluice.runtime.distributed.assignor import (
    AssignorState,
    ClusterAssignment,
    ConnectorsAndTasks,
    configured_tasks,
    eager_assign,
    incremental_cooperative_assign,
    revoking_rebalance_backoff,
)
from sluice.runtime.distributed.protocol import TaskId

MAX_DELAY = 10_000


class Cluster:
    def __init__(self, configured: Mapping[str, int], members: list[str], max_delay: int = MAX_DELAY) -> None:
        self.configured = dict(configured)
        self.running: dict[str, ConnectorsAndTasks] = {m: ConnectorsAndTasks() for m in members}
        self.state = AssignorState()
        self.generation = 0
        self.last_completed = -1
        self.now = 1_000_000
        self.max_delay = max_delay
        self.last: ClusterAssignment | None = None

    def rebalance(self) -> ClusterAssignment:
        self.generation += 1
        result, self.state = incremental_cooperative_assign(
            members=self.running,
            configured=self.configured,
            now_ms=self.now,
            max_delay_ms=self.max_delay,
            state=self.state,
            generation=self.generation,
            last_completed_generation=self.last_completed,
        )
        for member, part in result.assignments.items():
            before = self.running[member]
            gone_c, gone_t = set(part.revoked_connectors), set(part.revoked_tasks)
            # A member is never told to start what it runs, nor to stop what it does not run.
            assert not set(part.connectors) & set(before.connectors)
            assert not set(part.tasks) & set(before.tasks)
            assert gone_c <= set(before.connectors) and gone_t <= set(before.tasks)
            self.running[member] = ConnectorsAndTasks(
                tuple(sorted({c for c in before.connectors if c not in gone_c} | set(part.connectors))),
                tuple(sorted({t for t in before.tasks if t not in gone_t} | set(part.tasks))),
            )
            assert self.running[member] == result.owned_by(member)
        self.last_completed = self.generation
        self.last = result
        return result

    def settle(self, rounds: int = 8) -> int:
        """Rebalance until nothing is revoked and no delay is pending, as members do: they
        rejoin at once after a revocation, and when a delay is over."""
        for i in range(1, rounds + 1):
            result = self.rebalance()
            revoked = any(a.revoked_connectors or a.revoked_tasks for a in result.assignments.values())
            if not revoked and not result.delay_ms:
                return i
            self.now += result.delay_ms
        raise AssertionError("did not settle")

    def leave(self, member: str) -> ConnectorsAndTasks:
        return self.running.pop(member)

    def join(self, member: str, running: ConnectorsAndTasks | None = None) -> None:
        self.running[member] = running or ConnectorsAndTasks()

    # -- checks ---------------------------------------------------------------------

    def owners(self) -> tuple[Counter[str], Counter[TaskId]]:
        connectors: Counter[str] = Counter()
        tasks: Counter[TaskId] = Counter()
        for work in self.running.values():
            connectors.update(work.connectors)
            tasks.update(work.tasks)
        return connectors, tasks

    def assert_all_assigned_once(self) -> None:
        connectors, tasks = self.owners()
        expected = configured_tasks(self.configured)
        assert sorted(connectors) == list(expected.connectors)
        assert sorted(tasks) == sorted(expected.tasks)
        assert set(connectors.values()) <= {1} and set(tasks.values()) <= {1}

    def assert_balanced(self) -> None:
        c = [len(w.connectors) for w in self.running.values()]
        t = [len(w.tasks) for w in self.running.values()]
        assert max(c) - min(c) <= 1, self.running
        assert max(t) - min(t) <= 1, self.running

    def snapshot(self) -> dict[str, ConnectorsAndTasks]:
        return dict(self.running)


def moved(before: Mapping[str, ConnectorsAndTasks], after: Mapping[str, ConnectorsAndTasks]) -> int:
    """How many connectors and tasks left an owner that is still a member."""
    owner_before = {x: m for m, w in before.items() for x in (*w.connectors, *w.tasks)}
    owner_after = {x: m for m, w in after.items() for x in (*w.connectors, *w.tasks)}
    return sum(1 for x, m in owner_before.items() if m in after and owner_after.get(x) != m)


# ---------------------------------------------------------------------------------------


def test_first_round_assigns_everything_once_and_balanced() -> None:
    cluster = Cluster({"a": 3, "b": 3}, ["m1", "m2", "m3"])
    result = cluster.rebalance()
    cluster.assert_all_assigned_once()
    cluster.assert_balanced()
    assert result.delay_ms == 0
    assert all(not a.revoked_connectors and not a.revoked_tasks for a in result.assignments.values())
    # Deterministic: connectors, then tasks in name order, to the least loaded (ties by id).
    assert result.assignments["m1"].connectors == ("a",)
    assert result.assignments["m2"].connectors == ("b",)
    assert result.assignments["m3"].tasks == (("a", 2), ("b", 2))


def test_a_stable_group_moves_nothing() -> None:
    cluster = Cluster({"a": 4, "b": 2, "c": 1}, ["m1", "m2", "m3"])
    cluster.rebalance()
    before = cluster.snapshot()
    result = cluster.rebalance()
    assert cluster.snapshot() == before
    assert all(a == type(a)() for a in result.assignments.values())


def test_a_joining_worker_gets_work_in_two_phases_and_the_rest_stays_put() -> None:
    cluster = Cluster({"a": 6, "b": 6}, ["m1", "m2", "m3"])
    cluster.rebalance()
    before = cluster.snapshot()

    cluster.join("m4")
    first = cluster.rebalance()
    # Phase one: only revocations, from the workers above their share; m4 gets nothing yet.
    assert first.assignments["m4"] == type(first.assignments["m4"])()
    revoked = sum(len(a.revoked_tasks) + len(a.revoked_connectors) for a in first.assignments.values())
    assert revoked == 3  # 12 tasks over 4 workers: one task from each of m1..m3; 2 connectors stay
    assert all(not a.connectors and not a.tasks for a in first.assignments.values())

    second = cluster.rebalance()
    assert len(second.assignments["m4"].tasks) == 3
    assert all(not a.revoked_connectors and not a.revoked_tasks for a in second.assignments.values())
    cluster.assert_all_assigned_once()
    cluster.assert_balanced()
    assert moved(before, cluster.snapshot()) == 3  # exactly what m4 took over

    # And a third round changes nothing (the backoff state is reset).
    third = cluster.rebalance()
    assert all(a == type(a)() for a in third.assignments.values())
    assert cluster.state.revoked_in_previous is False


def test_departed_worker_work_is_held_back_then_reassigned() -> None:
    cluster = Cluster({"a": 3, "b": 3}, ["m1", "m2", "m3"])
    cluster.rebalance()
    before = cluster.snapshot()
    lost = cluster.leave("m3")
    assert not lost.is_empty()

    held = cluster.rebalance()
    assert held.delay_ms == MAX_DELAY
    assert cluster.snapshot() == {m: before[m] for m in ("m1", "m2")}  # nothing moved
    assert all(a == type(a)() for a in held.assignments.values())
    # Nobody owns the lost work meanwhile.
    assert not set(lost.tasks) & set(held.task_owners)

    # An unrelated rejoin during the delay: still held back, with the remaining delay.
    cluster.now += 4_000
    again = cluster.rebalance()
    assert again.delay_ms == MAX_DELAY - 4_000
    assert not set(lost.tasks) & set(again.task_owners)

    cluster.now += MAX_DELAY - 4_000
    done = cluster.rebalance()
    assert done.delay_ms == 0
    cluster.assert_all_assigned_once()
    cluster.assert_balanced()
    assert moved(before, cluster.snapshot()) == 0  # only the lost work changed hands
    gained = set(done.assignments["m1"].tasks) | set(done.assignments["m2"].tasks)
    gained |= {(c, -1) for c in (*done.assignments["m1"].connectors, *done.assignments["m2"].connectors)}
    assert gained == set(lost.tasks) | {(c, -1) for c in lost.connectors}


def test_worker_back_with_its_assignment_within_the_delay_keeps_it() -> None:
    cluster = Cluster({"a": 3, "b": 3}, ["m1", "m2", "m3"])
    cluster.rebalance()
    before = cluster.snapshot()
    lost = cluster.leave("m3")
    assert cluster.rebalance().delay_ms == MAX_DELAY

    cluster.now += 1_000
    cluster.join("m3", lost)  # e.g. a worker that was briefly cut off, rejoining as itself
    back = cluster.rebalance()
    assert back.delay_ms == 0
    assert cluster.snapshot() == before
    assert cluster.state.scheduled_rebalance_ms == 0


def test_restarted_worker_back_empty_gets_the_lost_work_when_the_delay_expires() -> None:
    cluster = Cluster({"a": 3, "b": 3}, ["m1", "m2", "m3"])
    cluster.rebalance()
    lost = cluster.leave("m3")
    cluster.rebalance()

    cluster.now += 2_000
    cluster.join("m3-new")  # a new process: new member id, runs nothing
    waiting = cluster.rebalance()
    assert waiting.delay_ms == MAX_DELAY - 2_000
    assert waiting.assignments["m3-new"] == type(waiting.assignments["m3-new"])()
    assert cluster.state.candidate_workers == ("m3-new",)

    cluster.now += MAX_DELAY
    cluster.rebalance()
    assert cluster.running["m3-new"] == ConnectorsAndTasks(tuple(sorted(lost.connectors)), tuple(sorted(lost.tasks)))
    cluster.assert_all_assigned_once()
    cluster.assert_balanced()


def test_no_delay_reassigns_lost_work_at_once() -> None:
    cluster = Cluster({"a": 3, "b": 3}, ["m1", "m2", "m3"], max_delay=0)
    cluster.rebalance()
    cluster.leave("m2")
    result = cluster.rebalance()
    assert result.delay_ms == 0
    cluster.assert_all_assigned_once()
    cluster.assert_balanced()


def test_lost_work_without_a_departure_is_reassigned_at_once() -> None:
    # A member that missed the previous assignment reports less than it was given.
    cluster = Cluster({"a": 2}, ["m1", "m2"])
    cluster.rebalance()
    cluster.running["m2"] = ConnectorsAndTasks()
    result = cluster.rebalance()
    assert result.delay_ms == 0
    cluster.assert_all_assigned_once()


def test_new_connector_goes_to_the_least_loaded_without_moving_others() -> None:
    cluster = Cluster({"a": 2, "b": 2}, ["m1", "m2", "m3"])
    cluster.rebalance()
    before = cluster.snapshot()
    cluster.configured["c"] = 2
    result = cluster.rebalance()
    assert all(not a.revoked_connectors and not a.revoked_tasks for a in result.assignments.values())
    assert moved(before, cluster.snapshot()) == 0
    cluster.assert_all_assigned_once()
    cluster.assert_balanced()
    assert result.assignments["m3"].connectors == ("c",)  # m3 had no connector


def test_deleted_connector_is_revoked_from_its_owners() -> None:
    cluster = Cluster({"a": 3, "b": 3}, ["m1", "m2", "m3"])
    cluster.rebalance()
    del cluster.configured["b"]
    result = cluster.rebalance()
    revoked_tasks = {t for a in result.assignments.values() for t in a.revoked_tasks}
    revoked_connectors = {c for a in result.assignments.values() for c in a.revoked_connectors}
    assert revoked_tasks == {("b", 0), ("b", 1), ("b", 2)}
    assert revoked_connectors == {"b"}
    assert "b" not in result.connector_owners
    cluster.assert_all_assigned_once()


def test_task_count_changes() -> None:
    cluster = Cluster({"a": 4}, ["m1", "m2"])
    cluster.rebalance()
    cluster.configured["a"] = 2
    shrink = cluster.rebalance()
    assert {t for a in shrink.assignments.values() for t in a.revoked_tasks} == {("a", 2), ("a", 3)}
    cluster.assert_all_assigned_once()

    before = cluster.snapshot()
    cluster.configured["a"] = 5
    cluster.settle()
    cluster.assert_all_assigned_once()
    cluster.assert_balanced()
    assert moved(before, cluster.snapshot()) == 0


def test_stopped_connector_with_no_tasks_keeps_its_connector_assigned() -> None:
    cluster = Cluster({"a": 3}, ["m1", "m2"])
    cluster.rebalance()
    cluster.configured["a"] = 0
    cluster.rebalance()
    cluster.assert_all_assigned_once()
    assert cluster.owners()[0] == Counter({"a": 1})
    assert not cluster.owners()[1]


def test_work_running_twice_is_revoked_from_both_then_reassigned() -> None:
    cluster = Cluster({"a": 2}, ["m1", "m2"])
    cluster.rebalance()
    task = cluster.running["m1"].tasks[0]
    m2 = cluster.running["m2"]
    cluster.running["m2"] = ConnectorsAndTasks(m2.connectors, (*m2.tasks, task))
    first = cluster.rebalance()
    assert task in first.assignments["m1"].revoked_tasks and task in first.assignments["m2"].revoked_tasks
    cluster.rebalance()
    cluster.assert_all_assigned_once()


def test_work_a_member_runs_that_is_not_configured_is_revoked() -> None:
    cluster = Cluster({"a": 1}, ["m1", "m2"])
    cluster.running["m2"] = ConnectorsAndTasks(("gone",), (("gone", 0),))
    result = cluster.rebalance()
    assert result.assignments["m2"].revoked_connectors == ("gone",)
    assert result.assignments["m2"].revoked_tasks == (("gone", 0),)
    cluster.assert_all_assigned_once()


def test_a_revocation_that_did_not_happen_is_repeated() -> None:
    cluster = Cluster({"a": 6}, ["m1", "m2"])
    cluster.rebalance()
    cluster.join("m3")
    before = cluster.snapshot()
    first = cluster.rebalance()
    revoked = {m: a.revoked_tasks for m, a in first.assignments.items() if a.revoked_tasks}
    assert revoked
    cluster.running = before  # the members did not apply the revocation
    cluster.settle()
    cluster.assert_all_assigned_once()
    cluster.assert_balanced()


def test_memory_of_another_generation_is_dropped() -> None:
    cluster = Cluster({"a": 3, "b": 3}, ["m1", "m2", "m3"])
    cluster.rebalance()
    cluster.leave("m3")
    cluster.last_completed = -1  # e.g. leadership moved: this leader's last round is stale
    result = cluster.rebalance()
    assert result.delay_ms == 0  # a new leader does not know the lost work: it is new work
    cluster.assert_all_assigned_once()
    cluster.assert_balanced()


def test_successive_revoking_rounds_back_off() -> None:
    cluster = Cluster({"a": 6}, ["m1", "m2"])
    cluster.rebalance()
    cluster.join("m3")
    before = cluster.snapshot()
    first = cluster.rebalance()
    assert any(a.revoked_tasks for a in first.assignments.values())
    cluster.running = dict(before)  # the revocation did not take effect
    # Revoking in two rounds in a row: the second waits 40 ms (then 1600, 64000, ...).
    second = cluster.rebalance()
    assert second.delay_ms == 40
    assert all(not a.revoked_tasks and not a.tasks for a in second.assignments.values())
    assert cluster.state.successive_revoking_rebalances == 1
    cluster.now += 40
    cluster.settle()
    cluster.assert_all_assigned_once()
    cluster.assert_balanced()
    assert cluster.state.successive_revoking_rebalances == 0


def test_no_members_is_an_error() -> None:
    with pytest.raises(ValueError):
        incremental_cooperative_assign(
            members={},
            configured={"a": 1},
            now_ms=0,
            max_delay_ms=0,
            state=AssignorState(),
            generation=1,
            last_completed_generation=-1,
        )


def test_many_connectors_and_workers_stay_balanced_through_churn() -> None:
    configured = {f"c{i:02d}": (i % 4) + 1 for i in range(20)}
    cluster = Cluster(configured, [f"m{i}" for i in range(4)], max_delay=0)
    cluster.rebalance()
    cluster.assert_balanced()
    for step in range(6):
        before = cluster.snapshot()
        if step % 2 == 0:
            cluster.join(f"n{step}")
        else:
            cluster.leave(sorted(cluster.running)[0])
        cluster.settle()
        cluster.assert_all_assigned_once()
        cluster.assert_balanced()
        total = sum(configured.values()) + len(configured)
        assert moved(before, cluster.snapshot()) <= total // len(cluster.running) + 2


def test_eager_round_robin() -> None:
    result = eager_assign(["m2", "m1"], {"b": 2, "a": 1})
    assert result.assignments["m1"].connectors == ("a",)
    assert result.assignments["m2"].connectors == ("b",)
    assert result.assignments["m1"].tasks == (("a", 0), ("b", 1))
    assert result.assignments["m2"].tasks == (("b", 0),)
    assert result.delay_ms == 0


@pytest.mark.parametrize(
    ("attempts", "max_delay", "expected"),
    [(1, 300_000, 40), (2, 300_000, 1_600), (3, 300_000, 64_000), (1, 0, 0), (1, 30, 30), (9, 5_000, 5_000)],
)
def test_revoking_backoff(attempts: int, max_delay: int, expected: int) -> None:
    assert revoking_rebalance_backoff(attempts, max_delay) == expected


def test_revoking_backoff_caps_at_the_max_delay() -> None:
    assert 299_999 <= revoking_rebalance_backoff(4, 300_000) <= 300_000
