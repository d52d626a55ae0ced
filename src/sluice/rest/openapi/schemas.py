"""The entity schemas of ``/openapi.json`` (its ``components.schemas``): Kafka Connect's
JSON entities as the server writes them, and the request bodies as it accepts them."""

from __future__ import annotations

from typing import Any

__all__ = ["SCHEMAS", "ref"]


def ref(name: str) -> dict[str, Any]:
    """A reference to the entity schema ``name`` of :data:`SCHEMAS`."""
    return {"$ref": f"#/components/schemas/{name}"}


# --------------------------------------------------------------------------- entity schemas

_STATE_NAMES = ["UNASSIGNED", "RUNNING", "PAUSED", "FAILED", "RESTARTING", "STOPPED"]
_CONNECTOR_TYPES = ["source", "sink", "unknown"]
_PLUGIN_TYPES = [
    "source",
    "sink",
    "converter",
    "header_converter",
    "transformation",
    "predicate",
    "configprovider",
    "rest_extension",
    "connector_client_config_override_policy",
]
_CONFIG_TYPES = ["BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD"]

# A JSON scalar that a Map<String, String> body accepts (Jackson's coercion).
_CONFIG_VALUE_IN = {
    "type": ["string", "number", "boolean", "null"],
    "description": 'A string; a JSON number or boolean is stored as its text (`1` → `"1"`, '
    '`true` → `"true"`), as Kafka Connect does.',
}

SCHEMAS: dict[str, dict[str, Any]] = {
    "ErrorMessage": {
        "type": "object",
        "description": "The body of every error answer (`ErrorMessage`).",
        "required": ["error_code", "message"],
        "properties": {
            "error_code": {"type": "integer", "description": "The HTTP status code."},
            "message": {"type": ["string", "null"]},
        },
    },
    "ServerInfo": {
        "type": "object",
        "required": ["version", "commit", "kafka_cluster_id"],
        "properties": {
            "version": {"type": "string"},
            "commit": {"type": "string"},
            "kafka_cluster_id": {"type": ["string", "null"]},
        },
    },
    "WorkerStatus": {
        "type": "object",
        "required": ["status", "message"],
        "properties": {
            "status": {"type": "string", "enum": ["healthy", "starting", "unhealthy"]},
            "message": {"type": "string"},
        },
    },
    "ConnectorConfig": {
        "type": "object",
        "description": "A connector's configuration as stored: string keys and values, including `name`.",
        "additionalProperties": {"type": "string"},
    },
    "ConnectorConfigRequest": {
        "type": "object",
        "description": "A flat connector configuration map. Values are strings; JSON numbers "
        "and booleans are accepted and kept as their text. In `PATCH .../config` a null value "
        "removes the key.",
        "additionalProperties": _CONFIG_VALUE_IN,
        "example": {
            "connector.class": "FileStreamSink",
            "tasks.max": "1",
            "file": "/tmp/connect.sink.txt",
            "topics": "connect-test",
        },
    },
    "CreateConnectorRequest": {
        "type": "object",
        "description": "Unknown top-level fields are ignored.",
        "required": ["name", "config"],
        "properties": {
            "name": {
                "type": ["string", "number", "boolean", "null"],
                "description": "The connector's name, trimmed. A number or boolean is taken as "
                "its text; null or absent is the empty name, which fails validation.",
            },
            "config": ref("ConnectorConfigRequest"),
            "initial_state": {
                "type": ["string", "null"],
                "pattern": "^([Rr][Uu][Nn][Nn][Ii][Nn][Gg]|[Pp][Aa][Uu][Ss][Ee][Dd]|[Ss][Tt][Oo][Pp][Pp][Ee][Dd])$",
                "description": "RUNNING (the default), PAUSED or STOPPED, case-insensitive.",
            },
        },
        "example": {
            "name": "local-file-sink",
            "config": {
                "connector.class": "FileStreamSink",
                "tasks.max": "1",
                "file": "/tmp/connect.sink.txt",
                "topics": "connect-test",
            },
            "initial_state": "RUNNING",
        },
    },
    "ConnectorTaskId": {
        "type": "object",
        "required": ["connector", "task"],
        "properties": {"connector": {"type": "string"}, "task": {"type": "integer"}},
    },
    "ConnectorInfo": {
        "type": "object",
        "required": ["name", "config", "tasks", "type"],
        "properties": {
            "name": {"type": "string"},
            "config": ref("ConnectorConfig"),
            "tasks": {"type": "array", "items": ref("ConnectorTaskId")},
            "type": {"type": "string", "enum": _CONNECTOR_TYPES},
        },
    },
    "ConnectorState": {
        "type": "object",
        "description": "`trace` is present only when the connector failed; `version` is the connector "
        "plugin's version recorded with the status (null when unknown).",
        "required": ["state", "worker_id"],
        "properties": {
            "state": {"type": "string", "enum": _STATE_NAMES},
            "worker_id": {"type": "string"},
            "version": {"type": ["string", "null"]},
            "trace": {"type": "string"},
        },
    },
    "TaskState": {
        "type": "object",
        "description": "`trace` is present only when the task failed; `version` is the task's version "
        "recorded with the status (null when unknown).",
        "required": ["id", "state", "worker_id"],
        "properties": {
            "id": {"type": "integer"},
            "state": {"type": "string", "enum": _STATE_NAMES},
            "worker_id": {"type": "string"},
            "version": {"type": ["string", "null"]},
            "trace": {"type": "string"},
        },
    },
    "ConnectorStateInfo": {
        "type": "object",
        "required": ["name", "connector", "tasks", "type"],
        "properties": {
            "name": {"type": "string"},
            "connector": ref("ConnectorState"),
            "tasks": {"type": "array", "items": ref("TaskState"), "description": "Sorted by id."},
            "type": {"type": "string", "enum": _CONNECTOR_TYPES},
        },
    },
    "ConnectorNames": {"type": "array", "items": {"type": "string"}},
    "ExpandedConnectors": {
        "type": "object",
        "description": "Keyed by connector name; each value holds what `expand` asked for.",
        "additionalProperties": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"status": ref("ConnectorStateInfo"), "info": ref("ConnectorInfo")},
        },
    },
    "TaskInfo": {
        "type": "object",
        "required": ["id", "config"],
        "properties": {"id": ref("ConnectorTaskId"), "config": ref("ConnectorConfig")},
    },
    "TasksConfig": {
        "type": "object",
        "description": "Keyed `<connector>-<task>`.",
        "additionalProperties": ref("ConnectorConfig"),
    },
    "ActiveTopics": {
        "type": "object",
        "description": "One key, the connector name.",
        "additionalProperties": {
            "type": "object",
            "required": ["topics"],
            "properties": {"topics": {"type": "array", "items": {"type": "string"}}},
        },
    },
    "ConnectorOffset": {
        "type": "object",
        "properties": {
            "partition": {
                "type": ["object", "null"],
                "description": "Source: the connector's partition map. Sink: "
                '`{"kafka_topic": str, "kafka_partition": int}`.',
            },
            "offset": {
                "type": ["object", "null"],
                "description": 'Source: the connector\'s offset map. Sink: `{"kafka_offset": int}`. '
                "null (in a request) removes the offset.",
            },
        },
    },
    "ConnectorOffsets": {
        "type": "object",
        "required": ["offsets"],
        "properties": {"offsets": {"type": "array", "items": ref("ConnectorOffset")}},
    },
    "ConnectorOffsetsRequest": {
        "type": "object",
        "required": ["offsets"],
        "properties": {"offsets": {"type": "array", "minItems": 1, "items": ref("ConnectorOffset")}},
    },
    "Message": {
        "type": "object",
        "required": ["message"],
        "properties": {"message": {"type": "string"}},
    },
    "PluginInfo": {
        "type": "object",
        "description": "`version` is absent when the plugin has none.",
        "required": ["class", "type"],
        "properties": {
            "class": {"type": "string"},
            "type": {"type": "string", "enum": _PLUGIN_TYPES},
            "version": {"type": "string"},
        },
    },
    "ConfigKeyInfo": {
        "type": "object",
        "description": "The definition of one configuration key. The key's position within "
        "its group is `order_in_group` (Kafka Connect 4.x; 3.x wrote `order`).",
        "required": [
            "name",
            "type",
            "required",
            "default_value",
            "importance",
            "documentation",
            "group",
            "width",
            "display_name",
            "dependents",
        ],
        "properties": {
            "name": {"type": "string"},
            "type": {"type": "string", "enum": _CONFIG_TYPES},
            "required": {"type": "boolean"},
            "default_value": {"type": ["string", "null"]},
            "importance": {"type": "string", "enum": ["HIGH", "MEDIUM", "LOW"]},
            "documentation": {"type": ["string", "null"]},
            "group": {"type": ["string", "null"]},
            "order_in_group": {"type": "integer"},
            "order": {"type": "integer"},
            "width": {"type": "string", "enum": ["NONE", "SHORT", "MEDIUM", "LONG"]},
            "display_name": {"type": "string"},
            "dependents": {"type": "array", "items": {"type": "string"}},
        },
    },
    "ConfigValueInfo": {
        "type": "object",
        "required": ["name", "value", "recommended_values", "errors", "visible"],
        "properties": {
            "name": {"type": "string"},
            "value": {"type": ["string", "null"]},
            "recommended_values": {"type": "array", "items": {"type": "string"}},
            "errors": {"type": "array", "items": {"type": "string"}},
            "visible": {"type": "boolean"},
        },
    },
    "ConfigInfo": {
        "type": "object",
        "required": ["definition", "value"],
        "properties": {
            "definition": {"anyOf": [ref("ConfigKeyInfo"), {"type": "null"}]},
            "value": {"anyOf": [ref("ConfigValueInfo"), {"type": "null"}]},
        },
    },
    "ConfigInfos": {
        "type": "object",
        "required": ["name", "error_count", "groups", "configs"],
        "properties": {
            "name": {"type": "string", "description": "The `connector.class` as given."},
            "error_count": {"type": "integer", "minimum": 0},
            "groups": {"type": "array", "items": {"type": "string"}},
            "configs": {"type": "array", "items": ref("ConfigInfo")},
        },
    },
    "LoggerLevel": {
        "type": "object",
        "required": ["level", "last_modified"],
        "properties": {
            "level": {"type": "string"},
            "last_modified": {
                "type": ["integer", "null"],
                "description": "Epoch milliseconds of the last change through this API; null if none.",
            },
        },
    },
    "LoggerLevels": {"type": "object", "additionalProperties": ref("LoggerLevel")},
    "LoggerLevelRequest": {
        "type": "object",
        "required": ["level"],
        "properties": {
            "level": {
                "type": "string",
                "description": "A log4j level name, case-insensitive: OFF, FATAL, ERROR, WARN, "
                "INFO, DEBUG, TRACE or ALL. Any other name answers 404.",
            },
        },
        "example": {"level": "DEBUG"},
    },
    "LoggerNames": {"type": "array", "items": {"type": "string"}, "description": "Sorted."},
    "OpenApiDocument": {"type": "object", "description": "This document."},
}
