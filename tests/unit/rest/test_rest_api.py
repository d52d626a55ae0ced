"""The REST layer against an in-memory FakeHerder, through Starlette's TestClient."""

from __future__ import annotations

import socket
import time

import httpx2
import pytest
from starlette.testclient import TestClient

from sluice.api.errors import ConnectError
from sluice.rest import RestServer, create_app
from sluice.rest.server import parse_listener, parse_listeners
from sluice.runtime.herder.base import ConnectRestError, State, StateInfo, TargetState, TaskStateInfo
from tests import http_client

from .fake_herder import PLUGIN_VERSION, WORKER_ID, FakeHerder

SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def herder() -> FakeHerder:
    return FakeHerder()


@pytest.fixture
def client(herder: FakeHerder):
    with TestClient(create_app(herder)) as c:
        yield c


def err(status: int, message: str) -> dict:
    return {"error_code": status, "message": message}


def create(client: TestClient, name: str = "s1", cls: str = SINK, **config) -> dict:
    body = {"name": name, "config": {"connector.class": cls, **config}}
    r = client.post("/connectors", json=body)
    assert r.status_code == 201, r.text
    return r.json()


# --------------------------------------------------------------------------- root and health


def test_root(client):
    r = client.get("/")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.json() == {"version": "0.1.0", "commit": "abc123", "kafka_cluster_id": "fake-cluster"}


@pytest.mark.parametrize(
    ("status", "code"),
    [("healthy", 200), ("starting", 503), ("unhealthy", 500)],
)
def test_health(client, herder, status, code):
    herder.health_status = (status, f"message for {status}")
    r = client.get("/health")
    assert r.status_code == code
    assert r.json() == {"status": status, "message": f"message for {status}"}


# --------------------------------------------------------------------------- list and expand


def test_list_connectors(client):
    assert client.get("/connectors").json() == []
    create(client, "a")
    create(client, "b", SOURCE)
    r = client.get("/connectors")
    assert r.status_code == 200
    assert sorted(r.json()) == ["a", "b"]


def test_list_expand_status(client):
    create(client, "a")
    r = client.get("/connectors?expand=status")
    assert r.status_code == 200
    assert r.json() == {
        "a": {
            "status": {
                "name": "a",
                "connector": {"state": "RUNNING", "worker_id": WORKER_ID, "version": PLUGIN_VERSION},
                "tasks": [{"id": 0, "state": "RUNNING", "worker_id": WORKER_ID, "version": PLUGIN_VERSION}],
                "type": "sink",
            }
        }
    }


def test_list_expand_info_and_status_repeated(client):
    create(client, "a", **{"tasks.max": "2"})
    body = client.get("/connectors", params=[("expand", "info"), ("expand", "status")]).json()
    assert set(body) == {"a"}
    assert set(body["a"]) == {"info", "status"}
    assert body["a"]["info"] == {
        "name": "a",
        "config": {"connector.class": SINK, "tasks.max": "2", "name": "a"},
        "tasks": [{"connector": "a", "task": 0}, {"connector": "a", "task": 1}],
        "type": "sink",
    }
    assert [t["id"] for t in body["a"]["status"]["tasks"]] == [0, 1]


def test_list_expand_unknown_value_gives_empty_objects(client):
    create(client, "a")
    assert client.get("/connectors?expand=bogus").json() == {"a": {}}


def test_list_expand_leaves_out_connector_without_status(client, herder):
    create(client, "a")
    create(client, "b")
    herder.status_missing.add("b")
    body = client.get("/connectors?expand=status").json()
    assert set(body) == {"a"}


# --------------------------------------------------------------------------- create


def test_create_connector(client, herder):
    r = client.post("/connectors", json={"name": "s1", "config": {"connector.class": SINK, "file": "/tmp/x"}})
    assert r.status_code == 201
    assert r.headers["location"] == "http://testserver/connectors/s1"
    assert r.headers["content-type"] == "application/json"
    assert r.json() == {
        "name": "s1",
        "config": {"connector.class": SINK, "file": "/tmp/x", "name": "s1"},
        "tasks": [{"connector": "s1", "task": 0}],
        "type": "sink",
    }
    method, args = herder.calls[-1]
    assert method == "put_connector_config"
    assert args == ("s1", {"connector.class": SINK, "file": "/tmp/x", "name": "s1"}, False, None)


def test_create_trims_name_and_encodes_location(client, herder):
    r = client.post("/connectors", json={"name": "  my conn \t", "config": {"connector.class": SINK}})
    assert r.status_code == 201
    assert r.json()["name"] == "my conn"
    assert r.json()["config"]["name"] == "my conn"
    assert r.headers["location"] == "http://testserver/connectors/my%20conn"


def test_create_with_matching_config_name(client):
    r = client.post("/connectors", json={"name": " s1 ", "config": {"connector.class": SINK, "name": "s1"}})
    assert r.status_code == 201
    assert r.json()["config"]["name"] == "s1"


def test_create_null_config_name_is_replaced(client):
    r = client.post("/connectors", json={"name": "s1", "config": {"connector.class": SINK, "name": None}})
    assert r.status_code == 201
    assert r.json()["config"]["name"] == "s1"


def test_create_name_mismatch(client):
    r = client.post("/connectors", json={"name": "s1", "config": {"connector.class": SINK, "name": "other"}})
    assert r.status_code == 400
    assert r.json() == err(400, "Connector name configuration (other) doesn't match connector name in the URL (s1)")


def test_create_name_only_in_config_is_a_mismatch(client):
    r = client.post("/connectors", json={"config": {"connector.class": SINK, "name": "s1"}})
    assert r.status_code == 400
    assert r.json() == err(400, "Connector name configuration (s1) doesn't match connector name in the URL ()")


def test_create_missing_name_becomes_empty(client, herder):
    r = client.post("/connectors", json={"config": {"connector.class": SINK}})
    assert r.status_code == 400
    assert r.json() == err(
        400,
        "Connector configuration is invalid and contains the following 1 error(s):\n"
        "Invalid value  for configuration name: String may not be empty\n"
        "You can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`",
    )
    assert herder.calls[-1][1][0] == ""


def test_create_duplicate(client):
    create(client, "s1")
    r = client.post("/connectors", json={"name": "s1", "config": {"connector.class": SINK}})
    assert r.status_code == 409
    assert r.json() == err(409, "Connector s1 already exists")


def test_create_without_connector_class(client):
    r = client.post("/connectors", json={"name": "s1", "config": {"file": "/tmp/x"}})
    assert r.status_code == 400
    assert r.json() == err(400, "Connector config {file=/tmp/x, name=s1} contains no connector type")


@pytest.mark.parametrize(
    ("given", "target"),
    [
        ("RUNNING", TargetState.STARTED),
        ("running", TargetState.STARTED),
        ("Paused", TargetState.PAUSED),
        ("STOPPED", TargetState.STOPPED),
        (None, None),
    ],
)
def test_create_initial_state(client, herder, given, target):
    r = client.post("/connectors", json={"name": "s1", "config": {"connector.class": SINK}, "initial_state": given})
    assert r.status_code == 201
    assert herder.calls[-1][1][3] == target


@pytest.mark.parametrize(
    ("given", "shown"),
    [("STARTED", "STARTED"), ("", ""), (1, "1"), (["RUNNING"], "of type array"), (True, "true")],
)
def test_create_invalid_initial_state(client, herder, given, shown):
    r = client.post("/connectors", json={"name": "s1", "config": {"connector.class": SINK}, "initial_state": given})
    assert r.status_code == 400
    assert r.json() == err(
        400,
        f"Invalid value {shown} for initial_state: must be one of RUNNING, PAUSED, STOPPED (case-insensitive)",
    )
    assert not herder.configs


def test_create_ignores_unknown_top_level_fields(client):
    r = client.post("/connectors", json={"name": "s1", "config": {"connector.class": SINK}, "bogus": [1, 2]})
    assert r.status_code == 201


def test_create_coerces_scalar_config_values(client, herder):
    r = client.post(
        "/connectors",
        content=b'{"name": "s1", "config": {"connector.class": "%s", "tasks.max": 1, "a": 1.50, '
        b'"b": 1e3, "c": true, "d": false, "e": null, "f": -0}}' % SINK.encode(),
        headers=JSON,
    )
    assert r.status_code == 201, r.text
    config = herder.calls[-1][1][1]
    assert config == {
        "connector.class": SINK,
        "tasks.max": "1",
        "a": "1.50",
        "b": "1e3",
        "c": "true",
        "d": "false",
        "e": None,
        "f": "-0",
        "name": "s1",
    }
    assert all(type(v) is str for v in config.values() if v is not None)
    assert r.json()["tasks"] == [{"connector": "s1", "task": 0}]


def test_create_numeric_name_is_coerced(client):
    r = client.post("/connectors", content=b'{"name": 42, "config": {"connector.class": "X"}}', headers=JSON)
    assert r.status_code == 201
    assert r.json()["name"] == "42"
    assert r.headers["location"] == "http://testserver/connectors/42"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            b"{not json",
            "Request body is not valid JSON: Expecting property name enclosed in double quotes: "
            "line 1 column 2 (char 1)",
        ),
        (
            b'{"name": "s1", "config": {}',
            "Request body is not valid JSON: Expecting ',' delimiter: line 1 column 28 (char 27)",
        ),
        (b'{"name": "s1", "config": {"a": NaN}}', "Request body is not valid JSON: NaN is not a valid JSON value"),
        (b"\xff\xfe{", None),
    ],
)
def test_create_malformed_json(client, body, message):
    r = client.post("/connectors", content=body, headers=JSON)
    assert r.status_code == 400
    if message is None:
        assert r.json()["error_code"] == 400
        assert r.json()["message"].startswith("Request body is not valid JSON: ")
    else:
        assert r.json() == err(400, message)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'[{"name": "s1"}]', "Request body must be a JSON object, not array"),
        (b'"s1"', "Request body must be a JSON object, not string"),
        (b"1", "Request body must be a JSON object, not number"),
        (b"null", "Request body must be a JSON object, not null"),
        (b'{"name": "s1"}', "Field 'config' is missing: the request body must contain a 'config' object"),
        (
            b'{"name": "s1", "config": null}',
            "Field 'config' is missing: the request body must contain a 'config' object",
        ),
        (b'{"name": "s1", "config": ["a"]}', "Field 'config' must be a JSON object of connector configs, not array"),
        (b'{"name": "s1", "config": "x"}', "Field 'config' must be a JSON object of connector configs, not string"),
        (
            b'{"name": "s1", "config": {"a": {"b": 1}}}',
            "Value of connector config 'a' must be a string, number, boolean or null, not object",
        ),
        (
            b'{"name": "s1", "config": {"a": [1]}}',
            "Value of connector config 'a' must be a string, number, boolean or null, not array",
        ),
        (b'{"name": {"x": 1}, "config": {}}', "Field 'name' must be a JSON string, not object"),
    ],
)
def test_create_wrong_shape(client, herder, body, message):
    r = client.post("/connectors", content=body, headers=JSON)
    assert r.status_code == 400
    assert r.json() == err(400, message)
    assert not herder.configs


@pytest.mark.parametrize("body", [b"", b"  \n"])
def test_create_missing_body(client, body):
    r = client.post("/connectors", content=body, headers=JSON)
    assert r.status_code == 400
    assert r.json() == err(400, "Request body is missing: expected a JSON object")


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "application/xml"],
)
def test_create_non_json_content_type(client, herder, content_type):
    r = client.post(
        "/connectors",
        content=b'{"name": "s1", "config": {"connector.class": "X"}}',
        headers={"Content-Type": content_type},
    )
    assert r.status_code == 415
    assert r.json() == err(
        415,
        f"HTTP 415 Unsupported Media Type: Content-Type {content_type} is not supported; send application/json",
    )
    assert not herder.configs


@pytest.mark.parametrize(
    "content_type",
    ["application/json; charset=utf-8", "Application/JSON", "application/vnd.kafka+json", None],
)
def test_create_json_content_types_accepted(client, content_type):
    headers = {} if content_type is None else {"Content-Type": content_type}
    r = client.post("/connectors", content=b'{"name": "s1", "config": {"connector.class": "X"}}', headers=headers)
    assert r.status_code == 201, r.text


# --------------------------------------------------------------------------- one connector


def test_get_connector(client):
    create(client, "s1", SOURCE, **{"tasks.max": "2"})
    r = client.get("/connectors/s1")
    assert r.status_code == 200
    assert r.json() == {
        "name": "s1",
        "config": {"connector.class": SOURCE, "tasks.max": "2", "name": "s1"},
        "tasks": [{"connector": "s1", "task": 0}, {"connector": "s1", "task": 1}],
        "type": "source",
    }


def test_get_config(client):
    create(client, "s1", file="/tmp/x")
    r = client.get("/connectors/s1/config")
    assert r.status_code == 200
    assert r.json() == {"connector.class": SINK, "file": "/tmp/x", "name": "s1"}


def test_put_config_creates_then_replaces(client, herder):
    r = client.put("/connectors/s1/config", json={"connector.class": SINK, "tasks.max": 1})
    assert r.status_code == 201
    assert r.headers["location"] == "http://testserver/connectors/s1"
    assert r.json() == {
        "name": "s1",
        "config": {"connector.class": SINK, "tasks.max": "1", "name": "s1"},
        "tasks": [{"connector": "s1", "task": 0}],
        "type": "sink",
    }
    assert herder.calls[-1] == (
        "put_connector_config",
        ("s1", {"connector.class": SINK, "tasks.max": "1", "name": "s1"}, True, None),
    )

    r = client.put("/connectors/s1/config", json={"connector.class": SINK, "name": "s1", "tasks.max": "3"})
    assert r.status_code == 200
    assert "location" not in r.headers
    assert r.json()["config"] == {"connector.class": SINK, "name": "s1", "tasks.max": "3"}
    assert len(r.json()["tasks"]) == 3


def test_put_config_name_mismatch(client):
    r = client.put("/connectors/s1/config", json={"connector.class": SINK, "name": "s2"})
    assert r.status_code == 400
    assert r.json() == err(400, "Connector name configuration (s2) doesn't match connector name in the URL (s1)")


def test_put_config_url_name_not_trimmed(client):
    r = client.put("/connectors/%20s1/config", json={"connector.class": SINK, "name": "s1"})
    assert r.status_code == 400
    assert r.json() == err(400, "Connector name configuration (s1) doesn't match connector name in the URL ( s1)")


def test_put_config_without_connector_class(client):
    r = client.put("/connectors/s1/config", json={"file": "/tmp/x"})
    assert r.status_code == 400
    assert r.json() == err(400, "Connector config {file=/tmp/x, name=s1} contains no connector type")


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (
            b"{",
            400,
            "Request body is not valid JSON: Expecting property name enclosed in double quotes: "
            "line 1 column 2 (char 1)",
        ),
        (b"[]", 400, "Request body must be a JSON object of connector configs, not array"),
        (b"", 400, "Request body is missing: expected a JSON object"),
    ],
)
def test_put_config_bad_body(client, body, status, message):
    r = client.put("/connectors/s1/config", content=body, headers=JSON)
    assert r.status_code == status
    assert r.json() == err(status, message)


def test_put_config_415(client):
    r = client.put("/connectors/s1/config", content=b"{}", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415
    assert r.json() == err(
        415, "HTTP 415 Unsupported Media Type: Content-Type text/plain is not supported; send application/json"
    )


def test_patch_config(client, herder):
    create(client, "s1", file="/tmp/x", topics="t")
    r = client.patch("/connectors/s1/config", json={"file": "/tmp/y", "topics": None, "tasks.max": 2})
    assert r.status_code == 200
    assert r.json() == {
        "name": "s1",
        "config": {"connector.class": SINK, "file": "/tmp/y", "name": "s1", "tasks.max": "2"},
        "tasks": [{"connector": "s1", "task": 0}, {"connector": "s1", "task": 1}],
        "type": "sink",
    }
    assert herder.calls[-1] == ("patch_connector_config", ("s1", {"file": "/tmp/y", "topics": None, "tasks.max": "2"}))


def test_patch_config_bad_bodies(client):
    create(client, "s1")
    r = client.patch("/connectors/s1/config", content=b"nope", headers=JSON)
    assert r.json() == err(400, "Request body is not valid JSON: Expecting value: line 1 column 1 (char 0)")
    r = client.patch("/connectors/s1/config", content=b"[1]", headers=JSON)
    assert r.json() == err(400, "Request body must be a JSON object of connector configs, not array")
    r = client.patch("/connectors/s1/config", content=b"{}", headers={"Content-Type": "text/csv"})
    assert r.status_code == 415


def test_delete_connector(client, herder):
    create(client, "s1")
    r = client.delete("/connectors/s1")
    assert r.status_code == 204
    assert r.content == b""
    assert herder.configs == {}


def test_connector_status_sorted_with_trace(client, herder):
    create(client, "s1", **{"tasks.max": "3"})
    herder.connector_states["s1"] = StateInfo(State.RUNNING.value, WORKER_ID, trace="")
    herder.task_states["s1"][1] = TaskStateInfo(
        1, State.FAILED.value, WORKER_ID, "Traceback (most recent call last):\n..."
    )
    r = client.get("/connectors/s1/status")
    assert r.status_code == 200
    assert r.json() == {
        "name": "s1",
        "connector": {"state": "RUNNING", "worker_id": WORKER_ID, "version": None},
        "tasks": [
            {"id": 0, "state": "RUNNING", "worker_id": WORKER_ID, "version": PLUGIN_VERSION},
            {
                "id": 1,
                "state": "FAILED",
                "worker_id": WORKER_ID,
                "version": None,
                "trace": "Traceback (most recent call last):\n...",
            },
            {"id": 2, "state": "RUNNING", "worker_id": WORKER_ID, "version": PLUGIN_VERSION},
        ],
        "type": "sink",
    }


def test_status_version_as_kafka_serialises_it(client, herder):
    """Kafka 4.3.1's ConnectorStateInfo, serialised by its own Jackson setup: ``version``
    follows ``worker_id`` and precedes ``trace``, is written as null when unknown and left
    out when ``"undefined"`` (PluginInfo.NoVersionFilter)."""
    create(client, "s1", **{"tasks.max": "2"})
    herder.connector_states["s1"] = StateInfo(State.RUNNING.value, WORKER_ID, version="4.3.1")
    herder.task_states["s1"][0] = TaskStateInfo(0, State.FAILED.value, WORKER_ID, "trace", "1.2")
    herder.task_states["s1"][1] = TaskStateInfo(1, State.RUNNING.value, WORKER_ID, "", None)
    r = client.get("/connectors/s1/status")
    # What Kafka's classes give for ConnectorState("RUNNING", w, null, "4.3.1"),
    # TaskState(0, "FAILED", w, "trace", "1.2") and TaskState(1, "RUNNING", w, "", null):
    assert r.content == (
        b'{"name":"s1","connector":{"state":"RUNNING","worker_id":"fake-worker:8083","version":"4.3.1"},'
        b'"tasks":[{"id":0,"state":"FAILED","worker_id":"fake-worker:8083","version":"1.2","trace":"trace"},'
        b'{"id":1,"state":"RUNNING","worker_id":"fake-worker:8083","version":null}],"type":"sink"}'
    )
    herder.connector_states["s1"] = StateInfo(State.FAILED.value, WORKER_ID, "boom", "undefined")
    assert client.get("/connectors/s1/status").content.startswith(
        b'{"name":"s1","connector":{"state":"FAILED","worker_id":"fake-worker:8083","trace":"boom"},'
    )
    assert client.get("/connectors/s1/tasks/0/status").content == (
        b'{"id":0,"state":"FAILED","worker_id":"fake-worker:8083","version":"1.2","trace":"trace"}'
    )


def test_connector_status_enum_states_serialised_as_strings(client, herder):
    create(client, "s1")
    herder.connector_states["s1"] = StateInfo(State.PAUSED, WORKER_ID)  # type: ignore[arg-type]
    assert client.get("/connectors/s1/status").json()["connector"] == {
        "state": "PAUSED",
        "worker_id": WORKER_ID,
        "version": None,
    }


def test_task_configs(client):
    create(client, "s1", **{"tasks.max": "2"})
    r = client.get("/connectors/s1/tasks")
    assert r.status_code == 200
    base = {"connector.class": SINK, "tasks.max": "2", "name": "s1"}
    assert r.json() == [
        {"id": {"connector": "s1", "task": 0}, "config": {**base, "task.id": "0"}},
        {"id": {"connector": "s1", "task": 1}, "config": {**base, "task.id": "1"}},
    ]


def test_tasks_config_deprecated(client):
    create(client, "s1", **{"tasks.max": "2"})
    r = client.get("/connectors/s1/tasks-config")
    assert r.status_code == 200
    base = {"connector.class": SINK, "tasks.max": "2", "name": "s1"}
    assert r.json() == {"s1-0": {**base, "task.id": "0"}, "s1-1": {**base, "task.id": "1"}}


def test_task_status(client, herder):
    create(client, "s1", **{"tasks.max": "2"})
    r = client.get("/connectors/s1/tasks/1/status")
    assert r.status_code == 200
    assert r.json() == {"id": 1, "state": "RUNNING", "worker_id": WORKER_ID, "version": PLUGIN_VERSION}
    herder.task_states["s1"][0] = TaskStateInfo(0, "FAILED", WORKER_ID, "boom trace")
    assert client.get("/connectors/s1/tasks/0/status").json() == {
        "id": 0,
        "state": "FAILED",
        "worker_id": WORKER_ID,
        "version": None,
        "trace": "boom trace",
    }


def test_task_status_unknown_task(client):
    create(client, "s1")
    r = client.get("/connectors/s1/tasks/7/status")
    assert r.status_code == 404
    assert r.json() == err(404, "No status found for task s1-7")


@pytest.mark.parametrize("task", ["abc", "1.5", "99999999999", "0x1"])
@pytest.mark.parametrize(
    ("method", "template"),
    [("GET", "/connectors/s1/tasks/{}/status"), ("POST", "/connectors/s1/tasks/{}/restart")],
)
def test_non_integer_task_id_is_404(client, herder, method, template, task):
    create(client, "s1")
    r = client.request(method, template.format(task))
    assert r.status_code == 404
    assert r.json() == err(404, "HTTP 404 Not Found")
    assert herder.calls[-1][0] == "put_connector_config"  # herder not called


def test_pause_resume_stop(client, herder):
    create(client, "s1")
    r = client.put("/connectors/s1/pause")
    assert (r.status_code, r.content) == (202, b"")
    assert herder.target_states["s1"] == TargetState.PAUSED
    r = client.put("/connectors/s1/resume")
    assert (r.status_code, r.content) == (202, b"")
    assert herder.target_states["s1"] == TargetState.STARTED
    r = client.put("/connectors/s1/stop")
    assert (r.status_code, r.content) == (204, b"")
    assert herder.target_states["s1"] == TargetState.STOPPED
    assert client.get("/connectors/s1/status").json()["tasks"] == []


def test_pause_ignores_body(client):
    create(client, "s1")
    r = client.put("/connectors/s1/pause", content=b"whatever", headers={"Content-Type": "text/plain"})
    assert r.status_code == 202


def test_restart_legacy_is_204(client, herder):
    create(client, "s1")
    r = client.post("/connectors/s1/restart")
    assert (r.status_code, r.content) == (204, b"")
    assert herder.calls[-1] == ("restart_connector", ("s1", False, False))


@pytest.mark.parametrize(
    ("query", "include_tasks", "only_failed"),
    [
        ("?includeTasks=yes", False, False),
        ("?includeTasks=1", False, False),
        ("?includeTasks=false&onlyFailed=false", False, False),
        ("?includeTasks=", False, False),
    ],
)
def test_restart_java_boolean_parsing_false(client, herder, query, include_tasks, only_failed):
    create(client, "s1")
    r = client.post("/connectors/s1/restart" + query)
    assert r.status_code == 204
    assert herder.calls[-1] == ("restart_connector", ("s1", include_tasks, only_failed))


def test_restart_include_tasks_is_202(client, herder):
    create(client, "s1", **{"tasks.max": "2"})
    r = client.post("/connectors/s1/restart?includeTasks=TRUE")
    assert r.status_code == 202
    assert herder.calls[-1] == ("restart_connector", ("s1", True, False))
    assert r.json() == {
        "name": "s1",
        "connector": {"state": "RESTARTING", "worker_id": WORKER_ID, "version": PLUGIN_VERSION},
        "tasks": [
            {"id": 0, "state": "RESTARTING", "worker_id": WORKER_ID, "version": PLUGIN_VERSION},
            {"id": 1, "state": "RESTARTING", "worker_id": WORKER_ID, "version": PLUGIN_VERSION},
        ],
        "type": "sink",
    }


def test_restart_only_failed_is_202(client, herder):
    create(client, "s1", **{"tasks.max": "2"})
    herder.task_states["s1"][1] = TaskStateInfo(1, "FAILED", WORKER_ID, "trace", PLUGIN_VERSION)
    r = client.post("/connectors/s1/restart?includeTasks=true&onlyFailed=True")
    assert r.status_code == 202
    assert herder.calls[-1] == ("restart_connector", ("s1", True, True))
    assert r.json() == {
        "name": "s1",
        "connector": {"state": "RUNNING", "worker_id": WORKER_ID, "version": PLUGIN_VERSION},
        "tasks": [
            {"id": 0, "state": "RUNNING", "worker_id": WORKER_ID, "version": PLUGIN_VERSION},
            {"id": 1, "state": "RESTARTING", "worker_id": WORKER_ID, "version": PLUGIN_VERSION},
        ],
        "type": "sink",
    }


def test_restart_task(client, herder):
    create(client, "s1")
    r = client.post("/connectors/s1/tasks/0/restart")
    assert (r.status_code, r.content) == (204, b"")
    assert herder.calls[-1] == ("restart_task", ("s1", 0))
    r = client.post("/connectors/s1/tasks/5/restart")
    assert r.status_code == 404
    assert r.json() == err(404, "Task s1-5 not found")


def test_topics(client, herder):
    create(client, "s1")
    herder.active_topics["s1"] = ["a", "b"]
    r = client.get("/connectors/s1/topics")
    assert r.status_code == 200
    assert r.json() == {"s1": {"topics": ["a", "b"]}}
    # no existence check, as in Kafka
    assert client.get("/connectors/nope/topics").json() == {"nope": {"topics": []}}


def test_topics_tracking_disabled(client, herder):
    herder.raise_next["connector_active_topics"] = ConnectRestError(403, "Topic tracking is disabled.")
    r = client.get("/connectors/s1/topics")
    assert r.status_code == 403
    assert r.json() == err(403, "Topic tracking is disabled.")


# --------------------------------------------------------------------------- unknown connector


@pytest.mark.parametrize(
    ("method", "path", "body", "message"),
    [
        ("GET", "/connectors/nope", None, "Connector nope not found"),
        ("GET", "/connectors/nope/config", None, "Connector nope not found"),
        ("PATCH", "/connectors/nope/config", {"a": "b"}, "Connector nope not found"),
        ("GET", "/connectors/nope/status", None, "No status found for connector nope"),
        ("GET", "/connectors/nope/tasks", None, "Connector nope not found"),
        ("GET", "/connectors/nope/tasks-config", None, "Connector nope not found"),
        ("GET", "/connectors/nope/tasks/0/status", None, "No status found for task nope-0"),
        ("POST", "/connectors/nope/restart", None, "Unknown connector: nope"),
        ("POST", "/connectors/nope/restart?includeTasks=true", None, "Unknown connector: nope"),
        ("POST", "/connectors/nope/tasks/0/restart", None, "Connector nope not found"),
        ("PUT", "/connectors/nope/pause", None, "Unknown connector nope"),
        ("PUT", "/connectors/nope/resume", None, "Unknown connector nope"),
        ("PUT", "/connectors/nope/stop", None, "Unknown connector nope"),
        ("DELETE", "/connectors/nope", None, "Connector nope not found"),
    ],
)
def test_unknown_connector_is_404(client, method, path, body, message):
    r = client.request(method, path, json=body)
    assert r.status_code == 404
    assert r.json() == err(404, message)


# --------------------------------------------------------------------------- plugins


def test_connector_plugins_default_connectors_only(client, herder):
    r = client.get("/connector-plugins")
    assert r.status_code == 200
    assert r.json() == [
        {"class": SINK, "type": "sink", "version": "4.0.0"},
        {"class": SOURCE, "type": "source", "version": "4.0.0"},
    ]
    assert herder.calls[-1] == ("connector_plugins", (True,))


@pytest.mark.parametrize(
    ("query", "expected"), [("false", False), ("FALSE", False), ("junk", False), ("true", True), ("", True)]
)
def test_connector_plugins_connectors_only_parsing(client, herder, query, expected):
    client.get(f"/connector-plugins?connectorsOnly={query}")
    assert herder.calls[-1] == ("connector_plugins", (expected,))


def test_connector_plugins_all_and_version_omitted(client):
    r = client.get("/connector-plugins/?connectorsOnly=false")
    assert r.status_code == 200
    assert r.json() == [
        {"class": SINK, "type": "sink", "version": "4.0.0"},
        {"class": SOURCE, "type": "source", "version": "4.0.0"},
        {"class": "org.apache.kafka.connect.transforms.Cast$Value", "type": "transformation"},
        {"class": "org.apache.kafka.connect.storage.StringConverter", "type": "converter"},
    ]


def test_validate(client, herder):
    r = client.put(
        "/connector-plugins/FileStreamSinkConnector/config/validate",
        json={"connector.class": SINK, "tasks.max": 1},
    )
    assert r.status_code == 200
    body = r.json()
    assert body == {
        "name": SINK,
        "error_count": 1,
        "groups": ["Common"],
        "configs": [
            {
                "definition": {
                    "name": "name",
                    "type": "STRING",
                    "required": True,
                    "default_value": None,
                    "importance": "HIGH",
                    "documentation": "Globally unique name to use for this connector.",
                    "group": "Common",
                    "order_in_group": 1,
                    "width": "MEDIUM",
                    "display_name": "Connector name",
                    "dependents": [],
                },
                "value": {
                    "name": "name",
                    "value": None,
                    "recommended_values": [],
                    "errors": ['Missing required configuration "name" which has no default value.'],
                    "visible": True,
                },
            },
            {
                "definition": None,
                "value": {
                    "name": "bogus",
                    "value": None,
                    "recommended_values": [],
                    "errors": ["an error without definition"],
                    "visible": True,
                },
            },
        ],
    }
    assert list(body["configs"][0]["definition"]) == [
        "name",
        "type",
        "required",
        "default_value",
        "importance",
        "documentation",
        "group",
        "order_in_group",
        "width",
        "display_name",
        "dependents",
    ]
    # the path is only a consistency check: the body is passed as is (no name inserted)
    assert herder.calls[-1] == ("validate_connector_config", ({"connector.class": SINK, "tasks.max": "1"},))


@pytest.mark.parametrize("plugin", ["FileStreamSink", "FileStreamSinkConnector", SINK, "Sink", "StreamSinkConnector"])
def test_validate_plugin_name_matches(client, plugin):
    r = client.put(f"/connector-plugins/{plugin}/config/validate", json={"connector.class": SINK, "name": "x"})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("plugin", ["FileStreamSource", "Connector", "FileStreamSinkConnectorX"])
def test_validate_plugin_name_mismatch(client, herder, plugin):
    r = client.put(f"/connector-plugins/{plugin}/config/validate", json={"connector.class": SINK})
    assert r.status_code == 400
    assert r.json() == err(400, f"Included connector type {SINK} does not match request type {plugin}")
    assert herder.calls == []


def test_validate_without_connector_class(client):
    r = client.put("/connector-plugins/FileStreamSink/config/validate", json={"name": "x"})
    assert r.status_code == 400
    assert r.json() == err(400, "Connector config {name=x} contains no connector type")


def test_validate_bad_bodies(client):
    path = "/connector-plugins/FileStreamSink/config/validate"
    r = client.put(path, content=b"{oops", headers=JSON)
    assert r.json() == err(
        400,
        "Request body is not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
    )
    r = client.put(path, content=b'["x"]', headers=JSON)
    assert r.json() == err(400, "Request body must be a JSON object of connector configs, not array")
    r = client.put(path, content=b"{}", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415


# --------------------------------------------------------------------------- server-wide


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/connectors/", 200),
        ("GET", "/connector-plugins/", 200),
        ("GET", "/health/", 200),
        ("GET", "/connectors/s1/", 200),
        ("GET", "/connectors/s1/config/", 200),
        ("GET", "/connectors/s1/status/", 200),
        ("GET", "/connectors/s1/tasks/", 200),
        ("GET", "/connectors/s1/tasks/0/status/", 200),
        ("GET", "/connectors/s1/topics/", 200),
        ("PUT", "/connectors/s1/pause/", 202),
        ("POST", "/connectors/s1/restart/", 204),
        ("DELETE", "/connectors/s1/", 204),
    ],
)
def test_trailing_slash_tolerated(client, method, path, status):
    create(client, "s1")
    r = client.request(method, path, follow_redirects=False)
    assert r.status_code == status, r.text


def test_trailing_slash_on_post(client):
    r = client.post("/connectors/", json={"name": "s1", "config": {"connector.class": SINK}})
    assert r.status_code == 201
    r = client.put("/connectors/s2/config/", json={"connector.class": SINK})
    assert r.status_code == 201


def test_unknown_path(client):
    r = client.get("/nope")
    assert r.status_code == 404
    assert r.json() == err(404, "HTTP 404 Not Found")
    r = client.get("/connectors/s1/nope")
    assert r.json() == err(404, "HTTP 404 Not Found")
    r = client.get("/docs")
    assert r.status_code == 404


def test_method_not_allowed(client):
    r = client.delete("/connector-plugins")
    assert r.status_code == 405
    assert r.json() == err(405, "HTTP 405 Method Not Allowed")
    assert sorted(m.strip() for m in r.headers["allow"].split(",")) == ["GET", "HEAD"]


def test_head(client):
    r = client.head("/connectors")
    assert r.status_code == 200
    assert r.content == b""


def test_unexpected_error_is_500(client, herder):
    herder.raise_next["connectors"] = RuntimeError("something broke")
    r = client.get("/connectors")
    assert r.status_code == 500
    assert r.json() == err(500, "something broke")


def test_unexpected_error_without_message_is_500(client, herder):
    herder.raise_next["connector_info"] = KeyError()
    r = client.get("/connectors/x")
    assert r.status_code == 500
    assert r.json() == err(500, "KeyError")


def test_connect_error_is_500(client, herder):
    herder.raise_next["server_info"] = ConnectError("Request timed out")
    r = client.get("/")
    assert r.status_code == 500
    assert r.json() == err(500, "Request timed out")


def test_connect_rest_error_keeps_status(client, herder):
    herder.raise_next["connectors"] = ConnectRestError(
        409, "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
    )
    r = client.get("/connectors")
    assert r.status_code == 409
    assert r.json() == err(
        409, "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
    )


# --------------------------------------------------------------------------- listeners and server


@pytest.mark.parametrize(
    ("text", "protocol", "host", "port"),
    [
        ("http://:8083", "http", "", 8083),
        ("http://localhost:0", "http", "localhost", 0),
        ("HTTP://127.0.0.1:9000", "http", "127.0.0.1", 9000),
        ("http://[::1]:8083", "http", "::1", 8083),
        (" http://host-1.example.com:80 ", "http", "host-1.example.com", 80),
        ("HTTPS://:8443", "https", "", 8443),
    ],
)
def test_parse_listener(text, protocol, host, port):
    listener = parse_listener(text)
    assert (listener.protocol, listener.host, listener.port) == (protocol, host, port)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("ftp://:21", "unknown protocol 'ftp'; use http or https"),
        ("http://localhost", "expected protocol://host:port"),
        ("localhost:8083", "expected protocol://host:port"),
        ("http://:70000", "out of range"),
    ],
)
def test_parse_listener_errors(text, fragment):
    with pytest.raises(ValueError, match=fragment):
        parse_listener(text)


def test_parse_listeners_comma_separated():
    assert [listener.port for listener in parse_listeners("http://:1, http://localhost:2")] == [1, 2]


def test_advertised_addresses_before_start(herder):
    server = RestServer(herder, ["http://:8083"])
    assert server.url == "http://localhost:8083"
    assert server.advertised_url == "http://localhost:8083"
    assert server.worker_id == "localhost:8083"
    server = RestServer(herder, ["http://10.0.0.5:8083"], advertised_host="worker-1", advertised_port=9999)
    assert server.advertised_url == "http://worker-1:9999"
    assert server.worker_id == "worker-1:9999"
    with pytest.raises(RuntimeError):
        _ = RestServer(herder, ["http://:0"]).url


def test_rest_server_over_the_network(herder):
    server = RestServer(herder, ["http://127.0.0.1:0"])
    server.start()
    try:
        port = int(server.url.rsplit(":", 1)[1])
        assert port > 0
        assert server.url == f"http://127.0.0.1:{port}"
        assert server.worker_id == f"127.0.0.1:{port}"
        r = http_client.get(server.url + "/", timeout=10)
        assert r.status_code == 200
        assert r.headers["content-type"] == "application/json"
        assert r.json() == {"version": "0.1.0", "commit": "abc123", "kafka_cluster_id": "fake-cluster"}
        r = http_client.get(server.url + "/nope", timeout=10)
        assert r.json() == err(404, "HTTP 404 Not Found")
    finally:
        server.stop()
    assert not server.running
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    server.stop()  # idempotent


def test_a_kept_alive_connection_is_answered_without_waiting_for_the_clients_ack(herder):
    """Without TCP_NODELAY on its connections the server's response head and body go out as
    two segments, the second held until the client's delayed ACK: every request on a
    kept-alive connection after its first took 40 ms or more (Linux's shortest delayed ACK).
    Some of ten must come back sooner than that, however busy the machine."""
    server = RestServer(herder, ["http://127.0.0.1:0"])
    server.start()
    try:
        with httpx2.Client(base_url=server.url, timeout=10) as client:
            took = []
            for _ in range(10):
                started = time.perf_counter()
                assert client.get("/connectors").status_code == 200
                took.append(time.perf_counter() - started)
        assert min(took[1:]) < 0.035, [round(t * 1000, 1) for t in took]
    finally:
        server.stop()


# --------------------------------------------------------------------------- offsets


def test_offsets_read_in_any_state_and_404_for_unknown(client, herder):
    create(client, "s1")
    r = client.get("/connectors/s1/offsets")
    assert r.status_code == 200 and r.json() == {"offsets": []}
    r = client.get("/connectors/nope/offsets")
    assert r.status_code == 404 and r.json() == err(404, "Connector nope not found")


@pytest.mark.parametrize("body", [None, {}, {"offsets": None}, {"offsets": []}])
def test_alter_offsets_needs_offsets_before_anything_else(client, body):
    # Checked even before the connector's existence, as Kafka does.
    r = (
        client.patch("/connectors/nope/offsets", json=body)
        if body is not None
        else client.patch("/connectors/nope/offsets")
    )
    assert r.status_code == 400
    assert r.json() == err(400, "Partitions / offsets need to be provided for an alter offsets request")


def test_alter_offsets_requires_stopped_then_succeeds(client, herder):
    create(client, "s1")
    body = {"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 5}}]}
    r = client.patch("/connectors/s1/offsets", json=body)
    assert r.status_code == 400
    assert r.json()["message"].startswith(
        "Connectors must be in the STOPPED state before their offsets can be modified"
    )
    assert client.put("/connectors/s1/stop").status_code == 204
    r = client.patch("/connectors/s1/offsets", json=body)
    assert r.status_code == 200
    assert r.json() == {"message": "The offsets for this connector have been altered successfully"}
    assert client.get("/connectors/s1/offsets").json() == {"offsets": body["offsets"]}
    r = client.delete("/connectors/s1/offsets")
    assert r.status_code == 200 and r.json()["message"].endswith("have been reset successfully")
    assert client.get("/connectors/s1/offsets").json() == {"offsets": []}


@pytest.mark.parametrize("bad", [[1], [{"partition": [1], "offset": None}], {"a": 1}])
def test_alter_offsets_rejects_malformed_entries(client, bad):
    create(client, "s1")
    r = client.patch("/connectors/s1/offsets", json={"offsets": bad})
    assert r.status_code == 400, r.text


# --------------------------------------------------------------------------- topics


def test_topics_reset_and_tracking_switches(client, herder):
    herder.active_topics["s1"] = ["a", "b"]
    assert client.get("/connectors/s1/topics").json() == {"s1": {"topics": ["a", "b"]}}
    r = client.put("/connectors/s1/topics/reset")
    assert r.status_code == 202 and r.content == b""
    assert client.get("/connectors/s1/topics").json() == {"s1": {"topics": []}}
    herder.topic_tracking = (True, False)
    r = client.put("/connectors/s1/topics/reset")
    assert r.status_code == 403 and r.json() == err(403, "Topic tracking reset is disabled.")
    herder.topic_tracking = (False, False)
    r = client.put("/connectors/s1/topics/reset")
    assert r.status_code == 403 and r.json() == err(403, "Topic tracking is disabled.")


# --------------------------------------------------------------------------- plugin config


def test_plugin_config(client):
    r = client.get("/connector-plugins/FileStreamSink/config")
    assert r.status_code == 200
    assert r.json()[0]["name"] == "file" and set(r.json()[0]) >= {"type", "required", "default_value", "group"}
    r = client.get("/connector-plugins/nope/config")
    assert r.status_code == 404 and r.json() == err(404, "Unknown plugin nope.")


# --------------------------------------------------------------------------- loggers


def test_loggers_listing_one_and_worker_scope(client, herder):
    r = client.get("/admin/loggers")
    assert r.status_code == 200 and r.json() == {"root": {"level": "INFO", "last_modified": None}}
    herder.loggers._manager.getLogger("org.example.a")
    herder.loggers._manager.getLogger("org.example.b")
    r = client.put("/admin/loggers/org.example", json={"level": "debug"})
    assert r.status_code == 200 and r.json() == ["org.example", "org.example.a", "org.example.b"]
    levels = client.get("/admin/loggers").json()
    assert list(levels) == ["org.example", "org.example.a", "org.example.b", "root"]
    assert levels["org.example.a"]["level"] == "DEBUG" and isinstance(levels["org.example.a"]["last_modified"], int)
    first = levels["org.example.a"]["last_modified"]
    assert client.put("/admin/loggers/org.example", json={"level": "DEBUG"}).status_code == 200
    assert client.get("/admin/loggers/org.example.a").json() == {"level": "DEBUG", "last_modified": first}
    assert client.get("/admin/loggers/ROOT").json()["level"] == "INFO"


def test_logger_errors(client):
    r = client.get("/admin/loggers/not.there")
    assert r.status_code == 404 and r.json() == err(404, "Logger not.there not found.")
    r = client.put("/admin/loggers/x", json={})
    assert r.status_code == 400 and r.json() == err(400, "Desired 'level' parameter was not specified in request.")
    r = client.put("/admin/loggers/x", json={"level": "LOUD"})
    assert r.status_code == 404 and r.json() == err(404, "invalid log level 'LOUD'.")


def test_logger_cluster_scope_answers_204(client, herder):
    r = client.put("/admin/loggers/org.example?scope=cluster", json={"level": "WARN"})
    assert r.status_code == 204 and r.content == b""
    assert client.get("/admin/loggers/org.example").json()["level"] == "WARN"
