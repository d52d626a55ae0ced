"""The shipped package stands without the development tooling.

``sluice`` (src/sluice) never imports ``sluice_devtools`` (devtools/, a distribution of its
own, installed by ``./dev setup``); the worker, the REST app and the CLI import without it,
``sluice dev``/``sluice quickstart`` then say what is missing; and the wheel of ``sluice``
holds no local broker, registry, database, Spark cluster or reference harness.
"""

from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
import sys
import textwrap
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "sluice"
DEVTOOLS = "sluice_devtools"


def _imported_modules(path: Path) -> list[str]:
    """Modules ``path`` imports: import statements, and literal names given to
    ``importlib.import_module``/``__import__``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                names.append(node.args[0].value)
    return names


def test_the_scan_sees_every_way_of_importing(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import sluice_devtools.kafka\n"
        "from sluice_devtools import jars\n"
        "import importlib\n"
        "importlib.import_module('sluice_devtools.cli')\n"
        "__import__('sluice_devtools')\n"
    )
    assert _imported_modules(module) == [
        "sluice_devtools.kafka",
        "sluice_devtools",
        "importlib",
        "sluice_devtools.cli",
        "sluice_devtools",
    ]


def test_no_module_of_the_package_imports_the_devtools() -> None:
    offenders = {
        str(path.relative_to(SRC)): hits
        for path in sorted(SRC.rglob("*.py"))
        if (hits := [n for n in _imported_modules(path) if n.split(".")[0] == DEVTOOLS])
    }
    assert not offenders, f"sluice must not import {DEVTOOLS}: {offenders}"


def test_the_devtools_add_their_commands_through_entry_points() -> None:
    root = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    devtools = tomllib.loads((ROOT / "devtools" / "pyproject.toml").read_text(encoding="utf-8"))
    assert "sluice.cli_commands" not in root["project"].get("entry-points", {})
    commands = devtools["project"]["entry-points"]["sluice.cli_commands"]
    assert commands == {
        "dev": "sluice_devtools.cli:dev_main",
        "quickstart": "sluice_devtools.quickstart:quickstart_main",
    }
    assert "sluice" in devtools["project"]["dependencies"]


# Run first in the child: `sluice_devtools` cannot be imported and its distribution's entry
# points are not seen, as in an environment where only the sluice wheel is installed.
_WITHOUT_DEVTOOLS = textwrap.dedent(
    """
    import importlib.abc
    import importlib.metadata
    import sys

    class _NoDevtools(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "sluice_devtools":
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, _NoDevtools())
    _entry_points = importlib.metadata.entry_points

    def entry_points(**params):
        return importlib.metadata.EntryPoints(
            ep for ep in _entry_points(**params) if not ep.value.startswith("sluice_devtools")
        )

    importlib.metadata.entry_points = entry_points
    """
)


def _run_without_devtools(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _WITHOUT_DEVTOOLS + textwrap.dedent(code)],
        cwd=cwd,  # not the checkout: nothing of it on sys.path but what is installed
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_the_worker_the_rest_app_and_the_cli_import_without_the_devtools(tmp_path: Path) -> None:
    result = _run_without_devtools(
        """
        import sluice.runtime.herder.standalone
        import sluice.runtime.herder.distributed
        import sluice.cli.main
        import sluice.cli.connect
        import sluice.cli.distributed
        import sluice.rest.app
        import sluice.jvm.jars, sluice.jvm.interceptor
        try:
            import sluice_devtools
        except ModuleNotFoundError:
            pass
        else:
            raise SystemExit("the test's import block does not work")
        loaded = sorted(m for m in sys.modules if m.split(".")[0] == "sluice_devtools")
        assert not loaded, loaded
        print("ok")
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


@pytest.mark.parametrize("command", [["dev", "kafka", "start"], ["quickstart", "--exit"], ["dev", "--help"]])
def test_devtools_commands_without_the_devtools_say_what_is_missing(tmp_path: Path, command: list[str]) -> None:
    result = _run_without_devtools(
        f"""
        from sluice.cli.main import main
        sys.exit(main({command!r}))
        """,
        tmp_path,
    )
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert f"sluice {command[0]} needs the development tooling from a source checkout: ./dev setup" in result.stderr, (
        result.stderr
    )


def test_help_lists_the_devtools_commands_without_the_devtools(tmp_path: Path) -> None:
    result = _run_without_devtools(
        """
        from sluice.cli.main import main
        sys.exit(main(["--help"]))
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "standalone" in result.stdout and "connector" in result.stdout
    assert "needs the development tooling: ./dev setup" in result.stdout


# --------------------------------------------------------------------------------- wheel

# Modules of the development tooling, by file name: none may be in the wheel.
DEVTOOLS_FILES = {
    "kafka.py",
    "registry.py",
    "databases.py",
    "spark_cluster.py",
    "kafka_reference.py",
    "ConnectReference.java",
    "processes.py",
    "quickstart.py",
    "browsers.py",
    "console_screenshots.py",
}


def _can_build_without_isolation() -> bool:
    """Whether the environment's setuptools can build a wheel on its own (bdist_wheel: in
    setuptools since 70.1, before that in the ``wheel`` package)."""
    for name in ("setuptools.command.bdist_wheel", "wheel.bdist_wheel"):
        try:
            if importlib.util.find_spec(name) is not None:
                return True
        except ModuleNotFoundError:  # no parent package
            continue
    return False


def test_the_wheel_holds_the_package_and_no_devtools(tmp_path: Path) -> None:
    # A copy of what the build reads, so the build leaves nothing (build/, egg-info) in the checkout.
    project = tmp_path / "project"
    project.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, project / name)
    shutil.copytree(ROOT / "src", project / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"))
    out = tmp_path / "dist"
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q", "-w", str(out)]
    if _can_build_without_isolation():
        command.append("--no-build-isolation")
    result = subprocess.run([*command, str(project)], capture_output=True, text=True, timeout=240)
    isolated = "--no-build-isolation" not in command
    # pip fetches setuptools for an isolated build: no index, no build.
    if isolated and result.returncode != 0 and "satisfies the requirement" in result.stderr:
        pytest.skip(f"building the wheel needs setuptools from the package index:\n{result.stderr[-2000:]}")
    assert result.returncode == 0, result.stdout + result.stderr
    (wheel,) = out.glob("sluice-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        entry_points = next(archive.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))

    assert {n.split("/")[0] for n in names} == {"sluice", wheel.name.split("-py")[0] + ".dist-info"}
    assert not [n for n in names if "devtools" in n]
    assert not [n for n in names if n.rsplit("/", 1)[-1] in DEVTOOLS_FILES]
    assert "sluice_devtools" not in entry_points and "sluice.cli_commands" not in entry_points
    # What a worker needs at run time is there, package data included.
    assert {"sluice/jvm/jars.py", "sluice/jvm/interceptor.py", "sluice/jvm/SourceTimestampInterceptor.java"} <= set(
        names
    )
    assert "sluice/spark/log4j2.properties" in names
    # the web console's pages and its one script
    assert {"sluice/console/templates/base.html", "sluice/console/static/htmx.min.js"} <= set(names)
