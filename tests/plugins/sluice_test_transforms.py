"""Transformations, a predicate and a connector for the config-validation tests.

The first three have the configuration definitions of Kafka's ``InsertField$Value``,
``RegexRouter`` and ``TopicNameMatches``, so the parity tests can replay Kafka Connect's
own validate answers for those plugins against Sluice. They live on ``plugin.path`` in a
plain directory, like a user's plugins, and are referred to by Python path
(``sluice_test_transforms.TestRegexRouter``) or simple name.
"""

from __future__ import annotations

import re
from typing import Any

from sluice.api import (
    Config,
    ConfigDef,
    ConfigError,
    ConfigType,
    ConfigValue,
    Importance,
    Predicate,
    Recommender,
    SinkConnector,
    SinkRecord,
    SinkTask,
    Transformation,
    Width,
)


def _regex(name: str, value: Any) -> None:
    # Kafka's RegexValidator, as it reports a missing pattern (a Java NullPointerException).
    if value is None:
        raise ConfigError(
            name, "null", 'Invalid regex: Cannot invoke "String.isEmpty()" because "this.pattern" is null'
        )
    try:
        re.compile(value)
    except re.error as exc:
        raise ConfigError(name, value, f"Invalid regex: {exc}") from exc


class TestInsertField(Transformation):
    """Adds fields to the value (keys of Kafka's ``InsertField$Value``); passes records through."""

    __test__ = False  # not a pytest test class

    def config(self) -> ConfigDef:
        d = ConfigDef()
        for key in (
            "topic.field",
            "partition.field",
            "offset.field",
            "timestamp.field",
            "static.field",
            "static.value",
        ):
            d.define(
                key,
                ConfigType.STRING,
                None,
                importance=Importance.MEDIUM,
                documentation=f"Field name for {key.split('.')[0]}.",
            )
        d.define(
            "replace.null.with.default",
            ConfigType.BOOLEAN,
            True,
            importance=Importance.MEDIUM,
            documentation="Use a field's default instead of null.",
        )
        return d

    def apply(self, record: Any) -> Any:
        return record


class TestRegexRouter(Transformation):
    """Renames topics with a regex (keys of Kafka's ``RegexRouter``); passes records through."""

    __test__ = False

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define(
                "regex",
                ConfigType.STRING,
                validator=_regex,
                importance=Importance.HIGH,
                documentation="Regular expression matched against topic names.",
            )
            .define("replacement", ConfigType.STRING, importance=Importance.HIGH, documentation="Replacement string.")
        )

    def apply(self, record: Any) -> Any:
        return record


class TestTopicNameMatches(Predicate):
    """True for records whose topic matches ``pattern`` (keys of Kafka's ``TopicNameMatches``)."""

    __test__ = False

    def config(self) -> ConfigDef:
        return ConfigDef().define(
            "pattern",
            ConfigType.STRING,
            validator=_regex,
            importance=Importance.MEDIUM,
            documentation="Regular expression matched against topic names.",
        )

    def test(self, record: Any) -> bool:
        return True


class _AuthModes(Recommender):
    def valid_values(self, name: str, parsed: Any) -> list[Any]:
        return ["basic", "token"]


class _NeedsAuth(Recommender):
    def visible(self, name: str, parsed: Any) -> bool:
        return parsed.get("auth.mode") is not None


class TestSecretHeader(Transformation):
    """Adds a secret header: groups, widths, dependents, a recommender, a password, and a
    key of its own named ``predicate`` (masked by the framework's)."""

    __test__ = False

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define("header", ConfigType.STRING, "x-secret", importance=Importance.LOW, documentation="Header name.")
            .define(
                "auth.mode",
                ConfigType.STRING,
                None,
                importance=Importance.HIGH,
                documentation="Auth mode.",
                group="Auth",
                order_in_group=1,
                width=Width.SHORT,
                display_name="Auth mode",
                dependents=["auth.secret"],
                recommender=_AuthModes(),
            )
            .define(
                "auth.secret",
                ConfigType.PASSWORD,
                None,
                importance=Importance.HIGH,
                documentation="The secret.",
                group="Auth",
                order_in_group=2,
                width=Width.LONG,
                display_name="Secret",
                recommender=_NeedsAuth(),
            )
            .define("predicate", ConfigType.INT, 7, importance=Importance.LOW, documentation="Masked.")
        )

    def apply(self, record: Any) -> Any:
        return record


class BrokenConfigTransform(Transformation):
    """A transformation whose ``config()`` fails."""

    __test__ = False

    def config(self) -> ConfigDef:
        raise RuntimeError("no config today")

    def apply(self, record: Any) -> Any:
        return record


class _NullSinkTask(SinkTask):
    def start(self, props: dict[str, str]) -> None:
        pass

    def put(self, records: list[SinkRecord]) -> None:
        pass

    def stop(self) -> None:
        pass


class ValidatingSinkConnector(SinkConnector):
    """A sink whose ``validate()`` adds checks across keys to the default one."""

    def start(self, props: dict[str, str]) -> None:
        pass

    def task_class(self) -> type[SinkTask]:
        return _NullSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return []

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define("path", ConfigType.STRING, importance=Importance.HIGH, documentation="Where to write.")
            .define("mode", ConfigType.STRING, "append", importance=Importance.MEDIUM, documentation="How.")
            .define("token", ConfigType.PASSWORD, None, importance=Importance.LOW, documentation="A secret.")
        )

    def validate(self, connector_configs: dict[str, str]) -> Config:
        result = super().validate(connector_configs)
        values = {v.name: v for v in result.config_values}
        if values["mode"].value == "strict" and not str(values["path"].value or "").endswith(".txt"):
            values["path"].add_error_message("mode=strict needs a path ending in .txt")
        if "legacy.option" in connector_configs:
            extra = ConfigValue("legacy.option", connector_configs["legacy.option"])
            extra.add_error_message("legacy.option is no longer supported")
            result.config_values.append(extra)
        return result
