"""The page of a connector the console has just created: Kafka Connect may answer 404 for its
config for a moment (its herder reads the config topic back first); the console asks again."""

from __future__ import annotations

import asyncio
from typing import Any

from sluice.console.api import ApiError
from sluice.console.app import _exists


class _Worker:
    """Answers 404 for the config the first ``missing`` times, then the config."""

    def __init__(self, missing: int, status: int = 404) -> None:
        self.missing, self.status, self.calls = missing, status, 0

    async def config(self, name: str) -> dict[str, Any]:
        self.calls += 1
        if self.calls <= self.missing:
            raise ApiError(self.status, f"Connector {name} not found")
        return {"name": name}


def test_a_connector_listed_a_moment_later_exists_when_patience_allows() -> None:
    worker = _Worker(missing=2)
    assert asyncio.run(_exists(worker, "c", 5.0))  # type: ignore[arg-type]
    assert worker.calls == 3


def test_without_patience_one_404_means_missing() -> None:
    worker = _Worker(missing=2)
    assert not asyncio.run(_exists(worker, "c"))  # type: ignore[arg-type]
    assert worker.calls == 1


def test_patience_ends_and_other_errors_are_not_asked_again() -> None:
    assert not asyncio.run(_exists(_Worker(missing=100), "c", 0.5))  # type: ignore[arg-type]
    refused = _Worker(missing=100, status=500)
    assert not asyncio.run(_exists(refused, "c", 5.0))  # type: ignore[arg-type]
    assert refused.calls == 1
