"""In-memory offset, status and config stores."""

from __future__ import annotations

import threading

import pytest

from sluice.storage import (
    ClusterConfigState,
    ConfigBackingStore,
    ConnectorStatus,
    MemoryConfigBackingStore,
    MemoryOffsetBackingStore,
    MemoryStatusBackingStore,
    OffsetBackingStore,
    StatusBackingStore,
    TaskStatus,
)

# --------------------------------------------------------------------------- offsets


def test_offset_store_get_set_all_and_tombstones() -> None:
    store = MemoryOffsetBackingStore()
    assert isinstance(store, OffsetBackingStore)
    store.start()
    store.set({b"a": b"1", b"b": b"2"})
    assert store.get([b"a", b"missing"]) == {b"a": b"1", b"missing": None}
    store.set({b"a": None, b"c": bytearray(b"3")})
    assert store.all() == {b"b": b"2", b"c": b"3"}
    snapshot = store.all()
    snapshot[b"x"] = b"mutated"
    assert b"x" not in store.all()
    store.stop()


def test_offset_store_rejects_non_bytes() -> None:
    store = MemoryOffsetBackingStore()
    with pytest.raises(TypeError):
        store.set({"a": b"1"})  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        store.set({b"a": "1"})  # type: ignore[dict-item]


def test_offset_store_is_thread_safe() -> None:
    store = MemoryOffsetBackingStore()

    def writer(t: int) -> None:
        for i in range(200):
            store.set({f"{t}-{i}".encode(): b"v"})
            store.all()

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.all()) == 1600


# --------------------------------------------------------------------------- statuses


def test_status_store_connectors_and_tasks() -> None:
    store = MemoryStatusBackingStore()
    assert isinstance(store, StatusBackingStore)
    store.start()
    running = ConnectorStatus("c", "RUNNING", "host:8083", None, 1)
    store.put_connector(running)
    store.put_task(TaskStatus("c", 2, "RUNNING", "host:8083", None, 1))
    store.put_task(TaskStatus("c", 0, "FAILED", "host:8083", "Traceback ...", 1))
    store.put_task(TaskStatus("c", 1, "PAUSED", "host:8083", None, 1))
    store.put_task(TaskStatus("other", 0, "RUNNING", "host:8083", None, 1))

    assert store.get_connector("c") == running
    assert store.get_connector("missing") is None
    assert store.get_task("c", 0).trace == "Traceback ..."
    assert store.get_task("c", 9) is None
    assert [t.task for t in store.get_all_tasks("c")] == [0, 1, 2]
    assert store.get_all_tasks("missing") == []
    assert store.connectors() == {"c"}  # only connectors with a connector status

    store.put_task(TaskStatus("c", 1, "RUNNING", "host:8083", None, 2))
    assert store.get_task("c", 1).state == "RUNNING"
    assert store.get_task("c", 1).generation == 2
    store.stop()


def test_status_destroyed_deletes() -> None:
    store = MemoryStatusBackingStore()
    store.put_connector(ConnectorStatus("c", "RUNNING", "w", None, 0))
    store.put_task(TaskStatus("c", 0, "RUNNING", "w", None, 0))
    store.put_task(TaskStatus("c", 1, "RUNNING", "w", None, 0))

    store.put_task(TaskStatus("c", 1, "DESTROYED", "w", None, 0))
    assert store.get_task("c", 1) is None
    assert [t.task for t in store.get_all_tasks("c")] == [0]

    store.put_connector(ConnectorStatus("c", "DESTROYED", "w", None, 0))
    assert store.get_connector("c") is None
    assert store.connectors() == set()
    assert [t.task for t in store.get_all_tasks("c")] == [0]  # tasks are removed on their own


def test_status_delete_connector_and_task() -> None:
    store = MemoryStatusBackingStore()
    for name in ("a", "b"):
        store.put_connector(ConnectorStatus(name, "RUNNING", "w", None, 0))
        for task in range(3):
            store.put_task(TaskStatus(name, task, "RUNNING", "w", None, 0))
    store.delete_task("a", 1)
    assert [t.task for t in store.get_all_tasks("a")] == [0, 2]
    store.delete_task("a", 7)  # unknown: no error
    store.delete_connector("a")
    assert store.get_connector("a") is None
    assert store.get_all_tasks("a") == []
    assert store.connectors() == {"b"}
    assert len(store.get_all_tasks("b")) == 3
    store.delete_connector("missing")


def test_enum_states_are_stored_as_names() -> None:
    import enum

    class State(enum.Enum):
        RUNNING = "RUNNING"
        DESTROYED = "DESTROYED"

    class TargetState(enum.Enum):
        PAUSED = "PAUSED"

    statuses = MemoryStatusBackingStore()
    statuses.put_connector(ConnectorStatus("c", State.RUNNING, "w"))  # type: ignore[arg-type]
    assert statuses.get_connector("c").state == "RUNNING"
    statuses.put_connector(ConnectorStatus("c", State.DESTROYED, "w"))  # type: ignore[arg-type]
    assert statuses.get_connector("c") is None
    configs = MemoryConfigBackingStore()
    configs.put_connector_config("c", {}, TargetState.PAUSED)  # type: ignore[arg-type]
    assert configs.snapshot().target_states == {"c": "PAUSED"}


def test_status_defaults_and_immutability() -> None:
    status = TaskStatus("c", 0, "RUNNING", "w")
    assert (status.trace, status.generation) == (None, 0)
    with pytest.raises(AttributeError):
        status.state = "FAILED"  # type: ignore[misc]


# --------------------------------------------------------------------------- configs


def test_config_store_connectors_target_states_and_tasks() -> None:
    store = MemoryConfigBackingStore()
    assert isinstance(store, ConfigBackingStore)
    store.start()
    config = {"name": "c", "connector.class": "FileStreamSource", "tasks.max": "1"}
    store.put_connector_config("c", config)
    snapshot = store.snapshot()
    assert isinstance(snapshot, ClusterConfigState)
    assert snapshot.contains("c")
    assert not snapshot.contains("missing")
    assert snapshot.connector_configs == {"c": config}
    assert snapshot.target_state("c") == "STARTED"  # no record: STARTED
    assert snapshot.target_state("missing") == "STARTED"
    assert snapshot.tasks("c") == []
    assert snapshot.connectors() == ["c"]

    store.put_task_configs("c", [{"task.class": "T", "file": "a"}, {"task.class": "T", "file": "b"}])
    store.put_target_state("c", "PAUSED")
    snapshot = store.snapshot()
    assert snapshot.target_state("c") == "PAUSED"
    assert snapshot.tasks("c")[1] == {"task.class": "T", "file": "b"}
    assert snapshot.task_count("c") == 2
    assert snapshot.task_config("c", 0) == {"task.class": "T", "file": "a"}
    assert snapshot.task_config("c", 2) is None

    # Updating the config without a target state keeps the current one.
    store.put_connector_config("c", {**config, "tasks.max": "2"})
    assert store.snapshot().target_state("c") == "PAUSED"
    assert store.snapshot().connector_config("c")["tasks.max"] == "2"

    store.put_connector_config("c", config, target_state="STOPPED")
    assert store.snapshot().target_state("c") == "STOPPED"
    store.stop()


def test_config_store_create_with_initial_state_and_remove() -> None:
    store = MemoryConfigBackingStore()
    store.put_connector_config("c", {"name": "c"}, target_state="PAUSED")
    store.put_task_configs("c", [{"k": "v"}])
    assert store.snapshot().target_state("c") == "PAUSED"
    store.remove_connector_config("c")
    snapshot = store.snapshot()
    assert not snapshot.contains("c")
    assert snapshot.target_states == {}
    assert snapshot.task_configs == {}
    assert snapshot.target_state("c") == "STARTED"
    store.remove_connector_config("c")  # already gone: no error


def test_config_store_rejects_unknown_target_states() -> None:
    store = MemoryConfigBackingStore()
    store.put_connector_config("c", {"name": "c"})
    with pytest.raises(ValueError):
        store.put_target_state("c", "RUNNING")
    with pytest.raises(ValueError):
        store.put_connector_config("c", {"name": "c"}, target_state="paused")


def test_config_snapshots_are_copies() -> None:
    store = MemoryConfigBackingStore()
    config = {"name": "c"}
    tasks = [{"k": "v"}]
    store.put_connector_config("c", config)
    store.put_task_configs("c", tasks)
    config["name"] = "mutated"
    tasks[0]["k"] = "mutated"
    snapshot = store.snapshot()
    assert snapshot.connector_configs["c"] == {"name": "c"}
    assert snapshot.tasks("c") == [{"k": "v"}]
    snapshot.connector_configs["c"]["name"] = "mutated"
    snapshot.task_configs["c"].append({"x": "y"})
    assert store.snapshot().connector_configs["c"] == {"name": "c"}
    assert store.snapshot().tasks("c") == [{"k": "v"}]


def test_empty_task_configs_are_kept() -> None:
    # STOP writes an empty task set: the connector then has zero tasks.
    store = MemoryConfigBackingStore()
    store.put_connector_config("c", {"name": "c"})
    store.put_task_configs("c", [{"k": "v"}])
    store.put_task_configs("c", [])
    snapshot = store.snapshot()
    assert snapshot.tasks("c") == []
    assert snapshot.task_configs == {"c": []}


def test_config_store_remembers_the_connector_config_its_task_configs_came_from() -> None:
    store = MemoryConfigBackingStore()
    store.put_connector_config("c", {"name": "c", "topic": "a"})
    assert store.snapshot().applied_config("c") is None
    assert store.snapshot().task_configs_changed("c", [])  # none written yet
    store.put_task_configs("c", [{"topic": "a"}])
    snapshot = store.snapshot()
    assert snapshot.applied_config("c") == {"name": "c", "topic": "a"}
    assert not snapshot.task_configs_changed("c", [{"topic": "a"}])
    assert snapshot.task_configs_changed("c", [{"topic": "b"}])

    # the same task configs from a changed connector config still count as a change
    store.put_connector_config("c", {"name": "c", "topic": "a", "transforms": "t"})
    assert store.snapshot().task_configs_changed("c", [{"topic": "a"}])
    store.put_task_configs("c", [{"topic": "a"}])
    assert not store.snapshot().task_configs_changed("c", [{"topic": "a"}])

    store.remove_connector_config("c")
    assert store.snapshot().applied_config("c") is None
