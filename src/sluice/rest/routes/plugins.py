"""Installed plugins and configuration validation (Kafka's ``ConnectorPluginsResource``)."""

from __future__ import annotations

from fastapi import Request, Response

from sluice.rest.entities import config_infos_json, config_key_info_json, parse_config_map, plugin_info_json
from sluice.rest.requests import JsonBody, java_bool, json_response, require_body
from sluice.rest.routes.endpoint import Endpoint
from sluice.runtime.herder.base import BadRequestError, Herder

__all__ = ["plugin_routes"]


def _normalized_plugin_name(name: str) -> str:
    suffix = "Connector"
    if name.endswith(suffix) and len(name) > len(suffix):
        return name[: -len(suffix)]
    return name


def plugin_routes(herder: Herder) -> list[Endpoint]:
    """``/connector-plugins`` and everything under it, over ``herder``."""

    def connector_plugins(request: Request) -> Response:
        connectors_only = java_bool(request, "connectorsOnly", True)
        plugins = herder.connector_plugins(connectors_only=connectors_only)
        return json_response([plugin_info_json(p) for p in plugins])

    def plugin_config(plugin: str, request: Request) -> Response:
        version = request.query_params.get("version") or None
        return json_response([config_key_info_json(k) for k in herder.plugin_config(plugin, version)])

    def validate_config(plugin: str, body: JsonBody) -> Response:
        config = parse_config_map(require_body(body))
        included = config.get("connector.class")
        if included is not None and not _normalized_plugin_name(included).endswith(_normalized_plugin_name(plugin)):
            raise BadRequestError(f"Included connector type {included} does not match request type {plugin}")
        return json_response(config_infos_json(herder.validate_connector_config(config)))

    return [
        Endpoint("GET", "/connector-plugins", "listConnectorPlugins", connector_plugins),
        Endpoint("GET", "/connector-plugins/{plugin}/config", "getPluginConfig", plugin_config),
        Endpoint("PUT", "/connector-plugins/{plugin}/config/validate", "validateConnectorConfig", validate_config),
    ]
