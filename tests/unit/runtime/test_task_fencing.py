"""Zombie fencing in the driver's task loop: a task whose work moved to another worker
commits no source offsets (its runner is a fake of our own collaborator)."""

from __future__ import annotations

from sluice.runtime.herder.base import TargetState
from sluice.runtime.tasks import WorkerSourceTask
from sluice.spark.executor import PluginSpec, TaskSpec
from sluice.spark.runner import SourceBatchResult
from sluice.storage.memory import MemoryOffsetBackingStore
from sluice.storage.offset_codec import connector_offsets

STRING = PluginSpec("sluice.converters.string.StringConverter", {})


class OneBatchRunner:
    def __init__(self, position: int) -> None:
        self.position = position

    def run_batch(self, seq, committed, max_records, max_wait_ms):
        return SourceBatchResult(1, [({"file": "f"}, {"position": self.position})], None, False, ["t"])


def _task(store: MemoryOffsetBackingStore, owned: list[bool]) -> WorkerSourceTask:
    spec = TaskSpec("c", 0, "x.Task", {}, "i", STRING, STRING, STRING)
    settings = {
        "source_max_records": 10,
        "source_max_wait_ms": 10,
        "slots_to_spare": lambda: True,
        "record_topic": lambda topic: None,
        "may_commit": lambda: owned[0],
    }
    return WorkerSourceTask(
        spec, TargetState.STARTED, lambda: None, lambda *a: None, settings, offset_store=store, kafka_options={}
    )


def test_offsets_are_committed_only_while_the_task_owns_its_work():
    store = MemoryOffsetBackingStore()
    store.start()
    owned = [True]
    task = _task(store, owned)
    task.committed = {}  # what _prepare reads from the offset store
    task.runner = OneBatchRunner(10)
    task._batch()
    assert connector_offsets(store, "c") == [({"file": "f"}, {"position": 10})]
    owned[0] = False  # a rebalance gave the task to another worker while this batch ran
    task.runner = OneBatchRunner(20)
    task._batch()
    assert connector_offsets(store, "c") == [({"file": "f"}, {"position": 10})]
