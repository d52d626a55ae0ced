"""The batch forms of transformations and predicates (sink chains): a chain applied to a
whole batch gives exactly the records it gives record by record, or declines (None) and
leaves the records to the per-record path."""

from __future__ import annotations

from typing import Any

import pytest

from sluice.api.data import Schema
from sluice.api.errors import DataError
from sluice.api.records import Headers, SinkBatch, SinkRecord, TimestampType
from sluice.api.transforms import Transformation
from sluice.transforms.chain import TransformationChain
from sluice.transforms.drop_headers import DropHeaders
from sluice.transforms.filter import Filter
from sluice.transforms.insert_header import InsertHeader
from sluice.transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches
from sluice.transforms.regex_router import RegexRouter

CLASSES: dict[str, type] = {
    "RegexRouter": RegexRouter,
    "Filter": Filter,
    "DropHeaders": DropHeaders,
    "InsertHeader": InsertHeader,
    "TopicNameMatches": TopicNameMatches,
    "HasHeaderKey": HasHeaderKey,
    "RecordIsTombstone": RecordIsTombstone,
}


def _chain(config: dict[str, str]) -> TransformationChain:
    return TransformationChain.from_connector_config(config, lambda _kind, name: CLASSES[name])


def _records() -> list[SinkRecord]:
    records = []
    for i in range(12):
        topic = ("orders", "orders-eu", "audit")[i % 3]
        headers = None
        if i % 4 == 1:
            headers = Headers().add_string("trace-id", f"t{i}").add_string("keep", "k")
        elif i % 4 == 2:
            headers = Headers().add_string("keep", "k")
        value = None if i % 5 == 3 else f"v{i}"
        records.append(
            SinkRecord(
                topic,
                i % 2,
                None,
                f"k{i}",
                Schema.OPTIONAL_STRING_SCHEMA,
                value,
                100 + i,
                1_000 + i,
                TimestampType.CREATE_TIME,
                headers,
            )
        )
    return records


def _per_record(chain: TransformationChain, records: list[SinkRecord]) -> list[SinkRecord]:
    out = []
    for record in records:
        result = chain.apply(record)
        if result is not None:
            out.append(result)
    return out


def _described(records: list[SinkRecord]) -> list[tuple[Any, ...]]:
    return [
        (
            r.topic,
            r.kafka_partition,
            r.key,
            r.value,
            r.kafka_offset,
            r.timestamp,
            r.timestamp_type,
            [(h.key, h.value) for h in r.headers],
            (r.original_topic, r.original_kafka_partition, r.original_kafka_offset),
        )
        for r in records
    ]


CHAINS = {
    "the benchmark's chain": {
        "transforms": "route,dropTombstones,dropTrace",
        "transforms.route.type": "RegexRouter",
        "transforms.route.regex": "(.*)",
        "transforms.route.replacement": "$1-routed",
        "transforms.dropTombstones.type": "Filter",
        "transforms.dropTombstones.predicate": "isTombstone",
        "transforms.dropTrace.type": "DropHeaders",
        "transforms.dropTrace.headers": "trace-id",
        "predicates": "isTombstone",
        "predicates.isTombstone.type": "RecordIsTombstone",
    },
    "routing some topics, a negated predicate": {
        "transforms": "eu,keepTraced",
        "transforms.eu.type": "RegexRouter",
        "transforms.eu.regex": "(\\w+)-eu",
        "transforms.eu.replacement": "eu.$1",
        "transforms.keepTraced.type": "Filter",
        "transforms.keepTraced.predicate": "traced",
        "transforms.keepTraced.negate": "true",
        "predicates": "traced",
        "predicates.traced.type": "HasHeaderKey",
        "predicates.traced.name": "trace-id",
    },
    "a predicate choosing some records for a router": {
        "transforms": "auditOnly",
        "transforms.auditOnly.type": "RegexRouter",
        "transforms.auditOnly.regex": "(.*)",
        "transforms.auditOnly.replacement": "archive-$1",
        "transforms.auditOnly.predicate": "isAudit",
        "predicates": "isAudit",
        "predicates.isAudit.type": "TopicNameMatches",
        "predicates.isAudit.pattern": "audit",
    },
    "everything filtered": {"transforms": "all", "transforms.all.type": "Filter"},
}


@pytest.mark.parametrize("name", list(CHAINS))
def test_a_chain_gives_the_same_records_over_a_batch_as_record_by_record(name: str) -> None:
    records = _records()
    expected = _per_record(_chain(CHAINS[name]), records)
    whole = _chain(CHAINS[name]).apply_batch(SinkBatch.of(_records()))
    assert whole is not None, "every stage has a batch form"
    assert _described(whole.records()) == _described(expected)


def test_the_batch_is_left_as_it_was() -> None:
    records = _records()
    batch = SinkBatch.of(records)
    before = _described(records)
    _chain(CHAINS["the benchmark's chain"]).apply_batch(batch)
    assert _described(batch.records()) == before
    assert batch.records() is records


def test_a_stage_without_a_batch_form_declines_the_batch() -> None:
    config = {
        "transforms": "route,insert",
        "transforms.route.type": "RegexRouter",
        "transforms.route.regex": "(.*)",
        "transforms.route.replacement": "$1-x",
        "transforms.insert.type": "InsertHeader",
        "transforms.insert.header": "h",
        "transforms.insert.value.literal": "v",
    }
    assert _chain(config).apply_batch(SinkBatch.of(_records())) is None


def test_a_record_the_chain_would_fail_on_declines_the_batch_and_fails_alone() -> None:
    config = {
        "transforms": "route",
        "transforms.route.type": "RegexRouter",
        "transforms.route.regex": "audit",
        "transforms.route.replacement": "$2",  # no group 2: Java fails the routed records only
    }
    chain = _chain(config)
    assert chain.apply_batch(SinkBatch.of(_records())) is None
    assert chain.apply(_records()[0]).topic == "orders"  # not matched: left alone
    with pytest.raises(DataError):
        chain.apply(_records()[2])


def test_a_batch_form_that_raises_anyway_declines() -> None:
    class Broken(Transformation):
        def apply(self, record: Any) -> Any:
            return record

        def apply_batch(self, batch: SinkBatch) -> SinkBatch:
            raise RuntimeError("broken promise")

        def config(self) -> Any:
            from sluice.api.config import ConfigDef

            return ConfigDef()

    chain = TransformationChain.from_connector_config(
        {"transforms": "b", "transforms.b.type": "Broken"}, lambda _kind, _name: Broken
    )
    assert chain.apply_batch(SinkBatch.of(_records())) is None
