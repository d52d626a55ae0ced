"""Making a task's plugins where the task runs (an executor's Python worker): the task
class, its converters and its transformation chain, from the class paths and configs the
worker resolved (:class:`~sluice.taskhost.protocol.TaskSpec`).

Only :mod:`sluice.api`, pyarrow and the standard library are imported here, besides the
record pipeline: executors load this module.
"""

from __future__ import annotations

import gc
import importlib
import sys
import threading
from typing import Any

from sluice.api.converter import Converter, HeaderConverter
from sluice.taskhost.pipeline import RecordPipeline
from sluice.taskhost.protocol import PluginSpec, TaskSpec

__all__ = ["collect_less_often", "ensure_plugin_paths", "load_class", "make_pipeline"]


#: Net allocations between two collections of the youngest generation in a process that
#: runs tasks (Python's default is 700), and how many collections of one generation make
#: one of the next (10 and 10 by default).
COLLECTOR_THRESHOLDS = (50_000, 20, 20)


def collect_less_often() -> None:
    """Python's cyclic garbage collector set to run far less often in this process.

    A task allocates millions of short-lived objects (messages, records, structs, values)
    that hold no reference cycles, so reference counting frees them; at the default
    thresholds they trigger a collection every few hundred records, and the older
    generations' collections walk every live object again and again. Raising the thresholds
    once for the process rather than switching the collector off for each batch: the switch
    is process-wide, so a task host's task threads toggled it under each other, and the
    allocations between batches (a consumer's messages) still triggered collections.
    ``bench/compare.py``'s one-task sink workload (b) shows the difference (see
    docs/benchmarks.md). Cyclic garbage is still collected, later.
    """
    gc.set_threshold(*COLLECTOR_THRESHOLDS)


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
        columnar=spec.columnar_transforms,
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
