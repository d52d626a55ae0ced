"""The executor's record pipeline under a connector's error policy: retries, tolerance,
dead-lettering, and which offsets count as processed."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from sluice.api.data import Schema
from sluice.api.errors import DataError, RetriableError
from sluice.api.records import SourceRecord
from sluice.converters.json import JsonConverter
from sluice.converters.simple_header import SimpleHeaderConverter
from sluice.converters.string import StringConverter
from sluice.taskhost.pipeline import TIMESTAMP_SEPARATOR, DeadLetter, RecordPipeline
from sluice.taskhost.tolerance import ErrorPolicy, Stage, ToleranceExceeded, ToleranceOperator
from sluice.transforms.chain import TransformationChain
from sluice.transforms.regex_router import RegexRouter


def _pipeline(policy: ErrorPolicy, value_converter=None, chain: TransformationChain | None = None) -> RecordPipeline:
    json_conv = JsonConverter()
    json_conv.configure({"schemas.enable": "false"}, False)
    key = StringConverter()
    key.configure({}, True)
    headers = SimpleHeaderConverter()
    headers.configure({})
    return RecordPipeline(
        "c", 0, ("KeyConv", key), ("ValueConv", value_converter or json_conv), ("HeaderConv", headers), chain, policy
    )


def _kafka_batch(values: list[bytes | None]) -> pa.RecordBatch:
    n = len(values)
    return pa.RecordBatch.from_pydict(
        {
            "key": pa.array([None] * n, pa.binary()),
            "value": pa.array(values, pa.binary()),
            "topic": pa.array(["t"] * n),
            "partition": pa.array([0] * n, pa.int32()),
            "offset": pa.array(range(n), pa.int64()),
            "ts_ms": pa.array([7] * n, pa.int64()),
            "ts_type": pa.array([0] * n, pa.int32()),
            "headers_json": pa.array([json.dumps([{"key": "h", "value": "aGk="}])] + [None] * (n - 1), pa.string()),
        }
    )


GOOD_BAD = [b'{"a":1}', b"{bad", b'{"a":2}', b"[", b'{"a":3}']


def test_tolerance_all_skips_bad_sink_records_and_dead_letters_their_raw_rows():
    pipeline = _pipeline(ErrorPolicy(tolerate_all=True, dead_letter_topic="dlq", context_headers=True))
    dead: list[DeadLetter] = []
    records = pipeline.sink_records(_kafka_batch(GOOD_BAD), dead)
    assert [r.value for r in records] == [{"a": 1}, {"a": 2}, {"a": 3}]
    assert [r.kafka_offset for r in records] == [0, 2, 4]
    assert [(d.offset, d.value, d.timestamp) for d in dead] == [(1, b"{bad", 7), (3, b"[", 7)]
    headers = dict(dead[0].headers)
    assert headers["__connect.errors.stage"] == Stage.VALUE_CONVERTER.encode()
    assert headers["__connect.errors.class.name"] == b"ValueConv"
    assert headers["__connect.errors.offset"] == b"1"
    assert headers["__connect.errors.exception.class.name"] == b"sluice.api.errors.DataError"


def test_tolerance_none_fails_at_the_first_bad_record_after_dead_lettering_it():
    pipeline = _pipeline(ErrorPolicy(dead_letter_topic="dlq"))
    dead: list[DeadLetter] = []
    with pytest.raises(ToleranceExceeded, match="Tolerance exceeded in error handler") as failure:
        pipeline.sink_records(_kafka_batch(GOOD_BAD), dead)
    assert isinstance(failure.value.__cause__, DataError)
    assert [d.offset for d in dead] == [1]
    assert dead[0].headers == []  # context headers are off by default


def test_without_a_dead_letter_queue_nothing_is_collected():
    dead: list[DeadLetter] = []
    records = _pipeline(ErrorPolicy(tolerate_all=True)).sink_records(_kafka_batch(GOOD_BAD), dead)
    assert len(records) == 3 and dead == []


class _Flaky:
    """A value converter whose first calls raise a retriable error."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.inner = StringConverter()
        self.inner.configure({}, False)

    def to_connect_batch(self, topic, values):
        return None

    def to_connect_data(self, topic, value, headers=None):
        if self.failures:
            self.failures -= 1
            raise RetriableError("not yet")
        return self.inner.to_connect_data(topic, value, headers)


def test_retriable_errors_are_retried_with_backoff_until_the_timeout():
    sleeps: list[float] = []
    clock = [0.0]

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock[0] += seconds

    operator = ToleranceOperator(
        ErrorPolicy(retry_timeout_ms=10_000, retry_delay_max_ms=1_000), "c-0", sleep=sleep, clock=lambda: clock[0]
    )
    calls = []

    def step():
        calls.append(1)
        if len(calls) < 5:
            raise RetriableError("again")
        return "done"

    assert operator.execute(Stage.VALUE_CONVERTER, "X", step, lambda failed: None) == (True, "done")
    assert sleeps == [0.3, 0.6, 1.0, 1.0]  # doubling from 300 ms, capped at errors.retry.delay.max.ms

    calls.clear()
    sleeps.clear()
    failures = []
    operator = ToleranceOperator(
        ErrorPolicy(tolerate_all=True, retry_timeout_ms=2_000, retry_delay_max_ms=60_000),
        "c-0",
        sleep=sleep,
        clock=lambda: clock[0],
    )
    always = lambda: (_ for _ in ()).throw(RetriableError("down"))  # noqa: E731
    assert operator.execute(Stage.VALUE_CONVERTER, "X", always, failures.append) == (False, None)
    assert sum(sleeps) == pytest.approx(2.0)  # gave up at the deadline
    assert len(failures) == 1


def test_a_non_retriable_error_is_not_retried():
    sleeps: list[float] = []
    operator = ToleranceOperator(ErrorPolicy(tolerate_all=True, retry_timeout_ms=-1), "c-0", sleep=sleeps.append)
    result = operator.execute(
        Stage.TRANSFORMATION, "X", lambda: (_ for _ in ()).throw(DataError("bad")), lambda failed: None
    )
    assert result == (False, None) and sleeps == []


def _source(i: int, value: object, topic: str = "out") -> SourceRecord:
    return SourceRecord({"f": "x"}, {"pos": i}, topic, None, None, None, Schema.STRING_SCHEMA, value, 1000 + i)


def test_source_records_failing_conversion_are_dead_lettered_and_their_offsets_still_count():
    pipeline = _pipeline(
        ErrorPolicy(tolerate_all=True, dead_letter_topic="dlq", context_headers=True), value_converter=JsonConverter()
    )
    pipeline.value_converter.configure({"schemas.enable": "true"}, False)
    records = [_source(0, "a"), _source(1, 42), _source(2, "c")]  # 42 is not a STRING
    batch, processed, error = pipeline.source_batch(records)
    assert error is None
    assert processed == records
    rows = batch.to_pydict()
    assert rows["topic"] == ["out", "out", "dlq"]
    described = json.loads(rows["value"][2])
    assert described["source_offset"] == {"pos": 1} and described["topic"] == "out"
    headers = {h["key"]: h["value"] for h in rows["headers"][2]}
    assert headers["__connect.errors.stage"] == b"VALUE_CONVERTER"


def test_source_failure_beyond_tolerance_delivers_the_records_before_it():
    pipeline = _pipeline(ErrorPolicy(), value_converter=JsonConverter())
    pipeline.value_converter.configure({"schemas.enable": "true"}, False)
    records = [_source(0, "a"), _source(1, 42), _source(2, "c")]
    batch, processed, error = pipeline.source_batch(records)
    assert isinstance(error, ToleranceExceeded)
    assert processed == records[:1]
    assert batch.to_pydict()["topic"] == ["out"]


def test_source_chain_routes_filters_and_timestamps_travel_with_the_topic():
    chain = TransformationChain.from_connector_config(
        {
            "transforms": "route,drop",
            "transforms.route.type": "sluice.transforms.regex_router.RegexRouter",
            "transforms.route.regex": "out",
            "transforms.route.replacement": "routed",
            "transforms.drop.type": "sluice.transforms.filter.Filter",
            "transforms.drop.predicate": "isB",
            "predicates": "isB",
            "predicates.isB.type": "sluice.transforms.predicates.TopicNameMatches",
            "predicates.isB.pattern": "b-.*",
        },
        _load,
    )
    pipeline = _pipeline(ErrorPolicy(), value_converter=StringConverter(), chain=chain)
    pipeline.value_converter.configure({}, False)
    records = [_source(0, "a"), _source(1, "b", topic="b-topic"), _source(2, "c")]
    batch, processed, error = pipeline.source_batch(records, write_timestamps=True)
    assert error is None and processed == records  # the filtered record's offset counts too
    assert batch.to_pydict()["topic"] == [f"routed{TIMESTAMP_SEPARATOR}1000", f"routed{TIMESTAMP_SEPARATOR}1002"]
    assert batch.to_pydict()["value"] == [b"a", b"c"]


def _load(_kind: str, path: str) -> type:
    import importlib

    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_a_routed_record_that_fails_later_in_the_chain_is_dead_lettered_as_consumed():
    chain = TransformationChain.from_connector_config(
        {
            "transforms": "route,cast",
            "transforms.route.type": "sluice.transforms.regex_router.RegexRouter",
            "transforms.route.regex": "t",
            "transforms.route.replacement": "routed",
            "transforms.cast.type": "sluice.transforms.cast.CastValue",
            "transforms.cast.spec": "int32",
        },
        _load,
    )
    value = StringConverter()
    value.configure({}, False)
    pipeline = _pipeline(ErrorPolicy(tolerate_all=True, dead_letter_topic="dlq"), value_converter=value, chain=chain)
    dead: list[DeadLetter] = []
    records = pipeline.sink_records(_kafka_batch([b"1", b"two", b"3"]), dead)
    assert [(r.topic, r.value, r.original_topic) for r in records] == [("routed", 1, "t"), ("routed", 3, "t")]
    assert [(d.topic, d.offset, d.value) for d in dead] == [("t", 1, b"two")]


@pytest.mark.parametrize("columnar", [True, False])
def test_a_sink_chain_with_batch_forms_runs_over_the_batch_only_when_columnar(
    columnar: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = {
        "transforms": "route,dropTombstones",
        "transforms.route.type": "sluice.transforms.regex_router.RegexRouter",
        "transforms.route.regex": "(.*)",
        "transforms.route.replacement": "$1-routed",
        "transforms.dropTombstones.type": "sluice.transforms.filter.Filter",
        "transforms.dropTombstones.predicate": "isTombstone",
        "predicates": "isTombstone",
        "predicates.isTombstone.type": "sluice.transforms.predicates.RecordIsTombstone",
    }
    per_record_calls = []
    original_apply = RegexRouter.apply
    monkeypatch.setattr(
        RegexRouter, "apply", lambda self, record: per_record_calls.append(record) or original_apply(self, record)
    )
    chain = TransformationChain.from_connector_config(config, _load)
    value = StringConverter()
    value.configure({}, False)
    pipeline = _pipeline(ErrorPolicy(), value_converter=value, chain=chain)
    pipeline.columnar = columnar
    batch = pipeline.sink_batch(_kafka_batch([b"a", None, b"c"]).to_pydict(), [])
    assert [(r.topic, r.value, r.kafka_offset, r.original_topic) for r in batch.records()] == [
        ("t-routed", "a", 0, "t"),
        ("t-routed", "c", 2, "t"),
    ]
    assert len(per_record_calls) == (0 if columnar else 3)
