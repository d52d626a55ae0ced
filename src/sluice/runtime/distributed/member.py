"""A worker's membership of its Connect cluster: :class:`WorkerGroupMember`.

Kafka Connect's ``WorkerGroupMember`` + ``WorkerCoordinator``: the worker joins the Kafka
group ``group.id`` with the ``connect`` protocol (:mod:`.protocol`), the broker elects a
leader, the leader computes everybody's assignment (:mod:`.assignor`) and the broker hands
each member its part. The distributed herder drives it from its tick thread::

    member = WorkerGroupMember(bootstrap_servers=..., group_id=..., worker_url=...,
                               listener=herder_listener, config_snapshot=config_store_snapshot)
    while running:
        member.poll(timeout_ms)      # joins, rejoins, keeps the membership alive,
        ...                          # and calls the listener on this thread
    member.stop()                    # leaves the group

What the listener is told, in order, after each completed round (incremental protocols):

1. ``on_revoked(leader, connectors, tasks)`` — when the leader revoked work from this
   worker. The listener stops that work **before returning**; the member then rejoins at
   once (the second phase of a cooperative rebalance, in which the leader hands the
   revoked work to its new owner).
2. ``on_assigned(assignment, generation)`` — always. ``assignment`` is the worker's
   *complete* assignment after the round (work it kept plus work it gained; sorted), with
   the round's revocations in ``revoked_*`` and the leader, the leader's URL and the config
   offset the leader assigned at. ``delay_ms`` > 0 means the leader is holding back the
   work of departed workers; the member rejoins by itself when that delay is over.
   A failed assignment (``error == CONFIG_MISMATCH``: the leader had not read the config
   topic as far as some member) changes nothing: the listener catches up on the config
   topic, and the member rejoins on its next poll.

With the eager protocol (``connect.protocol=eager``, or a group that includes an eager-only
worker) ``on_revoked`` is called with everything the worker runs before each rejoin, and
``on_assigned`` with the full new assignment. In the round where a group falls back from
an incremental protocol to eager, ``on_revoked`` comes after the round instead, with what
the worker ran and no longer owns (Kafka Connect leaves that work running there).

An exception raised by the listener propagates out of :meth:`WorkerGroupMember.poll`
(Kafka's herder treats it as fatal).

If the group coordinator cannot be reached for ``heartbeat.interval.ms``, everything is
revoked (as Kafka Connect does, so a worker cut off from the group stops its tasks before
the group gives them to someone else) and the member rejoins when it can.

Threads: the listener is only called from :meth:`WorkerGroupMember.poll`, on the thread
that calls it. ``config_snapshot`` is called from that thread at the start of each round
and, on the leader, may be called from kafka-python's IO thread when the leader finds it
has not read the config topic as far as another member: it must be thread-safe and quick.
:meth:`~WorkerGroupMember.wakeup` and :meth:`~WorkerGroupMember.request_rejoin` may be
called from any thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol
from urllib.parse import urlsplit

from sluice.api.errors import ConnectError
from sluice.runtime.distributed.assignor import (
    AssignorState,
    ClusterAssignment,
    ConnectorsAndTasks,
    eager_assign,
    incremental_cooperative_assign,
)
from sluice.runtime.distributed.kafka_group import GroupClient, KafkaGroupClient
from sluice.runtime.distributed.protocol import (
    CONFIG_MISMATCH,
    NO_ERROR,
    PROTOCOL_TYPE,
    Assignment,
    ConnectProtocolCompatibility,
    TaskId,
    WorkerState,
    decode_assignment_with_version,
    decode_metadata,
    encode_assignment,
    group_protocols,
)

__all__ = ["ConfigSnapshot", "RebalanceListener", "WorkerGroupMember"]

log = logging.getLogger(__name__)

#: ``(config topic offset, {connector: task count})`` — what the worker has read of the
#: config topic, as Kafka's ``ClusterConfigState`` gives it to the assignor: the offset is
#: the position after the last record read (-1: nothing read; it is advertised to the
#: group and compared across members), every configured connector is listed (stopped
#: ones too), and its task count is the number of task configs of its latest consistent
#: commit (0 when it has none yet).
ConfigSnapshot = tuple[int, dict[str, int]]

#: How long :meth:`WorkerGroupMember.stop` waits for the LeaveGroup answer.
LEAVE_GROUP_TIMEOUT_MS = 5000


class RebalanceListener(Protocol):
    """The herder's side of the membership (Kafka's ``WorkerRebalanceListener``)."""

    def on_assigned(self, assignment: Assignment, generation: int) -> None:
        """A round completed: ``assignment`` is everything this worker now runs."""
        ...

    def on_revoked(self, leader: str | None, connectors: list[str], tasks: list[TaskId]) -> None:
        """Stop these connectors and tasks before returning."""
        ...


@dataclass
class _LeaderState:
    """What the leader knows after assigning: who runs what, and their URLs."""

    connector_urls: dict[str, str] = field(default_factory=dict)
    task_urls: dict[TaskId, str] = field(default_factory=dict)


class _Handler:
    """kafka-python's hooks, routed to the member's own methods (called on the client's IO
    thread)."""

    def __init__(
        self,
        protocols: Callable[[], list[tuple[str, bytes]]],
        assign: Callable[[str, str, list[tuple[str, bytes]], int], dict[str, bytes]],
        join_complete: Callable[[int, str, str, bytes], None],
        state_changed: Callable[[], None],
    ) -> None:
        self._protocols = protocols
        self._assign = assign
        self._join_complete = join_complete
        self._state_changed = state_changed

    def group_protocols(self) -> list[tuple[str, bytes]]:
        return self._protocols()

    def perform_assignment(
        self, leader_id: str, protocol: str, members: list[tuple[str, bytes]], generation: int
    ) -> dict[str, bytes]:
        return self._assign(leader_id, protocol, members, generation)

    def on_join_complete(self, generation: int, member_id: str, protocol: str, assignment: bytes) -> None:
        self._join_complete(generation, member_id, protocol, assignment)

    def on_state_change(self) -> None:
        self._state_changed()


class WorkerGroupMember:
    """This worker's membership of the Connect cluster ``group_id`` (see the module doc).

    Building it connects to the Kafka cluster (up to 30 s; :class:`~sluice.api.errors.ConnectError`
    when unreachable); the group is joined by the first :meth:`poll`.

    Args:
        bootstrap_servers: the Kafka cluster (``bootstrap.servers``).
        group_id: the Connect cluster's group (``group.id``).
        worker_url: this worker's advertised REST URL, told to the other members.
        listener: told of revocations and assignments, on the thread calling :meth:`poll`.
        config_snapshot: ``() -> (config topic offset, {connector: task count})``.
        session_timeout_ms, heartbeat_interval_ms, rebalance_timeout_ms: ``session.timeout.ms``,
            ``heartbeat.interval.ms``, ``rebalance.timeout.ms``. :meth:`poll` must be called
            at least every ``rebalance_timeout_ms`` or the member leaves the group.
        scheduled_rebalance_max_delay_ms: ``scheduled.rebalance.max.delay.ms``: how long the
            leader holds back the work of a departed worker.
        protocol: ``connect.protocol`` (``sessioned``, ``compatible`` or ``eager``).
        client_config: Kafka client settings for the group connection (Kafka's dotted keys,
            e.g. ``security.protocol``, ``client.id``, ``request.timeout.ms``; keys the
            Python client does not know are ignored).
        clock: monotonic seconds (tests pass a fake one).
        group_client_factory: builds the group client (tests pass a fake); defaults to
            :class:`~sluice.runtime.distributed.kafka_group.KafkaGroupClient`, which
            connects to the cluster when the member is built.
    """

    def __init__(
        self,
        *,
        bootstrap_servers: str,
        group_id: str,
        worker_url: str,
        listener: RebalanceListener,
        config_snapshot: Callable[[], ConfigSnapshot],
        session_timeout_ms: int = 10000,
        heartbeat_interval_ms: int = 3000,
        rebalance_timeout_ms: int = 60000,
        scheduled_rebalance_max_delay_ms: int = 300000,
        protocol: str = "sessioned",
        client_config: Mapping[str, Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
        group_client_factory: Callable[..., GroupClient] | None = None,
    ) -> None:
        if not group_id:
            raise ConnectError("group.id is required for a distributed worker")
        self._compatibility = ConnectProtocolCompatibility.from_config(protocol)
        self._group_id = group_id
        self._url = worker_url
        self._listener = listener
        self._config_snapshot = config_snapshot
        self._heartbeat_interval = heartbeat_interval_ms / 1000
        self._max_delay_ms = max(0, int(scheduled_rebalance_max_delay_ms))
        self._clock = clock

        self._lock = threading.RLock()
        self._signal = threading.Event()  # something changed: re-evaluate in poll()
        self._wakeup_pending = False
        self._closed = False

        # Member state (written on the poll thread, read anywhere under _lock).
        self._assignment: Assignment | None = None
        self._generation = -1
        self._round_member_id: str | None = None  # our member id in that generation
        self._protocol = self._compatibility  # of the last completed round
        self._leader_state: _LeaderState | None = None
        # Round state.
        self._round_snapshot: ConfigSnapshot | None = None  # taken when a round starts
        self._completed: tuple[int, str, str, bytes] | None = None  # from the IO thread
        self._last_completed_generation = -1
        self._assignor_state = AssignorState()
        self._rejoin_at: float | None = None
        self._coordinator_lost_at: float | None = None

        settings = dict(client_config or {})
        if not settings.get("client.id") and not settings.get("client_id"):
            # Kafka Connect's default: "connect-" + the worker id (advertised host:port).
            settings["client.id"] = f"connect-{urlsplit(worker_url).netloc or worker_url}"
        factory = group_client_factory or KafkaGroupClient
        self._client: GroupClient = factory(
            handler=_Handler(self._group_protocols, self._perform_assignment, self._on_join_complete, self._signal.set),
            protocol_type=PROTOCOL_TYPE,
            bootstrap_servers=bootstrap_servers,
            group_id=group_id,
            session_timeout_ms=session_timeout_ms,
            heartbeat_interval_ms=heartbeat_interval_ms,
            rebalance_timeout_ms=rebalance_timeout_ms,
            client_config=settings,
        )

    # ------------------------------------------------------------------------------
    # What the herder reads
    # ------------------------------------------------------------------------------

    @property
    def member_id(self) -> str | None:
        """This member's id in the group (None before the first join)."""
        return self._client.member_id

    @property
    def generation(self) -> int:
        """The generation of the last completed round (-1: none yet)."""
        with self._lock:
            return self._generation

    @property
    def assignment(self) -> Assignment | None:
        """Everything this worker runs after the last completed round (None: nothing yet)."""
        with self._lock:
            return self._assignment

    @property
    def leader_id(self) -> str | None:
        """The leader's member id, from the last assignment."""
        with self._lock:
            return self._assignment.leader if self._assignment is not None else None

    @property
    def leader_url(self) -> str | None:
        """The leader's REST URL, from the last assignment (None: no leader known)."""
        with self._lock:
            return self._assignment.leader_url if self._assignment is not None else None

    @property
    def is_leader(self) -> bool:
        """Whether this worker is the leader of the last completed round."""
        with self._lock:
            assignment = self._assignment
            member_id = self._round_member_id
        if assignment is None or assignment.leader is None or assignment.leader != member_id:
            return False
        return self._client.member_id == member_id  # not after leaving the group

    @property
    def protocol_version(self) -> int:
        """The sub-protocol version of the last completed round (0 eager, 1, 2 sessioned)."""
        with self._lock:
            return self._protocol.version

    @property
    def rebalance_pending(self) -> bool:
        """Whether a rejoin is needed or under way (REST writes answer 409 meanwhile)."""
        return self._client.need_rejoin() or self._client.join_in_progress()

    def owner_url(self, work: str | TaskId) -> str | None:
        """On the leader, the URL of the worker that runs a connector (by name) or a task
        (``(connector, task)``) after the last round; None elsewhere, during a rebalance,
        or when nobody runs it."""
        if not self.is_leader or self.rebalance_pending:
            return None
        with self._lock:
            state = self._leader_state
        if state is None:
            return None
        if isinstance(work, str):
            return state.connector_urls.get(work)
        return state.task_urls.get((work[0], int(work[1])))

    # ------------------------------------------------------------------------------
    # What the herder calls
    # ------------------------------------------------------------------------------

    def poll(self, timeout_ms: int) -> None:
        """Do the membership's work for up to ``timeout_ms``, on the calling thread.

        Joins or rejoins when needed, keeps the membership alive, and calls the listener
        when a round completes. Returns early after calling the listener, and when
        :meth:`wakeup` is called. Must be called at least every ``rebalance.timeout.ms``.

        Raises :class:`~sluice.api.errors.ConnectError` when joining fails for good (for
        example: the group is used by something that is not a Connect cluster) and
        :class:`~sluice.api.errors.RetriableError` for transient failures.
        """
        deadline = self._clock() + max(0, timeout_ms) / 1000
        while True:
            if self._closed:
                return
            self._poll_heartbeat()
            now = self._clock()
            if self._rejoin_at is not None and now >= self._rejoin_at:
                log.debug("Scheduled rebalance delay is over; rejoining group %s", self._group_id)
                self._rejoin_at = None
                self._client.request_rejoin()

            if self._client.need_rejoin():
                if self._round_snapshot is None:
                    self._begin_round()
                self._client.start_join()  # no-op while a join is under way
            try:
                finished = self._client.take_join_result()  # raises a failed join's error
            except Exception:
                with self._lock:
                    self._round_snapshot = None  # the next attempt starts a fresh round
                raise
            completed = self._take_completed()
            if completed is not None:
                self._complete_round(*completed)
                return
            if finished is not None and self._client.need_rejoin():
                continue  # the join ended without an assignment (left again); go again

            self._check_coordinator(now)

            with self._lock:
                if self._wakeup_pending:
                    self._wakeup_pending = False
                    return
            now = self._clock()
            remaining = deadline - now
            if remaining <= 0:
                return
            wait = min(remaining, self._heartbeat_interval)
            if self._rejoin_at is not None:
                wait = min(wait, max(0.0, self._rejoin_at - now))
            self._signal.wait(wait)
            self._signal.clear()

    def request_rejoin(self) -> None:
        """Ask for a new round (the next :meth:`poll` rejoins). Any thread."""
        self._client.request_rejoin()
        self._signal.set()

    def wakeup(self) -> None:
        """Make a :meth:`poll` in progress (or the next one) return promptly. Any thread."""
        with self._lock:
            self._wakeup_pending = True
        self._signal.set()

    def leave_group(self, reason: str | None = None) -> None:
        """Leave the group now, without stopping: the next :meth:`poll` joins again as a
        new member (Kafka's ``maybeLeaveGroup``, which the herder uses when it cannot read
        the config topic and backs off). The listener is not called: the worker keeps
        what it runs and reports it when it rejoins. Call from the polling thread."""
        log.info("Worker %s leaving group %s: %s", self._url, self._group_id, reason or "requested")
        self._client.leave_group(reason, LEAVE_GROUP_TIMEOUT_MS)
        self._signal.set()

    def stop(self, *, leave_group: bool = True) -> None:
        """Leave the group and close the connection to Kafka.

        Stop the worker's connectors and tasks first: the listener is not called. With
        ``leave_group=False`` the connection is dropped without a LeaveGroup, as a crashed
        worker's would be (the group notices after ``session.timeout.ms``; for tests).
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._signal.set()
        self._client.close(leave_group=leave_group, timeout_ms=LEAVE_GROUP_TIMEOUT_MS)
        log.info("Worker %s %s group %s", self._url, "left" if leave_group else "dropped out of", self._group_id)

    # ------------------------------------------------------------------------------
    # The round, on the poll thread
    # ------------------------------------------------------------------------------

    def _poll_heartbeat(self) -> None:
        try:
            self._client.poll_heartbeat()
        except Exception:
            log.warning("Group %s: the heartbeat loop failed; rejoining", self._group_id, exc_info=True)
            self._client.request_rejoin()

    def _begin_round(self) -> None:
        """A new round starts: snapshot the config; with the eager protocol, revoke all."""
        snapshot = self._config_snapshot()
        with self._lock:
            self._round_snapshot = (int(snapshot[0]), dict(snapshot[1]))
            self._leader_state = None
            assignment = self._assignment
            eager = self._protocol is ConnectProtocolCompatibility.EAGER
        log.info("Rebalance started (group %s, worker %s)", self._group_id, self._url)
        if eager and assignment is not None and not assignment.failed:
            if assignment.connectors or assignment.tasks:
                self._listener.on_revoked(assignment.leader, list(assignment.connectors), list(assignment.tasks))
            with self._lock:
                self._assignment = replace(assignment, connectors=[], tasks=[])

    def _take_completed(self) -> tuple[int, str, str, bytes] | None:
        with self._lock:
            completed, self._completed = self._completed, None
        return completed

    def _complete_round(self, generation: int, member_id: str, protocol: str, data: bytes) -> None:
        _, received = decode_assignment_with_version(data)
        mode = ConnectProtocolCompatibility.from_protocol(protocol)
        revoked_connectors = list(received.revoked_connectors)
        revoked_tasks = list(received.revoked_tasks)
        with self._lock:
            previous = self._assignment
            self._protocol = mode
        if mode is ConnectProtocolCompatibility.EAGER:
            full = replace(received, connectors=sorted(set(received.connectors)), tasks=sorted(set(received.tasks)))
            if previous is not None:
                # Only when the group just switched from an incremental protocol to eager
                # (an eager-only worker joined): the round began without the eager
                # revoke-all, so stop whatever is not ours any more.
                stale_connectors = [c for c in previous.connectors if c not in set(full.connectors)]
                stale_tasks = [t for t in previous.tasks if t not in set(full.tasks)]
                if stale_connectors or stale_tasks:
                    self._listener.on_revoked(received.leader, stale_connectors, stale_tasks)
        else:
            if revoked_connectors or revoked_tasks:
                log.info(
                    "Group %s: revoking connectors %s and tasks %s", self._group_id, revoked_connectors, revoked_tasks
                )
                self._listener.on_revoked(received.leader, revoked_connectors, revoked_tasks)
            kept_connectors: list[str] = []
            kept_tasks: list[TaskId] = []
            if previous is not None:
                gone_c, gone_t = set(revoked_connectors), set(revoked_tasks)
                kept_connectors = [c for c in previous.connectors if c not in gone_c]
                kept_tasks = [t for t in previous.tasks if t not in gone_t]
            full = replace(
                received,
                connectors=sorted(set(received.connectors) | set(kept_connectors)),
                tasks=sorted(set(received.tasks) | set(kept_tasks)),
            )
        with self._lock:
            self._assignment = full
            self._generation = generation
            self._round_member_id = member_id
            round_snapshot, self._round_snapshot = self._round_snapshot, None
        self._rejoin_at = self._clock() + full.delay_ms / 1000 if full.delay_ms > 0 else None
        if full.failed:
            self._client.request_rejoin()
        elif mode is not ConnectProtocolCompatibility.EAGER and (revoked_connectors or revoked_tasks):
            self._client.request_rejoin()  # second phase: the revoked work moves now
        log.info(
            "Joined group %s at generation %d (protocol %s) as %s; leader %s (%s); "
            "assignment: connectors %s, tasks %s; delay %d ms%s",
            self._group_id,
            generation,
            mode.protocol,
            member_id,
            full.leader,
            full.leader_url,
            full.connectors,
            full.tasks,
            full.delay_ms,
            "; FAILED: config mismatch" if full.failed else "",
        )
        self._listener.on_assigned(full, generation)
        if not full.failed:
            self._rejoin_if_config_moved_on(full, round_snapshot)

    def _rejoin_if_config_moved_on(self, assignment: Assignment, round_snapshot: ConfigSnapshot | None) -> None:
        """A connector or task set that changed while the round was under way: another round.

        The herder asks for a rejoin as soon as it reads such a change, but a request made
        while a join is in flight is absorbed by that join when it completes, and the
        round's assignment was computed from the older config: the new connector would stay
        unassigned until some later, unrelated rebalance. A change of target state alone
        (pause, resume) does not move work, so it does not start a round."""
        offset, configured = self._config_snapshot()
        if offset <= assignment.config_offset:
            return
        if round_snapshot is not None and dict(configured) == round_snapshot[1]:
            return
        log.info(
            "Group %s: the config topic moved on to offset %d during the round (assignment made at %d); "
            "rejoining so that the change is assigned",
            self._group_id,
            offset,
            assignment.config_offset,
        )
        self._client.request_rejoin()

    @property
    def coordinator_unreachable(self) -> bool:
        """True while the group coordinator has been unreachable for a heartbeat interval:
        the group may soon give this worker's work to others (a revocation now is a fence)."""
        lost = self._coordinator_lost_at
        return lost is not None and self._clock() - lost >= self._heartbeat_interval

    def _check_coordinator(self, now: float) -> None:
        """Revoke everything when the coordinator has been unknown for a heartbeat interval."""
        if self._client.coordinator_known():
            self._coordinator_lost_at = None
            return
        if self._coordinator_lost_at is None:
            self._coordinator_lost_at = now
            return
        with self._lock:
            assignment = self._assignment
        if now - self._coordinator_lost_at < self._heartbeat_interval or assignment is None or assignment.failed:
            return
        log.warning(
            "Group coordinator of %s unreachable for %.0f ms: revoking %s to avoid running work "
            "while not a member of the group",
            self._group_id,
            (now - self._coordinator_lost_at) * 1000,
            assignment,
        )
        self._listener.on_revoked(assignment.leader, list(assignment.connectors), list(assignment.tasks))
        with self._lock:
            self._assignment = None
        self._client.request_rejoin()

    # ------------------------------------------------------------------------------
    # kafka-python's hooks (IO thread)
    # ------------------------------------------------------------------------------

    def _group_protocols(self) -> list[tuple[str, bytes]]:
        with self._lock:
            snapshot = self._round_snapshot
            assignment = self._assignment
        if snapshot is None:  # a rejoin kafka-python started on its own
            snapshot = self._config_snapshot()
            with self._lock:
                self._round_snapshot = snapshot
        advertised = None
        if assignment is not None:
            advertised = replace(assignment, revoked_connectors=[], revoked_tasks=[], delay_ms=0)
        state = WorkerState(url=self._url, config_offset=snapshot[0], assignment=advertised)
        return group_protocols(state, self._compatibility)

    def _on_join_complete(self, generation: int, member_id: str, protocol: str, assignment: bytes) -> None:
        with self._lock:
            self._completed = (generation, member_id, protocol, assignment)
            self._last_completed_generation = generation
        self._signal.set()

    def _perform_assignment(
        self, leader_id: str, protocol: str, members: list[tuple[str, bytes]], generation: int
    ) -> dict[str, bytes]:
        mode = ConnectProtocolCompatibility.from_protocol(protocol)
        states = {member: decode_metadata(metadata) for member, metadata in members}
        leader_url = states[leader_id].url
        max_offset = max(state.config_offset for state in states.values())
        with self._lock:
            snapshot = self._round_snapshot
        if snapshot is None or snapshot[0] < max_offset:
            snapshot = self._config_snapshot()
            with self._lock:
                self._round_snapshot = (int(snapshot[0]), dict(snapshot[1]))
        offset, configured = snapshot
        if offset < max_offset:
            log.info(
                "Leader of group %s has read the config topic to offset %d, another member to %d: "
                "returning a failed assignment so that everybody catches up and rejoins",
                self._group_id,
                offset,
                max_offset,
            )
            failed = Assignment(
                error=CONFIG_MISMATCH, leader=leader_id, leader_url=leader_url, config_offset=max_offset
            )
            return {member: encode_assignment(failed, mode.version) for member in states}
        offset = max(offset, max_offset)

        if mode is ConnectProtocolCompatibility.EAGER:
            result: ClusterAssignment = eager_assign(states, configured)
        else:
            current = {
                member: ConnectorsAndTasks.of(state.assignment.connectors, state.assignment.tasks)
                if state.assignment is not None
                else ConnectorsAndTasks()
                for member, state in states.items()
            }
            with self._lock:
                assignor_state = self._assignor_state
                last_completed = self._last_completed_generation
            result, assignor_state = incremental_cooperative_assign(
                members=current,
                configured=configured,
                now_ms=int(self._clock() * 1000),
                max_delay_ms=self._max_delay_ms,
                state=assignor_state,
                generation=generation,
                last_completed_generation=last_completed,
            )
            with self._lock:
                self._assignor_state = assignor_state

        leader_state = _LeaderState(
            connector_urls={c: states[m].url for c, m in result.connector_owners.items()},
            task_urls={t: states[m].url for t, m in result.task_owners.items()},
        )
        with self._lock:
            self._leader_state = leader_state
        encoded: dict[str, bytes] = {}
        for member in states:
            part = result.assignments[member]
            assignment = Assignment(
                error=NO_ERROR,
                leader=leader_id,
                leader_url=leader_url,
                config_offset=offset,
                connectors=list(part.connectors),
                tasks=list(part.tasks),
                revoked_connectors=list(part.revoked_connectors),
                revoked_tasks=list(part.revoked_tasks),
                delay_ms=result.delay_ms,
            )
            encoded[member] = encode_assignment(assignment, mode.version)
        log.debug(
            "Group %s generation %d assignments: %s (delay %d ms)",
            self._group_id,
            generation,
            result.assignments,
            result.delay_ms,
        )
        return encoded
