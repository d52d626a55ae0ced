"""The one place that knows kafka-python: a Kafka group member with a custom protocol.

librdkafka (confluent-kafka) only offers consumer groups with its built-in assignors, so
group membership under Kafka Connect's own ``connect`` protocol goes through
kafka-python's ``BaseCoordinator`` (JoinGroup/SyncGroup/Heartbeat/LeaveGroup against the
group coordinator, heartbeats on the client's IO thread). kafka-python 3.x has no public
API for a coordinator of one's own, so everything that touches its internals is in this
module, behind :class:`KafkaGroupClient`; a kafka-python upgrade changes this file only.
What it relies on (kafka-python 3.0.12):

* ``KafkaNetClient._manager`` (its ``_net.start()``, ``bootstrap()``, ``call_soon()`` and
  ``broker_version``), the bootstrap sequence ``KafkaConsumer`` itself uses;
* ``BaseCoordinator``'s hooks ``protocol_type``, ``group_protocols``,
  ``_perform_assignment`` and the coroutine ``_on_join_complete_async``, and its
  ``ensure_active_group_async``, ``need_rejoin``, ``request_rejoin``, ``reset_generation``,
  ``coordinator_dead``, ``coordinator_id``, ``poll_heartbeat``, ``group_metadata``,
  ``maybe_leave_group`` and ``close``.

Threads: kafka-python runs an IO thread per client. The :class:`GroupHandler` hooks
``group_protocols``, ``perform_assignment`` and ``on_join_complete`` are called **on that
thread** while a join started by :meth:`KafkaGroupClient.start_join` runs;
``on_state_change`` may be called on it at any time. Handlers must be quick and must not
call back into the client.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import warnings
from collections.abc import Mapping
from typing import Any, Protocol

with warnings.catch_warnings():
    # kafka-python 3.0 loads its protocol schemas with importlib.resources' deprecated
    # read_text/open_text at import time.
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka import errors as kafka_errors
    from kafka.coordinator.base import BaseCoordinator
    from kafka.net.compat import KafkaNetClient
    from kafka.net.manager import KafkaConnectionManager
    from kafka.net.selector import NetworkSelector

from sluice.api.errors import ConnectError, RetriableError

__all__ = [
    "GroupClient",
    "GroupHandler",
    "KafkaGroupClient",
    "client_settings",
]

log = logging.getLogger(__name__)

_CLIENT_IDS = itertools.count(1)

#: Client settings kafka-python's connection manager and coordinator understand.
_CLIENT_KEYS = (
    set(KafkaConnectionManager.DEFAULT_CONFIG)
    | set(NetworkSelector.DEFAULT_CONFIG)
    | {"retry_backoff_ms", "request_timeout_ms"}
) - {"bootstrap_servers", "api_version", "metrics", "selector"}


def client_settings(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """kafka-python client keyword arguments from Kafka-style settings.

    Dotted Kafka keys (``client.id``, ``request.timeout.ms``, ``security.protocol``,
    ``sasl.mechanism``, ``reconnect.backoff.max.ms``, ...) become kafka-python's
    underscore names; keys that are already underscore names pass through. Keys
    kafka-python does not know (Java-only settings such as ``sasl.jaas.config``, and group
    settings, which :class:`KafkaGroupClient` takes as arguments) are left out. Numeric
    strings (from a properties file) become numbers.
    """
    settings: dict[str, Any] = {}
    for key, value in (config or {}).items():
        name = key.replace(".", "_")
        if name not in _CLIENT_KEYS:
            log.debug("Group membership client: ignoring setting %s", key)
            continue
        default = KafkaConnectionManager.DEFAULT_CONFIG.get(name)
        if isinstance(value, str) and (isinstance(default, int) or name.endswith("_ms")):
            with contextlib.suppress(ValueError):
                value = int(value)
        settings[name] = value
    return settings


class GroupHandler(Protocol):
    """What a group protocol implements (called on the client's IO thread)."""

    def group_protocols(self) -> list[tuple[str, bytes]]:
        """``(protocol name, metadata)`` pairs offered in JoinGroup, most preferred first."""
        ...

    def perform_assignment(
        self, leader_id: str, protocol: str, members: list[tuple[str, bytes]], generation: int
    ) -> dict[str, bytes]:
        """The leader's assignment: every member id → its assignment bytes."""
        ...

    def on_join_complete(self, generation: int, member_id: str, protocol: str, assignment: bytes) -> None:
        """A join completed with this member's assignment bytes."""
        ...

    def on_state_change(self) -> None:
        """The client changed state on its own (a rejoin is needed, the coordinator moved)."""
        ...


class GroupClient(Protocol):
    """The group client the member drives (:class:`KafkaGroupClient`, or a fake in tests)."""

    def need_rejoin(self) -> bool: ...
    def request_rejoin(self) -> None: ...
    def start_join(self) -> None: ...
    def join_in_progress(self) -> bool: ...
    def take_join_result(self) -> bool | None: ...
    def coordinator_known(self) -> bool: ...
    def poll_heartbeat(self) -> None: ...
    def leave_group(self, reason: str | None, timeout_ms: int) -> None: ...
    @property
    def member_id(self) -> str | None: ...
    @property
    def generation_id(self) -> int: ...
    def close(self, *, leave_group: bool, timeout_ms: int) -> None: ...


class _ConnectCoordinator(BaseCoordinator):
    """A kafka-python coordinator that delegates its protocol to a :class:`GroupHandler`."""

    def __init__(self, client: KafkaNetClient, handler: GroupHandler, protocol_type: str, **configs: Any) -> None:
        self._handler = handler
        self._protocol_type = protocol_type
        super().__init__(client, **configs)

    def protocol_type(self) -> str:
        return self._protocol_type

    def group_protocols(self) -> list[tuple[str, bytes]]:
        return self._handler.group_protocols()

    def _perform_assignment(self, leader_id: str, protocol: str, members: Any) -> dict[str, bytes]:
        pairs = [(m.member_id, bytes(m.metadata)) for m in members]
        generation = self.group_metadata().generation_id
        return self._handler.perform_assignment(leader_id, protocol, pairs, generation)

    async def _on_join_complete_async(
        self, generation: int, member_id: str, protocol: str, member_assignment_bytes: bytes
    ) -> None:
        self._handler.on_join_complete(generation, member_id, protocol, bytes(member_assignment_bytes))

    # Hooks on state changes the IO thread makes, so the member's poll loop wakes up.
    def request_rejoin(self) -> None:
        super().request_rejoin()
        self._handler.on_state_change()

    def reset_generation(self, *args: Any, **kwargs: Any) -> None:
        super().reset_generation(*args, **kwargs)
        self._handler.on_state_change()

    def coordinator_dead(self, error: Any) -> None:
        super().coordinator_dead(error)
        self._handler.on_state_change()


class KafkaGroupClient:
    """A member of Kafka group ``group_id`` speaking ``handler``'s protocol.

    Construction connects to the cluster (bootstrap) and starts kafka-python's IO thread;
    :meth:`close` ends both.
    """

    def __init__(
        self,
        *,
        handler: GroupHandler,
        protocol_type: str,
        bootstrap_servers: str,
        group_id: str,
        session_timeout_ms: int,
        heartbeat_interval_ms: int,
        rebalance_timeout_ms: int,
        client_config: Mapping[str, Any] | None = None,
        bootstrap_timeout_ms: int = 30000,
    ) -> None:
        settings = client_settings(client_config)
        if not settings.get("client_id"):
            # Kafka Connect's default for the group member's client id.
            settings["client_id"] = f"connect-{next(_CLIENT_IDS)}"
        self._client = KafkaNetClient(bootstrap_servers=bootstrap_servers, **settings)
        manager = self._client._manager
        try:
            manager._net.start()
            manager.bootstrap(bootstrap_timeout_ms)
        except kafka_errors.KafkaError as exc:
            self._client.close()
            raise ConnectError(f"Cannot reach the Kafka cluster at {bootstrap_servers}: {exc}") from exc
        coordinator_settings = {k: settings[k] for k in ("retry_backoff_ms", "request_timeout_ms") if k in settings}
        self._coordinator = _ConnectCoordinator(
            self._client,
            handler,
            protocol_type,
            api_version=manager.broker_version,
            group_id=group_id,
            session_timeout_ms=session_timeout_ms,
            heartbeat_interval_ms=heartbeat_interval_ms,
            max_poll_interval_ms=rebalance_timeout_ms,
            **coordinator_settings,
        )
        self._handler = handler
        self._join: Any = None  # kafka.future.Future of the background join
        self._closed = False

    def start_join(self) -> None:
        """Start joining (or rejoining) the group in the background, unless a join is
        already under way. The handler's ``on_state_change`` is called when it ends;
        :meth:`take_join_result` then tells how.

        The join runs to its end on the IO thread: kafka-python's own timed join would
        throw away a JoinGroup/SyncGroup result that arrives while nobody waits for it
        and send another JoinGroup (a needless extra rebalance).
        """
        if self._join is not None or self._closed:
            return
        join = self._client._manager.call_soon(self._coordinator.ensure_active_group_async, None)
        self._join = join
        join.add_both(lambda _: self._handler.on_state_change())

    def join_in_progress(self) -> bool:
        return self._join is not None and not self._join.is_done

    def take_join_result(self) -> bool | None:
        """The outcome of a finished background join, once: True (joined), or raises its
        error; None while no join has finished since the last call."""
        join = self._join
        if join is None or not join.is_done:
            return None
        self._join = None
        if join.exception is not None:
            self._raise(join.exception)
        return bool(join.value)

    def coordinator_known(self) -> bool:
        """Whether the group coordinator is known (a plain read; no network)."""
        return self._coordinator.coordinator_id is not None

    def need_rejoin(self) -> bool:
        return bool(self._coordinator.need_rejoin())

    def request_rejoin(self) -> None:
        self._coordinator.request_rejoin()

    def poll_heartbeat(self) -> None:
        """Tell the heartbeat loop the member is alive (call at least every rebalance
        timeout). Raises the heartbeat loop's error if it died; the next join restarts it."""
        self._call(self._coordinator.poll_heartbeat)

    def leave_group(self, reason: str | None, timeout_ms: int) -> None:
        """Send LeaveGroup (best effort) and forget the generation; the next join is as a
        new member."""
        self._call(self._coordinator.maybe_leave_group, reason, timeout_ms)

    @property
    def member_id(self) -> str | None:
        member = self._coordinator.group_metadata().member_id
        return member or None

    @property
    def generation_id(self) -> int:
        return int(self._coordinator.group_metadata().generation_id)

    def close(self, *, leave_group: bool, timeout_ms: int) -> None:
        """Leave the group (if asked and joined), then close connections and the IO thread.

        ``leave_group=False`` just drops the connections, as a crashed process would:
        the coordinator notices after ``session.timeout.ms``.
        """
        if self._closed:
            return
        self._closed = True
        try:
            if leave_group:
                self._coordinator.close(timeout_ms=timeout_ms)
        except Exception:  # leaving is best effort, as in Kafka
            log.warning("Could not leave group %s cleanly", self._coordinator.group_id, exc_info=True)
        finally:
            self._client.close()

    def _call(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except kafka_errors.KafkaError as exc:
            self._raise(exc)
        except RuntimeError as exc:
            if self._closed:
                raise RetriableError("The group membership client is closed") from exc
            raise

    def _raise(self, exc: BaseException) -> None:
        if isinstance(exc, kafka_errors.KafkaError):
            retriable = isinstance(exc, kafka_errors.RetriableError) or bool(getattr(exc, "retriable", False))
            error = RetriableError if retriable else ConnectError
            raise error(f"Group membership failed: {type(exc).__name__}: {exc}") from exc
        if self._closed:
            raise RetriableError("The group membership client is closed") from exc
        raise exc
