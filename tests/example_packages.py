"""Installing an example plugin package (``examples/<name>/``) for tests, as pip would.

``pip install --target <site> examples/counter_connector`` would build a wheel, which needs
setuptools' wheel support and, with build isolation, the network; tests can count on
neither. A wheel's installed form is simple, though: the packages plus a
``<name>-<version>.dist-info`` directory whose ``entry_points.txt`` is where Sluice's
plugin discovery (``importlib.metadata.entry_points``) finds the plugins. This lays out
exactly that, from the project's ``pyproject.toml``.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

__all__ = ["install_like_pip"]


def install_like_pip(project: Path, site: Path) -> Path:
    """Lay out the setuptools project ``project`` in ``site`` the way ``pip install
    --target site`` does, and return ``site`` (put it on ``sys.path`` or ``PYTHONPATH``)."""
    pyproject = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    meta = pyproject["project"]
    where = pyproject.get("tool", {}).get("setuptools", {}).get("packages", {}).get("find", {}).get("where", ["."])
    site.mkdir(parents=True, exist_ok=True)
    for root in where:
        for package in sorted((project / root).iterdir()):
            if (package / "__init__.py").is_file():
                shutil.copytree(package, site / package.name, ignore=shutil.ignore_patterns("__pycache__"))
    dist_name = re.sub(r"[-_.]+", "_", meta["name"])
    dist_info = site / f"{dist_name}-{meta['version']}.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {meta['name']}\nVersion: {meta['version']}\n", encoding="utf-8"
    )
    groups = [
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in entries.items())
        for group, entries in meta.get("entry-points", {}).items()
    ]
    (dist_info / "entry_points.txt").write_text("\n".join(groups), encoding="utf-8")
    (dist_info / "top_level.txt").write_text(
        "".join(f"{p.name}\n" for p in sorted(site.iterdir()) if (p / "__init__.py").is_file()), encoding="utf-8"
    )
    return site
