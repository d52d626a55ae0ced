"""Automatic restarts of failed tasks and connectors (beyond Kafka Connect, as Strimzi's
``autoRestart`` does), opted into per connector:

* ``sluice.auto.restart.enable`` (false): restart the connector's FAILED tasks and the
  connector itself when it is FAILED;
* ``sluice.auto.restart.max.restarts`` (5): restarts in a row before it stays FAILED;
* ``sluice.auto.restart.backoff.initial.ms`` (2000) and ``sluice.auto.restart.backoff.max.ms``
  (300000): the wait before the first restart, doubled before each next one up to the most;
* ``sluice.auto.restart.reset.after.ms`` (600000): after this long RUNNING, a failure counts
  as the first again.

The worker that runs the failed task or connector restarts it through its herder (an
ordinary restart). The statuses say so, in Kafka's status format: while a restarted one
runs, its status carries a trace naming the restart count and the failure before it; one
that is not restarted again has that said at the end of its FAILED trace.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from sluice.runtime.herder.base import State

__all__ = ["AutoRestarter", "RestartPolicy"]

log = logging.getLogger(__name__)

ENABLE = "sluice.auto.restart.enable"
MAX_RESTARTS = "sluice.auto.restart.max.restarts"
BACKOFF_INITIAL_MS = "sluice.auto.restart.backoff.initial.ms"
BACKOFF_MAX_MS = "sluice.auto.restart.backoff.max.ms"
RESET_AFTER_MS = "sluice.auto.restart.reset.after.ms"

Key = tuple[str, int | None]  # (connector, task); None: the connector itself


@dataclass(frozen=True)
class RestartPolicy:
    enabled: bool = False
    max_restarts: int = 5
    backoff_initial_ms: int = 2000
    backoff_max_ms: int = 300_000
    reset_after_ms: int = 600_000

    @classmethod
    def of(cls, config: Mapping[str, str | None] | None) -> RestartPolicy:
        """The connector's policy; a value that does not parse leaves the default (logged)."""
        if not config or str(config.get(ENABLE) or "").strip().lower() != "true":
            return cls()
        values = {}
        for key, field in (
            (MAX_RESTARTS, "max_restarts"),
            (BACKOFF_INITIAL_MS, "backoff_initial_ms"),
            (BACKOFF_MAX_MS, "backoff_max_ms"),
            (RESET_AFTER_MS, "reset_after_ms"),
        ):
            raw = config.get(key)
            if raw is None or str(raw).strip() == "":
                continue
            try:
                number = int(str(raw).strip())
                if number < 0:
                    raise ValueError
            except ValueError:
                log.warning("Ignoring %s=%r: not a whole number of 0 or more", key, raw)
                continue
            values[field] = number
        return cls(enabled=True, **values)

    def delay_ms(self, restarts_so_far: int) -> int:
        return min(self.backoff_initial_ms * (2 ** min(restarts_so_far, 40)), self.backoff_max_ms)


@dataclass
class _Track:
    restarts: int = 0
    running_since: float | None = None
    last_trace: str | None = None
    timer: threading.Timer | None = None


class AutoRestarter:
    """Watches the statuses this worker writes and restarts what failed, per the policy."""

    def __init__(
        self,
        restart_task: Callable[[str, int], None],
        restart_connector: Callable[[str], None],
        config_of: Callable[[str], Mapping[str, str | None] | None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._restart_task = restart_task
        self._restart_connector = restart_connector
        self._config_of = config_of
        self._clock = clock
        self._tracks: dict[Key, _Track] = {}
        self._lock = threading.Lock()
        self._closed = False

    def on_status(self, connector: str, task: int | None, state: State, trace: str | None) -> str | None:
        """Called as this worker writes a status; returns the trace to write with it."""
        policy = RestartPolicy.of(self._config_of(connector))
        key = (connector, task)
        with self._lock:
            if not policy.enabled:
                self._drop(key)
                return trace
            track = self._tracks.setdefault(key, _Track())
            now = self._clock()
            if state is State.RUNNING:
                if track.running_since is None:
                    track.running_since = now
                return trace if trace is not None else self._note(track, policy)
            if state is not State.FAILED:
                if state in (State.PAUSED, State.RESTARTING) and trace is None:
                    return self._note(track, policy)
                return trace
            healthy_for = now - track.running_since if track.running_since is not None else 0.0
            track.running_since = None
            if healthy_for * 1000 >= policy.reset_after_ms:
                track.restarts = 0
            if track.restarts >= policy.max_restarts or self._closed:
                return (trace or "") + (
                    f"\n\nNot restarted again: {MAX_RESTARTS}={policy.max_restarts} restarts reached ({ENABLE}=true)."
                )
            delay_ms = policy.delay_ms(track.restarts)
            track.restarts += 1
            track.last_trace = trace
            if track.timer is not None:
                track.timer.cancel()
            track.timer = threading.Timer(delay_ms / 1000.0, self._restart, args=(key,))
            track.timer.daemon = True
            track.timer.start()
            what = f"task {connector}-{task}" if task is not None else f"connector {connector}"
            log.info(
                "Restarting %s in %d ms (automatic restart %d of %d)",
                what,
                delay_ms,
                track.restarts,
                policy.max_restarts,
            )
            return (trace or "") + (
                f"\n\nRestarting automatically in {delay_ms} ms (restart {track.restarts} of {policy.max_restarts})."
            )

    def _note(self, track: _Track, policy: RestartPolicy) -> str | None:
        if not track.restarts:
            return None
        return (
            f"Restarted automatically {track.restarts} time(s) of at most {policy.max_restarts} "
            f"({ENABLE}=true); the failure before the last restart:\n{track.last_trace or '(no trace)'}"
        )

    def _restart(self, key: Key) -> None:
        connector, task = key
        with self._lock:
            track = self._tracks.get(key)
            if self._closed or track is None:
                return
            track.timer = None
        try:
            if task is None:
                self._restart_connector(connector)
            else:
                self._restart_task(connector, task)
        except Exception:  # deleted or moved meanwhile: nothing to restart here
            log.warning(
                "Automatic restart of %s failed",
                f"{connector}-{task}" if task is not None else connector,
                exc_info=True,
            )

    def _drop(self, key: Key) -> None:
        track = self._tracks.pop(key, None)
        if track is not None and track.timer is not None:
            track.timer.cancel()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for track in self._tracks.values():
                if track.timer is not None:
                    track.timer.cancel()
            self._tracks.clear()
