"""Logger levels for ``/admin/loggers``, driving Python's ``logging`` with log4j's level names.

Kafka Connect's semantics: the listing holds every logger with an explicitly set level
plus ``root``; setting a level on a namespace sets it on that logger (created if needed)
and on every existing logger whose name starts with it; ``root`` means every logger.
``last_modified`` (epoch ms) changes only when a request actually changed a level.

The levels set here reach the loggers of Spark's JVM too (Java plugins log there), through
the mirror the worker installs once its JVM is up (:func:`mirror_levels`): levels set
before then (``CONNECT_LOG4J_*``) are applied when it is installed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from sluice.api.errors import NotFoundError
from sluice.runtime.herder.base import BadRequestError, LoggerLevel

__all__ = ["Loggers", "ROOT", "mirror_levels"]

log = logging.getLogger(__name__)

ROOT = "root"
TRACE = 5
ALL = 1
OFF = logging.CRITICAL + 10

# log4j level names (what Kafka Connect accepts and answers) and Python's numbers.
_LEVELS = {
    "OFF": OFF,
    "FATAL": logging.CRITICAL,
    "ERROR": logging.ERROR,
    "WARN": logging.WARNING,
    "INFO": logging.INFO,
    "DEBUG": logging.DEBUG,
    "TRACE": TRACE,
    "ALL": ALL,
}
_NAMES = {number: name for name, number in _LEVELS.items()}
logging.addLevelName(TRACE, "TRACE")
logging.addLevelName(OFF, "OFF")
logging.addLevelName(ALL, "ALL")


def level_name(level: int) -> str:
    """The log4j name of a Python level (the nearest named level at or below it)."""
    if level in _NAMES:
        return _NAMES[level]
    below = [n for n in _NAMES if n <= level]
    return _NAMES[max(below)] if below else "ALL"


def parse_level(text: str | None) -> int:
    if text is None:
        raise BadRequestError("Desired 'level' parameter was not specified in request.")
    level = _LEVELS.get(str(text).upper())
    if level is None:
        raise NotFoundError(f"invalid log level '{text}'.")
    return level


# Every level set through a Loggers (namespace -> log4j name, in the order set) and where
# else to apply it: process-wide, as the logging module's own state is.
_set_levels: dict[str, str] = {}
_mirror: Callable[[str, str], None] | None = None
_mirror_lock = threading.Lock()


def mirror_levels(apply: Callable[[str, str], None] | None) -> None:
    """Apply every level set so far, and each one set from now on, with ``apply(namespace,
    log4j level name)`` as well (``None``: stop); ``root`` is applied after the namespaces
    set before it, with its level. A failing ``apply`` is logged, not raised: the Python
    loggers have their level either way."""
    global _mirror
    with _mirror_lock:
        _mirror = apply
        for namespace, level in _set_levels.items():
            _apply_mirrored(namespace, level)


def _apply_mirrored(namespace: str, level: str) -> None:
    if _mirror is None:
        return
    try:
        _mirror(namespace, level)
    except Exception as exc:  # noqa: BLE001 - a JVM that is gone or stopping: Python's level stands
        log.debug("Could not set the JVM's level of %s to %s: %s", namespace, level, exc)


def _record(namespace: str, level: str) -> None:
    with _mirror_lock:
        if namespace == ROOT:
            # Root sets every logger: the namespaces set before take its level, and are
            # overridden for a mirror installed later.
            for earlier in _set_levels:
                if earlier != ROOT:
                    _apply_mirrored(earlier, level)
            _set_levels.clear()
        _set_levels.pop(namespace, None)
        _set_levels[namespace] = level
        _apply_mirrored(namespace, level)


class Loggers:
    def __init__(self, manager: logging.Manager | None = None) -> None:
        self._manager = manager or logging.Logger.manager
        self._root = logging.getLogger() if manager is None else manager.root
        self._last_modified: dict[str, int] = {}
        self._lock = threading.Lock()

    def _existing(self) -> dict[str, logging.Logger]:
        return {
            name: logger
            for name, logger in list(self._manager.loggerDict.items())
            if isinstance(logger, logging.Logger)
        }

    def _info(self, name: str, logger: logging.Logger) -> LoggerLevel:
        level = logger.level if logger.level != logging.NOTSET else logger.getEffectiveLevel()
        return LoggerLevel(level_name(level), self._last_modified.get(name))

    def all_levels(self) -> dict[str, LoggerLevel]:
        with self._lock:
            levels = {
                name: self._info(name, logger)
                for name, logger in self._existing().items()
                if logger.level != logging.NOTSET
            }
            levels[ROOT] = self._info(ROOT, self._root)
            return dict(sorted(levels.items()))

    def level(self, name: str) -> LoggerLevel:
        with self._lock:
            if name.lower() == ROOT:
                return self._info(ROOT, self._root)
            logger = self._existing().get(name)
            if logger is None:
                raise NotFoundError(f"Logger {name} not found.")
            return self._info(name, logger)

    def set_level(self, namespace: str, level_text: str | None) -> list[str]:
        """Apply a level on this worker; returns the affected logger names, sorted."""
        level = parse_level(level_text)
        with self._lock:
            if namespace.lower() == ROOT:
                targets = {**self._existing(), ROOT: self._root}
            else:
                existing = self._existing()
                targets = {n: lg for n, lg in existing.items() if n.startswith(namespace)}
                if namespace not in targets:
                    targets[namespace] = (
                        logging.getLogger(namespace)
                        if self._manager is logging.Logger.manager
                        else self._manager.getLogger(namespace)
                    )
            now = int(time.time() * 1000)
            for name, logger in targets.items():
                if logger.level != level:
                    logger.setLevel(level)
                    self._last_modified[name] = now
            if self._manager is logging.Logger.manager:
                _record(ROOT if namespace.lower() == ROOT else namespace, level_name(level))
            return sorted(targets)
