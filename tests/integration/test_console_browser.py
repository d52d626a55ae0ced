"""Acceptance of the web console in a real browser (Playwright driving Debian's Chromium),
against a Sluice worker's own ``/ui/`` and against Apache Kafka Connect 4.3.1 through
``sluice console``: create a connector through the form (an error beside its field first),
pause and resume it, a failing connector's trace and its restart, stop and offsets reset,
a logger level, delete."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from sluice_devtools.console_screenshots import SHOTS, take_screenshots
from tests.helpers import wait_until
from tests.integration.console_targets import (
    FILE_SOURCE,
    MOCK_SOURCE,
    Target,
    kafka_connect_target,
    quote_segment,
    sluice_target,
)

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("browser")]

# a Sluice worker's first task waits for Spark to start
STARTUP_MS = 120_000
# the form drawn again with the worker's validation, on a machine busy with other tests
REDRAW_MS = 20_000


@pytest.fixture(scope="module", params=["sluice", "kafka-connect"])
def target(
    request: pytest.FixtureRequest, kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Target]:
    work_dir = tmp_path_factory.mktemp(f"console-{request.param}")
    if request.param == "sluice":
        made = sluice_target(work_dir, kafka_bootstrap)
    else:
        made = kafka_connect_target(work_dir, kafka_bootstrap, work_dir.name)
    yield made
    made.close()


def _file_source(target: Target, name: str, topic: str, lines: int = 3) -> dict[str, str]:
    source = target.work_dir / f"{topic}.txt"
    source.write_text("".join(f"line {i}\n" for i in range(lines)), encoding="utf-8")
    return {"connector.class": FILE_SOURCE, "file": str(source), "topic": topic, "tasks.max": "1"}


def _create(target: Target, name: str, config: dict[str, str]) -> None:
    r = target.request("PUT", f"/connectors/{quote_segment(name)}/config", json=config)
    assert r.status_code in (200, 201), r.text


def _open_connector(page: Page, target: Target, name: str) -> None:
    page.goto(target.console)
    page.get_by_role("link", name=name, exact=True).click()
    expect(page.locator("h1 q.name")).to_have_text(name)


def _state(page: Page) -> Locator:
    return page.locator("#connector-state")


def test_create_through_the_form_then_pause_and_resume(target: Target, page: Page, unique_name: str) -> None:
    name = f"{unique_name} 'source' \"ü\""
    topic = f"{unique_name}-lines"
    wanted = _file_source(target, name, topic)
    page.goto(target.console)
    page.get_by_role("link", name="New connector").first.click()
    page.get_by_role("link", name=FILE_SOURCE, exact=True).click()
    expect(page.locator("#config-form")).to_be_visible()
    page.locator("#cfg-name").fill(name)
    page.locator('[data-key="file"] input').fill(wanted["file"])
    page.locator('[data-key="topic"] input').fill(topic)
    # a bad value: the worker's validation error appears beside the field as it is typed
    batch = page.locator('[data-key="batch.size"]')
    batch.locator("input").fill("lots")
    batch.locator("input").press("Tab")
    expect(batch.locator(".field-errors")).to_contain_text("batch.size")
    expect(batch.locator("input")).to_have_attribute("aria-invalid", "true")
    batch.locator("input").fill("100")
    batch.locator("input").press("Tab")
    expect(batch.locator(".field-errors")).to_have_count(0)
    page.get_by_role("button", name="Create").click()
    expect(page.locator(".notice")).to_have_text("Connector created.")
    expect(page.locator("h1 q.name")).to_have_text(name)
    expect(_state(page)).to_have_text("RUNNING", timeout=STARTUP_MS)
    rates = page.locator("#rates")
    if target.kind == "sluice":
        # the task's throughput from the worker's metrics, drawn live
        expect(rates.locator('table.rates tr[data-task="0"]')).to_be_visible(timeout=20_000)
        expect(rates.locator('svg[data-series="in"] polyline')).to_have_count(1, timeout=15_000)
    else:
        expect(rates).to_contain_text("expose no metrics", timeout=20_000)
    config = target.request("GET", f"/connectors/{quote_segment(name)}/config").json()
    assert {k: config.get(k) for k in ("file", "topic", "batch.size")} == {
        "file": wanted["file"],
        "topic": topic,
        "batch.size": "100",
    }

    page.get_by_role("button", name="Pause", exact=True).click()
    expect(page.locator(".notice")).to_have_text("Pause requested.")
    expect(_state(page)).to_have_text("PAUSED", timeout=30_000)
    page.get_by_role("button", name="Resume", exact=True).click()
    expect(page.locator(".notice")).to_have_text("Resume requested.")
    expect(_state(page)).to_have_text("RUNNING", timeout=30_000)
    # the overview lists it among the running ones, by the worker that runs it
    page.get_by_role("link", name="Connectors", exact=True).click()
    row = page.locator("tr", has=page.get_by_role("link", name=name, exact=True))
    expect(row.locator("td").nth(1)).to_have_text("RUNNING")


def test_a_transform_is_added_by_alias_with_its_own_fields(target: Target, page: Page, unique_name: str) -> None:
    name = f"{unique_name}-routed"
    wanted = _file_source(target, name, f"{unique_name}-t")
    page.goto(f"{target.console}new?plugin={FILE_SOURCE}")
    page.locator("#cfg-name").fill(name)
    page.locator('[data-key="file"] input').fill(wanted["file"])
    page.locator('[data-key="topic"] input').fill(wanted["topic"])
    page.locator("summary", has_text="Transforms").first.click()  # folded: nothing in it is set
    page.locator("summary", has_text="Error Handling").click()
    page.locator('[data-key="transforms"] input').fill("route")
    page.locator('[data-key="transforms"] input').press("Tab")
    # the form is drawn again with the worker's answer; what the person unfolded stays so
    expect(page.locator('details[data-group="Error Handling"]')).to_have_attribute("open", "")
    # the alias gets its group, with the transformation's type to pick
    expect(page.get_by_role("heading", name="Transforms: route")).to_be_visible(timeout=REDRAW_MS)
    page.locator('[data-key="transforms.route.type"] select').select_option(
        "org.apache.kafka.connect.transforms.RegexRouter"
    )
    # then the chosen transformation's own keys
    regex = page.locator('[data-key="transforms.route.regex"] input')
    expect(regex).to_be_visible(timeout=REDRAW_MS)
    regex.fill("(.*)")
    page.locator('[data-key="transforms.route.replacement"] input').fill("$1-routed")
    page.get_by_role("button", name="Create").click()
    expect(page.locator(".notice")).to_have_text("Connector created.")
    config = target.request("GET", f"/connectors/{quote_segment(name)}/config").json()
    assert {k: v for k, v in config.items() if k.startswith("transforms")} == {
        "transforms": "route",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": "(.*)",
        "transforms.route.replacement": "$1-routed",
    }
    target.request("DELETE", f"/connectors/{quote_segment(name)}")


# Runs in the page: the moment a redrawn form is inserted, before the browser does anything
# else, give its batch.size a bad value as a person would (input, then change).
_CHANGE_AS_SOON_AS_REDRAWN = """() => {
  const observer = new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (node.id !== "config-form") { continue; }
        observer.disconnect();
        const input = node.querySelector('[data-key="batch.size"] input');
        input.value = "lots";
        input.dispatchEvent(new Event("input", {bubbles: true}));
        input.dispatchEvent(new Event("change", {bubbles: true}));
      }
    }
  });
  observer.observe(document.querySelector("main"), {childList: true, subtree: true});
}"""


def test_a_change_the_moment_the_form_is_redrawn_is_validated(target: Target, page: Page) -> None:
    page.goto(f"{target.console}new?plugin={FILE_SOURCE}")
    expect(page.locator("#config-form")).to_be_visible()
    page.evaluate(_CHANGE_AS_SOON_AS_REDRAWN)
    page.locator('[data-key="topic"] input').fill("anything")
    page.locator('[data-key="topic"] input').press("Tab")
    # the redraw the topic brought is changed at once; that change brings a redraw of its own
    batch = page.locator('[data-key="batch.size"]')
    expect(batch.locator(".field-errors")).to_contain_text("batch.size", timeout=REDRAW_MS)
    expect(batch.locator("input")).to_have_value("lots")


def test_a_failed_task_shows_its_trace_and_restarts(target: Target, page: Page, unique_name: str) -> None:
    name = f"{unique_name}-mock"
    # fails 5 s after each start: long enough to see the restarted task run
    _create(target, name, {"connector.class": MOCK_SOURCE, "mock_mode": "task-failure", "delay_ms": "5000"})
    _open_connector(page, target, name)
    task = page.locator('tr[data-task="0"]')
    expect(task.locator(".state")).to_have_text("FAILED", timeout=STARTUP_MS)
    trace = page.locator("details.trace", has_text="Trace of task 0")
    expect(trace).to_be_visible()
    assert len(trace.locator("pre").inner_text()) > 40  # a real stack trace, not a placeholder
    page.get_by_role("link", name="Connectors", exact=True).click()
    # failed connectors come first
    overview_row = page.locator("table.connectors tbody tr").first
    expect(overview_row).to_have_class("failed")
    _open_connector(page, target, name)
    restart = page.locator("form.restart")
    restart.get_by_label("include tasks").check()
    restart.get_by_label("only failed").check()
    restart.get_by_role("button", name="Restart").click()
    expect(page.locator(".notice")).to_have_text("Restart requested.")
    wait_until(
        lambda: (
            (target.status(name) or {}).get("tasks", [{}])[0].get("state") in ("RUNNING", "RESTARTING", "UNASSIGNED")
        ),
        60,
        "the failed task to be restarted",
    )


def test_stop_then_reset_offsets(target: Target, page: Page, unique_name: str) -> None:
    name = f"{unique_name}-offsets"
    _create(target, name, _file_source(target, name, f"{unique_name}-t"))

    def offsets() -> list[object]:
        r = target.request("GET", f"/connectors/{quote_segment(name)}/offsets")
        return r.json().get("offsets", []) if r.status_code == 200 else []

    wait_until(offsets, STARTUP_MS / 1000, "the source's first committed offsets")
    _open_connector(page, target, name)
    page.get_by_role("button", name="Stop", exact=True).click()
    expect(page.get_by_role("heading", name=f"Stop connector {name}?")).to_be_visible()
    page.get_by_role("button", name="Stop", exact=True).click()
    expect(page.locator(".notice")).to_have_text("Stop requested.")
    expect(_state(page)).to_have_text("STOPPED", timeout=60_000)
    page.reload()
    expect(page.locator("table.offsets")).to_contain_text("position")
    page.get_by_role("button", name="Reset offsets").click()
    expect(page.get_by_role("heading", name=f"Reset the offsets of {name}?")).to_be_visible()
    page.get_by_role("button", name="Reset", exact=True).click()
    expect(page.locator(".notice")).to_have_text("Offsets reset.")
    expect(page.locator("#offsets-h + p")).to_have_text("No offsets committed.")
    assert offsets() == []


def test_an_altered_offset_is_refused_with_the_workers_message(target: Target, page: Page, unique_name: str) -> None:
    name = f"{unique_name}-refused"
    _create(target, name, _file_source(target, name, f"{unique_name}-t"))
    _open_connector(page, target, name)
    page.get_by_role("button", name="Stop", exact=True).click()
    page.get_by_role("button", name="Stop", exact=True).click()
    expect(_state(page)).to_have_text("STOPPED", timeout=60_000)
    page.reload()
    page.locator("#offsets-text").fill(json.dumps({"offsets": [{"partition": {"filename": "x"}, "offset": "nope"}]}))
    page.get_by_role("button", name="Alter offsets").click()
    page.get_by_role("button", name="Alter", exact=True).click()
    expect(page.locator(".error-box")).to_be_visible()
    message = target.request(
        "PATCH",
        f"/connectors/{quote_segment(name)}/offsets",
        json={"offsets": [{"partition": {"filename": "x"}, "offset": "nope"}]},
    ).json()["message"]
    expect(page.locator(".server-error")).to_have_text(message)


def test_a_logger_level_is_set(target: Target, page: Page, unique_name: str) -> None:
    logger = f"org.example.console.{unique_name.replace('-', '_')}"
    page.goto(target.console + "loggers")
    page.get_by_label("Logger").fill(logger)
    page.get_by_label("Level").select_option("DEBUG")
    page.get_by_role("button", name="Set level").click()
    expect(page.locator(".notice")).to_have_text("Logger level set.")
    expect(page.locator(f'tr[data-logger="{logger}"] td').first).to_have_text("DEBUG")
    assert target.request("GET", f"/admin/loggers/{logger}").json()["level"] == "DEBUG"
    # and for every worker of the cluster
    page.get_by_label("Logger").fill(logger)
    page.get_by_label("Level").select_option("WARN")
    page.get_by_label("every worker of the cluster").check()
    page.get_by_role("button", name="Set level").click()
    expect(page.locator(".notice")).to_have_text("Logger level set.")
    wait_until(
        lambda: target.request("GET", f"/admin/loggers/{logger}").json().get("level") == "WARN",
        30,
        "the cluster-wide level to reach the worker",
    )


def test_delete_asks_first(target: Target, page: Page, unique_name: str) -> None:
    name = f"{unique_name}-gone ✓"
    _create(target, name, _file_source(target, name, f"{unique_name}-t"))
    _open_connector(page, target, name)
    page.get_by_role("button", name="Delete").click()
    expect(page.get_by_role("heading", name=f"Delete connector {name}?")).to_be_visible()
    page.get_by_role("link", name="Cancel").click()  # nothing happens
    assert target.status(name) is not None
    page.get_by_role("button", name="Delete").click()
    page.get_by_role("button", name="Delete").click()
    expect(page.locator(".notice")).to_have_text("Connector deleted.")
    expect(page.get_by_role("link", name=name, exact=True)).to_have_count(0)
    wait_until(lambda: target.status(name) is None, 30, "the connector to be gone")


def test_an_action_by_keyboard_alone(target: Target, page: Page, unique_name: str) -> None:
    name = f"{unique_name}-keys"
    _create(target, name, _file_source(target, name, f"{unique_name}-t"))
    _open_connector(page, target, name)
    for _ in range(30):  # Tab through the page to the Pause button, then press it
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent.trim()") == "Pause":
            break
    else:
        raise AssertionError("the Pause button cannot be reached with Tab")
    page.keyboard.press("Enter")
    expect(page.locator(".notice")).to_have_text("Pause requested.")
    wait_until(lambda: (target.status(name) or {}).get("connector", {}).get("state") == "PAUSED", 60, "PAUSED")
    target.request("DELETE", f"/connectors/{quote_segment(name)}")


def test_readable_in_a_narrow_window_and_by_keyboard(target: Target, page: Page, unique_name: str) -> None:
    page.set_viewport_size({"width": 360, "height": 740})
    page.goto(target.console + "new?plugin=" + FILE_SOURCE)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, f"the form scrolls sideways in a narrow window ({width}px)"
    page.keyboard.press("Tab")  # the skip link first
    expect(page.locator(".skip")).to_be_focused()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.tagName")
    assert focused in ("A", "INPUT", "SELECT", "SUMMARY", "BUTTON")


def test_the_docs_screenshots_are_taken_by_one_command(
    kafka_bootstrap: str, tmp_path: Path, chromium_browser: Browser
) -> None:
    shots = take_screenshots(tmp_path, kafka_bootstrap, chromium_browser)
    assert [p.name for p in shots] == list(SHOTS)
    for shot in shots:
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
