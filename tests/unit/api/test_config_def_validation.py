"""ConfigDef.validate's Kafka semantics (dependents, recommenders, class names), embed,
documentation order, the Kafka 4.x list validator, and Connector.validate."""

from __future__ import annotations

from typing import Any

import pytest

from sluice.api import Config, ConnectError, Connector, Task
from sluice.api.config import (
    NO_DEFAULT,
    CompositeValidator,
    ConfigDef,
    ConfigKey,
    ConfigType,
    ConfigValue,
    Importance,
    LambdaValidator,
    NonNullValidator,
    Password,
    Range,
    Recommender,
    ValidList,
    Width,
    convert_to_string,
)
from sluice.api.errors import ConfigError


class Choices(Recommender):
    """Recommends by the parsed value of ``mode``; visible only when ``mode`` is on."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def valid_values(self, name: str, parsed: Any) -> list[Any]:
        self.calls.append(dict(parsed))
        return ["a", "b", "c"] if parsed.get("mode") == "on" else ["z"]

    def visible(self, name: str, parsed: Any) -> bool:
        return parsed.get("mode") == "on"


def test_recommenders_see_every_parsed_value_and_set_visibility() -> None:
    rec = Choices()
    cd = (
        ConfigDef()
        .define("choice", ConfigType.STRING, None, recommender=rec)  # defined before the key it reads
        .define("mode", ConfigType.STRING, "off", dependents=["choice"])
        .define("count", ConfigType.INT, 1)
    )
    values = cd.validate_all({"mode": "on", "count": "x"})
    assert list(values) == ["choice", "mode", "count"]
    assert values["choice"].recommended_values == ["a", "b", "c"] and values["choice"].visible
    # Recommenders run after everything is parsed: a value that failed to parse is None.
    assert rec.calls[-1] == {"mode": "on", "choice": None, "count": None}
    off = cd.validate_all({})["choice"]
    assert off.recommended_values == ["z"] and off.visible is False


def test_dependents_are_checked_after_their_parent_and_undefined_ones_are_reported() -> None:
    seen: list[str] = []

    def record(name: str, value: Any) -> None:
        seen.append(name)

    cd = (
        ConfigDef()
        .define("child", ConfigType.STRING, "c", LambdaValidator.with_(record, "records"))
        .define(
            "parent", ConfigType.STRING, "p", LambdaValidator.with_(record, "records"), dependents=["child", "ghost"]
        )
        .define("other", ConfigType.STRING, "o", LambdaValidator.with_(record, "records"))
    )
    seen.clear()  # define() checked each default
    values = cd.validate_all({})
    assert seen == ["parent", "child", "other"]
    ghost = values["ghost"]
    assert list(values)[-1] == "ghost"
    assert ghost.error_messages == ["ghost is referred in the dependents, but not defined."]
    assert ghost.visible is False and ghost.value is None
    with pytest.raises(
        ConfigError, match="Some configurations in are referred in the dependents, but not defined: ghost"
    ):
        cd.parse({})


def test_a_key_shared_by_two_parents_is_checked_twice_and_recommendations_intersect() -> None:
    class Rec(Recommender):
        def __init__(self) -> None:
            self.results = [["x", "y", "z"], ["y", "z", "w"]]

        def valid_values(self, name: str, parsed: Any) -> list[Any]:
            return self.results.pop(0)

    cd = (
        ConfigDef()
        .define("a", ConfigType.STRING, "a", dependents=["shared"])
        .define("b", ConfigType.STRING, "b", dependents=["shared"])
        .define("shared", ConfigType.INT, NO_DEFAULT, recommender=Rec())
    )
    shared = cd.validate_all({})["shared"]
    missing = 'Missing required configuration "shared" which has no default value.'
    assert shared.error_messages == [missing, missing]
    assert shared.recommended_values == ["y", "z"]


def test_a_dependency_cycle_does_not_recurse_forever() -> None:
    cd = (
        ConfigDef()
        .define("root", ConfigType.STRING, "r", dependents=["a"])
        .define("a", ConfigType.STRING, "a", dependents=["b"])
        .define("b", ConfigType.STRING, "b", dependents=["a"])
    )
    values = cd.validate_all({})
    assert values["a"].value == "a" and values["b"].value == "b"


def test_recommender_errors_become_errors_of_the_key() -> None:
    class Failing(Recommender):
        def valid_values(self, name: str, parsed: Any) -> list[Any]:
            raise ConfigError(name, "x", "cannot recommend")

    value = ConfigDef().define("k", ConfigType.STRING, "x", recommender=Failing()).validate_all({})["k"]
    assert value.error_messages == ["Invalid value x for configuration k: cannot recommend"]


def test_class_values_can_be_resolved() -> None:
    cd = ConfigDef().define("c", ConfigType.CLASS, None, importance=Importance.LOW)

    def resolve(name: str) -> str:
        if name == "Short":
            return "com.example.Short"
        raise LookupError(name)

    assert cd.validate_all({"c": " Short "}, class_resolver=resolve)["c"].value == "com.example.Short"
    missing = cd.validate_all({"c": "Nope"}, class_resolver=resolve)["c"]
    assert missing.value is None
    assert missing.error_messages == ["Invalid value Nope for configuration c: Class Nope could not be found."]
    assert cd.validate_all({"c": "Nope"})["c"].value == "Nope"  # no resolver: the name as given


def test_sorted_configs_is_kafkas_documentation_order() -> None:
    cd = (
        ConfigDef()
        .define("g2.b", ConfigType.STRING, "x", group="G2", order_in_group=2)
        .define("g1.a", ConfigType.STRING, "x", group="G1", order_in_group=1)
        .define("low", ConfigType.STRING, "x", importance=Importance.LOW)
        .define("high", ConfigType.STRING, "x", importance=Importance.HIGH)
        .define("required", ConfigType.STRING, importance=Importance.LOW)
        .define("g2.a", ConfigType.STRING, "x", group="G2", order_in_group=1)
        .define("alpha", ConfigType.STRING, "x", importance=Importance.HIGH)
    )
    assert [k.name for k in cd.sorted_configs()] == ["required", "alpha", "high", "low", "g2.a", "g2.b", "g1.a"]
    assert cd.groups() == ["G2", "G1"]


def test_embed_prefixes_names_groups_and_dependents() -> None:
    class Rec(Recommender):
        def valid_values(self, name: str, parsed: Any) -> list[Any]:
            return [f"{name}:{parsed.get('level')}"]

    def small(name: str, value: Any) -> None:
        if value is not None and value > 3:
            raise ConfigError(name, value, "too big")

    child = (
        ConfigDef()
        .define("level", ConfigType.INT, 1, small, Importance.HIGH, "Level.", dependents=["style"])
        .define(
            "style",
            ConfigType.STRING,
            None,
            importance=Importance.LOW,
            group="Look",
            order_in_group=1,
            width=Width.SHORT,
            display_name="Style",
            recommender=Rec(),
        )
    )
    parent = ConfigDef().define("top", ConfigType.STRING, "t", group="Top", order_in_group=1)
    parent.embed("x.", "Child", 5, child)
    keys = parent.config_keys()
    assert list(keys) == ["top", "x.level", "x.style"]
    assert (keys["x.level"].group, keys["x.level"].order_in_group, keys["x.level"].dependents) == (
        "Child",
        5,
        ["x.style"],
    )
    assert (keys["x.style"].group, keys["x.style"].order_in_group, keys["x.style"].display_name) == (
        "Child: Look",
        6,
        "Style",
    )
    assert keys["x.style"].width is Width.SHORT and keys["x.level"].documentation == "Level."
    assert parent.groups() == ["Top", "Child", "Child: Look"]
    values = parent.validate_all({"x.level": "7"})
    # validators see the name without the prefix, recommenders the values without it
    assert values["x.level"].error_messages == ["Invalid value 7 for configuration level: too big"]
    assert values["x.style"].recommended_values == ["style:7"]


def test_define_key_and_duplicates() -> None:
    key = ConfigKey("k", ConfigType.INT, 3, None, Importance.LOW, "doc")
    cd = ConfigDef().define_key(key)
    assert cd.config_key("k") is key and cd.groups() == []
    with pytest.raises(ConfigError, match="Configuration k is defined twice."):
        cd.define_key(key)


def test_valid_list_as_in_kafka_4() -> None:
    any_values = ValidList.any_non_duplicate_values(True, False)
    any_values("topics", [])
    any_values("topics", ["a", "b"])
    for value, message in [
        (["a", "a"], "Configuration 'topics' values must not be duplicated."),
        (["a", ""], "Configuration 'topics' values must not be empty."),
        (None, "Configuration 'topics' values must not be null."),
    ]:
        with pytest.raises(ConfigError) as info:
            any_values("topics", value)
        assert str(info.value) == message
    ValidList.any_non_duplicate_values(True, True)("x", None)
    with pytest.raises(
        ConfigError,
        match=r"^Configuration 'x' must not be empty\. Valid values include: any "
        r"non-empty value$",
    ):
        ValidList.any_non_duplicate_values(False, False)("x", [])
    with pytest.raises(ConfigError, match=r"^Configuration 'x' must not be empty\. Valid values include: \[a, b\]$"):
        ValidList.in_("a", "b", is_empty_allowed=False)("x", [])
    with pytest.raises(ValueError):
        ValidList.in_(is_empty_allowed=False)
    assert str(ValidList.in_("a", "b")) == "[a, b]" and str(any_values) == ""


def test_validator_descriptions() -> None:
    assert str(NonNullValidator()) == "non-null string"
    check = LambdaValidator.with_(lambda n, v: None, lambda: "described later")
    assert str(check) == "described later"
    assert str(CompositeValidator.of(NonNullValidator(), Range.at_least(1))) == "non-null string, [1,...]"


def test_untyped_values_render_as_java_does() -> None:
    assert convert_to_string(["a", "b"], None) == "[a, b]"
    assert convert_to_string(True, None) == "true"
    assert convert_to_string(Password("x"), None) == "[hidden]"
    assert convert_to_string(None, None) is None
    assert convert_to_string("v", None) == "v"


class _Task(Task):
    def start(self, props: dict[str, str]) -> None:
        pass

    def stop(self) -> None:
        pass


class _Connector(Connector):
    def start(self, props: dict[str, str]) -> None:
        pass

    def task_class(self) -> type[Task]:
        return _Task

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return []

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define("host", ConfigType.STRING, importance=Importance.HIGH)
            .define("port", ConfigType.INT, 80, Range.between(1, 65535), Importance.MEDIUM)
        )


class _CheckingConnector(_Connector):
    def validate(self, connector_configs: dict[str, str]) -> Config:
        result = super().validate(connector_configs)
        values = {v.name: v for v in result.config_values}
        if values["host"].value == "localhost" and values["port"].value == 80:
            values["port"].add_error_message("port 80 is reserved on localhost")
        return result


def test_connector_validate_default_checks_its_config() -> None:
    result = _Connector().validate({"port": "0", "unrelated": "x"})
    values = {v.name: v for v in result.config_values}
    assert list(values) == ["host", "port"]
    assert values["host"].error_messages == ['Missing required configuration "host" which has no default value.']
    assert values["port"].error_messages == ["Invalid value 0 for configuration port: Value must be at least 1"]


def test_connector_validate_can_be_overridden() -> None:
    assert all(not v.error_messages for v in _CheckingConnector().validate({"host": "example.org"}).config_values)
    values = {v.name: v for v in _CheckingConnector().validate({"host": "localhost"}).config_values}
    assert values["port"].error_messages == ["port 80 is reserved on localhost"]


def test_connector_validate_needs_a_config_def() -> None:
    class NoConfig(_Connector):
        def config(self) -> ConfigDef:
            return None  # type: ignore[return-value]

    with pytest.raises(ConnectError, match=r"NoConfig\.config\(\) must return a ConfigDef that is not null\."):
        NoConfig().validate({})


def test_config_value_defaults() -> None:
    value = ConfigValue("k")
    assert (value.value, value.recommended_values, value.error_messages, value.visible) == (None, [], [], True)
