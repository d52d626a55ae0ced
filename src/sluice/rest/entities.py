"""JSON shapes of the REST API (``connect.runtime.rest.entities``), both directions.

Serialisers turn the herder's value types into plain JSON-ready dicts with Kafka
Connect's exact field names. Parsers turn a decoded request body into the values the
herder takes, raising :class:`BadRequestError` (400) for a body of the wrong shape.

JSON numbers are decoded by :func:`loads_json` into :class:`JsonNumber`, a ``str``
holding the number's text exactly as sent, so a config value ``1e3`` becomes ``"1e3"``
the way Jackson's ``Map<String, String>`` coercion keeps it.
"""

from __future__ import annotations

import enum
import json
import re
from typing import Any

from sluice.runtime.herder.base import (
    BadRequestError,
    ConfigInfo,
    ConfigInfos,
    ConfigKeyInfo,
    ConfigValueInfo,
    ConnectorInfo,
    ConnectorStateInfo,
    ConnectorTaskId,
    LoggerLevel,
    PluginInfo,
    StateInfo,
    TargetState,
    TaskInfo,
    TaskStateInfo,
)

__all__ = [
    "JsonNumber",
    "logger_level_json",
    "parse_logger_level_request",
    "parse_offsets_request",
    "config_infos_json",
    "config_key_info_json",
    "config_value_info_json",
    "connector_info_json",
    "connector_state_json",
    "loads_json",
    "parse_config_map",
    "parse_create_request",
    "parse_initial_state",
    "parse_task_configs",
    "plugin_info_json",
    "state_info_json",
    "task_id_json",
    "task_info_json",
    "task_state_json",
]

# Version string Kafka uses for a plugin without one; such versions are not serialised.
_UNDEFINED_VERSION = "undefined"


# --------------------------------------------------------------------------- decoding


class JsonNumber(str):
    """A JSON number kept as the text it was sent as (``1``, ``-2.50``, ``1e3``)."""

    __slots__ = ()


def _reject_constant(name: str) -> Any:
    # Python's json accepts NaN/Infinity/-Infinity; JSON (and Jackson) does not.
    raise ValueError(f"{name} is not a valid JSON value")


def loads_json(body: bytes) -> Any:
    """Decode a request body. Raises ValueError (incl. UnicodeDecodeError) if not JSON."""
    return json.loads(
        body,
        parse_int=JsonNumber,
        parse_float=JsonNumber,
        parse_constant=_reject_constant,
    )


def json_type_name(value: Any) -> str:
    """The JSON type of a decoded value, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, JsonNumber):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def _scalar_to_str(value: Any) -> str | None:
    """Jackson's coercion of a JSON scalar into a Java ``String``; None if not a scalar."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):  # includes JsonNumber: the number's own text
        return str(value)
    return None


def parse_config_map(value: Any, what: str = "Request body") -> dict[str, str | None]:
    """A ``Map<String, String>`` body: an object of scalars; numbers and booleans become
    strings (``1`` → ``"1"``, ``false`` → ``"false"``), ``null`` stays None."""
    if not isinstance(value, dict):
        raise BadRequestError(f"{what} must be a JSON object of connector configs, not {json_type_name(value)}")
    out: dict[str, str | None] = {}
    for key, item in value.items():
        if item is None:
            out[str(key)] = None
            continue
        text = _scalar_to_str(item)
        if text is None:
            raise BadRequestError(
                f"Value of connector config '{key}' must be a string, number, boolean or null, "
                f"not {json_type_name(item)}"
            )
        out[str(key)] = text
    return out


def parse_task_configs(value: Any) -> list[dict[str, str]]:
    """The body of the internal ``POST /connectors/{c}/tasks``: a list of task configs,
    each a ``Map<String, String>`` (a null value is refused: a task config has none)."""
    if not isinstance(value, list):
        raise BadRequestError(f"Request body must be a JSON array of task configs, not {json_type_name(value)}")
    configs: list[dict[str, str]] = []
    for index, item in enumerate(value):
        config = parse_config_map(item, f"Task config {index}")
        nulls = sorted(k for k, v in config.items() if v is None)
        if nulls:
            raise BadRequestError(f"Task config {index} has a null value for {', '.join(nulls)}")
        configs.append({k: v for k, v in config.items() if v is not None})
    return configs


_INITIAL_STATES = {
    "RUNNING": TargetState.STARTED,
    "PAUSED": TargetState.PAUSED,
    "STOPPED": TargetState.STOPPED,
}


def parse_initial_state(value: Any) -> TargetState | None:
    """``initial_state`` of a create request: RUNNING/PAUSED/STOPPED, case-insensitive."""
    if value is None:
        return None
    if isinstance(value, str) and not isinstance(value, JsonNumber):
        state = _INITIAL_STATES.get(value.upper())
        if state is not None:
            return state
        shown = value
    else:
        scalar = _scalar_to_str(value)
        shown = scalar if scalar is not None else f"of type {json_type_name(value)}"
    raise BadRequestError(
        f"Invalid value {shown} for initial_state: must be one of RUNNING, PAUSED, STOPPED (case-insensitive)"
    )


def parse_create_request(body: Any) -> tuple[str, dict[str, str | None], TargetState | None]:
    """``CreateConnectorRequest``: returns ``(trimmed name, config, initial target state)``.

    Unknown top-level fields are ignored. The name/config consistency check is done by
    the caller (it is shared with ``PUT /connectors/{c}/config``).
    """
    if not isinstance(body, dict):
        raise BadRequestError(f"Request body must be a JSON object, not {json_type_name(body)}")
    raw_name = body.get("name")
    if raw_name is None:
        name = ""
    else:
        text = _scalar_to_str(raw_name)
        if text is None:
            raise BadRequestError(f"Field 'name' must be a JSON string, not {json_type_name(raw_name)}")
        name = text.strip()
    if body.get("config") is None:
        raise BadRequestError("Field 'config' is missing: the request body must contain a 'config' object")
    config = parse_config_map(body["config"], what="Field 'config'")
    initial_state = parse_initial_state(body.get("initial_state"))
    return name, config, initial_state


# --------------------------------------------------------------------------- encoding


def _str(value: Any) -> Any:
    """Enum members as their string value (``State.RUNNING`` → ``"RUNNING"``)."""
    if isinstance(value, enum.Enum):
        return value.value if isinstance(value.value, str) else value.name
    return value


def _type_str(value: Any) -> Any:
    """A ``type`` field: lower-case string (``source``, ``sink``, ``unknown``, ...)."""
    if isinstance(value, enum.Enum):
        raw = value.value if isinstance(value.value, str) else value.name
        return raw.lower()
    return value


def task_id_json(task_id: ConnectorTaskId) -> dict[str, Any]:
    return {"connector": task_id.connector, "task": task_id.task}


def connector_info_json(info: ConnectorInfo) -> dict[str, Any]:
    return {
        "name": info.name,
        "config": dict(info.config),
        "tasks": [task_id_json(t) for t in info.tasks],
        "type": _type_str(info.type),
    }


def _with_trace(out: dict[str, Any], trace: str | None) -> dict[str, Any]:
    if trace:  # @JsonInclude(NON_EMPTY): omitted when null or empty
        out["trace"] = trace
    return out


def _with_version(out: dict[str, Any], version: str | None) -> dict[str, Any]:
    # Kafka 4.x: @JsonInclude(CUSTOM, valueFilter = NoVersionFilter): null is written as
    # null, "undefined" is left out.
    if version != _UNDEFINED_VERSION:
        out["version"] = version
    return out


def state_info_json(state: StateInfo) -> dict[str, Any]:
    # Key order as Jackson writes ConnectorState: state, worker_id, version, trace.
    out = {"state": _str(state.state), "worker_id": state.worker_id}
    return _with_trace(_with_version(out, state.version), state.trace)


def task_state_json(state: TaskStateInfo) -> dict[str, Any]:
    out = {"id": state.id, "state": _str(state.state), "worker_id": state.worker_id}
    return _with_trace(_with_version(out, state.version), state.trace)


def connector_state_json(info: ConnectorStateInfo) -> dict[str, Any]:
    return {
        "name": info.name,
        "connector": state_info_json(info.connector),
        "tasks": [task_state_json(t) for t in sorted(info.tasks, key=lambda t: t.id)],
        "type": _type_str(info.type),
    }


def task_info_json(info: TaskInfo) -> dict[str, Any]:
    return {"id": task_id_json(info.id), "config": dict(info.config)}


def plugin_info_json(info: PluginInfo) -> dict[str, Any]:
    out: dict[str, Any] = {"class": info.class_name, "type": _type_str(info.type)}
    if info.version is not None and info.version != _UNDEFINED_VERSION:
        out["version"] = info.version
    return out


def config_key_info_json(key: ConfigKeyInfo) -> dict[str, Any]:
    # Field order and names as Kafka Connect 4.x serialises ConfigKeyInfo (a record whose
    # order field is written as "order_in_group"; Kafka 3.x wrote "order").
    return {
        "name": key.name,
        "type": _str(key.type),
        "required": key.required,
        "default_value": key.default_value,
        "importance": _str(key.importance),
        "documentation": key.documentation,
        "group": key.group,
        "order_in_group": key.order,
        "width": _str(key.width),
        "display_name": key.display_name,
        "dependents": list(key.dependents),
    }


def config_value_info_json(value: ConfigValueInfo) -> dict[str, Any]:
    return {
        "name": value.name,
        "value": value.value,
        "recommended_values": list(value.recommended_values),
        "errors": list(value.errors),
        "visible": value.visible,
    }


def config_info_json(info: ConfigInfo) -> dict[str, Any]:
    return {
        "definition": None if info.definition is None else config_key_info_json(info.definition),
        "value": None if info.value is None else config_value_info_json(info.value),
    }


def config_infos_json(infos: ConfigInfos) -> dict[str, Any]:
    return {
        "name": infos.name,
        "error_count": infos.error_count,
        "groups": list(infos.groups),
        "configs": [config_info_json(c) for c in infos.configs],
    }


# --------------------------------------------------------------------------- offsets and loggers


def _json_numbers_as_numbers(value: Any) -> Any:
    """JSON numbers as Jackson reads them into a Map: integers as int, others as float."""
    if isinstance(value, JsonNumber):
        text = str(value)
        return int(text) if re.fullmatch(r"-?[0-9]+", text) else float(text)
    if isinstance(value, dict):
        return {k: _json_numbers_as_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_numbers_as_numbers(v) for v in value]
    return value


def parse_offsets_request(body: Any) -> list[dict[str, Any]]:
    """``{"offsets": [{"partition": {...}, "offset": {...} | null}, ...]}`` of PATCH .../offsets."""
    offsets = body.get("offsets") if isinstance(body, dict) else None
    if body is None or offsets is None or (isinstance(offsets, list) and not offsets):
        raise BadRequestError("Partitions / offsets need to be provided for an alter offsets request")
    if not isinstance(offsets, list):
        raise BadRequestError(f"Field 'offsets' must be a JSON array, not {json_type_name(offsets)}")
    entries = []
    for entry in offsets:
        if not isinstance(entry, dict):
            raise BadRequestError(f"Each entry of 'offsets' must be a JSON object, not {json_type_name(entry)}")
        for field_name in ("partition", "offset"):
            value = entry.get(field_name)
            if value is not None and not isinstance(value, dict):
                raise BadRequestError(
                    f"Field '{field_name}' must be a JSON object or null, not {json_type_name(value)}"
                )
        entries.append(_json_numbers_as_numbers(entry))
    return entries


def parse_logger_level_request(body: Any) -> str | None:
    """The ``level`` of ``PUT /admin/loggers/{logger}``; None when missing."""
    if body is None:
        return None
    if not isinstance(body, dict):
        raise BadRequestError(f"Request body must be a JSON object, not {json_type_name(body)}")
    level = body.get("level")
    return None if level is None else str(level)


def logger_level_json(level: LoggerLevel) -> dict[str, Any]:
    return {"level": level.level, "last_modified": level.last_modified}
