"""A headless Chromium for browser tests, from the machine's Debian package.

Playwright normally downloads its own browser builds (``playwright install``); the project
never does that (no network for it, and a second Chromium to keep up to date). Tests drive
Debian's ``chromium`` instead, through Playwright's ``executable_path``:

- :func:`ensure_chromium` returns the executable: ``$SLUICE_CHROMIUM`` when set (any
  Chromium or Chrome binary), else ``/usr/bin/chromium``, installed once with
  ``apt-get install -y --no-install-recommends chromium`` when missing (as root or through
  ``sudo -n``, by :func:`sluice_devtools.databases.install_packages`; about 100 MB).
  Otherwise the :class:`~sluice_devtools.DevToolsError` says what to install.
- :func:`launch_options` gives the keyword arguments of Playwright's
  ``chromium.launch(...)`` for that executable (headless, and the flags Chromium needs in
  containers and as root).

``./dev setup`` calls :func:`ensure_chromium` (through ``sluice dev chromium``) and only
warns when it cannot install; the ``chromium_browser`` fixture of
``tests/integration/conftest_browser.py`` then skips the browser tests with that reason.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from sluice_devtools import DevToolsError
from sluice_devtools.databases import install_packages

__all__ = [
    "CHROMIUM_ENV",
    "CHROMIUM_PACKAGE",
    "DEFAULT_CHROMIUM",
    "chromium_version",
    "ensure_chromium",
    "launch_options",
]

CHROMIUM_ENV = "SLUICE_CHROMIUM"
CHROMIUM_PACKAGE = "chromium"
DEFAULT_CHROMIUM = Path("/usr/bin/chromium")

_WHAT = "Chromium (the browser the browser tests drive with Playwright)"


def ensure_chromium(install: bool = True) -> Path:
    """The Chromium executable: ``$SLUICE_CHROMIUM``, else Debian's, installed when missing.

    An explicit ``$SLUICE_CHROMIUM`` is never replaced by another browser: when it does not
    point at an executable that is an error, so a mistyped path does not silently test
    against a different Chromium.
    """
    override = os.environ.get(CHROMIUM_ENV)
    if override:
        path = Path(override).expanduser()
        if not _is_executable(path):
            raise DevToolsError(
                f"{CHROMIUM_ENV} is {override!r}, which is not an executable file. Point it at a "
                f"Chromium or Chrome executable, or unset it to use Debian's ({DEFAULT_CHROMIUM})."
            )
        return path
    if _is_executable(DEFAULT_CHROMIUM):
        return DEFAULT_CHROMIUM
    if install:
        try:
            install_packages([CHROMIUM_PACKAGE], _WHAT)
        except DevToolsError as exc:
            raise DevToolsError(f"{exc}\nOr set {CHROMIUM_ENV} to a Chromium executable.") from exc
        if _is_executable(DEFAULT_CHROMIUM):
            return DEFAULT_CHROMIUM
    raise DevToolsError(
        f"{_WHAT} was not found at {DEFAULT_CHROMIUM}. Install the Debian package as root: "
        f"apt-get install --no-install-recommends {CHROMIUM_PACKAGE}; or set {CHROMIUM_ENV} to a "
        "Chromium executable."
    )


def launch_options(executable: Path) -> dict[str, Any]:
    """Keyword arguments for Playwright's ``chromium.launch`` running ``executable`` headless.

    - ``--no-sandbox`` as root: Chromium refuses to start as root with its sandbox on.
      (Playwright also adds it unless ``chromium_sandbox=True``; saying it here keeps the
      options right for any launcher.)
    - ``--disable-dev-shm-usage``: containers often give ``/dev/shm`` only 64 MB, where
      Chromium's renderers crash on larger pages; this puts that memory under ``/tmp``.
    - ``--disable-gpu``: there is no GPU here; without it Chromium probes for one and logs
      errors at each start.
    """
    args = ["--disable-dev-shm-usage", "--disable-gpu"]
    if os.geteuid() == 0:
        args.insert(0, "--no-sandbox")
    return {"executable_path": str(executable), "headless": True, "args": args}


def chromium_version(executable: Path) -> str:
    """``executable --version`` (``Chromium 156.0.8078.108 built on Debian ...``), or ``unknown``."""
    try:
        proc = subprocess.run(
            [str(executable), "--version"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return proc.stdout.strip() or "unknown"


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)
