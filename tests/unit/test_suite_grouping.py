"""``./dev test`` hands the suite to two pytest-xdist workers by group (``--dist
loadgroup``; tests/conftest.py gives every file a group of its own unless it names one): a
file's module fixtures and a group's servers start on one worker only. xdist groups an item
by adding ``@<group>`` to its nodeid on the worker; when it cannot (pytest-xdist 3.8 under
pytest 9.2), every test is handed out on its own and nothing says so, but the suite takes
far longer. The first test says so; the second checks how a group's servers are kept. The
last two keep the suite's HTTP calls off ``httpx2.get`` and its kin, which build an SSL
context per call (tests/http_client.py says why)."""

from __future__ import annotations

import contextlib
import http.server
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import http_client
from tests.integration.group_servers import GroupServers

REPO = Path(__file__).resolve().parents[2]


def test_this_file_is_one_group_when_the_suite_runs_grouped(request: pytest.FixtureRequest) -> None:
    # on a worker, xdist sets the option ``loadgroup`` (its ``dist`` reads "no" there)
    if not os.environ.get("PYTEST_XDIST_WORKER") or not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run on pytest-xdist workers with --dist loadgroup (./dev test does)")
    assert request.node.nodeid.endswith("@tests/unit/test_suite_grouping.py"), request.node.nodeid


def test_group_servers_start_once_stop_together_and_start_again_when_asked() -> None:
    events: list[str] = []

    @contextlib.contextmanager
    def server(name: str, fail_stop: bool = False) -> Iterator[str]:
        events.append(f"start {name}")
        try:
            yield name
        finally:
            events.append(f"stop {name}")
            if fail_stop:
                raise RuntimeError(f"{name} did not stop")

    servers = GroupServers()
    assert servers.get("a", lambda: server("a")) == "a"
    assert servers.get("a", lambda: server("a")) == "a"  # running: not started twice
    servers.get("b", lambda: server("b", fail_stop=True))
    with pytest.raises(RuntimeError, match="b did not stop"):
        servers.stop_all()  # b's failure is raised once a is stopped too
    assert events == ["start a", "start b", "stop b", "stop a"]
    assert servers.running() == []
    servers.get("a", lambda: server("a"))  # a later group asks again: a new one
    servers.stop_all()
    assert events[-2:] == ["start a", "stop a"]


def test_the_suite_and_the_benchmarks_make_http_calls_through_the_shared_client() -> None:
    per_call_client = re.compile(r"\bhttpx2\.(get|put|post|patch|delete|options|head|request|stream)\(")
    found = [
        f"{path.relative_to(REPO)}:{number}"
        for directory in ("tests", "bench", "devtools")
        for path in sorted((REPO / directory).rglob("*.py"))
        if path != REPO / "tests" / "http_client.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if per_call_client.search(line)
    ]
    assert found == [], "use tests.http_client (a shared client) instead of httpx2's per-call functions"


def test_each_shared_client_call_has_its_own_connection_and_keeps_no_cookie() -> None:
    seen: list[tuple[int, str | None]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keeps a connection open unless the client closes it

        def do_GET(self) -> None:
            seen.append((self.client_address[1], self.headers.get("Cookie")))
            self.send_response(200)
            self.send_header("Set-Cookie", "session=1; Path=/")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        assert http_client.get(url, timeout=10).status_code == 200
        assert http_client.get(url, timeout=10).status_code == 200
        assert http_client.get(url, timeout=10, headers={"Cookie": "mine=2"}).status_code == 200
    finally:
        server.shutdown()
        server.server_close()
    ports = [port for port, _ in seen]
    assert len(set(ports)) == 3, "each call opens a connection of its own"
    assert [cookie for _, cookie in seen] == [None, None, "mine=2"]
