"""``/admin/loggers`` semantics over a private logging hierarchy."""

from __future__ import annotations

import logging

import pytest

from sluice.api.errors import NotFoundError
from sluice.runtime.herder.base import BadRequestError
from sluice.runtime.loggers import Loggers, level_name


@pytest.fixture
def manager() -> logging.Manager:
    return logging.Manager(logging.RootLogger(logging.WARNING))


def test_root_and_explicit_levels_only(manager):
    loggers = Loggers(manager)
    manager.getLogger("a.b")  # exists, no explicit level: not listed
    manager.getLogger("c").setLevel(logging.ERROR)
    levels = loggers.all_levels()
    assert list(levels) == ["c", "root"]
    assert levels["c"].level == "ERROR" and levels["root"].level == "WARN" and levels["c"].last_modified is None
    assert loggers.level("a.b").level == "WARN"  # the effective level
    assert loggers.level("ROOT").level == "WARN"
    with pytest.raises(NotFoundError, match="Logger nope not found."):
        loggers.level("nope")


def test_namespace_prefix_creates_the_logger_and_counts_only_changes(manager):
    loggers = Loggers(manager)
    for name in ("org.x.a", "org.x.b", "org.y"):
        manager.getLogger(name)
    assert loggers.set_level("org.x", "trace") == ["org.x", "org.x.a", "org.x.b"]
    assert manager.getLogger("org.x.a").level == 5 and manager.getLogger("org.y").level == logging.NOTSET
    first = loggers.level("org.x.a").last_modified
    assert first is not None and loggers.level("org.x.a").level == "TRACE"
    loggers.set_level("org.x", "TRACE")
    assert loggers.level("org.x.a").last_modified == first  # unchanged level: not modified again


def test_root_sets_every_logger(manager):
    loggers = Loggers(manager)
    manager.getLogger("p").setLevel(logging.DEBUG)
    assert loggers.set_level("root", "off") == ["p", "root"]
    assert manager.root.level == logging.CRITICAL + 10 and loggers.level("p").level == "OFF"


def test_level_errors(manager):
    loggers = Loggers(manager)
    with pytest.raises(BadRequestError, match="Desired 'level' parameter was not specified in request."):
        loggers.set_level("x", None)
    with pytest.raises(NotFoundError, match="invalid log level 'LOUD'."):
        loggers.set_level("x", "LOUD")


def test_level_names_map_log4j_to_python():
    assert [level_name(n) for n in (50, 40, 30, 20, 10, 5, 1, 60, 25)] == [
        "FATAL",
        "ERROR",
        "WARN",
        "INFO",
        "DEBUG",
        "TRACE",
        "ALL",
        "OFF",
        "INFO",
    ]


@pytest.fixture
def mirror_state(monkeypatch: pytest.MonkeyPatch):
    """The module's process-wide record of levels, empty, and the mirror off; the real
    loggers the test sets go back to no level of their own."""
    from sluice.runtime import loggers as module

    monkeypatch.setattr(module, "_set_levels", {})
    monkeypatch.setattr(module, "_mirror", None)
    yield module
    for name in list(logging.Logger.manager.loggerDict):
        if name.startswith("sluice.test.mirror"):
            logging.getLogger(name).setLevel(logging.NOTSET)


def test_levels_set_before_and_after_the_mirror_is_installed_reach_it(mirror_state) -> None:
    loggers = Loggers()
    applied: list[tuple[str, str]] = []
    loggers.set_level("sluice.test.mirror.early", "debug")
    mirror_state.mirror_levels(lambda namespace, level: applied.append((namespace, level)))
    assert applied == [("sluice.test.mirror.early", "DEBUG")]
    loggers.set_level("sluice.test.mirror.late", "TRACE")
    assert applied[-1] == ("sluice.test.mirror.late", "TRACE")

    def broken(namespace: str, level: str) -> None:
        raise RuntimeError("the JVM is gone")

    mirror_state.mirror_levels(broken)  # replays, and says nothing to the caller
    loggers.set_level("sluice.test.mirror.late", "INFO")
    assert logging.getLogger("sluice.test.mirror.late").level == logging.INFO
    mirror_state.mirror_levels(None)
    loggers.set_level("sluice.test.mirror.late", "WARN")
    assert applied[-1] == ("sluice.test.mirror.late", "TRACE")


def test_a_private_hierarchy_is_not_mirrored(mirror_state, manager) -> None:
    applied: list[tuple[str, str]] = []
    mirror_state.mirror_levels(lambda namespace, level: applied.append((namespace, level)))
    Loggers(manager).set_level("x", "DEBUG")
    assert applied == []


def test_root_overrides_the_namespaces_set_before_it(mirror_state) -> None:
    applied: list[tuple[str, str]] = []
    mirror_state._record("sluice.test.mirror.a", "DEBUG")
    mirror_state.mirror_levels(lambda namespace, level: applied.append((namespace, level)))
    mirror_state._record("root", "WARN")
    assert applied == [("sluice.test.mirror.a", "DEBUG"), ("sluice.test.mirror.a", "WARN"), ("root", "WARN")]
    mirror_state._record("sluice.test.mirror.b", "TRACE")
    applied.clear()
    mirror_state.mirror_levels(lambda namespace, level: applied.append((namespace, level)))
    assert applied == [("root", "WARN"), ("sluice.test.mirror.b", "TRACE")]
