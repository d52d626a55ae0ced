"""``GET /openapi.json``: the description covers exactly the app's routes, is valid
OpenAPI, and the answers of every operation conform to what it documents."""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import pytest
from fastapi.routing import APIRoute
from openapi_spec_validator import validate as validate_openapi
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from starlette.testclient import TestClient

from sluice.rest import create_app
from sluice.rest.openapi import OPERATIONS, OpenApiError, openapi_document
from sluice.runtime.herder.base import State, TaskStateInfo

from .fake_herder import WORKER_ID, FakeHerder

SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


@pytest.fixture
def herder() -> FakeHerder:
    return FakeHerder()


@pytest.fixture
def app(herder: FakeHerder):
    return create_app(herder)


@pytest.fixture
def client(app):
    with TestClient(app) as c:
        yield c


@pytest.fixture
def document(client) -> dict[str, Any]:
    r = client.get("/openapi.json")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    return r.json()


def _route_operations(app) -> set[tuple[str, str]]:
    """(METHOD, path) of every route the application serves, whatever its kind."""
    out = set()
    for route in app.routes:
        for method in getattr(route, "methods", None) or ():
            out.add((method.upper(), route.path))
    return out


def _documented_operations(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {(method.upper(), path) for path, item in document["paths"].items() for method in item}


# --------------------------------------------------------------------------- coverage and validity


def test_every_route_is_documented_and_every_documented_operation_is_a_route(app, document):
    routes = _route_operations(app)
    documented = _documented_operations(document)
    assert routes - documented == set(), "routes missing from /openapi.json"
    assert documented - routes == set(), "/openapi.json documents operations no route serves"
    # spec 1.3 endpoints 1-29, plus /openapi.json and /metrics, and the two internal ones (POST
    # on an existing path); every GET also as HEAD
    assert len({p for _m, p in routes}) == 25
    assert len(routes) == 50


def test_document_is_valid_openapi(document):
    validate_openapi(document)  # raises on any violation of the OpenAPI 3.1 schema
    assert document["openapi"] == "3.1.0"


def test_operation_ids_are_unique_and_heads_mirror_gets(document):
    ids = [op["operationId"] for item in document["paths"].values() for op in item.values()]
    assert len(ids) == len(set(ids))
    for path, item in document["paths"].items():
        if "head" in item:
            assert set(item["head"]["responses"]) == set(item["get"]["responses"]), path
            assert all("content" not in r for r in item["head"]["responses"].values()), path


def test_path_parameters_match_the_path(document):
    for path, item in document["paths"].items():
        names = re.findall(r"{([^}]+)}", path)
        for method, op in item.items():
            declared = [p["name"] for p in op.get("parameters", []) if p["in"] == "path"]
            assert declared == names, f"{method.upper()} {path}"


def test_request_bodies_are_documented_exactly_where_handlers_read_one(app, document):
    for route in app.routes:
        if not isinstance(route, APIRoute):
            continue
        reads_body = any(d.call.__name__ == "_json_body" for d in route.dependant.dependencies)
        for method in route.methods:
            op = document["paths"][route.path][method.lower()]
            assert ("requestBody" in op) == (reads_body and method != "HEAD"), f"{method} {route.path}"
            if reads_body:
                assert "415" in op["responses"] and "400" in op["responses"], f"{method} {route.path}"


def test_entity_schemas_of_spec_1_2_are_present(document):
    schemas = document["components"]["schemas"]
    for name in (
        "ConnectorInfo",
        "ConnectorStateInfo",
        "TaskInfo",
        "PluginInfo",
        "ConfigInfos",
        "ConfigKeyInfo",
        "ServerInfo",
        "ErrorMessage",
        "ConnectorOffsets",
        "Message",
        "LoggerLevel",
        "CreateConnectorRequest",
        "ConnectorConfigRequest",
        "ConnectorOffsetsRequest",
        "LoggerLevelRequest",
    ):
        assert name in schemas, name


def test_a_route_without_description_fails_the_build(herder):
    app = create_app(herder)

    @app.get("/undocumented", operation_id="undocumented")
    def undocumented() -> None: ...

    with pytest.raises(OpenApiError, match="/undocumented has no description"):
        openapi_document(app)


def test_a_description_without_route_fails_the_build(herder, monkeypatch):
    monkeypatch.setitem(OPERATIONS, "noSuchRoute", {"summary": "x", "responses": {}})
    with pytest.raises(OpenApiError, match="noSuchRoute"):
        openapi_document(create_app(herder))


def test_served_with_trailing_slash_and_as_head(client, document):
    assert client.get("/openapi.json/").json() == document
    r = client.head("/openapi.json")
    assert r.status_code == 200 and r.content == b""


# --------------------------------------------------------------------------- answers conform


class Conformance:
    """Checks a response against the operation the document describes for it."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.registry = Registry().with_resource("urn:openapi", Resource(document, DRAFT202012))
        self.seen: set[str] = set()

    def check(self, operation_id: str, response) -> None:
        op = next(
            op for item in self.document["paths"].values() for op in item.values() if op["operationId"] == operation_id
        )
        self.seen.add(operation_id)
        status = str(response.status_code)
        assert status in op["responses"], f"{operation_id}: undocumented status {status}: {response.text}"
        documented = op["responses"][status]
        for header, spec in documented.get("headers", {}).items():
            if spec.get("required"):
                assert header.lower() in response.headers, f"{operation_id} {status}: no {header}"
        content = documented.get("content")
        if content is None:
            assert response.content == b"", f"{operation_id} {status}: unexpected body {response.text}"
            return
        if "text/plain" in content:
            assert response.headers["content-type"].startswith("text/plain"), response.headers
            assert isinstance(response.text, str)
            return
        assert response.headers["content-type"] == "application/json"
        schema = self._resolvable(content["application/json"]["schema"])
        jsonschema.Draft202012Validator(schema, registry=self.registry).validate(response.json())

    @staticmethod
    def _resolvable(schema: Any) -> Any:
        """Rewrite local ``#/...`` references to the registered document."""
        if isinstance(schema, dict):
            return {
                k: (f"urn:openapi{v}" if k == "$ref" and v.startswith("#") else Conformance._resolvable(v))
                for k, v in schema.items()
            }
        if isinstance(schema, list):
            return [Conformance._resolvable(v) for v in schema]
        return schema


def test_answers_of_every_operation_conform_to_the_description(client, herder, document):
    c = Conformance(document)
    sink = {"connector.class": SINK, "topics": "t", "file": "/tmp/x", "tasks.max": 2, "flag": True}
    source = {"connector.class": SOURCE, "topic": "t", "file": "/tmp/y"}

    c.check("getServerInfo", client.get("/"))
    c.check("getHealth", client.get("/health"))
    c.check("getMetrics", client.get("/metrics"))
    herder.health_status = ("starting", "Worker is still starting up.")
    c.check("getHealth", client.get("/health"))
    c.check("getOpenApi", client.get("/openapi.json"))
    c.check("getOpenApiHead", client.head("/openapi.json"))

    c.check("createConnector", client.post("/connectors", json={"name": "sink", "config": sink}))
    c.check(
        "createConnector", client.post("/connectors", json={"name": "src", "config": source, "initial_state": "paused"})
    )
    c.check("createConnector", client.post("/connectors", json={"name": "sink", "config": sink}))  # 409
    c.check("createConnector", client.post("/connectors", json={"name": "x", "config": {}}))  # 400
    c.check("createConnector", client.post("/connectors", content=b"{", headers={"content-type": "application/json"}))
    c.check("createConnector", client.post("/connectors", content=b"{}", headers={"content-type": "text/plain"}))
    c.check("createConnector", client.post("/connectors", json={"name": "x", "config": [1]}))

    c.check("listConnectors", client.get("/connectors"))
    c.check("listConnectorsHead", client.head("/connectors"))
    c.check("listConnectors", client.get("/connectors?expand=status&expand=info"))
    c.check("listConnectors", client.get("/connectors?expand=bogus"))
    c.check("getConnector", client.get("/connectors/sink"))
    c.check("getConnector", client.get("/connectors/nope"))
    c.check("getConnectorHead", client.head("/connectors/nope"))
    c.check("getConnectorConfig", client.get("/connectors/sink/config"))
    c.check("getConnectorConfig", client.get("/connectors/nope/config"))
    c.check("putConnectorConfig", client.put("/connectors/sink/config", json=sink))
    c.check("putConnectorConfig", client.put("/connectors/new/config", json=sink))
    c.check("putConnectorConfig", client.put("/connectors/new/config", json={**sink, "name": "other"}))
    c.check("patchConnectorConfig", client.patch("/connectors/sink/config", json={"flag": None, "tasks.max": 1}))
    c.check("patchConnectorConfig", client.patch("/connectors/nope/config", json={"a": "b"}))
    c.check("getConnectorStatus", client.get("/connectors/sink/status"))
    herder.task_states["sink"][0] = TaskStateInfo(0, State.FAILED.value, WORKER_ID, "Traceback ...")
    c.check("getConnectorStatus", client.get("/connectors/sink/status"))
    c.check("getConnectorStatus", client.get("/connectors/nope/status"))
    c.check("getTaskConfigs", client.get("/connectors/sink/tasks"))
    c.check("getTaskConfigs", client.get("/connectors/nope/tasks"))
    c.check("getTasksConfig", client.get("/connectors/sink/tasks-config"))
    c.check("getTasksConfig", client.get("/connectors/nope/tasks-config"))
    c.check("getTaskStatus", client.get("/connectors/sink/tasks/0/status"))
    c.check("getTaskStatus", client.get("/connectors/sink/tasks/7/status"))
    c.check("getTaskStatus", client.get("/connectors/sink/tasks/x/status"))
    c.check("restartTask", client.post("/connectors/sink/tasks/0/restart"))
    c.check("restartTask", client.post("/connectors/sink/tasks/9/restart"))
    # the internal endpoints: a standalone herder takes neither (500, as Kafka Connect's)
    c.check("putTaskConfigs", client.post("/connectors/sink/tasks", json=[{"task.class": "x.Task"}]))
    c.check("putTaskConfigs", client.post("/connectors/sink/tasks", json={"task.class": "x.Task"}))  # 400
    c.check("putTaskConfigs", client.post("/connectors/sink/tasks", json=[{"a": None}]))  # 400
    c.check("fenceZombies", client.put("/connectors/src/fence"))
    c.check("restartConnector", client.post("/connectors/sink/restart"))
    c.check("restartConnector", client.post("/connectors/sink/restart?includeTasks=true&onlyFailed=TRUE"))
    c.check("restartConnector", client.post("/connectors/sink/restart?includeTasks=maybe"))
    c.check("restartConnector", client.post("/connectors/nope/restart?includeTasks=true"))
    c.check("pauseConnector", client.put("/connectors/sink/pause"))
    c.check("pauseConnector", client.put("/connectors/nope/pause"))
    c.check("resumeConnector", client.put("/connectors/sink/resume"))
    c.check("resumeConnector", client.put("/connectors/nope/resume"))
    herder.active_topics["sink"] = ["t"]
    c.check("getConnectorTopics", client.get("/connectors/sink/topics"))
    c.check("getConnectorTopics", client.get("/connectors/nope/topics"))
    c.check("resetConnectorTopics", client.put("/connectors/sink/topics/reset"))
    herder.topic_tracking = (False, False)
    c.check("resetConnectorTopics", client.put("/connectors/sink/topics/reset"))

    offsets = {"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 5}}]}
    c.check("alterConnectorOffsets", client.patch("/connectors/sink/offsets", json=offsets))  # not stopped
    c.check("resetConnectorOffsets", client.delete("/connectors/sink/offsets"))
    c.check("stopConnector", client.put("/connectors/sink/stop"))
    c.check("stopConnector", client.put("/connectors/nope/stop"))
    c.check("alterConnectorOffsets", client.patch("/connectors/sink/offsets", json=offsets))
    c.check("alterConnectorOffsets", client.patch("/connectors/sink/offsets", json={"offsets": []}))
    c.check("alterConnectorOffsets", client.patch("/connectors/nope/offsets", json=offsets))
    c.check("getConnectorOffsets", client.get("/connectors/sink/offsets"))
    c.check("getConnectorOffsets", client.get("/connectors/nope/offsets"))
    c.check("resetConnectorOffsets", client.delete("/connectors/sink/offsets"))
    c.check("resetConnectorOffsets", client.delete("/connectors/nope/offsets"))
    c.check("deleteConnector", client.delete("/connectors/sink"))
    c.check("deleteConnector", client.delete("/connectors/sink"))

    c.check("listConnectorPlugins", client.get("/connector-plugins"))
    c.check("listConnectorPlugins", client.get("/connector-plugins?connectorsOnly=false"))
    c.check("getPluginConfig", client.get("/connector-plugins/FileStreamSink/config"))
    c.check("getPluginConfig", client.get("/connector-plugins/Nope/config"))
    c.check(
        "validateConnectorConfig",
        client.put("/connector-plugins/FileStreamSink/config/validate", json={"connector.class": SINK}),
    )
    c.check(
        "validateConnectorConfig",
        client.put("/connector-plugins/FileStreamSource/config/validate", json={"connector.class": SINK}),
    )
    c.check("validateConnectorConfig", client.put("/connector-plugins/FileStreamSink/config/validate", json={}))

    c.check("getLoggerLevels", client.get("/admin/loggers"))
    c.check("setLoggerLevel", client.put("/admin/loggers/org.example", json={"level": "debug"}))
    c.check("setLoggerLevel", client.put("/admin/loggers/org.example?scope=cluster", json={"level": "INFO"}))
    c.check("setLoggerLevel", client.put("/admin/loggers/org.example", json={"level": "LOUD"}))
    c.check("setLoggerLevel", client.put("/admin/loggers/org.example", json={}))
    c.check("getLoggerLevels", client.get("/admin/loggers"))
    c.check("getLoggerLevel", client.get("/admin/loggers/org.example"))
    c.check("getLoggerLevel", client.get("/admin/loggers/not.there"))

    documented = {op["operationId"] for item in document["paths"].values() for op in item.values()}
    gets = {i for i in documented if not i.endswith("Head")}
    assert gets - c.seen == set(), "operations the test did not exercise"
