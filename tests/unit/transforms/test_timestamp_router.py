"""TimestampRouter, after Kafka's TimestampRouterTest, plus SimpleDateFormat patterns."""

from __future__ import annotations

import pytest

from sluice.api.data import Schema
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import Headers, SinkRecord, SourceRecord, TimestampType
from sluice.transforms.timestamp_router import SimpleDateFormat, TimestampRouter

TS = 1483425001864  # 2017-01-03T06:30:01.864Z, a Tuesday


def _router(**configs: str) -> TimestampRouter:
    router = TimestampRouter()
    router.configure({k.replace("_", "."): v for k, v in configs.items()})
    return router


def test_default_configuration() -> None:
    record = SourceRecord(None, None, "test", 0, None, None, None, None, TS)
    assert _router().apply(record).topic == "test-20170103"


def test_keeps_everything_but_the_topic() -> None:
    headers = Headers().add_string("h", "v")
    record = SourceRecord({"p": 1}, {"o": 1}, "test", 2, Schema.STRING_SCHEMA, "k", None, {"a": 1}, TS, headers)
    routed = _router().apply(record)
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
    assert routed.headers == headers and routed.headers is not record.headers
    assert record.topic == "test"


def test_sink_record() -> None:
    record = SinkRecord("orders", 0, None, None, None, None, 5, TS, TimestampType.CREATE_TIME)
    routed = _router(topic_format="${timestamp}_${topic}_${timestamp}", timestamp_format="yyyy-MM").apply(record)
    assert isinstance(routed, SinkRecord)
    assert routed.topic == "2017-01_orders_2017-01"
    assert (routed.kafka_offset, routed.timestamp_type) == (5, TimestampType.CREATE_TIME)


def test_missing_timestamp() -> None:
    with pytest.raises(DataError, match="Timestamp missing on record"):
        _router().apply(SourceRecord(None, None, "test"))


def test_topic_is_inserted_literally() -> None:
    record = SourceRecord(None, None, "a$1\\b", timestamp=TS)
    assert _router(topic_format="x-${topic}").apply(record).topic == "x-a$1\\b"


@pytest.mark.parametrize(
    ("pattern", "millis", "expected"),
    [
        ("yyyyMMdd", TS, "20170103"),
        ("yyyy-MM-dd'T'HH:mm:ss.SSS", TS, "2017-01-03T06:30:01.864"),
        ("yy", TS, "17"),
        ("y", TS, "2017"),
        ("yyyyy", TS, "02017"),
        ("M/d/yyyy", TS, "1/3/2017"),
        ("EEE, d MMM yyyy", TS, "Tue, 3 Jan 2017"),
        ("EEEE MMMM", TS, "Tuesday January"),
        ("''yyyy''", TS, "'2017'"),
        ("'week' w 'of' Y", TS, "week 1 of 2017"),
        ("h:mm a", TS, "6:30 AM"),
        ("hh a", TS + 12 * 3_600_000, "06 PM"),
        ("k K", TS - 6 * 3_600_000 - 1_801_864, "24 0"),
        ("D F u W", TS, "3 1 2 1"),
        ("S SSSS", TS, "864 0864"),
        ("HH:mm z Z X G", TS, "06:30 UTC +0000 Z AD"),
        ("yyyyMMddHH", -1, "1969123123"),
        ("YYYY-ww", 1577750400000, "2020-01"),  # 2019-12-31 is in week 1 of 2020 (en_US weeks)
        ("YYYY-ww", 1483142400000, "2016-53"),  # 2016-12-31
        ("'static'", TS, "static"),
        ("", TS, ""),
    ],
)
def test_simple_date_format(pattern: str, millis: int, expected: str) -> None:
    assert SimpleDateFormat(pattern).format(millis) == expected


def test_format_cache_follows_the_finest_field() -> None:
    day = SimpleDateFormat("yyyyMMdd")
    assert day.format(TS) == "20170103"
    assert day.format(TS + 1) == "20170103"
    assert day.format(TS + 86_400_000) == "20170104"
    assert day.format(TS) == "20170103"
    millis = SimpleDateFormat("ss.SSS")
    assert [millis.format(TS + i) for i in range(3)] == ["01.864", "01.865", "01.866"]


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("yyyyq", "Illegal pattern character 'q'"),
        ("'abc", "Unterminated quote"),
    ],
)
def test_invalid_timestamp_format(pattern: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _router(timestamp_format=pattern)


def test_config_def() -> None:
    config = TimestampRouter().config()
    assert config.names() == ["topic.format", "timestamp.format"]
    assert config.default_values() == {"topic.format": "${topic}-${timestamp}", "timestamp.format": "yyyyMMdd"}
