"""Servers shared by the tests of one group, stopped when the group is done.

``tests/conftest.py`` gives each costly server's tests a group (``xdist_group``: storage,
databases, search) that runs on one pytest-xdist worker, its tests one after another. A
group's server is started when a test first asks for its fixture and stopped once the
worker's next test belongs to another group (``pytest_runtest_teardown`` there), instead
of idling until the session ends: an idle search node or HDFS cluster still takes a tenth
of a core, which the rest of the suite, on two cores, waits for. A later test that asks
for a stopped server gets a new one.

The fixtures are module-scoped facades over :data:`GROUP_SERVERS` (a module fixture may use
them; the server itself lives as long as its group).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

_T = TypeVar("_T")


@contextlib.contextmanager
def started(server: _T, timeout: float) -> Iterator[_T]:
    """``server`` (one of :mod:`sluice_devtools`' servers) started, and stopped on exit, also
    when its start failed half-way."""
    try:
        server.start(timeout=timeout)  # type: ignore[attr-defined]
        yield server
    finally:
        server.stop()  # type: ignore[attr-defined]


class GroupServers:
    """The servers the current group of this worker has started, by name."""

    def __init__(self) -> None:
        self._running: dict[str, tuple[Any, contextlib.ExitStack]] = {}

    def get(self, name: str, start: Callable[[], contextlib.AbstractContextManager[_T]]) -> _T:
        """The running server ``name``, entering ``start()`` (a context manager that starts
        it and stops it on exit) first if it does not run."""
        if name not in self._running:
            stack = contextlib.ExitStack()
            server = stack.enter_context(start())
            self._running[name] = (server, stack)
        return cast(_T, self._running[name][0])

    def running(self) -> list[str]:
        return list(self._running)

    def stop_all(self) -> None:
        """Stop every running server, the last started first; the first failure is raised
        after all have been stopped."""
        failures: list[BaseException] = []
        while self._running:
            _, (_, stack) = self._running.popitem()
            try:
                stack.close()
            except Exception as exc:  # noqa: BLE001 - the others are stopped too, then it is raised
                failures.append(exc)
        if failures:
            raise failures[0]


#: This worker's group servers (a pytest-xdist worker is a process of its own).
GROUP_SERVERS = GroupServers()
