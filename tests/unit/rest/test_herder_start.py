"""A worker's REST API while its herder is starting: the worker's own resources answer at
once, requests about connectors wait for the herder as Kafka's queue does, and give up
with Kafka's "Request timed out" and the stage the worker is in."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from starlette.testclient import TestClient

from sluice.rest import app as rest_app
from sluice.rest import create_app

from .fake_herder import FakeHerder

STAGE = "The worker is currently starting its Spark session, which began at 2026-11-28T10:00:00.000Z"


class StartingHerder(FakeHerder):
    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()

    def await_started(self, timeout_s: float) -> bool:
        return self.started.wait(timeout_s)

    def starting_stage(self) -> str | None:
        return None if self.started.is_set() else STAGE


@pytest.fixture
def herder() -> StartingHerder:
    return StartingHerder()


@pytest.fixture
def client(herder: StartingHerder):
    with TestClient(create_app(herder)) as c:
        yield c


def test_a_request_about_connectors_times_out_with_the_stage(client: TestClient, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(rest_app, "HERDER_START_WAIT_S", 0.2)
    r = client.get("/connectors")
    assert r.status_code == 500
    assert r.json() == {"error_code": 500, "message": f"Request timed out. {STAGE}"}


def test_the_workers_own_resources_answer_while_it_starts(client: TestClient, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(rest_app, "HERDER_START_WAIT_S", 0.2)
    assert client.get("/").status_code == 200
    assert client.get("/connector-plugins").status_code == 200
    assert client.get("/admin/loggers").status_code == 200


def test_a_request_made_while_starting_is_served_once_the_herder_started(client: TestClient, herder: StartingHerder):
    answers: list[Any] = []
    body = {"name": "s1", "config": {"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector"}}
    thread = threading.Thread(target=lambda: answers.append(client.post("/connectors", json=body)), daemon=True)
    thread.start()
    thread.join(0.3)
    assert answers == [] and herder.configs == {}  # held
    herder.started.set()
    thread.join(10)
    assert answers[0].status_code == 201
    assert "s1" in herder.configs
