"""Error handling inside a task's conversion and transform chain, as Kafka Connect's
``RetryWithToleranceOperator`` with its log and dead-letter-queue reporters.

Runs on executors, next to the task (imports only :mod:`sluice.api` and the standard
library). A failing step is retried while it raises :class:`RetriableError`, with a
backoff from 300 ms doubling up to ``errors.retry.delay.max.ms``, until
``errors.retry.timeout`` (``-1``: forever). When it still fails, the error is logged
(``errors.log.enable``), the record is handed to the dead-letter callback, and then
either the record is skipped (``errors.tolerance=all``) or the task fails with
``Tolerance exceeded in error handler`` — the record reaches the dead letter queue
before the task fails, as in Kafka Connect.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from sluice._java.names import type_name
from sluice.api.errors import ConnectError, RetriableError

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from sluice.taskhost.metering import TaskMeter

__all__ = [
    "DLQ_HEADER_PREFIX",
    "ErrorPolicy",
    "Stage",
    "ToleranceExceeded",
    "ToleranceOperator",
    "context_headers",
]

T = TypeVar("T")

RETRY_DELAY_MIN_MS = 300
DLQ_HEADER_PREFIX = "__connect.errors."


class Stage:
    """Kafka Connect's ``errors.Stage`` names (the ``__connect.errors.stage`` header)."""

    TASK_POLL = "TASK_POLL"
    TASK_PUT = "TASK_PUT"
    TRANSFORMATION = "TRANSFORMATION"
    KEY_CONVERTER = "KEY_CONVERTER"
    VALUE_CONVERTER = "VALUE_CONVERTER"
    HEADER_CONVERTER = "HEADER_CONVERTER"
    KAFKA_PRODUCE = "KAFKA_PRODUCE"
    KAFKA_CONSUME = "KAFKA_CONSUME"


@dataclass(frozen=True)
class ErrorPolicy:
    """A connector's ``errors.*`` settings. Picklable."""

    tolerate_all: bool = False
    retry_timeout_ms: int = 0
    retry_delay_max_ms: int = 60_000
    log_enable: bool = False
    log_include_messages: bool = False
    dead_letter_topic: str | None = None
    context_headers: bool = False

    @property
    def is_default(self) -> bool:
        """Nothing to do beyond failing the task at the first error."""
        return self == ErrorPolicy()


class ToleranceExceeded(ConnectError):
    """The task fails: an error beyond ``errors.tolerance``."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__("Tolerance exceeded in error handler")
        self.__cause__ = cause


@dataclass
class FailedStep:
    """What failed, where: handed to the dead-letter callback."""

    stage: str
    executing_class: str
    error: BaseException


def context_headers(
    failed: FailedStep, connector: str, task: int, topic: str | None, partition: Any, offset: Any
) -> list[tuple[str, bytes]]:
    """The ``__connect.errors.*`` headers Kafka's dead letter queue reporter adds."""
    p = DLQ_HEADER_PREFIX
    headers = [
        (p + "topic", (topic or "").encode()),
        (p + "partition", str(partition).encode()),
        (p + "offset", str(offset).encode()),
        (p + "connector.name", connector.encode()),
        (p + "task.id", str(task).encode()),
        (p + "stage", failed.stage.encode()),
        (p + "class.name", failed.executing_class.encode()),
        (p + "exception.class.name", type_name(type(failed.error)).encode()),
    ]
    message = str(failed.error)
    if message:
        headers.append((p + "exception.message", message.encode()))
    trace = "".join(traceback.format_exception(failed.error))
    headers.append((p + "exception.stacktrace", trace.encode()))
    return headers


class ToleranceOperator:
    """Runs one step of a record's processing under a connector's error policy."""

    def __init__(
        self,
        policy: ErrorPolicy,
        task_id: str,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.policy = policy
        self.task_id = task_id
        self._sleep = sleep
        self._clock = clock
        self.failures = 0
        self.meter: TaskMeter | None = None  # the task's totals (task-error-metrics), when counted

    def execute(
        self,
        stage: str,
        executing_class: str,
        step: Callable[[], T],
        on_failure: Callable[[FailedStep], None],
        describe: Callable[[], str] | None = None,
    ) -> tuple[Literal[True], T] | tuple[Literal[False], None]:
        """``(True, result)``, or ``(False, None)`` when the step failed and the error is
        tolerated (``on_failure`` was called). Raises :class:`ToleranceExceeded` otherwise,
        after ``on_failure``. (Test ``outcome[0]`` before reading ``outcome[1]``: that is
        how a type checker knows the result is there.)"""
        try:
            return True, self._with_retries(step)
        except Exception as exc:  # noqa: BLE001 - every step error is subject to the policy
            return self.fail(stage, executing_class, exc, on_failure, describe)

    @property
    def retries(self) -> bool:
        """Whether failed steps are retried (``errors.retry.timeout`` is not 0)."""
        return self.policy.retry_timeout_ms != 0

    def fail(
        self,
        stage: str,
        executing_class: str,
        error: Exception,
        on_failure: Callable[[FailedStep], None],
        describe: Callable[[], str] | None = None,
    ) -> tuple[Literal[False], None]:
        """What :meth:`execute` does once a step failed (for callers that ran the step
        themselves because nothing would be retried): log, report, tolerate or raise."""
        # A transformation chain names the transformation that failed on the error.
        failed = FailedStep(stage, getattr(error, "transformation_class", None) or executing_class, error)
        self.failures += 1
        meter = self.meter
        if meter is not None:
            meter.record_failures += 1
            meter.record_errors += 1
            meter.last_error_ms = int(time.time() * 1000)
            if self.policy.log_enable:
                meter.errors_logged += 1
            if self.policy.tolerate_all:
                meter.records_skipped += 1
        if self.policy.log_enable:
            where = (
                f", where the record is {describe()}"
                if describe is not None and self.policy.log_include_messages
                else ""
            )
            log.error(
                "Error in task %s at stage '%s' with class '%s'%s",
                self.task_id,
                stage,
                failed.executing_class,
                where,
                exc_info=failed.error,
            )
        on_failure(failed)
        if not self.policy.tolerate_all:
            raise ToleranceExceeded(failed.error)
        return False, None

    def _with_retries(self, step: Callable[[], T]) -> T:
        timeout_ms = self.policy.retry_timeout_ms
        if timeout_ms == 0:
            return step()
        deadline = None if timeout_ms < 0 else self._clock() + timeout_ms / 1000.0
        delay_ms = RETRY_DELAY_MIN_MS
        while True:
            try:
                return step()
            except RetriableError:
                if self.meter is not None:
                    self.meter.retries += 1
                    self.meter.record_failures += 1
                now = self._clock()
                if deadline is not None and now >= deadline:
                    raise
                wait = delay_ms / 1000.0 if deadline is None else min(delay_ms / 1000.0, deadline - now)
                self._sleep(max(0.0, wait))
                delay_ms = min(delay_ms * 2, self.policy.retry_delay_max_ms)
