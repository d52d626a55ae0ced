"""Sluice's validate and plugin-config answers against Apache Kafka Connect 4.3.1's own.

``fixtures/kafka_connect_validate.json`` holds what the real Kafka Connect answered
(``fixtures/capture_kafka_validate.py`` regenerates it). Each request is replayed against
Sluice and the answers must be equal — names and order of the keys, groups, error
counts, every definition field but the documentation (Sluice writes its own), and every
value — after these adjustments, each for a stated reason:

* versions: Kafka's plugins are 4.3.1, Sluice's built-ins carry Sluice's version and
  the test transformations none;
* Kafka's transformations and predicate are replaced by look-alike test plugins
  (``tests/plugins/sluice_test_transforms.py``) with the same definitions;
* the classes recommended for a converter or a transformation type are the installed
  plugins, which differ (checked on their own below);
* Sluice refuses transforms, predicates, dead letter queues, ``errors.tolerance=all`` and
  topic creation with an extra error until its data path supports them; those errors
  are taken out before comparing (and tested in ``test_validation.py``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from sluice.converters.json import JsonConverter
from sluice.rest.entities import config_infos_json, config_key_info_json
from sluice.runtime.config import WorkerConfig
from sluice.runtime.herder.base import BadRequestError
from sluice.runtime.herder.validation import plugin_config_info, validate_connector_config
from sluice.runtime.plugins import Plugins

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "kafka_connect_validate.json").read_text())
KAFKA_VERSION = FIXTURE["kafka_version"]
PLUGINS_DIR = Path(__file__).resolve().parents[2] / "plugins"

# Kafka's plugin -> the test plugin with the same configuration definitions.
TEST_PLUGINS = {
    "org.apache.kafka.connect.transforms.InsertField$Value": "sluice_test_transforms.TestInsertField",
    "org.apache.kafka.connect.transforms.RegexRouter": "sluice_test_transforms.TestRegexRouter",
    "org.apache.kafka.connect.transforms.predicates.TopicNameMatches": "sluice_test_transforms.TestTopicNameMatches",
}
TEST_ALIASES = {"RegexRouter": "TestRegexRouter", "TopicNameMatches": "TestTopicNameMatches"}
_KAFKA_NAMES = re.compile("|".join(re.escape(name) for name in TEST_PLUGINS))

PLUGIN_LIST = "<installed plugins>"


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return Plugins(plugin_path=[str(PLUGINS_DIR)])


@pytest.fixture(scope="module")
def worker() -> WorkerConfig:
    return WorkerConfig.standalone({**FIXTURE["worker"], "offset.storage.file.filename": "/tmp/unused.offsets"})


def _sluice_version(plugins: Plugins) -> str | None:
    return plugins.resolve_connector("FileStreamSink").version


def _json_converter_gaps() -> set[str]:
    """Keys of Kafka's JsonConverter that Sluice's does not define yet."""
    kafka_keys = {k["name"] for k in FIXTURE["plugin_config"]["JsonConverter"]["response"]}
    return kafka_keys - set(JsonConverter().config().names())


def _request(body: dict[str, Any], version: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in body.items():
        if isinstance(value, str):
            value = TEST_PLUGINS.get(value, TEST_ALIASES.get(value, value))
            if key.endswith("plugin.version") and value == KAFKA_VERSION:
                value = version
        out[key] = value
    return out


def _strings(value: Any, fn) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _strings(v, fn) for k, v in value.items()}
    return value


def _is_test_plugin_version(name: str) -> bool:
    return name.startswith(("transforms.", "predicates.")) and name.endswith(".plugin.version")


def _expected(case: dict[str, Any], version: str | None) -> dict[str, Any]:
    infos = _strings(case["response"], lambda s: _KAFKA_NAMES.sub(lambda m: TEST_PLUGINS[m.group(0)], s))
    request = case["request"]
    gaps = {prefix + key for key in _json_converter_gaps() for prefix in ("key.converter.", "value.converter.")}
    configs = []
    for entry in infos["configs"]:
        definition, value = entry["definition"], entry["value"]
        name = (definition or value)["name"]
        if name in gaps:
            continue
        if _is_test_plugin_version(name):
            # The test plugins have no version: no default, nothing to recommend.
            if definition is not None:
                definition = {**definition, "default_value": None}
            if value is not None:
                value = {**value, "value": request.get(name), "recommended_values": []}
        else:
            entry = _strings(entry, lambda s: s.replace(KAFKA_VERSION, version or ""))
            definition, value = entry["definition"], entry["value"]
        configs.append({"definition": definition, "value": value})
    infos["configs"] = configs
    return infos


def _normalize(infos: dict[str, Any]) -> dict[str, Any]:
    configs = []
    for entry in infos["configs"]:
        definition = dict(entry["definition"]) if entry["definition"] else None
        value = dict(entry["value"]) if entry["value"] else None
        if definition is not None:
            definition.pop("documentation", None)
            if definition["type"] == "CLASS" and value is not None:
                value["recommended_values"] = PLUGIN_LIST
        configs.append({"definition": definition, "value": value})
    return {**infos, "configs": configs}


@pytest.mark.parametrize("case_name", sorted(FIXTURE["validate"]))
def test_validate_answers_like_kafka_connect(case_name: str, plugins: Plugins, worker: WorkerConfig) -> None:
    case = FIXTURE["validate"][case_name]
    assert case["status"] == 200
    version = _sluice_version(plugins)
    ours = config_infos_json(validate_connector_config(plugins, _request(case["request"], version), worker))
    expected = _normalize(_expected(case, version))
    actual = _normalize(ours)

    def names(infos: dict[str, Any]) -> list[str]:
        return [(c["definition"] or c["value"])["name"] for c in infos["configs"]]

    assert actual["name"] == expected["name"]
    assert names(actual) == names(expected)
    assert actual["groups"] == expected["groups"]
    for mine, theirs in zip(actual["configs"], expected["configs"], strict=True):
        assert mine == theirs
    assert actual["error_count"] == expected["error_count"]


def test_recommended_classes_are_the_installed_plugins(plugins: Plugins, worker: WorkerConfig) -> None:
    case = FIXTURE["validate"]["sink_transforms"]
    infos = validate_connector_config(plugins, _request(case["request"], None), worker)
    recommended = {c.value.name: c.value.recommended_values for c in infos.configs if c.value}

    def installed(kind: str) -> list[str]:
        return sorted({d.class_name for d in plugins.all() if d.type == kind})

    assert recommended["key.converter"] == recommended["value.converter"] == installed("converter")
    assert "org.apache.kafka.connect.json.JsonConverter" in recommended["key.converter"]
    assert recommended["header.converter"] == installed("header_converter")
    assert recommended["transforms.t1.type"] == installed("transformation")
    assert "sluice_test_transforms.TestRegexRouter" in recommended["transforms.t1.type"]
    assert recommended["predicates.p1.type"] == installed("predicate")


@pytest.mark.parametrize("plugin", sorted(FIXTURE["plugin_config"]))
def test_plugin_config_answers_like_kafka_connect(plugin: str, plugins: Plugins) -> None:
    case = FIXTURE["plugin_config"][plugin]
    version = _sluice_version(plugins)
    if case["status"] != 200:
        from sluice.api.errors import NotFoundError

        expected_error = NotFoundError if case["status"] == 404 else BadRequestError
        with pytest.raises(expected_error) as info:
            plugin_config_info(plugins, plugin)
        assert str(info.value) == case["response"]["message"]
        return
    gaps = _json_converter_gaps() if "JsonConverter" in plugin else set()
    expected = [
        _strings(k, lambda s: s.replace(KAFKA_VERSION, version or ""))
        for k in case["response"]
        if k["name"] not in gaps
    ]
    actual = [config_key_info_json(k) for k in plugin_config_info(plugins, plugin)]
    for key in actual:
        key.pop("documentation")
    assert actual == expected
