"""RegexRouter, after Kafka's RegexRouterTest, plus Java regex and replacement semantics."""

from __future__ import annotations

import re

import pytest

from sluice._java.regex import compile_java_regex
from sluice.api.data import Schema
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import Headers, SinkRecord, SourceRecord, TimestampType
from sluice.transforms.regex_router import RegexRouter


def _router(regex: str, replacement: str) -> RegexRouter:
    router = RegexRouter()
    router.configure({"regex": regex, "replacement": replacement})
    return router


def _apply(regex: str, replacement: str, topic: str) -> str:
    router = _router(regex, replacement)
    routed = router.apply(SinkRecord(topic, 0, None, None, None, None, 0)).topic
    router.close()
    return routed


@pytest.mark.parametrize(
    ("regex", "replacement", "topic", "expected"),
    [
        ("foo", "bar", "foo", "bar"),  # static replacement
        ("foo", "bar", "orig", "orig"),  # doesn't match
        ("(.*)", "$1", "orig", "orig"),  # identity
        ("(.*)", "prefix-$1", "orig", "prefix-orig"),
        ("(.*)", "$1-suffix", "orig", "orig-suffix"),
        ("(.*)-(\\d\\d\\d\\d\\d\\d\\d\\d)", "$1", "index-20160117", "index"),  # slice
        ("(.*)-(\\d{8})", "$2.$1", "index-20160117", "20160117.index"),
        ("foo", "bar", "foofoo", "foofoo"),  # must match the whole topic
        ("a|ab", "X", "ab", "Xb"),  # matches() as a whole, then replaceFirst finds the first match
        ("(?<name>[a-z]+)\\.(?<num>\\d+)", "${num}-${name}", "topic.42", "42-topic"),
        ("(a)(b)?c?", "[$2]", "ac", "[]"),  # an unmatched group inserts nothing
        ("(.)(.)(.)(.)(.)(.)(.)(.)(.)(.)(.)", "$11", "abcdefghijk", "k"),  # longest group number that exists
        ("(.)(.)", "$10", "ab", "a0"),  # $1 followed by a literal 0
        ("(.*)", "\\$1", "t", "$1"),  # escaped dollar
        ("(.*)", "a\\\\b", "t", "a\\b"),  # escaped backslash
        ("\\Qa.b\\E(.*)", "x$1", "a.bc", "xc"),
        ("\\p{Alpha}+-(\\p{Digit}+)", "$1", "abc-123", "123"),
        ("[\\p{Lower}-]+", "lower", "a-b", "lower"),
        ("\\w+\\z", "w", "abc", "w"),
        ("\\p{L}+_\\p{Nd}+", "ok", "orders_42", "ok"),
        ("(?<a>x)\\k<a>", "y", "xx", "y"),
        ("([a-z]+)_(\\d+)", "$2$1", "ab_12", "12ab"),
    ],
)
def test_routing(regex, replacement, topic, expected) -> None:
    assert _apply(regex, replacement, topic) == expected


def test_source_record_keeps_everything_but_the_topic() -> None:
    headers = Headers().add_string("h", "v")
    record = SourceRecord({"p": 1}, {"o": 2}, "orig", 3, Schema.STRING_SCHEMA, "k", Schema.INT32_SCHEMA, 5, 77, headers)
    routed = _router("(.*)", "new-$1").apply(record)
    assert isinstance(routed, SourceRecord)
    assert routed.topic == "new-orig"
    for attr in (
        "source_partition",
        "source_offset",
        "kafka_partition",
        "key_schema",
        "key",
        "value_schema",
        "value",
        "timestamp",
    ):
        assert getattr(routed, attr) == getattr(record, attr)
    assert routed.headers == headers
    assert routed.headers is not record.headers  # duplicated, as Kafka's newRecord does
    assert record.topic == "orig"


def test_sink_record_keeps_offset_and_timestamp_type() -> None:
    record = SinkRecord("orig", 1, None, "k", None, "v", 42, 1000, TimestampType.CREATE_TIME)
    routed = _router("orig", "new").apply(record)
    assert isinstance(routed, SinkRecord)
    assert (routed.topic, routed.kafka_offset, routed.timestamp, routed.timestamp_type) == (
        "new",
        42,
        1000,
        TimestampType.CREATE_TIME,
    )


def test_non_matching_record_is_returned_as_is() -> None:
    record = SourceRecord(None, None, "other")
    assert _router("foo", "bar").apply(record) is record


@pytest.mark.parametrize(
    ("replacement", "message"),
    [
        ("$", "group index is missing"),
        ("$x", "Illegal group reference"),
        ("$2", "No group 2"),
        ("${nope}", "No group with name {nope}"),
        ("${}", "0 length name"),
        ("${a", "missing trailing '}'"),
        ("x\\", "character to be escaped is missing"),
    ],
)
def test_invalid_replacement_fails_when_used(replacement, message) -> None:
    router = _router("(?<a>[a-z]+)", replacement)  # configure accepts it, as Kafka does
    assert router.apply(SourceRecord(None, None, "NO")).topic == "NO"
    with pytest.raises(DataError, match=re.escape(message)):
        router.apply(SourceRecord(None, None, "topic"))


def test_invalid_replacement_is_harmless_when_nothing_matches() -> None:
    record = SourceRecord(None, None, "topic")
    assert _router("never", "$9").apply(record) is record


@pytest.mark.parametrize("regex", ["[", "(", "*", "a{2,1}", "\\p{Sc}+", "[a-z&&[^e]]", "[a-d[m-p]]"])
def test_invalid_regex(regex: str) -> None:
    with pytest.raises(ConfigError, match="Invalid regex"):
        RegexRouter().configure({"regex": regex, "replacement": "x"})


@pytest.mark.parametrize("configs", [{}, {"regex": "a"}, {"replacement": "b"}])
def test_missing_configs(configs) -> None:
    with pytest.raises(ConfigError, match="Missing required configuration"):
        RegexRouter().configure(configs)


def test_config_def_validation() -> None:
    config = RegexRouter().config()
    assert config.names() == ["regex", "replacement"]
    assert str(config.config_key("regex").validator) == "valid regex"
    values = {v.name: v for v in config.validate({"regex": "(", "replacement": "x"})}
    assert len(values["regex"].error_messages) == 1
    assert values["regex"].error_messages[0].startswith("Invalid value ( for configuration regex: Invalid regex: ")


def test_java_regex_is_ascii_like_java() -> None:
    assert compile_java_regex("\\d+").fullmatch("123")
    assert not compile_java_regex("\\d+").fullmatch("١٢٣")  # Arabic-Indic digits are not \d in Java
    assert compile_java_regex("(?i)abc").fullmatch("ABC")


def test_routes_are_remembered_per_topic_and_errors_are_not() -> None:
    router = _router("(.*)-raw", "$1")
    for _ in range(3):
        assert router.apply(SourceRecord(None, None, "a-raw")).topic == "a"
        assert router.apply(SourceRecord(None, None, "b")).topic == "b"
    broken = _router("(.*)", "$2")
    for _ in range(2):
        with pytest.raises(DataError, match="No group 2"):
            broken.apply(SourceRecord(None, None, "t"))
