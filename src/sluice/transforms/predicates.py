"""Kafka's predicates (``org.apache.kafka.connect.transforms.predicates``): a transformation
with ``transforms.<alias>.predicate`` applies only to the records its predicate matches (or,
with ``negate=true``, does not match)."""

from __future__ import annotations

import re
from typing import Any

from sluice._java.regex import compile_java_regex
from sluice.api.config import CompositeValidator, ConfigDef, ConfigType, Importance, NonEmptyString
from sluice.api.errors import ConfigError
from sluice.api.records import ConnectRecord, SinkBatch
from sluice.api.transforms import Predicate
from sluice.transforms.regex_router import RegexValidator

__all__ = ["HasHeaderKey", "RecordIsTombstone", "TopicNameMatches"]

PATTERN_CONFIG = "pattern"
NAME_CONFIG = "name"
_ANSWER_CACHE_SIZE = 1024

TOPIC_NAME_MATCHES_CONFIG_DEF = ConfigDef().define(
    PATTERN_CONFIG,
    ConfigType.STRING,
    validator=CompositeValidator.of(NonEmptyString(), RegexValidator()),
    importance=Importance.MEDIUM,
    documentation="Java regular expression the whole topic name must match.",
)

HAS_HEADER_KEY_CONFIG_DEF = ConfigDef().define(
    NAME_CONFIG,
    ConfigType.STRING,
    validator=NonEmptyString(),
    importance=Importance.MEDIUM,
    documentation="The header name to look for.",
)

RECORD_IS_TOMBSTONE_CONFIG_DEF = ConfigDef()


class TopicNameMatches(Predicate):
    """True for records whose whole topic name matches a regular expression
    (``org.apache.kafka.connect.transforms.predicates.TopicNameMatches``)."""

    OVERVIEW_DOC = "Matches the records whose topic name matches a Java regular expression as a whole."

    def __init__(self) -> None:
        self._pattern: re.Pattern[str] | None = None
        self._answers: dict[str, bool] = {}  # per topic: a task sees few topics

    def configure(self, configs: dict[str, Any]) -> None:
        value = TOPIC_NAME_MATCHES_CONFIG_DEF.parse(configs)[PATTERN_CONFIG]
        try:
            self._pattern = compile_java_regex(value)
        except (re.error, ValueError, TypeError) as e:
            raise ConfigError(PATTERN_CONFIG, value, f"entry must be a Java-compatible regular expression: {e}") from e
        self._answers = {}

    def test(self, record: ConnectRecord) -> bool:
        return self.test_topic(record.topic)

    def test_topic(self, topic: str) -> bool:
        """Whether ``topic`` matches (answers cached per topic)."""
        try:
            return self._answers[topic]
        except KeyError:
            pass
        answer = topic is not None and self._pattern.fullmatch(topic) is not None  # type: ignore[union-attr]
        if len(self._answers) >= _ANSWER_CACHE_SIZE:
            self._answers.clear()
        self._answers[topic] = answer
        return answer

    def test_batch(self, batch: SinkBatch) -> list[bool]:
        topics = batch.topics
        answers = {topic: self.test_topic(topic) for topic in dict.fromkeys(topics)}
        return [answers[topic] for topic in topics]

    def config(self) -> ConfigDef:
        return TOPIC_NAME_MATCHES_CONFIG_DEF

    def __repr__(self) -> str:
        return f"TopicNameMatches{{pattern={self._pattern.pattern if self._pattern else None}}}"


class HasHeaderKey(Predicate):
    """True for records with at least one header of the configured name
    (``org.apache.kafka.connect.transforms.predicates.HasHeaderKey``)."""

    OVERVIEW_DOC = "Matches the records that have at least one header with the given name."

    def __init__(self) -> None:
        self._name: str | None = None

    def configure(self, configs: dict[str, Any]) -> None:
        self._name = HAS_HEADER_KEY_CONFIG_DEF.parse(configs)[NAME_CONFIG]

    def test(self, record: ConnectRecord) -> bool:
        name = self._name
        return any(h.key == name for h in record.headers)

    def test_batch(self, batch: SinkBatch) -> list[bool]:
        name = self._name
        return [h is not None and any(x.key == name for x in h) for h in batch.headers]

    def config(self) -> ConfigDef:
        return HAS_HEADER_KEY_CONFIG_DEF

    def __repr__(self) -> str:
        return f"HasHeaderKey{{name='{self._name}'}}"


class RecordIsTombstone(Predicate):
    """True for tombstones, the records whose value is null
    (``org.apache.kafka.connect.transforms.predicates.RecordIsTombstone``)."""

    OVERVIEW_DOC = "Matches tombstones: the records whose value is null."

    def configure(self, configs: dict[str, Any]) -> None:
        pass

    def test(self, record: ConnectRecord) -> bool:
        return record.value is None

    def test_batch(self, batch: SinkBatch) -> list[bool]:
        return [value is None for value in batch.values]

    def config(self) -> ConfigDef:
        return RECORD_IS_TOMBSTONE_CONFIG_DEF

    def __repr__(self) -> str:
        return "RecordIsTombstone{}"
