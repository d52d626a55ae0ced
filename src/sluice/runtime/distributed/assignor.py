"""The group leader's assignment of connectors and tasks to workers, as pure functions.

:func:`incremental_cooperative_assign` is Kafka Connect's ``IncrementalCooperativeAssignor``
(KIP-415) re-expressed as a function: ``(what each member runs now, what is configured,
the time, the leader's memory of earlier rounds) → (this round's assignment, the new
memory)``. Kafka keeps that memory in fields of the assignor object; here it is the frozen
:class:`AssignorState` the caller carries from one round to the next. What it does each
round:

* **New work** (configured, not running, not held back) goes to the least-loaded
  workers, connectors and tasks balanced separately, in name order.
* **Deleted work** (running, no longer configured) is revoked from whoever runs it; work
  running on two workers at once is revoked from both and assigned afresh next round.
* **Balance, two phases.** When the load is uneven (typically: a worker joined), the
  most-loaded workers are told to *revoke* their surplus; nothing else moves. Those
  workers stop it and rejoin at once, and in that second round the revoked work is
  unowned and goes to the least-loaded (the new) workers. A worker keeps everything it
  runs that it is not told to revoke. If revoking rounds follow each other (the group
  does not settle), the next revocation waits an exponentially growing delay (40 ms ×
  40^n, capped at ``scheduled.rebalance.max.delay.ms``).
* **Departed workers.** Work that was assigned in the previous round and that no member
  reports any more is *lost*. If a worker departed, the lost work is held back for
  ``scheduled.rebalance.max.delay.ms``: every member is told the remaining ``delay`` and
  rejoins when it expires. If the departed worker's process rejoins with its assignment
  in time, the work is simply running again. When the delay expires, the lost work goes
  to the workers that joined *empty* during the delay (a restarted worker comes back
  empty), round robin, or else is treated as new work. No balancing revocations happen
  while a delay is pending.
* **Lost without a departure** (a member missed the previous assignment) or a max delay
  of 0: the lost work is reassigned at once.
* **Leadership changes.** A leader whose memory is not of the last generation it
  completed (it was not the leader in between, or its last round failed) forgets it and
  starts from what the members report; a new leader therefore reassigns the work of a
  worker that left at once, as in Kafka. (Kafka drops only the previous assignment and
  keeps its delay bookkeeping; dropping all of it avoids acting on a stale delay.)
* **Stale work.** Work a member reports that is not configured is revoked from it even
  when this leader never assigned it (Kafka only revokes what it remembers assigning).

:func:`eager_assign` is the ``default`` (v0) protocol's round robin: members run nothing
between rounds, connectors then tasks are dealt out in name order.

Workers are identified by group member id; ties are broken by member id, so the result
is deterministic. Nothing here does I/O or reads a clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

from sluice.runtime.distributed.protocol import TaskId

__all__ = [
    "AssignorState",
    "ClusterAssignment",
    "ConnectorsAndTasks",
    "MemberAssignment",
    "configured_tasks",
    "eager_assign",
    "incremental_cooperative_assign",
    "revoking_rebalance_backoff",
]

_T = TypeVar("_T")


@dataclass(frozen=True)
class ConnectorsAndTasks:
    """Connectors and tasks, each in a fixed order without duplicates."""

    connectors: tuple[str, ...] = ()
    tasks: tuple[TaskId, ...] = ()

    @classmethod
    def of(cls, connectors: Iterable[str] = (), tasks: Iterable[TaskId] = ()) -> ConnectorsAndTasks:
        return cls(tuple(dict.fromkeys(connectors)), tuple(dict.fromkeys((c, int(t)) for c, t in tasks)))

    def is_empty(self) -> bool:
        return not self.connectors and not self.tasks


EMPTY = ConnectorsAndTasks()


@dataclass(frozen=True)
class AssignorState:
    """What the leader remembers between rounds (Kafka: the assignor's fields).

    Start with ``AssignorState()``; pass each round's returned state to the next round.
    Times are milliseconds on the caller's clock (any monotonic clock will do, as long as
    the same one is used every round).
    """

    #: Everything assigned after the previous round, plus work still held back as lost.
    previous_assignment: ConnectorsAndTasks = EMPTY
    #: What the previous round revoked (to notice a revocation that did not happen).
    previous_revocation: ConnectorsAndTasks = EMPTY
    #: The generation the previous round assigned (-1: none).
    previous_generation: int = -1
    #: The members of the previous round.
    previous_members: frozenset[str] = frozenset()
    #: Whether the previous round made balancing revocations.
    revoked_in_previous: bool = False
    #: How many revoking rounds followed each other (drives their backoff).
    successive_revoking_rebalances: int = 0
    #: When the held-back lost work is due for reassignment (0: no delay pending).
    scheduled_rebalance_ms: int = 0
    #: The delay handed to members in the last round.
    delay_ms: int = 0
    #: Members that joined empty while lost work was held back (they get it first).
    candidate_workers: tuple[str, ...] = ()


@dataclass(frozen=True)
class MemberAssignment:
    """One member's part of a round: what it starts and what it stops."""

    connectors: tuple[str, ...] = ()
    tasks: tuple[TaskId, ...] = ()
    revoked_connectors: tuple[str, ...] = ()
    revoked_tasks: tuple[TaskId, ...] = ()


@dataclass(frozen=True)
class ClusterAssignment:
    """A round's result.

    ``assignments`` holds every member's increment (for the wire); ``connector_owners``
    and ``task_owners`` say which member runs what once the round is applied (work that
    is held back or was just revoked has no owner); ``delay_ms`` is the delay every
    member is told (0: none).
    """

    assignments: Mapping[str, MemberAssignment]
    connector_owners: Mapping[str, str] = field(default_factory=dict)
    task_owners: Mapping[TaskId, str] = field(default_factory=dict)
    delay_ms: int = 0

    def owned_by(self, member: str) -> ConnectorsAndTasks:
        """Everything ``member`` runs once this round is applied (sorted)."""
        return ConnectorsAndTasks(
            tuple(sorted(c for c, m in self.connector_owners.items() if m == member)),
            tuple(sorted(t for t, m in self.task_owners.items() if m == member)),
        )


def configured_tasks(configured: Mapping[str, int]) -> ConnectorsAndTasks:
    """The connectors (sorted) and their tasks ``0..n-1`` for ``{connector: task count}``."""
    connectors = tuple(sorted(configured))
    tasks = tuple((c, i) for c in connectors for i in range(max(0, int(configured[c]))))
    return ConnectorsAndTasks(connectors, tasks)


def revoking_rebalance_backoff(attempts: int, max_delay_ms: int) -> int:
    """The delay before the ``attempts``-th successive revoking round may revoke again:
    ``40^attempts`` ms capped at ``max_delay_ms`` (Kafka's ``ExponentialBackoff(1, 40,
    max, 0)``; 0 when the max delay is 0)."""
    if max_delay_ms <= 0:
        return 0
    initial = min(max_delay_ms, 1)
    if max_delay_ms <= initial:
        return initial
    exp_max = math.log(max_delay_ms / max(initial, 1)) / math.log(40)
    term = initial * math.pow(40, min(float(attempts), exp_max))
    return int(min(int(term), max_delay_ms))


# ---------------------------------------------------------------------------------------
# Incremental cooperative assignment
# ---------------------------------------------------------------------------------------


class _Load:
    """A member's working allocation during a round (ordered, mutable)."""

    __slots__ = ("connectors", "member", "tasks")

    def __init__(self, member: str, connectors: Iterable[str], tasks: Iterable[TaskId]) -> None:
        self.member = member
        self.connectors: dict[str, None] = dict.fromkeys(connectors)
        self.tasks: dict[TaskId, None] = dict.fromkeys(tasks)

    def is_empty(self) -> bool:
        return not self.connectors and not self.tasks


def incremental_cooperative_assign(
    *,
    members: Mapping[str, ConnectorsAndTasks],
    configured: Mapping[str, int],
    now_ms: int,
    max_delay_ms: int,
    state: AssignorState,
    generation: int,
    last_completed_generation: int,
) -> tuple[ClusterAssignment, AssignorState]:
    """One round of Kafka's incremental cooperative assignment.

    Args:
        members: every member of this round → what it runs now (from its metadata).
        configured: every configured connector → its number of tasks (config snapshot).
        now_ms: the current time in ms (the clock of ``state``).
        max_delay_ms: ``scheduled.rebalance.max.delay.ms``.
        state: the leader's memory from earlier rounds (``AssignorState()`` at first).
        generation: the generation being assigned.
        last_completed_generation: the last generation this leader completed a join of
            (-1: none); memory from any other generation is dropped.

    Returns:
        the round's :class:`ClusterAssignment` and the state to pass to the next round.
    """
    if not members:
        raise ValueError("an assignment needs at least one member")
    if state.previous_generation != last_completed_generation:
        # This leader did not complete the round it last assigned (or another member led
        # since): its memory is stale. Start from what the members report.
        state = AssignorState()
    previous = state.previous_assignment

    configured_set = configured_tasks(configured)
    conf_connectors = set(configured_set.connectors)
    conf_tasks = set(configured_set.tasks)

    member_ids = sorted(members)
    active_connectors = {c for m in member_ids for c in members[m].connectors}
    active_tasks = {t for m in member_ids for t in members[m].tasks}

    # A revocation of the previous round that did not take effect: start again from what
    # the members run.
    revocation = state.previous_revocation
    if not revocation.is_empty() and (
        any(c in active_connectors for c in revocation.connectors) or any(t in active_tasks for t in revocation.tasks)
    ):
        previous = ConnectorsAndTasks(tuple(sorted(active_connectors)), tuple(sorted(active_tasks)))

    prev_connectors = set(previous.connectors)
    prev_tasks = set(previous.tasks)

    deleted_connectors = prev_connectors - conf_connectors
    deleted_tasks = prev_tasks - conf_tasks
    # Kafka derives "deleted" from the previous assignment only; work a member runs that
    # is not configured and was never assigned by this leader (a new leader, a member
    # that was out of the group) is revoked the same way.
    deleted_connectors |= active_connectors - conf_connectors
    deleted_tasks |= active_tasks - conf_tasks

    dup_connectors = _duplicates(members[m].connectors for m in member_ids)
    dup_tasks = _duplicates(members[m].tasks for m in member_ids)

    lost_connectors = sorted(prev_connectors - active_connectors - deleted_connectors)
    lost_tasks = sorted(prev_tasks - active_tasks - deleted_tasks)
    created_connectors = sorted(conf_connectors - prev_connectors - active_connectors)
    created_tasks = sorted(conf_tasks - prev_tasks - active_tasks)

    # What each member runs, minus deleted work (the base for the increments).
    current = {
        m: _Load(
            m,
            (c for c in members[m].connectors if c not in deleted_connectors),
            (t for t in members[m].tasks if t not in deleted_tasks),
        )
        for m in member_ids
    }
    revoke_connectors: dict[str, dict[str, None]] = {m: {} for m in member_ids}
    revoke_tasks: dict[str, dict[TaskId, None]] = {m: {} for m in member_ids}
    for m in member_ids:
        for c in members[m].connectors:
            if c in deleted_connectors or c in dup_connectors:
                revoke_connectors[m][c] = None
        for t in members[m].tasks:
            if t in deleted_tasks or t in dup_tasks:
                revoke_tasks[m][t] = None

    # What each member will run after this round (grows with new and reassigned work,
    # shrinks with revocations).
    nxt = {
        m: _Load(
            m,
            (c for c in members[m].connectors if c not in revoke_connectors[m]),
            (t for t in members[m].tasks if t not in revoke_tasks[m]),
        )
        for m in member_ids
    }

    st = _Mutable(state)
    reassign_connectors: list[str] = []
    reassign_tasks: list[TaskId] = []
    _handle_lost_assignments(
        st, lost_connectors, lost_tasks, reassign_connectors, reassign_tasks, nxt, now_ms, max_delay_ms
    )

    if st.delay_ms == 0:
        revocations = _load_balancing_revocations(configured_set, [nxt[m] for m in member_ids])
        has_revocations = any(cs or ts for cs, ts in revocations.values())
        if st.revoked_in_previous and has_revocations:
            st.successive_revoking_rebalances += 1
            st.delay_ms = revoking_rebalance_backoff(st.successive_revoking_rebalances, max_delay_ms)
            if st.delay_ms != 0:
                st.scheduled_rebalance_ms = now_ms + st.delay_ms
            else:
                _apply_revocations(revocations, nxt, revoke_connectors, revoke_tasks)
        elif has_revocations:
            _apply_revocations(revocations, nxt, revoke_connectors, revoke_tasks)
            st.revoked_in_previous = True
        elif st.revoked_in_previous:
            st.revoked_in_previous = False
            st.successive_revoking_rebalances = 0
    else:
        st.revoked_in_previous = False

    to_assign_connectors = list(dict.fromkeys([*created_connectors, *reassign_connectors]))
    to_assign_tasks = list(dict.fromkeys([*created_tasks, *reassign_tasks]))
    loads = [nxt[m] for m in member_ids]
    _deal(loads, to_assign_connectors, lambda load: load.connectors)
    _deal(loads, to_assign_tasks, lambda load: load.tasks)

    assignments: dict[str, MemberAssignment] = {}
    connector_owners: dict[str, str] = {}
    task_owners: dict[TaskId, str] = {}
    all_revoked_connectors: list[str] = []
    all_revoked_tasks: list[TaskId] = []
    for m in member_ids:
        load = nxt[m]
        assignments[m] = MemberAssignment(
            connectors=tuple(c for c in load.connectors if c not in current[m].connectors),
            tasks=tuple(t for t in load.tasks if t not in current[m].tasks),
            revoked_connectors=tuple(revoke_connectors[m]),
            revoked_tasks=tuple(revoke_tasks[m]),
        )
        for c in load.connectors:
            connector_owners[c] = m
        for t in load.tasks:
            task_owners[t] = m
        all_revoked_connectors.extend(revoke_connectors[m])
        all_revoked_tasks.extend(revoke_tasks[m])

    revoked_c = set(all_revoked_connectors)
    revoked_t = set(all_revoked_tasks)
    next_previous = ConnectorsAndTasks.of(
        sorted({c for c in connector_owners if c not in revoked_c} | set(lost_connectors)),
        sorted({t for t in task_owners if t not in revoked_t} | set(lost_tasks)),
    )
    new_state = replace(
        st.freeze(),
        previous_assignment=next_previous,
        previous_revocation=ConnectorsAndTasks.of(all_revoked_connectors, all_revoked_tasks),
        previous_generation=generation,
        previous_members=frozenset(member_ids),
    )
    result = ClusterAssignment(
        assignments=assignments,
        connector_owners=connector_owners,
        task_owners=task_owners,
        delay_ms=st.delay_ms,
    )
    return result, new_state


class _Mutable:
    """The scalar parts of :class:`AssignorState`, mutable while a round is computed."""

    def __init__(self, state: AssignorState) -> None:
        self.base = state
        self.revoked_in_previous = state.revoked_in_previous
        self.successive_revoking_rebalances = state.successive_revoking_rebalances
        self.scheduled_rebalance_ms = state.scheduled_rebalance_ms
        self.delay_ms = state.delay_ms
        self.candidate_workers: dict[str, None] = dict.fromkeys(state.candidate_workers)

    def reset_delay(self) -> None:
        self.candidate_workers.clear()
        self.scheduled_rebalance_ms = 0
        self.delay_ms = 0

    def freeze(self) -> AssignorState:
        return replace(
            self.base,
            revoked_in_previous=self.revoked_in_previous,
            successive_revoking_rebalances=self.successive_revoking_rebalances,
            scheduled_rebalance_ms=self.scheduled_rebalance_ms,
            delay_ms=self.delay_ms,
            candidate_workers=tuple(self.candidate_workers),
        )


def _handle_lost_assignments(
    st: _Mutable,
    lost_connectors: Sequence[str],
    lost_tasks: Sequence[TaskId],
    reassign_connectors: list[str],
    reassign_tasks: list[TaskId],
    nxt: Mapping[str, _Load],
    now_ms: int,
    max_delay_ms: int,
) -> None:
    """Decide what happens to lost work: reassign it now (to candidates or as new work),
    or hold it back and set the delay."""
    if not lost_connectors and not lost_tasks and not st.revoked_in_previous:
        st.reset_delay()
        return

    active = set(nxt)
    if st.scheduled_rebalance_ms <= 0 and active >= st.base.previous_members:
        # Nobody left: members probably missed the previous assignment. Reassign now.
        reassign_connectors.extend(lost_connectors)
        reassign_tasks.extend(lost_tasks)
        return
    if max_delay_ms == 0:
        reassign_connectors.extend(lost_connectors)
        reassign_tasks.extend(lost_tasks)
        return

    if st.scheduled_rebalance_ms > 0 and now_ms >= st.scheduled_rebalance_ms:
        # The delay is over: hand the lost work to the workers that came back empty.
        candidates = [nxt[m] for m in st.candidate_workers if m in nxt]
        if candidates:
            for i, connector in enumerate(lost_connectors):
                candidates[i % len(candidates)].connectors[connector] = None
            for i, task in enumerate(lost_tasks):
                candidates[i % len(candidates)].tasks[task] = None
        else:
            reassign_connectors.extend(lost_connectors)
            reassign_tasks.extend(lost_tasks)
        st.reset_delay()
        st.revoked_in_previous = False
        return

    for m in sorted(nxt):
        if nxt[m].is_empty():
            st.candidate_workers[m] = None
    if now_ms < st.scheduled_rebalance_ms:
        st.delay_ms = min(st.scheduled_rebalance_ms - now_ms, max_delay_ms)
    else:
        st.delay_ms = max_delay_ms
    st.scheduled_rebalance_ms = now_ms + st.delay_ms


def _load_balancing_revocations(
    configured: ConnectorsAndTasks, loads: Sequence[_Load]
) -> dict[str, tuple[list[str], list[TaskId]]]:
    """What to revoke from each member so that nobody runs more than its balanced share."""
    if all(load.is_empty() for load in loads) or configured.is_empty():
        return {}
    connectors = _revocations_for(len(configured.connectors), loads, lambda load: list(load.connectors))
    tasks = _revocations_for(len(configured.tasks), loads, lambda load: list(load.tasks))
    return {
        load.member: (connectors.get(load.member, []), tasks.get(load.member, []))
        for load in loads
        if connectors.get(load.member) or tasks.get(load.member)
    }


def _revocations_for(total: int, loads: Sequence[_Load], items: Callable[[_Load], list[_T]]) -> dict[str, list[_T]]:
    workers = len(loads)
    min_per_worker = total // workers
    extras = total % workers
    sizes = [len(items(load)) for load in loads]
    at_min = sum(1 for s in sizes if s == min_per_worker)
    at_extra = sum(1 for s in sizes if s == min_per_worker + 1)
    if at_extra == extras and at_min + at_extra == workers:
        return {}
    result: dict[str, list[_T]] = {}
    allocated_extras = 0
    for load, size in zip(loads, sizes, strict=True):
        if size <= min_per_worker:
            continue
        if allocated_extras < extras:
            allocated_extras += 1
            if size == min_per_worker + 1:
                continue
            keep = min_per_worker + 1
        else:
            keep = min_per_worker
        # Keep the first ones (in name order), revoke the rest.
        result[load.member] = sorted(items(load))[keep:]  # type: ignore[type-var]
    return result


def _apply_revocations(
    revocations: Mapping[str, tuple[list[str], list[TaskId]]],
    nxt: Mapping[str, _Load],
    revoke_connectors: dict[str, dict[str, None]],
    revoke_tasks: dict[str, dict[TaskId, None]],
) -> None:
    for member, (connectors, tasks) in revocations.items():
        for c in connectors:
            revoke_connectors[member][c] = None
            nxt[member].connectors.pop(c, None)
        for t in tasks:
            revoke_tasks[member][t] = None
            nxt[member].tasks.pop(t, None)


def _deal(loads: list[_Load], items: Sequence[_T], bucket: Callable[[_Load], dict[_T, None]]) -> None:
    """Give each item to a least-loaded member (fewest in ``bucket``, then member id)."""
    for item in items:
        target = min(loads, key=lambda load: (len(bucket(load)), load.member))
        bucket(target)[item] = None


def _duplicates(collections: Iterable[Iterable[_T]]) -> set[_T]:
    seen: set[_T] = set()
    dups: set[_T] = set()
    for items in collections:
        for item in set(items):
            if item in seen:
                dups.add(item)
            seen.add(item)
    return dups


# ---------------------------------------------------------------------------------------
# Eager assignment (protocol "default", v0)
# ---------------------------------------------------------------------------------------


def eager_assign(members: Iterable[str], configured: Mapping[str, int]) -> ClusterAssignment:
    """Round robin over the members (sorted): all connectors, then all tasks, by name."""
    member_ids = sorted(set(members))
    if not member_ids:
        raise ValueError("an assignment needs at least one member")
    work = configured_tasks(configured)
    connectors: dict[str, list[str]] = {m: [] for m in member_ids}
    tasks: dict[str, list[TaskId]] = {m: [] for m in member_ids}
    i = 0
    for c in work.connectors:
        connectors[member_ids[i % len(member_ids)]].append(c)
        i += 1
    for t in work.tasks:
        tasks[member_ids[i % len(member_ids)]].append(t)
        i += 1
    return ClusterAssignment(
        assignments={m: MemberAssignment(tuple(connectors[m]), tuple(tasks[m])) for m in member_ids},
        connector_owners={c: m for m in member_ids for c in connectors[m]},
        task_owners={t: m for m in member_ids for t in tasks[m]},
    )
