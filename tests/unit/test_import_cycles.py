"""No import cycles among Sluice's modules, counting every import — at the top of a module,
inside a function or under ``TYPE_CHECKING`` alike: an import moved into a function to
dodge a cycle is still a cycle in the design. A package's ``__init__`` counts as a module,
so a submodule importing its own package while the package imports it is one too."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from tests.unit.test_layers import SRC, _imports


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Each module of the package at ``root`` and the package's modules it imports."""
    modules = {_module_name(path, root): path for path in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for imported in _imports(path):
            while imported and imported not in modules:  # `from a.b import c`: module a.b.c, else a.b
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or not (Tarjan's strongly
    connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # iterative, so that a long import chain cannot exhaust Python's recursion limit
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            advanced = False
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_no_module_takes_part_in_an_import_cycle() -> None:
    found = cycles(import_graph(SRC))
    assert not found, "modules that import each other (directly or through others): " + "; ".join(
        " ↔ ".join(component) for component in found
    )


def test_the_check_finds_a_cycle_through_a_function_level_import_and_a_package(tmp_path: Path) -> None:
    package = tmp_path / "sluice"
    (package / "loops").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "loops" / "__init__.py").write_text("from sluice.loops.base import Loop\n")
    (package / "loops" / "base.py").write_text("def run():\n    from sluice.loops.source import Source\n")
    (package / "loops" / "source.py").write_text("from sluice.loops.base import run\n")
    (package / "loops" / "sink.py").write_text("from sluice.loops import Loop\n")
    (package / "leaf.py").write_text("import sluice.loops.source\n")
    found = cycles(import_graph(package))
    assert found == [["sluice.loops.base", "sluice.loops.source"]]
    (package / "loops" / "base.py").write_text("from sluice.loops import sink\n")
    assert ["sluice.loops", "sluice.loops.base", "sluice.loops.sink"] in cycles(import_graph(package))
