"""Acceptance: Kafka Connect's own Java plugins on Sluice — jars on ``plugin.path``, found
by Kafka's plugin scan in the worker's JVM, their connectors in the worker and their tasks
in the JVM task host (a Spark task in the executors' JVM).

Kafka's ``connect-file`` 4.3.1 jar (from Maven Central) sits next to Sluice's built-in
FileStream connectors, which carry the same class names: ``connector.plugin.version``
picks the Java ones. Kafka's test connectors (``connect-test-plugins``) go on the worker's
``CLASSPATH``, as Kafka loads them only from its own class path.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from sluice import __version__ as sluice_version
from sluice_devtools.jars import kafka_connect_classpath, kafka_connect_test_plugins_classpath
from sluice_devtools.processes import process_info
from tests import http_client
from tests.helpers import read_topic, wait_until
from tests.integration.kafka_connect_reference import ConnectDistributedWorker
from tests.integration.workers import TEST_PLUGINS, DistributedWorker, StandaloneWorker

pytestmark = pytest.mark.integration

KAFKA_VERSION = "4.3.1"
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
VERSIONED = "demo.versioned.GreetingSourceConnector"


def _java_worker(
    tmp: Path, bootstrap: str, name: str, extra: dict[str, str | None] | None = None, more_plugins: str = ""
) -> StandaloneWorker:
    _, file_plugin_dir = kafka_connect_classpath()
    plugin_path = ",".join(p for p in (str(TEST_PLUGINS), str(file_plugin_dir), more_plugins) if p)
    discovery = {"plugin.discovery": None} if more_plugins else {}  # built here: no manifests
    return StandaloneWorker(
        tmp,
        bootstrap,
        name,
        {"plugin.path": plugin_path, **discovery, **(extra or {})},
        env={"CLASSPATH": os.pathsep.join(map(str, kafka_connect_test_plugins_classpath()))},
    )


@pytest.fixture(scope="module")
def built_plugins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plugin.path directory of Java plugins compiled here: ``greeting-a`` and
    ``greeting-b``, two connectors bundling two versions of one library class;
    ``versioned-1.0``/``versioned-2.0``, two versions of one connector class; and
    ``offset-reading``, a connector that reads its offsets through its context."""
    classpath, _ = kafka_connect_classpath()
    connect_api = [p for p in classpath if p.name.startswith(("connect-api-", "kafka-clients-"))]
    plugins = tmp_path_factory.mktemp("built-plugins")
    for pkg, answer in (("a", "one"), ("b", "two")):
        directory = plugins / f"greeting-{pkg}"
        directory.mkdir()
        library = directory / f"greeting-lib-{answer}.jar"
        _javac({"Greeting.java": _LIBRARY % answer}, [], library)
        source = _PLUGIN % {"pkg": pkg, "version": f"1.0.{pkg}", "value": "demo.lib.Greeting.text()"}
        _javac({"GreetingSourceConnector.java": source}, [*connect_api, library], directory / f"{pkg}.jar")
    for version in ("1.0", "2.0"):
        directory = plugins / f"versioned-{version}"
        directory.mkdir()
        source = _PLUGIN % {"pkg": "versioned", "version": version, "value": f'"runs {version}"'}
        _javac({"GreetingSourceConnector.java": source}, connect_api, directory / "versioned.jar")
    (plugins / "offset-reading").mkdir()
    _javac({"OffsetReadingConnector.java": _OFFSET_READING}, connect_api, plugins / "offset-reading" / "reading.jar")
    return plugins


@pytest.fixture(scope="module")
def java_worker(
    kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory, built_plugins: Path
) -> Iterator[StandaloneWorker]:
    worker = _java_worker(
        tmp_path_factory.mktemp("java-plugins"),
        kafka_bootstrap,
        "java",
        {"offset.flush.interval.ms": "1000"},
        more_plugins=str(built_plugins),
    )
    worker.start()
    try:
        yield worker
    finally:
        worker.stop()


@pytest.fixture(scope="module")
def kafka_connect(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectDistributedWorker]:
    """Apache Kafka Connect 4.3.1 with the same connect-file jar on its plugin.path."""
    worker = ConnectDistributedWorker.of_its_own(
        tmp_path_factory.mktemp("kafka-connect"), kafka_bootstrap, "java-plugins"
    )
    worker.start()
    try:
        yield worker
    finally:
        worker.stop()


def _put(worker: StandaloneWorker, name: str, config: dict[str, str]) -> httpx2.Response:
    return http_client.put(f"{worker.url}/connectors/{name}/config", json=config, timeout=60)


def _status(worker: StandaloneWorker, name: str) -> dict[str, Any]:
    answer = worker.get(f"/connectors/{name}/status")
    return answer.json() if answer.status_code == 200 else {}


def _running_versions(worker: StandaloneWorker, name: str) -> tuple[str, ...] | None:
    status = _status(worker, name)
    tasks = status.get("tasks") or []
    states = [status.get("connector", {}).get("state"), *(t["state"] for t in tasks)]
    if not tasks or any(state != "RUNNING" for state in states):
        return None
    return (status["connector"]["version"], *(t["version"] for t in tasks))


def test_plugin_listing_shows_both_runtimes_of_one_class(java_worker: StandaloneWorker) -> None:
    plugins = java_worker.get("/connector-plugins?connectorsOnly=false").json()
    versions = {(p["class"], p.get("version")) for p in plugins}
    assert (FILE_SOURCE, sluice_version) in versions  # Sluice's built-in
    assert (FILE_SOURCE, KAFKA_VERSION) in versions  # Kafka's jar on plugin.path
    assert (FILE_SINK, KAFKA_VERSION) in versions
    # Kafka's test connectors are left out of the listing, as Kafka leaves them out.
    assert not [p for p in plugins if ".tools." in p["class"]]


def test_a_version_nobody_has_is_refused_naming_the_installed_ones(java_worker: StandaloneWorker) -> None:
    config = {"connector.class": FILE_SOURCE, "connector.plugin.version": "9.9.9", "topic": "t", "file": "/dev/null"}
    answer = http_client.put(
        f"{java_worker.url}/connector-plugins/FileStreamSourceConnector/config/validate", json=config, timeout=60
    )
    assert answer.status_code == 200
    values = {c["value"]["name"]: c["value"] for c in answer.json()["configs"]}
    errors = values["connector.plugin.version"]["errors"]
    assert errors and "9.9.9" in errors[0]
    assert f"[{sluice_version}, {KAFKA_VERSION}]" in errors[0]


def test_two_versions_of_one_java_plugin_run_side_by_side(
    java_worker: StandaloneWorker, kafka_bootstrap: str, unique_name: str
) -> None:
    """Versions 1.0 and 2.0 of one connector class, each in its own plugin directory: each
    connector runs the version it asks for (its status shows the instance's own
    ``version()``), no version asked runs the latest, and an unknown one is refused.
    (Kafka's own connect-file jars cannot show this: their ``version()`` is the version of
    the kafka-clients they run with, so connect-file 4.2.0 on a 4.3.1 runtime says 4.3.1, on
    Kafka Connect too.)"""
    listed = {(p["class"], p.get("version")) for p in java_worker.get("/connector-plugins").json()}
    assert {(VERSIONED, "1.0"), (VERSIONED, "2.0")} <= listed
    config_of = f"{java_worker.url}/connector-plugins/{VERSIONED}/config"
    assert {k["name"] for k in http_client.get(config_of, params={"version": "1.0"}, timeout=60).json()} >= {"topic"}
    assert http_client.get(config_of, params={"version": "9.9.9"}, timeout=60).status_code == 404
    assert http_client.get(config_of, params={"version": "[1.0"}, timeout=60).status_code == 400
    for version, asked in (("1.0", "1.0"), ("2.0", "[1.5,)"), ("2.0", None)):
        name = f"versioned-{version}-{asked or 'latest'}".replace("[", "").replace(",", "").replace(")", "")
        topic = f"{unique_name}-{name}"
        config = {"connector.class": VERSIONED, "topic": topic, "value.converter": STRING_CONVERTER}
        if asked is not None:
            config["connector.plugin.version"] = asked
        assert _put(java_worker, name, config).status_code == 201
        versions = wait_until(lambda n=name: _running_versions(java_worker, n), timeout=90, message=f"{name} running")
        assert set(versions) == {version}
        assert _first_value(kafka_bootstrap, topic) == f"runs {version}".encode()
        assert http_client.delete(f"{java_worker.url}/connectors/{name}", timeout=60).status_code == 204
    refused = _put(
        java_worker,
        "versioned-missing",
        {"connector.class": VERSIONED, "topic": "t", "connector.plugin.version": "3.0"},
    )
    assert refused.status_code == 400 and "available versions: [1.0, 2.0]" in refused.json()["message"]


def test_a_python_only_converter_or_transform_is_refused_for_a_java_connector(java_worker: StandaloneWorker) -> None:
    config = {
        "connector.class": FILE_SOURCE,
        "connector.plugin.version": KAFKA_VERSION,
        "topic": "t",
        "file": "/dev/null",
        "value.converter": "io.confluent.connect.avro.AvroConverter",  # Sluice's, not a jar here
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",  # Kafka's own: fine
        "transforms": "cast",
        "transforms.cast.type": "sluice.transforms.cast.CastValue",  # a Python path
        "transforms.cast.spec": "string",
    }
    answer = http_client.put(
        f"{java_worker.url}/connector-plugins/FileStreamSourceConnector/config/validate", json=config, timeout=60
    )
    values = {c["value"]["name"]: c["value"] for c in answer.json()["configs"]}
    assert "is not a Java plugin" in " ".join(values["value.converter"]["errors"])
    assert "is not a Java plugin" in " ".join(values["transforms.cast.type"]["errors"])
    assert values["key.converter"]["errors"] == []
    # the same config with Sluice's own FileStreamSource (no version asked) is fine on that account
    del config["connector.plugin.version"]
    answer = http_client.put(
        f"{java_worker.url}/connector-plugins/FileStreamSourceConnector/config/validate", json=config, timeout=60
    )
    values = {c["value"]["name"]: c["value"] for c in answer.json()["configs"]}
    assert not [e for e in values["value.converter"]["errors"] if "Java" in e]


@pytest.mark.parametrize(
    ("kind", "where"),
    [("Source", "MockSourceTask.poll"), ("Sink", "MockSinkTask.put")],
)
def test_a_failing_java_task_is_failed_with_its_java_trace_and_restarts(
    java_worker: StandaloneWorker, unique_name: str, kind: str, where: str
) -> None:
    name = f"java-mock-{kind.lower()}-failure"
    config = {
        "connector.class": f"org.apache.kafka.connect.tools.Mock{kind}Connector",
        "connector.plugin.version": KAFKA_VERSION,
        "mock_mode": "task-failure",
        "delay_ms": "500",
        "tasks.max": "1",
        **({"topics": f"{unique_name}-in"} if kind == "Sink" else {}),
    }
    assert _put(java_worker, name, config).status_code == 201

    def failed_trace() -> str | None:
        tasks = _status(java_worker, name).get("tasks") or []
        return tasks[0].get("trace") if tasks and tasks[0]["state"] == "FAILED" else None

    trace = wait_until(failed_trace, timeout=90, message="the Java mock task FAILED")
    assert "java.lang.RuntimeException" in trace
    assert f"at sluice-connect-runtime//org.apache.kafka.connect.tools.{where}" in trace
    restarted = http_client.post(f"{java_worker.url}/connectors/{name}/tasks/0/restart", timeout=60)
    assert restarted.status_code == 204
    wait_until(lambda: java_worker.task_state(name) == "RUNNING", timeout=60, message="the task running again")
    wait_until(failed_trace, timeout=60, message="the restarted Java mock task FAILED again")
    assert http_client.delete(f"{java_worker.url}/connectors/{name}", timeout=60).status_code == 204


def test_java_file_pipeline_is_byte_identical_across_a_restart(
    kafka_bootstrap: str, unique_name: str, tmp_path: Path
) -> None:
    """Kafka's FileStreamSource → topic → Kafka's FileStreamSink, both Java, both at
    4.3.1; lines added while the worker was down arrive after its restart, once each."""
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    # ASCII only: Kafka's FileStreamSourceTask counts its position in characters and skips
    # that many bytes on restart, so with multi-byte characters it repeats lines (as it does
    # on Kafka Connect: it is the connector's own code running here).
    source_file.write_text("".join(f"line {i}\n" for i in range(1, 2001)), encoding="utf-8")
    topic = f"{unique_name}-java-file"
    connectors = {
        "java-file-source": {
            "connector.class": FILE_SOURCE,
            "connector.plugin.version": KAFKA_VERSION,
            "file": str(source_file),
            "topic": topic,
        },
        "java-file-sink": {
            "connector.class": "FileStreamSink",  # Kafka's alias, at the Java plugin's version
            "connector.plugin.version": KAFKA_VERSION,
            "file": str(sink_file),
            "topics": topic,
        },
    }

    def same_bytes() -> bool:
        return sink_file.exists() and sink_file.read_bytes() == source_file.read_bytes()

    # Offsets committed every second: Kafka's offset committer in the task host follows it.
    worker = _java_worker(
        tmp_path / "worker", kafka_bootstrap, "java-file", {"offset.flush.interval.ms": "1000"}
    ).start()
    try:
        for name, config in connectors.items():
            assert _put(worker, name, config).status_code == 201, name
        for name in connectors:
            versions = wait_until(lambda n=name: _running_versions(worker, n), timeout=90, message=f"{name} running")
            assert set(versions) == {KAFKA_VERSION}
        wait_until(same_bytes, timeout=90, message="the sink file equal to the source file")
        assert "A JVM task host is ready" in worker.log()
        assert worker.stop() == 0
        with source_file.open("a", encoding="utf-8") as out:
            out.write("".join(f"after restart {i}\n" for i in range(500)))
        worker.start()
        wait_until(same_bytes, timeout=120, message="the lines added while down, once each, after the restart")
        expected = [{"partition": {"filename": str(source_file)}, "offset": {"position": source_file.stat().st_size}}]
        wait_until(
            lambda: worker.get("/connectors/java-file-source/offsets").json()["offsets"] == expected,
            timeout=30,
            message=lambda: f"the source's offset at the file's end: {json.dumps(expected)}",
        )
    finally:
        worker.stop()


def test_java_plugins_log_at_info_in_their_context_and_admin_loggers_sets_their_level(
    java_worker: StandaloneWorker, unique_name: str, tmp_path: Path
) -> None:
    """As on Kafka Connect: a Java connector's INFO lines are in the worker's log with
    ``[connector|worker]``, and ``/admin/loggers`` sets the level a Java task logs at."""
    source_file = tmp_path / "in.txt"
    source_file.write_text("one\n", encoding="utf-8")
    name = "java-logging"
    config = {
        "connector.class": FILE_SOURCE,
        "connector.plugin.version": KAFKA_VERSION,
        "file": str(source_file),
        "topic": f"{unique_name}-logging",
    }
    namespace = "org.apache.kafka.connect.file"
    try:
        assert _put(java_worker, name, config).status_code == 201
        started = f"INFO [{name}|worker] Starting file source connector reading from {source_file}"
        wait_until(lambda: started in java_worker.log(), timeout=60, message="the Java connector's INFO line")
        wait_until(lambda: java_worker.task_state(name) == "RUNNING", timeout=60, message="the Java task running")
        answer = http_client.put(f"{java_worker.url}/admin/loggers/{namespace}", json={"level": "TRACE"}, timeout=30)
        assert answer.status_code == 200 and namespace in answer.json()
        with source_file.open("a", encoding="utf-8") as out:
            out.write("two\n")
        read = f"[{name}|task-0] Read a line from {source_file}"  # FileStreamSourceTask, at TRACE
        wait_until(lambda: read in java_worker.log(), timeout=60, message="the Java task's TRACE line")
    finally:
        http_client.put(f"{java_worker.url}/admin/loggers/{namespace}", json={"level": "INFO"}, timeout=30)
        http_client.delete(f"{java_worker.url}/connectors/{name}", timeout=60)


def _logged_producer_settings(log: str, client_id: str) -> dict[str, str]:
    """The settings in the last ``ProducerConfig values:`` dump of the producer ``client_id``."""
    found: dict[str, str] = {}
    for dump in log.split("ProducerConfig values:")[1:]:
        settings = {}
        for line in dump.splitlines()[1:]:
            if not line.startswith("\t"):
                break
            key, _, value = line.strip().partition(" = ")
            settings[key] = value
        if settings.get("client.id") == client_id:
            found = settings
    return found


def test_a_java_source_task_buffers_1_mib_in_its_producer_unless_its_config_says(
    java_worker: StandaloneWorker, kafka_bootstrap: str, unique_name: str, tmp_path: Path
) -> None:
    """Java tasks share their host's JVM: a source task's producer buffers 1 MiB instead of
    Kafka's 32 (docs/compatibility.md), and ``producer.override.buffer.memory`` still sets it —
    as Kafka's producer logs its configuration."""
    source_file = tmp_path / "in.txt"
    source_file.write_text("one\n", encoding="utf-8")
    logger = "org.apache.kafka.common.config.AbstractConfig"  # logs each client's configuration
    expected = {"java-buffer-default": "1048576", "java-buffer-override": "3145728"}
    try:
        answer = http_client.put(f"{java_worker.url}/admin/loggers/{logger}", json={"level": "INFO"}, timeout=30)
        assert answer.status_code == 200 and logger in answer.json()
        for name in expected:
            config = {
                "connector.class": FILE_SOURCE,
                "connector.plugin.version": KAFKA_VERSION,
                "file": str(source_file),
                "topic": f"{unique_name}-{name}",
                "value.converter": STRING_CONVERTER,
            }
            if name == "java-buffer-override":
                config["producer.override.buffer.memory"] = expected[name]
            assert _put(java_worker, name, config).status_code == 201
        for name, buffer in expected.items():
            settings = wait_until(
                lambda name=name: _logged_producer_settings(java_worker.log(), f"connector-producer-{name}-0"),
                timeout=60,
                message=f"the configuration of {name}'s producer in the worker's log",
            )
            assert settings["buffer.memory"] == buffer
            assert [m.value() for m in read_topic(kafka_bootstrap, f"{unique_name}-{name}", 1)] == [b"one"]
    finally:
        http_client.put(f"{java_worker.url}/admin/loggers/{logger}", json={"level": "WARN"}, timeout=30)
        for name in expected:
            http_client.delete(f"{java_worker.url}/connectors/{name}", timeout=60)


# Keys whose recommended values list the installed plugins or versions, which differ between
# the two workers (Sluice lists its built-ins too); their other fields are compared.
_INSTALLED_LISTS = re.compile(r"^(key|value|header)\.converter(\.plugin\.version)?$|^connector\.plugin\.version$")
# The framework's keys are described in Sluice's own words; a Java plugin's own keys in the
# plugin's words, the same on both.
_FRAMEWORK = re.compile(
    r"^(name|connector\.class|connector\.plugin\.version|tasks\.max|tasks\.max\.enforce|"
    r"(key|value|header)\.converter(\.plugin\.version)?|config\.action\.reload|transforms|predicates|"
    r"errors\..*|topic\.creation\.groups|exactly\.once\.support|transaction\.boundary(\.interval\.ms)?|"
    r"offsets\.storage\.topic|topics|topics\.regex)$"
)


def _by_key(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    keys = {}
    for config in answer["configs"]:
        definition, value = dict(config["definition"]), dict(config["value"])
        name = definition["name"]
        if _FRAMEWORK.match(name):
            definition.pop("documentation", None)
        if _INSTALLED_LISTS.match(name):
            value.pop("recommended_values", None)
            definition.pop("default_value", None)
        keys[name] = {"definition": definition, "value": value}
    return keys


@pytest.mark.parametrize(
    "config",
    [
        {"connector.class": FILE_SOURCE, "topic": "t", "file": "/tmp/in.txt"},
        {"connector.class": FILE_SOURCE, "file": "/tmp/in.txt", "batch.size": "many"},
        {"connector.class": FILE_SINK, "topics": "t", "file": "/tmp/out.txt", "tasks.max": "0"},
        {"connector.class": FILE_SINK, "topics": "t", "topics.regex": "t.*"},
    ],
    ids=["source-valid", "source-missing-topic-bad-batch", "sink-bad-tasks-max", "sink-topics-and-regex"],
)
def test_validation_of_a_java_plugin_answers_as_kafka_connect(
    java_worker: StandaloneWorker, kafka_connect: ConnectDistributedWorker, config: dict[str, str]
) -> None:
    """The same config, validated by Sluice (Java plugin at 4.3.1) and by Kafka Connect
    4.3.1: the same keys in the same groups and order, the same errors and values, the
    same definitions (but the framework keys' documentation, and the lists of installed
    plugins)."""
    plugin = config["connector.class"].rpartition(".")[2]
    body = {**config, "connector.plugin.version": KAFKA_VERSION}
    ours = http_client.put(f"{java_worker.url}/connector-plugins/{plugin}/config/validate", json=body, timeout=60)
    theirs = kafka_connect.request("PUT", f"/connector-plugins/{plugin}/config/validate", json=body)
    assert (ours.status_code, theirs.status_code) == (200, 200), (ours.text, theirs.text)
    ours_json, theirs_json = ours.json(), theirs.json()
    assert ours_json["error_count"] == theirs_json["error_count"]
    assert ours_json["groups"] == theirs_json["groups"]
    assert list(_by_key(ours_json)) == list(_by_key(theirs_json))
    mine, reference = _by_key(ours_json), _by_key(theirs_json)
    differences = {key: (mine[key], reference[key]) for key in reference if mine[key] != reference[key]}
    assert not differences, json.dumps(differences, indent=1)


def _descendants_of(pid: int) -> list[tuple[int, str]]:
    """The process ids and command lines of the process's descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        todo.extend(children.get(child, []))
        info = process_info(child)
        if info is not None:  # else gone meanwhile
            found.append((child, info[1]))
    return found


def _python_hosts_of(pid: int) -> list[int]:
    """The worker's descendants that are Spark's Python daemon or its task host workers."""
    # python -m sluice.spark.daemon (the JVM names the module in its settings only)
    return [child for child, command in _descendants_of(pid) if "-m sluice.spark.daemon" in command]


def _collector_flags_of_spark_jvm(pid: int) -> set[str]:
    """The garbage-collector flags in effect in the worker's Spark JVM, as the JVM itself
    lists them (``jcmd … VM.flags``: the JVM's choice when nothing chose one)."""
    (jvm,) = [child for child, command in _descendants_of(pid) if "org.apache.spark.deploy.SparkSubmit" in command]
    jcmd = Path(f"/proc/{jvm}/exe").resolve().with_name("jcmd")  # the JVM's own JDK
    flags = subprocess.run([jcmd, str(jvm), "VM.flags"], capture_output=True, text=True, timeout=60, check=True)
    return set(re.findall(r"-XX:\+Use\w+GC\b", flags.stdout))


def test_a_worker_without_standby_hosts_runs_java_tasks_with_no_python_process(
    kafka_bootstrap: str, unique_name: str, tmp_path: Path
) -> None:
    """``sluice.task.hosts.standby=false``: a Java connector's task runs and no Python task
    host (nor Spark's Python daemon) is started; a Python connector that comes later gets
    one, and runs."""
    worker = _java_worker(tmp_path / "worker", kafka_bootstrap, "no-standby", {"sluice.task.hosts.standby": "false"})
    worker.start()
    source_file = tmp_path / "in.txt"
    source_file.write_text("one\ntwo\n", encoding="utf-8")
    try:
        assert worker.process is not None
        assert "no task host on standby" in worker.log()
        strings = {"file": str(source_file), "value.converter": STRING_CONVERTER}
        java = {"connector.class": FILE_SOURCE, "connector.plugin.version": KAFKA_VERSION, **strings}
        assert _put(worker, "java-only", {**java, "topic": f"{unique_name}-java"}).status_code == 201
        wait_until(lambda: _running_versions(worker, "java-only"), timeout=90, message="the Java connector running")
        values = [m.value() for m in read_topic(kafka_bootstrap, f"{unique_name}-java", 2)]
        assert values == [b"one", b"two"]
        assert _python_hosts_of(worker.process.pid) == []
        # The Java task's JVM collects with the serial collector, not G1 (the JVM's choice
        # on two cores or more), whose heap grows to the maximum under load.
        assert _collector_flags_of_spark_jvm(worker.process.pid) == {"-XX:+UseSerialGC"}
        python = {"connector.class": "FileStreamSource", **strings, "topic": f"{unique_name}-py"}
        assert _put(worker, "python-later", python).status_code == 201
        values = [m.value() for m in read_topic(kafka_bootstrap, f"{unique_name}-py", 2)]
        assert values == [b"one", b"two"]
        assert _python_hosts_of(worker.process.pid) != []
    finally:
        worker.stop()


def test_exactly_once_preflight_validation_answers_as_kafka_connect(
    kafka_bootstrap: str, kafka_connect: ConnectDistributedWorker, unique_name: str, tmp_path: Path
) -> None:
    """A distributed worker without exactly-once source support, Sluice's and Kafka
    Connect 4.3.1's: ``exactly.once.support=required`` and ``transaction.boundary=connector``
    give the same errors — the worker's, and the FileStream source's answers (SUPPORTED for
    a file, UNSUPPORTED for stdin; no connector-defined boundaries) — for Kafka's Java
    connector and for Sluice's built-in of the same name; creating it is refused with them."""
    _, file_plugin_dir = kafka_connect_classpath()
    worker = DistributedWorker(tmp_path, kafka_bootstrap, "eos", unique_name, {"plugin.path": str(file_plugin_dir)})
    worker.start(timeout=180)
    keys = ("exactly.once.support", "transaction.boundary")

    def errors(answer: httpx2.Response) -> dict[str, list[str]]:
        assert answer.status_code == 200, answer.text
        values = {c["value"]["name"]: c["value"]["errors"] for c in answer.json()["configs"]}
        return {key: values[key] for key in keys}

    try:
        for file in ("/tmp/in.txt", ""):
            body = {"connector.class": FILE_SOURCE, "topic": "t", "file": file}
            body.update({"exactly.once.support": "required", "transaction.boundary": "connector"})
            path = "/connector-plugins/FileStreamSourceConnector/config/validate"
            theirs = errors(
                kafka_connect.request("PUT", path, json={**body, "connector.plugin.version": KAFKA_VERSION})
            )
            assert theirs["exactly.once.support"][0] == "This worker does not have exactly-once source support enabled."
            java = http_client.put(
                f"{worker.url}{path}", json={**body, "connector.plugin.version": KAFKA_VERSION}, timeout=60
            )
            assert errors(java) == theirs, file
            assert errors(http_client.put(f"{worker.url}{path}", json=body, timeout=60)) == theirs, file
        created = http_client.put(f"{worker.url}/connectors/eos-required/config", json=body, timeout=60)
        assert created.status_code == 400
        assert "This worker does not have exactly-once source support enabled." in created.json()["message"]
    finally:
        worker.stop()


_LIBRARY = """package demo.lib;
public final class Greeting {
    public static String text() { return "%s"; }
}
"""

_PLUGIN = """package demo.%(pkg)s;
import java.util.*;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.source.*;
public class GreetingSourceConnector extends SourceConnector {
    private Map<String, String> props;
    public String version() { return "%(version)s"; }
    public void start(Map<String, String> props) { this.props = props; }
    public Class<? extends Task> taskClass() { return GreetingTask.class; }
    public List<Map<String, String>> taskConfigs(int max) { return List.of(props); }
    public void stop() { }
    public ConfigDef config() {
        return new ConfigDef().define("topic", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "topic");
    }
    public static class GreetingTask extends SourceTask {
        private String topic;
        private boolean sent;
        public String version() { return "%(version)s"; }
        public void start(Map<String, String> props) { topic = props.get("topic"); }
        public List<SourceRecord> poll() throws InterruptedException {
            if (sent) { Thread.sleep(200); return null; }
            sent = true;
            return List.of(new SourceRecord(Map.of(), Map.of(), topic, Schema.STRING_SCHEMA, %(value)s));
        }
        public void stop() { }
    }
}
"""


# A source connector that reads its partition's offset in start() through its own context
# (not its task's) and hands it to its task, which writes it (with its Java class) in one
# record and commits offset {"n": 41}.
_OFFSET_READING = """package demo.offsets;
import java.util.*;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.source.*;
public class OffsetReadingConnector extends SourceConnector {
    static final Map<String, Object> PARTITION = Map.of("file", "f");
    private Map<String, String> props;
    public String version() { return "1.0"; }
    public void start(Map<String, String> props) {
        Map<String, Object> offset = context().offsetStorageReader().offset(PARTITION);
        Object n = offset == null ? null : offset.get("n");
        this.props = new HashMap<>(props);
        this.props.put("seen", n == null ? "none" : n + " " + n.getClass().getSimpleName());
    }
    public Class<? extends Task> taskClass() { return ReadingTask.class; }
    public List<Map<String, String>> taskConfigs(int max) { return List.of(props); }
    public void stop() { }
    public ConfigDef config() {
        return new ConfigDef().define("topic", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "topic");
    }
    public static class ReadingTask extends SourceTask {
        private String topic;
        private String seen;
        private boolean sent;
        public String version() { return "1.0"; }
        public void start(Map<String, String> props) { topic = props.get("topic"); seen = props.get("seen"); }
        public List<SourceRecord> poll() throws InterruptedException {
            if (sent) { Thread.sleep(200); return null; }
            sent = true;
            return List.of(new SourceRecord(PARTITION, Map.of("n", 41), topic, Schema.STRING_SCHEMA, seen));
        }
        public void stop() { }
    }
}
"""


def test_a_java_connector_reads_its_offsets_through_its_context(
    java_worker: StandaloneWorker, kafka_bootstrap: str, unique_name: str
) -> None:
    """``SourceConnectorContext.offsetStorageReader()``: nothing before the task committed;
    after a restart, the committed offset as Kafka's reader gives it (a JSON integer as a Long)."""
    name, topic = "offset-reading", f"{unique_name}-offsets"
    config = {
        "connector.class": "demo.offsets.OffsetReadingConnector",
        "topic": topic,
        "value.converter": STRING_CONVERTER,
    }
    try:
        assert _put(java_worker, name, config).status_code == 201
        assert _first_value(kafka_bootstrap, topic) == b"none"
        committed = [{"partition": {"file": "f"}, "offset": {"n": 41}}]
        wait_until(
            lambda: java_worker.get(f"/connectors/{name}/offsets").json()["offsets"] == committed,
            timeout=60,
            message="the task's offset committed",
        )
        restart = http_client.post(f"{java_worker.url}/connectors/{name}/restart?includeTasks=true", timeout=60)
        assert restart.status_code in (202, 204), restart.text
        values = [message.value() for message in read_topic(kafka_bootstrap, topic, 2)]
        assert values == [b"none", b"41 Long"]
    finally:
        http_client.delete(f"{java_worker.url}/connectors/{name}", timeout=60)


def _javac(sources: dict[str, str], classpath: list[Path], jar: Path) -> None:
    """Compile ``sources`` (file name -> text) into ``jar``."""
    import subprocess
    import zipfile

    from sluice.jvm.java import java_executable

    work = jar.parent / f".build-{jar.stem}"
    (work / "classes").mkdir(parents=True)
    for name, text in sources.items():
        (work / name).write_text(text)
    subprocess.run(
        [
            str(java_executable().parent / "javac"),
            "-nowarn",
            "--release",
            "17",
            "-cp",
            ":".join(map(str, classpath)),
            "-d",
            str(work / "classes"),
            *(str(work / name) for name in sources),
        ],
        check=True,
        capture_output=True,
    )
    with zipfile.ZipFile(jar, "w") as out:
        for path in sorted((work / "classes").rglob("*.class")):
            out.write(path, path.relative_to(work / "classes").as_posix())


def test_plugins_bundling_conflicting_versions_of_a_library_run_in_one_worker(
    java_worker: StandaloneWorker, kafka_bootstrap: str, unique_name: str
) -> None:
    """Two plugin directories, each with its connector and its own version of the library
    class ``demo.lib.Greeting`` (same name, different answers): each connector's task sees
    its own, in one worker and one JVM task host (Kafka's plugin isolation)."""
    for pkg in ("a", "b"):
        config = {
            "connector.class": f"demo.{pkg}.GreetingSourceConnector",
            "topic": f"{unique_name}-{pkg}",
            "value.converter": STRING_CONVERTER,
        }
        assert _put(java_worker, f"greeting-{pkg}", config).status_code == 201
    seen = {pkg: _first_value(kafka_bootstrap, f"{unique_name}-{pkg}") for pkg in ("a", "b")}
    assert seen == {"a": b"one", "b": b"two"}
    assert _status(java_worker, "greeting-a")["connector"]["version"] == "1.0.a"
    for pkg in ("a", "b"):
        assert http_client.delete(f"{java_worker.url}/connectors/greeting-{pkg}", timeout=60).status_code == 204


def _first_value(bootstrap: str, topic: str) -> bytes | None:
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{topic}", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    try:

        def value() -> bytes | None:
            message = consumer.poll(0.5)
            return message.value() if message is not None and message.error() is None else None

        return wait_until(value, timeout=90, message=f"a record on {topic}")
    finally:
        consumer.close()
