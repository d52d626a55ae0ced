"""What fuzzing the REST API (tests/integration/test_rest_fuzz.py) found, pinned down
against the FakeHerder: each case used to answer 500 or an inaccurate header."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from sluice.rest import create_app

from .fake_herder import FakeHerder

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def client():
    with TestClient(create_app(FakeHerder())) as c:
        yield c


def _allow(response) -> list[str]:
    return sorted(m.strip() for m in response.headers["allow"].split(","))


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("OPTIONS", "/connectors", ["GET", "HEAD", "POST"]),
        ("DELETE", "/connectors/c/config", ["GET", "HEAD", "PATCH", "PUT"]),
        ("POST", "/connectors/c", ["DELETE", "GET", "HEAD"]),
        ("PUT", "/connectors/c/offsets", ["DELETE", "GET", "HEAD", "PATCH"]),
        ("DELETE", "/admin/loggers/x", ["GET", "HEAD", "PUT"]),
        ("GET", "/connectors/c/pause", ["PUT"]),
        ("POST", "/connectors/c/config/", ["GET", "HEAD", "PATCH", "PUT"]),  # trailing slash
    ],
)
def test_405_names_every_method_the_path_serves(client, method, path, allowed):
    # Starlette named only the methods of the first route matching the path.
    r = client.request(method, path)
    assert r.status_code == 405
    assert r.json() == {"error_code": 405, "message": "HTTP 405 Method Not Allowed"}
    assert _allow(r) == allowed


@pytest.mark.parametrize("shape", ["[" * 100_000 + "]" * 100_000, '{"a":' * 5000 + "1" + "}" * 5000])
def test_deeply_nested_body_is_400_not_500(client, shape):
    # json.loads raised RecursionError, which fell through to the catch-all 500.
    r = client.post("/connectors", content=shape.encode(), headers=JSON)
    assert r.status_code == 400
    assert r.json() == {
        "error_code": 400,
        "message": "Request body is not valid JSON: nested more than 100 levels deep",
    }


def test_nesting_limit_applies_to_every_body(client):
    deep = '{"offsets": [{"partition": ' + '{"a":' * 120 + "1" + "}" * 120 + ', "offset": null}]}'
    r = client.patch("/connectors/c/offsets", content=deep.encode(), headers=JSON)
    assert r.status_code == 400
    assert "nested more than 100 levels deep" in r.json()["message"]
    shallow = '{"offsets": [{"partition": ' + '{"a":' * 90 + "1" + "}" * 90 + ', "offset": null}]}'
    r = client.patch("/connectors/c/offsets", content=shallow.encode(), headers=JSON)
    assert r.status_code == 404  # parsed; the connector does not exist


@pytest.mark.parametrize(("level", "kind"), [({"a": 1}, "object"), (["DEBUG"], "array")])
def test_logger_level_of_the_wrong_shape_is_400(client, level, kind):
    # Used to answer 404 "invalid log level '{'a': '1'}'." (a Python repr).
    r = client.put("/admin/loggers/org.example", json={"level": level})
    assert r.status_code == 400
    assert r.json() == {"error_code": 400, "message": f"Field 'level' must be a JSON string, not {kind}"}


@pytest.mark.parametrize(
    "body",
    [
        b'{"name": "s\\ud800", "config": {"connector.class": "FileStreamSource"}}',
        b'{"name": "s", "config": {"connector.class": "FileStreamSource", "x": "\\udfff"}}',
        b'{"name": "s", "config": {"connector.class": "FileStreamSource", "\\ud83d": "x"}}',
    ],
)
def test_body_with_an_unpaired_surrogate_is_400(client, body):
    # Such a connector was created, and from then on GET /connectors answered 500:
    # Python decodes the escape into a string UTF-8 cannot encode.
    r = client.post("/connectors", content=body, headers=JSON)
    assert r.status_code == 400
    assert r.json()["message"].startswith("Request body is not valid JSON: it contains an unpaired UTF-16 surrogate")
    assert client.get("/connectors").json() == []


def test_a_surrogate_pair_is_one_character_and_fine(client):
    r = client.post(
        "/connectors", content=b'{"name": "s\\ud83d\\ude00", "config": {"connector.class": "Sink"}}', headers=JSON
    )
    assert r.status_code == 201
    assert r.json()["name"] == "s\U0001f600"


def test_answers_holding_a_lone_surrogate_are_still_json(client):
    # A config read from a properties file can hold one ("\ud800" is a valid escape there).
    herder = client.app.state.herder
    herder.configs["p"] = {"connector.class": "Sink", "name": "p", "note": "a\ud800b"}
    r = client.get("/connectors/p/config")
    assert r.status_code == 200
    assert b'"a\\ud800b"' in r.content
    assert r.json()["note"] == "a\ud800b"
