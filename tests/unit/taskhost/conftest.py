"""Fixtures of the task host's unit tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.unit.taskhost.fakes import WorkerEnd


@pytest.fixture
def worker() -> Iterator[WorkerEnd]:
    """The worker's end of a task's connection; the loop under test runs at the other."""
    with WorkerEnd() as end:
        yield end
