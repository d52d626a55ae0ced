"""Acceptance: ``sluice distributed --from-env`` starts a distributed worker from the
``CONNECT_*`` variables alone, as Confluent's image does (its REST port from
``CONNECT_REST_PORT``, log levels from ``CONNECT_LOG4J_*``), and the Dockerfile runs exactly
that command."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from tests import http_client
from tests.helpers import wait_until
from tests.integration.workers import free_port

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_a_worker_from_connect_variables(kafka_bootstrap: str, tmp_path: Path, unique_name: str) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONNECT_")}
    env.update(
        {
            "CONNECT_BOOTSTRAP_SERVERS": kafka_bootstrap,
            "CONNECT_REST_PORT": str(port),
            "CONNECT_REST_HOST_NAME": "127.0.0.1",
            "CONNECT_GROUP_ID": unique_name,
            "CONNECT_CONFIG_STORAGE_TOPIC": f"{unique_name}-config",
            "CONNECT_OFFSET_STORAGE_TOPIC": f"{unique_name}-offsets",
            "CONNECT_STATUS_STORAGE_TOPIC": f"{unique_name}-status",
            "CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR": "1",
            "CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR": "1",
            "CONNECT_STATUS_STORAGE_REPLICATION_FACTOR": "1",
            "CONNECT_KEY_CONVERTER": "org.apache.kafka.connect.json.JsonConverter",
            "CONNECT_VALUE_CONVERTER": "org.apache.kafka.connect.json.JsonConverter",
            "CONNECT_REST_ADVERTISED_HOST_NAME": "127.0.0.1",
            "CONNECT_SPARK_DRIVER_MEMORY": "512m",
            "CONNECT_LOG4J_ROOT_LOGLEVEL": "INFO",
            "CONNECT_LOG4J_LOGGERS": "org.example.quiet=ERROR",
            "PYTHONUNBUFFERED": "1",
        }
    )
    log = (tmp_path / "worker.log").open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "sluice.cli.main", "distributed", "--from-env"],
        env=env,
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:

        def healthy() -> bool:
            assert process.poll() is None, (tmp_path / "worker.log").read_text()
            try:
                return http_client.get(url + "/health", timeout=2).status_code == 200
            except httpx2.HTTPError:
                return False

        wait_until(healthy, timeout=120, message=lambda: (tmp_path / "worker.log").read_text()[-3000:])
        assert http_client.get(url + "/", timeout=10).json()["version"]
        assert http_client.get(url + "/admin/loggers/org.example.quiet", timeout=10).json()["level"] == "ERROR"
        r = http_client.put(
            f"{url}/connectors/{unique_name}/config",
            json={"connector.class": "FileStreamSource", "file": str(tmp_path / "in.txt"), "topic": unique_name},
            timeout=60,
        )
        assert r.status_code == 201, r.text
        status = wait_until(
            lambda: (
                (s := http_client.get(f"{url}/connectors/{unique_name}/status", timeout=10)).status_code == 200
                and s.json()
            ),
            timeout=60,
        )
        assert status["connector"]["worker_id"] == f"127.0.0.1:{port}"  # rest.advertised.host.name
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(90)
        except subprocess.TimeoutExpired:
            process.kill()  # not left running after the test
            process.wait()
            code = None
        assert code == 0, (tmp_path / "worker.log").read_text()[-3000:]


def test_the_dockerfile_runs_the_tested_command() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["sluice", "distributed", "--from-env"]' in dockerfile
    assert "EXPOSE 8083" in dockerfile


def test_the_image_builds_where_a_container_builder_runs(tmp_path: Path) -> None:
    docker = shutil.which("docker")
    if docker is None or subprocess.run([docker, "info"], capture_output=True, timeout=30).returncode != 0:
        pytest.skip("no container builder here (docker info fails); the Dockerfile is checked above")
    result = subprocess.run(
        [docker, "build", "-t", "sluice-test:latest", str(ROOT)], capture_output=True, text=True, timeout=1800
    )
    assert result.returncode == 0, result.stderr[-4000:]
