"""Connectors and what belongs to each (Kafka's ``ConnectorsResource``): create, configure,
inspect and control a connector, its topics, its offsets and its tasks."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import Request, Response

from sluice.api.errors import NotFoundError
from sluice.rest.entities import (
    connector_info_json,
    connector_state_json,
    parse_config_map,
    parse_create_request,
    parse_offsets_request,
    parse_task_configs,
    task_info_json,
    task_state_json,
)
from sluice.rest.requests import MISSING, JsonBody, RawBody, java_bool, json_response, require_body, task_id
from sluice.rest.routes.endpoint import Endpoint
from sluice.runtime.herder.base import BadRequestError, Herder, SignedRequest

__all__ = ["connector_routes"]

# Characters JAX-RS's UriBuilder.path() leaves unencoded in a path.
_PATH_SAFE = "/:@!$&'()*+,;=-._~"


def _check_and_put_name(connector_name: str, config: dict[str, str | None]) -> None:
    """``ConnectorsResource.checkAndPutConnectorConfigName``."""
    included = config.get("name")
    if included is not None:
        if included != connector_name:
            raise BadRequestError(
                f"Connector name configuration ({included}) doesn't match connector name in the URL ({connector_name})"
            )
    else:
        config["name"] = connector_name


def _signed(request: Request) -> SignedRequest:
    """The request as the herder checks its signature: headers and the bytes they sign."""
    return SignedRequest(dict(request.headers), getattr(request.state, "raw_body", b""))


def _location(request: Request, name: str) -> str:
    """``Location`` of a created connector, resolved against the request base as Jersey does."""
    return str(request.base_url).rstrip("/") + "/connectors/" + quote(name, safe=_PATH_SAFE, errors="surrogatepass")


def connector_routes(herder: Herder) -> list[Endpoint]:
    """``/connectors`` and everything under it, over ``herder``."""

    def list_connectors(request: Request) -> Response:
        names = herder.connectors()
        if "expand" not in request.query_params:
            return json_response(list(names))
        expansions = request.query_params.getlist("expand")
        out: dict[str, dict[str, Any]] = {}
        for name in names:
            try:
                expanded: dict[str, Any] = {}
                for expansion in expansions:
                    if expansion == "status":
                        expanded["status"] = connector_state_json(herder.connector_status(name))
                    elif expansion == "info":
                        expanded["info"] = connector_info_json(herder.connector_info(name))
                    # unknown expansions are ignored, as in Kafka
                out[name] = expanded
            except NotFoundError:
                # removed while we looked it up: left out, as in Kafka
                continue
        return json_response(out)

    def create_connector(request: Request, body: JsonBody) -> Response:
        name, config, initial_state = parse_create_request(require_body(body))
        _check_and_put_name(name, config)
        _created, info = herder.put_connector_config(name, config, allow_replace=False, initial_state=initial_state)
        return json_response(
            connector_info_json(info),
            status_code=201,
            headers={"Location": _location(request, name)},
        )

    def get_connector(connector: str) -> Response:
        return json_response(connector_info_json(herder.connector_info(connector)))

    def delete_connector(connector: str) -> Response:
        herder.delete_connector(connector)
        return Response(status_code=204)

    def get_connector_config(connector: str) -> Response:
        return json_response(dict(herder.connector_config(connector)))

    def put_connector_config(request: Request, connector: str, body: JsonBody) -> Response:
        config = parse_config_map(require_body(body))
        _check_and_put_name(connector, config)
        created, info = herder.put_connector_config(connector, config, allow_replace=True)
        if created:
            return json_response(
                connector_info_json(info),
                status_code=201,
                headers={"Location": _location(request, connector)},
            )
        return json_response(connector_info_json(info))

    def patch_connector_config(connector: str, body: JsonBody) -> Response:
        patch = parse_config_map(require_body(body))
        return json_response(connector_info_json(herder.patch_connector_config(connector, patch)))

    def connector_status(connector: str) -> Response:
        return json_response(connector_state_json(herder.connector_status(connector)))

    def restart_connector(request: Request, connector: str) -> Response:
        include_tasks = java_bool(request, "includeTasks", False)
        only_failed = java_bool(request, "onlyFailed", False)
        state = herder.restart_connector(connector, include_tasks, only_failed)
        if state is None:
            return Response(status_code=204)
        return json_response(connector_state_json(state), status_code=202)

    def pause_connector(connector: str) -> Response:
        herder.pause_connector(connector)
        return Response(status_code=202)

    def resume_connector(connector: str) -> Response:
        herder.resume_connector(connector)
        return Response(status_code=202)

    def stop_connector(connector: str) -> Response:
        herder.stop_connector(connector)
        return Response(status_code=204)

    def connector_topics(connector: str) -> Response:
        topics = list(herder.connector_active_topics(connector))
        return json_response({connector: {"topics": topics}})

    def reset_connector_topics(connector: str) -> Response:
        herder.reset_connector_active_topics(connector)
        return Response(status_code=202)

    # ---- offsets

    def connector_offsets(connector: str) -> Response:
        return json_response({"offsets": herder.connector_offsets(connector)})

    def alter_connector_offsets(connector: str, body: JsonBody) -> Response:
        offsets = parse_offsets_request(None if body is MISSING else body)
        return json_response({"message": herder.alter_connector_offsets(connector, offsets)})

    def reset_connector_offsets(connector: str) -> Response:
        return json_response({"message": herder.reset_connector_offsets(connector)})

    # ---- tasks

    def task_configs(connector: str) -> Response:
        return json_response([task_info_json(t) for t in herder.task_configs(connector)])

    def tasks_config(connector: str) -> Response:
        # Deprecated in Kafka: {"<c>-<n>": {config}}.
        return json_response({str(t.id): dict(t.config) for t in herder.task_configs(connector)})

    def task_status(connector: str, task: str) -> Response:
        return json_response(task_state_json(herder.task_status(connector, task_id(task))))

    def restart_task(connector: str, task: str) -> Response:
        herder.restart_task(connector, task_id(task))
        return Response(status_code=204)

    # ---- internal: other workers of the cluster call these, with a signed body

    def put_task_configs(request: Request, connector: str, body: JsonBody) -> Response:
        configs = parse_task_configs(require_body(body))
        herder.put_task_configs(connector, configs, _signed(request))
        return Response(status_code=204)

    def fence_zombies(request: Request, connector: str, body: RawBody) -> Response:
        herder.fence_zombie_source_tasks(connector, _signed(request))
        return Response(status_code=204)

    return [
        Endpoint("GET", "/connectors", "listConnectors", list_connectors),
        Endpoint("POST", "/connectors", "createConnector", create_connector),
        Endpoint("GET", "/connectors/{connector}", "getConnector", get_connector),
        Endpoint("DELETE", "/connectors/{connector}", "deleteConnector", delete_connector),
        Endpoint("GET", "/connectors/{connector}/config", "getConnectorConfig", get_connector_config),
        Endpoint("PUT", "/connectors/{connector}/config", "putConnectorConfig", put_connector_config),
        Endpoint("PATCH", "/connectors/{connector}/config", "patchConnectorConfig", patch_connector_config),
        Endpoint("GET", "/connectors/{connector}/status", "getConnectorStatus", connector_status),
        Endpoint("POST", "/connectors/{connector}/restart", "restartConnector", restart_connector),
        Endpoint("PUT", "/connectors/{connector}/pause", "pauseConnector", pause_connector),
        Endpoint("PUT", "/connectors/{connector}/resume", "resumeConnector", resume_connector),
        Endpoint("PUT", "/connectors/{connector}/stop", "stopConnector", stop_connector),
        Endpoint("GET", "/connectors/{connector}/topics", "getConnectorTopics", connector_topics),
        Endpoint("PUT", "/connectors/{connector}/topics/reset", "resetConnectorTopics", reset_connector_topics),
        Endpoint("GET", "/connectors/{connector}/offsets", "getConnectorOffsets", connector_offsets),
        Endpoint("PATCH", "/connectors/{connector}/offsets", "alterConnectorOffsets", alter_connector_offsets),
        Endpoint("DELETE", "/connectors/{connector}/offsets", "resetConnectorOffsets", reset_connector_offsets),
        Endpoint("GET", "/connectors/{connector}/tasks", "getTaskConfigs", task_configs),
        Endpoint("GET", "/connectors/{connector}/tasks-config", "getTasksConfig", tasks_config),
        Endpoint("GET", "/connectors/{connector}/tasks/{task}/status", "getTaskStatus", task_status),
        Endpoint("POST", "/connectors/{connector}/tasks/{task}/restart", "restartTask", restart_task),
        Endpoint("POST", "/connectors/{connector}/tasks", "putTaskConfigs", put_task_configs),
        Endpoint("PUT", "/connectors/{connector}/fence", "fenceZombies", fence_zombies),
    ]
