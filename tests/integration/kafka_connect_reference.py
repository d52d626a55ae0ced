"""Apache Kafka Connect itself, as a distributed worker, for interoperability tests.

:class:`ConnectDistributedWorker` runs ``org.apache.kafka.connect.cli.ConnectDistributed``
from the jars of :func:`sluice_devtools.jars.kafka_connect_classpath` (fetched once into
the cache), with its REST API on a free loopback port and its config, offset and status
topics named by the caller. It is stopped by the pid it was started with (SIGTERM,
then SIGKILL after a timeout), never by name.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import httpx2

from sluice.jvm.java import java_executable
from sluice_devtools.jars import kafka_connect_classpath
from tests import http_client
from tests.integration.workers import free_port, write_properties

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"

_LOG4J2 = """\
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.file.ref = FILE
logger.herder.name = org.apache.kafka.connect.runtime.distributed.DistributedHerder
logger.herder.level = INFO
"""

# bin/connect-distributed.sh's heap, a bit smaller: the test runs one worker.
_JVM_OPTIONS = ["-Xms128M", "-Xmx1G", "-XX:+UseG1GC", "-Djava.awt.headless=true"]


class ReferenceWorkerError(AssertionError):
    """The Java worker exited or did not become ready."""


class ConnectDistributedWorker:
    """One Apache Kafka Connect distributed worker on a free port."""

    def __init__(
        self,
        work_dir: Path,
        bootstrap: str,
        *,
        group_id: str,
        config_topic: str,
        offset_topic: str,
        status_topic: str,
        extra: dict[str, str] | None = None,
    ) -> None:
        work_dir.mkdir(parents=True, exist_ok=True)
        self.work_dir = work_dir
        self.config_topic = config_topic
        self.offset_topic = offset_topic
        self.status_topic = status_topic
        self.classpath, plugin_dir = kafka_connect_classpath()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = work_dir / "connect-distributed.log"
        self.out_path = work_dir / "connect-distributed.out"
        self.log4j = work_dir / "log4j2.properties"
        self.log4j.write_text(_LOG4J2.format(log=self.log_path), encoding="utf-8")
        props = {
            "bootstrap.servers": bootstrap,
            "group.id": group_id,
            "key.converter": JSON_CONVERTER,
            "value.converter": JSON_CONVERTER,
            "config.storage.topic": config_topic,
            "offset.storage.topic": offset_topic,
            "status.storage.topic": status_topic,
            "config.storage.replication.factor": "1",
            "offset.storage.replication.factor": "1",
            "status.storage.replication.factor": "1",
            "offset.storage.partitions": "5",
            "status.storage.partitions": "3",
            "offset.flush.interval.ms": "500",
            "listeners": self.url,
            "rest.advertised.host.name": "127.0.0.1",
            "rest.advertised.port": str(self.port),
            "plugin.path": str(plugin_dir),
            "plugin.discovery": "service_load",  # its plugins all have manifests: no scan
            "scheduled.rebalance.max.delay.ms": "1000",
        }
        props.update(extra or {})
        self.worker_file = write_properties(work_dir / "connect-distributed.properties", props)
        self.process: subprocess.Popen[bytes] | None = None

    @classmethod
    def of_its_own(cls, work_dir: Path, bootstrap: str, prefix: str) -> ConnectDistributedWorker:
        """A worker in a group of its own, its group and internal topics named after
        ``prefix`` and a random suffix."""
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        return cls(
            work_dir,
            bootstrap,
            group_id=name,
            config_topic=f"{name}-configs",
            offset_topic=f"{name}-offsets",
            status_topic=f"{name}-status",
        )

    @property
    def worker_id(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 90.0) -> ConnectDistributedWorker:
        """Launch the JVM and wait until ``GET /health`` answers 200 (the herder has started)."""
        command = [
            str(java_executable()),
            *_JVM_OPTIONS,
            f"-Dlog4j2.configurationFile=file:{self.log4j}",
            "-cp",
            os.pathsep.join(str(p) for p in self.classpath),
            "org.apache.kafka.connect.cli.ConnectDistributed",
            str(self.worker_file),
        ]
        with self.out_path.open("ab") as out:
            self.process = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.work_dir
            )
        deadline = time.monotonic() + timeout
        with httpx2.Client(timeout=2.0) as client:
            while True:
                self.check_alive()
                try:
                    if client.get(self.url + "/health").status_code == 200:
                        return self
                except httpx2.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise ReferenceWorkerError(
                        f"Kafka Connect did not become healthy in {timeout:.0f} s\n{self.log_tail()}"
                    )
                time.sleep(0.1)

    def check_alive(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            raise ReferenceWorkerError(f"Kafka Connect exited with code {self.process.returncode}\n{self.log_tail()}")

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM the worker's own pid, SIGKILL after ``timeout``."""
        proc = self.process
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def request(self, method: str, path: str, **kwargs: Any) -> httpx2.Response:
        self.check_alive()
        return http_client.request(method, self.url + path, timeout=60, **kwargs)

    def log_tail(self, chars: int = 6000) -> str:
        text = ""
        for path in (self.out_path, self.log_path):
            with contextlib.suppress(OSError):
                text += f"--- {path.name}\n" + path.read_text(errors="replace")[-chars:]
        return text
