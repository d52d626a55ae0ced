"""The producers of a task host's source tasks: one librdkafka producer for all the tasks
whose producer settings are the same.

Kafka Connect gives each source task a producer of its own. A librdkafka producer is three
threads that each wake every second for as long as it lives (``rd_kafka_max_block_ms`` is a
constant of the library), so at hundreds of tasks per host the producers alone kept a
fifth of a core busy doing nothing. Here the tasks of a host whose settings are equal but
for the per-task default ``client.id`` write through one producer; a task that sets a
``client.id`` of its own (``producer.override.client.id``) shares only with tasks that set
the same one. What that changes for a task, beside the client id:

* the producer's queue (``queue.buffering.max.messages``) is shared: a task producing
  faster than Kafka takes its records makes its siblings wait for room too;
* a fatal producer error (a refused login, an idempotence failure) fails every task that
  writes through that producer; a task started afterwards gets a new producer;
* delivery reports are served by whichever task polls the producer, so a task's loop waits
  for its own records by their reports (:class:`~sluice.taskhost.source.SourceLoop`), never
  by ``flush()``, which waits for everybody's; one thread at a time serves them
  (:class:`InOrderReports`), so that each task hears its reports in the order Kafka
  acknowledged its records, as ``commitRecord`` does in Kafka;
* a stopped task's records that Kafka had not acknowledged when it gave up waiting stay in
  the producer, which its siblings keep using: they may still be written (their offsets are
  never committed, so a restart may write them again, within at-least-once) — a producer of
  its own would have dropped them on close.

A connector whose tasks should not share (quotas by client id, one noisy task) runs them in
task hosts of their own (``sluice.task.host=dedicated``).
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from sluice.kafka.clients import KafkaClients, close_producer
from sluice.kafka.errors import ends_task

log = logging.getLogger(__name__)

__all__ = ["HostProducers", "InOrderReports", "ProducerLease"]

#: Told every error the producer reports (librdkafka's ``error_cb``), on whichever thread
#: served it.
ErrorListener = Callable[[Any], None]

_Key = tuple[tuple[str, str], ...]


class InOrderReports:
    """A librdkafka producer that several threads poll, serving its delivery reports on one
    thread at a time.

    librdkafka hands out a partition's reports in order, a produce response's worth at a
    time; two threads polling at once could each take one and run their callbacks side by
    side, so a task's ``commit_record`` could hear a record before the one produced ahead
    of it. Here a thread that finds another serving reports does not serve any itself:
    ``poll(0)`` returns at once (the other thread is running this thread's callbacks too),
    a longer ``poll`` waits for its turn within its timeout. Everything else is the
    producer's own."""

    def __init__(self, producer: Any) -> None:
        self.producer = producer
        self.produce = producer.produce  # the hot path: no lock, no indirection
        self._serving = threading.RLock()  # re-entrant: a callback may poll again

    def poll(self, timeout: float | None = None) -> int:
        """Serve the delivery reports and errors ready now, or within ``timeout`` seconds;
        the number of callbacks run here (not counting those another thread runs)."""
        if timeout is None or timeout < 0:
            with self._serving:
                return int(self.producer.poll())
        deadline = time.monotonic() + timeout
        if not self._serving.acquire(blocking=timeout > 0, timeout=timeout if timeout > 0 else -1):
            return 0
        try:
            return int(self.producer.poll(max(0.0, deadline - time.monotonic())))
        finally:
            self._serving.release()

    def flush(self, timeout: float | None = None) -> int:
        """The producer's ``flush``, serving reports in turn like :meth:`poll`."""
        with self._serving:
            return int(self.producer.flush() if timeout is None else self.producer.flush(timeout))

    def close(self) -> None:
        with self._serving:
            self.producer.close()

    def __len__(self) -> int:
        return len(self.producer)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.producer, name)


class _Pooled:
    """One producer and the leases on it."""

    def __init__(self, key: _Key) -> None:
        self.key = key
        self.producer: Any = None
        self.listeners: dict[int, ErrorListener] = {}


class ProducerLease:
    """A task's use of a host producer: ``producer`` to write with, :meth:`release` once
    the task is done with it (the last release closes the producer)."""

    def __init__(self, producer: Any, let_go: Callable[[], None]) -> None:
        self.producer = producer
        self._let_go = let_go
        self._released = False

    def release(self) -> None:
        """Let the producer go. Its reports for this task's records may still come (to the
        task's delivery callbacks, on other tasks' threads) until the last task releases it."""
        if not self._released:
            self._released = True
            self._let_go()


class HostProducers:
    """The producers of one task host, by their settings."""

    def __init__(self, clients: KafkaClients) -> None:
        self._clients = clients
        self._lock = threading.Lock()
        self._pooled: dict[_Key, _Pooled] = {}
        self._leases = 0
        self._made = 0

    def lease(self, settings: dict[str, Any], default_client_id: str, on_error: ErrorListener) -> ProducerLease:
        """A producer with ``settings`` (librdkafka's, without ``error_cb``), shared with the
        host's other tasks whose settings are the same. ``default_client_id`` is the task's
        own default ``client.id``: when ``settings`` carry it, it does not set the tasks
        apart. ``on_error`` hears the producer's errors until the lease is released."""
        shared_settings = dict(settings)
        if shared_settings.get("client.id") == default_client_id:
            del shared_settings["client.id"]
        key: _Key = tuple(sorted((name, str(value)) for name, value in shared_settings.items()))
        with self._lock:
            pooled = self._pooled.get(key)
            if pooled is None:
                pooled = self._pooled[key] = _Pooled(key)
                self._made += 1
                made = dict(shared_settings)
                made.setdefault("client.id", f"connector-producer-sluice-host-{os.getpid()}-{self._made}")
                made["error_cb"] = lambda error, pooled=pooled: self._on_error(pooled, error)
                try:
                    pooled.producer = InOrderReports(self._clients.producer(made))
                except BaseException:
                    del self._pooled[key]
                    raise
            self._leases += 1
            pooled.listeners[self._leases] = on_error
            return ProducerLease(pooled.producer, functools.partial(self._release, pooled, self._leases))

    def _on_error(self, pooled: _Pooled, error: Any) -> None:
        fatal = ends_task(error)
        with self._lock:
            if fatal and self._pooled.get(pooled.key) is pooled:
                del self._pooled[pooled.key]  # the next task gets a new producer
            listeners = list(pooled.listeners.values())
        if fatal:
            log.warning("A task host's producer failed (%s): its tasks fail, tasks started later get a new one", error)
        for listener in listeners:
            listener(error)

    def _release(self, pooled: _Pooled, lease_id: int) -> None:
        with self._lock:
            del pooled.listeners[lease_id]
            if pooled.listeners:
                return
            if self._pooled.get(pooled.key) is pooled:
                del self._pooled[pooled.key]
        close_producer(pooled.producer)
