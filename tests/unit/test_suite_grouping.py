"""``./dev test`` hands the suite to two pytest-xdist workers by group (``--dist
loadgroup``; tests/conftest.py gives every file a group of its own unless it names one): a
file's module fixtures and a group's servers start on one worker only. xdist groups an item
by adding ``@<group>`` to its nodeid on the worker; when it cannot (pytest-xdist 3.8 under
pytest 9.2), every test is handed out on its own and nothing says so, but the suite takes
far longer. The first test says so; the second checks how a group's servers are kept."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

from tests.integration.group_servers import GroupServers


def test_this_file_is_one_group_when_the_suite_runs_grouped(request: pytest.FixtureRequest) -> None:
    # on a worker, xdist sets the option ``loadgroup`` (its ``dist`` reads "no" there)
    if not os.environ.get("PYTEST_XDIST_WORKER") or not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run on pytest-xdist workers with --dist loadgroup (./dev test does)")
    assert request.node.nodeid.endswith("@tests/unit/test_suite_grouping.py"), request.node.nodeid


def test_group_servers_start_once_stop_together_and_start_again_when_asked() -> None:
    events: list[str] = []

    @contextlib.contextmanager
    def server(name: str, fail_stop: bool = False) -> Iterator[str]:
        events.append(f"start {name}")
        try:
            yield name
        finally:
            events.append(f"stop {name}")
            if fail_stop:
                raise RuntimeError(f"{name} did not stop")

    servers = GroupServers()
    assert servers.get("a", lambda: server("a")) == "a"
    assert servers.get("a", lambda: server("a")) == "a"  # running: not started twice
    servers.get("b", lambda: server("b", fail_stop=True))
    with pytest.raises(RuntimeError, match="b did not stop"):
        servers.stop_all()  # b's failure is raised once a is stopped too
    assert events == ["start a", "start b", "stop b", "stop a"]
    assert servers.running() == []
    servers.get("a", lambda: server("a"))  # a later group asks again: a new one
    servers.stop_all()
    assert events[-2:] == ["start a", "stop a"]
