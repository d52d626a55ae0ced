"""Where Sluice caches what it downloads or builds: ``$SLUICE_CACHE`` or ``~/.cache/sluice``.

Layout (the root ``dev`` script uses the same root and the same names)::

    <root>/jvm/      Ivy cache and resolved jar sets (see sluice.devtools.jars)
    <root>/wheels/   locally built wheels (pyspark is published as an sdist only)
    <root>/pip/      pip's cache (PIP_CACHE_DIR)
    <root>/run/      working directories of services started by `sluice dev`
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir", "cache_root", "jvm_dir", "pip_dir", "run_dir", "wheels_dir"]

CACHE_ENV = "SLUICE_CACHE"


def cache_root() -> Path:
    """The cache root: ``$SLUICE_CACHE`` if set and non-empty, else ``~/.cache/sluice``."""
    configured = os.environ.get(CACHE_ENV)
    root = Path(configured) if configured else Path("~/.cache/sluice")
    return root.expanduser().absolute()


def cache_dir(*parts: str, create: bool = True) -> Path:
    """``<root>/<parts...>``, created (with parents) unless ``create`` is false."""
    path = cache_root().joinpath(*parts)
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def jvm_dir(create: bool = True) -> Path:
    """Ivy's cache and the resolved jar sets."""
    return cache_dir("jvm", create=create)


def wheels_dir(create: bool = True) -> Path:
    """Locally built wheels (``pip install --find-links``)."""
    return cache_dir("wheels", create=create)


def pip_dir(create: bool = True) -> Path:
    """pip's own cache (``PIP_CACHE_DIR``)."""
    return cache_dir("pip", create=create)


def run_dir(*parts: str, create: bool = True) -> Path:
    """Working directories of local services (``<root>/run/kafka`` for ``sluice dev kafka``)."""
    return cache_dir("run", *parts, create=create)
