"""``org.apache.kafka.connect.tools.MockConnector``, ``MockSourceConnector`` and
``MockSinkConnector`` with their tasks: connectors that fail on demand.

``mock_mode=connector-failure``: the connector reports an error through its context
(``ConnectorContext.raise_error``) ``delay_ms`` after it started; the connector becomes
FAILED and its task keeps idling. ``mock_mode=task-failure``: the task raises from
``poll()`` (source) or ``put()`` (sink) once ``delay_ms`` have passed since it
started; the task becomes FAILED with the Python trace. Any other mode, or none: the
connector and its single task idle. ``delay_ms`` defaults to 15000, as in Kafka;
Sluice also accepts the spelling ``delay.ms``. See ``docs/testing-connectors.md``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from sluice.api.config import ConfigDef, ConfigType, Importance
from sluice.api.connector import Connector, ConnectorContext, Task
from sluice.api.errors import ConnectError
from sluice.api.records import SinkRecord, SourceRecord, TopicPartition
from sluice.api.sink import SinkConnector, SinkTask
from sluice.api.source import SourceConnector, SourceTask
from sluice.connectors.testing.report import plugin_version

__all__ = ["MockConnector", "MockSinkConnector", "MockSinkTask", "MockSourceConnector", "MockSourceTask"]

log = logging.getLogger(__name__)

MOCK_MODE_KEY = "mock_mode"
DELAY_MS_KEY = "delay_ms"
DELAY_MS_ALIAS = "delay.ms"
CONNECTOR_FAILURE = "connector-failure"
TASK_FAILURE = "task-failure"
DEFAULT_FAILURE_DELAY_MS = 15000

IDLE_POLL_WAIT_S = 1.0
"""Longest an idle mock source ``poll()`` waits before returning nothing."""

CONFIG_DEF = (
    ConfigDef()
    .define(
        MOCK_MODE_KEY,
        ConfigType.STRING,
        None,
        importance=Importance.HIGH,
        documentation=f"What to fail: '{CONNECTOR_FAILURE}' (the connector) or '{TASK_FAILURE}' (its task); "
        "anything else, or nothing, fails nothing",
    )
    .define(
        DELAY_MS_KEY,
        ConfigType.LONG,
        DEFAULT_FAILURE_DELAY_MS,
        importance=Importance.MEDIUM,
        documentation="Milliseconds after the connector (or the task) started at which it fails "
        f"(Sluice also reads '{DELAY_MS_ALIAS}' when this key is unset)",
    )
)


def failure_delay_ms(config: dict[str, str]) -> int:
    """``delay_ms`` (or ``delay.ms``) of a config, or Kafka's default of 15000."""
    raw = config.get(DELAY_MS_KEY)
    if raw is None:
        raw = config.get(DELAY_MS_ALIAS)
    if raw is None:
        return DEFAULT_FAILURE_DELAY_MS
    try:
        return int(str(raw).strip())
    except ValueError as e:
        raise ConnectError(f"Invalid value {raw!r} for {DELAY_MS_KEY}: not a number of milliseconds") from e


class MockConnector(Connector):
    """The behaviour the mock source and sink connectors delegate to (as in Kafka, it is
    not itself a source or sink connector). One task, with the connector's config.

    With ``connector-failure``, a timer thread calls ``context.raise_error`` ``delay_ms``
    after :meth:`start`; :meth:`stop` cancels it.
    """

    def __init__(self) -> None:
        self._config: dict[str, str] = {}
        self._timer: threading.Timer | None = None

    def version(self) -> str:
        return plugin_version()

    def start(self, props: dict[str, str]) -> None:
        self._config = dict(props)
        if self._config.get(MOCK_MODE_KEY) == CONNECTOR_FAILURE:
            delay_ms = failure_delay_ms(self._config)
            log.debug("Started MockConnector with failure delay of %d ms", delay_ms)
            self._timer = threading.Timer(max(0, delay_ms) / 1000.0, self._fail, args=(delay_ms,))
            self._timer.daemon = True
            self._timer.start()

    def _fail(self, delay_ms: int) -> None:
        log.debug("Triggering connector failure")
        self.context.raise_error(
            RuntimeError(
                f"MockConnector failed on purpose {delay_ms} ms after it started ({MOCK_MODE_KEY}={CONNECTOR_FAILURE})"
            )
        )

    def task_class(self) -> type[Task]:
        raise NotImplementedError("MockConnector has no task class: use MockSourceConnector or MockSinkConnector")

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._config)]

    def stop(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def config(self) -> ConfigDef:
        return CONFIG_DEF


class MockSourceConnector(SourceConnector):
    """A source connector that fails on demand (see :class:`MockConnector`)."""

    def __init__(self) -> None:
        self._delegate = MockConnector()

    def initialize(self, context: ConnectorContext) -> None:
        super().initialize(context)
        self._delegate.initialize(context)

    def version(self) -> str:
        return self._delegate.version()

    def start(self, props: dict[str, str]) -> None:
        self._delegate.start(props)

    def task_class(self) -> type[Task]:
        return MockSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return self._delegate.task_configs(max_tasks)

    def stop(self) -> None:
        self._delegate.stop()

    def config(self) -> ConfigDef:
        return self._delegate.config()

    def alter_offsets(self, connector_config: dict[str, str], offsets: Any) -> bool:
        return True


class MockSinkConnector(SinkConnector):
    """A sink connector that fails on demand (see :class:`MockConnector`)."""

    def __init__(self) -> None:
        self._delegate = MockConnector()

    def initialize(self, context: ConnectorContext) -> None:
        super().initialize(context)
        self._delegate.initialize(context)

    def version(self) -> str:
        return self._delegate.version()

    def start(self, props: dict[str, str]) -> None:
        self._delegate.start(props)

    def task_class(self) -> type[Task]:
        return MockSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return self._delegate.task_configs(max_tasks)

    def stop(self) -> None:
        self._delegate.stop()

    def config(self) -> ConfigDef:
        return self._delegate.config()

    def alter_offsets(self, connector_config: dict[str, str], offsets: Any) -> bool:
        return True


class _FailureClock:
    """When a task in ``task-failure`` mode must fail."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.armed = False
        self.delay_ms = DEFAULT_FAILURE_DELAY_MS
        self.deadline = 0.0

    def arm(self, config: dict[str, str]) -> None:
        self.armed = config.get(MOCK_MODE_KEY) == TASK_FAILURE
        if self.armed:
            self.delay_ms = failure_delay_ms(config)
            self.deadline = self.clock() + self.delay_ms / 1000.0

    def remaining_s(self) -> float | None:
        return max(0.0, self.deadline - self.clock()) if self.armed else None

    def check(self, what: str) -> None:
        if self.armed and self.clock() >= self.deadline:
            log.debug("Triggering %s failure", what)
            raise RuntimeError(
                f"{what} failed on purpose {self.delay_ms} ms after it started ({MOCK_MODE_KEY}={TASK_FAILURE})"
            )


class MockSourceTask(SourceTask):
    """Produces nothing; with ``task-failure``, :meth:`poll` raises once ``delay_ms`` have
    passed since :meth:`start`. Until then each poll waits (up to a second, woken by
    :meth:`stop`) and returns nothing."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, wait: Callable[[float], object] | None = None
    ) -> None:
        self._stopping = threading.Event()
        self._wait = wait if wait is not None else self._stopping.wait
        self._failure = _FailureClock(clock)

    def version(self) -> str:
        return plugin_version()

    def start(self, props: dict[str, str]) -> None:
        self._stopping.clear()
        self._failure.arm(props)

    def poll(self) -> list[SourceRecord] | None:
        self._failure.check("MockSourceTask")
        remaining = self._failure.remaining_s()
        self._wait(IDLE_POLL_WAIT_S if remaining is None else min(remaining, IDLE_POLL_WAIT_S))
        if not self._stopping.is_set():
            self._failure.check("MockSourceTask")
        return None

    def stop(self) -> None:
        self._stopping.set()


class MockSinkTask(SinkTask):
    """Consumes and discards; with ``task-failure``, :meth:`put` raises once ``delay_ms``
    have passed since :meth:`start`. It asks through ``context.timeout`` to be called at
    least every 250 ms, so it fails on time also when no record arrives."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._failure = _FailureClock(clock)

    def version(self) -> str:
        return plugin_version()

    def start(self, props: dict[str, str]) -> None:
        self._failure.arm(props)
        self._set_timeout()

    def put(self, records: list[SinkRecord]) -> None:
        self._failure.check("MockSinkTask")
        self._set_timeout()

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        pass

    def stop(self) -> None:
        pass

    def _set_timeout(self) -> None:
        # As Kafka's mock: ask to be called again soon (Kafka wakes the task for put()).
        if self._failure.armed:
            self.context.timeout(min(self._failure.delay_ms, 250))
