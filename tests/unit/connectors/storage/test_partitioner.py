"""The storage partitioners: the directories Confluent's partitioners give the same records."""

from __future__ import annotations

import datetime as dt

import pytest

from sluice.api import ConfigError, SchemaBuilder, SinkRecord, Struct
from sluice.api.data import Timestamp
from sluice.connectors.storage.partitioner import (
    PartitionError,
    format_joda,
    make_partitioner,
    next_scheduled_rotation,
    partition_start,
    zone,
)
from sluice.connectors.storage.s3 import CONFIG_DEF

SCHEMA = (
    SchemaBuilder.struct()
    .name("Event")
    .field("region", SchemaBuilder.string().build())
    .field("shard", SchemaBuilder.int32().build())
    .field("ok", SchemaBuilder.bool().build())
    .field("score", SchemaBuilder.float64().build())
    .field("at", Timestamp.SCHEMA)
    .field("nested", SchemaBuilder.struct().field("day", SchemaBuilder.string().build()).build())
    .build()
)
# 2026-03-08 09:30:15.250 UTC (a Sunday; US daylight saving time starts that day)
WHEN_MS = int(dt.datetime(2026, 3, 8, 9, 30, 15, 250000, tzinfo=dt.UTC).timestamp() * 1000)


def values(**overrides: str) -> dict:
    props = {"s3.bucket.name": "b", "format.class": "JsonFormat", "flush.size": "3"}
    props.update({k.replace("_", "."): v for k, v in overrides.items()})
    return CONFIG_DEF.parse(props)


def record(value=None, schema=SCHEMA, partition=2, offset=7, timestamp=WHEN_MS) -> SinkRecord:
    if value is None and schema is SCHEMA:
        value = (
            Struct(SCHEMA)
            .put("region", "eu-west")
            .put("shard", 12)
            .put("ok", True)
            .put("score", 1.5)
            .put("at", dt.datetime.fromtimestamp(WHEN_MS / 1000, dt.UTC))
            .put("nested", Struct(SCHEMA.field("nested").schema).put("day", "sun"))
        )
    return SinkRecord("events", partition, None, None, schema, value, offset, timestamp)


def test_default_partitioner_uses_the_kafka_partition():
    partitioner = make_partitioner(values())
    assert partitioner.encode_partition(record(partition=2)) == "partition=2"
    assert partitioner.partitioned_path("events", "partition=2") == "events/partition=2"


def test_field_partitioner_joins_fields_with_the_directory_delimiter():
    partitioner = make_partitioner(
        values(**{"partitioner.class": "FieldPartitioner", "partition.field.name": "region,shard,ok,nested.day"})
    )
    assert partitioner.encode_partition(record()) == "region=eu-west/shard=12/ok=true/nested.day=sun"
    schemaless = record({"region": "us", "shard": 3, "ok": False, "nested": {"day": "mon"}}, schema=None)
    assert partitioner.encode_partition(schemaless) == "region=us/shard=3/ok=false/nested.day=mon"


def test_field_partitioner_refuses_missing_and_unsupported_fields():
    missing = make_partitioner(values(**{"partitioner.class": "FieldPartitioner", "partition.field.name": "nope"}))
    with pytest.raises(PartitionError, match="no field 'nope'"):
        missing.encode_partition(record())
    floating = make_partitioner(values(**{"partitioner.class": "FieldPartitioner", "partition.field.name": "score"}))
    with pytest.raises(PartitionError, match="FLOAT64"):
        floating.encode_partition(record())
    with pytest.raises(ConfigError, match="partition.field.name"):
        make_partitioner(values(**{"partitioner.class": "FieldPartitioner"}))


def test_time_based_partitioner_formats_the_record_time_in_its_zone():
    partitioner = make_partitioner(
        values(
            **{
                "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
                "partition.duration.ms": "3600000",
                "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH/",
                "locale": "en-US",
                "timezone": "UTC",
                "timestamp.extractor": "Record",
            }
        )
    )
    assert partitioner.encode_partition(record()) == "year=2026/month=03/day=08/hour=09"
    with pytest.raises(PartitionError, match="no timestamp"):
        partitioner.encode_partition(record(timestamp=None))


def test_time_partitions_are_truncated_in_local_time():
    la = zone("America/Los_Angeles")
    # 09:30 UTC on the day the clocks jump is 01:30 PST: the daily partition starts at local midnight (08:00 UTC)
    start = partition_start(86_400_000, WHEN_MS, la)
    assert dt.datetime.fromtimestamp(start / 1000, dt.UTC) == dt.datetime(2026, 3, 8, 8, 0, tzinfo=dt.UTC)
    daily = make_partitioner(
        values(
            **{
                "partitioner.class": "DailyPartitioner",
                "locale": "en",
                "timezone": "America/Los_Angeles",
                "timestamp.extractor": "Record",
            }
        )
    )
    assert daily.encode_partition(record()) == "year=2026/month=03/day=08"
    hourly = make_partitioner(
        values(
            **{
                "partitioner.class": "HourlyPartitioner",
                "locale": "en",
                "timezone": "Asia/Kolkata",
                "timestamp.extractor": "Record",
            }
        )  # fmt: skip
    )
    assert hourly.encode_partition(record()) == "year=2026/month=03/day=08/hour=15"  # UTC+05:30, truncated


def test_record_field_extractor_reads_timestamps_numbers_and_iso_strings():
    def partition_of(field: str, rec: SinkRecord) -> str:
        partitioner = make_partitioner(
            values(
                **{
                    "partitioner.class": "TimeBasedPartitioner",
                    "partition.duration.ms": "60000",
                    "path.format": "YYYY-MM-dd'T'HH:mm",
                    "locale": "en",
                    "timezone": "UTC",
                    "timestamp.extractor": "RecordField",
                    "timestamp.field": field,
                }
            )
        )
        return partitioner.encode_partition(rec)

    assert partition_of("at", record(timestamp=None)) == "2026-03-08T09:30"
    assert partition_of("ts", record({"ts": WHEN_MS}, schema=None)) == "2026-03-08T09:30"
    assert partition_of("ts", record({"ts": "2026-03-08T09:31:59Z"}, schema=None)) == "2026-03-08T09:31"
    assert partition_of("a.b", record({"a": {"b": WHEN_MS}}, schema=None)) == "2026-03-08T09:30"
    with pytest.raises(PartitionError, match="timestamp.*region|region"):
        partition_of("region", record())


def test_joda_patterns():
    when = dt.datetime(2026, 3, 8, 9, 5, 3, 42000, tzinfo=dt.UTC)
    assert format_joda("'y'=yyyy/'m'=M/'d'=d", when) == "y=2026/m=3/d=8"
    assert format_joda("YY-MMM-dd EEE HH:mm:ss.SSS", when) == "26-Mar-08 Sun 09:05:03.042"
    assert format_joda("MMMM EEEE 'o''clock' a", when) == "March Sunday o'clock AM"
    with pytest.raises(ConfigError, match="path.format"):
        format_joda("YYYY/'unterminated", when)
    with pytest.raises(ConfigError, match="Illegal pattern component: q"):
        format_joda("YYYY/q", when)


def test_time_based_partitioner_config_errors():
    base = {"partitioner.class": "TimeBasedPartitioner", "locale": "en", "timezone": "UTC", "path.format": "YYYY"}
    with pytest.raises(ConfigError, match="partition.duration.ms"):
        make_partitioner(values(**base))
    with pytest.raises(ConfigError, match="timezone"):
        make_partitioner(values(**{**base, "partition.duration.ms": "1000", "timezone": "Mars/Olympus"}))
    with pytest.raises(ConfigError, match="locale"):
        make_partitioner(values(**{**base, "partition.duration.ms": "1000", "locale": ""}))
    with pytest.raises(ConfigError, match="path.format"):
        make_partitioner(values(**{**base, "partition.duration.ms": "1000", "path.format": ""}))
    with pytest.raises(ConfigError, match="timestamp.extractor"):
        make_partitioner(values(**{**base, "partition.duration.ms": "1000", "timestamp.extractor": "Sundial"}))
    with pytest.raises(ConfigError, match="partitioner.class"):
        make_partitioner(values(**{"partitioner.class": "com.example.Mine"}))


def test_scheduled_rotation_is_aligned_to_the_local_day():
    tz = zone("UTC")
    now = int(dt.datetime(2026, 3, 8, 9, 7, tzinfo=dt.UTC).timestamp() * 1000)
    nxt = next_scheduled_rotation(now, 600_000, tz)
    assert dt.datetime.fromtimestamp(nxt / 1000, dt.UTC) == dt.datetime(2026, 3, 8, 9, 10, tzinfo=dt.UTC)
    # an interval that does not divide the day: the last rotation of the day is at midnight
    late = int(dt.datetime(2026, 3, 8, 23, 0, tzinfo=dt.UTC).timestamp() * 1000)
    nxt = next_scheduled_rotation(late, 7 * 3_600_000, tz)
    assert dt.datetime.fromtimestamp(nxt / 1000, dt.UTC) == dt.datetime(2026, 3, 9, 0, 0, tzinfo=dt.UTC)
