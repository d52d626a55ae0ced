"""Connector config validation shared by every herder (``AbstractHerder.validateConnectorConfig``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sluice.api.config import ConfigDef, ConfigKey, ConfigValue, convert_to_string
from sluice.api.connector import Connector
from sluice.runtime.config import ConnectorConfigDefs
from sluice.runtime.herder.base import (
    BadRequestError,
    ConfigInfo,
    ConfigInfos,
    ConfigKeyInfo,
    ConfigValueInfo,
)
from sluice.runtime.plugins import PluginDesc, Plugins

__all__ = ["config_key_info", "invalid_config_message", "java_map_string", "validate_connector_config"]


def java_map_string(config: Mapping[str, Any]) -> str:
    """``{k=v, k2=v2}``, the way Java prints a map (used in Kafka's error messages)."""
    return "{" + ", ".join(f"{k}={v}" for k, v in config.items()) + "}"


def config_key_info(key: ConfigKey) -> ConfigKeyInfo:
    return ConfigKeyInfo(
        name=key.name,
        type=key.type.value,
        required=not key.has_default,
        default_value=None if not key.has_default else convert_to_string(key.default_value, key.type),
        importance=key.importance.value,
        documentation=key.documentation,
        group=key.group,
        order=key.order_in_group,
        width=key.width.value,
        display_name=key.display_name or key.name,
        dependents=list(key.dependents),
    )


def _value_info(value: ConfigValue, key: ConfigKey | None) -> ConfigValueInfo:
    kind = key.type if key else None
    rendered = value.value if isinstance(value.value, str) and kind is None else convert_to_string(value.value, kind)
    return ConfigValueInfo(
        name=value.name,
        value=rendered,
        recommended_values=[str(convert_to_string(v, kind)) for v in value.recommended_values],
        errors=list(value.error_messages),
        visible=value.visible,
    )


def _sink_checks(config: Mapping[str, str], values: dict[str, ConfigValue]) -> None:
    topics = (config.get("topics") or "").strip()
    regex = (config.get("topics.regex") or "").strip()
    if topics and regex:
        message = "topics and topics.regex are mutually exclusive options, but both are set."
    elif not topics and not regex:
        message = "Must configure one of topics or topics.regex"
    else:
        message = None
    if message:
        for key in ("topics", "topics.regex"):
            values[key].add_error_message(message)
    if regex:
        try:
            re.compile(regex)
        except re.error as exc:
            values["topics.regex"].add_error_message(
                f"Invalid value {regex} for configuration topics.regex: {exc}"
            )
    dlq = (config.get("errors.deadletterqueue.topic.name") or "").strip()
    if dlq:
        listed = [t.strip() for t in topics.split(",") if t.strip()]
        if dlq in listed or (regex and re.fullmatch(regex, dlq)):
            values["errors.deadletterqueue.topic.name"].add_error_message(
                f"The DLQ topic '{dlq}' may not be included in the list of topics ('topics'='{topics}') "
                "or match the topics regex to be consumed"
            )


# Features whose keys Kafka accepts but that this version does not implement yet: a
# config using them is refused rather than run without them (docs/compatibility.md).
NOT_YET_SUPPORTED = "is not supported by this version of Sluice yet"


def _unsupported_checks(config: Mapping[str, str], values: dict[str, ConfigValue]) -> None:
    def refuse(key: str, what: str) -> None:
        if key in values:
            values[key].add_error_message(f"{what} {NOT_YET_SUPPORTED}")

    if (config.get("transforms") or "").strip():
        refuse("transforms", "Applying transforms")
    if (config.get("predicates") or "").strip():
        refuse("predicates", "Applying predicates")
    if (config.get("errors.tolerance") or "none").strip() == "all":
        refuse("errors.tolerance", "errors.tolerance=all")
    if (config.get("errors.deadletterqueue.topic.name") or "").strip():
        refuse("errors.deadletterqueue.topic.name", "A dead letter queue")
    if any(k.startswith("topic.creation.") for k in config):
        refuse("topic.creation.groups", "Topic creation (topic.creation.*)")


def resolve_connector_class(plugins: Plugins, config: Mapping[str, str]) -> PluginDesc:
    connector_class = config.get("connector.class")
    if connector_class is None or not str(connector_class).strip():
        raise BadRequestError(f"Connector config {java_map_string(config)} contains no connector type")
    try:
        return plugins.resolve_connector(connector_class)
    except Exception as exc:
        # Kafka answers 500 here; an unknown class is a client mistake, so 400 (docs/compatibility.md).
        raise BadRequestError(str(exc)) from exc


def validate_connector_config(plugins: Plugins, config: Mapping[str, str]) -> ConfigInfos:
    desc = resolve_connector_class(plugins, config)
    connector: Connector = desc.cls()
    framework: ConfigDef = ConnectorConfigDefs.for_type(desc.type)
    framework_values = {v.name: v for v in framework.validate(config)}
    if desc.type == "sink":
        _sink_checks(config, framework_values)
    _unsupported_checks(config, framework_values)
    own_def = connector.config()
    own_result = connector.validate(dict(config))
    own_values = {v.name: v for v in own_result.config_values}

    groups = list(ConnectorConfigDefs.SINK_GROUPS if desc.type == "sink" else ConnectorConfigDefs.SOURCE_GROUPS)
    for group in own_def.groups():
        if group not in groups:
            groups.append(group)

    infos: list[ConfigInfo] = []
    error_count = 0
    framework_keys = framework.config_keys()
    own_keys = own_def.config_keys()
    for name, key in framework_keys.items():
        if name in own_keys:
            continue  # the connector's own definition wins on a clash
        value = framework_values[name]
        error_count += len(value.error_messages)
        infos.append(ConfigInfo(config_key_info(key), _value_info(value, key)))
    for name, key in own_keys.items():
        value = own_values.get(name, ConfigValue(name))
        error_count += len(value.error_messages)
        infos.append(ConfigInfo(config_key_info(key), _value_info(value, key)))
    for name, value in own_values.items():
        if name not in own_keys and value.error_messages:
            error_count += len(value.error_messages)
            infos.append(ConfigInfo(None, _value_info(value, None)))
    return ConfigInfos(name=str(config.get("connector.class")), error_count=error_count, groups=groups, configs=infos)


def invalid_config_message(infos: ConfigInfos) -> str:
    errors = [e for info in infos.configs if info.value for e in info.value.errors]
    return (
        f"Connector configuration is invalid and contains the following {len(errors)} error(s):\n"
        + "".join(f"{e}\n" for e in errors)
        + "You can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`"
    )
