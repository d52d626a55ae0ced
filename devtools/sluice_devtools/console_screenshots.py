"""``sluice dev console-screenshots``: the web console's pictures in the docs, taken again.

Starts a broker (unless one is given) and a standalone worker, creates a few connectors
(a file source and sink that run, a mock source whose task fails), and saves PNGs of the
overview, a connector's page and the create form (with a validation error showing) taken
in headless Chromium.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2

from sluice_devtools.browsers import ensure_chromium, launch_options
from sluice_devtools.kafka import KafkaBroker
from sluice_devtools.processes import free_port

if TYPE_CHECKING:
    from playwright.sync_api import Browser

__all__ = ["SHOTS", "console_screenshots_main", "take_screenshots"]

SHOTS = ("console-overview.png", "console-connector.png", "console-form.png")
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


def console_screenshots_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="sluice dev console-screenshots", description=__doc__)
    parser.add_argument("--out", default="docs/images", help="where the PNGs go (default docs/images)")
    parser.add_argument("--bootstrap", default=None, help="use this broker instead of starting one")
    args = parser.parse_args(list(argv))
    for path in take_screenshots(Path(args.out), args.bootstrap):
        print(path)
    return 0


def _wait_for(predicate: Callable[[], Any], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.2)


def take_screenshots(out: Path, bootstrap: str | None = None, browser: Browser | None = None) -> list[Path]:
    """The console's pictures, in ``out``; with ``browser`` when one is open already (Playwright's
    sync API runs once per thread)."""
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="sluice-console-shots-"))
    broker = None
    worker: subprocess.Popen[bytes] | None = None
    try:
        if bootstrap is None:
            broker = KafkaBroker(work / "kafka")
            bootstrap = broker.start()
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        props = {
            "bootstrap.servers": bootstrap,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "offset.storage.file.filename": str(work / "connect.offsets"),
            "offset.flush.interval.ms": "1000",
            "listeners": url,
        }
        (work / "worker.properties").write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")
        with (work / "worker.log").open("ab") as log:
            worker = subprocess.Popen(
                [sys.executable, "-m", "sluice.cli.main", "standalone", str(work / "worker.properties")],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=work,
            )

        def healthy(client: httpx2.Client) -> bool:
            if worker is not None and worker.poll() is not None:
                raise RuntimeError("the worker exited:\n" + (work / "worker.log").read_text(errors="replace")[-4000:])
            try:
                return client.get(url + "/health", timeout=2).status_code == 200
            except httpx2.HTTPError:
                return False

        with httpx2.Client() as probe:  # one client: each would build an SSL context
            _wait_for(lambda: healthy(probe), 120, "the worker to start")
        (work / "orders.txt").write_text("".join(f"order {i}\n" for i in range(100)), encoding="utf-8")
        connectors = {
            "orders-file-source": {"connector.class": FILE_SOURCE, "file": str(work / "orders.txt"), "topic": "orders"},
            "orders-file-sink": {
                "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
                "file": str(work / "orders.out.txt"),
                "topics": "orders",
            },
            "inventory-mock": {
                "connector.class": "org.apache.kafka.connect.tools.MockSourceConnector",
                "mock_mode": "task-failure",
                "delay_ms": "1000",
            },
        }
        with httpx2.Client(base_url=url, timeout=60) as client:
            for name, config in connectors.items():
                client.put(f"/connectors/{name}/config", json=config).raise_for_status()

            def settled() -> bool:
                states = []
                for name in connectors:
                    r = client.get(f"/connectors/{name}/status")
                    if r.status_code != 200 or not r.json()["tasks"]:
                        return False
                    states.append(r.json()["tasks"][0]["state"])
                return states == ["RUNNING", "RUNNING", "FAILED"]

            _wait_for(settled, 180, "two running connectors and a failed one")
        shots = [out / name for name in SHOTS]
        if browser is not None:
            _shoot(browser, url, shots)
        else:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as playwright:
                launched = playwright.chromium.launch(**launch_options(ensure_chromium()))
                try:
                    _shoot(launched, url, shots)
                finally:
                    launched.close()
        return shots
    finally:
        if worker is not None and worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(60)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
        if broker is not None:
            broker.stop()
        shutil.rmtree(work, ignore_errors=True)


def _shoot(browser: Browser, url: str, shots: list[Path]) -> None:
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    try:
        page.goto(url + "/ui/")
        page.screenshot(path=str(shots[0]), full_page=True)
        page.goto(url + "/ui/connector?name=inventory-mock")
        page.locator("details.trace").first.wait_for()
        page.screenshot(path=str(shots[1]))
        page.goto(url + "/ui/new?plugin=" + FILE_SOURCE)
        page.locator("#cfg-name").fill("customers-file-source")
        page.locator('[data-key="topic"] input').fill("customers")
        batch = page.locator('[data-key="batch.size"] input')
        batch.fill("lots")
        batch.press("Tab")
        page.locator('[data-key="batch.size"] .field-errors').wait_for()
        page.screenshot(path=str(shots[2]), full_page=True)
    finally:
        page.close()
