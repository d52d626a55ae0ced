"""The container image's conventions: worker properties and log levels from ``CONNECT_*``
environment variables, as Confluent's ``cp-kafka-connect`` image reads them.

``CONNECT_BOOTSTRAP_SERVERS=broker:9092`` is ``bootstrap.servers=broker:9092``: the prefix
dropped, the rest lower-cased, ``___`` → ``-``, ``__`` → ``_``, ``_`` → ``.``
(``CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR`` is ``config.storage.replication.factor``,
``CONNECT_PRODUCER_MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION`` its producer. key). The
``CONNECT_LOG4J_*`` variables are not properties: ``CONNECT_LOG4J_ROOT_LOGLEVEL`` is the root
level and ``CONNECT_LOG4J_LOGGERS`` (``name=LEVEL,name=LEVEL``) sets loggers' levels.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["ENV_PREFIX", "LOG4J_PREFIX", "log_levels_from_env", "property_name", "worker_props_from_env"]

ENV_PREFIX = "CONNECT_"
LOG4J_PREFIX = "CONNECT_LOG4J_"
_UNDERSCORE = "\0"


def property_name(variable: str) -> str:
    """The worker property a ``CONNECT_*`` variable sets."""
    raw = variable[len(ENV_PREFIX) :].lower()
    return raw.replace("___", "-").replace("__", _UNDERSCORE).replace("_", ".").replace(_UNDERSCORE, "_")


def worker_props_from_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The worker properties the ``CONNECT_*`` variables of ``environ`` give."""
    props: dict[str, str] = {}
    for variable, value in sorted(environ.items()):
        if (
            variable.startswith(ENV_PREFIX)
            and not variable.startswith(LOG4J_PREFIX)
            and len(variable) > len(ENV_PREFIX)
        ):
            props[property_name(variable)] = value
    return props


def log_levels_from_env(environ: Mapping[str, str]) -> tuple[str | None, dict[str, str]]:
    """``(root level or None, {logger: level})`` from ``CONNECT_LOG4J_ROOT_LOGLEVEL`` and
    ``CONNECT_LOG4J_LOGGERS``. Raises ValueError for a logger entry without ``=``."""
    root = environ.get(LOG4J_PREFIX + "ROOT_LOGLEVEL") or None
    loggers: dict[str, str] = {}
    for entry in (environ.get(LOG4J_PREFIX + "LOGGERS") or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        name, sep, level = entry.partition("=")
        if not sep or not name.strip() or not level.strip():
            raise ValueError(f"CONNECT_LOG4J_LOGGERS: {entry!r} is not logger=LEVEL")
        loggers[name.strip()] = level.strip().upper()
    return (root.upper() if root else None), loggers
