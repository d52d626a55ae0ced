"""Source offsets advance only over records Kafka acknowledged, in poll order per source
partition (Kafka's ``SubmittedRecords``), whatever order the acknowledgements come in."""

from __future__ import annotations

from sluice.api.records import SourceRecord
from sluice.taskhost.source import SubmittedRecords


def _record(file: str, position: int) -> SourceRecord:
    return SourceRecord({"file": file}, {"position": position}, "t", None, None, None, None, f"{file}{position}")


def test_a_partitions_offset_stops_before_its_first_unacknowledged_record():
    submitted = SubmittedRecords()
    a = [submitted.submit(_record("a", i)) for i in range(1, 4)]
    assert submitted.committable() == {}
    a[0].acked = True
    a[2].acked = True  # acknowledged out of order: not committable past a[1]
    assert list(submitted.committable().values()) == [({"file": "a"}, {"position": 1})]
    assert submitted.committable() == {}  # taken out once
    a[1].acked = True
    assert list(submitted.committable().values()) == [({"file": "a"}, {"position": 3})]


def test_partitions_advance_independently_and_records_without_a_partition_are_not_tracked():
    submitted = SubmittedRecords()
    a1 = submitted.submit(_record("a", 1))
    b1 = submitted.submit(_record("b", 1))
    b2 = submitted.submit(_record("b", 2))
    untracked = submitted.submit(SourceRecord(None, None, "t", None, None, None, None, "x"))
    untracked.acked = True
    b1.acked = b2.acked = True
    assert list(submitted.committable().values()) == [({"file": "b"}, {"position": 2})]
    a1.acked = True
    assert list(submitted.committable().values()) == [({"file": "a"}, {"position": 1})]


def test_withdrawn_records_and_those_after_them_are_neither_outstanding_nor_committable():
    submitted = SubmittedRecords()
    a1, a2, a3 = (submitted.submit(_record("a", i)) for i in range(1, 4))
    b1 = submitted.submit(_record("b", 1))
    dead_letter = submitted.submit(_record("a", 9), offsets=False)  # waited for, never committed
    assert submitted.outstanding == 5
    a3.acked = True  # a record after the unsent one (a filtered record, say)
    submitted.withdraw([a2, b1])  # never handed to the producer
    assert submitted.outstanding == 2  # a1 and the dead letter
    a1.acked = dead_letter.acked = True
    assert list(submitted.committable().values()) == [({"file": "a"}, {"position": 1})]
    assert submitted.outstanding == 0
