"""The OpenAPI 3.1 description of the REST API, served at ``GET /openapi.json``.

Kafka Connect serves no such document; this endpoint is a Sluice addition.

How it is built, and why this way: every route of :func:`sluice.rest.app.create_app`
carries an ``operation_id``, and :data:`OPERATIONS` here describes each one (summary,
query parameters, request body, every status code with its JSON entity).
:func:`openapi_document` walks the application's real routes and joins the two: the
paths, methods and path parameters come from the routes, the rest from this module.
A route without a description, or a description without a route, makes the build fail,
so the document cannot drift from the API (the unit tests build it).

FastAPI's own generator is not used because the handlers deliberately read bodies and
query parameters from the raw request (so every malformed request gets Kafka's
``{"error_code", "message"}`` body, see :mod:`sluice.rest.errors`), which leaves it
nothing to infer, and because it would document each GET+HEAD route with a duplicate
operation id. A hand-written JSON file was the other option; Python lets the many
operations share the entity schemas, error responses and parameters without
copy-and-paste, and keeps the description next to the check that it matches the routes.

The schemas describe what the server *accepts*, not only what a tidy client sends:
Kafka Connect (Jackson) coerces JSON numbers and booleans to strings in config maps,
reads ``includeTasks``/``onlyFailed``/``connectorsOnly`` with ``Boolean.valueOf`` and
treats an unknown ``scope`` or ``expand`` value as the default, and so does Sluice.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute

from sluice import __version__

__all__ = ["OPERATIONS", "OpenApiError", "openapi_document"]

OPENAPI_VERSION = "3.1.0"

_JSON = "application/json"


class OpenApiError(RuntimeError):
    """The routes and :data:`OPERATIONS` disagree (a programming error)."""


def _ref(name: str) -> dict[str, Any]:
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
            "config": _ref("ConnectorConfigRequest"),
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
            "config": _ref("ConnectorConfig"),
            "tasks": {"type": "array", "items": _ref("ConnectorTaskId")},
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
            "connector": _ref("ConnectorState"),
            "tasks": {"type": "array", "items": _ref("TaskState"), "description": "Sorted by id."},
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
            "properties": {"status": _ref("ConnectorStateInfo"), "info": _ref("ConnectorInfo")},
        },
    },
    "TaskInfo": {
        "type": "object",
        "required": ["id", "config"],
        "properties": {"id": _ref("ConnectorTaskId"), "config": _ref("ConnectorConfig")},
    },
    "TasksConfig": {
        "type": "object",
        "description": "Keyed `<connector>-<task>`.",
        "additionalProperties": _ref("ConnectorConfig"),
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
        "properties": {"offsets": {"type": "array", "items": _ref("ConnectorOffset")}},
    },
    "ConnectorOffsetsRequest": {
        "type": "object",
        "required": ["offsets"],
        "properties": {"offsets": {"type": "array", "minItems": 1, "items": _ref("ConnectorOffset")}},
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
            "definition": {"anyOf": [_ref("ConfigKeyInfo"), {"type": "null"}]},
            "value": {"anyOf": [_ref("ConfigValueInfo"), {"type": "null"}]},
        },
    },
    "ConfigInfos": {
        "type": "object",
        "required": ["name", "error_count", "groups", "configs"],
        "properties": {
            "name": {"type": "string", "description": "The `connector.class` as given."},
            "error_count": {"type": "integer", "minimum": 0},
            "groups": {"type": "array", "items": {"type": "string"}},
            "configs": {"type": "array", "items": _ref("ConfigInfo")},
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
    "LoggerLevels": {"type": "object", "additionalProperties": _ref("LoggerLevel")},
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


# --------------------------------------------------------------------------- parameters

PATH_PARAMETERS: dict[str, dict[str, Any]] = {
    "connector": {
        "name": "connector",
        "in": "path",
        "required": True,
        "description": "The connector's name.",
        "schema": {"type": "string"},
    },
    "task": {
        "name": "task",
        "in": "path",
        "required": True,
        "description": "The task's number; anything but a 32-bit integer answers 404.",
        "schema": {"type": "integer", "format": "int32"},
    },
    "plugin": {
        "name": "plugin",
        "in": "path",
        "required": True,
        "description": "A connector plugin's class name or alias.",
        "schema": {"type": "string"},
    },
    "logger": {
        "name": "logger",
        "in": "path",
        "required": True,
        "description": "A logger name; `root` (case-insensitive) is the root logger.",
        "schema": {"type": "string"},
    },
}


def _java_bool_query(name: str, default: bool, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": f"{description} Read as Java's `Boolean.valueOf`: `true` in any case is "
        "true, any other value false.",
        "schema": {"type": "string", "default": "true" if default else "false", "examples": ["true", "false"]},
    }


_EXPAND = {
    "name": "expand",
    "in": "query",
    "required": False,
    "description": "Repeatable. With any `expand`, the answer is an object keyed by connector "
    "name holding `status` (ConnectorStateInfo) and/or `info` (ConnectorInfo); "
    "unknown values are ignored.",
    "style": "form",
    "explode": True,
    "schema": {"type": "array", "items": {"type": "string", "examples": ["status", "info"]}},
}

_SCOPE = {
    "name": "scope",
    "in": "query",
    "required": False,
    "description": "`worker` (the default) sets the level on this worker and answers 200 with the "
    "affected loggers; `cluster` sets it on every worker and answers 204. Any other value is "
    "treated as `worker`.",
    "schema": {"type": "string", "default": "worker", "examples": ["worker", "cluster"]},
}


# --------------------------------------------------------------------------- responses


def _json_response(description: str, schema: dict[str, Any], headers: dict[str, Any] | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {"description": description, "content": {_JSON: {"schema": schema}}}
    if headers:
        response["headers"] = headers
    return response


def _error(description: str) -> dict[str, Any]:
    return _json_response(description, _ref("ErrorMessage"))


def _empty(description: str) -> dict[str, Any]:
    return {"description": description}


_LOCATION = {
    "Location": {
        "description": "URL of the created connector, `<base>/connectors/<name>`.",
        "required": True,
        "schema": {"type": "string"},
    }
}

_BODY_400 = "The body is missing, is not JSON, or has the wrong shape"
_E415 = _error("The request has a body whose Content-Type is not JSON.")


def _config_body(description: str) -> dict[str, Any]:
    return {
        "required": True,
        "description": description,
        "content": {_JSON: {"schema": _ref("ConnectorConfigRequest")}},
    }


def _op(
    summary: str,
    tag: str,
    responses: dict[int, dict[str, Any]],
    *,
    description: str | None = None,
    parameters: Iterable[dict[str, Any]] = (),
    body: dict[str, Any] | None = None,
    deprecated: bool = False,
) -> dict[str, Any]:
    op: dict[str, Any] = {"summary": summary, "tags": [tag]}
    if description:
        op["description"] = description
    params = list(parameters)
    if params:
        op["parameters"] = params
    if body is not None:
        op["requestBody"] = body
    op["responses"] = {str(code): response for code, response in sorted(responses.items())}
    if deprecated:
        op["deprecated"] = True
    return op


_NOT_FOUND = _error("No such connector.")

OPERATIONS: dict[str, dict[str, Any]] = {
    # ---- root
    "getServerInfo": _op(
        "Version of this worker and the Kafka cluster id",
        "root",
        {200: _json_response("Server information.", _ref("ServerInfo"))},
    ),
    "getHealth": _op(
        "Whether the worker has started and serves requests",
        "root",
        {
            200: _json_response("Healthy.", _ref("WorkerStatus")),
            500: _json_response("Unhealthy: the worker did not answer in time.", _ref("WorkerStatus")),
            503: _json_response("Still starting.", _ref("WorkerStatus")),
        },
    ),
    "getMetrics": _op(
        "The worker's metrics in Prometheus' text format (a Sluice addition; Kafka Connect has JMX)",
        "root",
        {
            200: {
                "description": "Kafka Connect's metric groups as a Prometheus JMX exporter names them "
                "(`docs/metrics.md`).",
                "content": {"text/plain": {"schema": {"type": "string"}}},
            }
        },
    ),
    "getOpenApi": _op(
        "This OpenAPI description (a Sluice addition; Kafka Connect serves none)",
        "root",
        {200: _json_response("The OpenAPI 3.1 document.", _ref("OpenApiDocument"))},
    ),
    # ---- connectors
    "listConnectors": _op(
        "Names of all connectors, or with `expand` their status and/or info",
        "connectors",
        {
            200: _json_response(
                "An array of names, or (with `expand`) an object keyed by name.",
                {"oneOf": [_ref("ConnectorNames"), _ref("ExpandedConnectors")]},
            )
        },
        parameters=[_EXPAND],
    ),
    "createConnector": _op(
        "Create a connector",
        "connectors",
        {
            201: _json_response("Created.", _ref("ConnectorInfo"), headers=_LOCATION),
            400: _error(
                f"{_BODY_400}; `config.name` differs from `name`; or the configuration is invalid "
                "(for example no or an unknown `connector.class`)."
            ),
            409: _error("A connector with that name exists, or (distributed) a rebalance is under way."),
            415: _E415,
            500: _error("The connector could not be created."),
        },
        description="Validation runs before the existence check, so an invalid config for an "
        "existing name answers 400, not 409.",
        body={"required": True, "content": {_JSON: {"schema": _ref("CreateConnectorRequest")}}},
    ),
    "getConnector": _op(
        "A connector's name, config, tasks and type",
        "connectors",
        {200: _json_response("The connector.", _ref("ConnectorInfo")), 404: _NOT_FOUND},
    ),
    "deleteConnector": _op(
        "Delete a connector",
        "connectors",
        {
            204: _empty("Deleted."),
            404: _NOT_FOUND,
            409: _error("(distributed) A rebalance is under way; retry."),
        },
    ),
    "getConnectorConfig": _op(
        "A connector's configuration",
        "connectors",
        {200: _json_response("The stored configuration.", _ref("ConnectorConfig")), 404: _NOT_FOUND},
    ),
    "putConnectorConfig": _op(
        "Create a connector, or replace its configuration",
        "connectors",
        {
            200: _json_response("Replaced.", _ref("ConnectorInfo")),
            201: _json_response("Created.", _ref("ConnectorInfo"), headers=_LOCATION),
            400: _error(f"{_BODY_400}; `name` differs from the path; or the configuration is invalid."),
            409: _error("(distributed) A rebalance is under way; retry."),
            415: _E415,
            500: _error("The connector could not be created or reconfigured."),
        },
        body=_config_body("The full configuration. Without `name`, the path's name is used."),
    ),
    "patchConnectorConfig": _op(
        "Change some keys of a connector's configuration",
        "connectors",
        {
            200: _json_response("Reconfigured.", _ref("ConnectorInfo")),
            400: _error(f"{_BODY_400}; or the merged configuration is invalid."),
            404: _NOT_FOUND,
            409: _error("(distributed) A rebalance is under way; retry."),
            415: _E415,
            500: _error("The connector could not be reconfigured."),
        },
        body=_config_body("Keys to set; a null value removes the key."),
    ),
    "getConnectorStatus": _op(
        "State of a connector and its tasks",
        "connectors",
        {200: _json_response("The status.", _ref("ConnectorStateInfo")), 404: _error("No status for that connector.")},
    ),
    "restartConnector": _op(
        "Restart a connector, and optionally its tasks",
        "connectors",
        {
            202: _json_response(
                "Restart accepted (`includeTasks` or `onlyFailed`); the states shown are those "
                "before the restart, with what will restart as RESTARTING.",
                _ref("ConnectorStateInfo"),
            ),
            204: _empty("The connector instance was restarted (neither flag set)."),
            404: _NOT_FOUND,
            409: _error("(distributed) A rebalance is under way; retry."),
        },
        parameters=[
            _java_bool_query("includeTasks", False, "Restart the tasks too."),
            _java_bool_query("onlyFailed", False, "Restart only what has FAILED."),
        ],
    ),
    "pauseConnector": _op(
        "Pause a connector and its tasks",
        "connectors",
        {202: _empty("Accepted; idempotent."), 404: _NOT_FOUND},
    ),
    "resumeConnector": _op(
        "Resume a paused or stopped connector",
        "connectors",
        {202: _empty("Accepted; idempotent."), 404: _NOT_FOUND},
    ),
    "stopConnector": _op(
        "Stop a connector and shut its tasks down",
        "connectors",
        {
            204: _empty("Stopped; idempotent."),
            404: _NOT_FOUND,
            409: _error("(distributed) A rebalance is under way; retry."),
        },
    ),
    "getConnectorTopics": _op(
        "Topics the connector has used",
        "topics",
        {
            200: _json_response("The active topics (also for an unknown connector: none).", _ref("ActiveTopics")),
            403: _error("Topic tracking is disabled."),
        },
    ),
    "resetConnectorTopics": _op(
        "Forget the topics the connector has used",
        "topics",
        {202: _empty("Reset."), 403: _error("Topic tracking, or its reset, is disabled.")},
    ),
    # ---- offsets
    "getConnectorOffsets": _op(
        "A connector's committed offsets",
        "offsets",
        {
            200: _json_response("The offsets.", _ref("ConnectorOffsets")),
            404: _NOT_FOUND,
            500: _error("The sink connector's consumer group offsets could not be read."),
        },
    ),
    "alterConnectorOffsets": _op(
        "Alter the offsets of a STOPPED connector",
        "offsets",
        {
            200: _json_response("Altered.", _ref("Message")),
            400: _error(f"{_BODY_400}; no offsets given; the connector is not STOPPED; or an offset is invalid."),
            404: _NOT_FOUND,
            415: _E415,
            500: _error("The offsets could not be written, or the connector refused the change."),
        },
        body={
            "required": True,
            "content": {
                _JSON: {
                    "schema": _ref("ConnectorOffsetsRequest"),
                    "examples": {
                        "source": {
                            "summary": "A FileStreamSource: resume its file from byte 0",
                            "value": {
                                "offsets": [
                                    {"partition": {"filename": "/tmp/connect.source.txt"}, "offset": {"position": 0}}
                                ]
                            },
                        },
                        "sink": {
                            "summary": "A sink: resume partition 0 of its topic at offset 5",
                            "value": {
                                "offsets": [
                                    {
                                        "partition": {"kafka_topic": "connect-test", "kafka_partition": 0},
                                        "offset": {"kafka_offset": 5},
                                    }
                                ]
                            },
                        },
                    },
                }
            },
        },
    ),
    "resetConnectorOffsets": _op(
        "Reset all offsets of a STOPPED connector",
        "offsets",
        {
            200: _json_response("Reset.", _ref("Message")),
            400: _error("The connector is not STOPPED."),
            404: _NOT_FOUND,
            500: _error("The offsets could not be reset."),
        },
    ),
    # ---- tasks
    "getTaskConfigs": _op(
        "A connector's tasks and their configurations",
        "tasks",
        {200: _json_response("In task order.", {"type": "array", "items": _ref("TaskInfo")}), 404: _NOT_FOUND},
    ),
    "getTasksConfig": _op(
        "A connector's task configurations keyed `<connector>-<task>`",
        "tasks",
        {200: _json_response("The task configurations.", _ref("TasksConfig")), 404: _NOT_FOUND},
        deprecated=True,
    ),
    "getTaskStatus": _op(
        "State of one task",
        "tasks",
        {200: _json_response("The task's state.", _ref("TaskState")), 404: _error("No status for that task.")},
    ),
    "restartTask": _op(
        "Restart one task",
        "tasks",
        {
            204: _empty("Restarted."),
            404: _error("No such connector or task."),
            409: _error("(distributed) A rebalance is under way; retry."),
        },
    ),
    # ---- plugins
    "listConnectorPlugins": _op(
        "Installed plugins",
        "plugins",
        {
            200: _json_response(
                "Sinks, then sources, then (unless connectorsOnly) the other kinds.",
                {"type": "array", "items": _ref("PluginInfo")},
            )
        },
        parameters=[
            _java_bool_query(
                "connectorsOnly", True, "List only connectors; `false` adds transformations, predicates and converters."
            )
        ],
    ),
    "getPluginConfig": _op(
        "Configuration definitions of a plugin",
        "plugins",
        {
            200: _json_response("The plugin's keys.", {"type": "array", "items": _ref("ConfigKeyInfo")}),
            400: _error("The plugin is of a kind that has no configuration definition here."),
            404: _error("No such plugin."),
            500: _error("The plugin's own configuration definition failed (its `config()` raised)."),
        },
    ),
    "validateConnectorConfig": _op(
        "Validate a connector configuration",
        "plugins",
        {
            200: _json_response("Per-key results and the error count.", _ref("ConfigInfos")),
            400: _error(
                f"{_BODY_400}; `connector.class` does not match the path; no `connector.class`; "
                "or the class is unknown."
            ),
            415: _E415,
            500: _error("Validation itself failed."),
        },
        body=_config_body("The configuration to validate; the path is only checked against `connector.class`."),
    ),
    # ---- admin
    "getLoggerLevels": _op(
        "Loggers with an explicitly set level, and root",
        "admin",
        {
            200: _json_response("Keyed by logger name, sorted.", _ref("LoggerLevels")),
            404: _error("The admin endpoints are not served on this listener (`admin.listeners`)."),
        },
    ),
    "getLoggerLevel": _op(
        "The level of one logger",
        "admin",
        {
            200: _json_response("The explicit, else the effective, level.", _ref("LoggerLevel")),
            404: _error("No such logger, or the admin endpoints are not served on this listener."),
        },
    ),
    "setLoggerLevel": _op(
        "Set the level of a logger and its descendants",
        "admin",
        {
            200: _json_response("(scope=worker) The affected loggers.", _ref("LoggerNames")),
            204: _empty("(scope=cluster) Applied on every worker."),
            400: _error(f"{_BODY_400}; or `level` is missing."),
            404: _error("An unknown level name, or the admin endpoints are not served on this listener."),
            415: _E415,
        },
        parameters=[_SCOPE],
        body={"required": True, "content": {_JSON: {"schema": _ref("LoggerLevelRequest")}}},
    ),
}

_TAGS = [
    {"name": "root", "description": "The worker itself."},
    {"name": "connectors", "description": "Connectors: create, configure, inspect, control."},
    {"name": "tasks", "description": "A connector's tasks."},
    {"name": "offsets", "description": "A connector's offsets."},
    {"name": "topics", "description": "Topics a connector has used."},
    {"name": "plugins", "description": "Installed plugins and config validation."},
    {"name": "admin", "description": "Logger levels (served where `admin.listeners` says)."},
]

_DESCRIPTION = (
    "The Kafka Connect REST API as Sluice serves it: the same paths, query parameters, JSON "
    "entities, status codes and error body as Apache Kafka Connect 4.x. Every error answers "
    '`{"error_code": <status>, "message": <text>}`; that includes 404 for unknown paths, '
    "405 for unsupported methods and, on endpoints that read a body, 400 for a body that is "
    "not JSON of the documented shape and 415 for a non-JSON Content-Type. A trailing slash "
    "is accepted on every path, and every GET is also served as HEAD."
)

_PATH_PARAM_RE = re.compile(r"{([^}:]+)(?::[^}]*)?}")


def _head_of(get_op: dict[str, Any], operation_id: str) -> dict[str, Any]:
    head = copy.deepcopy(get_op)
    head["summary"] = f"{get_op['summary']} (headers only)"
    head["operationId"] = operation_id
    head["responses"] = {
        code: {k: v for k, v in response.items() if k != "content"} for code, response in head["responses"].items()
    }
    return head


def openapi_document(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document of ``app``'s routes; raises :class:`OpenApiError` when a route
    has no description in :data:`OPERATIONS` or a description has no route."""
    paths: dict[str, dict[str, Any]] = {}
    used: set[str] = set()
    for route in app.routes:
        if not isinstance(route, APIRoute):
            continue
        operation_id = route.operation_id
        route_methods = route.methods or set()
        if operation_id is None or operation_id not in OPERATIONS:
            raise OpenApiError(f"Route {sorted(route_methods)} {route.path} has no description in OPERATIONS")
        if operation_id in used:
            raise OpenApiError(f"Operation id {operation_id} is used by two routes")
        used.add(operation_id)
        methods = {m.lower() for m in route_methods}
        if not methods <= {"get", "head", "post", "put", "patch", "delete"} or methods == {"head"}:
            raise OpenApiError(f"Route {route.path}: unexpected methods {sorted(methods)}")
        op = copy.deepcopy(OPERATIONS[operation_id])
        op["operationId"] = operation_id
        path_params = [copy.deepcopy(PATH_PARAMETERS[name]) for name in _PATH_PARAM_RE.findall(route.path)]
        if path_params:
            op["parameters"] = path_params + op.get("parameters", [])
        item = paths.setdefault(route.path, {})
        for method in sorted(methods - {"head"}):
            if method in item:
                raise OpenApiError(f"{method.upper()} {route.path} is served by two routes")
            item[method] = op
        if "head" in methods:
            if "get" not in methods:
                raise OpenApiError(f"Route {route.path} serves HEAD without GET")
            item["head"] = _head_of(op, f"{operation_id}Head")
    unused = set(OPERATIONS) - used
    if unused:
        raise OpenApiError(f"OPERATIONS describes operations no route serves: {sorted(unused)}")
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "Sluice: Kafka Connect REST API",
            "version": __version__,
            "description": _DESCRIPTION,
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "tags": copy.deepcopy(_TAGS),
        "paths": paths,
        "components": {"schemas": copy.deepcopy(SCHEMAS)},
    }
