"""Working directories of the local services, under the cache root of :mod:`sluice.jvm.cache`."""

from __future__ import annotations

from pathlib import Path

from sluice.jvm.cache import cache_dir

__all__ = ["run_dir"]


def run_dir(*parts: str, create: bool = True) -> Path:
    """Working directories of local services (``<root>/run/kafka`` for ``sluice dev kafka``)."""
    return cache_dir("run", *parts, create=create)
