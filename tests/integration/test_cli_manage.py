"""Acceptance: ``sluice connector …`` run as a subprocess against one real standalone
worker (real broker, real Spark): load, list, status, config, pause/resume/stop with
--wait, restart, offsets, validate, loggers, plugins, unload, and the error exits."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import wait_until
from tests.integration.workers import StandaloneWorker, free_port, write_properties

pytestmark = pytest.mark.integration

SEQUENCE = "sluice_test_plugins.SequenceSourceConnector"
# the first connector of a worker may wait for Spark to start
WAIT = ("--wait", "--timeout", "120")


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory):
    w = StandaloneWorker(tmp_path_factory.mktemp("cli"), kafka_bootstrap, "cli")
    w.start()
    yield w
    assert w.stop() == 0, w.log()


def cli(
    worker: StandaloneWorker | None,
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m sluice.cli.main connector [--url URL] ARGS`` with its output captured."""
    url = ["--url", worker.url] if worker is not None else []
    base_env = {k: v for k, v in os.environ.items() if k != "SLUICE_URL"}
    return subprocess.run(
        [sys.executable, "-m", "sluice.cli.main", "connector", *url, *args],
        capture_output=True,
        text=True,
        timeout=180,
        input=stdin,
        cwd=cwd or (worker.work_dir if worker is not None else None),
        env={**base_env, "NO_COLOR": "1", **(env or {})},
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"exit {result.returncode}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    return result.stdout


def cli_json(worker: StandaloneWorker, *args: str) -> Any:
    return json.loads(ok(cli(worker, *args, "--json")))


def rest_status(worker: StandaloneWorker, name: str) -> dict[str, Any]:
    r = worker.get(f"/connectors/{name}/status")
    assert r.status_code == 200, r.text
    return r.json()


def sequence_file(path: Path, name: str, **extra: str) -> Path:
    body = {"name": name, "config": {"connector.class": SEQUENCE, "topic": f"{name}-t", "count": "5", **extra}}
    path.write_text(json.dumps(body))
    return path


def test_load_predefined_file_source_and_sink_end_to_end(worker, unique_name):
    # The predefined configs name test.txt / test.sink.txt relative to the worker's working
    # directory (as Kafka's etc/ files do); the CLI runs in that same directory here.
    (worker.work_dir / "test.txt").write_text("hello\nworld\n")
    topic = f"{unique_name}-t"
    out = ok(cli(worker, "load", "file-source", "--set", f"topic={topic}", *WAIT))
    assert out.splitlines() == [
        "Created source connector file-source (1 task)",
        "file-source is RUNNING (connector RUNNING, tasks 1/1 RUNNING)",
    ]
    out = ok(cli(worker, "load", "file-sink", "--set", f"topics={topic}", *WAIT))
    assert out.splitlines()[0] == "Created sink connector file-sink (1 task)"
    sink = worker.work_dir / "test.sink.txt"
    wait_until(
        lambda: sink.exists() and sink.read_text().splitlines() == ["hello", "world"],
        timeout=90,
        message=lambda: f"lines in the sink file; status {rest_status(worker, 'file-sink')}",
    )

    assert cli_json(worker, "config", "file-source") == {
        "name": "file-source",
        "connector.class": "FileStreamSource",
        "tasks.max": "1",
        "file": "test.txt",
        "topic": topic,
    }
    table = ok(cli(worker, "list")).splitlines()
    assert table[0].split() == ["NAME", "TYPE", "STATE", "TASKS", "WORKER"]
    rows = {line.split()[0]: line.split() for line in table[1:]}
    assert rows["file-source"][1:5] == ["source", "RUNNING", "1", "RUNNING"]
    assert rows["file-sink"][1:5] == ["sink", "RUNNING", "1", "RUNNING"]
    assert {"file-source", "file-sink"} <= set(cli_json(worker, "list"))
    expanded = cli_json(worker, "list", "--expand", "status")
    assert expanded["file-sink"]["status"]["connector"]["state"] == "RUNNING"

    for name in ("file-source", "file-sink"):
        assert ok(cli(worker, "unload", name)) == f"Unloaded connector {name}\n"
    assert not {"file-source", "file-sink"} & set(cli_json(worker, "list"))
    assert worker.get("/connectors/file-source").status_code == 404


def test_load_from_properties_and_json_files_create_then_update(worker, unique_name, tmp_path):
    props = tmp_path / "conn.properties"
    write_properties(
        props, {"name": "named-in-file", "connector.class": SEQUENCE, "topic": f"{unique_name}-t", "count": "3"}
    )
    result = cli(worker, "load", unique_name, "-d", str(props), *WAIT)
    assert ok(result).splitlines()[0] == f"Created source connector {unique_name} (1 task)"
    assert "the file names the connector 'named-in-file'" in result.stderr
    assert rest_status(worker, unique_name)["tasks"][0]["state"] == "RUNNING"

    # JSON create request, loaded again under the same name: an update
    js = sequence_file(tmp_path / "conn.json", "whatever", count="4")
    info = cli_json(worker, "load", unique_name, "-d", str(js))
    assert info["name"] == unique_name and info["type"] == "source"
    assert info["config"]["count"] == "4" and info["config"]["name"] == unique_name
    assert ok(cli(worker, "load", unique_name, "-d", str(js), *WAIT)).splitlines() == [
        f"Updated source connector {unique_name} (1 task)",
        f"{unique_name} is RUNNING (connector RUNNING, tasks 1/1 RUNNING)",
    ]
    # a flat JSON map, read from standard input
    flat = json.dumps({"connector.class": SEQUENCE, "topic": f"{unique_name}-2", "count": 2})
    info = json.loads(ok(cli(worker, "load", f"{unique_name}-2", "-d", "-", "--json", stdin=flat)))
    assert info["config"] == {
        "connector.class": SEQUENCE,
        "topic": f"{unique_name}-2",
        "count": "2",
        "name": f"{unique_name}-2",
    }


def test_status_and_config_show_and_update(worker, unique_name, tmp_path):
    ok(cli(worker, "load", unique_name, "-d", str(sequence_file(tmp_path / "c.json", unique_name)), *WAIT))

    out = ok(cli(worker, "status", unique_name)).splitlines()
    assert out[0] == f"{unique_name} (source)"
    assert out[1].split() == ["STATE", "WORKER"]
    assert out[2].split()[:2] == ["connector", "RUNNING"]
    assert out[3].split()[:3] == ["task", "0", "RUNNING"]
    assert cli_json(worker, "status", unique_name) == rest_status(worker, unique_name)
    every = cli_json(worker, "status")
    assert every[unique_name]["status"]["connector"]["state"] == "RUNNING"
    assert unique_name in ok(cli(worker, "status"))

    shown = ok(cli(worker, "config", unique_name))
    assert shown.splitlines()[0].split() == ["name", "=", unique_name]
    # what `config` prints is a properties file `config -d` takes back
    saved = tmp_path / "saved.properties"
    saved.write_text(re.sub(r"^(count\s*=\s*)5$", r"\g<1>7", shown, flags=re.M))
    out = ok(cli(worker, "config", unique_name, "-d", str(saved)))
    assert out.startswith(f"Updated connector {unique_name}:")
    assert worker.get(f"/connectors/{unique_name}/config").json()["count"] == "7"

    ok(cli(worker, "config", unique_name, "--set", "prefix=p", "--unset", "count"))
    config = cli_json(worker, "config", unique_name)
    assert config["prefix"] == "p" and "count" not in config

    missing = cli(worker, "config", "no-such-connector", "-d", str(saved))
    assert missing.returncode == 1 and "Connector no-such-connector not found" in missing.stderr


def test_pause_resume_stop_with_wait_and_restart(worker, unique_name, tmp_path):
    ok(cli(worker, "load", unique_name, "-d", str(sequence_file(tmp_path / "c.json", unique_name)), *WAIT))

    assert (
        ok(cli(worker, "pause", unique_name, "--wait"))
        == f"{unique_name} is PAUSED (connector PAUSED, tasks 1/1 PAUSED)\n"
    )
    status = rest_status(worker, unique_name)
    assert status["connector"]["state"] == "PAUSED" and status["tasks"][0]["state"] == "PAUSED"

    assert ok(cli(worker, "resume", unique_name, "--wait")).startswith(f"{unique_name} is RUNNING")
    assert rest_status(worker, unique_name)["tasks"][0]["state"] == "RUNNING"

    assert ok(cli(worker, "restart", unique_name)) == f"Restarted connector {unique_name}\n"
    out = ok(cli(worker, "restart", unique_name, "--include-tasks", "--wait")).splitlines()
    assert out[0] == f"Restarting {unique_name}:"
    assert out[-1].startswith(f"{unique_name} is RUNNING")
    plan = cli_json(worker, "restart", unique_name, "--include-tasks", "--only-failed")
    assert plan["name"] == unique_name and plan["tasks"][0]["state"] == "RUNNING"  # nothing failed
    out = ok(cli(worker, "restart", unique_name, "--task", "0", "--wait")).splitlines()
    assert out == [f"Restarted task {unique_name}-0", f"{unique_name} is RUNNING (task 0 RUNNING)"]

    assert (
        ok(cli(worker, "stop", unique_name, "--wait"))
        == f"{unique_name} is STOPPED (connector STOPPED, tasks 0/0 STOPPED)\n"
    )
    status = rest_status(worker, unique_name)
    assert status["connector"]["state"] == "STOPPED" and status["tasks"] == []
    assert ok(cli(worker, "resume", unique_name, "--wait")).startswith(f"{unique_name} is RUNNING")


def test_wait_ends_with_the_trace_when_a_task_fails(worker, unique_name, tmp_path):
    marker = tmp_path / "fail-once"
    marker.write_text("fail the first poll")
    conf = sequence_file(tmp_path / "c.json", unique_name, **{"fail.marker": str(marker)})
    ok(cli(worker, "load", unique_name, "-d", str(conf)))
    wait_until(lambda: worker.task_state(unique_name) == "FAILED", timeout=90, message="task FAILED")

    # a paused connector keeps its failed task FAILED: the wait ends with exit 4 and the trace
    result = cli(worker, "pause", unique_name, "--wait")
    assert result.returncode == 4, result
    assert f"task {unique_name}-0 FAILED:" in result.stderr
    assert "Traceback (most recent call last)" in result.stderr and "poll failed on purpose" in result.stderr

    out = ok(cli(worker, "status", unique_name))
    assert f"Trace of task {unique_name}-0:" in out and "poll failed on purpose" in out
    summary = ok(cli(worker, "status"))  # every connector, with the last line of each trace
    assert f"task {unique_name}-0: RuntimeError: poll failed on purpose" in summary

    # the marker is gone: restarting the failed task brings it back, still paused
    out = ok(cli(worker, "restart", unique_name, "--include-tasks", "--only-failed", "--wait")).splitlines()
    assert out[-1] == f"{unique_name} is PAUSED (connector PAUSED, tasks 1/1 PAUSED)"
    assert ok(cli(worker, "resume", unique_name, "--wait")).startswith(f"{unique_name} is RUNNING")


def test_offsets_get_alter_reset_on_a_stopped_file_source(worker, unique_name, tmp_path):
    # Uses GET/PATCH/DELETE /connectors/{c}/offsets.
    source = tmp_path / "in.txt"
    source.write_text("a\nbb\nccc\n")
    config = {"connector.class": "FileStreamSource", "file": str(source), "topic": f"{unique_name}-t"}
    conf = tmp_path / "c.json"
    conf.write_text(json.dumps(config))
    ok(cli(worker, "load", unique_name, "-d", str(conf), *WAIT))

    def committed() -> list[dict[str, Any]]:
        return cli_json(worker, "offsets", "get", unique_name)["offsets"]

    partition = {"filename": str(source)}
    wait_until(
        lambda: committed() == [{"partition": partition, "offset": {"position": 9}}],
        timeout=90,
        message="the source offsets committed",
    )

    running = cli(worker, "offsets", "reset", unique_name)
    assert running.returncode == 1 and "STOPPED" in running.stderr

    ok(cli(worker, "stop", unique_name, "--wait"))
    table = ok(cli(worker, "offsets", "get", unique_name)).splitlines()
    assert table[0].split() == ["PARTITION", "OFFSET"]
    assert table[1].split() == [f"filename={source}", "position=9"]

    offsets = tmp_path / "offsets.json"
    offsets.write_text(json.dumps({"offsets": [{"partition": partition, "offset": {"position": 2}}]}))
    assert (
        ok(cli(worker, "offsets", "alter", unique_name, "-d", str(offsets)))
        == "The offsets for this connector have been altered successfully\n"
    )
    assert committed() == [{"partition": partition, "offset": {"position": 2}}]

    answer = cli_json(worker, "offsets", "reset", unique_name)
    assert "reset successfully" in answer["message"]
    assert committed() == []

    bad = tmp_path / "bad.json"
    bad.write_text('{"offsets": [{"partition": ')
    result = cli(worker, "offsets", "alter", unique_name, "-d", str(bad))
    assert result.returncode == 2 and "is not valid JSON" in result.stderr


def test_validate_prints_errors_and_exits_non_zero(worker, unique_name, tmp_path):
    bad = tmp_path / "bad.properties"
    write_properties(bad, {"connector.class": "FileStreamSource", "tasks.max": "0"})
    result = cli(worker, "validate", unique_name, "-d", str(bad))
    assert result.returncode == 1, result
    rows = result.stdout.splitlines()
    assert rows[0].split() == ["KEY", "VALUE", "ERROR"]
    assert any(r.startswith("tasks.max") and "Value must be at least 1" in r for r in rows), rows
    assert "error" in result.stderr

    raw = cli(worker, "validate", unique_name, "-d", str(bad), "--json")
    assert raw.returncode == 1
    assert json.loads(raw.stdout)["error_count"] >= 1

    good = tmp_path / "good.properties"
    write_properties(good, {"connector.class": "FileStreamSource", "topic": "t", "file": "/tmp/x"})
    assert ok(cli(worker, "validate", unique_name, "-d", str(good))).strip().endswith("is valid for FileStreamSource")
    every = ok(cli(worker, "validate", unique_name, "-d", str(good), "--all"))
    assert any(line.split()[:2] == ["topic", "t"] for line in every.splitlines())


def test_plugins(worker):
    rows = [line.split() for line in ok(cli(worker, "plugins")).splitlines()]
    assert rows[0] == ["CLASS", "TYPE", "VERSION"]
    classes = {r[0]: r[1] for r in rows[1:]}
    assert classes["org.apache.kafka.connect.file.FileStreamSourceConnector"] == "source"
    assert classes["org.apache.kafka.connect.file.FileStreamSinkConnector"] == "sink"
    everything = cli_json(worker, "plugins", "--all")
    assert {"converter", "source", "sink"} <= {p["type"] for p in everything}
    assert cli_json(worker, "plugins") == worker.get("/connector-plugins").json()


def test_plugin_config_definition(worker):
    # Uses GET /connector-plugins/{plugin}/config.
    keys = {k["name"]: k for k in cli_json(worker, "plugins", "FileStreamSource")}
    assert {"file", "topic", "batch.size"} <= set(keys)
    table = ok(cli(worker, "plugins", "FileStreamSource")).splitlines()
    assert table[0].split()[:4] == ["KEY", "TYPE", "DEFAULT", "IMPORTANCE"]
    assert any(line.split()[:2] == ["topic", "STRING"] for line in table)
    unknown = cli(worker, "plugins", "NoSuchPlugin")
    assert unknown.returncode == 1 and "NoSuchPlugin" in unknown.stderr


def test_loggers(worker, unique_name):
    # Uses GET/PUT /admin/loggers.
    loggers = cli_json(worker, "loggers")
    assert "root" in loggers and loggers["root"]["level"]
    assert ok(cli(worker, "loggers")).splitlines()[0].split() == ["LOGGER", "LEVEL", "LAST", "MODIFIED"]
    name = f"sluice.cli-test.{unique_name}"
    out = ok(cli(worker, "loggers", name, "--level", "DEBUG")).splitlines()
    assert out[0].startswith("Level DEBUG set on") and f"  {name}" in out
    level = cli_json(worker, "loggers", name)
    assert level["level"] == "DEBUG" and level["last_modified"] is not None
    assert ok(cli(worker, "loggers", name)).splitlines()[1].split()[:2] == [name, "DEBUG"]
    assert "every worker" in ok(cli(worker, "loggers", name, "--level", "INFO", "--scope", "cluster"))
    bad = cli(worker, "loggers", name, "--level", "NOISY")
    assert bad.returncode == 1 and "NOISY" in bad.stderr.upper()


def test_topics(worker, unique_name, tmp_path):
    # `topics --reset` uses PUT /connectors/{c}/topics/reset.
    ok(cli(worker, "load", unique_name, "-d", str(sequence_file(tmp_path / "c.json", unique_name)), *WAIT))
    wait_until(
        lambda: cli_json(worker, "topics", unique_name)[unique_name]["topics"] == [f"{unique_name}-t"],
        timeout=60,
        message="the active topic recorded",
    )
    assert ok(cli(worker, "topics", unique_name)) == f"{unique_name}-t\n"
    assert ok(cli(worker, "topics", unique_name, "--reset")) == f"Reset the active topics of {unique_name}\n"


def test_error_exits(worker, tmp_path):
    # the server's message, exit 1
    expected = worker.get("/connectors/no-such-connector/status").json()["message"]
    result = cli(worker, "status", "no-such-connector")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == f"sluice connector: error: {expected} (HTTP 404)\n"
    for args in (("pause", "no-such-connector"), ("unload", "no-such-connector"), ("restart", "no-such-connector")):
        result = cli(worker, *args)
        assert result.returncode == 1 and "no-such-connector" in result.stderr, (args, result)

    # a config the worker rejects: its message, exit 1
    no_class = tmp_path / "no-class.properties"
    write_properties(no_class, {"topic": "t"})
    result = cli(worker, "load", "rejected", "-d", str(no_class))
    assert result.returncode == 1 and "contains no connector type" in result.stderr

    # the worker cannot be reached: exit 3, naming the URL
    url = f"http://127.0.0.1:{free_port()}"
    result = cli(None, "--url", url, "list")
    assert result.returncode == 3
    assert f"cannot connect to the Connect worker at {url}" in result.stderr

    # bad files and arguments: exit 2
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x", "config": {')
    result = cli(worker, "load", "x", "-d", str(broken))
    assert result.returncode == 2 and f"{broken} is not valid JSON" in result.stderr
    result = cli(worker, "load", "x", "-d", str(tmp_path / "missing.properties"))
    assert result.returncode == 2 and "cannot read" in result.stderr
    result = cli(worker, "load", "not-predefined")
    assert result.returncode == 2 and "is not a predefined connector" in result.stderr
    result = cli(worker, "pause")
    assert result.returncode == 2 and "usage:" in result.stderr


def test_url_from_the_environment_and_predefined_list(worker):
    result = cli(None, "list", "--json", env={"SLUICE_URL": worker.url})
    assert isinstance(json.loads(ok(result)), list)
    rows = [line.split() for line in ok(cli(worker, "list", "--predefined")).splitlines()]
    assert rows[0] == ["NAME", "CONNECTOR", "CLASS", "FILE"]
    assert {r[0]: r[1] for r in rows[1:]} == {
        "file-sink": "FileStreamSink",
        "file-source": "FileStreamSource",
        "jdbc-sink": "io.confluent.connect.jdbc.JdbcSinkConnector",
        "jdbc-source": "io.confluent.connect.jdbc.JdbcSourceConnector",
        "hdfs-sink": "io.confluent.connect.hdfs.HdfsSinkConnector",
        "s3-sink": "io.confluent.connect.s3.S3SinkConnector",
        "elasticsearch-sink": "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector",
        "replicator": "io.confluent.connect.replicator.ReplicatorSourceConnector",
    }
