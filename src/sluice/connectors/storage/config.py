"""The settings every storage sink shares (Confluent's ``kafka-connect-storage-common``):
rotation, file naming, partitioning and schema compatibility, with Confluent's key names,
types and defaults, so a Confluent sink's config moves over unchanged."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sluice.api import NO_DEFAULT, ConfigDef, ConfigType, Importance, Range
from sluice.api.config import ValidString

__all__ = [
    "BEHAVIOR_ON_NULL_VALUES",
    "DIRECTORY_DELIM",
    "FILENAME_OFFSET_ZERO_PAD_WIDTH",
    "FILE_DELIM",
    "FLUSH_SIZE",
    "FORMAT_CLASS",
    "LOCALE",
    "PARTITIONER_CLASS",
    "PARTITION_DURATION_MS",
    "PARTITION_FIELD_NAME",
    "PATH_FORMAT",
    "ROTATE_INTERVAL_MS",
    "ROTATE_SCHEDULE_INTERVAL_MS",
    "SCHEMA_COMPATIBILITY",
    "TIMESTAMP_EXTRACTOR",
    "TIMESTAMP_FIELD",
    "TIMEZONE",
    "TOPICS_DIR",
    "StorageSettings",
    "common_config_def",
]

FLUSH_SIZE = "flush.size"
ROTATE_INTERVAL_MS = "rotate.interval.ms"
ROTATE_SCHEDULE_INTERVAL_MS = "rotate.schedule.interval.ms"
FORMAT_CLASS = "format.class"
TOPICS_DIR = "topics.dir"
DIRECTORY_DELIM = "directory.delim"
FILE_DELIM = "file.delim"
FILENAME_OFFSET_ZERO_PAD_WIDTH = "filename.offset.zero.pad.width"
SCHEMA_COMPATIBILITY = "schema.compatibility"
BEHAVIOR_ON_NULL_VALUES = "behavior.on.null.values"
PARTITIONER_CLASS = "partitioner.class"
PARTITION_FIELD_NAME = "partition.field.name"
PARTITION_DURATION_MS = "partition.duration.ms"
PATH_FORMAT = "path.format"
LOCALE = "locale"
TIMEZONE = "timezone"
TIMESTAMP_EXTRACTOR = "timestamp.extractor"
TIMESTAMP_FIELD = "timestamp.field"

DEFAULT_PARTITIONER = "io.confluent.connect.storage.partitioner.DefaultPartitioner"
COMPATIBILITIES = ("NONE", "BACKWARD", "FORWARD", "FULL")

_STORAGE = "Storage"
_CONNECTOR = "Connector"
_SCHEMA = "Schema"
_PARTITIONER = "Partitioner"


def common_config_def(*, default_format: str | None, null_behaviors: tuple[str, ...]) -> ConfigDef:
    """The shared keys; each sink adds its own (``hdfs.url``, ``s3.bucket.name``, ...)."""
    return (
        ConfigDef()
        .define(
            FLUSH_SIZE,
            ConfigType.INT,
            validator=Range.at_least(1),
            importance=Importance.HIGH,
            documentation="Number of records of a topic partition after which its files are committed.",
            group=_CONNECTOR,
            order_in_group=1,
            display_name="Flush Size",
        )
        .define(
            ROTATE_INTERVAL_MS,
            ConfigType.LONG,
            -1,
            importance=Importance.HIGH,
            documentation="Commit a topic partition's files once the timestamps (of the partitioner's "
            "timestamp.extractor) of their records span this many milliseconds. -1 disables it.",
            group=_CONNECTOR,
            order_in_group=2,
            display_name="Rotate Interval (ms)",
        )
        .define(
            ROTATE_SCHEDULE_INTERVAL_MS,
            ConfigType.LONG,
            -1,
            importance=Importance.MEDIUM,
            documentation="Commit the open files at wall-clock times that are multiples of this many "
            "milliseconds in the configured timezone, whatever the record times. -1 disables it. "
            "Files committed this way depend on when they were written: not exactly once.",
            group=_CONNECTOR,
            order_in_group=3,
            display_name="Rotate Schedule Interval (ms)",
        )
        .define(
            FORMAT_CLASS,
            ConfigType.STRING,
            default_format if default_format is not None else NO_DEFAULT,
            importance=Importance.HIGH,
            documentation="The format of the files: Confluent's format class name (or its short name).",
            group=_CONNECTOR,
            order_in_group=4,
            display_name="Format class",
        )
        .define(
            FILENAME_OFFSET_ZERO_PAD_WIDTH,
            ConfigType.INT,
            10,
            Range.at_least(0),
            importance=Importance.LOW,
            documentation="Width to which the offsets in file names are padded with zeros.",
            group=_CONNECTOR,
            order_in_group=5,
            display_name="Filename Offset Zero Pad Width",
        )
        .define(
            BEHAVIOR_ON_NULL_VALUES,
            ConfigType.STRING,
            null_behaviors[0],
            ValidString.in_case_insensitive(*null_behaviors),
            importance=Importance.LOW,
            documentation="What a record with a null value (a tombstone) does: " + ", ".join(null_behaviors) + ".",
            group=_CONNECTOR,
            order_in_group=6,
            display_name="Behavior for null-valued records",
        )
        .define(
            TOPICS_DIR,
            ConfigType.STRING,
            "topics",
            importance=Importance.HIGH,
            documentation="Top-level directory (or key prefix) under which the files are written.",
            group=_STORAGE,
            order_in_group=1,
            display_name="Topics directory",
        )
        .define(
            DIRECTORY_DELIM,
            ConfigType.STRING,
            "/",
            importance=Importance.MEDIUM,
            documentation="Directory delimiter pattern.",
            group=_STORAGE,
            order_in_group=2,
            display_name="Directory Delimiter",
        )
        .define(
            FILE_DELIM,
            ConfigType.STRING,
            "+",
            importance=Importance.MEDIUM,
            documentation="File delimiter pattern (between topic, partition and offsets in file names).",
            group=_STORAGE,
            order_in_group=3,
            display_name="File Delimiter",
        )
        .define(
            SCHEMA_COMPATIBILITY,
            ConfigType.STRING,
            "NONE",
            ValidString.in_case_insensitive(*COMPATIBILITIES),
            importance=Importance.HIGH,
            documentation="What a change of a record's value schema does: NONE commits the file in progress "
            "at any change; BACKWARD and FULL start a new file for a newer schema version and project older "
            "records to the current schema; FORWARD the same with the versions reversed.",
            group=_SCHEMA,
            order_in_group=1,
            display_name="Schema Compatibility",
        )
        .define(
            PARTITIONER_CLASS,
            ConfigType.STRING,
            DEFAULT_PARTITIONER,
            importance=Importance.HIGH,
            documentation="The partitioner: DefaultPartitioner (by Kafka partition), FieldPartitioner "
            "(partition.field.name), TimeBasedPartitioner (path.format, partition.duration.ms), "
            "HourlyPartitioner or DailyPartitioner (Confluent's class names or short names).",
            group=_PARTITIONER,
            order_in_group=1,
            display_name="Partitioner Class",
        )
        .define(
            PARTITION_FIELD_NAME,
            ConfigType.LIST,
            "",
            importance=Importance.MEDIUM,
            documentation="The record value fields FieldPartitioner partitions by (a.b for a nested field).",
            group=_PARTITIONER,
            order_in_group=2,
            display_name="Partition Field Name",
        )
        .define(
            PARTITION_DURATION_MS,
            ConfigType.LONG,
            -1,
            importance=Importance.MEDIUM,
            documentation="The duration of a partition of TimeBasedPartitioner in milliseconds.",
            group=_PARTITIONER,
            order_in_group=3,
            display_name="Partition Duration (ms)",
        )
        .define(
            PATH_FORMAT,
            ConfigType.STRING,
            "",
            importance=Importance.MEDIUM,
            documentation="TimeBasedPartitioner's directory pattern (Joda-Time's DateTimeFormat syntax), "
            "e.g. 'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH.",
            group=_PARTITIONER,
            order_in_group=4,
            display_name="Path Format",
        )
        .define(
            LOCALE,
            ConfigType.STRING,
            "",
            importance=Importance.MEDIUM,
            documentation="The locale of TimeBasedPartitioner's path.format (e.g. en-US).",
            group=_PARTITIONER,
            order_in_group=5,
            display_name="Locale",
        )
        .define(
            TIMEZONE,
            ConfigType.STRING,
            "",
            importance=Importance.MEDIUM,
            documentation="The time zone of TimeBasedPartitioner's partitions and of rotate.schedule.interval.ms "
            "(e.g. UTC or America/Los_Angeles).",
            group=_PARTITIONER,
            order_in_group=6,
            display_name="Timezone",
        )
        .define(
            TIMESTAMP_EXTRACTOR,
            ConfigType.STRING,
            "Wallclock",
            importance=Importance.MEDIUM,
            documentation="Where a record's time comes from: Wallclock (now), Record (the record's timestamp) "
            "or RecordField (the value field timestamp.field).",
            group=_PARTITIONER,
            order_in_group=7,
            display_name="Timestamp Extractor",
        )
        .define(
            TIMESTAMP_FIELD,
            ConfigType.STRING,
            "timestamp",
            importance=Importance.MEDIUM,
            documentation="The record value field holding the record's time, for the RecordField extractor "
            "(a.b for a nested field; a Timestamp, an epoch-millisecond number or an ISO-8601 string).",
            group=_PARTITIONER,
            order_in_group=8,
            display_name="Record Field for Timestamp Extractor",
        )
    )


class StorageSettings:
    """The parsed shared keys."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.flush_size: int = values[FLUSH_SIZE]
        self.rotate_interval_ms: int = values[ROTATE_INTERVAL_MS]
        self.rotate_schedule_interval_ms: int = values[ROTATE_SCHEDULE_INTERVAL_MS]
        self.format_class: str = values[FORMAT_CLASS].strip()
        self.topics_dir: str = values[TOPICS_DIR].strip()
        self.directory_delim: str = values[DIRECTORY_DELIM]
        self.file_delim: str = values[FILE_DELIM]
        self.zero_pad_width: int = values[FILENAME_OFFSET_ZERO_PAD_WIDTH]
        self.schema_compatibility: str = values[SCHEMA_COMPATIBILITY].upper()
        self.behavior_on_null_values: str = values[BEHAVIOR_ON_NULL_VALUES].lower()
        self.timezone: str = values[TIMEZONE].strip()
