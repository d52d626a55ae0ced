"""Making a task's plugins where the task runs (an executor's Python worker): the task
class, its converters and its transformation chain, from the class paths and configs the
worker resolved (:class:`~sluice.taskhost.protocol.TaskSpec`).

Only :mod:`sluice.api`, pyarrow and the standard library are imported here, besides the
record pipeline: executors load this module.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import sys
import threading
from collections.abc import Iterator
from typing import Any

from sluice.api.converter import Converter, HeaderConverter
from sluice.taskhost.pipeline import RecordPipeline
from sluice.taskhost.protocol import PluginSpec, TaskSpec

__all__ = ["collector_paused", "ensure_plugin_paths", "load_class", "make_pipeline"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the length of one batch, back on after.

    A batch allocates millions of short-lived objects (records, structs, values) that hold
    no reference cycles, so reference counting frees them; with the collector on, those
    allocations trigger collections that walk every live object again and again. Measured
    on a JsonConverter → JDBC sink batch: 30% of the Python worker's CPU. Cyclic garbage a
    batch leaves is collected once the collector is back on.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


#: Plugins are imported one at a time in a process. A task host starts many tasks on threads
#: of their own, and two threads importing a package whose modules import each other (its
#: ``__init__`` importing its connector and task modules, say) can each get the other's
#: module half initialised (Python breaks the import deadlock that way) and fail with an
#: ImportError.
_IMPORTING = threading.RLock()


def load_class(path: str) -> type[Any]:
    """The class (or other attribute) a dotted path names, its module imported if need be."""
    module, _, name = path.rpartition(".")
    with _IMPORTING:
        return getattr(importlib.import_module(module), name)


def make_converter(spec: PluginSpec, is_key: bool) -> Converter:
    conv = load_class(spec.class_path)()
    conv.configure(dict(spec.configs), is_key)
    return conv


def make_header_converter(spec: PluginSpec) -> HeaderConverter:
    conv = load_class(spec.class_path)()
    conv.configure(dict(spec.configs))
    return conv


def make_pipeline(spec: TaskSpec) -> RecordPipeline:
    chain = None
    if spec.transforms is not None:
        chain = load_class(spec.transforms.class_path).from_connector_config(
            dict(spec.transforms.configs), lambda _kind, class_path: load_class(class_path)
        )
    return RecordPipeline(
        spec.connector,
        spec.task,
        (spec.key_converter.class_path, make_converter(spec.key_converter, True)),
        (spec.value_converter.class_path, make_converter(spec.value_converter, False)),
        (spec.header_converter.class_path, make_header_converter(spec.header_converter)),
        chain,
        spec.errors,
    )


def ensure_plugin_paths(config: dict[str, str]) -> None:
    # plugin.path directories are shipped in the task config so that executors can
    # import plugins from them too (they are on PYTHONPATH in local mode anyway).
    with _IMPORTING:
        for entry in (config.get("__sluice.plugin.path") or "").split(","):
            entry = entry.strip()
            if entry and entry not in sys.path:
                sys.path.append(entry)


# --------------------------------------------------------------------------- source side
