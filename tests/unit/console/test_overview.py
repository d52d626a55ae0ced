"""The overview's rows: FAILED first, task counts by state, workers from the statuses."""

from __future__ import annotations

import hashlib
from pathlib import Path

import sluice.console
from sluice.console.app import _overview_rows

STATIC = Path(sluice.console.__file__).parent / "static"


def _entry(state: str, tasks: list[tuple[str, str]], worker: str = "w1:8083") -> dict:
    return {
        "status": {
            "connector": {"state": state, "worker_id": worker},
            "tasks": [{"id": i, "state": s, "worker_id": w} for i, (s, w) in enumerate(tasks)],
            "type": "source",
        },
        "info": {"config": {"connector.class": "C"}, "type": "source"},
    }


def test_failed_connectors_and_connectors_with_failed_tasks_come_first() -> None:
    rows, workers = _overview_rows(
        {
            "a": _entry("RUNNING", [("RUNNING", "w1:8083")]),
            "b": _entry("RUNNING", [("RUNNING", "w1:8083"), ("FAILED", "w2:8083")]),
            "c": _entry("FAILED", []),
            "d": _entry("PAUSED", [("PAUSED", "w3:8083")], worker="w3:8083"),
        }
    )
    assert [r["name"] for r in rows] == ["b", "c", "a", "d"]
    assert rows[0]["tasks"] == [("FAILED", 1), ("RUNNING", 1)]
    assert workers == ["w1:8083", "w2:8083", "w3:8083"]


def test_vendored_htmx_is_the_recorded_release() -> None:
    digest = hashlib.sha256((STATIC / "htmx.min.js").read_bytes()).hexdigest()
    assert digest == "d6fdc75f204e6bdefa99b69bf1e6d4ac69b8a364f77929f45c13476b4000f717"  # htmx.org 2.0.11
