"""ConfigDef: parsing, defaults, required keys, validators and their Kafka messages."""

from __future__ import annotations

import pytest

from sluice.api.config import (
    NO_DEFAULT,
    CaseInsensitiveValidString,
    CompositeValidator,
    ConfigDef,
    ConfigType,
    Importance,
    NonEmptyString,
    NonEmptyStringWithoutControlChars,
    Password,
    Range,
    Recommender,
    ValidList,
    ValidString,
    Width,
    convert_to_string,
    parse_type,
)
from sluice.api.errors import ConfigError


@pytest.mark.parametrize(
    ("raw", "type_", "expected"),
    [
        (" true ", ConfigType.BOOLEAN, True),
        ("FALSE", ConfigType.BOOLEAN, False),
        (True, ConfigType.BOOLEAN, True),
        ("  hello ", ConfigType.STRING, "hello"),
        ("42", ConfigType.INT, 42),
        ("+7", ConfigType.INT, 7),
        ("-32768", ConfigType.SHORT, -32768),
        ("9223372036854775807", ConfigType.LONG, 2**63 - 1),
        (5, ConfigType.LONG, 5),
        ("1.5", ConfigType.DOUBLE, 1.5),
        ("1e3", ConfigType.DOUBLE, 1000.0),
        (2, ConfigType.DOUBLE, 2.0),
        ("a, b ,c", ConfigType.LIST, ["a", "b", "c"]),
        ("", ConfigType.LIST, []),
        ("  ", ConfigType.LIST, []),
        ("a,b,", ConfigType.LIST, ["a", "b", ""]),
        (["x"], ConfigType.LIST, ["x"]),
        (" com.example.Foo ", ConfigType.CLASS, "com.example.Foo"),
        (None, ConfigType.INT, None),
    ],
)
def test_parse_type(raw, type_, expected) -> None:
    assert parse_type("k", raw, type_) == expected


@pytest.mark.parametrize(
    ("raw", "type_", "message"),
    [
        ("yes", ConfigType.BOOLEAN, "Invalid value yes for configuration k: Expected value to be either true or false"),
        ("abc", ConfigType.INT, "Invalid value abc for configuration k: Not a number of type INT"),
        ("2147483648", ConfigType.INT, "Invalid value 2147483648 for configuration k: Not a number of type INT"),
        ("40000", ConfigType.SHORT, "Invalid value 40000 for configuration k: Not a number of type SHORT"),
        ("1.5", ConfigType.LONG, "Invalid value 1.5 for configuration k: Not a number of type LONG"),
        ("x1", ConfigType.DOUBLE, "Invalid value x1 for configuration k: Not a number of type DOUBLE"),
        (
            True,
            ConfigType.INT,
            "Invalid value true for configuration k: Expected value to be a 32-bit integer, "
            "but it was a java.lang.Boolean",
        ),
        (
            5,
            ConfigType.STRING,
            "Invalid value 5 for configuration k: Expected value to be a string, but it was a java.lang.Integer",
        ),
        (5, ConfigType.LIST, "Invalid value 5 for configuration k: Expected a comma separated list."),
    ],
)
def test_parse_type_errors(raw, type_, message) -> None:
    with pytest.raises(ConfigError) as info:
        parse_type("k", raw, type_)
    assert str(info.value) == message


def test_password_is_trimmed_and_hidden() -> None:
    p = parse_type("secret", " s3cret ", ConfigType.PASSWORD)
    assert isinstance(p, Password)
    assert p.value == "s3cret"
    assert repr(p) == str(p) == "[hidden]"
    assert convert_to_string(p, ConfigType.PASSWORD) == "[hidden]"
    assert Password("a") == Password("a") and Password("a") != Password("b")


def test_convert_to_string() -> None:
    assert convert_to_string(["a", "b"], ConfigType.LIST) == "a,b"
    assert convert_to_string([], ConfigType.LIST) == ""
    assert convert_to_string(True, ConfigType.BOOLEAN) == "true"
    assert convert_to_string(1.0, ConfigType.DOUBLE) == "1.0"
    assert convert_to_string(1e10, ConfigType.DOUBLE) == "1.0E10"
    assert convert_to_string(5, ConfigType.INT) == "5"
    assert convert_to_string(None, ConfigType.STRING) is None


def _def() -> ConfigDef:
    return (
        ConfigDef()
        .define(
            "name",
            ConfigType.STRING,
            validator=NonEmptyStringWithoutControlChars(),
            importance=Importance.HIGH,
            documentation="Connector name",
            group="Common",
            order_in_group=1,
            width=Width.MEDIUM,
            display_name="Connector name",
        )
        .define("tasks.max", ConfigType.INT, 1, Range.at_least(1), Importance.HIGH, "Max tasks", group="Common")
        .define("errors.tolerance", ConfigType.STRING, "none", ValidString.in_("none", "all"), Importance.MEDIUM, "")
        .define("topics", ConfigType.LIST, "", importance=Importance.HIGH)
        .define("password", ConfigType.PASSWORD, None, importance=Importance.LOW)
    )


def test_parse_applies_defaults_and_types() -> None:
    parsed = _def().parse({"name": " c1 ", "tasks.max": "3", "topics": "a, b"})
    assert parsed == {"name": "c1", "tasks.max": 3, "errors.tolerance": "none", "topics": ["a", "b"], "password": None}


def test_parse_missing_required() -> None:
    with pytest.raises(ConfigError) as info:
        _def().parse({})
    assert str(info.value) == 'Missing required configuration "name" which has no default value.'


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"name": "c", "tasks.max": "0"}, "Invalid value 0 for configuration tasks.max: Value must be at least 1"),
        (
            {"name": "c", "errors.tolerance": "some"},
            "Invalid value some for configuration errors.tolerance: String must be one of: none, all",
        ),
        ({"name": ""}, "Invalid value  for configuration name: String may not be empty"),
        (
            {"name": "a\nb"},
            "Invalid value a\nb for configuration name: String may not contain control sequences "
            "but had the following ASCII chars: 10",
        ),
        ({"name": "c", "tasks.max": "x"}, "Invalid value x for configuration tasks.max: Not a number of type INT"),
    ],
)
def test_parse_validator_messages(props, message) -> None:
    with pytest.raises(ConfigError) as info:
        _def().parse(props)
    assert str(info.value) == message


def test_validate_reports_every_key_in_order() -> None:
    values = _def().validate({"tasks.max": "abc", "errors.tolerance": "all"})
    assert [v.name for v in values] == ["name", "tasks.max", "errors.tolerance", "topics", "password"]
    by_name = {v.name: v for v in values}
    assert by_name["name"].error_messages == ['Missing required configuration "name" which has no default value.']
    assert by_name["name"].value is None
    # As Kafka: the failed parse leaves null, and the validator then rejects null too.
    assert by_name["tasks.max"].error_messages == [
        "Invalid value abc for configuration tasks.max: Not a number of type INT",
        "Invalid value null for configuration tasks.max: Value must be non-null",
    ]
    assert by_name["tasks.max"].value is None
    assert by_name["errors.tolerance"].value == "all" and not by_name["errors.tolerance"].error_messages
    assert by_name["topics"].value == []


def test_validate_runs_recommender() -> None:
    class Rec(Recommender):
        def valid_values(self, name, parsed):
            return ["x", "y"] if parsed.get("mode") == "on" else []

        def visible(self, name, parsed):
            return parsed.get("mode") == "on"

    cd = (
        ConfigDef()
        .define("mode", ConfigType.STRING, "off", dependents=["choice"])
        .define("choice", ConfigType.STRING, None, recommender=Rec())
    )
    choice = {v.name: v for v in cd.validate({"mode": "on"})}["choice"]
    assert choice.recommended_values == ["x", "y"] and choice.visible
    choice = {v.name: v for v in cd.validate({})}["choice"]
    assert choice.recommended_values == [] and not choice.visible


def test_define_metadata_and_groups() -> None:
    cd = _def()
    key = cd.config_keys()["name"]
    assert key.group == "Common" and key.order_in_group == 1 and key.width is Width.MEDIUM
    assert key.display_name == "Connector name" and not key.has_default
    plain = cd.config_keys()["topics"]
    assert plain.group is None and plain.order_in_group == -1 and plain.width is Width.NONE
    assert plain.display_name == "topics" and plain.default_value == []
    assert cd.groups() == ["Common"]
    assert cd.names() == ["name", "tasks.max", "errors.tolerance", "topics", "password"]
    assert "tasks.max" in cd and "nope" not in cd
    assert cd.default_values()["tasks.max"] == 1 and "name" not in cd.default_values()
    assert cd.config_key("nope") is None


def test_define_twice_and_bad_default() -> None:
    cd = ConfigDef().define("a", ConfigType.INT, 1)
    with pytest.raises(ConfigError, match="Configuration a is defined twice."):
        cd.define("a", ConfigType.INT, 1)
    with pytest.raises(ConfigError, match="Value must be at least 1"):
        ConfigDef().define("b", ConfigType.INT, 0, Range.at_least(1))
    assert (
        ConfigDef().define("c", ConfigType.INT, NO_DEFAULT, Range.at_least(1)).config_keys()["c"].has_default is False
    )


def test_base_def_is_copied() -> None:
    base = ConfigDef().define("a", ConfigType.INT, 1)
    child = ConfigDef(base).define("b", ConfigType.INT, 2)
    assert base.names() == ["a"] and child.names() == ["a", "b"]


def test_validators() -> None:
    with pytest.raises(ConfigError, match=r"^Invalid value 11 for configuration x: Value must be no more than 10$"):
        Range.between(0, 10)("x", 11)
    with pytest.raises(ConfigError, match=r"^Invalid value null for configuration x: Value must be non-null$"):
        Range.at_least(0)("x", None)
    assert str(Range.between(0, 10)) == "[0,...,10]" and str(Range.at_least(1)) == "[1,...]"
    ci = CaseInsensitiveValidString.in_("BASE64", "NUMERIC")
    ci("x", "numeric")
    with pytest.raises(ConfigError, match=r"String must be one of \(case insensitive\): BASE64, NUMERIC"):
        ci("x", "hex")
    ValidString.in_case_insensitive("a")("x", "A")
    with pytest.raises(ConfigError, match=r"^Invalid value null for configuration x: String must be one of: a$"):
        ValidString.in_("a")("x", None)
    ValidList.in_("a", "b")("x", ["a", "b"])
    with pytest.raises(ConfigError, match=r"^Invalid value c for configuration x: String must be one of: a, b$"):
        ValidList.in_("a", "b")("x", ["a", "c"])
    NonEmptyString()("x", None)
    with pytest.raises(ConfigError, match=r"^Invalid value  for configuration x: String must be non-empty$"):
        NonEmptyString()("x", "")
    NonEmptyStringWithoutControlChars()("x", None)
    with pytest.raises(ConfigError, match="String must be non-empty"):
        CompositeValidator.of(NonEmptyString(), ValidString.in_("a"))("x", "")
