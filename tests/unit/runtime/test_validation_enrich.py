"""Validation beyond the Kafka replay: transform/predicate enrichment with Sluice's own
test plugins, passwords, a connector's own ``validate()``, converter and client override
sub-results, plugin versions and ``GET /connector-plugins/{plugin}/config``."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from sluice.api.errors import NotFoundError
from sluice.rest.entities import config_infos_json
from sluice.runtime.config import VersionRange, WorkerConfig, version_mismatch_message
from sluice.runtime.herder.base import BadRequestError, ConfigInfos
from sluice.runtime.herder.validation import (
    java_hash_map_order,
    plugin_config_info,
    validate_connector_config,
)
from sluice.runtime.plugins import Plugins

PLUGINS_DIR = Path(__file__).resolve().parents[2] / "plugins"
SINK = {"connector.class": "FileStreamSink", "name": "snk", "topics": "t"}
SOURCE = {"connector.class": "FileStreamSource", "name": "src", "topic": "t"}
SECRET = "s3cr3t-Value"


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return Plugins(plugin_path=[str(PLUGINS_DIR)])


def _worker(**extra: str) -> WorkerConfig:
    return WorkerConfig.standalone(
        {
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "offset.storage.file.filename": "/tmp/unused.offsets",
            **extra,
        }
    )


def _by_name(infos: ConfigInfos) -> dict[str, object]:
    return {(c.definition or c.value).name: c for c in infos.configs}  # type: ignore[union-attr]


def _names(infos: ConfigInfos) -> list[str]:
    return [(c.definition or c.value).name for c in infos.configs]  # type: ignore[union-attr]


# --------------------------------------------------------------------------- transforms


def test_transform_alias_lists_type_version_negate_predicate_and_its_own_keys(plugins: Plugins) -> None:
    infos = validate_connector_config(
        plugins,
        {
            **SINK,
            "transforms": "t1",
            "transforms.t1.type": "sluice_test_transforms.TestRegexRouter",
            "transforms.t1.regex": "a.*",
            "transforms.t1.replacement": "b",
        },
        _worker(),
    )
    t1 = [n for n in _names(infos) if n.startswith("transforms.t1.")]
    assert t1 == [
        "transforms.t1.type",
        "transforms.t1.plugin.version",
        "transforms.t1.regex",
        "transforms.t1.replacement",
        "transforms.t1.negate",
        "transforms.t1.predicate",
    ]
    configs = _by_name(infos)
    assert [configs[n].definition.order for n in t1] == [0, 1, 2, 3, 4, 5]
    assert {configs[n].definition.group for n in t1} == {"Transforms: t1"}
    type_key = configs["transforms.t1.type"].definition
    assert (type_key.type, type_key.required, type_key.importance, type_key.width, type_key.display_name) == (
        "CLASS",
        True,
        "HIGH",
        "LONG",
        "Transformation type for t1",
    )
    negate = configs["transforms.t1.negate"]
    assert (negate.definition.type, negate.definition.default_value) == ("BOOLEAN", "false")
    assert negate.value.value == "false"
    assert configs["transforms.t1.regex"].value.value == "a.*"
    assert "Transforms: t1" in infos.groups
    # The connector's own keys come after the enriched ones.
    assert _names(infos)[-1] == "file"
    assert infos.error_count == 0


def test_simple_name_resolves_and_value_shows_the_class(plugins: Plugins) -> None:
    infos = validate_connector_config(
        plugins,
        {
            **SINK,
            "transforms": "t1",
            "transforms.t1.type": "TestRegexRouter",
            "transforms.t1.regex": "x",
            "transforms.t1.replacement": "y",
        },
        _worker(),
    )
    assert _by_name(infos)["transforms.t1.type"].value.value == "sluice_test_transforms.TestRegexRouter"


def test_transform_keys_keep_groups_widths_dependents_and_recommenders(plugins: Plugins) -> None:
    infos = validate_connector_config(
        plugins,
        {
            **SINK,
            "transforms": "s",
            "transforms.s.type": "sluice_test_transforms.TestSecretHeader",
            "transforms.s.auth.mode": "token",
            "transforms.s.auth.secret": SECRET,
        },
        _worker(),
    )
    names = [n for n in _names(infos) if n.startswith("transforms.s.")]
    # Sorted as Kafka's ConfigDef.embed does: ungrouped keys first (required first, then
    # by importance and name), then the plugin's groups; the plugin's own 'predicate' is masked.
    assert names == [
        "transforms.s.type",
        "transforms.s.plugin.version",
        "transforms.s.negate",
        "transforms.s.predicate",
        "transforms.s.header",
        "transforms.s.auth.mode",
        "transforms.s.auth.secret",
    ]
    configs = _by_name(infos)
    assert configs["transforms.s.predicate"].definition.type == "STRING"  # the framework's, not the plugin's INT
    mode = configs["transforms.s.auth.mode"]
    assert mode.definition.group == "Transforms: s: Auth"
    assert mode.definition.width == "SHORT" and mode.definition.display_name == "Auth mode"
    assert mode.definition.dependents == ["transforms.s.auth.secret"]
    assert mode.value.recommended_values == ["basic", "token"]
    secret = configs["transforms.s.auth.secret"]
    assert secret.definition.type == "PASSWORD" and secret.value.value == "[hidden]" and secret.value.visible
    assert infos.groups[-2:] == ["Transforms: s", "Transforms: s: Auth"]
    hidden = validate_connector_config(
        plugins,
        {
            **SINK,
            "transforms": "s",
            "transforms.s.type": "sluice_test_transforms.TestSecretHeader",
        },
        _worker(),
    )
    assert _by_name(hidden)["transforms.s.auth.secret"].value.visible is False


def test_transform_problems_are_reported_on_the_type_key(plugins: Plugins) -> None:
    cases = {
        "sluice_test_transforms.NoSuchTransform": "Invalid value sluice_test_transforms.NoSuchTransform for "
        "configuration transforms.t1.type: Class sluice_test_transforms.NoSuchTransform could not be found.",
        "sluice_test_transforms.TestTopicNameMatches": "Class class sluice_test_transforms.TestTopicNameMatches "
        "does not implement the Transformation interface",
        "sluice_test_transforms.BrokenConfigTransform": "Invalid value sluice_test_transforms.BrokenConfigTransform "
        "for configuration transforms.t1.type: Error getting config definition from Transformation: no config today",
    }
    for type_name, message in cases.items():
        infos = validate_connector_config(
            plugins, {**SINK, "transforms": "t1", "transforms.t1.type": type_name}, _worker()
        )
        assert _by_name(infos)["transforms.t1.type"].value.errors == [message], type_name
        # Without a usable plugin only the type and version keys are listed.
        assert [n for n in _names(infos) if n.startswith("transforms.t1.")] == [
            "transforms.t1.type",
            "transforms.t1.plugin.version",
        ]


def test_predicate_alias_is_enriched(plugins: Plugins) -> None:
    infos = validate_connector_config(
        plugins,
        {
            **SINK,
            "transforms": "t1",
            "transforms.t1.type": "TestRegexRouter",
            "transforms.t1.regex": "a",
            "transforms.t1.replacement": "b",
            "transforms.t1.predicate": "p",
            "transforms.t1.negate": "true",
            "predicates": "p",
            "predicates.p.type": "TestTopicNameMatches",
        },
        _worker(),
    )
    configs = _by_name(infos)
    assert [n for n in _names(infos) if n.startswith("predicates.p.")] == [
        "predicates.p.type",
        "predicates.p.plugin.version",
        "predicates.p.pattern",
    ]
    assert configs["predicates.p.type"].definition.display_name == "Predicate type for p"
    assert configs["predicates.p.pattern"].value.errors == [
        'Missing required configuration "predicates.p.pattern" which has no default value.',
        'Invalid value null for configuration pattern: Invalid regex: Cannot invoke "String.isEmpty()" because '
        '"this.pattern" is null',
    ]
    assert configs["transforms.t1.type"].value.errors == []  # negate comes with a predicate
    assert infos.groups[-2:] == ["Transforms: t1", "Predicates: p"]


# --------------------------------------------------------------------------- passwords


def test_passwords_never_appear_in_the_answer_nor_the_logs(plugins: Plugins, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    config = {
        "connector.class": "sluice_test_transforms.ValidatingSinkConnector",
        "name": "v",
        "topics": "t",
        "path": "/tmp/x",
        "token": SECRET,
        "producer.override.ssl.key.password": SECRET,
        "errors.deadletterqueue.topic.name": "dlq",
        "transforms": "s",
        "transforms.s.type": "sluice_test_transforms.TestSecretHeader",
        "transforms.s.auth.secret": SECRET,
        "transforms.s.auth.mode": "basic",
    }
    infos = validate_connector_config(plugins, config, _worker())
    text = json.dumps(config_infos_json(infos))
    assert SECRET not in text
    configs = _by_name(infos)
    assert configs["token"].value.value == "[hidden]"
    assert configs["producer.override.ssl.key.password"].value.value == "[hidden]"
    assert SECRET not in caplog.text


# --------------------------------------------------------------------------- Connector.validate


def test_connector_validate_override_adds_errors_and_undefined_values(plugins: Plugins) -> None:
    base = {"connector.class": "sluice_test_transforms.ValidatingSinkConnector", "name": "v", "topics": "t"}
    ok = validate_connector_config(plugins, {**base, "path": "/tmp/out"}, _worker())
    assert ok.error_count == 0
    assert _names(ok)[-3:] == ["path", "mode", "token"]
    bad = validate_connector_config(
        plugins, {**base, "path": "/tmp/out", "mode": "strict", "legacy.option": "1"}, _worker()
    )
    assert bad.error_count == 2
    assert _by_name(bad)["path"].value.errors == ["mode=strict needs a path ending in .txt"]
    # A value the connector reports for a key it does not define comes first, without a definition.
    assert bad.configs[0].definition is None
    assert bad.configs[0].value.name == "legacy.option" and bad.configs[0].value.value == "1"
    assert bad.configs[0].value.errors == ["legacy.option is no longer supported"]
    missing = validate_connector_config(plugins, base, _worker())
    assert _by_name(missing)["path"].value.errors == [
        'Missing required configuration "path" which has no default value.'
    ]


# --------------------------------------------------------------------------- sub-results


def test_converter_keys_are_shown_with_their_prefix(plugins: Plugins) -> None:
    infos = validate_connector_config(
        plugins,
        {
            **SINK,
            "value.converter": "StringConverter",
            "value.converter.converter.encoding": "UTF-16",
        },
        _worker(),
    )
    configs = _by_name(infos)
    assert _names(infos)[-2:] == ["value.converter.converter.type", "value.converter.converter.encoding"]
    assert configs["value.converter.converter.type"].value.value == "value"
    assert configs["value.converter.converter.encoding"].value.value == "UTF-16"
    assert configs["value.converter.converter.encoding"].definition.display_name == "Encoding"


def test_client_override_policy(plugins: Plugins) -> None:
    config = {**SOURCE, "producer.override.acks": "1", "producer.override.sasl.mechanism": "PLAIN"}
    assert validate_connector_config(plugins, config, _worker()).error_count == 0
    none = validate_connector_config(plugins, config, _worker(**{"connector.client.config.override.policy": "None"}))
    assert none.error_count == 2  # one per value that has errors
    assert _by_name(none)["producer.override.acks"].value.errors == [
        "The 'None' policy does not allow 'acks' to be overridden in the connector configuration."
    ]
    principal = validate_connector_config(
        plugins,
        config,
        _worker(
            **{
                "connector.client.config.override.policy": (
                    "org.apache.kafka.connect.connector.policy.PrincipalConnectorClientConfigOverridePolicy"
                )
            }
        ),
    )
    assert _by_name(principal)["producer.override.sasl.mechanism"].value.errors == []
    assert principal.error_count == 1
    allow = validate_connector_config(
        plugins,
        config,
        _worker(
            **{
                "connector.client.config.override.policy": "Allowlist",
                "connector.client.config.override.allowlist": "acks, linger.ms",
            }
        ),
    )
    assert [e for c in allow.configs if c.value for e in c.value.errors] == [
        "The 'Allowlist' policy does not allow 'sasl.mechanism' to be overridden in the connector configuration."
    ]


def test_client_override_that_does_not_parse_is_a_bad_request(plugins: Plugins) -> None:
    with pytest.raises(
        BadRequestError, match="Invalid value abc for configuration linger.ms: Not a number of type LONG"
    ):
        validate_connector_config(plugins, {**SOURCE, "producer.override.linger.ms": "abc"}, _worker())


def test_without_a_worker_config_converters_have_no_defaults(plugins: Plugins) -> None:
    infos = validate_connector_config(plugins, SINK)
    configs = _by_name(infos)
    assert configs["key.converter"].definition.default_value is None
    assert configs["key.converter"].value.value is None
    assert configs["header.converter.plugin.version"].definition.default_value is None
    assert infos.error_count == 0


# --------------------------------------------------------------------------- versions


def test_plugin_versions(plugins: Plugins) -> None:
    version = plugins.resolve_connector("FileStreamSink").version
    assert version
    configs = _by_name(validate_connector_config(plugins, SINK, _worker()))
    assert configs["connector.plugin.version"].definition.default_value == version
    assert configs["connector.plugin.version"].value.recommended_values == [version]
    wrong = validate_connector_config(plugins, {**SINK, "connector.plugin.version": "9.9"}, _worker())
    message = (
        f"Plugin org.apache.kafka.connect.file.FileStreamSinkConnector not found that matches the version "
        f"range [9.9,9.9], available versions: [{version}]"
    )
    assert _by_name(wrong)["connector.class"].value.errors == [message]
    assert _by_name(wrong)["connector.plugin.version"].value.errors == [message]
    garbage = validate_connector_config(plugins, {**SINK, "connector.plugin.version": "[1,"}, _worker())
    assert _by_name(garbage)["connector.plugin.version"].value.errors == [
        "Invalid value [1, for configuration connector.plugin.version: Unbounded range: [1,"
    ]
    converter = validate_connector_config(
        plugins,
        {**SINK, "value.converter": "StringConverter", "value.converter.plugin.version": f"[{version},)"},
        _worker(),
    )
    assert converter.error_count == 0


def test_version_ranges() -> None:
    assert VersionRange("1.0").contains("1.0") and VersionRange("1.0").contains("1")
    assert not VersionRange("1.0").contains("1.0.1")
    assert str(VersionRange("1.0")) == "[1.0,1.0]" and str(VersionRange("[1.0]")) == "[1.0,1.0]"
    r = VersionRange("[1.0,2.0)")
    assert r.contains("1.0") and r.contains("1.9.9") and not r.contains("2.0") and str(r) == "[1.0,2.0)"
    assert VersionRange("(,1.0],[1.2,)").contains("0.1") and not VersionRange("(,1.0],[1.2,)").contains("1.1")
    assert VersionRange("[1.0,)").contains("10.0") and not VersionRange("[1.0,)").contains("0.9")
    assert VersionRange("[1.0-SNAPSHOT,1.0]").contains("1.0-SNAPSHOT")
    for bad, message in [
        ("[1,", "Unbounded range: [1,"),
        ("(1.0)", "Single version must be surrounded by []"),
        ("[2,1]", "Range defies version ordering"),
    ]:
        with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
            VersionRange(bad)
    assert version_mismatch_message("C", "[1,2)", "1.5") is None
    assert version_mismatch_message("C", "3", "1.5") == (
        "Plugin C not found that matches the version range [3,3], available versions: [1.5]"
    )


# --------------------------------------------------------------------------- plugin config


def test_plugin_config_of_transformations_and_errors(plugins: Plugins) -> None:
    keys = plugin_config_info(plugins, "sluice_test_transforms.TestSecretHeader")
    assert [k.name for k in keys] == ["header", "auth.mode", "auth.secret", "predicate"]
    assert keys[1].group == "Auth" and keys[1].dependents == ["auth.secret"]
    assert [k.name for k in plugin_config_info(plugins, "TestTopicNameMatches")] == ["pattern"]
    with pytest.raises(NotFoundError, match=r"^Unknown plugin nope\.$"):
        plugin_config_info(plugins, "nope")
    with pytest.raises(
        BadRequestError,
        match=r"^Invalid plugin class sluice.providers.file.FileConfigProvider\. "
        r"Valid types are sink, source, converter, header_converter, "
        r"transformation, predicate\.$",
    ):
        plugin_config_info(plugins, "sluice.providers.file.FileConfigProvider")


def test_plugin_config_of_a_connector_puts_its_own_keys_first(plugins: Plugins) -> None:
    keys = plugin_config_info(plugins, "ValidatingSinkConnector")
    names = [k.name for k in keys]
    assert names[:4] == ["path", "mode", "token", "name"]
    assert names[-5:] == [
        "topics",
        "topics.regex",
        "errors.deadletterqueue.topic.name",
        "errors.deadletterqueue.topic.replication.factor",
        "errors.deadletterqueue.context.headers.enable",
    ]
    assert next(k for k in keys if k.name == "token").type == "PASSWORD"


# --------------------------------------------------------------------------- Java HashMap order


def test_java_hash_map_order_matches_kafka() -> None:
    # Orders observed in Kafka Connect 4.3.1's validate answers (JsonConverter's keys, a
    # producer override set).
    assert java_hash_map_order(
        [
            "converter.type",
            "schemas.enable",
            "schemas.cache.size",
            "schema.content",
            "decimal.format",
            "replace.null.with.default",
        ]
    ) == [
        "decimal.format",
        "converter.type",
        "schemas.cache.size",
        "replace.null.with.default",
        "schemas.enable",
        "schema.content",
    ]
    assert java_hash_map_order(
        ["acks", "linger.ms", "bogus.key", "compression.type", "sasl.jaas.config", "ssl.key.password"]
    ) == ["compression.type", "bogus.key", "ssl.key.password", "acks", "sasl.jaas.config", "linger.ms"]
    assert java_hash_map_order(["converter.type", "converter.encoding"]) == ["converter.type", "converter.encoding"]
    many = [f"key{i}" for i in range(40)]
    assert sorted(java_hash_map_order(many)) == sorted(many)


def test_a_config_without_class_is_refused_without_showing_secrets(plugins: Plugins) -> None:
    with pytest.raises(BadRequestError) as info:
        validate_connector_config(plugins, {"name": "x", "db.password": SECRET, "topics": "t"})
    assert str(info.value) == "Connector config {name=x, db.password=[hidden], topics=t} contains no connector type"
