"""Unit tests of ``sluice connector``: file parsing, rendering, the wait logic, and the
commands against a mocked HTTP transport (no worker, no network)."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest

from sluice.cli import manage
from sluice.cli.manage import (
    ConnectClient,
    UsageError,
    check_state,
    format_properties,
    parse_assignments,
    parse_config_bytes,
    parse_offsets_bytes,
    render_table,
    task_summary,
    wait_for_state,
    waiting,
)
from sluice.cli.manage.rendering import compact

# --------------------------------------------------------------------------- layering


def test_manage_talks_http_only_and_imports_nothing_of_the_runtime() -> None:
    imported = set()
    for module in Path(manage.__file__).parent.glob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
    # its own modules import each other; nothing else of Sluice
    outside = {m for m in imported if m.split(".")[0] == "sluice" and not m.startswith("sluice.cli.manage.")}
    assert not outside, imported


# --------------------------------------------------------------------------- tables


def test_render_table_aligns_columns_without_trailing_blanks() -> None:
    text = render_table(["NAME", "STATE", "TASKS"], [["a-long-name", "RUNNING", "1 RUNNING"], ["b", "FAILED", None]])
    assert text.splitlines() == [
        "NAME         STATE    TASKS",
        "a-long-name  RUNNING  1 RUNNING",
        "b            FAILED",
    ]


def test_render_table_styles_padded_cells_only_in_rows() -> None:
    text = render_table(["S", "X"], [["RUNNING", "y"]], style=lambda c: f"<{c}>")
    assert text.splitlines() == ["S        X", "<RUNNING>  <y>"]


def test_render_table_shows_only_the_first_line_of_a_cell() -> None:
    assert render_table(["A", "B"], [["x\ny", "z"]]).splitlines()[1] == "x  z"


def test_state_style_colours_states_only() -> None:
    style = manage.state_style(True)
    assert style is not None
    assert style("FAILED ") == "\x1b[31mFAILED \x1b[0m"
    assert style("other") == "other"
    assert manage.state_style(False) is None


def test_task_summary_counts_states_in_order() -> None:
    assert task_summary([]) == "-"
    tasks = [{"state": "RUNNING"}, {"state": "FAILED"}, {"state": "RUNNING"}]
    assert task_summary(tasks) == "2 RUNNING, 1 FAILED"


def test_compact_offsets() -> None:
    assert compact({"filename": "/tmp/in"}) == "filename=/tmp/in"
    assert compact({"kafka_topic": "t", "kafka_partition": 0}) == "kafka_topic=t, kafka_partition=0"
    assert compact({"a": None, "b": True}) == "a=null, b=true"


def test_connectors_table_from_expanded_status() -> None:
    expanded = {
        "src": {
            "status": {
                "name": "src",
                "type": "source",
                "connector": {"state": "RUNNING", "worker_id": "w:1"},
                "tasks": [{"id": 0, "state": "RUNNING", "worker_id": "w:1"}],
            }
        },
        "a-sink": {
            "status": {
                "name": "a-sink",
                "type": "sink",
                "connector": {"state": "STOPPED", "worker_id": "w:1"},
                "tasks": [],
            }
        },
    }
    assert manage.connectors_table(expanded).splitlines() == [
        "NAME    TYPE    STATE    TASKS      WORKER",
        "a-sink  sink    STOPPED  -          w:1",
        "src     source  RUNNING  1 RUNNING  w:1",
    ]


# --------------------------------------------------------------------------- properties output


def test_format_properties_puts_name_first_and_aligns() -> None:
    text = format_properties({"tasks.max": "1", "name": "n", "connector.class": "FileStreamSource"})
    assert text.splitlines() == [
        "name            = n",
        "connector.class = FileStreamSource",
        "tasks.max       = 1",
    ]


def test_format_properties_round_trips_through_the_file_parser() -> None:
    config = {
        "name": "odd",
        "a key=with:specials": " leading space, trailing space ",
        "multi": "line1\nline2\ttab",
        "back": "C:\\path\\x",
        "hash": "#not a comment",
        "unicode": "café ✓",
        "empty": "",
        "one-blank": " ",
        "two-blanks": "  ",
        "backslash-blank": "\\ ",
    }
    parsed = parse_config_bytes(format_properties(config).encode("utf-8"), "out")
    assert parsed.config == config


# --------------------------------------------------------------------------- config files


def test_parse_properties() -> None:
    parsed = parse_config_bytes(b"# comment\nname=local-file-source\nconnector.class=FileStreamSource\ntasks.max = 1\n")
    assert parsed.config == {"name": "local-file-source", "connector.class": "FileStreamSource", "tasks.max": "1"}
    assert parsed.name == "local-file-source" and parsed.initial_state is None


def test_parse_latin1_properties() -> None:
    assert parse_config_bytes("k=caf\xe9".encode("latin-1")).config == {"k": "café"}


def test_parse_flat_json_coerces_scalars_like_connect() -> None:
    parsed = parse_config_bytes(b'{"name": "x", "tasks.max": 2, "flag": false, "ratio": 0.5, "gone": null}')
    assert parsed.config == {"name": "x", "tasks.max": "2", "flag": "false", "ratio": "0.5", "gone": None}
    assert parsed.name == "x"


def test_parse_create_request_json() -> None:
    parsed = parse_config_bytes(
        b'{"name": " n ", "config": {"connector.class": "FileStreamSink"}, "initial_state": "paused"}'
    )
    assert parsed.name == "n"
    assert parsed.config == {"connector.class": "FileStreamSink"}
    assert parsed.initial_state == "PAUSED"


def test_a_saved_connector_info_loads_back() -> None:
    info = {
        "name": "c",
        "config": {"name": "c", "topic": "t"},
        "tasks": [{"connector": "c", "task": 0}],
        "type": "source",
    }
    parsed = parse_config_bytes(json.dumps(info).encode())
    assert parsed.name == "c" and parsed.config == {"name": "c", "topic": "t"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"name": "x", ', "is not valid JSON"),
        (b"[1, 2]", "expected a JSON object"),
        (b'{"k": {"nested": 1}}', "the value of 'k' must be a string"),
        (b'{"name": "n", "config": {}, "extra": 1}', "unknown top-level field(s) extra"),
        (b'{"name": "n", "config": {"a": "b"}, "initial_state": "GONE"}', "initial_state must be"),
        (b"# only a comment\n", "holds no configuration"),
        (b"", "holds no configuration"),
        (b"k=\\uZZZZ", "not a valid properties file"),
    ],
)
def test_bad_config_files_are_usage_errors(data: bytes, message: str) -> None:
    with pytest.raises(UsageError, match=None) as info:
        parse_config_bytes(data, "conn.json")
    assert message in info.value.message
    assert info.value.exit_code == 2


def test_parse_offsets() -> None:
    body = {"offsets": [{"partition": {"filename": "/in"}, "offset": {"position": 3}}]}
    assert parse_offsets_bytes(json.dumps(body).encode()) == body
    assert parse_offsets_bytes(json.dumps(body["offsets"]).encode()) == body
    with pytest.raises(UsageError, match=None):
        parse_offsets_bytes(b'{"partition": {}}')
    with pytest.raises(UsageError, match=None):
        parse_offsets_bytes(b"{")


def test_parse_assignments() -> None:
    assert parse_assignments(["a=1", "b=x=y", "c="]) == {"a": "1", "b": "x=y", "c": ""}
    with pytest.raises(UsageError, match="KEY=VALUE"):
        parse_assignments(["novalue"])


def test_load_predefined_sets_the_name_and_applies_overrides() -> None:
    loaded = manage.load_connector_config("file-source", None, {"topic": "t1"})
    assert loaded.config["name"] == "file-source"
    assert loaded.config["connector.class"] == "FileStreamSource"
    assert loaded.config["topic"] == "t1"
    assert loaded.renamed_from is None  # a predefined file's own name is not worth a note


def test_load_file_overrides_the_name(tmp_path: Path) -> None:
    f = tmp_path / "c.properties"
    f.write_text("name=from-file\nconnector.class=FileStreamSink\n")
    loaded = manage.load_connector_config("mine", str(f))
    assert loaded.config["name"] == "mine" and loaded.renamed_from == "from-file"


def test_load_unknown_predefined_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a predefined connector"):
        manage.load_connector_config("nope", None)
    with pytest.raises(UsageError, match="cannot read"):
        manage.load_connector_config("x", str(tmp_path / "missing.properties"))


def test_predefined_files_exist_in_the_project_etc_folder() -> None:
    for name in manage.PREDEFINED:
        assert manage.predefined_file(name).is_file()


def test_sluice_home_moves_the_etc_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "connect-file-sink.properties").write_text("connector.class=Other\n")
    monkeypatch.setenv("SLUICE_HOME", str(tmp_path))
    assert manage.load_connector_config("file-sink", None).config == {"connector.class": "Other", "name": "file-sink"}


def test_normalize_url() -> None:
    assert manage.normalize_url("localhost:8083/") == "http://localhost:8083"
    assert manage.normalize_url("https://h/connect/") == "https://h/connect"


# --------------------------------------------------------------------------- waiting


def _status(connector: str, *tasks: str, name: str = "c", trace: dict[int, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "connector": {"state": connector, "worker_id": "w"},
        "type": "source",
        "tasks": [{"id": i, "state": s, "worker_id": "w"} for i, s in enumerate(tasks)],
    }
    for i, t in (trace or {}).items():
        out["tasks"][i]["trace"] = t
    return out


def test_check_state_running_needs_every_expected_task() -> None:
    assert not check_state(_status("RUNNING"), "RUNNING", expected_tasks=[0]).done
    assert not check_state(_status("RUNNING", "UNASSIGNED"), "RUNNING", expected_tasks=[0]).done
    progress = check_state(_status("RUNNING", "RUNNING"), "RUNNING", expected_tasks=[0])
    assert progress.done and progress.summary == "connector RUNNING, tasks 1/1 RUNNING"


def test_check_state_paused_and_stopped() -> None:
    assert check_state(_status("PAUSED", "PAUSED", "PAUSED"), "PAUSED", [0, 1]).done
    assert not check_state(_status("PAUSED", "PAUSED", "RUNNING"), "PAUSED", [0, 1]).done
    assert not check_state(_status("STOPPED", "RUNNING"), "STOPPED").done
    assert check_state(_status("STOPPED"), "STOPPED").done


def test_check_state_reports_failures_with_traces() -> None:
    progress = check_state(_status("RUNNING", "FAILED", trace={0: "Traceback\nValueError: boom"}), "RUNNING", [0])
    assert not progress.done
    assert progress.failed == [("task c-0", "Traceback\nValueError: boom")]
    ignored = check_state(
        _status("RUNNING", "FAILED", trace={0: "x"}),
        "RUNNING",
        [0],
        ignore_failed=lambda what, trace: what == "task c-0",
    )
    assert ignored.failed == []


def test_check_state_only_task() -> None:
    status = _status("RUNNING", "FAILED", "RUNNING")
    assert check_state(status, "RUNNING", only_task=1).done
    assert check_state(status, "RUNNING", only_task=1).failed == []
    assert check_state(status, "RUNNING", only_task=0).failed


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _mock(handler: Callable[[httpx2.Request], httpx2.Response]) -> httpx2.MockTransport:
    return httpx2.MockTransport(handler)


def _info(name: str = "c", tasks: int = 1) -> dict[str, Any]:
    return {
        "name": name,
        "config": {},
        "tasks": [{"connector": name, "task": i} for i in range(tasks)],
        "type": "source",
    }


def test_wait_for_state_polls_until_reached() -> None:
    answers = iter([_status("RUNNING"), _status("RUNNING", "UNASSIGNED"), _status("RUNNING", "RUNNING")])

    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.url.path.endswith("/status"):
            return httpx2.Response(200, json=next(answers))
        return httpx2.Response(200, json=_info())

    clock = FakeClock()
    with ConnectClient("http://w", transport=_mock(handler)) as client:
        result = wait_for_state(client, "c", "RUNNING", 10, clock=clock, sleep=clock.sleep)
    assert result.exit_code == manage.EXIT_OK
    assert 0 < clock.now < 1


def test_wait_for_state_404_means_not_yet_and_timeout_is_exit_5() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(404, json={"error_code": 404, "message": "No status found for connector c"})

    clock = FakeClock()
    with ConnectClient("http://w", transport=_mock(handler)) as client:
        result = wait_for_state(client, "c", "RUNNING", 3, clock=clock, sleep=clock.sleep)
    assert result.exit_code == manage.EXIT_TIMEOUT
    assert "timed out after 3 s waiting for c to be RUNNING (no status yet)" in result.message
    assert 3 <= clock.now < 3.6


def test_wait_for_state_ends_on_failure_with_the_trace() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.url.path.endswith("/status"):
            return httpx2.Response(200, json=_status("RUNNING", "FAILED", trace={0: "Traceback\nValueError: boom"}))
        return httpx2.Response(200, json=_info())

    clock = FakeClock()
    with ConnectClient("http://w", transport=_mock(handler)) as client:
        result = wait_for_state(client, "c", "RUNNING", 30, clock=clock, sleep=clock.sleep)
    assert result.exit_code == manage.EXIT_FAILED
    assert result.message == "task c-0 FAILED:\n    Traceback\n    ValueError: boom"
    assert clock.now == 0


def test_wait_for_state_gives_an_old_failure_a_grace_period() -> None:
    old = _status("RUNNING", "FAILED", trace={0: "old"})
    answers = iter([old, old, _status("RUNNING", "RUNNING")])

    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.url.path.endswith("/status"):
            return httpx2.Response(200, json=next(answers))
        return httpx2.Response(200, json=_info())

    clock = FakeClock()
    with ConnectClient("http://w", transport=_mock(handler)) as client:
        result = wait_for_state(
            client, "c", "RUNNING", 30, stale_failures={"task c-0": "old"}, clock=clock, sleep=clock.sleep
        )
    assert result.exit_code == manage.EXIT_OK

    clock = FakeClock()
    with ConnectClient(
        "http://w",
        transport=_mock(lambda r: httpx2.Response(200, json=old if r.url.path.endswith("/status") else _info())),
    ) as client:
        result = wait_for_state(
            client, "c", "RUNNING", 30, stale_failures={"task c-0": "old"}, clock=clock, sleep=clock.sleep
        )
    assert result.exit_code == manage.EXIT_FAILED
    assert manage.STALE_FAILURE_GRACE <= clock.now < manage.STALE_FAILURE_GRACE + 1


# --------------------------------------------------------------------------- commands (mocked worker)


class Worker:
    """Records requests and answers them from a route table."""

    def __init__(self, routes: dict[tuple[str, str], Any]) -> None:
        self.routes = routes
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        key = (request.method, request.url.raw_path.decode().split("?")[0])
        answer = self.routes.get(key)
        if answer is None:
            return httpx2.Response(404, json={"error_code": 404, "message": f"HTTP 404 Not Found {key}"})
        if callable(answer):
            answer = answer(request)
        if isinstance(answer, httpx2.Response):
            return answer
        status, body = answer
        return httpx2.Response(status) if body is None else httpx2.Response(status, json=body)


def run(worker: Worker | Callable[[httpx2.Request], httpx2.Response], *argv: str) -> int:
    return manage.run(list(argv), transport=_mock(worker))


def test_server_error_message_goes_to_stderr_with_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    body = {"error_code": 404, "message": "No status found for connector nope"}
    worker = Worker({("GET", "/connectors/nope/status"): (404, body)})
    assert run(worker, "status", "nope") == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "sluice connector: error: No status found for connector nope (HTTP 404)\n"


def test_error_without_a_connect_body(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(lambda r: httpx2.Response(502, text="bad gateway"), "list") == 1
    assert "bad gateway (HTTP 502)" in capsys.readouterr().err


def test_a_non_json_success_body_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(lambda r: httpx2.Response(200, text="<html>"), "list", "--json") == 1
    assert "not JSON" in capsys.readouterr().err


def test_unreachable_worker_is_exit_3_naming_the_url(capsys: pytest.CaptureFixture[str]) -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("Connection refused", request=request)

    assert manage.run(["--url", "http://10.0.0.9:8083", "list"], transport=_mock(refuse)) == 3
    assert "cannot connect to the Connect worker at http://10.0.0.9:8083: Connection refused" in capsys.readouterr().err


def test_url_from_option_before_or_after_the_command_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        return httpx2.Response(200, json=[])

    run(handler, "--url", "h1:1", "list", "--json")
    run(handler, "list", "--json", "--url", "http://h2:2/")
    monkeypatch.setenv("SLUICE_URL", "http://h3:3")
    run(handler, "list", "--json")
    monkeypatch.delenv("SLUICE_URL")
    run(handler, "list", "--json")
    assert seen == [
        "http://h1:1/connectors",
        "http://h2:2/connectors",
        "http://h3:3/connectors",
        "http://localhost:8083/connectors",
    ]


def test_json_before_the_command_is_kept(capsys: pytest.CaptureFixture[str]) -> None:
    worker = Worker({("GET", "/connectors"): (200, ["b", "a"])})
    assert run(worker, "--json", "list") == 0
    assert json.loads(capsys.readouterr().out) == ["b", "a"]


def test_list_table_uses_expand_status(capsys: pytest.CaptureFixture[str]) -> None:
    expanded = {"c": {"status": _status("RUNNING", "RUNNING")}}
    worker = Worker({("GET", "/connectors"): (200, expanded)})
    assert run(worker, "list") == 0
    assert worker.requests[0].url.query == b"expand=status"
    assert capsys.readouterr().out.splitlines() == [
        "NAME  TYPE    STATE    TASKS      WORKER",
        "c     source  RUNNING  1 RUNNING  w",
    ]


def test_load_puts_the_config_under_the_given_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "c.json"
    f.write_text('{"name": "other", "config": {"connector.class": "FileStreamSink", "topics": "t", "tasks.max": 1}}')
    worker = Worker({("PUT", "/connectors/my%20sink/config"): (201, _info("my sink", 1) | {"type": "sink"})})
    assert run(worker, "load", "my sink", "-d", str(f), "--set", "file=/tmp/out") == 0
    body = json.loads(worker.requests[0].content)
    assert body == {
        "connector.class": "FileStreamSink",
        "topics": "t",
        "tasks.max": "1",
        "file": "/tmp/out",
        "name": "my sink",
    }
    out, err = capsys.readouterr()
    assert out == "Created sink connector my sink (1 task)\n"
    assert "the file names the connector 'other'" in err


def test_load_with_initial_state_creates_with_post_and_falls_back_to_put(tmp_path: Path) -> None:
    f = tmp_path / "c.json"
    f.write_text('{"name": "c", "config": {"connector.class": "X"}, "initial_state": "STOPPED"}')
    worker = Worker(
        {
            ("POST", "/connectors"): (409, {"error_code": 409, "message": "Connector c already exists"}),
            ("PUT", "/connectors/c/config"): (200, _info()),
        }
    )
    assert run(worker, "load", "c", "-d", str(f)) == 0
    assert json.loads(worker.requests[0].content)["initial_state"] == "STOPPED"
    assert [r.method for r in worker.requests] == ["POST", "PUT"]


def test_load_wait_reports_a_failed_task(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waiting.time, "sleep", lambda s: None)
    statuses = iter(
        [
            (404, {"error_code": 404, "message": "No status"}),
            (200, _status("RUNNING", "FAILED", name="file-source", trace={0: "Traceback\nOSError: nope"})),
        ]
    )
    worker = Worker(
        {
            ("PUT", "/connectors/file-source/config"): (201, _info("file-source")),
            ("GET", "/connectors/file-source/status"): lambda r: next(statuses),
            ("GET", "/connectors/file-source"): (200, _info("file-source")),
        }
    )
    assert run(worker, "load", "file-source", "--wait") == manage.EXIT_FAILED
    out, err = capsys.readouterr()
    assert out.startswith("Created source connector file-source")
    assert "task file-source-0 FAILED:\n    Traceback\n    OSError: nope" in err


def test_pause_wait_prints_the_reached_state(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(waiting.time, "sleep", lambda s: None)
    statuses = iter([_status("RUNNING", "RUNNING"), _status("PAUSED", "PAUSED")])
    worker = Worker(
        {
            ("PUT", "/connectors/c/pause"): (202, None),
            ("GET", "/connectors/c/status"): lambda r: (200, next(statuses)),
            ("GET", "/connectors/c"): (200, _info()),
        }
    )
    assert run(worker, "pause", "c", "--wait") == 0
    assert capsys.readouterr().out == "c is PAUSED (connector PAUSED, tasks 1/1 PAUSED)\n"


def test_restart_sends_connect_query_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    plan = _status("RESTARTING", "RESTARTING")
    worker = Worker(
        {("POST", "/connectors/c/restart"): (202, plan), ("POST", "/connectors/c/tasks/3/restart"): (204, None)}
    )
    assert run(worker, "restart", "c", "--include-tasks", "--only-failed") == 0
    assert dict(worker.requests[0].url.params) == {"includeTasks": "true", "onlyFailed": "true"}
    assert "task 0     RESTARTING" in capsys.readouterr().out
    assert run(worker, "restart", "c", "--task", "3") == 0
    assert worker.requests[1].url.path == "/connectors/c/tasks/3/restart"
    assert run(worker, "restart", "c", "--task", "3", "--include-tasks") == 2


def test_config_show_update_patch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = {"name": "c", "connector.class": "FileStreamSource", "topic": "t"}
    worker = Worker(
        {
            ("GET", "/connectors/c/config"): (200, config),
            ("GET", "/connectors/c"): (200, _info() | {"config": config}),
            ("PUT", "/connectors/c/config"): (200, _info() | {"config": config}),
            ("PATCH", "/connectors/c/config"): (200, _info() | {"config": config}),
        }
    )
    assert run(worker, "config", "c") == 0
    assert capsys.readouterr().out.splitlines()[0] == "name            = c"
    f = tmp_path / "c.properties"
    f.write_text("connector.class=FileStreamSource\ntopic=t2\n")
    assert run(worker, "config", "c", "-d", str(f)) == 0
    sent = json.loads(worker.requests[-1].content)
    assert sent == {"connector.class": "FileStreamSource", "topic": "t2", "name": "c"}
    assert run(worker, "config", "c", "--set", "tasks.max=2", "--unset", "topic") == 0
    assert worker.requests[-1].method == "PATCH"
    assert json.loads(worker.requests[-1].content) == {"tasks.max": "2", "topic": None}


def test_validate_prints_errors_per_key_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def item(key: str, value: str | None, *errors: str, defined: bool = True) -> dict[str, Any]:
        return {
            "definition": {"name": key} if defined else None,
            "value": {"name": key, "value": value, "errors": list(errors), "recommended_values": [], "visible": True},
        }

    result = {
        "name": "FileStreamSource",
        "error_count": 2,
        "groups": ["Common"],
        "configs": [
            item("name", "c"),
            item("tasks.max", "0", "Invalid value 0 for configuration tasks.max: Value must be at least 1"),
            item("topic", None, 'Missing required configuration "topic" which has no default value.', defined=False),
        ],
    }
    worker = Worker({("PUT", "/connector-plugins/FileStreamSource/config/validate"): (200, result)})
    f = tmp_path / "c.properties"
    f.write_text("connector.class=FileStreamSource\ntasks.max=0\n")
    assert run(worker, "validate", "c", "-d", str(f)) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "KEY        VALUE  ERROR",
        "tasks.max  0      Invalid value 0 for configuration tasks.max: Value must be at least 1",
        'topic      null   Missing required configuration "topic" which has no default value.',
    ]
    assert "the configuration has 2 errors" in err
    assert json.loads(worker.requests[0].content)["name"] == "c"
    assert run(worker, "validate", "--json", "-d", str(f)) == 1
    assert json.loads(capsys.readouterr().out) == result
    f.write_text("tasks.max=1\n")
    assert run(worker, "validate", "-d", str(f)) == 2
    assert "no connector.class" in capsys.readouterr().err


def test_offsets_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    offsets = {"offsets": [{"partition": {"filename": "/in"}, "offset": {"position": 12}}]}
    message = {"message": "The offsets for this connector have been altered successfully"}
    worker = Worker(
        {
            ("GET", "/connectors/c/offsets"): (200, offsets),
            ("PATCH", "/connectors/c/offsets"): (200, message),
            ("DELETE", "/connectors/c/offsets"): (200, {"message": "reset"}),
        }
    )
    assert run(worker, "offsets", "get", "c") == 0
    assert capsys.readouterr().out.splitlines() == ["PARTITION     OFFSET", "filename=/in  position=12"]
    f = tmp_path / "o.json"
    f.write_text(json.dumps(offsets["offsets"]))
    assert run(worker, "offsets", "alter", "c", "-d", str(f)) == 0
    assert json.loads(worker.requests[-1].content) == offsets
    assert capsys.readouterr().out == message["message"] + "\n"
    assert run(worker, "offsets", "reset", "c", "--json") == 0
    assert json.loads(capsys.readouterr().out) == {"message": "reset"}
    assert run(worker, "offsets", "alter", "c") == 2


def test_loggers_commands(capsys: pytest.CaptureFixture[str]) -> None:
    worker = Worker(
        {
            ("GET", "/admin/loggers"): (200, {"root": {"level": "INFO", "last_modified": None}}),
            ("PUT", "/admin/loggers/sluice"): lambda r: (
                (200, ["sluice", "sluice.rest"]) if r.url.params["scope"] == "worker" else (204, None)
            ),
        }
    )
    assert run(worker, "loggers") == 0
    assert capsys.readouterr().out.splitlines() == ["LOGGER  LEVEL  LAST MODIFIED", "root    INFO   -"]
    assert run(worker, "loggers", "sluice", "--level", "debug") == 0
    assert json.loads(worker.requests[-1].content) == {"level": "debug"}
    assert capsys.readouterr().out.splitlines() == ["Level DEBUG set on 2 loggers:", "  sluice", "  sluice.rest"]
    assert run(worker, "loggers", "sluice", "--level", "WARN", "--scope", "cluster") == 0
    assert "every worker" in capsys.readouterr().out
    assert run(worker, "loggers", "--level", "WARN") == 2
    assert run(worker, "loggers", "x", "--scope", "cluster") == 2


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        manage.run(["frobnicate"])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        manage.run(["pause"])
    assert info.value.code == 2


def test_main_entry_point_of_the_sluice_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from sluice.cli import main as sluice_main

    calls: list[tuple[list[str], str | None]] = []
    monkeypatch.setattr(manage, "main", lambda argv, prog=None: calls.append((list(argv), prog)) or 7)
    assert sluice_main.main(["connector", "list", "--json"]) == 7
    assert calls == [(["list", "--json"], "sluice connector")]


class Tty:
    """A stream that says it is a terminal."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


def test_spinner_draws_on_a_terminal_only() -> None:
    tty = Tty()
    spinner = manage.Spinner(tty)  # type: ignore[arg-type]
    spinner.update("waiting")
    spinner.update("waiting")
    spinner.clear()
    assert tty.text == "\r\x1b[K⠋ waiting\r\x1b[K⠙ waiting\r\x1b[K"

    class Pipe(Tty):
        def isatty(self) -> bool:
            return False

    pipe = Pipe()
    quiet = manage.Spinner(pipe)  # type: ignore[arg-type]
    quiet.update("waiting")
    quiet.clear()
    assert pipe.text == ""


def test_wait_shows_progress_on_the_spinner() -> None:
    answers = iter([_status("RUNNING", "UNASSIGNED"), _status("RUNNING", "RUNNING")])

    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.url.path.endswith("/status"):
            return httpx2.Response(200, json=next(answers))
        return httpx2.Response(200, json=_info())

    tty = Tty()
    clock = FakeClock()
    with ConnectClient("http://w", transport=_mock(handler)) as client:
        result = wait_for_state(
            client,
            "c",
            "RUNNING",
            10,
            spinner=manage.Spinner(tty),  # type: ignore[arg-type]
            clock=clock,
            sleep=clock.sleep,
        )
    assert result.exit_code == 0
    assert "waiting for c to be RUNNING: connector RUNNING, tasks 0/1 RUNNING (0 s)" in tty.text


def test_the_predefined_jdbc_connectors_load_by_name() -> None:
    for name, cls in (
        ("jdbc-source", "io.confluent.connect.jdbc.JdbcSourceConnector"),
        ("jdbc-sink", "io.confluent.connect.jdbc.JdbcSinkConnector"),
    ):
        loaded = manage.load_connector_config(name, None)
        assert loaded.config["connector.class"] == cls
        assert loaded.config["name"] == name
        assert loaded.config["connection.url"].startswith("jdbc:postgresql://")


def test_the_predefined_replicator_loads_by_name_and_validates() -> None:
    from sluice.connectors.replicator import ReplicatorSourceConnector

    loaded = manage.load_connector_config("replicator", None, {"src.kafka.bootstrap.servers": "source:9092"})
    assert loaded.config["connector.class"] == "io.confluent.connect.replicator.ReplicatorSourceConnector"
    assert loaded.config["src.kafka.bootstrap.servers"] == "source:9092"
    validated = ReplicatorSourceConnector().validate(loaded.config)
    assert [v.error_messages for v in validated.config_values if v.error_messages] == []


def test_the_predefined_storage_sinks_load_by_name() -> None:
    s3 = manage.load_connector_config("s3-sink", None, {"s3.bucket.name": "mine"})
    assert s3.config["connector.class"] == "io.confluent.connect.s3.S3SinkConnector"
    assert s3.config["s3.bucket.name"] == "mine" and s3.config["store.url"] == "http://127.0.0.1:9000"
    hdfs = manage.load_connector_config("hdfs-sink", None)
    assert hdfs.config["connector.class"] == "io.confluent.connect.hdfs.HdfsSinkConnector"
    assert hdfs.config["hdfs.url"] == "hdfs://127.0.0.1:8020" and hdfs.config["name"] == "hdfs-sink"
