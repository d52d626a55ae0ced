"""The layers of design.md, enforced: imports point downward only, and only
``sluice.spark`` imports PySpark."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "sluice"

# What each package may import from sluice (besides itself). design.md:
#   cli > rest > runtime > storage > spark > taskhost > api; plugins > formats > api:
#   plugins import api only, connectors and converters also formats (Connect data in Avro
#   and JSON). taskhost runs in the executors (no PySpark); spark is the driver's side of
#   Spark and the only package importing PySpark.
# kafka (Kafka-client plumbing: settings, security, errors, retries, topic creation) sits
# below storage and taskhost, which both talk to Kafka; tls (key and trust stores) below
# kafka and rest, which both read stores.
# jvm (the JVM artifacts the worker fetches or builds: Spark's Kafka jars, the producer
# interceptor) imports nothing of sluice; spark, runtime and cli may use it.
# _java (Java compatibility helpers) imports nothing of sluice; every package may use it.
ALLOWED: dict[str, set[str]] = {
    "_java": set(),
    "api": {"_java"},
    "formats": {"_java", "api"},
    # connectors that are Kafka clients themselves (the replicator) use kafka's plumbing
    "connectors": {"_java", "api", "formats", "kafka"},
    "converters": {"_java", "api", "formats"},
    "transforms": {"_java", "api"},
    "providers": {"_java", "api"},
    "tls": {"_java"},
    "kafka": {"_java", "api", "tls"},
    "taskhost": {"_java", "api", "kafka"},
    "spark": {"_java", "api", "jvm", "kafka", "taskhost"},
    "storage": {"_java", "api", "kafka"},
    "jvm": {"_java"},
    "runtime": {"_java", "api", "kafka", "tls", "taskhost", "spark", "storage", "jvm", "runtime"},
    "rest": {"_java", "api", "tls", "runtime.herder.base"},
    # the web console: a client of the REST API, over HTTP only
    "console": {"_java"},
    "cli": {
        "_java",
        "api",
        "kafka",
        "tls",
        "spark",
        "storage",
        "runtime",
        "rest",
        "console",
        "jvm",
        "cli",
        "connectors",
        "converters",
        "providers",
    },
}
TOP_LEVEL_OK = {"sluice"}  # `from sluice import __version__`


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _package_of(path: Path) -> str:
    return path.relative_to(SRC).parts[0]


SOURCES = sorted(p for p in SRC.rglob("*.py") if len(p.relative_to(SRC).parts) > 1)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(SRC)))
def test_module_imports_respect_layers(path: Path) -> None:
    package = _package_of(path)
    allowed = ALLOWED[package]
    violations = []
    for name in _imports(path):
        root = name.split(".")[0]
        if root == "pyspark" and package != "spark":
            violations.append(f"{name} (only sluice.spark may import pyspark)")
        if root != "sluice" or name in TOP_LEVEL_OK:
            continue
        parts = name.split(".")
        if len(parts) < 2 or parts[1] == package:
            continue
        target = ".".join(parts[1:])
        if name == "sluice.__version__":
            continue
        if not any(target == a or target.startswith(a + ".") or a == parts[1] for a in allowed):
            violations.append(name)
    assert not violations, f"{path.relative_to(SRC)} imports upward or sideways: {violations}"


def test_every_package_has_a_layer() -> None:
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages <= set(ALLOWED), f"packages without a layer rule: {packages - set(ALLOWED)}"


def test_the_check_catches_an_upward_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from sluice.runtime.worker import Worker\nimport pyspark\n")
    assert "sluice.runtime.worker" in _imports(bad)
    assert "pyspark" in _imports(bad)


def test_the_runtime_and_the_task_hosts_import_without_pyspark() -> None:
    """The worker's runtime gets Spark injected (sluice.spark.launcher takes the session),
    and the long-lived task's modules run in Spark's Python workers without PySpark's
    SQL layer: none of them imports PySpark when imported."""
    modules = [
        "sluice.runtime.worker",
        "sluice.runtime.tasks",
        "sluice.runtime.herder.standalone",
        "sluice.runtime.herder.distributed",
        "sluice.spark.launcher",
        "sluice.taskhost.host",
        "sluice.taskhost.source",
        "sluice.taskhost.transactional",
        "sluice.taskhost.sink",
        "sluice.taskhost.split_part",
        "sluice.kafka.security",
    ]
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "loaded = sorted(m for m in sys.modules if m == 'pyspark' or m.startswith('pyspark.'))\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
