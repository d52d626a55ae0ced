"""The web console over HTTP, without a browser: what a worker serves at ``/ui/`` (and
what it does not when turned off), pages for awkward names and a 200-key plugin, the
worker's own message when it refuses an action, and ``sluice console`` in front of a
worker that is not there."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from markupsafe import escape

from tests import http_client
from tests.integration.console_targets import FILE_SOURCE, ConsoleProcess, quote_segment
from tests.integration.workers import StandaloneWorker, free_port

pytestmark = pytest.mark.integration

WIDE = "sluice_test_plugins.WideConfigSourceConnector"


def esc(text: str) -> str:
    """``text`` as the pages write it (Jinja's escaping)."""
    return str(escape(text))


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneWorker]:
    w = StandaloneWorker(tmp_path_factory.mktemp("console-http"), kafka_bootstrap, "console-http")
    w.start()
    yield w
    assert w.stop() == 0, w.log()


def _put(worker: StandaloneWorker, name: str, config: dict[str, str]) -> None:
    r = http_client.put(f"{worker.url}/connectors/{quote_segment(name)}/config", json=config, timeout=60)
    assert r.status_code in (200, 201), r.text


def test_ui_is_served_beside_the_rest_api_which_is_unchanged(worker: StandaloneWorker) -> None:
    r = http_client.get(worker.url + "/ui", timeout=10)
    assert r.status_code == 307 and r.headers["location"].endswith("/ui/")
    page = http_client.get(worker.url + "/ui/", timeout=10)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "<h1>Connectors</h1>" in page.text
    # no page loads anything from another host
    assert not re.search(r'(src|href)="(https?:)?//', page.text)
    assert http_client.get(worker.url + "/ui/static/htmx.min.js", timeout=10).status_code == 200
    # the REST API keeps Kafka's answers: its description does not list the console
    spec = http_client.get(worker.url + "/openapi.json", timeout=10).json()
    assert not any(path.startswith("/ui") for path in spec["paths"])
    missing = http_client.get(worker.url + "/connectors/", timeout=10)
    assert missing.status_code == 200 and isinstance(missing.json(), list)


@pytest.mark.parametrize("name", ["with space", "quote ' and \" both", "ünïcødé ✓ 名前", "a&b=c?d#e%f+g"])
def test_awkward_connector_names_get_working_pages(worker: StandaloneWorker, tmp_path: Path, name: str) -> None:
    source = tmp_path / "in.txt"
    source.write_text("x\n")
    _put(worker, name, {"connector.class": FILE_SOURCE, "file": str(source), "topic": "console-awkward"})
    try:
        overview = http_client.get(worker.url + "/ui/", timeout=10).text
        assert esc(name) in overview
        link = re.search(r'href="(/ui/connector\?name=[^"]+)">' + re.escape(esc(name)) + "<", overview)
        assert link, overview
        page = http_client.get(worker.url + html.unescape(link.group(1)), timeout=10)
        assert page.status_code == 200
        assert f'<q class="name">{esc(name)}</q>' in page.text
        assert esc(str(source)) in page.text  # its config
        edit = http_client.get(worker.url + "/ui/edit", params={"name": name}, timeout=30)
        assert edit.status_code == 200 and f'value="{esc(name)}" readonly' in edit.text
    finally:
        http_client.delete(f"{worker.url}/connectors/{quote_segment(name)}", timeout=30)


def test_a_plugin_with_200_keys_gets_a_whole_form(worker: StandaloneWorker) -> None:
    r = http_client.get(worker.url + "/ui/new", params={"plugin": WIDE}, timeout=30)
    assert r.status_code == 200
    keys = set(re.findall(r'data-key="(wide\.key\.\d{3})"', r.text))
    assert len(keys) == 200
    assert all(f"<h2>Group {g}" in r.text for g in range(8))
    # documentation is text, never markup
    assert "&lt;b&gt;not bold&lt;/b&gt; &amp; &#34;quoted&#34;." in r.text
    # in each group, keys come in their order_in_group
    group0 = r.text.split("<h2>Group 0", 1)[1].split("<h2>", 1)[0]
    assert re.findall(r'data-key="(wide\.key\.\d{3})"', group0)[:3] == ["wide.key.000", "wide.key.008", "wide.key.016"]


def test_the_form_works_without_javascript(worker: StandaloneWorker, tmp_path: Path, unique_name: str) -> None:
    form = {
        "console:plugin": FILE_SOURCE,
        "console:mode": "create",
        "name": unique_name,
        "topic": unique_name,
        "batch.size": "many",
    }
    checked = http_client.post(worker.url + "/ui/form", data={**form, "console:action": "check"}, timeout=30)
    assert checked.status_code == 200
    assert "Invalid value many for configuration batch.size" in checked.text
    refused = http_client.post(worker.url + "/ui/form", data={**form, "console:action": "save"}, timeout=30)
    assert refused.status_code == 400 and "Fix the 1 error(s)" in refused.text
    assert http_client.get(f"{worker.url}/connectors/{unique_name}", timeout=10).status_code == 404
    pasted = json.dumps(
        {"name": unique_name, "config": {"connector.class": FILE_SOURCE, "topic": "t", "file": "/tmp/x"}}
    )
    loaded = http_client.post(
        worker.url + "/ui/form", data={**form, "console:action": "load", "console:text": pasted}, timeout=30
    )
    assert loaded.status_code == 200
    assert 'name="file" value="/tmp/x"' in loaded.text and 'name="batch.size" value=""' in loaded.text
    form["batch.size"] = "7"
    created = http_client.post(
        worker.url + "/ui/form", data={**form, "console:action": "save"}, timeout=60, follow_redirects=False
    )
    assert created.status_code == 303, created.text
    assert http_client.get(f"{worker.url}/connectors/{unique_name}/config", timeout=10).json()["batch.size"] == "7"
    http_client.delete(f"{worker.url}/connectors/{unique_name}", timeout=30)


def test_a_refused_action_shows_the_workers_message(worker: StandaloneWorker, tmp_path: Path, unique_name: str) -> None:
    source = tmp_path / "in.txt"
    source.write_text("x\n")
    _put(worker, unique_name, {"connector.class": FILE_SOURCE, "file": str(source), "topic": unique_name})
    try:
        r = http_client.post(
            worker.url + "/ui/connector",
            data={"name": unique_name, "console:action": "restart-task", "task": "99"},
            timeout=30,
        )
        expected = http_client.post(f"{worker.url}/connectors/{unique_name}/tasks/99/restart", timeout=30)
        assert expected.status_code == 404
        assert r.status_code == 404
        assert esc(expected.json()["message"]) in r.text
        # a destructive action asks first and does nothing until confirmed
        asked = http_client.post(
            worker.url + "/ui/connector", data={"name": unique_name, "console:action": "delete"}, timeout=30
        )
        assert asked.status_code == 200 and f"Delete connector {esc(unique_name)}?" in asked.text
        assert http_client.get(f"{worker.url}/connectors/{unique_name}", timeout=10).status_code == 200
    finally:
        http_client.delete(f"{worker.url}/connectors/{unique_name}", timeout=30)


def test_the_console_can_be_turned_off(kafka_bootstrap: str, tmp_path: Path) -> None:
    w = StandaloneWorker(tmp_path, kafka_bootstrap, "no-console", {"sluice.console.enable": "false"})
    w.start()
    try:
        r = http_client.get(w.url + "/ui/", timeout=10)
        assert r.status_code == 404 and r.json()["error_code"] == 404  # Kafka's error body
    finally:
        assert w.stop() == 0, w.log()


def test_sluice_console_says_when_no_worker_answers(tmp_path: Path) -> None:
    nobody = f"http://127.0.0.1:{free_port()}"
    console = ConsoleProcess(nobody, tmp_path / "console.log")
    try:
        r = http_client.get(console.url, timeout=30)
        assert r.status_code == 502
        assert "No Kafka Connect worker answered" in r.text and nobody in r.text
    finally:
        assert console.stop() == 0


def test_sluice_console_refuses_a_port_in_use(tmp_path: Path) -> None:
    console = ConsoleProcess("http://127.0.0.1:1", tmp_path / "console.log")
    try:
        port = console.url.split(":")[2].split("/")[0]
        second = subprocess.run(
            [sys.executable, "-m", "sluice.cli.main", "console", "--port", port],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 1
        assert f"cannot listen on 127.0.0.1:{port}" in second.stderr
    finally:
        console.stop()


def test_the_console_obeys_admin_listeners(kafka_bootstrap: str, tmp_path: Path) -> None:
    admin_port = free_port()
    w = StandaloneWorker(
        tmp_path, kafka_bootstrap, "admin-apart", {"admin.listeners": f"http://127.0.0.1:{admin_port}"}
    )
    w.start()
    try:
        # the console is on the REST listener; the logger endpoints are not, so it says so
        page = http_client.get(w.url + "/ui/loggers", timeout=10)
        assert page.status_code == 404 and 'class="error-box"' in page.text
        # the admin listener serves /admin only: no console there
        assert http_client.get(f"http://127.0.0.1:{admin_port}/ui/", timeout=10).status_code == 404
        assert http_client.get(f"http://127.0.0.1:{admin_port}/admin/loggers", timeout=10).status_code == 200
    finally:
        assert w.stop() == 0, w.log()


def test_a_post_from_another_sites_page_is_refused(worker: StandaloneWorker, tmp_path: Path, unique_name: str) -> None:
    source = tmp_path / "in.txt"
    source.write_text("x\n")
    _put(worker, unique_name, {"connector.class": FILE_SOURCE, "file": str(source), "topic": unique_name})
    try:
        form = {"name": unique_name, "console:action": "delete", "confirmed": "yes"}
        # what a browser sends when another site's page posts a form here (cross-site request forgery)
        forged = [
            {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
            {"Origin": "https://evil.example"},
            {"Sec-Fetch-Site": "same-site"},
        ]
        for headers in forged:
            r = http_client.post(worker.url + "/ui/connector", data=form, headers=headers, timeout=30)
            assert r.status_code == 403 and "not sent from this console" in r.text
        assert http_client.get(f"{worker.url}/connectors/{unique_name}", timeout=10).status_code == 200
        # the console's own page posts with its own origin
        own = http_client.post(
            worker.url + "/ui/connector",
            data=form,
            headers={"Origin": worker.url, "Sec-Fetch-Site": "same-origin"},
            timeout=30,
            follow_redirects=False,
        )
        assert own.status_code == 303
        assert http_client.get(f"{worker.url}/connectors/{unique_name}", timeout=10).status_code == 404
    finally:
        http_client.delete(f"{worker.url}/connectors/{unique_name}", timeout=30)
