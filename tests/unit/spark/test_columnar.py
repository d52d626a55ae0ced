"""The columnar path of the envelope transforms and predicates (``sluice.spark.columnar``)
against the per-record path, on a local SparkSession.

Each case runs the same Kafka rows through a sink task twice, with the executor's real
batch function: once with the chain per record in Python, once with the chain compiled to
Spark SQL expressions (rows the Filter drops never reach Python). What the sink task
receives (topic, partition, offset, key, value, headers, timestamps, order) and the
offsets the batch commits must be identical.
"""

from __future__ import annotations

import datetime as dt
import itertools
import random
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from sluice.api import SinkTask
from sluice.api.data import Struct
from sluice.spark import executor
from sluice.spark.columnar import compile_chain, compile_sink_chain, simple_date_format
from sluice.spark.errors import ErrorPolicy
from sluice.spark.executor import PluginSpec, SinkBatchSpec, TaskSpec, run_sink_batch
from sluice.spark.runner import sink_rows
from sluice.transforms.timestamp_router import SimpleDateFormat
from tests.helpers import typed_form

STRING = PluginSpec("sluice.converters.string.StringConverter", {})
BYTES = PluginSpec("sluice.converters.bytearray.ByteArrayConverter", {})
JSON = PluginSpec("sluice.converters.json.JsonConverter", {"schemas.enable": "false"})
SIMPLE = PluginSpec("sluice.converters.simple_header.SimpleHeaderConverter", {})

T = "sluice.transforms."
REGEX_ROUTER = T + "regex_router.RegexRouter"
TIMESTAMP_ROUTER = T + "timestamp_router.TimestampRouter"
FILTER = T + "filter.Filter"
DROP_HEADERS = T + "drop_headers.DropHeaders"
INSERT_HEADER = T + "insert_header.InsertHeader"
TOPIC_NAME_MATCHES = T + "predicates.TopicNameMatches"
HAS_HEADER_KEY = T + "predicates.HasHeaderKey"
RECORD_IS_TOMBSTONE = T + "predicates.RecordIsTombstone"

KAFKA_DDL = (
    "key binary, value binary, topic string, partition int, offset long, ts long, timestampType int, "
    "headers array<struct<key: string, value: binary>>"
)
DAY = 86_400_000

CAPTURED: dict[str, list[Any]] = {}


class CapturingSinkTask(SinkTask):
    """Keeps every record it is given, under the task config's ``capture`` name."""

    def start(self, props: dict[str, str]) -> None:
        self.name = props["capture"]
        CAPTURED[self.name] = []

    def put(self, records: list[Any]) -> None:
        CAPTURED[self.name].extend(records)

    def stop(self) -> None:
        pass


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    session = (
        SparkSession.builder.master("local[2]")
        .appName("sluice-columnar-test")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        # Not UTC on purpose: the columnar TimestampRouter must not depend on it.
        .config("spark.sql.session.timeZone", "America/New_York")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def clean_hosts() -> Iterator[None]:
    yield
    for key in list(executor._HOSTS):
        executor._HOSTS.pop(key).stop()
    CAPTURED.clear()


# --------------------------------------------------------------------------- records


def _records() -> list[tuple[Any, ...]]:
    """Kafka rows: topics, partitions, tombstones, headers and timestamps of every kind."""
    topics = ["orders", "orders.eu", "payments", "logs-2024", "a.b.c", "ab"]
    header_sets: list[list[tuple[str, bytes | None]] | None] = [
        None,
        [],
        [("trace", b"abc")],
        [("a", b"x"), ("b", None), ("a", b"42")],
        [("drop", b"z"), ("keep", b"true")],
        [("trace", b"[1,2]"), ("drop", b"")],
    ]
    stamps = [
        0,
        -1,
        1_700_000_000_123,
        1_709_164_800_000 - 1,
        1_709_164_800_000,
        951_782_400_000 + 43_200_000,
        -62_135_596_800_000,
        253_402_300_799_999,
        1_234_567_890_999,
        1_072_915_200_000 + 12 * 3_600_000 - 1,
    ]
    rows = []
    offsets = {}
    rng = random.Random(7)
    for i in range(180):
        topic = topics[i % len(topics)]
        partition = (i // len(topics)) % 3
        offset = offsets.get((topic, partition), 100)
        offsets[(topic, partition)] = offset + 1
        key = None if i % 5 == 0 else f"k{i}".encode()
        value = None if i % 7 == 3 else (b"" if i % 11 == 0 else f"value {i}".encode())
        headers = header_sets[i % len(header_sets)] if i % 4 else header_sets[(i // 4) % len(header_sets)]
        ts = stamps[i % len(stamps)] if i % 3 else rng.randrange(-(10**12), 4 * 10**12)
        rows.append((key, value, topic, partition, offset, ts, 0, headers))
    return rows


def _frame(spark: SparkSession, rows: list[tuple[Any, ...]]) -> Any:
    """What Spark's Kafka source gives (timestamp as a timestamp column), in the rows' order."""
    frame = spark.createDataFrame(rows, KAFKA_DDL).coalesce(1)
    return frame.select(
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        F.timestamp_millis("ts").alias("timestamp"),
        "timestampType",
        "headers",
    )


def _chain(
    transforms: list[tuple[str, str, dict[str, str]]], predicates: dict[str, tuple[str, dict[str, str]]] | None = None
) -> PluginSpec:
    """``[(alias, class, {key: value})]`` (``predicate``/``negate`` among the keys) as the
    chain spec the runtime builds."""
    configs: dict[str, str] = {"transforms": ",".join(a for a, _, _ in transforms)}
    for alias, cls, own in transforms:
        configs[f"transforms.{alias}.type"] = cls
        configs.update({f"transforms.{alias}.{k}": v for k, v in own.items()})
    if predicates:
        configs["predicates"] = ",".join(predicates)
        for alias, (cls, own) in predicates.items():
            configs[f"predicates.{alias}.type"] = cls
            configs.update({f"predicates.{alias}.{k}": v for k, v in own.items()})
    return PluginSpec("sluice.transforms.chain.TransformationChain", configs)


_RUNS = itertools.count()


def _task(chain: PluginSpec, key: PluginSpec, value: PluginSpec, header: PluginSpec, policy: ErrorPolicy) -> TaskSpec:
    name = f"run{next(_RUNS)}"
    return TaskSpec(
        name,
        0,
        f"{__name__}.CapturingSinkTask",
        {"capture": name},
        name,
        key,
        value,
        header,
        errors=policy,
        transforms=chain,
    )


def _deliver(
    task: TaskSpec, frame: Any, columnar: bool, rows: list[tuple[Any, ...]], typed: Any = None
) -> tuple[list[Any], dict[str, Any]]:
    """Run one sink batch over ``frame``: (records put, {"commit": …, "dlq": …, "error": …})."""
    ranges: dict[tuple[str, int], tuple[int, int]] = {}
    for r in rows:
        tp = (r[2], r[3])
        start, end = ranges.get(tp, (r[4], r[4]))
        ranges[tp] = (min(start, r[4]), max(end, r[4] + 1))
    spec = SinkBatchSpec(
        task,
        0,
        sorted(ranges),
        {},
        {tp: r[0] for tp, r in ranges.items()},
        columnar=columnar,
        end={tp: r[1] for tp, r in ranges.items()},
        typed=typed,
    )
    table = frame.toArrow()
    out: dict[str, Any] = {"commit": {}, "dlq": [], "error": None}
    for batch in run_sink_batch(spec, iter(table.to_batches(max_chunksize=64))):
        for row in batch.to_pylist():
            if row["kind"] == "commit":
                out["commit"][(row["topic"], row["partition"])] = row["offset"]
            elif row["kind"] == "dlq":
                out["dlq"].append(
                    (
                        row["topic"],
                        row["partition"],
                        row["offset"],
                        row["key"],
                        row["value"],
                        row["headers_json"],
                        row["ts_ms"],
                    )
                )
            elif row["kind"] == "error":
                out["error"] = row["trace"].strip().splitlines()[-1]
    return CAPTURED.get(task.connector, []), out


def _both(
    spark: SparkSession,
    chain: PluginSpec,
    rows: list[tuple[Any, ...]] | None = None,
    *,
    key: PluginSpec = STRING,
    value: PluginSpec = STRING,
    header: PluginSpec = SIMPLE,
    policy: ErrorPolicy | None = None,
) -> tuple[list[Any], dict[str, Any]]:
    """The chain both ways; asserts it compiled and that both give the same; returns it."""
    rows = _records() if rows is None else rows
    policy = ErrorPolicy() if policy is None else policy
    frame = _frame(spark, rows)
    per_record_task = _task(chain, key, value, header, policy)
    expected = _deliver(per_record_task, sink_rows(frame), False, rows)
    columnar_task = _task(chain, key, value, header, policy)
    compiled, how = compile_sink_chain(columnar_task, spark._jvm)
    assert compiled is not None, how
    got = _deliver(columnar_task, sink_rows(frame, compiled), True, rows, compiled.typed)
    assert got[1] == expected[1]
    assert len(got[0]) == len(expected[0])
    for a, b in zip(got[0], expected[0], strict=True):
        assert _record_form(a) == _record_form(b), f"{a!r}\n!=\n{b!r}"
        assert list(a.headers) == list(b.headers)
        # Equal is not enough: 1 == 1.0 == True, and a Struct compares its values so.
        assert typed_form(a.key) == typed_form(b.key) and typed_form(a.value) == typed_form(b.value)
        assert [typed_form(h.value) for h in a.headers] == [typed_form(h.value) for h in b.headers]
    return expected


def _record_form(record: Any) -> tuple[Any, ...]:
    """What a sink task sees of a record (NaN equal to NaN)."""
    return (
        record.topic,
        record.kafka_partition,
        record.kafka_offset,
        record.key_schema,
        typed_form(record.key),
        record.value_schema,
        typed_form(record.value),
        record.timestamp,
        record.timestamp_type,
        record.original_topic,
        record.original_kafka_partition,
        record.original_kafka_offset,
    )


# --------------------------------------------------------------------------- transforms


@pytest.mark.parametrize(
    ("regex", "replacement"),
    [
        ("orders(.*)", "sales$1"),
        ("(?<name>[a-z]+)\\.(.*)", "${name}-$2-\\$"),
        ("a|ab", "X$0"),  # whole topic matches, first match is shorter: replaceFirst
        (".*?", "<$0>"),
        ("(o)(r)(d)(e)(r)(s)(.)(e)(u)(x)?", "$10$1"),  # $10 is group 10 (null here)
        ("nothing", "never"),
        ("\\p{Lower}+", "lower"),
        ("(?i)PAYMENTS", "pay"),
    ],
)
def test_regex_router(spark: SparkSession, regex: str, replacement: str) -> None:
    records, _ = _both(spark, _chain([("route", REGEX_ROUTER, {"regex": regex, "replacement": replacement})]))
    assert records


def test_regex_router_routes_as_kafka_does(spark: SparkSession) -> None:
    records, out = _both(spark, _chain([("route", REGEX_ROUTER, {"regex": "a|ab", "replacement": "X"})]))
    assert {r.topic for r in records} >= {"Xb", "orders"}
    assert out["commit"]  # offsets are those of the consumed topics, whatever the routing


@pytest.mark.parametrize(
    ("topic_format", "timestamp_format"),
    [
        ("${topic}-${timestamp}", "yyyyMMdd"),
        ("${timestamp}.${topic}.${topic}", "yyyy-MM-dd'T'HH:mm:ss.SSS"),
        ("x-${timestamp}", "yy M d H m s S EEE EEEE MMM MMMM"),
        ("${topic}", "D DD DDD F W u a h hh K KK k kk"),
        ("${topic}_${timestamp}", "G z zzzz Z X 'it''s' [#]{}"),
        ("fixed", "''"),
    ],
)
def test_timestamp_router(spark: SparkSession, topic_format: str, timestamp_format: str) -> None:
    chain = _chain([("time", TIMESTAMP_ROUTER, {"topic.format": topic_format, "timestamp.format": timestamp_format})])
    _both(spark, chain)


def test_timestamp_router_out_of_range_timestamps_go_through_the_python_chain(spark: SparkSession) -> None:
    """Null timestamps and years beyond 9999 fail per record (DataError): the columnar path
    hands exactly those records to the Python chain, so the error policy sees the same."""
    rows = _records()[:30]
    rows[4] = (*rows[4][:5], 253_402_300_800_000, *rows[4][6:])  # year 10000
    rows[9] = (*rows[9][:5], None, *rows[9][6:])  # no timestamp
    chain = _chain(
        [("keep", FILTER, {"predicate": "tomb"}), ("time", TIMESTAMP_ROUTER, {})], {"tomb": (RECORD_IS_TOMBSTONE, {})}
    )
    policy = ErrorPolicy(tolerate_all=True, dead_letter_topic="dlq")
    records, out = _both(spark, chain, rows, policy=policy)
    assert len(out["dlq"]) == 2 and len(records) < len(rows) - 2
    # without tolerance both fail the batch with the same error
    _, failed = _both(spark, chain, rows)
    assert failed["error"] and "Tolerance exceeded" in failed["error"]


def test_filter_alone_drops_everything_and_still_commits_the_ranges(spark: SparkSession) -> None:
    records, out = _both(spark, _chain([("drop", FILTER, {})]))
    assert records == [] and out["commit"] and all(o > 100 for o in out["commit"].values())


@pytest.mark.parametrize("negate", ["false", "true"])
@pytest.mark.parametrize(
    "predicate",
    [
        (TOPIC_NAME_MATCHES, {"pattern": "orders.*"}),
        (TOPIC_NAME_MATCHES, {"pattern": "a|ab"}),
        (TOPIC_NAME_MATCHES, {"pattern": "[a-z]+"}),
        (HAS_HEADER_KEY, {"name": "trace"}),
        (HAS_HEADER_KEY, {"name": "b"}),
        (RECORD_IS_TOMBSTONE, {}),
    ],
    ids=lambda p: p if isinstance(p, str) else f"{p[0].rsplit('.', 1)[1]}{list(p[1].values())}",
)
def test_filter_with_each_predicate(spark: SparkSession, predicate: tuple[str, dict[str, str]], negate: str) -> None:
    chain = _chain([("drop", FILTER, {"predicate": "p", "negate": negate})], {"p": predicate})
    records, _ = _both(spark, chain)
    assert 0 < len(records) < len(_records())


@pytest.mark.parametrize("value", [BYTES, STRING])
def test_tombstones_with_byte_array_values(spark: SparkSession, value: PluginSpec) -> None:
    chain = _chain([("drop", FILTER, {"predicate": "t", "negate": "true"})], {"t": (RECORD_IS_TOMBSTONE, {})})
    records, _ = _both(spark, chain, key=BYTES, value=value, header=BYTES)
    assert records and all(r.value is None for r in records)


@pytest.mark.parametrize("names", ["drop", "a,drop", "missing", " b , a "])
def test_drop_headers(spark: SparkSession, names: str) -> None:
    _both(spark, _chain([("dh", DROP_HEADERS, {"headers": names})]))


@pytest.mark.parametrize("literal", ["hello", "42", "true", "[1,2]", "2024-01-31", "null", '{"a":1}', "1.5"])
def test_insert_header(spark: SparkSession, literal: str) -> None:
    spec = _chain([("ih", INSERT_HEADER, {"header": "added", "value.literal": literal})])
    task = _task(spec, STRING, STRING, SIMPLE, ErrorPolicy())
    compiled, how = compile_sink_chain(task, spark._jvm)
    if compiled is None:  # the header converter cannot give back exactly this value
        assert "does not read back" in how
        return
    records, _ = _both(spark, spec)
    assert all(r.headers.last_with_name("added") is not None for r in records)


def test_mixed_chain(spark: SparkSession) -> None:
    chain = _chain(
        [
            ("dropLogs", FILTER, {"predicate": "isLogs"}),
            ("route", REGEX_ROUTER, {"regex": "orders(.*)", "replacement": "sales$1"}),
            ("tag", INSERT_HEADER, {"header": "via", "value.literal": "sluice", "predicate": "isSales"}),
            (
                "time",
                TIMESTAMP_ROUTER,
                {"topic.format": "${topic}-${timestamp}", "timestamp.format": "yyyy.MM", "predicate": "isSales"},
            ),
            ("strip", DROP_HEADERS, {"headers": "drop,a", "predicate": "hasTrace", "negate": "true"}),
            ("noTombs", FILTER, {"predicate": "isTomb"}),
            ("last", REGEX_ROUTER, {"regex": "(.*)-(\\d{4})\\.(\\d{2})", "replacement": "$3/$2/$1"}),
        ],
        {
            "isLogs": (TOPIC_NAME_MATCHES, {"pattern": "logs-.*"}),
            "isSales": (TOPIC_NAME_MATCHES, {"pattern": "sales.*"}),
            "hasTrace": (HAS_HEADER_KEY, {"name": "trace"}),
            "isTomb": (RECORD_IS_TOMBSTONE, {}),
        },
    )
    records, _ = _both(spark, chain)
    topics = {r.topic for r in records}
    assert not any(t.startswith("logs-") for t in topics) and any("/" in t for t in topics)


def test_routing_with_a_converter_that_can_fail(spark: SparkSession) -> None:
    """Routing needs nothing of the converters: bad JSON fails (or is dead-lettered) as
    consumed, on both paths, and the others are routed."""
    rows = [
        (None, b'{"n": 1}' if i % 3 else b"{bad", "orders", 0, i, 1_700_000_000_000 + i, 0, None) for i in range(20)
    ]
    chain = _chain(
        [
            ("route", REGEX_ROUTER, {"regex": "orders", "replacement": "sales"}),
            ("time", TIMESTAMP_ROUTER, {"timestamp.format": "yyyy"}),
        ]
    )
    policy = ErrorPolicy(tolerate_all=True, dead_letter_topic="dlq")
    records, out = _both(spark, chain, rows, value=JSON, policy=policy)
    assert len(records) == 13 and {r.topic for r in records} == {"sales-2023"} and len(out["dlq"]) == 7


# --------------------------------------------------------------------------- what stays per record


@pytest.mark.parametrize(
    ("transforms", "predicates", "value", "reason"),
    [
        ([("f", FILTER, {})], None, JSON, "may fail to read"),
        ([("f", FILTER, {"predicate": "t"})], {"t": (RECORD_IS_TOMBSTONE, {})}, JSON, "may fail to read"),
        (
            [("r", REGEX_ROUTER, {"regex": "x", "replacement": "y", "predicate": "t"})],
            {"t": (RECORD_IS_TOMBSTONE, {})},
            JSON,
            "RecordIsTombstone with value converter",
        ),
        ([("d", DROP_HEADERS, {"headers": "a"})], None, JSON, "may fail to read"),
        ([("t", TIMESTAMP_ROUTER, {"timestamp.format": "YYYY-ww"})], None, STRING, "week field"),
        ([("r", REGEX_ROUTER, {"regex": "(?x) a b # comment", "replacement": "y"})], None, STRING, "anchored"),
        ([("r", REGEX_ROUTER, {"regex": "\\Qa.b", "replacement": "y"})], None, STRING, "anchored"),
        ([("r", REGEX_ROUTER, {"regex": "(a)", "replacement": "$2"})], None, STRING, "not valid"),
        ([("v", T + "value_to_key.ValueToKey", {"fields": "a"})], None, STRING, "fails on these schemas"),
        (
            [("r", REGEX_ROUTER, {"regex": "x", "replacement": "y", "predicate": "p"})],
            {"p": (T + "predicates.HasHeaderKey", {})},
            STRING,
            "does not build",
        ),
        ([("d", DROP_HEADERS, {"headers": "a, a"})], None, STRING, "does not build"),
    ],
)
def test_chains_without_a_columnar_form(
    spark: SparkSession, transforms: list[Any], predicates: Any, value: PluginSpec, reason: str
) -> None:
    compiled, how = compile_chain(
        _chain(transforms, predicates),
        key_converter=STRING,
        value_converter=value,
        header_converter=SIMPLE,
        jvm=spark._jvm,
    )
    assert compiled is None and reason in how, how


def test_insert_header_needs_a_round_trip_through_the_header_converter() -> None:
    spec = _chain([("ih", INSERT_HEADER, {"header": "n", "value.literal": "42"})])
    compiled, how = compile_chain(spec, key_converter=STRING, value_converter=STRING, header_converter=STRING)
    assert compiled is None and "does not read back" in how  # StringConverter gives "42" back, not INT8 42
    compiled, _ = compile_chain(spec, key_converter=STRING, value_converter=STRING, header_converter=SIMPLE)
    assert compiled is not None


def test_no_transforms() -> None:
    assert compile_chain(None, key_converter=STRING, value_converter=STRING, header_converter=SIMPLE)[0] is None


# --------------------------------------------------------------------------- SimpleDateFormat


@pytest.mark.parametrize(
    "pattern",
    [
        "yyyyMMdd",
        "y yy yyy yyyy yyyyy",
        "M MM MMM MMMM MMMMM L LL LLL LLLL",
        "d dd ddd",
        "H HH k kk K KK h hh",
        "m mm s ss S SS SSS SSSS",
        "E EE EEE EEEE EEEEE u uu",
        "D DD DDD DDDD F FF W WW",
        "a G GGGG",
        "z zz zzzz Z ZZZZ X XX XXX",
        "'quoted ''text''' - ['x'] #{} 123",
        "",
        "''''",
    ],
)
def test_simple_date_format_matches_the_per_record_formatter(spark: SparkSession, pattern: str) -> None:
    rng = random.Random(pattern)
    stamps = [
        0,
        -1,
        1,
        999,
        1000,
        -62_135_596_800_000,
        253_402_300_799_999,
        951_782_400_000,
        1_709_251_199_999,
        1_704_067_200_000,
        1_735_603_200_000,
    ]
    stamps += [rng.randrange(-62_135_596_800_000, 253_402_300_799_999) for _ in range(300)]
    stamps += [rng.randrange(0, 4_102_444_800_000) for _ in range(300)]
    start = dt.datetime(2023, 12, 20, tzinfo=dt.UTC)
    stamps += [int((start + dt.timedelta(hours=7 * i)).timestamp() * 1000) + i for i in range(200)]
    frame = spark.createDataFrame([(s,) for s in stamps], "ms long")
    got = [r[0] for r in frame.select(simple_date_format(pattern)(F.col("ms"))).collect()]
    python = SimpleDateFormat(pattern)
    expected = [SimpleDateFormat(pattern).format(s) if i % 2 else python.format(s) for i, s in enumerate(stamps)]
    assert got == expected


def test_arrow_batches_of_the_columnar_rows_keep_the_executor_schema(spark: SparkSession) -> None:
    spec = _chain(
        [("route", REGEX_ROUTER, {"regex": "orders", "replacement": "x"}), ("dh", DROP_HEADERS, {"headers": "a"})]
    )
    compiled, _ = compile_chain(
        spec, key_converter=STRING, value_converter=STRING, header_converter=SIMPLE, jvm=spark._jvm
    )
    assert compiled is not None
    schema = sink_rows(_frame(spark, _records()[:5]), compiled).toArrow().schema
    assert schema.field("sink_topic").type == pa.string()
    assert schema.field("sink_headers_json").type == pa.string()
    assert schema.names[:8] == ["key", "value", "topic", "partition", "offset", "ts_ms", "ts_type", "headers_json"]


# --------------------------------------------------------------------------- key and value steps

HOIST_V = T + "hoist_field.HoistFieldValue"
HOIST_K = T + "hoist_field.HoistFieldKey"
INSERT_V = T + "insert_field.InsertFieldValue"
EXTRACT_V = T + "extract_field.ExtractFieldValue"
EXTRACT_K = T + "extract_field.ExtractFieldKey"
REPLACE_V = T + "replace_field.ReplaceFieldValue"
MASK_V = T + "mask_field.MaskFieldValue"
SET_METADATA_V = T + "set_schema_metadata.SetSchemaMetadataValue"
SET_METADATA_K = T + "set_schema_metadata.SetSchemaMetadataKey"
FLATTEN_V = T + "flatten.FlattenValue"
CAST_V = T + "cast.CastValue"
CAST_K = T + "cast.CastKey"
TIMESTAMP_CONVERTER_V = T + "timestamp_converter.TimestampConverterValue"
VALUE_TO_KEY = T + "value_to_key.ValueToKey"
HEADER_FROM_V = T + "header_from.HeaderFromValue"
HEADER_FROM_K = T + "header_from.HeaderFromKey"

# Texts a StringConverter reads: numbers in and out of every integer range, Java-only
# spellings (Unicode digits, hexadecimal, suffixes), booleans, empty, invalid UTF-8.
TEXTS: list[bytes | None] = [
    b"42",
    b"-7",
    b"0",
    b"+5",
    b"127",
    b"128",
    b"-129",
    b"32767",
    b"40000",
    b"2147483647",
    b"2147483648",
    b"-9223372036854775808",
    b"9223372036854775807",
    b"99999999999999999999",
    b"3.5",
    b"-0.0",
    b"1e3",
    b".5",
    b"1E-400",
    b"1e400",
    b"NaN",
    b"Infinity",
    b"0x1p3",
    b"2f",
    b" 5",
    b"\xd9\xa3",
    b"true",
    b"TRUE",
    b"false",
    b"yes",
    b"",
    b"abc",
    b"\xff\xfe",
    b"caf\xc3\xa9",
    None,
    b"16777217",
    b"9007199254740993",
]


def _value_rows() -> list[tuple[Any, ...]]:
    """Kafka rows whose keys and values are the texts above, timestamps of every kind."""
    rows = []
    base = _records()
    for i, row in enumerate(base):
        value = TEXTS[i % len(TEXTS)]
        key = TEXTS[(i * 7 + 3) % len(TEXTS)] if i % 5 else None
        rows.append((key, value, *row[2:]))
    rows[9] = (*rows[9][:5], None, *rows[9][6:])  # a record without a timestamp
    rows[10] = (*rows[10][:5], 253_402_300_800_000, *rows[10][6:])  # year 10000
    return rows


HOIST = ("hoist", HOIST_V, {"field": "line"})
INSERT = (
    "insert",
    INSERT_V,
    {
        "topic.field": "topic",
        "partition.field": "part",
        "offset.field": "offset!",
        "timestamp.field": "ts",
        "static.field": "origin",
        "static.value": "sluice",
    },
)
TOLERANT = ErrorPolicy(tolerate_all=True, dead_letter_topic="dlq")


def _value_case(
    spark: SparkSession,
    transforms: list[tuple[str, str, dict[str, str]]],
    predicates: dict[str, tuple[str, dict[str, str]]] | None = None,
    *,
    key: PluginSpec = STRING,
    value: PluginSpec = STRING,
    policy: ErrorPolicy = TOLERANT,
    in_spark: float = 0.5,
) -> tuple[list[Any], dict[str, Any]]:
    """The chain both ways over the text rows; also checks the columnar form changes the
    key or value in Spark (it compiled with typed outputs) for at least the ``in_spark``
    share of the rows (the texts are mostly edge cases a cast leaves to Python)."""
    chain = _chain(transforms, predicates)
    compiled, how = compile_chain(
        chain, key_converter=key, value_converter=value, header_converter=SIMPLE, jvm=spark._jvm
    )
    assert compiled is not None and compiled.typed is not None, how
    rows = _value_rows()
    # Rows Spark could not do exactly carry no sink_topic: most must not be those.
    redone = sink_rows(_frame(spark, rows), compiled).where(F.col("sink_topic").isNull()).count()
    assert len(rows) - redone >= in_spark * len(rows), f"{redone} of {len(rows)} rows went through the Python chain"
    return _both(spark, chain, rows, key=key, value=value, policy=policy)


@pytest.mark.parametrize("value", [STRING, BYTES])
def test_hoist_field(spark: SparkSession, value: PluginSpec) -> None:
    records, _ = _value_case(spark, [HOIST, ("hoistKey", HOIST_K, {"field": "k"})], value=value)
    assert all(isinstance(r.value, Struct) and isinstance(r.key, Struct) for r in records)


def test_insert_field(spark: SparkSession) -> None:
    records, out = _value_case(spark, [HOIST, INSERT])
    assert records[0].value.get("origin") == "sluice" and records[0].value.get("topic") == records[0].topic
    assert len(out["dlq"]) == 1  # the year 10000 timestamp has no datetime: an error on both paths


def test_insert_field_sees_the_routed_topic(spark: SparkSession) -> None:
    records, _ = _value_case(
        spark,
        [
            ("route", REGEX_ROUTER, {"regex": "orders(.*)", "replacement": "sales$1"}),
            HOIST,
            ("insert", INSERT_V, {"topic.field": "t", "timestamp.field": "when!"}),
        ],
    )
    assert any(r.value.get("t") == "sales.eu" for r in records)


@pytest.mark.parametrize(
    "extract",
    [
        [("x", EXTRACT_V, {"field": "line"})],
        [("outer", HOIST_V, {"field": "o"}), ("x", EXTRACT_V, {"field": "o.line", "field.syntax.version": "V2"})],
        [("x", EXTRACT_V, {"field": "ts"}), ("k", HOIST_K, {"field": "a"}), ("xk", EXTRACT_K, {"field": "a"})],
    ],
)
def test_extract_field(spark: SparkSession, extract: list[Any]) -> None:
    _value_case(spark, [HOIST, INSERT, *extract])


@pytest.mark.parametrize(
    "own",
    [
        {"exclude": "part,offset"},
        {"include": "line,ts"},
        {"renames": "line:text,ts:at"},
        {"include": "line,missing", "renames": "line:l"},
    ],
)
def test_replace_field(spark: SparkSession, own: dict[str, str]) -> None:
    _value_case(spark, [HOIST, INSERT, ("replace", REPLACE_V, own)])


@pytest.mark.parametrize(
    "own", [{"fields": "line,part,ts,offset"}, {"fields": "line,part", "replacement": "7"}, {"fields": "missing"}]
)
def test_mask_field(spark: SparkSession, own: dict[str, str]) -> None:
    records, _ = _value_case(spark, [HOIST, INSERT, ("mask", MASK_V, own)])
    assert own["fields"] == "missing" or all(r.value.get("part") in (0, 7) for r in records)


def test_set_schema_metadata(spark: SparkSession) -> None:
    records, _ = _value_case(
        spark,
        [
            HOIST,
            ("meta", SET_METADATA_V, {"schema.name": "com.example.Line", "schema.version": "3"}),
            ("k", HOIST_K, {"field": "k"}),
            ("metaKey", SET_METADATA_K, {"schema.name": "K"}),
        ],
    )
    assert records[0].value_schema.name == "com.example.Line" and records[0].value.schema.version == 3


@pytest.mark.parametrize("delimiter", [".", "_"])
def test_flatten(spark: SparkSession, delimiter: str) -> None:
    records, _ = _value_case(
        spark,
        [
            HOIST,
            INSERT,
            ("outer", HOIST_V, {"field": "o"}),
            ("meta", INSERT_V, {"partition.field": "p"}),
            ("flat", FLATTEN_V, {"delimiter": delimiter}),
        ],
    )
    assert records[0].value.schema.field(f"o{delimiter}line") is not None


@pytest.mark.parametrize("target", ["int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string"])
@pytest.mark.parametrize("side", ["value", "key"])
def test_cast_whole_text(spark: SparkSession, target: str, side: str) -> None:
    """Java's parsing where the text is plain; everything else is per record, so the
    rejects and the Java-only spellings end up the same."""
    cast = CAST_V if side == "value" else CAST_K
    records, out = _value_case(spark, [("cast", cast, {"spec": target})], in_spark=0.1)
    assert records
    if target not in ("boolean", "string"):
        assert out["dlq"]  # "abc" is not a number


@pytest.mark.parametrize("target", ["int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string"])
def test_cast_numbers_and_booleans(spark: SparkSession, target: str) -> None:
    """Every source type to ``target``: integers narrow, floats truncate and saturate."""
    _value_case(
        spark,
        [
            HOIST,
            INSERT,
            ("toNumbers", CAST_V, {"spec": "line:float64,part:int8,offset:int16,ts:int64"}),
            ("copy", CAST_V, {"spec": "part:boolean"}),
            (
                "cast",
                CAST_V,
                {
                    "spec": f"line:{target},offset:{target},ts:{target}"
                    if target != "string"
                    else "offset:string,ts:string,part:string"
                },
            ),
        ],
    )


def test_cast_bytes_to_base64(spark: SparkSession) -> None:
    _value_case(spark, [("cast", CAST_V, {"spec": "string"})], value=BYTES)


@pytest.mark.parametrize(
    "own",
    [
        {"field": "ts", "target.type": "string", "format": "yyyy-MM-dd'T'HH:mm:ss.SSS EEE"},
        {"field": "ts", "target.type": "unix", "unix.precision": "seconds"},
        {"field": "ts", "target.type": "unix", "unix.precision": "microseconds"},
        {"field": "ts", "target.type": "unix", "unix.precision": "nanoseconds"},
        {"field": "ts", "target.type": "Date"},
        {"field": "ts", "target.type": "Time"},
        {"field": "offset", "target.type": "Timestamp"},
        {"field": "offset", "target.type": "Date", "unix.precision": "seconds"},
        {"field": "offset", "target.type": "string", "format": "HH:mm", "unix.precision": "microseconds"},
        {"field": "offset", "target.type": "unix", "unix.precision": "nanoseconds"},
    ],
)
def test_timestamp_converter(spark: SparkSession, own: dict[str, str]) -> None:
    _value_case(spark, [HOIST, INSERT, ("convert", TIMESTAMP_CONVERTER_V, own)])


def test_timestamp_converter_whole_value_and_unix_extremes(spark: SparkSession) -> None:
    """Whole values; text cast to Unix seconds reaches the long range, where Java saturates."""
    _value_case(
        spark,
        [
            ("n", CAST_V, {"spec": "int64"}),
            ("convert", TIMESTAMP_CONVERTER_V, {"target.type": "Timestamp", "unix.precision": "seconds"}),
            ("back", TIMESTAMP_CONVERTER_V, {"target.type": "unix", "unix.precision": "microseconds"}),
        ],
        in_spark=0.1,
    )
    _value_case(
        spark,
        [
            ("n", CAST_V, {"spec": "int64"}),
            (
                "convert",
                TIMESTAMP_CONVERTER_V,
                {"target.type": "string", "format": "yyyy", "unix.precision": "seconds"},
            ),
        ],
        in_spark=0.1,
    )


def test_value_to_key(spark: SparkSession) -> None:
    records, _ = _value_case(spark, [HOIST, INSERT, ("v2k", VALUE_TO_KEY, {"fields": "line,part"})])
    assert all(r.key.get("line") == r.value.get("line") for r in records)


def test_value_to_key_under_a_predicate_keeps_the_key_where_it_does_not_apply(spark: SparkSession) -> None:
    """A step under a predicate that keeps the schemas: rows it skips keep the column it
    writes (the key here), not the one it reads."""
    records, _ = _value_case(
        spark,
        [
            HOIST,
            ("insert", INSERT_V, {"topic.field": "t"}),
            ("first", VALUE_TO_KEY, {"fields": "line"}),
            ("again", VALUE_TO_KEY, {"fields": "line", "predicate": "p"}),
        ],
        {"p": (TOPIC_NAME_MATCHES, {"pattern": "orders"})},
    )
    assert all(r.key.get("line") == r.value.get("line") for r in records)


@pytest.mark.parametrize("operation", ["copy", "move"])
def test_header_from(spark: SparkSession, operation: str) -> None:
    records, _ = _value_case(
        spark,
        [
            HOIST,
            INSERT,
            ("hv", HEADER_FROM_V, {"fields": "line,ts,part", "headers": "l,t,p", "operation": operation}),
            ("k", HOIST_K, {"field": "key"}),
            ("hk", HEADER_FROM_K, {"fields": "key", "headers": "k", "operation": operation}),
        ],
    )
    assert all(r.headers.last_with_name("t") is not None for r in records)


def test_value_steps_with_routing_filters_and_predicates(spark: SparkSession) -> None:
    records, out = _value_case(
        spark,
        [
            ("dropTombs", FILTER, {"predicate": "isTomb"}),
            HOIST,
            INSERT,
            ("route", REGEX_ROUTER, {"regex": "orders(.*)", "replacement": "sales$1"}),
            ("mask", MASK_V, {"fields": "line", "predicate": "isSales"}),
            ("time", TIMESTAMP_ROUTER, {"timestamp.format": "yyyy"}),
            ("cast", CAST_V, {"spec": "part:int32", "predicate": "isSales", "negate": "true"}),
            ("dh", DROP_HEADERS, {"headers": "drop"}),
        ],
        {"isTomb": (RECORD_IS_TOMBSTONE, {}), "isSales": (TOPIC_NAME_MATCHES, {"pattern": "sales.*"})},
    )
    assert records and all(r.value is not None for r in records)


def test_failing_casts_fail_the_task_the_same_way(spark: SparkSession) -> None:
    _, out = _value_case(spark, [("cast", CAST_V, {"spec": "int32"})], policy=ErrorPolicy(), in_spark=0.1)
    assert out["error"] and "Tolerance exceeded" in out["error"]


@pytest.mark.parametrize(
    ("transforms", "value", "reason"),
    [
        ([("cast", CAST_V, {"spec": "int32"})], JSON, "has no columnar form"),
        (
            [HOIST, ("cast", CAST_V, {"spec": "line:float64"}), ("s", CAST_V, {"spec": "line:string"})],
            STRING,
            "floating point number to string",
        ),
        ([HOIST, ("x", EXTRACT_V, {"field": "nope"})], STRING, "fails on these schemas"),
        (
            [
                HOIST,
                ("hv", HEADER_FROM_V, {"fields": "line", "headers": "l", "operation": "copy"}),
                ("dh", DROP_HEADERS, {"headers": "l"}),
            ],
            STRING,
            "after HeaderFrom",
        ),
        ([("h", HOIST_V, {"field": "x", "predicate": "p"})], STRING, "changes the schema"),
        ([("c", TIMESTAMP_CONVERTER_V, {"target.type": "unix", "format": "yyyy"})], STRING, "Could not parse"),
    ],
)
def test_value_steps_without_a_columnar_form(
    spark: SparkSession, transforms: list[Any], value: PluginSpec, reason: str
) -> None:
    predicates = {"p": (TOPIC_NAME_MATCHES, {"pattern": "orders"})}
    compiled, how = compile_chain(
        _chain(transforms, predicates),
        key_converter=STRING,
        value_converter=value,
        header_converter=SIMPLE,
        jvm=spark._jvm,
    )
    assert compiled is None and reason in how, how
