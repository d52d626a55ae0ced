"""DistributedHerder: one worker of a cluster coordinated through Kafka.

State lives in the config, offset and status topics (``storage/kafka_*.py``), in Kafka
Connect's formats; membership, leadership and the assignment of connectors and tasks come
from Kafka's group coordination with Connect's protocol (:mod:`sluice.runtime.distributed`).

Threads: one *tick thread* owns the group membership and everything this worker runs. It
polls the member (which calls :meth:`on_revoked`/:meth:`on_assigned` on it) and applies
config-topic changes that the config store's reader thread queues for it. REST calls run
on the REST server's threads: reads answer from the local replicas of the topics; writes
either write records (leader-only ones raise :class:`RequestForwardError` elsewhere, and
the REST layer forwards them to the leader) or act on work this worker owns.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

from sluice.api.errors import AlreadyExistsError, ConnectError, NotFoundError
from sluice.kafka.offset_format import encode_json
from sluice.runtime.distributed.member import ConfigSnapshot, WorkerGroupMember
from sluice.runtime.distributed.protocol import CONNECT_PROTOCOL_V2, Assignment, TaskId
from sluice.runtime.herder.base import (
    BadRequestError,
    ConnectorInfo,
    ConnectorStateInfo,
    ConnectorTaskId,
    ConnectRestError,
    RequestForwardError,
    SignedRequest,
    State,
    TargetState,
)
from sluice.runtime.herder.request_signing import (
    KEY_GENERATION_ALGORITHM_CONFIG,
    KEY_SIZE_CONFIG,
    KEY_TTL_MS_CONFIG,
    SIGNATURE_ALGORITHM_CONFIG,
    VERIFICATION_ALGORITHMS_CONFIG,
    InternalRequestSignature,
    generate_session_key,
    signature_headers,
    verify_internal_request,
)
from sluice.runtime.herder.validation import invalid_config_message
from sluice.runtime.herder.worker_herder import WorkerHerder
from sluice.runtime.loggers import Loggers
from sluice.runtime.metrics.exposition import rebalance_metrics
from sluice.runtime.metrics.recorders import RebalanceStats
from sluice.runtime.offsets import SinkGroupOffsets
from sluice.runtime.startup import Stage
from sluice.runtime.tasks.base import format_trace
from sluice.runtime.worker import Worker
from sluice.storage.base import DESTROYED, StatusBackingStore, TaskStatus, connector_config_map
from sluice.storage.kafka_config import ConfigUpdateListener, KafkaConfigBackingStore
from sluice.storage.kafka_formats import RestartRequest, SessionKey

log = logging.getLogger(__name__)

__all__ = ["DistributedHerder", "InternalRequestSender", "MemberFactory"]

# (listener, config snapshot) -> the group member; the composition root binds the settings.
MemberFactory = Callable[["DistributedHerder", Callable[[], ConfigSnapshot]], WorkerGroupMember]
# (method, url, body or None, headers): one request to another worker's internal endpoint;
# raises ConnectRestError with the other worker's status and message when it refuses, and
# ConnectionError when it cannot be reached. The composition root binds the worker's TLS
# settings (Kafka's RestClient).
InternalRequestSender = Callable[[str, str, "bytes | None", dict[str, str]], None]

NO_LEADER = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
NOT_LEADER = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
TICK_MS = 250
#: How long a REST call waits for the tick thread to act on work this worker owns (the
#: forwarding worker waits 90 s: this answers first).
OWNER_REQUEST_TIMEOUT_S = 60.0
#: How long a REST write waits for a rebalance under way to complete before it answers
#: 409 (Kafka's herder holds requests while it rebalances, within the request timeout).
REBALANCE_WAIT_S = 60.0
#: How often a waiting write looks again whether the rebalance is over: the member's
#: "rejoin needed" is the group client's state, which signals nobody when it changes.
_SETTLED_POLL_S = 0.02
#: The first and the longest wait before writing a connector's task configs again after a
#: failed write (Kafka's 250 ms doubling up to 60 s).
_TASK_CONFIG_RETRY_S = 0.25
_TASK_CONFIG_RETRY_MAX_S = 60.0
#: How long the leader waits before trying again to write a session key that failed.
_SESSION_KEY_RETRY_S = 1.0
#: How long a worker keeps asking for a zombie fencing that fails for a moment (no leader
#: known, the leader gone, a rebalance), first again after 0.25 s, doubling up to 5 s.
_FENCING_PATIENCE_S = 90.0
_FENCING_RETRY_S = 0.25
_FENCING_RETRY_MAX_S = 5.0


def _of_a_moment(error: BaseException) -> bool:
    """Whether a request to the leader failed for a moment: no leader known, a rebalance or
    a conflicting change (409), a leader still starting (503), or none reachable."""
    if isinstance(error, ConnectRestError):
        return error.status in (409, 503)
    return isinstance(error, OSError)


class _ConfigEvents(ConfigUpdateListener):
    """Hands config-topic changes from the store's reader thread to the tick thread:
    ``post`` queues a call there; the other callables are the herder's handlers."""

    def __init__(
        self,
        post: Callable[[Callable[[], None]], None],
        *,
        config_changed: Callable[[str], None],
        removed: Callable[[str], None],
        target_state_changed: Callable[[str], None],
        task_configs_changed: Callable[[list[str]], None],
        restart_requested: Callable[[RestartRequest], None],
        logger_level_changed: Callable[[str, str], None],
        task_count_recorded: Callable[[str], None],
        session_key_updated: Callable[[SessionKey], None],
    ) -> None:
        self._post = post
        self._config_changed = config_changed
        self._removed = removed
        self._target_state_changed = target_state_changed
        self._task_configs_changed = task_configs_changed
        self._restart_requested = restart_requested
        self._logger_level_changed = logger_level_changed
        self._task_count_recorded = task_count_recorded
        self._session_key_updated = session_key_updated

    def on_connector_config_update(self, connector: str) -> None:
        self._post(lambda: self._config_changed(connector))

    def on_connector_config_remove(self, connector: str) -> None:
        self._post(lambda: self._removed(connector))

    def on_connector_target_state_change(self, connector: str) -> None:
        self._post(lambda: self._target_state_changed(connector))

    def on_task_commit(self, connector: str, task_count: int) -> None:
        self._post(lambda: self._task_configs_changed([connector]))

    def on_task_count_record(self, connector: str, task_count: int) -> None:
        self._post(lambda: self._task_count_recorded(connector))

    def on_restart_request(self, request: RestartRequest) -> None:
        self._post(lambda: self._restart_requested(request))

    def on_logger_level_update(self, namespace: str, level: str) -> None:
        self._post(lambda: self._logger_level_changed(namespace, level))

    def on_session_key_update(self, key: SessionKey) -> None:
        self._session_key_updated(key)  # at once: a signed request may be waiting for it


class DistributedHerder(WorkerHerder):
    validates_as_distributed = True

    def __init__(
        self,
        worker: Worker,
        config_store: KafkaConfigBackingStore,
        status_store: StatusBackingStore,
        kafka_cluster_id: Callable[[], str | None],
        member_factory: MemberFactory,
        sink_offsets: SinkGroupOffsets | None = None,
        loggers: Loggers | None = None,
        internal_requests: InternalRequestSender | None = None,
    ) -> None:
        super().__init__(worker, config_store, status_store, kafka_cluster_id, sink_offsets, loggers)
        self.config_store: KafkaConfigBackingStore = config_store
        self._member_factory = member_factory
        self.member: WorkerGroupMember | None = None
        self._owned_connectors: set[str] = set()
        self._owned_tasks: set[TaskId] = set()
        # owned exactly-once source tasks waiting for their connector's task-count record
        self._awaiting_fencing: set[TaskId] = set()
        self._task_config_backoff: dict[str, float] = {}  # connectors whose last write failed
        # Requests to the leader (task configs, zombie fencing) leave the tick thread, which
        # must keep polling the group meanwhile (Kafka's forwardRequestExecutor).
        self._internal_requests = internal_requests
        self._to_leader = ThreadPoolExecutor(max_workers=4, thread_name_prefix="sluice-to-leader")
        self._fencing_requested: set[str] = set()  # connectors whose fencing is under way
        self._fencing_lock = threading.Lock()  # one fencing at a time, on the leader
        # Held by the leader's task-config writes and by a fencing between its check that no
        # newer task configs came and its task-count record, so none comes in between.
        self._task_config_lock = threading.Lock()
        self._session_key: SessionKey | None = None
        self._session_key_retry_at = 0.0
        self._events: queue.Queue[Callable[[], None]] = queue.Queue()
        # Queued events not yet carried out: a config change read a moment ago may be about
        # to start a rebalance (REST writes wait for it, see _settled).
        self._events_pending = 0
        self._events_lock = threading.Lock()
        self._stopping = threading.Event()
        self._assigned = threading.Event()  # a round completed since the last revocation
        self.rebalance_wait_s = REBALANCE_WAIT_S
        self._joining: Stage | None = None  # since the member exists: in (or joining) the group
        # Told when the worker cannot run (its engine did not start); the composition root
        # stops the worker.
        self.fatal: Callable[[BaseException], None] = lambda error: None
        self.rebalances = RebalanceStats()
        self.rebalances.begin(time.monotonic())  # joining the group is the first rebalance
        self._thread: threading.Thread | None = None
        worker.reconfiguration_listener = lambda name: self._queue(lambda: self._generate_task_configs(name))

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        self.config_store.set_update_listener(
            _ConfigEvents(
                self._queue,
                config_changed=self._connector_config_changed,
                removed=self._connector_removed,
                target_state_changed=self._target_state_changed,
                task_configs_changed=self._task_configs_changed,
                restart_requested=self._restart_requested,
                logger_level_changed=self._set_logger_level,
                task_count_recorded=self._start_fenced_tasks,
                session_key_updated=self._set_session_key,
            )
        )
        self._thread = threading.Thread(target=self._run, name="sluice-herder-tick", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.auto_restarter.close()
        self._stopping.set()
        if self.member is not None:
            self.member.wakeup()
        if self._thread is not None:
            self._thread.join(120)
        self._to_leader.shutdown(wait=False, cancel_futures=True)

    def _more_metrics(self) -> list[Any]:
        return rebalance_metrics(self.rebalances, time.monotonic())

    def health(self) -> tuple[str, str]:
        if not self._assigned.is_set():
            return ("starting", self._starting_message())
        return super().health()

    def ready(self) -> None:
        """Nothing yet: requests are served from the first assignment on (on_assigned)."""

    def starting_stage(self) -> str | None:
        if self._started.is_set():
            return None
        joining = self._joining
        return joining.summary() if joining is not None else super().starting_stage()

    def _config_snapshot(self) -> ConfigSnapshot:
        snapshot = self.config_store.snapshot()
        return snapshot.offset, {c: snapshot.task_count(c) for c in snapshot.connectors()}

    def _queue(self, event: Callable[[], None]) -> None:
        with self._events_lock:
            self._events_pending += 1
        self._events.put(event)
        if self.member is not None:
            self.member.wakeup()

    def _run(self) -> None:
        # Join the group only once this worker can run a task (Kafka Connect's worker can
        # the moment it joins): a task assigned before would wait for Spark.
        try:
            if not self.worker.startup.wait_unless(self._stopping):
                return
        except Exception as exc:  # noqa: BLE001 - told to the composition root, which stops the worker
            log.error("Not joining the group: %s", exc)
            self.fatal(exc)
            return
        self._joining = Stage("joining its group", time.time())
        self.member = self._member_factory(self, self._config_snapshot)
        try:
            while not self._stopping.is_set():
                try:
                    self.member.poll(TICK_MS)
                    self._drain_events()
                    self._distribute_session_key()
                except Exception:
                    log.error("Error in the herder's tick thread; carrying on", exc_info=True)
                    self._stopping.wait(1.0)
        finally:
            self._stop_all_work()
            try:
                self.member.stop()
            except Exception:
                log.warning("Could not leave the group cleanly", exc_info=True)

    def _drain_events(self) -> None:
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                return
            try:
                event()
            except Exception:
                log.error("Could not apply a configuration change", exc_info=True)
            finally:
                with self._events_lock:
                    self._events_pending -= 1

    def _stop_all_work(self) -> None:
        self.worker.stop_and_await_tasks(sorted(self._owned_tasks))
        for name in sorted(self._owned_connectors):
            self.worker.stop_connector_instance(name)
            self._mark_unassigned(name)
        self._owned_tasks.clear()
        self._owned_connectors.clear()

    def _mark_unassigned(self, name: str) -> None:
        from sluice.storage.base import ConnectorStatus

        current = self.status_store.get_connector(name)
        if current is not None and current.worker_id == self.worker.worker_id and current.state != State.FAILED.value:
            self.status_store.put_connector(
                ConnectorStatus(name, State.UNASSIGNED.value, self.worker.worker_id, None, self.worker.generation)
            )

    # -- rebalance listener (tick thread) -------------------------------------------------

    def on_revoked(self, leader: str | None, connectors: list[str], tasks: list[TaskId]) -> None:
        self._assigned.clear()
        self.rebalances.begin(time.monotonic())
        # A cooperative revocation hands the task over only after it stopped here, so its
        # last batch still commits. Cut off from the group, the worker fences first: the
        # group may already be giving the task to another worker.
        fence = self.member is not None and self.member.coordinator_unreachable
        revoked = [task for task in tasks if task in self._owned_tasks]
        if fence:
            self._owned_tasks.difference_update(revoked)
        self.worker.stop_and_await_tasks(revoked)
        self._owned_tasks.difference_update(revoked)
        for name in connectors:
            if name in self._owned_connectors:
                self.worker.stop_connector_instance(name)
                self._owned_connectors.discard(name)

    def on_assigned(self, assignment: Assignment, generation: int) -> None:
        if assignment.failed:
            # The leader had read further than us: catch up; the member rejoins by itself.
            self.config_store.refresh()
            return
        self.worker.generation = generation
        self.config_store.refresh()
        self._hold_write_privileges()
        snapshot = self.config_store.snapshot()
        dropped = sorted(self._owned_tasks - set(assignment.tasks))  # eager protocol fallbacks
        self._owned_tasks.difference_update(dropped)
        self.worker.stop_and_await_tasks(dropped)
        for name in sorted(self._owned_connectors - set(assignment.connectors)):
            self.worker.stop_connector_instance(name)
            self._owned_connectors.discard(name)
        for name in sorted(set(assignment.connectors) - self._owned_connectors):
            self._start_connector(name)
        for task in sorted(set(assignment.tasks) - self._owned_tasks):
            self._start_task(task, snapshot)
        self._assigned.set()
        self._started.set()  # requests about connectors are served from the first assignment on
        self.rebalances.complete(time.monotonic(), generation, assignment.leader_url)
        log.info(
            "Assignment of generation %d: connectors %s, tasks %s (leader %s)",
            generation,
            sorted(self._owned_connectors),
            sorted(self._owned_tasks),
            assignment.leader_url,
        )

    def _hold_write_privileges(self) -> None:
        """As Kafka's leader does after each rebalance, claim the config topic's
        transactional id (fencing any earlier leader still writing); a worker that no
        longer leads gives it up. A no-op unless exactly-once source support is
        ``preparing`` or ``enabled``."""
        member = self.member
        if member is not None and member.is_leader:
            try:
                self.config_store.claim_write_privileges()
            except ConnectError:
                # The next write claims again, and its request answers with the error.
                log.error("Could not claim the leader's transactional id of the config topic", exc_info=True)
        elif self.config_store.holds_write_privileges:
            self.config_store.release_write_privileges()

    # -- running work (tick thread) -----------------------------------------------------

    def _start_connector(self, name: str) -> None:
        snapshot = self.config_store.snapshot()
        config = snapshot.connector_config(name)
        if config is None:
            return  # deleted meanwhile; the next rebalance drops it
        self._owned_connectors.add(name)
        target = TargetState(snapshot.target_state(name))
        if self.worker.start_connector(name, dict(config), target) and target is not TargetState.STOPPED:
            self._generate_task_configs(name)

    def _generate_task_configs(self, name: str) -> None:
        """The connector's owner asks it for task configs and, when they changed, has them
        written: by itself when it leads the group, else by the leader, to which it sends
        them (Kafka's internal ``POST /connectors/{c}/tasks``)."""
        if name not in self._owned_connectors or not self.worker.runs_connector(name):
            return
        configs = self._changed_task_configs(name)
        if configs is None:
            return
        member = self.member
        if member is not None and member.coordinator_unreachable:
            # Cut off from the group, this worker may no longer own the connector: its
            # next owner writes the task configs instead.
            log.warning("Not writing task configs of connector %s: the group coordinator is unreachable", name)
            return
        if member is not None and member.is_leader:
            try:
                with self._task_config_lock:
                    self.config_store.put_task_configs(name, configs)
            except ConnectError:
                self._retry_task_configs(name)
                return
            self._task_config_backoff.pop(name, None)
            return
        self._to_leader.submit(self._send_task_configs, name, configs)

    def _send_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        """Off the tick thread: the task configs to the leader, which writes them."""
        try:
            leader = self.member.leader_url if self.member is not None else None
            if not leader:
                raise ConnectError(
                    "Request to leader to reconfigure connector tasks failed because the URL of the leader's "
                    "REST interface is empty!"
                )
            self._to_worker("POST", leader, f"connectors/{quote(name, safe='')}/tasks", encode_json(configs))
        except Exception as exc:  # noqa: BLE001 - any failure is retried, as Kafka's reconfiguration is
            log.error("Request to leader to reconfigure connector tasks of %s failed: %s", name, exc)
            self._queue(lambda: self._retry_task_configs(name, logged=True))
            return
        self._queue(lambda: self._forget_backoff(name))

    def _forget_backoff(self, name: str) -> None:
        self._task_config_backoff.pop(name, None)

    def _retry_task_configs(self, name: str, logged: bool = False) -> None:
        """Kafka's retry of a failed task-config write: again after a backoff that doubles
        from 250 ms up to a minute, on the tick thread (the connector may be gone by then,
        or owned elsewhere: the retry then does nothing)."""
        delay = self._task_config_backoff.get(name, _TASK_CONFIG_RETRY_S)
        self._task_config_backoff[name] = min(delay * 2, _TASK_CONFIG_RETRY_MAX_S)
        log.error(
            "Could not write the task configs of connector %s; retrying in %.2f s", name, delay, exc_info=not logged
        )
        timer = threading.Timer(delay, lambda: self._queue(lambda: self._generate_task_configs(name)))
        timer.daemon = True
        timer.start()

    # -- zombie fencing (KIP-618) ----------------------------------------------------------

    def _request_fencing(self, name: str) -> None:
        """A task of this worker waits for the producers of the connector's earlier tasks
        to be fenced: ask the leader (this worker, or the leader through its internal
        ``PUT /connectors/{c}/fence``), once per connector at a time, off the tick thread."""
        if name in self._fencing_requested:
            return
        self._fencing_requested.add(name)
        self._to_leader.submit(self._fence_through_leader, name)

    def _fence_through_leader(self, name: str) -> None:
        """Off the tick thread: have the leader fence, trying again while the failure is of
        a moment (no leader known, a rebalance, the leader unreachable or new task configs
        during the fencing) for up to :data:`_FENCING_PATIENCE_S`."""
        deadline = time.monotonic() + _FENCING_PATIENCE_S
        delay = _FENCING_RETRY_S
        error: BaseException | None = None
        while True:
            try:
                try:
                    self._fence_as_leader(name)
                except RequestForwardError as elsewhere:
                    if elsewhere.forward_url is None:
                        raise
                    self._to_worker("PUT", elsewhere.forward_url, f"connectors/{quote(name, safe='')}/fence", None)
                error = None
            except Exception as exc:  # noqa: BLE001 - fails the tasks waiting for it, with the error
                error = exc
            if error is None or not _of_a_moment(error) or time.monotonic() + delay > deadline:
                break
            log.info("Zombie fencing of connector %s failed for now (%s); trying again in %.1f s", name, error, delay)
            if self._stopping.wait(delay):
                return
            delay = min(delay * 2, _FENCING_RETRY_MAX_S)
        self._queue(lambda: self._fencing_done(name, error))

    def _fence_as_leader(self, name: str) -> None:
        """Kafka's leader-side zombie fencing: when the connector's latest task configs have
        no task-count record after them, fence the transactional producers of the tasks the
        last record counted (none when there is no record, or when one task follows one
        task: the new task's producer fences its predecessor itself), then write the record,
        which lets the new generation's tasks start on every worker. Raises
        :class:`RequestForwardError` on any worker but the leader."""
        self._require_leader()
        with self._fencing_lock:
            self.config_store.refresh()
            snapshot = self.config_store.snapshot()
            config = snapshot.connector_config(name)
            if config is None:
                raise NotFoundError(f"Connector {name} not found")
            if self._type(name, config) != "source":
                raise BadRequestError(f"Connector {name} is not a source connector")
            if name not in snapshot.pending_fencing:
                log.debug("No zombie fencing for connector %s: its earlier tasks are fenced already", name)
                return
            earlier = snapshot.task_count_records.get(name)
            task_count = snapshot.task_count(name)
            generation = snapshot.task_config_generations.get(name)
            if earlier is not None and not (earlier == 1 and task_count == 1):
                self.worker.fence_source_producers(name, dict(config), earlier)
            with self._task_config_lock:
                self.config_store.refresh()
                if self.config_store.snapshot().task_config_generations.get(name) != generation:
                    raise ConnectRestError(
                        409, "Fencing failed because new task configurations were generated for the connector"
                    )
                self.config_store.put_task_count_record(name, task_count)
            log.info(
                "Fenced the producers of %s earlier tasks of connector %s; %d tasks may start",
                earlier or 0,
                name,
                task_count,
            )

    def _fencing_done(self, name: str, error: BaseException | None) -> None:
        """On the tick thread: start the connector's tasks that waited for the fencing, or
        fail them with its error (restarting them asks for a fencing again)."""
        self._fencing_requested.discard(name)
        waiting = sorted(t for t in self._awaiting_fencing if t[0] == name and t in self._owned_tasks)
        if error is None:
            self.config_store.refresh()
            self._start_fenced_tasks(name)
            return
        log.error("Zombie fencing of connector %s failed: %s", name, error)
        trace = (
            f"Failed to perform round of zombie fencing for connector {name}, so its tasks cannot start; "
            f"restart them once that is fixed: {error}\n{format_trace(error)}"
        )
        for task in waiting:
            self._awaiting_fencing.discard(task)
            self.status_store.put_task(
                TaskStatus(name, task[1], State.FAILED.value, self.worker.worker_id, trace, self.worker.generation)
            )

    # -- signed requests between workers (KIP-507) ------------------------------------------

    def _set_session_key(self, key: SessionKey) -> None:
        log.info("Session key updated")
        self._session_key = key

    def _current_session_key(self) -> SessionKey | None:
        if self._session_key is None:
            self._session_key = self.config_store.snapshot().session_key
        return self._session_key

    def _signs_requests(self) -> bool:
        """Whether internal requests are signed and checked: the group speaks ``sessioned``."""
        member = self.member
        return member is not None and member.protocol_version >= CONNECT_PROTOCOL_V2

    def _distribute_session_key(self) -> None:
        """The leader's duty under the ``sessioned`` protocol: write a new session key when
        there is none or the current one is older than ``inter.worker.key.ttl.ms`` (0: it
        never expires)."""
        member = self.member
        if member is None or not member.is_leader or not self._assigned.is_set() or not self._signs_requests():
            return
        key = self._current_session_key()
        ttl_ms = int(self.worker.config.get(KEY_TTL_MS_CONFIG))
        now_ms = int(time.time() * 1000)
        if key is not None and (ttl_ms == 0 or key.creation_timestamp + ttl_ms > now_ms):
            return
        if time.monotonic() < self._session_key_retry_at:
            return
        algorithm = str(self.worker.config.get(KEY_GENERATION_ALGORITHM_CONFIG))
        new_key = SessionKey(
            generate_session_key(algorithm, self.worker.config.get(KEY_SIZE_CONFIG)), algorithm, now_ms
        )
        try:
            self.config_store.put_session_key(new_key)
        except ConnectError:
            self._session_key_retry_at = time.monotonic() + _SESSION_KEY_RETRY_S
            log.warning("Could not write a new session key to the config topic; trying again", exc_info=True)
            return
        log.info("Distributed a new session key")  # read back, so the listener holds it already

    def _check_signature(self, request: SignedRequest) -> None:
        """Kafka's check of an internal request (only under the ``sessioned`` protocol)."""
        if not self._signs_requests():
            return
        key = self._current_session_key()
        verify_internal_request(
            InternalRequestSignature.from_headers(request.headers, request.body),
            None if key is None else key.key,
            list(self.worker.config.get(VERIFICATION_ALGORITHMS_CONFIG)),
        )

    def _to_worker(self, method: str, worker_url: str, path: str, body: bytes | None) -> None:
        """One internal request to another worker, signed with the session key when the
        group speaks ``sessioned`` and a key is known (as Kafka's RestClient signs)."""
        if self._internal_requests is None:
            raise ConnectError(
                "This worker is not able to communicate with the leader of the cluster, which is required for "
                "dynamically-reconfiguring connectors and for exactly-once source tasks"
            )
        headers = {"Content-Type": "application/json"} if body is not None else {}
        key = self._current_session_key()
        if key is not None and self._signs_requests():
            algorithm = str(self.worker.config.get(SIGNATURE_ALGORITHM_CONFIG))
            headers.update(signature_headers(key.key, algorithm, body or b""))
        self._internal_requests(method, worker_url.rstrip("/") + "/" + path, body, headers)

    def put_task_configs(self, name: str, configs: list[dict[str, str]], request: SignedRequest) -> None:
        self._check_signature(request)
        self._require_leader()
        with self._lock:
            if self._fresh_connector_config(name) is None:
                raise NotFoundError(f"Connector {name} not found")
            if configs and TargetState(self.config_store.snapshot().target_state(name)) is TargetState.STOPPED:
                raise BadRequestError(f"Cannot submit non-empty set of task configs for stopped connector {name}")
            with self._task_config_lock:
                self.config_store.put_task_configs(name, configs)

    def fence_zombie_source_tasks(self, name: str, request: SignedRequest) -> None:
        self._check_signature(request)
        self._fence_as_leader(name)

    def _start_fenced_tasks(self, name: str) -> None:
        """The connector's task-count record was read: start its tasks that waited for it."""
        snapshot = self.config_store.snapshot()
        for task in sorted(t for t in self._awaiting_fencing if t[0] == name):
            self._awaiting_fencing.discard(task)
            if task in self._owned_tasks:
                self._owned_tasks.discard(task)
                self._start_task(task, snapshot)

    def _start_task(self, task: TaskId, snapshot: Any) -> None:
        name, number = task
        config = snapshot.connector_config(name)
        task_config = snapshot.task_config(name, number)
        if config is None or task_config is None:
            return
        self._owned_tasks.add(task)
        self._awaiting_fencing.discard(task)
        if self.worker.delivers_exactly_once(dict(config)) and name in snapshot.pending_fencing:
            # Kafka's order: the earlier generation's producers are fenced first.
            self._awaiting_fencing.add(task)
            log.info("Task %s-%d starts once the producers of the connector's earlier tasks are fenced", name, number)
            self._request_fencing(name)
            return
        self.worker.host_tasks_of(name, dict(config))
        generation = self.worker.generation
        self.worker.start_task(
            name,
            number,
            dict(config),
            dict(task_config),
            TargetState(snapshot.target_state(name)),
            snapshot.task_count(name),
            may_commit=lambda: self._may_commit(task, generation),
        )

    def _may_commit(self, task: TaskId, started_in: int) -> bool:
        """Zombie fencing: whether the task started here in group generation ``started_in``
        may still commit offsets. Not once this worker gave it up, nor once its replacement
        started: the replacement's RUNNING status, read from the status topic, names another
        worker and a newer generation. A worker cut off from the group coordinator fences
        its tasks at the revocation (``on_revoked``), before the group moves them."""
        if task not in self._owned_tasks:
            return False
        status = self.status_store.get_task(*task)
        superseded = (
            status is not None
            and status.worker_id != self.worker.worker_id
            and status.generation > started_in
            and status.state != DESTROYED
        )
        if status is not None and superseded:
            log.warning(
                "Task %s-%s was started by %s in generation %d, newer than this one's (%d): fenced",
                task[0],
                task[1],
                status.worker_id,
                status.generation,
                started_in,
            )
        return not superseded

    def _restart_owned_task(self, task: TaskId) -> None:
        self.worker.stop_task(*task)
        self._owned_tasks.discard(task)
        self._start_task(task, self.config_store.snapshot())

    def _restart_owned_connector(self, name: str) -> None:
        self.worker.stop_connector_instance(name)
        self._owned_connectors.discard(name)
        self._start_connector(name)

    # -- config-topic changes (tick thread) ---------------------------------------------------

    def _request_rebalance(self) -> None:
        """The set of connectors or tasks changed: a new assignment round. Every worker asks
        for it as soon as it reads the change, as Kafka's workers do: left to the leader,
        the others join only at their next heartbeat (up to ``heartbeat.interval.ms``
        later), which held every new connector's tasks back by seconds."""
        if self.member is not None:
            self.member.request_rejoin()

    def _connector_config_changed(self, name: str) -> None:
        if name in self._owned_connectors:
            self._restart_owned_connector(name)
        self._request_rebalance()

    def _connector_removed(self, name: str) -> None:
        removed = sorted(t for t in self._owned_tasks if t[0] == name)
        self.worker.stop_and_await_tasks(removed)
        for task in removed:
            self._owned_tasks.discard(task)
            self.status_store.delete_task(*task)  # after the stopped task's last status
        if name in self._owned_connectors:
            self.worker.stop_connector_instance(name)
            self._owned_connectors.discard(name)
        self._request_rebalance()

    def _target_state_changed(self, name: str) -> None:
        snapshot = self.config_store.snapshot()
        if snapshot.connector_config(name) is None:
            return
        target = TargetState(snapshot.target_state(name))
        self.worker.set_target_state(name, target)
        if target is TargetState.STARTED and name in self._owned_connectors:
            self._generate_task_configs(name)  # resumed from STOPPED: tasks come back

    def _task_configs_changed(self, connectors: list[str]) -> None:
        snapshot = self.config_store.snapshot()
        changed = sorted(t for t in self._owned_tasks if t[0] in connectors)
        self.worker.stop_and_await_tasks(changed)
        for task in changed:
            self._owned_tasks.discard(task)
            if snapshot.task_config(*task) is None:
                self.status_store.delete_task(*task)  # gone (e.g. the connector stopped)
            else:
                self._start_task(task, snapshot)
        self._forget_removed_tasks(connectors, snapshot)
        self._request_rebalance()

    def _forget_removed_tasks(self, connectors: list[str], snapshot: Any) -> None:
        """On the leader: drop the statuses of tasks that no longer have a config (a stopped
        or shrunk connector). Their owner deletes them after stopping them, but a task the
        group had already revoked, or one abandoned as it stopped, has no owner left to."""
        if self.member is None or not self.member.is_leader:
            return
        for name in connectors:
            count = snapshot.task_count(name)
            for status in self.status_store.get_all_tasks(name):
                if status.task >= count:
                    self.status_store.delete_task(name, status.task)

    def _set_logger_level(self, namespace: str, level: str) -> None:
        self.loggers.set_level(namespace, level)

    def _restart_requested(self, request: RestartRequest) -> None:
        name = request.connector
        status = self.status_store.get_connector(name)
        if name in self._owned_connectors and (
            not request.only_failed or (status is not None and status.state == State.FAILED.value)
        ):
            self._restart_owned_connector(name)
        if request.include_tasks:
            for task in sorted(t for t in self._owned_tasks if t[0] == name):
                task_status = self.status_store.get_task(*task)
                if not request.only_failed or (task_status is not None and task_status.state == State.FAILED.value):
                    self._restart_owned_task(task)

    # -- REST writes ----------------------------------------------------------------------

    def _settled(self) -> bool:
        """Whether the last round completed, a leader is known, no new round is due, and
        the tick thread has carried out every change it was told of (one of them may ask
        for a new round: Kafka's herder thread reads config changes before requests)."""
        member = self.member
        with self._events_lock:
            idle = self._events_pending == 0
        return (
            idle
            and member is not None
            and self._assigned.is_set()
            and member.leader_url is not None
            and not member.rebalance_pending
        )

    def _await_settled(self) -> bool:
        """Hold a REST write while a rebalance is under way, as Kafka's herder holds its
        request queue until the rebalance is resolved: a write sent right after another one
        started a rebalance runs (or is forwarded) once the round completed, instead of
        answering 409 at once. False when it did not settle within :attr:`rebalance_wait_s`
        (the caller then answers 409), or when the worker is stopping. Never call it on the
        tick thread, which is the one that completes the round."""
        deadline = time.monotonic() + self.rebalance_wait_s
        while not self._settled():
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self._stopping.wait(min(remaining, _SETTLED_POLL_S)):
                return False
        return True

    def _require_for_write(self, name: str) -> dict[str, str]:
        """The connector's config, or 404 when even the config topic's end has none."""
        config = self._fresh_connector_config(name)
        return config if config is not None else self._require(name)

    def _fresh_connector_config(self, name: str) -> dict[str, str] | None:
        """The connector's config, reading the config topic to its end first if this worker
        has not seen it (a request may follow a write it has not read yet)."""
        config: dict[str, str] | None = self._fresh_snapshot(
            lambda s: s.connector_config(name) is not None
        ).connector_config(name)
        return config

    def _require_leader(self) -> None:
        if not self._await_settled():
            raise RequestForwardError(None, NO_LEADER)
        member = self.member
        assert member is not None  # settled
        if not member.is_leader:
            raise RequestForwardError(member.leader_url, NOT_LEADER)

    def put_connector_config(
        self, name: str, config: Mapping[str, str | None], allow_replace: bool, initial_state: TargetState | None = None
    ) -> tuple[bool, ConnectorInfo]:
        infos = self.validate_connector_config(config)
        if infos.error_count:
            raise BadRequestError(invalid_config_message(infos))
        self._require_leader()
        with self._lock:
            before = self.config_store.snapshot()
            exists = before.contains(name)
            if exists and not allow_replace:
                raise AlreadyExistsError(f"Connector {name} already exists")
            target = None if exists or initial_state is None else initial_state.value
            self.config_store.put_connector_config(name, config, target)
            # The tasks from before the write, as Kafka answers: the new config's tasks are
            # generated by the connector's owner later (none yet for a new connector), and
            # on a busy cluster may already be stored by the time the write was read back.
            tasks = [ConnectorTaskId(name, i) for i in range(before.task_count(name))]
            return (not exists, ConnectorInfo(name, connector_config_map(config), tasks, self._type(name, config)))

    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        merged = dict(self._require(name))
        for key, value in patch.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        return self.put_connector_config(name, merged, allow_replace=True)[1]

    def delete_connector(self, name: str) -> None:
        self._require_leader()
        with self._lock:
            self._require_for_write(name)
            self.config_store.remove_connector_config(name)
            self.status_store.delete_connector(name)
            self.status_store.delete_topics(name)

    def pause_connector(self, name: str) -> None:
        # Any worker may write a target state (Kafka does not forward pause/resume).
        self._require_for_write(name)
        self.config_store.put_target_state(name, TargetState.PAUSED.value)

    def resume_connector(self, name: str) -> None:
        self._require_for_write(name)
        self.config_store.put_target_state(name, TargetState.STARTED.value)

    def stop_connector(self, name: str) -> None:
        if self._fresh_connector_config(name) is None:
            raise NotFoundError(f"Unknown connector {name}")
        self._require_leader()
        with self._lock:
            # Kafka's order: no tasks first, then the STOPPED state.
            with self._task_config_lock:
                self.config_store.put_task_configs(name, [])
            self.config_store.put_target_state(name, TargetState.STOPPED.value)

    def _fresh_snapshot(self, has: Callable[[Any], bool]) -> Any:
        """The config snapshot, read again to the topic's end if it lacks what ``has``
        looks for (a request may follow a write this worker has not read yet)."""
        snapshot = self.config_store.snapshot()
        if not has(snapshot):
            self.config_store.refresh()
            snapshot = self.config_store.snapshot()
        return snapshot

    def restart_connector(self, name: str, include_tasks: bool, only_failed: bool) -> ConnectorStateInfo | None:
        # As Kafka's herder, which takes a restart from its queue once a rebalance is over.
        self._await_settled()
        if self._fresh_connector_config(name) is None:
            raise NotFoundError(f"Unknown connector: {name}")
        if not include_tasks and not only_failed:
            # Kafka's restartConnector: the owner restarts it, whoever received the request.
            self._on_owner(name, lambda: self._restart_owned_connector(name))
            return None
        # Kafka's restartConnectorAndTasks: the leader writes a restart request; every
        # worker restarts what it owns when it reads it.
        self._require_leader()
        plan, _, _ = self._restart_plan(name, include_tasks, only_failed)
        self.config_store.put_restart_request(name, only_failed=only_failed, include_tasks=include_tasks)
        return plan

    def restart_task(self, name: str, task: int) -> None:
        self._await_settled()
        snapshot = self._fresh_snapshot(lambda s: s.task_config(name, task) is not None)
        if snapshot.connector_config(name) is None:
            raise NotFoundError(f"Unknown connector: {name}")
        if snapshot.task_config(name, task) is None:
            raise NotFoundError(f"Unknown task: {name}-{task}")
        self._on_owner((name, task), lambda: self._restart_owned_task((name, task)))

    def _owns(self, work: str | TaskId) -> bool:
        return work in self._owned_tasks if isinstance(work, tuple) else work in self._owned_connectors

    def _owner_target(self, work: str | TaskId) -> RequestForwardError:
        """Where a request for ``work`` that this worker does not run goes (Kafka's
        ``restartConnector``/``restartTask``): the leader knows every owner and sends it
        there (``NotAssignedException``); any other worker sends it to the leader
        (``NotLeaderException``), which sends it on to the owner. No URL (409) while
        this worker knows no leader, or, on the leader, while a rebalance is under way or
        nobody runs the work."""
        task = isinstance(work, tuple)
        not_assigned = f"Cannot restart {'task' if task else 'connector'} since it is not assigned to this member"
        member = self.member
        if member is None or not self._assigned.is_set() or member.leader_url is None:
            return RequestForwardError(None, NO_LEADER)
        if member.is_leader:
            return RequestForwardError(member.owner_url(work), not_assigned)
        return RequestForwardError(
            member.leader_url, not_assigned if task else "Only the leader can process restart requests."
        )

    def _on_owner(self, work: str | TaskId, action: Callable[[], None]) -> None:
        """Run ``action`` on the tick thread if this worker owns ``work``, else raise where
        the request goes (:meth:`_owner_target`; the REST layer forwards it there).

        Ownership is checked again on the tick thread, which is the one that gives work
        up: a rebalance may have revoked the work since the request came in, and the
        action must not start it again here."""
        if not self._owns(work):
            raise self._owner_target(work)
        done = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            try:
                if not self._owns(work):
                    raise self._owner_target(work)
                action()
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting request thread, which raises it
                errors.append(exc)
            finally:
                done.set()

        self._queue(run)
        if not done.wait(OWNER_REQUEST_TIMEOUT_S):
            # Kafka's answer when the herder does not complete a request in time.
            raise ConnectRestError(500, "Request timed out")
        if errors:
            raise errors[0]

    def alter_connector_offsets(self, name: str, offsets: list[dict[str, Any]]) -> str:
        self._require_leader()
        return super().alter_connector_offsets(name, offsets)

    def reset_connector_offsets(self, name: str) -> str:
        self._require_leader()
        return super().reset_connector_offsets(name)

    def set_cluster_logger_level(self, logger: str, level: str) -> None:
        from sluice.runtime.loggers import parse_level

        parse_level(level)  # refuse a bad level before writing it for the whole cluster
        self.config_store.put_logger_level(logger, level.upper())
