"""Keys and values of Kafka Connect's config and status topics (spec 5.1 and 5.2), as bytes.

Pure functions, no Kafka client: the Kafka-backed stores (:mod:`sluice.storage.kafka_config`,
:mod:`sluice.storage.kafka_status`) use them, and tests check them byte for byte.

Kafka Connect writes these records with its internal ``JsonConverter``
(``schemas.enable=false``): compact JSON from a ``Struct``, fields in schema order, an
optional field that is unset written as ``null``. :func:`sluice.kafka.offset_format.encode_json`
reproduces Jackson's bytes (escapes, number forms), so every ``encode_*`` here gives the
bytes a Java worker writes for the same record. Keys are plain UTF-8 strings.

Reading follows what ``KafkaConfigBackingStore`` / ``KafkaStatusBackingStore`` accept:

* integers may come as JSON integers of any size (Java reads them as ``Integer`` or
  ``Long`` depending on the converter); booleans and floats are not integers;
* a target state prefers ``state.v2`` and falls back to ``state`` when ``state.v2`` is
  missing or not a string;
* a restart request's flags default to ``false`` when they are not booleans;
* task keys take the text after the last ``-`` as the task number, so connector names
  may contain ``-``; trailing dashes are dropped first, as Java's ``String.split`` does.

A record that cannot be used raises :class:`RecordFormatError`; the stores log it and
skip the record, as Kafka does.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sluice._java.numbers import narrow
from sluice.kafka.offset_format import encode_json
from sluice.storage.base import DESTROYED, TARGET_STATES, check_target_state

__all__ = [
    "COMMIT_TASKS_PREFIX",
    "CONNECTOR_PREFIX",
    "CONNECTOR_STATUS_PREFIX",
    "LOGGER_CLUSTER_PREFIX",
    "RESTART_PREFIX",
    "SESSION_KEY_KEY",
    "STATUS_STATES",
    "TARGET_STATE_PREFIX",
    "TASK_COUNT_RECORD_PREFIX",
    "TASK_PREFIX",
    "TASK_STATUS_PREFIX",
    "TOPIC_STATUS_PREFIX",
    "TOPIC_STATUS_SEPARATOR",
    "ConfigKey",
    "RecordFormatError",
    "RestartRequest",
    "SessionKey",
    "StatusKey",
    "StatusValue",
    "TopicStatus",
    "commit_tasks_key",
    "connector_key",
    "connector_status_key",
    "decode_connector_config",
    "decode_logger_level",
    "decode_restart_request",
    "decode_session_key",
    "decode_status",
    "decode_target_state",
    "decode_task_commit",
    "decode_task_config",
    "decode_task_count_record",
    "decode_topic_status",
    "encode_connector_config",
    "encode_logger_level",
    "encode_restart_request",
    "encode_session_key",
    "encode_status",
    "encode_target_state",
    "encode_task_commit",
    "encode_task_config",
    "encode_task_count_record",
    "encode_topic_status",
    "logger_cluster_key",
    "parse_config_key",
    "parse_status_key",
    "restart_key",
    "target_state_key",
    "task_count_record_key",
    "task_key",
    "task_status_key",
    "topic_status_key",
]

log = logging.getLogger(__name__)

# ----------------------------------------------------------------------------- config topic

CONNECTOR_PREFIX = "connector-"
TARGET_STATE_PREFIX = "target-state-"
TASK_PREFIX = "task-"
COMMIT_TASKS_PREFIX = "commit-"
RESTART_PREFIX = "restart-connector-"
TASK_COUNT_RECORD_PREFIX = "tasks-fencing-"
SESSION_KEY_KEY = "session-key"
LOGGER_CLUSTER_PREFIX = "logger-cluster-"

# ----------------------------------------------------------------------------- status topic

CONNECTOR_STATUS_PREFIX = "status-connector-"
TASK_STATUS_PREFIX = "status-task-"
TOPIC_STATUS_PREFIX = "status-topic-"
TOPIC_STATUS_SEPARATOR = ":connector-"

#: ``AbstractStatus.State`` names, in Kafka's declaration order.
STATUS_STATES = ("UNASSIGNED", "RUNNING", "PAUSED", "FAILED", DESTROYED, "RESTARTING", "STOPPED")

_TASK_NUMBER = re.compile(r"[+-]?[0-9]+")
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


class RecordFormatError(ValueError):
    """A config or status record whose key or value cannot be used (the store skips it)."""


@dataclass(frozen=True)
class RestartRequest:
    """A ``restart-connector-<name>`` record (``RestartRequest`` in Kafka)."""

    connector: str
    only_failed: bool = False
    include_tasks: bool = False


@dataclass(frozen=True)
class SessionKey:
    """The ``session-key`` record: the key that signs internal REST requests (KIP-507)."""

    key: bytes
    algorithm: str
    creation_timestamp: int


@dataclass(frozen=True)
class ConfigKey:
    """What a config-topic key names: ``kind`` and the connector (or logger namespace).

    ``kind`` is one of ``connector``, ``target-state``, ``task``, ``commit``, ``restart``,
    ``task-count``, ``session-key``, ``logger``. ``task`` is set for ``task`` keys only;
    ``name`` is the logger namespace for ``logger`` keys and empty for ``session-key``.
    """

    kind: str
    name: str
    task: int | None = None


# ----------------------------------------------------------------------------- helpers


def _json(value: bytes) -> Any:
    try:
        return json.loads(bytes(value).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise RecordFormatError(f"value is not JSON: {e}") from e


def _map(value: bytes | None, what: str) -> dict[str, Any]:
    if value is None:
        raise RecordFormatError(f"{what} is unexpectedly null")
    decoded = _json(value)
    if not isinstance(decoded, dict):
        raise RecordFormatError(f"{what} is not a JSON object but {_type_name(decoded)}")
    return decoded


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _int(value: object, field: str) -> int:
    """An integer field, read as Java's ``intValue`` of an ``Integer`` or ``Long`` would be."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordFormatError(f"'{field}' should be an integer but is {_type_name(value)}")
    return narrow(value, 32)  # (int) longValue: the low 32 bits


def _properties(value: bytes | None, what: str) -> dict[str, Any]:
    properties = _map(value, what).get("properties")
    if not isinstance(properties, dict):
        raise RecordFormatError(f"'properties' of {what} should be an object but is {_type_name(properties)}")
    return properties


def _split_task_id(rest: str) -> tuple[str, int] | None:
    """``"<name>-<n>"`` -> ``(name, n)``; Java ``split("-")`` semantics (trailing dashes ignored)."""
    rest = rest.rstrip("-")
    name, sep, number = rest.rpartition("-")
    if not sep or not _TASK_NUMBER.fullmatch(number):
        return None
    task = int(number)
    if not _INT_MIN <= task <= _INT_MAX:
        return None
    return name, task


# ----------------------------------------------------------------------------- config keys


def connector_key(name: str) -> str:
    return CONNECTOR_PREFIX + name


def target_state_key(name: str) -> str:
    return TARGET_STATE_PREFIX + name


def task_key(name: str, task: int) -> str:
    return f"{TASK_PREFIX}{name}-{task}"


def commit_tasks_key(name: str) -> str:
    return COMMIT_TASKS_PREFIX + name


def restart_key(name: str) -> str:
    return RESTART_PREFIX + name


def task_count_record_key(name: str) -> str:
    return TASK_COUNT_RECORD_PREFIX + name


def logger_cluster_key(namespace: str) -> str:
    return LOGGER_CLUSTER_PREFIX + namespace


def parse_config_key(key: str) -> ConfigKey:
    """Classify a config-topic key, checking prefixes in the order Kafka's reader does.

    Raises :class:`RecordFormatError` for keys Kafka discards (unknown prefixes, task keys
    without a task number).
    """
    if key.startswith(TARGET_STATE_PREFIX):
        return ConfigKey("target-state", key[len(TARGET_STATE_PREFIX) :])
    if key.startswith(CONNECTOR_PREFIX):
        return ConfigKey("connector", key[len(CONNECTOR_PREFIX) :])
    if key.startswith(TASK_PREFIX):
        parsed = _split_task_id(key[len(TASK_PREFIX) :])
        if parsed is None:
            raise RecordFormatError(f"{key!r} is not a task config key (task-<connector>-<task number>)")
        return ConfigKey("task", parsed[0], parsed[1])
    if key.startswith(COMMIT_TASKS_PREFIX):
        return ConfigKey("commit", key[len(COMMIT_TASKS_PREFIX) :])
    if key.startswith(RESTART_PREFIX):
        return ConfigKey("restart", key[len(RESTART_PREFIX) :])
    if key.startswith(TASK_COUNT_RECORD_PREFIX):
        return ConfigKey("task-count", key[len(TASK_COUNT_RECORD_PREFIX) :])
    if key == SESSION_KEY_KEY:
        return ConfigKey("session-key", "")
    if key.startswith(LOGGER_CLUSTER_PREFIX):
        return ConfigKey("logger", key[len(LOGGER_CLUSTER_PREFIX) :])
    raise RecordFormatError(f"unknown config record key {key!r}")


# ----------------------------------------------------------------------------- config values


def encode_connector_config(config: Mapping[str, str | None]) -> bytes:
    """``{"properties":{...}}``; the map keeps the caller's order."""
    return encode_json({"properties": dict(config)})


#: Task configs have the connector config's shape (``TASK_CONFIGURATION_V0``).
encode_task_config = encode_connector_config


def decode_connector_config(value: bytes | None) -> dict[str, Any] | None:
    """The connector's properties; ``None`` for a tombstone (connector deleted)."""
    if value is None:
        return None
    decoded = _json(value)
    if decoded is None:  # a JSON null reads as a null value too
        return None
    if not isinstance(decoded, dict):
        raise RecordFormatError(f"connector config is not a JSON object but {_type_name(decoded)}")
    properties = decoded.get("properties")
    if not isinstance(properties, dict):
        raise RecordFormatError(f"'properties' of connector config should be an object but is {_type_name(properties)}")
    return properties


def decode_task_config(value: bytes | None) -> dict[str, Any]:
    """A task's properties; a tombstone is an error (Kafka never writes one)."""
    if value is not None and _json(value) is None:
        value = None
    return _properties(value, "task config")


def encode_target_state(state: str) -> bytes:
    """``{"state":..,"state.v2":..}``; STOPPED is written as ``"state":"PAUSED"`` for old readers."""
    state = check_target_state(state)
    legacy = "PAUSED" if state == "STOPPED" else state
    return encode_json({"state": legacy, "state.v2": state})


def decode_target_state(value: bytes | None) -> str | None:
    """The target state; ``None`` for a tombstone. Prefers ``state.v2``, falls back to ``state``."""
    if value is None:
        return None
    decoded = _json(value)
    if decoded is None:
        return None
    if not isinstance(decoded, dict):
        raise RecordFormatError(f"target state is not a JSON object but {_type_name(decoded)}")
    state = decoded.get("state.v2")
    if state is not None and not isinstance(state, str):
        log.warning("'state.v2' of a target state should be a string but is %s; using 'state'", _type_name(state))
        state = None
    if state is None:
        state = decoded.get("state")
        if not isinstance(state, str):
            raise RecordFormatError(f"'state' of target state should be a string but is {_type_name(state)}")
    if state not in TARGET_STATES:
        raise RecordFormatError(f"invalid target state {state!r}")
    return state


def encode_task_commit(tasks: int) -> bytes:
    """``{"tasks":<n>}``."""
    return encode_json({"tasks": int(tasks)})


def decode_task_commit(value: bytes | None) -> int:
    return _int(_map(value, "task commit").get("tasks"), "tasks")


def encode_restart_request(include_tasks: bool, only_failed: bool) -> bytes:
    """``{"include-tasks":..,"only-failed":..}`` (schema order: include-tasks first)."""
    return encode_json({"include-tasks": bool(include_tasks), "only-failed": bool(only_failed)})


def decode_restart_request(connector: str, value: bytes | None) -> RestartRequest:
    """A restart request; flags that are not booleans default to ``false`` (with a warning)."""
    decoded = _map(value, "restart request")

    def flag(field: str) -> bool:
        raw = decoded.get(field)
        if isinstance(raw, bool):
            return raw
        log.warning(
            "'%s' of the restart request for %s should be a boolean but is %s; using false",
            field,
            connector,
            _type_name(raw),
        )
        return False

    return RestartRequest(connector, only_failed=flag("only-failed"), include_tasks=flag("include-tasks"))


def encode_task_count_record(task_count: int) -> bytes:
    """``{"task-count":<n>}`` (exactly-once source support, KIP-618)."""
    return encode_json({"task-count": int(task_count)})


def decode_task_count_record(value: bytes | None) -> int:
    return _int(_map(value, "task count record").get("task-count"), "task-count")


def encode_session_key(key: SessionKey) -> bytes:
    """``{"key":<base64>,"algorithm":..,"creation-timestamp":<ms>}``."""
    return encode_json(
        {
            "key": base64.b64encode(key.key).decode("ascii"),
            "algorithm": key.algorithm,
            "creation-timestamp": int(key.creation_timestamp),
        }
    )


def decode_session_key(value: bytes | None) -> SessionKey:
    decoded = _map(value, "session key")
    raw_key = decoded.get("key")
    if not isinstance(raw_key, str):
        raise RecordFormatError(f"'key' of session key should be a string but is {_type_name(raw_key)}")
    try:
        key = base64.b64decode(raw_key, validate=True)
    except (binascii.Error, ValueError) as e:
        raise RecordFormatError(f"'key' of session key is not base64: {e}") from e
    algorithm = decoded.get("algorithm")
    if not isinstance(algorithm, str):
        raise RecordFormatError(f"'algorithm' of session key should be a string but is {_type_name(algorithm)}")
    created = decoded.get("creation-timestamp")
    if isinstance(created, bool) or not isinstance(created, int):
        raise RecordFormatError(
            f"'creation-timestamp' of session key should be an integer but is {_type_name(created)}"
        )
    return SessionKey(key, algorithm, created)


def encode_logger_level(level: str) -> bytes:
    """``{"level":"DEBUG"}``."""
    return encode_json({"level": level})


def decode_logger_level(value: bytes | None) -> str:
    level = _map(value, "logger level").get("level")
    if not isinstance(level, str):
        raise RecordFormatError(f"'level' of logger level should be a string but is {_type_name(level)}")
    return level


# ----------------------------------------------------------------------------- status topic


@dataclass(frozen=True)
class StatusKey:
    """What a status-topic key names: ``kind`` is ``connector``, ``task`` or ``topic``."""

    kind: str
    connector: str
    task: int | None = None
    topic: str | None = None


@dataclass(frozen=True)
class StatusValue:
    """A decoded ``status-connector-``/``status-task-`` value."""

    state: str
    trace: str | None
    worker_id: str | None
    generation: int
    version: str | None = None


@dataclass(frozen=True)
class TopicStatus:
    """A topic a connector's task used (``TopicStatus``; ``status-topic-`` record)."""

    topic: str
    connector: str
    task: int
    discover_timestamp: int


def connector_status_key(name: str) -> str:
    return CONNECTOR_STATUS_PREFIX + name


def task_status_key(name: str, task: int) -> str:
    return f"{TASK_STATUS_PREFIX}{name}-{task}"


def topic_status_key(topic: str, connector: str) -> str:
    return f"{TOPIC_STATUS_PREFIX}{topic}{TOPIC_STATUS_SEPARATOR}{connector}"


def parse_status_key(key: str) -> StatusKey:
    """Classify a status-topic key; :class:`RecordFormatError` for keys Kafka discards."""
    if key.startswith(CONNECTOR_STATUS_PREFIX):
        name = key[len(CONNECTOR_STATUS_PREFIX) :]
        if not name:
            raise RecordFormatError(f"connector status key {key!r} names no connector")
        return StatusKey("connector", name)
    if key.startswith(TASK_STATUS_PREFIX):
        parsed = _split_task_id(key[len(TASK_STATUS_PREFIX) :])
        if parsed is None:
            raise RecordFormatError(f"{key!r} is not a task status key (status-task-<connector>-<task number>)")
        return StatusKey("task", parsed[0], task=parsed[1])
    if key.startswith(TOPIC_STATUS_PREFIX):
        rest = key[len(TOPIC_STATUS_PREFIX) :]
        topic, sep, connector = rest.partition(TOPIC_STATUS_SEPARATOR)
        if not sep or ":" in topic:
            raise RecordFormatError(f"{key!r} is not a topic status key (status-topic-<topic>:connector-<name>)")
        if not topic:
            raise RecordFormatError(f"topic status key {key!r} names no topic")
        if not connector:
            raise RecordFormatError(f"topic status key {key!r} names no connector")
        return StatusKey("topic", connector, topic=topic)
    raise RecordFormatError(f"unknown status record key {key!r}")


def encode_status(
    state: str, worker_id: str | None, generation: int, trace: str | None = None, version: str | None = None
) -> bytes | None:
    """``{"state":..,"trace":..,"worker_id":..,"generation":..,"version":..}``; ``None`` (a tombstone) for DESTROYED.

    ``trace`` and ``version`` (the connector's or task's plugin version, which Kafka
    Connect 4.1+ records) are optional fields, written as ``null`` when unset. Readers of
    older versions ignore ``version``.
    """
    if state not in STATUS_STATES:
        raise ValueError(f"Invalid status state {state!r}; expected one of {', '.join(STATUS_STATES)}")
    if state == DESTROYED:
        return None
    return encode_json(
        {"state": state, "trace": trace, "worker_id": worker_id, "generation": int(generation), "version": version}
    )


def decode_status(value: bytes) -> StatusValue:
    decoded = _map(value, "status")
    state = decoded.get("state")
    if not isinstance(state, str) or state not in STATUS_STATES:
        raise RecordFormatError(f"invalid status state {state!r}")
    trace = decoded.get("trace")
    if trace is not None and not isinstance(trace, str):
        raise RecordFormatError(f"'trace' of status should be a string but is {_type_name(trace)}")
    worker_id = decoded.get("worker_id")
    if worker_id is not None and not isinstance(worker_id, str):
        raise RecordFormatError(f"'worker_id' of status should be a string but is {_type_name(worker_id)}")
    generation = _int(decoded.get("generation"), "generation")
    version = decoded.get("version")
    if version is not None and not isinstance(version, str):
        raise RecordFormatError(f"'version' of status should be a string but is {_type_name(version)}")
    return StatusValue(state, trace, worker_id, generation, version)


def encode_topic_status(status: TopicStatus | None) -> bytes | None:
    """``{"topic":{"name":..,"connector":..,"task":..,"discoverTimestamp":..}}``; ``None`` stays a tombstone."""
    if status is None:
        return None
    return encode_json(
        {
            "topic": {
                "name": status.topic,
                "connector": status.connector,
                "task": int(status.task),
                "discoverTimestamp": int(status.discover_timestamp),
            }
        }
    )


def decode_topic_status(value: bytes) -> TopicStatus:
    inner = _map(value, "topic status").get("topic")
    if not isinstance(inner, dict):
        raise RecordFormatError(f"'topic' of topic status should be an object but is {_type_name(inner)}")
    name = inner.get("name")
    connector = inner.get("connector")
    if not isinstance(name, str) or not isinstance(connector, str):
        raise RecordFormatError("'name' and 'connector' of topic status should be strings")
    task = _int(inner.get("task"), "task")
    timestamp = inner.get("discoverTimestamp")
    if isinstance(timestamp, bool) or not isinstance(timestamp, int):
        raise RecordFormatError(
            f"'discoverTimestamp' of topic status should be an integer but is {_type_name(timestamp)}"
        )
    return TopicStatus(name, connector, task, timestamp)
