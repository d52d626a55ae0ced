"""The browser tooling end to end: Playwright drives Debian's Chromium against a real HTTP server.

Proves the pieces browser tests rely on work together on this machine: Chromium is found
(or installed), launches headless with the project's flags, loads a page over loopback
HTTP, runs its JavaScript on a click, and renders a screenshot.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("browser")]

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PAGE = b"""<!doctype html>
<html>
  <head><meta charset="utf-8"><title>Sluice browser check</title></head>
  <body>
    <p id="status">waiting</p>
    <button id="go" onclick="document.getElementById('status').textContent = 'clicked ' + (1 + 1)">Go</button>
  </body>
</html>
"""


class _PageHandler(BaseHTTPRequestHandler):
    """Serves :data:`PAGE` at ``/``, 404 elsewhere (the browser also asks for /favicon.ico)."""

    def do_GET(self) -> None:
        if self.path != "/":
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: object) -> None:  # keep the test output clean
        pass


@pytest.fixture
def page_url() -> Iterator[str]:
    """``http://127.0.0.1:PORT/`` of a server (free port, own thread) serving :data:`PAGE`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _PageHandler)
    thread = threading.Thread(target=server.serve_forever, name="browser-test-http", daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_click_runs_the_pages_javascript_and_screenshots_are_png(page: Page, page_url: str, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    response = page.goto(page_url)
    assert response is not None and response.status == 200
    expect(page).to_have_title("Sluice browser check")
    expect(page.locator("#status")).to_have_text("waiting")

    page.click("#go")

    # the text is computed by the page's script, so this passes only if JavaScript ran
    expect(page.locator("#status")).to_have_text("clicked 2")

    shot = tmp_path / "page.png"
    page.screenshot(path=shot)
    data = shot.read_bytes()
    assert data.startswith(PNG_MAGIC), data[:16]
    assert len(data) > 1000  # a rendered 1280x900 page, not an empty image
