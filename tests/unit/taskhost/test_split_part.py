"""One part of a split read, as a Spark partition runs it (without Spark): the task class's
``read_split`` for the part, converted as polled records are, with the part's offsets,
count, topics and failure reported to the accumulator (a stand-in of our own here)."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from typing import Any

from sluice.api import Schema, SourceRecord, SourceTask
from sluice.taskhost.protocol import PluginSpec, TaskSpec
from sluice.taskhost.split_part import SplitPartSpec, run_split_part

STRING = PluginSpec("sluice.converters.string.StringConverter", {})
HEADERS = PluginSpec("sluice.converters.simple_header.SimpleHeaderConverter", {})


class RangeSourceTask(SourceTask):
    """Each part ``(low, high)`` yields ``row<i>`` for its range, one chunk per row, with
    offset ``{"row": i}``; fails on the row named by ``fail.row``."""

    def poll(self) -> list[SourceRecord] | None:
        return None

    @classmethod
    def read_split(cls, props: dict[str, str], part: Any) -> Iterator[list[SourceRecord]]:
        low, high = part
        for i in range(low, high):
            if str(i) == props.get("fail.row"):
                raise ValueError(f"cannot read row {i}")
            yield [SourceRecord({"p": 1}, {"row": i}, "t", value_schema=Schema.STRING_SCHEMA, value=f"row{i}")]


class Report:
    def __init__(self) -> None:
        self.value: list[Any] = []

    def add(self, items: list[Any]) -> None:
        self.value.extend(items)


def _part(index: int, part: tuple[int, int], **config: str) -> SplitPartSpec:
    task = TaskSpec("c", 0, f"{__name__}.RangeSourceTask", dict(config), "a", STRING, STRING, HEADERS)
    return SplitPartSpec(task, 0, index, pickle.dumps(part))


def _values(batches: Any) -> list[str]:
    return [v.decode() for b in batches for v in b.column("value").to_pylist()]


def test_a_part_writes_its_rows_and_reports_its_last_offset_count_and_topics():
    report = Report()
    assert _values(run_split_part(_part(1, (3, 6)), report)) == ["row3", "row4", "row5"]
    ((task, seq, index, offsets, count, failure, topics),) = report.value
    assert (task, seq, index, count, failure, topics) == (0, 0, 1, 3, None, ["t"])
    assert offsets == [({"p": 1}, {"row": 5})]


def test_a_failing_part_writes_the_rows_before_it_and_reports_its_trace():
    report = Report()
    assert _values(run_split_part(_part(0, (0, 5), **{"fail.row": "2"}), report)) == ["row0", "row1"]
    ((_, _, _, offsets, count, failure, _),) = report.value
    assert count == 2 and offsets == [({"p": 1}, {"row": 1})]
    assert failure is not None and "cannot read row 2" in failure
