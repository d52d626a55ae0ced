"""Fuzz every endpoint of a real standalone worker from its own ``/openapi.json``.

schemathesis generates requests (the schema's examples, boundary and negative cases,
random data, and create-then-use chains) against one ``sluice standalone`` worker on the
session's real broker, and checks each answer:

* no 5xx, except the cases in :data:`ALLOWED_5XX` (each with its reason; the lead copies
  the list to docs/compatibility.md);
* the status code is one the description lists for the operation, and the body, its
  content type and its documented headers conform to it;
* requests that violate the description are refused with a 4xx; a 405 names the
  methods the path does serve.

Four connectors exist before the run (a FileStreamSource feeding a FileStreamSink, both
RUNNING, and a STOPPED source and sink whose offsets may be altered), so operations also
meet existing names: the examples of the description are rewritten to name them and this
test's files and topic. The fuzzer may read them and change their offsets, but operations
that would change their config or state go to a copy of the name instead (:func:`_guard`).
Afterwards the worker must still serve, and the four must be as they were.

The run is deterministic (schemathesis's deterministic generation, one worker) and
bounded by ``max-examples``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis.configuration import set_hypothesis_home_dir
from schemathesis.engine import events

from tests import http_client
from tests.helpers import wait_until
from tests.integration.workers import StandaloneWorker

pytestmark = pytest.mark.integration

STRING = "org.apache.kafka.connect.storage.StringConverter"
SOURCE = "fuzz-file-source"  # RUNNING
SINK = "fuzz-file-sink"  # RUNNING
STOPPED_SOURCE = "fuzz-stopped-source"  # STOPPED, so that offsets can be altered and reset
STOPPED_SINK = "fuzz-stopped-sink"  # STOPPED
PROTECTED = (SOURCE, SINK, STOPPED_SOURCE, STOPPED_SINK)

# Operations that change a connector's config or state: never aimed at the pre-created
# ones. Altering or resetting offsets is allowed (it needs a STOPPED connector and
# changes only offsets), and so is resetting the active topics.
MUTATING = {
    "deleteConnector",
    "putConnectorConfig",
    "patchConnectorConfig",
    "pauseConnector",
    "resumeConnector",
    "stopConnector",
    "restartConnector",
    "restartTask",
}

MAX_EXAMPLES = 30


@dataclass(frozen=True)
class Allowed5xx:
    """A 5xx answer the fuzzer may get: ``method`` + ``path`` (the OpenAPI template) when
    ``condition`` holds (``matches``, on the request and the answer), and why."""

    method: str
    path: str
    condition: str
    reason: str
    matches: Callable[[Any, Any], bool]

    def applies(self, case: Any, response: Any) -> bool:
        return (
            case.operation.method.upper() == self.method
            and case.operation.path == self.path
            and self.matches(case, response)
        )


# A plugin of tests/plugins (on the worker's plugin.path) whose config() raises on purpose.
BROKEN_CONFIG_PLUGIN = "sluice_test_transforms.BrokenConfigTransform"

_PLUGIN_CONFIG_RAISES = (
    "the plugin's own config() raises (here the test plugin sluice_test_transforms.BrokenConfigTransform, "
    "which does so on purpose)"
)
_PLUGIN_FAILURE_REASON = (
    "A failure inside the plugin, not a client mistake: Kafka Connect answers 500 too (the exception falls "
    "through to its ConnectExceptionMapper), with the plugin's message."
)


def _message_starts(prefix: str) -> Callable[[Any, Any], bool]:
    def matches(case: Any, response: Any) -> bool:
        try:
            message = json.loads(response.content)["message"]
        except (ValueError, KeyError, TypeError):
            return False
        return isinstance(message, str) and message.startswith(prefix)

    return matches


_KAFKA_TOO = "Kafka Connect answers 500 here too (spec 1.3 #{n}); raised on purpose in {where}."

# Every 5xx the fuzzer may meet, each with its reason. Those of sluice.runtime could be
# 4xx for plain client mistakes (design.md), which is for the runtime to decide.
ALLOWED_5XX: list[Allowed5xx] = [
    Allowed5xx(
        "PATCH",
        "/connectors/{connector}/offsets",
        "the connector is a STOPPED source connector and a `partition` or `offset` map holds an object or "
        "array value: 500 `Offsets may only contain primitive types as values, but field <f> contains a map "
        "or list: <json>`",
        _KAFKA_TOO.format(n=22, where="sluice.runtime.offsets.parse_source_offsets (DataException in Kafka)"),
        _message_starts("Offsets may only contain primitive types as values"),
    ),
    Allowed5xx(
        "PATCH",
        "/connectors/{connector}/offsets",
        "the connector is a STOPPED sink connector and the admin client refuses the new group offsets "
        "(unknown topic or partition, empty topic name, negative partition, NUL in the topic name): 500 "
        "`Failed to alter consumer group offsets for connector <c>: <admin client error>`",
        _KAFKA_TOO.format(n=22, where="sluice.runtime.herder (ConnectException in Kafka)"),
        _message_starts("Failed to alter consumer group offsets for connector "),
    ),
    Allowed5xx(
        "DELETE",
        "/connectors/{connector}/offsets",
        "the connector is a STOPPED sink connector whose consumer group still has members (its tasks have not "
        "left it yet): 500 `Failed to reset consumer group offsets for connector <c> either because its tasks "
        "haven't stopped completely yet ...`",
        _KAFKA_TOO.format(n=23, where="sluice.runtime.herder"),
        _message_starts("Failed to reset consumer group offsets for connector "),
    ),
    Allowed5xx(
        "PATCH",
        "/connectors/{connector}/offsets",
        "the connector's plugin does not support altering offsets (`alter_offsets` raises NotImplementedError): "
        "500 `Failed to modify offsets for connector <c> because it doesn't support external modification of "
        "offsets`",
        _KAFKA_TOO.format(n=22, where="sluice.runtime.herder (UnsupportedOperationException in Kafka)"),
        _message_starts("Failed to modify offsets for connector "),
    ),
    Allowed5xx(
        "DELETE",
        "/connectors/{connector}/offsets",
        "as for PATCH: the connector's plugin does not support altering offsets",
        _KAFKA_TOO.format(n=23, where="sluice.runtime.herder (UnsupportedOperationException in Kafka)"),
        _message_starts("Failed to modify offsets for connector "),
    ),
    Allowed5xx(
        "POST",
        "/connectors/{connector}/tasks",
        "a standalone worker (as this one) takes no task configs from other workers: 500 `Kafka Connect in "
        "standalone mode does not support externally setting task configurations.`",
        "Kafka Connect's standalone herder answers 500 with the same message (UnsupportedOperationException).",
        _message_starts("Kafka Connect in standalone mode does not support externally setting task"),
    ),
    Allowed5xx(
        "PUT",
        "/connectors/{connector}/fence",
        "a standalone worker has no exactly-once sources: 500 `Kafka Connect in standalone mode does not "
        "support exactly-once source connectors.`",
        "Kafka Connect's standalone herder answers 500 with the same message (UnsupportedOperationException).",
        _message_starts("Kafka Connect in standalone mode does not support exactly-once source connectors"),
    ),
    Allowed5xx(
        "GET",
        "/connector-plugins/{plugin}/config",
        _PLUGIN_CONFIG_RAISES,
        _PLUGIN_FAILURE_REASON,
        lambda case, response: case.path_parameters.get("plugin") == BROKEN_CONFIG_PLUGIN,
    ),
    Allowed5xx(
        "HEAD",
        "/connector-plugins/{plugin}/config",
        _PLUGIN_CONFIG_RAISES,
        "As for GET (HEAD is GET without the body).",
        lambda case, response: case.path_parameters.get("plugin") == BROKEN_CONFIG_PLUGIN,
    ),
]


# --------------------------------------------------------------------------- the worker


@pytest.fixture(scope="module")
def work_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rest-fuzz")


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, work_dir: Path):
    w = StandaloneWorker(work_dir, kafka_bootstrap, "fuzz", extra={"key.converter": STRING, "value.converter": STRING})
    w.start()
    # the fuzzing runs with the web console served beside the API (the default)
    assert w.get("/ui/").status_code == 200
    try:
        yield w
    finally:
        code = w.stop()
        assert code == 0, f"worker exited with {code}:\n{w.log()}"


def _connector_running(worker: StandaloneWorker, name: str) -> bool:
    r = worker.get(f"/connectors/{name}/status")
    if r.status_code != 200:
        return False
    status = r.json()
    return status["connector"]["state"] == "RUNNING" and [t["state"] for t in status["tasks"]] == ["RUNNING"]


def _connector_stopped(worker: StandaloneWorker, name: str) -> bool:
    r = worker.get(f"/connectors/{name}/status")
    return r.status_code == 200 and r.json()["connector"]["state"] == "STOPPED" and r.json()["tasks"] == []


@pytest.fixture(scope="module")
def connectors(worker: StandaloneWorker, work_dir: Path) -> dict[str, dict[str, str]]:
    """The pre-created connectors: a file source feeding a file sink, both RUNNING, and a
    STOPPED file source and file sink."""
    source_file = work_dir / "source-in.txt"
    source_file.write_text("one\ntwo\nthree\n")
    topic = f"rest-fuzz-{work_dir.name}"
    configs = {
        SOURCE: {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic},
        SINK: {"connector.class": "FileStreamSink", "file": str(work_dir / "sink-out.txt"), "topics": topic},
        STOPPED_SOURCE: {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic},
        STOPPED_SINK: {"connector.class": "FileStreamSink", "file": str(work_dir / "stopped-out.txt"), "topics": topic},
    }
    for name, config in configs.items():
        body: dict[str, Any] = {"name": name, "config": config}
        if name in (STOPPED_SOURCE, STOPPED_SINK):
            body["initial_state"] = "STOPPED"
        r = http_client.post(f"{worker.url}/connectors", json=body, timeout=60)
        assert r.status_code == 201, r.text
    for name in (SOURCE, SINK):
        wait_until(lambda n=name: _connector_running(worker, n), timeout=90, message=f"{name} RUNNING")
    for name in (STOPPED_SOURCE, STOPPED_SINK):
        wait_until(lambda n=name: _connector_stopped(worker, n), timeout=30, message=f"{name} STOPPED")
    sink_out = work_dir / "sink-out.txt"
    wait_until(
        lambda: sink_out.exists() and sink_out.read_text().splitlines() == ["one", "two", "three"],
        timeout=90,
        message="the sink wrote what the source read",
    )
    return configs


# --------------------------------------------------------------------------- the run


def _with_test_data(document: dict[str, Any], work_dir: Path, plugins: list[str]) -> dict[str, Any]:
    """The served description with this test's data in its examples: files under
    ``work_dir`` and the topic of the pre-created connectors instead of the generic ones,
    the pre-created connectors as example names (except for operations that would change
    them), and the worker's plugins as example plugin names."""
    text = json.dumps(document)
    text = text.replace("/tmp/connect.sink.txt", str(work_dir / "fuzz-created.txt"))
    text = text.replace("/tmp/connect.source.txt", str(work_dir / "source-in.txt"))
    text = text.replace('"connect-test"', json.dumps(f"rest-fuzz-{work_dir.name}"))
    text = text.replace('"local-file-sink"', '"fuzz-created"')
    doc = json.loads(text)
    for item in doc["paths"].values():
        for op in item.values():
            mutating = op["operationId"].removesuffix("Head") in MUTATING
            for param in op.get("parameters", []):
                if param["name"] == "connector" and param["in"] == "path":
                    names = ["fuzz-created", "no-such-connector"] + ([] if mutating else list(PROTECTED))
                    param["examples"] = {n: {"value": n} for n in names}
                elif param["name"] == "task" and param["in"] == "path":
                    param["examples"] = {"first": {"value": 0}, "missing": {"value": 7}}
                elif param["name"] == "plugin" and param["in"] == "path":
                    names = ["FileStreamSink", "FileStreamSource", "NoSuchPlugin", *plugins]
                    param["examples"] = {f"p{i}": {"value": n} for i, n in enumerate(names)}
    return doc


@dataclass
class FuzzRun:
    failures: dict[tuple[str, str, str], str]  # (operation, check, title) -> details and a curl to reproduce
    errors: list[str]
    server_errors: list[str]  # every 5xx, allowed or not
    statuses: Counter[tuple[str, int]]
    guarded: int


def _guard(calls: Counter[tuple[str, int]]) -> tuple[Callable[..., None], Callable[..., None], list[int]]:
    guarded = [0]

    def before_call(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
        """Aim operations that change a connector at a copy of a pre-created name."""
        operation_id = (case.operation.definition.raw or {}).get("operationId", "").removesuffix("Head")
        params = case.path_parameters or {}
        if operation_id in MUTATING and params.get("connector") in PROTECTED:
            params["connector"] = f"{params['connector']}-copy"
            guarded[0] += 1

    def after_call(context: Any, case: Any, response: Any) -> None:
        calls[(f"{case.operation.method.upper()} {case.operation.path}", response.status_code)] += 1

    return before_call, after_call, guarded


SERVER_ERRORS: list[str] = []


@schemathesis.check
def server_error_only_where_allowed(ctx: Any, response: Any, case: Any) -> bool | None:
    """No 5xx, except where :data:`ALLOWED_5XX` says."""
    if response.status_code < 500:
        return None
    body = response.content.decode("utf-8", errors="replace")[:300]
    label = f"{case.operation.method.upper()} {case.operation.path} -> {response.status_code} {body}"
    allowed = [a for a in ALLOWED_5XX if a.applies(case, response)]
    SERVER_ERRORS.append(("allowed: " if allowed else "NOT ALLOWED: ") + label)
    if not allowed:
        raise AssertionError(f"Server error not in ALLOWED_5XX: {response.status_code} {body}")
    return None


def _fuzz(document: dict[str, Any], base_url: str) -> FuzzRun:
    config = schemathesis.Config.from_dict(
        {
            "base-url": base_url,
            "workers": 1,
            "continue-on-failure": True,
            "request-timeout": 120,
            "cache": {"enabled": False},
            "generation": {"max-examples": MAX_EXAMPLES, "deterministic": True, "database": "none"},
            "phases": {"stateful": {"max-steps": 6}},
            "checks": {
                # replaced by server_error_only_where_allowed
                "not_a_server_error": {"enabled": False},
                # a config that fits the schema can still be an invalid connector config (400)
                "positive_data_acceptance": {"enabled": False},
                # the API has no authentication
                "ignored_auth": {"enabled": False},
                "object_level_authorization": {"enabled": False},
            },
        }
    )
    schema = schemathesis.openapi.from_dict(document, config=config)
    statuses: Counter[tuple[str, int]] = Counter()
    before_call, after_call, guarded = _guard(statuses)
    schemathesis.hook(before_call)
    schemathesis.hook(after_call)
    SERVER_ERRORS.clear()
    failures: dict[tuple[str, str, str], str] = {}
    errors: list[str] = []
    try:
        for event in schemathesis.engine.from_schema(schema).execute():
            if isinstance(event, events.ScenarioFinished):
                for nodes in event.recorder.checks.values():
                    for node in nodes:
                        if node.failure_info is None:
                            continue
                        failure = node.failure_info.failure
                        key = (event.recorder.label, node.name, failure.title)
                        failures.setdefault(
                            key, f"[{event.phase.value}] {failure.message}\n    {node.failure_info.code_sample}"
                        )
            elif isinstance(event, events.NonFatalError):
                errors.append(f"{event.label}: {event.info.format()}")
            elif isinstance(event, events.FatalError):
                errors.append(f"fatal: {event.exception!r}")
    finally:
        schemathesis.hooks.unregister(before_call)
        schemathesis.hooks.unregister(after_call)
    return FuzzRun(failures, errors, list(SERVER_ERRORS), statuses, guarded[0])


def test_fuzz_every_endpoint(worker: StandaloneWorker, connectors: dict[str, dict[str, str]], work_dir: Path) -> None:
    r = worker.get("/openapi.json")
    assert r.status_code == 200
    document = r.json()
    operations = {f"{method.upper()} {path}" for path, item in document["paths"].items() for method in item}
    for allowed in ALLOWED_5XX:  # an allowed 5xx is a documented one
        assert "500" in document["paths"][allowed.path][allowed.method.lower()]["responses"], allowed

    plugins = [p["class"] for p in worker.get("/connector-plugins?connectorsOnly=false").json()]
    set_hypothesis_home_dir(work_dir / "hypothesis")  # its caches, out of the checkout
    try:
        run = _fuzz(_with_test_data(document, work_dir, plugins), worker.url)
    finally:
        set_hypothesis_home_dir(None)

    tested = {op for op, _status in run.statuses}
    summary = "\n".join(f"  {op} -> {status}: {n}" for (op, status), n in sorted(run.statuses.items()))
    print(f"\n{sum(run.statuses.values())} requests; pre-created names redirected {run.guarded} times\n{summary}")
    print("5xx answers:\n" + ("\n".join(f"  {e}" for e in run.server_errors) or "  none"))
    assert not run.errors, "\n".join(run.errors)
    assert not run.failures, "\n\n".join(
        f"{op} / {check}: {title}\n{detail}" for (op, check, title), detail in sorted(run.failures.items())
    )
    assert tested == operations, f"operations never called: {sorted(operations - tested)}"

    # The worker still serves, and the connectors made before the run are untouched.
    assert worker.process is not None and worker.process.poll() is None, worker.log()
    assert worker.get("/").status_code == 200
    for name, config in connectors.items():
        assert worker.get(f"/connectors/{name}/config").json() == {**config, "name": name}
    for name in (SOURCE, SINK):
        wait_until(
            lambda n=name: _connector_running(worker, n),
            timeout=60,
            message=lambda n=name: f"{n} still RUNNING: {worker.get(f'/connectors/{n}/status').text}",
        )
    for name in (STOPPED_SOURCE, STOPPED_SINK):
        assert _connector_stopped(worker, name)
