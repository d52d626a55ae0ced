"""The description of every operation of the REST API, keyed by its route's
``operation_id`` (:data:`OPERATIONS`), and of the path parameters the routes share
(:data:`PATH_PARAMETERS`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sluice.rest.openapi.schemas import ref

__all__ = ["OPERATIONS", "PATH_PARAMETERS"]

_JSON = "application/json"


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
    return _json_response(description, ref("ErrorMessage"))


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
        "content": {_JSON: {"schema": ref("ConnectorConfigRequest")}},
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
        {200: _json_response("Server information.", ref("ServerInfo"))},
    ),
    "getHealth": _op(
        "Whether the worker has started and serves requests",
        "root",
        {
            200: _json_response("Healthy.", ref("WorkerStatus")),
            500: _json_response("Unhealthy: the worker did not answer in time.", ref("WorkerStatus")),
            503: _json_response("Still starting.", ref("WorkerStatus")),
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
        {200: _json_response("The OpenAPI 3.1 document.", ref("OpenApiDocument"))},
    ),
    # ---- connectors
    "listConnectors": _op(
        "Names of all connectors, or with `expand` their status and/or info",
        "connectors",
        {
            200: _json_response(
                "An array of names, or (with `expand`) an object keyed by name.",
                {"oneOf": [ref("ConnectorNames"), ref("ExpandedConnectors")]},
            )
        },
        parameters=[_EXPAND],
    ),
    "createConnector": _op(
        "Create a connector",
        "connectors",
        {
            201: _json_response("Created.", ref("ConnectorInfo"), headers=_LOCATION),
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
        body={"required": True, "content": {_JSON: {"schema": ref("CreateConnectorRequest")}}},
    ),
    "getConnector": _op(
        "A connector's name, config, tasks and type",
        "connectors",
        {200: _json_response("The connector.", ref("ConnectorInfo")), 404: _NOT_FOUND},
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
        {200: _json_response("The stored configuration.", ref("ConnectorConfig")), 404: _NOT_FOUND},
    ),
    "putConnectorConfig": _op(
        "Create a connector, or replace its configuration",
        "connectors",
        {
            200: _json_response("Replaced.", ref("ConnectorInfo")),
            201: _json_response("Created.", ref("ConnectorInfo"), headers=_LOCATION),
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
            200: _json_response("Reconfigured.", ref("ConnectorInfo")),
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
        {200: _json_response("The status.", ref("ConnectorStateInfo")), 404: _error("No status for that connector.")},
    ),
    "restartConnector": _op(
        "Restart a connector, and optionally its tasks",
        "connectors",
        {
            202: _json_response(
                "Restart accepted (`includeTasks` or `onlyFailed`); the states shown are those "
                "before the restart, with what will restart as RESTARTING.",
                ref("ConnectorStateInfo"),
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
            200: _json_response("The active topics (also for an unknown connector: none).", ref("ActiveTopics")),
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
            200: _json_response("The offsets.", ref("ConnectorOffsets")),
            404: _NOT_FOUND,
            500: _error("The sink connector's consumer group offsets could not be read."),
        },
    ),
    "alterConnectorOffsets": _op(
        "Alter the offsets of a STOPPED connector",
        "offsets",
        {
            200: _json_response("Altered.", ref("Message")),
            400: _error(f"{_BODY_400}; no offsets given; the connector is not STOPPED; or an offset is invalid."),
            404: _NOT_FOUND,
            415: _E415,
            500: _error("The offsets could not be written, or the connector refused the change."),
        },
        body={
            "required": True,
            "content": {
                _JSON: {
                    "schema": ref("ConnectorOffsetsRequest"),
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
            200: _json_response("Reset.", ref("Message")),
            400: _error("The connector is not STOPPED."),
            404: _NOT_FOUND,
            500: _error("The offsets could not be reset."),
        },
    ),
    # ---- tasks
    "getTaskConfigs": _op(
        "A connector's tasks and their configurations",
        "tasks",
        {200: _json_response("In task order.", {"type": "array", "items": ref("TaskInfo")}), 404: _NOT_FOUND},
    ),
    "getTasksConfig": _op(
        "A connector's task configurations keyed `<connector>-<task>`",
        "tasks",
        {200: _json_response("The task configurations.", ref("TasksConfig")), 404: _NOT_FOUND},
        deprecated=True,
    ),
    "getTaskStatus": _op(
        "State of one task",
        "tasks",
        {200: _json_response("The task's state.", ref("TaskState")), 404: _error("No status for that task.")},
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
    # ---- internal: other workers of a distributed cluster call these
    "putTaskConfigs": _op(
        "Write a connector's task configs (other workers only)",
        "internal",
        {
            204: _empty("Written by the group's leader."),
            400: _error(
                f"{_BODY_400}; the request is not signed (KIP-507) or with an algorithm this worker does not accept; "
                "or the connector is STOPPED and the list is not empty."
            ),
            403: _error("The request's signature does not match the session key."),
            404: _NOT_FOUND,
            409: _error("(distributed) No leader known, or a rebalance is under way; retry."),
            415: _E415,
            500: _error("A standalone worker: it takes no task configs from others, as Kafka Connect's."),
            503: _error("(distributed) This worker has not read a session key yet."),
        },
        description="The owner of a connector that does not lead the group sends the task configs its "
        "connector generated to the leader, which writes them to the config topic. Under the `sessioned` "
        "protocol the body is signed with the session key (`X-Connect-Authorization`, "
        "`X-Connect-Request-Signature-Algorithm`).",
        body={
            "required": True,
            "description": "The task configs, in task order.",
            "content": {
                _JSON: {
                    "schema": {
                        "type": "array",
                        "items": {"type": "object", "additionalProperties": {"type": "string"}},
                    }
                }
            },
        },
    ),
    "fenceZombies": _op(
        "Fence a source connector's earlier task producers (other workers only)",
        "internal",
        {
            204: _empty("Fenced, and the task count recorded (or nothing was to be fenced)."),
            400: _error(
                "The request is not signed (KIP-507) or with an algorithm this worker does not accept; or the "
                "connector is not a source."
            ),
            403: _error("The request's signature does not match the session key."),
            404: _NOT_FOUND,
            409: _error("(distributed) No leader known, a rebalance, or new task configs during the fencing; retry."),
            500: _error(
                "The producers could not be fenced; or a standalone worker, which has no exactly-once sources, as "
                "Kafka Connect's."
            ),
            503: _error("(distributed) This worker has not read a session key yet."),
        },
        description="An exactly-once source task asks the group's leader, before it starts, to fence the "
        "transactional producers of its connector's earlier tasks and write the connector's task-count record "
        "(KIP-618). Signed as `POST /connectors/{connector}/tasks` is.",
    ),
    # ---- plugins
    "listConnectorPlugins": _op(
        "Installed plugins",
        "plugins",
        {
            200: _json_response(
                "Sinks, then sources, then (unless connectorsOnly) the other kinds.",
                {"type": "array", "items": ref("PluginInfo")},
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
            200: _json_response("The plugin's keys.", {"type": "array", "items": ref("ConfigKeyInfo")}),
            400: _error(
                "The plugin is of a kind that has no configuration definition here, or `version` is not a "
                "version range."
            ),
            404: _error("No such plugin, or no installed version of it meets `version`."),
            500: _error("The plugin's own configuration definition failed (its `config()` raised)."),
        },
        parameters=[
            {
                "name": "version",
                "in": "query",
                "required": False,
                "description": "A version or Maven version range (KIP-891): the keys of the latest installed "
                "version that meets it. Default: the version a config without `*.plugin.version` runs.",
                "schema": {"type": "string", "examples": ["4.3.1", "[4.0,5.0)"]},
            }
        ],
    ),
    "validateConnectorConfig": _op(
        "Validate a connector configuration",
        "plugins",
        {
            200: _json_response("Per-key results and the error count.", ref("ConfigInfos")),
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
            200: _json_response("Keyed by logger name, sorted.", ref("LoggerLevels")),
            404: _error("The admin endpoints are not served on this listener (`admin.listeners`)."),
        },
    ),
    "getLoggerLevel": _op(
        "The level of one logger",
        "admin",
        {
            200: _json_response("The explicit, else the effective, level.", ref("LoggerLevel")),
            404: _error("No such logger, or the admin endpoints are not served on this listener."),
        },
    ),
    "setLoggerLevel": _op(
        "Set the level of a logger and its descendants",
        "admin",
        {
            200: _json_response("(scope=worker) The affected loggers.", ref("LoggerNames")),
            204: _empty("(scope=cluster) Applied on every worker."),
            400: _error(f"{_BODY_400}; or `level` is missing."),
            404: _error("An unknown level name, or the admin endpoints are not served on this listener."),
            415: _E415,
        },
        parameters=[_SCOPE],
        body={"required": True, "content": {_JSON: {"schema": ref("LoggerLevelRequest")}}},
    ),
}
