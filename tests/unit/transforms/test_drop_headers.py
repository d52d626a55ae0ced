"""DropHeaders, after Kafka's DropHeadersTest."""

from __future__ import annotations

import pytest

from sluice.api.config import ConfigType
from sluice.api.data import Schema
from sluice.api.errors import ConfigError
from sluice.api.records import Headers, SinkRecord, SourceRecord, TimestampType
from sluice.api.transforms import Transformation
from sluice.transforms.drop_headers import DropHeaders


def _source(headers: Headers) -> SourceRecord:
    return SourceRecord({"foo": "bar"}, {"baz": "quxx"}, "topic", 0, None, "key", None, "value", 0, headers)


def _assert_non_headers(original, transformed) -> None:
    for attr in ("topic", "kafka_partition", "key_schema", "key", "value_schema", "value", "timestamp"):
        assert getattr(transformed, attr) == getattr(original, attr), attr
    if isinstance(original, SourceRecord):
        assert transformed.source_partition == original.source_partition
        assert transformed.source_offset == original.source_offset


def _configured(*names: str) -> DropHeaders:
    xform = DropHeaders()
    xform.configure({"headers": list(names)})
    return xform


def test_is_a_transformation() -> None:
    assert isinstance(DropHeaders(), Transformation)


def test_drop_existing_header() -> None:
    expected = Headers().add_string("existing", "existing-value")
    headers = expected.duplicate().add_string("to-drop", "existing-value")
    original = _source(headers)
    transformed = _configured("to-drop").apply(original)
    _assert_non_headers(original, transformed)
    assert transformed.headers == expected
    assert len(original.headers) == 2  # the input record is untouched


def test_drop_existing_header_with_multiple_values() -> None:
    expected = Headers().add_string("existing", "existing-value")
    headers = expected.duplicate().add_string("to-drop", "a").add_string("to-drop", "b")
    transformed = _configured("to-drop").apply(_source(headers))
    assert transformed.headers == expected


def test_drop_non_existing_header() -> None:
    expected = Headers().add_string("existing", "existing-value")
    transformed = _configured("to-drop").apply(_source(expected.duplicate()))
    assert transformed.headers == expected


def test_drop_several_names_keeps_order_of_the_rest() -> None:
    headers = (
        Headers()
        .add_string("a", "1")
        .add("x", 1, Schema.INT32_SCHEMA)
        .add_string("b", "2")
        .add_string("y", "3")
        .add_string("c", "4")
    )
    transformed = _configured("x", "y").apply(_source(headers))
    assert [h.key for h in transformed.headers] == ["a", "b", "c"]


def test_record_without_headers() -> None:
    record = SourceRecord(None, None, "t", value="v")
    assert len(_configured("x").apply(record).headers) == 0


def test_sink_record_keeps_sink_fields() -> None:
    record = SinkRecord(
        "t",
        3,
        Schema.STRING_SCHEMA,
        "k",
        None,
        {"a": 1},
        42,
        1000,
        TimestampType.CREATE_TIME,
        Headers().add_string("drop", "x").add_string("keep", "y"),
    )
    transformed = _configured("drop").apply(record)
    assert isinstance(transformed, SinkRecord)
    assert transformed.kafka_offset == 42
    assert transformed.timestamp_type == TimestampType.CREATE_TIME
    _assert_non_headers(record, transformed)
    assert [h.key for h in transformed.headers] == ["keep"]


def test_comma_separated_string_config() -> None:
    xform = DropHeaders()
    xform.configure({"headers": "a, b"})
    headers = Headers().add_string("a", "1").add_string("b", "2").add_string("c", "3")
    assert [h.key for h in xform.apply(_source(headers)).headers] == ["c"]


@pytest.mark.parametrize(
    ("configs", "message"),
    [
        ({"headers": []}, "Configuration 'headers' must not be empty. Valid values include: any non-empty value"),
        ({"headers": ""}, "Configuration 'headers' must not be empty. Valid values include: any non-empty value"),
        ({"headers": None}, "Configuration 'headers' values must not be null."),
        ({"headers": "a,,b"}, "Configuration 'headers' values must not be empty."),
        ({}, 'Missing required configuration "headers" which has no default value.'),
    ],
)
def test_config_errors(configs, message) -> None:
    with pytest.raises(ConfigError) as e:
        DropHeaders().configure(configs)
    assert str(e.value) == message


def test_duplicate_names_are_dropped_when_configuring() -> None:
    xform = _configured("a", "a")
    headers = Headers().add_string("a", "1").add_string("b", "2")
    assert [h.key for h in xform.apply(_source(headers)).headers] == ["b"]


def test_config_def() -> None:
    key = DropHeaders().config().config_key("headers")
    assert key is not None and key.type is ConfigType.LIST and not key.has_default
    values = {v.name: v for v in DropHeaders().config().validate({"headers": "a,a"})}
    assert values["headers"].error_messages == ["Configuration 'headers' values must not be duplicated."]
