"""Requests between the workers of a group (Kafka's internal endpoints, KIP-507 signatures):
a connector's owner that does not lead sends its task configs to the leader, signed with
the session key; the leader checks the signature before it writes them."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from sluice.api.errors import NotFoundError
from sluice.runtime.config import WorkerConfig
from sluice.runtime.herder.base import ConnectRestError, RequestForwardError, SignedRequest
from sluice.runtime.herder.distributed import DistributedHerder
from sluice.runtime.herder.request_signing import (
    SIGNATURE_ALGORITHM_HEADER,
    SIGNATURE_HEADER,
    InternalRequestSignature,
    generate_session_key,
    signature_headers,
    verify_internal_request,
)
from sluice.storage.kafka_formats import SessionKey
from sluice.storage.memory import MemoryConfigBackingStore, MemoryStatusBackingStore
from tests.helpers import wait_until
from tests.unit.runtime.distributed.test_request_routing import FakeMember, FakeWorker

KEY = generate_session_key("HmacSHA256")
TASKS = [{"task.class": "x.Task", "n": "0"}, {"task.class": "x.Task", "n": "1"}]
WORKER_PROPS = {
    "bootstrap.servers": "localhost:9092",
    "group.id": "g",
    "config.storage.topic": "c",
    "offset.storage.topic": "o",
    "status.storage.topic": "s",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
}


def test_a_signature_is_the_base64_hmac_of_the_body_named_by_its_java_algorithm() -> None:
    # RFC 4231, test case 1: what Java's Mac("HmacSHA256") gives for this key and data.
    headers = signature_headers(b"\x0b" * 20, "HmacSHA256", b"Hi There")
    assert headers[SIGNATURE_ALGORITHM_HEADER] == "HmacSHA256"
    assert base64.b64decode(headers[SIGNATURE_HEADER]).hex() == (
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
    )


def _verify(headers: dict[str, str], body: bytes, key: bytes | None = KEY, accepted: tuple[str, ...] = ("HmacSHA256",)):
    verify_internal_request(InternalRequestSignature.from_headers(headers, body), key, accepted)


def test_requests_not_signed_properly_get_kafkas_answers() -> None:
    body = b'[{"a":"b"}]'
    _verify(signature_headers(KEY, "HmacSHA256", body), body)  # signed properly: no error
    cases: list[tuple[dict[str, str], bytes, bytes | None, int, str]] = [
        ({}, body, KEY, 400, "Internal request missing required signature"),
        (signature_headers(KEY, "HmacSHA512", body), body, KEY, 400, "does not support the 'HmacSHA512' key"),
        ({SIGNATURE_HEADER: "AAAA", SIGNATURE_ALGORITHM_HEADER: "NoSuchMac"}, body, KEY, 400, "NoSuchMac"),
        ({SIGNATURE_HEADER: "not base64!", SIGNATURE_ALGORITHM_HEADER: "HmacSHA256"}, body, KEY, 400, "base64"),
        (signature_headers(KEY, "HmacSHA256", body), body, None, 503, "has not been able to read a session key"),
        (signature_headers(KEY, "HmacSHA256", body), b"[]", KEY, 403, "Internal request contained invalid signature."),
        (signature_headers(b"another key", "HmacSHA256", body), body, KEY, 403, "invalid signature"),
    ]
    for headers, sent, key, status, message in cases:
        with pytest.raises(ConnectRestError) as raised:
            _verify(headers, sent, key)
        assert raised.value.status == status, (headers, raised.value)
        assert message in str(raised.value)


class SessionedMember(FakeMember):
    protocol_version = 2


class ConfiguredWorker(FakeWorker):
    def __init__(self) -> None:
        super().__init__()
        self.config = WorkerConfig.distributed(WORKER_PROPS)

    def runs_connector(self, name: str) -> bool:
        return True

    def connector_task_configs(self, name: str, max_tasks: int) -> list[dict[str, str]]:
        return [dict(config) for config in TASKS]


def _herder(member: FakeMember, sent: list[tuple[str, str, bytes | None, dict[str, str]]]) -> DistributedHerder:
    store = MemoryConfigBackingStore()
    store.put_connector_config("c", {"connector.class": "x.Source", "tasks.max": "2"})

    def send(method: str, url: str, body: bytes | None, headers: dict[str, str]) -> None:
        sent.append((method, url, body, headers))

    herder = DistributedHerder(
        ConfiguredWorker(),
        store,
        MemoryStatusBackingStore(),
        lambda: "cluster",
        member_factory=None,  # type: ignore[arg-type]
        internal_requests=send,
    )
    herder.member = member  # type: ignore[assignment]
    herder._session_key = SessionKey(KEY, "HmacSHA256", 0)
    herder._assigned.set()
    herder.rebalance_wait_s = 0.05
    return herder


def test_an_owner_that_does_not_lead_sends_its_task_configs_to_the_leader_signed() -> None:
    sent: list[Any] = []
    herder = _herder(SessionedMember("http://leader:8083/", is_leader=False), sent)
    herder._owned_connectors.add("c")
    herder._generate_task_configs("c")
    wait_until(lambda: sent, timeout=10, message="no request to the leader")
    method, url, body, headers = sent[0]
    assert (method, url) == ("POST", "http://leader:8083/connectors/c/tasks")
    assert json.loads(body) == TASKS
    assert headers["Content-Type"] == "application/json"
    _verify(headers, body)  # the leader accepts the signature
    assert herder.config_store.snapshot().task_configs.get("c") is None  # the leader writes them, not the owner
    herder.stop()


def test_the_leader_writes_task_configs_only_from_a_request_signed_with_the_session_key() -> None:
    herder = _herder(SessionedMember("http://leader:8083/", is_leader=True), [])
    body = json.dumps(TASKS).encode()
    with pytest.raises(ConnectRestError) as raised:
        herder.put_task_configs("c", TASKS, SignedRequest(signature_headers(b"stale key", "HmacSHA256", body), body))
    assert raised.value.status == 403
    with pytest.raises(ConnectRestError) as raised:
        herder.put_task_configs("c", TASKS, SignedRequest({}, body))
    assert raised.value.status == 400
    assert herder.config_store.snapshot().task_configs.get("c") is None

    herder.put_task_configs("c", TASKS, SignedRequest(signature_headers(KEY, "HmacSHA256", body), body))
    assert herder.config_store.snapshot().task_configs["c"] == TASKS
    with pytest.raises(NotFoundError, match="Connector missing not found"):
        herder.put_task_configs("missing", TASKS, SignedRequest(signature_headers(KEY, "HmacSHA256", body), body))
    herder.stop()


def test_a_worker_that_does_not_lead_sends_the_task_configs_it_receives_on_to_the_leader() -> None:
    herder = _herder(SessionedMember("http://leader:8083/", is_leader=False), [])
    body = json.dumps(TASKS).encode()
    with pytest.raises(RequestForwardError) as raised:
        herder.put_task_configs("c", TASKS, SignedRequest(signature_headers(KEY, "HmacSHA256", body), body))
    assert raised.value.forward_url == "http://leader:8083/"
    herder.stop()


def test_a_distributed_workers_signature_algorithm_must_be_one_it_verifies() -> None:
    from sluice.api.errors import ConfigError

    with pytest.raises(ConfigError, match="Signature algorithm must be present in inter.worker.verification"):
        WorkerConfig.distributed({**WORKER_PROPS, "inter.worker.signature.algorithm": "HmacSHA512"})
    config = WorkerConfig.distributed(
        {
            **WORKER_PROPS,
            "inter.worker.signature.algorithm": "HmacSHA512",
            "inter.worker.verification.algorithms": "HmacSHA256,HmacSHA512",
        }
    )
    assert config.get("inter.worker.verification.algorithms") == ["HmacSHA256", "HmacSHA512"]
    with pytest.raises(ConfigError, match="not supported"):
        WorkerConfig.distributed({**WORKER_PROPS, "inter.worker.key.generation.algorithm": "AES"})
