"""Where Sluice caches what it downloads or builds: ``$SLUICE_CACHE`` or ``~/.cache/sluice``.

Layout (the root ``dev`` script and the development tooling use the same root)::

    <root>/jvm/      Ivy cache and resolved jar sets (see sluice.jvm.jars)
    <root>/<kind>/   Java sources compiled by sluice.jvm.java_build (interceptor/, ...)
    <root>/wheels/   locally built wheels (./dev: pyspark is published as an sdist only)
    <root>/pip/      pip's cache (./dev)
    <root>/run/      working directories of local services (sluice dev ...)
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CACHE_ENV", "cache_dir", "cache_root", "jvm_dir"]

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
