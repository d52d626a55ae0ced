"""Every bundled task's ``stop()`` copes with a ``start`` that never finished: the runtime
calls it after ``initialize`` or ``start`` raised, as Kafka Connect does."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import sluice.connectors
from sluice.api import SinkTask, SourceTask


def _bundled_task_classes() -> list[type]:
    found: dict[str, type] = {}
    for module_info in pkgutil.walk_packages(sluice.connectors.__path__, sluice.connectors.__name__ + "."):
        module = importlib.import_module(module_info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(cls, (SourceTask, SinkTask))
                and cls.__module__ == module.__name__
                and not inspect.isabstract(cls)
            ):
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return [found[name] for name in sorted(found)]


TASK_CLASSES = _bundled_task_classes()


def test_the_bundled_connectors_tasks_are_all_found() -> None:
    names = {cls.__name__ for cls in TASK_CLASSES}
    assert {"FileStreamSourceTask", "FileStreamSinkTask", "JdbcSourceTask", "S3SinkTask"} <= names, names


@pytest.mark.parametrize("task_class", TASK_CLASSES, ids=lambda cls: cls.__name__)
def test_stop_without_a_finished_start_releases_nothing_and_raises_nothing(task_class: type) -> None:
    task_class().stop()
