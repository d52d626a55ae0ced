"""How many task hosts a standalone worker warms up for the tasks it starts with."""

from __future__ import annotations

from sluice.cli.connect import MAX_HOSTS_WARMED_UP, tasks_to_come
from sluice.runtime.herder.base import TargetState
from sluice.storage.base import ClusterConfigState


def _config(name: str, tasks_max: str | None = None) -> dict[str, str]:
    config = {"name": name, "connector.class": "FileStreamSource"}
    if tasks_max is not None:
        config["tasks.max"] = tasks_max
    return config


def test_a_worker_with_no_connectors_warms_up_one_host() -> None:
    assert tasks_to_come(ClusterConfigState(), []) == 1


def test_each_command_line_connector_counts_its_tasks_max() -> None:
    given = [(_config("source"), None), (_config("sink", "2"), None)]
    assert tasks_to_come(ClusterConfigState(), given) == 3


def test_stored_connectors_count_their_tasks_and_paused_or_stopped_ones_none() -> None:
    snapshot = ClusterConfigState(
        connector_configs={"a": _config("a", "4"), "b": _config("b", "3"), "c": _config("c")},
        target_states={"b": "PAUSED", "c": "STOPPED"},
        task_configs={"a": [{}, {}], "b": [{}, {}, {}]},
    )
    assert tasks_to_come(snapshot, []) == 2  # a's two tasks


def test_a_command_line_connector_keeps_its_stored_pause() -> None:
    snapshot = ClusterConfigState(connector_configs={"a": _config("a")}, target_states={"a": "PAUSED"})
    assert tasks_to_come(snapshot, [(_config("a"), None)]) == 1  # none: at least one host
    new_paused = [(_config("b", "2"), TargetState.PAUSED), (_config("c", "2"), None)]
    assert tasks_to_come(ClusterConfigState(), new_paused) == 2


def test_the_count_is_capped_and_a_bad_tasks_max_counts_one() -> None:
    given = [(_config("big", "50"), None)]
    assert tasks_to_come(ClusterConfigState(), given) == MAX_HOSTS_WARMED_UP
    assert tasks_to_come(ClusterConfigState(), [(_config("x", "many"), None), (_config("y"), None)]) == 2
