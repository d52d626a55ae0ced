"""Parsing of PATCH /connectors/{c}/offsets bodies and the success messages, with Kafka's texts."""

from __future__ import annotations

import pytest

from sluice.runtime.herder.base import BadRequestError, ConnectRestError
from sluice.runtime.offsets import offsets_message, parse_sink_offsets, parse_source_offsets


def _sink(partition, offset):
    return [{"partition": partition, "offset": offset}]


def test_sink_offsets_accept_numbers_and_numeric_strings_and_null():
    parsed = parse_sink_offsets(
        _sink({"kafka_topic": "t", "kafka_partition": "3"}, {"kafka_offset": "10"})
        + _sink({"kafka_topic": "t", "kafka_partition": 4}, {"kafka_offset": 7})
        + _sink({"kafka_topic": "u", "kafka_partition": 0}, None)
    )
    assert parsed == {("t", 3): 10, ("t", 4): 7, ("u", 0): None}


@pytest.mark.parametrize(
    ("partition", "offset", "message"),
    [
        (None, None, "The partition for a sink connector offset cannot be null or missing"),
        (
            {},
            None,
            "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'",
        ),
        (
            {"kafka_topic": None, "kafka_partition": 1},
            None,
            "Kafka topic names must be valid strings and may not be null",
        ),
        (
            {"kafka_topic": "t", "kafka_partition": None},
            None,
            "Kafka partitions must be valid numbers and may not be null",
        ),
        (
            {"kafka_topic": "t", "kafka_partition": "not a number"},
            None,
            "Failed to parse the following Kafka partition value in the provided offsets: 'not a number'. "
            "Partition values for sink connectors need to be integers.",
        ),
        (
            {"kafka_topic": "t", "kafka_partition": 1},
            {},
            "The offset for a sink connector should either be null or contain the key 'kafka_offset'",
        ),
        (
            {"kafka_topic": "t", "kafka_partition": 1},
            {"kafka_offset": "not a number"},
            "Failed to parse the following Kafka offset value in the provided offsets: 'not a number'. "
            "Offset values for sink connectors need to be integers.",
        ),
        (
            {"kafka_topic": "t", "kafka_partition": 1},
            {"kafka_offset": 1.5},
            "Failed to parse the following Kafka offset value in the provided offsets: '1.5'. "
            "Offset values for sink connectors need to be integers.",
        ),
        ({"kafka_topic": "t", "kafka_partition": 1}, {"kafka_offset": -1}, "Kafka offsets must be non-negative"),
    ],
)
def test_sink_offsets_errors(partition, offset, message):
    with pytest.raises(BadRequestError) as info:
        parse_sink_offsets(_sink(partition, offset))
    assert str(info.value) == message and info.value.status == 400


def test_source_offsets_must_be_maps_of_primitives():
    parsed = parse_source_offsets(
        [
            {"partition": {"filename": "/a"}, "offset": {"position": 5, "x": 1.5, "y": None}},
            {"partition": {"filename": "/b"}, "offset": None},
        ]
    )
    assert parsed == [({"filename": "/a"}, {"position": 5, "x": 1.5, "y": None}), ({"filename": "/b"}, None)]
    with pytest.raises(ConnectRestError) as info:
        parse_source_offsets([{"partition": {"filename": "/a"}, "offset": {"nested": {"a": 1}}}])
    assert info.value.status == 500 and "Offsets may only contain primitive types as values" in str(info.value)


def test_messages():
    assert offsets_message(True, "altered") == "The offsets for this connector have been altered successfully"
    assert offsets_message(False, "reset") == (
        "The Connect framework-managed offsets for this connector have been reset successfully. However, if this "
        "connector manages offsets externally, they will need to be manually reset in the system that the connector "
        "uses."
    )
