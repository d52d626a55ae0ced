"""TopicNameMatches, HasHeaderKey and RecordIsTombstone, after Kafka's predicate tests."""

from __future__ import annotations

import pytest

from sluice.api.data import Schema
from sluice.api.errors import ConfigError
from sluice.api.records import Header, Headers, SinkRecord, SourceRecord
from sluice.api.transforms import Predicate
from sluice.transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches


def _topic(name: str | None) -> SourceRecord:
    return SourceRecord(None, None, name)  # type: ignore[arg-type]


def _with_headers(*names: str) -> SourceRecord:
    return SourceRecord(None, None, None, headers=[Header(n, None) for n in names])  # type: ignore[arg-type]


# -- TopicNameMatches ------------------------------------------------------------------------


def test_topic_name_matches_pattern_required() -> None:
    with pytest.raises(ConfigError, match='Missing required configuration "pattern"'):
        TopicNameMatches().configure({})


def test_topic_name_matches_pattern_not_empty() -> None:
    with pytest.raises(ConfigError, match="String must be non-empty"):
        TopicNameMatches().configure({"pattern": ""})


@pytest.mark.parametrize("pattern", ["[", "*", "(?<n", "\\p{Foo}"])
def test_topic_name_matches_pattern_is_valid_regex(pattern: str) -> None:
    with pytest.raises(ConfigError, match="Invalid regex"):
        TopicNameMatches().configure({"pattern": pattern})


def test_topic_name_matches_config_validation() -> None:
    config = TopicNameMatches().config()
    assert all(not v.error_messages for v in config.validate({"pattern": "my-prefix-.*"}))
    errors = config.validate({"pattern": "*"})[0].error_messages
    assert len(errors) == 1 and "Invalid regex" in errors[0]
    assert str(config.config_key("pattern").validator) == "non-empty string, valid regex"


def test_topic_name_matches_test() -> None:
    predicate = TopicNameMatches()
    predicate.configure({"pattern": "my-prefix-.*"})
    assert isinstance(predicate, Predicate)
    assert predicate.test(_topic("my-prefix-"))
    assert predicate.test(_topic("my-prefix-foo"))
    assert not predicate.test(_topic("x-my-prefix-"))
    assert not predicate.test(_topic("x-my-prefix-foo"))
    assert not predicate.test(_topic("your-prefix-"))
    assert not predicate.test(_topic("your-prefix-foo"))
    assert not predicate.test(_topic(None))
    assert repr(predicate) == "TopicNameMatches{pattern=my-prefix-.*}"


def test_topic_name_matches_is_a_full_match() -> None:
    predicate = TopicNameMatches()
    predicate.configure({"pattern": "a|ab"})
    assert predicate.test(_topic("ab"))
    assert not predicate.test(_topic("abc"))
    predicate.configure({"pattern": "(?<name>orders)\\.\\d+"})
    assert predicate.test(SinkRecord("orders.12", 0, None, None, None, None, 0))
    assert not predicate.test(SinkRecord("orders.x", 0, None, None, None, None, 0))


# -- HasHeaderKey ----------------------------------------------------------------------------


def test_has_header_key_name_required() -> None:
    with pytest.raises(ConfigError, match='Missing required configuration "name"'):
        HasHeaderKey().configure({})


def test_has_header_key_name_not_empty() -> None:
    with pytest.raises(ConfigError, match="String must be non-empty"):
        HasHeaderKey().configure({"name": ""})


def test_has_header_key_config_validation() -> None:
    config = HasHeaderKey().config()
    assert not config.validate({"name": "foo"})[0].error_messages
    assert config.validate({"name": ""})[0].error_messages == [
        "Invalid value  for configuration name: String must be non-empty"
    ]


def test_has_header_key_test() -> None:
    predicate = HasHeaderKey()
    predicate.configure({"name": "foo"})
    assert predicate.test(_with_headers("foo"))
    assert predicate.test(_with_headers("foo", "bar"))
    assert predicate.test(_with_headers("bar", "foo", "bar", "foo"))
    assert not predicate.test(_with_headers("bar"))
    assert not predicate.test(_with_headers("bar", "bar"))
    assert not predicate.test(_with_headers())
    assert not predicate.test(SourceRecord(None, None, "t"))
    assert predicate.test(
        SinkRecord("t", 0, None, None, None, None, 0, headers=Headers().add("foo", 1, Schema.INT32_SCHEMA))
    )
    assert repr(predicate) == "HasHeaderKey{name='foo'}"


# -- RecordIsTombstone -----------------------------------------------------------------------


def test_record_is_tombstone() -> None:
    predicate = RecordIsTombstone()
    predicate.configure({})
    assert predicate.config().names() == []
    assert predicate.test(SourceRecord(None, None, "t", key="k"))
    assert predicate.test(SinkRecord("t", 0, Schema.STRING_SCHEMA, "k", Schema.OPTIONAL_STRING_SCHEMA, None, 0))
    assert not predicate.test(SourceRecord(None, None, "t", value=""))
    assert not predicate.test(SinkRecord("t", 0, None, None, None, {}, 0))
    assert repr(predicate) == "RecordIsTombstone{}"
    predicate.close()


def test_topic_name_matches_reconfigure_forgets_answers() -> None:
    predicate = TopicNameMatches()
    predicate.configure({"pattern": "a.*"})
    assert predicate.test(_topic("abc")) and predicate.test(_topic("abc"))
    predicate.configure({"pattern": "b.*"})
    assert not predicate.test(_topic("abc"))
