"""The ``chromium_browser`` and ``page`` fixtures: a real headless Chromium driven by Playwright.

Loaded as a plugin (``"tests.integration.conftest_browser"`` in ``pytest_plugins`` of
``tests/conftest.py``). The browser is Debian's Chromium, found (and installed once with
apt-get when missing, as root or through ``sudo -n``; about 10 s) by the project's own
tooling (:func:`sluice_devtools.browsers.ensure_chromium`; ``SLUICE_CHROMIUM`` points at
another executable). Playwright never downloads a browser of its own here.

- ``chromium_browser`` (session): a Playwright ``Browser``, launched on first use by a test
  that asks for it (never otherwise) with
  :func:`sluice_devtools.browsers.launch_options` and closed, with Playwright, when the
  session ends.
- ``page`` (per test): a ``Page`` in a fresh browser context (its own cookies and storage,
  viewport 1280x900), closed after the test. When the test fails, a screenshot of the page
  is saved as ``failure.png`` in the test's ``tmp_path``, and its path is reported.

When Chromium is missing and cannot be installed (not root, no ``sudo -n``) the tests that
use these fixtures are skipped with the reason, so a developer machine without root still
runs the rest of the suite. In CI (``CI`` set, as CI services do) they fail instead: a
skipped browser test there would hide that the browser tests never ran.

Playwright's sync API cannot run inside a running asyncio event loop; these fixtures are
for plain (sync) tests. Use ``page.goto(url)``, ``page.click(selector)``,
``page.text_content(selector)``, ``page.screenshot(path=...)`` and Playwright's
``expect`` assertions, which wait for the condition instead of sleeping.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CI_ENV = "CI"
# A hung page fails the test after this long instead of at pytest-timeout's 300 s.
DEFAULT_TIMEOUT_MS = 30_000


def _in_ci() -> bool:
    return os.environ.get(CI_ENV, "").strip().lower() not in ("", "0", "false", "no")


def _chromium_or_skip() -> Path:
    """Chromium's executable; skips the test (fails it in CI) when there is none."""
    from sluice_devtools import DevToolsError
    from sluice_devtools.browsers import ensure_chromium

    try:
        return ensure_chromium()
    except DevToolsError as exc:
        problem = str(exc)
    # outside the except block: the report shows the reason, not a chained traceback
    if _in_ci():
        pytest.fail(f"Chromium is required in CI ({CI_ENV} is set): {problem}", pytrace=False)
    pytest.skip(f"no Chromium for the browser tests: {problem}")


# Per module, not per session: while Playwright's sync API runs, an asyncio loop is running
# in the test thread, and later tests that call asyncio.run() would fail.
@pytest.fixture(scope="module")
def chromium_browser() -> Iterator[Browser]:
    """A headless Chromium for the test module (launched on first use, closed after the module)."""
    from playwright.sync_api import sync_playwright

    from sluice_devtools.browsers import launch_options

    executable = _chromium_or_skip()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_options(executable))
        try:
            yield browser
        finally:
            browser.close()


# The report of a test's call phase, kept on the item for the ``page`` fixture's teardown.
_CALL_REPORT = pytest.StashKey[pytest.TestReport]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep the call phase's report on the item, so ``page`` can tell whether the test failed."""
    report = yield
    if report.when == "call":
        item.stash[_CALL_REPORT] = report
    return report


@pytest.fixture
def page(chromium_browser: Browser, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Page]:
    """A page in a fresh browser context (viewport 1280x900), closed after the test."""
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    try:
        new_page = context.new_page()
        yield new_page
        failed = _CALL_REPORT in request.node.stash and request.node.stash[_CALL_REPORT].failed
        if failed and not new_page.is_closed():
            shot = tmp_path / "failure.png"
            try:
                new_page.screenshot(path=shot, full_page=True)
            except Exception as exc:  # noqa: BLE001 - the page may be what broke; the test's own error matters
                request.node.add_report_section("teardown", "browser", f"no screenshot of the failed page: {exc}")
            else:
                request.node.add_report_section("teardown", "browser", f"screenshot of the failed page: {shot}")
    finally:
        context.close()
