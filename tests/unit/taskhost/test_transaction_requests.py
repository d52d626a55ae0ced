"""What a task asks through its TransactionContext (connector-defined transaction
boundaries), as the loop takes it: per record, and per batch; an abort wins over a commit
asked for the same place."""

from __future__ import annotations

from sluice.api import Schema, SourceRecord
from sluice.taskhost.transactional import _BoundaryRequests


def _record(n: int) -> SourceRecord:
    return SourceRecord({"p": 0}, {"n": n}, "t", value_schema=Schema.INT64_SCHEMA, value=n)


def test_a_request_naming_a_record_is_taken_once_for_that_record() -> None:
    requests = _BoundaryRequests()
    first, second = _record(1), _record(2)
    requests.commit_transaction(first)
    assert requests.take_after_record(second) is None
    assert requests.take_after_record(first) is True
    assert requests.take_after_record(first) is None
    assert requests.take_after_batch() is None


def test_a_request_naming_no_record_ends_the_batch_and_an_abort_wins() -> None:
    requests = _BoundaryRequests()
    requests.commit_transaction()
    assert requests.take_after_batch() is True
    assert requests.take_after_batch() is None
    requests.commit_transaction()
    requests.abort_transaction()
    requests.commit_transaction()
    assert requests.take_after_batch() is False
    record = _record(3)
    requests.abort_transaction(record)
    requests.commit_transaction(record)
    assert requests.take_after_record(record) is False
