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
