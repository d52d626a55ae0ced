"""The search servers of the project's tooling: OpenSearch and Elasticsearch, real and local."""

from __future__ import annotations

import json
import re
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from sluice_devtools import jars
from sluice_devtools.processes import free_port, has_exited, process_info, read_state
from sluice_devtools.search_servers import ElasticsearchServer, OpenSearchServer

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("search")]

SERVERS = ["opensearch_server", "elasticsearch_server"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sluice_devtools.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _index(unique_name: str) -> str:
    """A valid index name (lowercase, no leading '-' or '_') from a test's unique name."""
    return re.sub(r"[^a-z0-9-]+", "-", unique_name.lower()).strip("-_")[-100:]


def _processes_naming(work_dir: Path) -> list[int]:
    """Live (not zombie) processes whose command line names ``work_dir``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            info = process_info(int(entry.name))
            if info is not None and not info[0].startswith("Z") and f"{work_dir}/" in info[1]:
                found.append(int(entry.name))
    return found


def _ndjson(*lines: dict[str, object]) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


# ----------------------------------------------------------------------------- both servers


@pytest.mark.parametrize("fixture", SERVERS)
def test_index_bulk_count_and_delete(fixture: str, request: pytest.FixtureRequest, unique_name: str) -> None:
    server: OpenSearchServer | ElasticsearchServer = request.getfixturevalue(fixture)
    expected_version = jars.OPENSEARCH_VERSION if fixture == "opensearch_server" else jars.ELASTICSEARCH_VERSION
    assert server.version() == expected_version
    assert server.distribution == fixture.removesuffix("_server")
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", server.url)
    index = _index(unique_name)

    status, created = server.request("PUT", f"/{index}/_doc/a", {"n": 1, "s": "first"})
    assert (status, created["result"]) == (201, "created"), created
    # what a sink sends: _bulk with the Kafka offset as external version; a replay of an
    # older offset is a version conflict, a new id is created
    status, bulk = server.request(
        "POST",
        "/_bulk",
        _ndjson(
            {"index": {"_index": index, "_id": "b", "version": 7, "version_type": "external"}},
            {"n": 2, "s": "second"},
            {"index": {"_index": index, "_id": "b", "version": 5, "version_type": "external"}},
            {"n": 3, "s": "older"},
            {"index": {"_index": index, "_id": "c"}},
            {"n": 4, "s": "third"},
        ),
    )
    assert status == 200 and bulk["errors"] is True, bulk
    items = [item["index"] for item in bulk["items"]]
    assert [item["status"] for item in items] == [201, 409, 201]
    assert items[1]["error"]["type"] == "version_conflict_engine_exception"

    server.refresh(index)
    assert server.count(index) == 3
    assert server.count(index, {"range": {"n": {"gte": 2}}}) == 2
    status, doc = server.request("GET", f"/{index}/_doc/b")
    assert (status, doc["_version"], doc["_source"]) == (200, 7, {"n": 2, "s": "second"})
    status, text = server.request("GET", f"/_cat/indices/{index}", params={"h": "index,docs.count"})
    assert status == 200 and text.split() == [index, "3"]

    assert server.delete_index(f"{index[:-4]}*") is True  # a pattern
    assert server.request("GET", f"/{index}/_count")[0] == 404
    assert server.delete_index(index) is False  # gone


def test_the_running_servers_are_recorded(opensearch_server: OpenSearchServer) -> None:
    status = opensearch_server.status()
    assert status.running and status.address("url") == opensearch_server.url
    # OpenSearch's script execs its JVM: one process, the one recorded (no other server pid)
    assert status.pid is not None and status.address("server_pid") is None
    info = process_info(status.pid)
    assert info is not None and "org.opensearch.bootstrap.OpenSearch" in info[1]
    state = read_state(opensearch_server.work_dir)
    assert state is not None and (state["pid"], state["url"]) == (status.pid, status.address("url"))


# ----------------------------------------------------------------------------- lifecycles


def test_opensearch_cli_start_status_stop_and_a_restart_keeps_the_data(search_work_dir: Path) -> None:
    work_dir = search_work_dir / "opensearch"
    port = free_port()  # not 9200, which `start` would take when free
    try:
        started = _cli("opensearch", "start", "--dir", str(work_dir), "--port", str(port))
        assert started.returncode == 0, started.stderr
        assert started.stdout.splitlines() == [
            f"http://127.0.0.1:{port}",
            f"version: opensearch {jars.OPENSEARCH_VERSION}",
        ]
        server = OpenSearchServer.from_state(work_dir)  # as another process sees it
        pid = server.pid
        assert pid is not None and server.url == f"http://127.0.0.1:{port}"

        again = _cli("opensearch", "start", "--dir", str(work_dir))  # adopts the running server
        assert again.returncode == 0 and again.stdout.splitlines()[0] == server.url, again.stderr
        assert OpenSearchServer.from_state(work_dir).pid == pid

        status, _ = server.request("PUT", "/kept/_doc/1", {"still": "here"}, params={"refresh": "true"})
        assert status == 201
        cli_status = _cli("opensearch", "status", "--dir", str(work_dir))
        assert cli_status.returncode == 0 and f"pid={pid} url={server.url}" in cli_status.stdout

        stopped = _cli("opensearch", "stop", "--dir", str(work_dir))
        assert (stopped.returncode, stopped.stdout.strip()) == (0, "stopped"), stopped.stderr
        assert has_exited(pid)
        assert _processes_naming(work_dir) == []
        cli_status = _cli("opensearch", "status", "--dir", str(work_dir))
        assert cli_status.returncode == 1 and cli_status.stdout.startswith("stopped")
        assert _cli("opensearch", "stop", "--dir", str(work_dir)).stdout.startswith("not running")

        restarted = OpenSearchServer(work_dir)
        assert restarted.start(timeout=180) == server.url  # the previous ports, still free
        assert restarted.pid not in (None, pid)
        assert restarted.count("kept") == 1  # the data directory is kept
    finally:
        OpenSearchServer(work_dir).stop()
    assert _processes_naming(work_dir) == []


def test_elasticsearch_stop_ends_the_cli_and_its_server_jvm(search_work_dir: Path) -> None:
    work_dir = search_work_dir / "elasticsearch"
    server = ElasticsearchServer(work_dir, heap="384m")
    try:
        url = server.start(timeout=180)
        status = server.status()
        # the launcher is Elasticsearch's CLI JVM; the server JVM is its child
        server_pid = status.address("server_pid")
        assert status.running and status.address("url") == url
        assert status.pid is not None and isinstance(server_pid, int) and server_pid != status.pid
        launcher, jvm = process_info(status.pid), process_info(server_pid)
        assert launcher is not None and "org.elasticsearch.launcher.CliToolLauncher" in launcher[1]
        assert jvm is not None and "org.elasticsearch.bootstrap.Elasticsearch" in jvm[1] and "-Xmx384m" in jvm[1]
        assert sorted(_processes_naming(work_dir)) == sorted([status.pid, server_pid])
        assert str(status) == f"running pid={status.pid} server_pid={server_pid} url={url} dir={work_dir}"

        other = ElasticsearchServer(work_dir)  # a second start adopts what state.json records
        assert other.start() == url
        assert (other.pid, other.server_pid) == (status.pid, server_pid)

        assert ElasticsearchServer.from_state(work_dir).stop() is True
        assert has_exited(status.pid) and has_exited(server_pid)
        assert _processes_naming(work_dir) == []
        assert not server.status().running
        state = read_state(work_dir)
        assert state is not None and (state["pid"], state["server_pid"], state["url"]) == (None, None, None)
        assert server.stop() is False  # idempotent
    finally:
        ElasticsearchServer(work_dir).stop()


# ----------------------------------------------------------------------------- the cache


def test_unpacked_zips_keep_their_unix_modes(tmp_path: Path) -> None:
    archive = tmp_path / "dist.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name, mode in (("d/bin/run", 0o755), ("d/config/secret.yml", 0o660), ("d/README", 0o644)):
            info = zipfile.ZipInfo(name)
            info.create_system = 3  # Unix
            info.external_attr = (stat.S_IFREG | mode) << 16
            zf.writestr(info, "x")
        zf.writestr("d/from-windows.txt", "x")  # no Unix mode: the default
    out = tmp_path / "out"
    out.mkdir()

    jars._unpack(archive, "zip", out)

    def mode_of(name: str) -> int:
        return stat.S_IMODE((out / name).stat().st_mode)

    assert (mode_of("d/bin/run"), mode_of("d/config/secret.yml"), mode_of("d/README")) == (0o755, 0o660, 0o644)
    assert (out / "d/from-windows.txt").read_text() == "x"
