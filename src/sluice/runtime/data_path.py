"""Driver-side pieces of a task's data path: its error policy, transform chain and topic
creation groups, as the executors get them, and the dead letter queue's topic.

The task hosts (:mod:`sluice.taskhost`) see only Python class paths and plain settings; here the
connector config's ``errors.*``, ``transforms.*`` and ``predicates.*`` keys are read and
plugin names (Kafka class names, aliases) resolved.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from sluice.kafka.topics import DEFAULT_GROUP, TopicCreationGroup, TopicCreationSpec, create_missing_topics
from sluice.runtime.config import (
    DLQ_CONTEXT_HEADERS_ENABLE_CONFIG,
    DLQ_TOPIC_NAME_CONFIG,
    DLQ_TOPIC_REPLICATION_FACTOR_CONFIG,
    ERRORS_TOLERANCE_CONFIG,
    PREDICATES_CONFIG,
    TOPIC_CREATION_GROUPS_CONFIG,
    TOPIC_CREATION_PREFIX,
    TRANSFORMS_CONFIG,
)
from sluice.runtime.plugins import Plugins
from sluice.taskhost.protocol import PluginSpec
from sluice.taskhost.tolerance import ErrorPolicy

log = logging.getLogger(__name__)

__all__ = [
    "DeadLetterTopic",
    "error_policy",
    "topic_creation_active",
    "topic_creation_errors",
    "topic_creation_spec",
    "transforms_spec",
]

TRANSFORMATION_CHAIN_CLASS = "sluice.transforms.chain.TransformationChain"


def _flag(config: Mapping[str, str], key: str) -> bool:
    return str(config.get(key, "false")).strip().lower() == "true"


def _aliases(value: str | None) -> list[str]:
    return [a.strip() for a in (value or "").split(",") if a.strip()]


def error_policy(config: Mapping[str, str]) -> ErrorPolicy:
    """The connector's ``errors.*`` settings (validated before the connector started).

    Kafka Connect defines the dead letter queue keys for sink connectors only; Sluice
    reads them for source connectors too (conversion and transform failures)."""
    return ErrorPolicy(
        tolerate_all=str(config.get(ERRORS_TOLERANCE_CONFIG, "none")).strip() == "all",
        retry_timeout_ms=int(config.get("errors.retry.timeout", "0") or 0),
        retry_delay_max_ms=int(config.get("errors.retry.delay.max.ms", "60000") or 60000),
        log_enable=_flag(config, "errors.log.enable"),
        log_include_messages=_flag(config, "errors.log.include.messages"),
        dead_letter_topic=(config.get(DLQ_TOPIC_NAME_CONFIG) or "").strip() or None,
        context_headers=_flag(config, DLQ_CONTEXT_HEADERS_ENABLE_CONFIG),
    )


def transforms_spec(config: Mapping[str, str], plugins: Plugins) -> PluginSpec | None:
    """The chain for the executors: the ``transforms.*``/``predicates.*`` keys with each
    ``type`` resolved to a Python class path; None when the connector has no transforms."""
    transforms = _aliases(config.get(TRANSFORMS_CONFIG))
    if not transforms:
        return None
    keys = {
        k: v
        for k, v in config.items()
        if k in (TRANSFORMS_CONFIG, PREDICATES_CONFIG) or k.startswith(("transforms.", "predicates."))
    }
    for family, kind, aliases in (
        ("transforms", "transformation", transforms),
        ("predicates", "predicate", _aliases(config.get(PREDICATES_CONFIG))),
    ):
        for alias in aliases:
            type_key = f"{family}.{alias}.type"
            if keys.get(type_key):
                keys[type_key] = plugins.resolve(keys[type_key].strip(), (kind,)).python_path
    return PluginSpec(TRANSFORMATION_CHAIN_CLASS, keys)


_GROUP_SETTINGS = ("include", "exclude", "replication.factor", "partitions")


def topic_creation_active(config: Mapping[str, str], worker_enabled: bool) -> bool:
    """Kafka's rule: the worker allows it and the connector has a ``topic.creation.`` key."""
    return worker_enabled and any(k.startswith(TOPIC_CREATION_PREFIX) for k in config)


def _creation_int(config: Mapping[str, str], key: str, fallback: str | None) -> int:
    raw = config.get(key, fallback)
    if raw is None or not str(raw).strip():
        raise ValueError(f'Missing required configuration "{key}" which has no default value.')
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise ValueError(f"Invalid value {raw} for configuration {key}: Not a number of type INT") from None
    if value == 0 or value < -1:
        what = "partitions" if key.endswith("partitions") else "replication factor"
        raise ValueError(
            f"Invalid value {value} for configuration {key}: Number of {what} must be positive, "
            "or -1 to use the broker's default"
        )
    return value


def topic_creation_spec(config: Mapping[str, str], admin_config: dict[str, str]) -> TopicCreationSpec:
    """The connector's topic creation groups, in order with ``default`` last. Raises
    ``ValueError`` for a missing or invalid setting (see :func:`topic_creation_errors`)."""
    prefix = TOPIC_CREATION_PREFIX
    default_rf = _creation_int(config, f"{prefix}{DEFAULT_GROUP}.replication.factor", None)
    default_partitions = _creation_int(config, f"{prefix}{DEFAULT_GROUP}.partitions", None)
    groups = []
    for name in [*(a for a in _aliases(config.get(TOPIC_CREATION_GROUPS_CONFIG)) if a != DEFAULT_GROUP), DEFAULT_GROUP]:
        own = f"{prefix}{name}."
        topic_configs = tuple(
            sorted(
                (k[len(own) :], v)
                for k, v in config.items()
                if k.startswith(own) and k[len(own) :] not in _GROUP_SETTINGS
            )
        )
        if name == DEFAULT_GROUP:
            groups.append(TopicCreationGroup(name, default_rf, default_partitions, topic_configs=topic_configs))
            continue
        for pattern in [*_aliases(config.get(own + "include")), *_aliases(config.get(own + "exclude"))]:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"Invalid value {pattern} for configuration {own}include/exclude: {exc}") from None
        groups.append(
            TopicCreationGroup(
                name,
                _creation_int(config, own + "replication.factor", str(default_rf)),
                _creation_int(config, own + "partitions", str(default_partitions)),
                tuple(_aliases(config.get(own + "include"))),
                tuple(_aliases(config.get(own + "exclude"))),
                topic_configs,
            )
        )
    return TopicCreationSpec(tuple(groups), dict(admin_config))


def topic_creation_errors(config: Mapping[str, str], worker_enabled: bool) -> list[str]:
    """Validation: what is wrong with the connector's ``topic.creation.*`` keys."""
    if not topic_creation_active(config, worker_enabled):
        return []
    try:
        topic_creation_spec(config, {})
    except ValueError as exc:
        return [str(exc)]
    return []


class DeadLetterTopic:
    """A connector's dead letter queue topic: created (one partition) when missing, before
    the connector's tasks start; the tasks' own producers write the dead letters."""

    def __init__(self, topic: str, replication_factor: int, admin: Any) -> None:
        self.topic = topic
        self.replication_factor = replication_factor
        self._admin = admin

    @classmethod
    def of_connector(cls, config: Mapping[str, str], admin: Any) -> DeadLetterTopic | None:
        topic = (config.get(DLQ_TOPIC_NAME_CONFIG) or "").strip()
        if not topic:
            return None
        factor = int(config.get(DLQ_TOPIC_REPLICATION_FACTOR_CONFIG, "3") or 3)
        return cls(topic, factor, admin)

    def ensure(self) -> None:
        """Create the topic when missing (one partition), as Kafka's dead letter queue reporter does."""
        if create_missing_topics(self._admin, {self.topic: (1, self.replication_factor, {})}):
            log.info("Created dead letter queue topic %s", self.topic)
