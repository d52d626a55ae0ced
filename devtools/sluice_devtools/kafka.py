"""A real single-node Apache Kafka broker (KRaft, combined broker+controller) for local use.

``KafkaBroker(work_dir).start()`` fetches the broker's jars on first use (see
:mod:`sluice_devtools.jars`), writes ``server.properties`` into ``work_dir``, formats the
storage once, starts the JVM as a child process in its own session (so it outlives the
caller and ignores the caller's Ctrl-C), records pid and bootstrap address in
``work_dir/state.json`` and waits until the broker answers a metadata request.

Another process can stop it or ask for its status with ``KafkaBroker.from_state(work_dir)``
(or plain ``KafkaBroker(work_dir)``). Stopping sends SIGTERM to the recorded pid (Kafka's
controlled shutdown) and SIGKILL only after the timeout; the pid is verified to still be
this broker's JVM first, so a reused pid is never signalled.

Restarting on the same ``work_dir`` keeps the data (topics, offsets) and, when they are
still free, the ports.

Files in ``work_dir``: ``server.properties``, ``data/``, ``state.json``, ``logs/server.log``
(log4j, WARN and above) and ``logs/broker.out`` (the JVM's stdout and stderr).

**SASL_SSL.** ``KafkaBroker(work_dir, sasl_ssl=True)`` adds a second client listener,
``SASL_SSL`` on another free loopback port (:attr:`KafkaBroker.sasl_ssl_bootstrap`), for
tests of secured clusters; the PLAINTEXT listener stays (admin helpers and inter-broker
traffic use it). TLS comes from :func:`sluice_devtools.certs.issue_tls_materials` in
``work_dir/tls`` (:attr:`KafkaBroker.tls`; no client certificate asked for); PLAIN,
SCRAM-SHA-256 and SCRAM-SHA-512 all accept the one user :data:`SASL_USER` /
:data:`SASL_PASSWORD`. :meth:`KafkaBroker.client_properties` gives the Java client
settings (``security.protocol``, ``sasl.jaas.config``, ``ssl.truststore.*``) for it.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from sluice.jvm.java import java_executable
from sluice_devtools import DevToolsError
from sluice_devtools.certs import TlsMaterials, issue_tls_materials
from sluice_devtools.jars import KAFKA_VERSION, kafka_broker_classpath
from sluice_devtools.processes import (
    LOOPBACK,
    LocalService,
    ServiceStatus,
    can_connect,
    free_port,
    port_if_free,
    tail,
    write_atomic,
)
from sluice_devtools.processes import (
    STATE_FILE as _STATE,
)

__all__ = [
    "SASL_MECHANISMS",
    "SASL_PASSWORD",
    "SASL_USER",
    "KafkaBroker",
    "create_topic",
    "quiet_client_logger",
]

log = logging.getLogger(__name__)

_HOST = LOOPBACK
_PORT_ATTEMPTS = 3

# The SASL_SSL listener's one user, valid for every mechanism in SASL_MECHANISMS.
SASL_USER = "alice"
SASL_PASSWORD = "alice-secret"
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
_SCRAM_ITERATIONS = 8192  # what kafka-storage uses when given a plain password
_TRUSTSTORE_TYPES = ("PKCS12", "PEM")


def quiet_client_logger() -> logging.Logger:
    """A logger for confluent_kafka clients (``{"logger": ...}``) that drops librdkafka's logs.

    Connection-refused noise while a broker starts or stops is expected and is not useful.
    """
    quiet = logging.getLogger("sluice_devtools.librdkafka")
    if not quiet.handlers:
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
    return quiet


class KafkaBroker(LocalService):
    """One local Kafka broker whose files live in ``work_dir``.

    ``port`` fixes the client (PLAINTEXT) port; by default a free loopback port is picked
    (the previous one when restarting, if it is still free). ``server_properties`` adds or
    overrides broker settings (``{"auto.create.topics.enable": "false"}``). ``sasl_ssl``
    adds the SASL_SSL listener described in the module docstring.
    """

    def __init__(
        self,
        work_dir: Path | str,
        port: int | None = None,
        *,
        heap: str = "512m",
        server_properties: Mapping[str, str] | None = None,
        sasl_ssl: bool = False,
    ) -> None:
        self.work_dir = Path(work_dir).expanduser().absolute()
        self.port = port
        self.heap = heap
        self.server_properties = dict(server_properties or {})
        self.sasl_ssl = sasl_ssl
        self._proc: subprocess.Popen[bytes] | None = None
        self._pid: int | None = None
        self._bootstrap: str | None = None
        self._sasl_ssl_bootstrap: str | None = None
        self._tls: TlsMaterials | None = None

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_state(cls, work_dir: Path | str) -> KafkaBroker:
        """The broker recorded in ``work_dir/state.json`` by an earlier ``start()``."""
        broker = cls(work_dir)
        state = broker._read_state()
        if state is None:
            raise DevToolsError(f"No Kafka broker was started in {broker.work_dir} (no {_STATE}).")
        broker._pid = state.get("pid")
        broker._bootstrap = state.get("bootstrap")
        broker._sasl_ssl_bootstrap = state.get("sasl_ssl_bootstrap")
        return broker

    # ------------------------------------------------------------------ properties

    @property
    def bootstrap(self) -> str:
        """``127.0.0.1:PORT`` of the running broker."""
        if self._bootstrap is None:
            raise DevToolsError(f"The Kafka broker in {self.work_dir} has not been started.")
        return self._bootstrap

    @property
    def sasl_ssl_bootstrap(self) -> str:
        """``127.0.0.1:PORT`` of the running broker's SASL_SSL listener."""
        if self._sasl_ssl_bootstrap is None:
            if self._bootstrap is None:
                raise DevToolsError(f"The Kafka broker in {self.work_dir} has not been started.")
            raise DevToolsError(
                f"The Kafka broker in {self.work_dir} runs without a SASL_SSL listener (start it with sasl_ssl=True)."
            )
        return self._sasl_ssl_bootstrap

    @property
    def tls(self) -> TlsMaterials:
        """The CA, keystores and truststores of the SASL_SSL listener (in ``work_dir/tls``)."""
        if not (self.sasl_ssl or self._sasl_ssl_bootstrap):
            raise DevToolsError(f"The Kafka broker in {self.work_dir} has no SASL_SSL listener (sasl_ssl=True).")
        if self._tls is None:
            self._tls = issue_tls_materials(self.work_dir / "tls")  # reuses an existing set
        return self._tls

    def client_properties(self, mechanism: str = "SCRAM-SHA-512", truststore: str = "PKCS12") -> dict[str, str]:
        """The Java client settings for the SASL_SSL listener, as a Kafka Connect user writes them.

        ``mechanism``: one of :data:`SASL_MECHANISMS`; ``truststore``: ``PKCS12``
        (``truststore.p12`` with its password) or ``PEM`` (``ca.pem``, no password).
        """
        if mechanism not in SASL_MECHANISMS:
            raise ValueError(f"mechanism must be one of {', '.join(SASL_MECHANISMS)}, not {mechanism!r}")
        if truststore not in _TRUSTSTORE_TYPES:
            raise ValueError(f"truststore must be one of {', '.join(_TRUSTSTORE_TYPES)}, not {truststore!r}")
        bootstrap = self.sasl_ssl_bootstrap
        module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
        props = {
            "bootstrap.servers": bootstrap,
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": mechanism,
            "sasl.jaas.config": (
                f'org.apache.kafka.common.security.{module} required username="{SASL_USER}" password="{SASL_PASSWORD}";'
            ),
        }
        if truststore == "PKCS12":
            props["ssl.truststore.location"] = str(self.tls.truststore_p12)
            props["ssl.truststore.password"] = self.tls.password
        else:
            props["ssl.truststore.location"] = str(self.tls.ca_pem)
        props["ssl.truststore.type"] = truststore
        return props

    @property
    def log_file(self) -> Path:
        return self.work_dir / "logs" / "server.log"

    @property
    def _config_file(self) -> Path:
        return self.work_dir / "server.properties"

    @property
    def _data_dir(self) -> Path:
        return self.work_dir / "data"

    @property
    def _out_file(self) -> Path:
        return self.work_dir / "logs" / "broker.out"

    # ------------------------------------------------------------------ lifecycle

    def start(self, timeout: float = 60.0) -> str:
        """Start the broker (a no-op if it already runs) and return its bootstrap address.

        ``timeout`` bounds the wait for the started JVM to answer; fetching the jars on
        first use and formatting the storage come before it.
        """
        self._adopt_from_state()
        if self._pid is not None and self._is_running(self._pid):
            if self.sasl_ssl and self._sasl_ssl_bootstrap is None:
                raise DevToolsError(
                    f"The Kafka broker in {self.work_dir} (pid {self._pid}) runs without a SASL_SSL listener; "
                    "stop it first to restart it with one."
                )
            self._wait_ready(time.monotonic() + timeout)
            return self.bootstrap

        java = java_executable()
        classpath = os.pathsep.join(str(p) for p in kafka_broker_classpath())
        self.work_dir.mkdir(parents=True, exist_ok=True)
        (self.work_dir / "logs").mkdir(exist_ok=True)
        previous = self._read_properties()
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            port, controller_port, sasl_ssl_port = self._choose_ports(previous)
            self._write_config(port, controller_port, sasl_ssl_port)
            self._format_storage(java, classpath)
            self._launch(java, classpath, port, controller_port, sasl_ssl_port)
            try:
                self._wait_ready(time.monotonic() + timeout)
            except DevToolsError:
                output = self._log_tail()
                self._kill_failed_start()
                if "Address already in use" in output and self.port is None and attempt < _PORT_ATTEMPTS:
                    previous = {}  # lost a race for a free port: pick new ones
                    continue
                raise
            secured = f", SASL_SSL at {self._sasl_ssl_bootstrap}" if self._sasl_ssl_bootstrap else ""
            log.info("Kafka %s broker up at %s%s (pid %s)", KAFKA_VERSION, self.bootstrap, secured, self._pid)
            return self.bootstrap
        raise AssertionError("unreachable")

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop the broker: SIGTERM, then SIGKILL after ``timeout``. True if it was running."""
        self._adopt_from_state()
        pid = self._pid
        if pid is None or not self._is_running(pid):
            self._forget_process()
            return False
        self._signal(pid, signal.SIGTERM)
        if not self._wait_exit(pid, timeout):
            log.warning("Kafka broker pid %s did not stop within %ss; killing it", pid, timeout)
            self._signal(pid, signal.SIGKILL)
            if not self._wait_exit(pid, 15.0):
                raise DevToolsError(f"Kafka broker pid {pid} did not exit after SIGKILL.")
        self._forget_process()
        return True

    def status(self) -> ServiceStatus:
        self._adopt_from_state()
        running = self._pid is not None and self._is_running(self._pid)
        addresses = (
            ("bootstrap", self._bootstrap if running else None),
            ("sasl_ssl_bootstrap", self._sasl_ssl_bootstrap if running else None),
        )
        return ServiceStatus(running, self._pid if running else None, self.work_dir, addresses)

    # ------------------------------------------------------------------ admin helpers

    def admin_client(self) -> Any:
        """A confluent_kafka ``AdminClient`` for this broker, with librdkafka's logs silenced."""
        return _admin_client(self.bootstrap)

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        *,
        config: Mapping[str, str] | None = None,
        timeout: float = 30.0,
    ) -> None:
        """Create a topic and wait until every partition has a leader."""
        create_topic(self.bootstrap, name, partitions, config=config, timeout=timeout)

    # ------------------------------------------------------------------ internals: start

    def _adopt_from_state(self) -> None:
        """Pick up pid/bootstrap recorded by another process, unless this object owns one."""
        if self._proc is not None:
            return
        state = self._read_state()
        if state is not None:
            self._pid = state.get("pid")
            self._bootstrap = state.get("bootstrap")
            self._sasl_ssl_bootstrap = state.get("sasl_ssl_bootstrap")

    def _choose_ports(self, previous: Mapping[str, str]) -> tuple[int, int, int | None]:
        def previous_port(listener: str) -> int | None:
            for entry in previous.get("listeners", "").split(","):
                name, _, address = entry.partition("://")
                if name.strip() == listener and ":" in address:
                    with contextlib.suppress(ValueError):
                        return int(address.rsplit(":", 1)[1])
            return None

        if self.port is not None and port_if_free(self.port) is None:
            raise DevToolsError(f"Port {self.port} on {_HOST} is in use; choose another or omit the port.")
        port = self.port or port_if_free(previous_port("PLAINTEXT")) or free_port()
        controller = port_if_free(previous_port("CONTROLLER"), avoid=port) or free_port(avoid=port)
        if not self.sasl_ssl:
            return port, controller, None
        secured = previous_port("SASL_SSL")
        if secured == controller:
            secured = None
        secured = port_if_free(secured, avoid=port) or free_port(avoid=(port, controller))
        return port, controller, secured

    def _write_config(self, port: int, controller_port: int, sasl_ssl_port: int | None) -> None:
        listeners = f"PLAINTEXT://{_HOST}:{port},CONTROLLER://{_HOST}:{controller_port}"
        advertised = f"PLAINTEXT://{_HOST}:{port}"
        protocols = "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
        if sasl_ssl_port is not None:
            listeners += f",SASL_SSL://{_HOST}:{sasl_ssl_port}"
            advertised += f",SASL_SSL://{_HOST}:{sasl_ssl_port}"
            protocols += ",SASL_SSL:SASL_SSL"
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.bootstrap.servers": f"{_HOST}:{controller_port}",
            "listeners": listeners,
            "advertised.listeners": advertised,
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": protocols,
            "log.dirs": str(self._data_dir),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
        }
        if sasl_ssl_port is not None:
            props.update(self._sasl_ssl_properties())
        props.update(self.server_properties)
        text = "# Written by sluice_devtools.kafka; rewritten on every start.\n" + "".join(
            f"{key}={_escape_property(value)}\n" for key, value in props.items()
        )
        write_atomic(self._config_file, text)

    def _sasl_ssl_properties(self) -> dict[str, str]:
        """The SASL_SSL listener's settings, all scoped to it (``listener.name.sasl_ssl.``)."""
        tls = self.tls
        prefix = "listener.name.sasl_ssl."
        plain_login = (
            f'org.apache.kafka.common.security.plain.PlainLoginModule required user_{SASL_USER}="{SASL_PASSWORD}";'
        )
        props = {
            "ssl.keystore.location": str(tls.server_p12),
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.password": tls.password,
            "ssl.key.password": tls.password,
            "ssl.client.auth": "none",
            "sasl.enabled.mechanisms": ",".join(SASL_MECHANISMS),
            "plain.sasl.jaas.config": plain_login,
        }
        for mechanism in _SCRAM_MECHANISMS:
            # SCRAM checks the credentials in the cluster metadata (added at format time)
            props[f"{mechanism.lower()}.sasl.jaas.config"] = (
                "org.apache.kafka.common.security.scram.ScramLoginModule required;"
            )
        return {prefix + key: value for key, value in props.items()}

    def _format_storage(self, java: Path, classpath: str) -> None:
        if (self._data_dir / "meta.properties").is_file():
            return  # formatted by an earlier start: keep the data
        if self._data_dir.exists():
            shutil.rmtree(self._data_dir)  # a format that never finished
        command = [
            str(java),
            "-Xmx256m",
            *self._log_options(),
            "-cp",
            classpath,
            "kafka.tools.StorageTool",
            "format",
            "--standalone",
            "-t",
            _random_cluster_id(),
            "-c",
            str(self._config_file),
        ]
        if self.sasl_ssl:
            for mechanism in _SCRAM_MECHANISMS:
                command += ["--add-scram", f"{mechanism}=[name={SASL_USER},password={SASL_PASSWORD}]"]
        proc = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise DevToolsError(
                f"Formatting Kafka storage in {self._data_dir} failed (exit code {proc.returncode}):\n"
                + tail(proc.stdout + proc.stderr)
            )

    def _log_options(self) -> list[str]:
        config = resources.files("sluice_devtools") / "log4j2.properties"
        return [
            f"-Dlog4j2.configurationFile={config}",
            f"-Dkafka.logs.dir={self.work_dir / 'logs'}",
            "-Djava.awt.headless=true",
        ]

    def _launch(self, java: Path, classpath: str, port: int, controller_port: int, sasl_ssl_port: int | None) -> None:
        command = [
            str(java),
            f"-Xmx{self.heap}",
            "-XX:+ExitOnOutOfMemoryError",
            *self._log_options(),
            "-cp",
            classpath,
            "kafka.Kafka",
            str(self._config_file),
        ]
        with open(self._out_file, "wb") as out:
            self._proc = subprocess.Popen(
                command,
                cwd=self.work_dir,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own session and process group
                close_fds=True,
            )
        self._pid = self._proc.pid
        self._bootstrap = f"{_HOST}:{port}"
        self._sasl_ssl_bootstrap = f"{_HOST}:{sasl_ssl_port}" if sasl_ssl_port is not None else None
        self._write_state(
            {
                "pid": self._pid,
                "bootstrap": self._bootstrap,
                "port": port,
                "sasl_ssl_bootstrap": self._sasl_ssl_bootstrap,
                "sasl_ssl_port": sasl_ssl_port,
                "controller_port": controller_port,
                "kafka_version": KAFKA_VERSION,
                "started_at": time.time(),
                "log": str(self.log_file),
            }
        )

    def _wait_ready(self, deadline: float) -> None:
        self._wait_plaintext_ready(deadline)
        if self._sasl_ssl_bootstrap is not None:
            self._ensure_scram_credentials(deadline)
            self._wait_sasl_ssl_ready(deadline)

    def _wait_plaintext_ready(self, deadline: float) -> None:
        host, _, port = self.bootstrap.rpartition(":")
        while not can_connect(host, int(port)):
            self._check_alive_while_starting()
            if time.monotonic() > deadline:
                raise self._start_failure("did not open its port in time")
            time.sleep(0.05)

        self._wait_for_metadata(_admin_client(self.bootstrap), deadline, "a metadata request")

    def _wait_for_metadata(self, admin: Any, deadline: float, what: str) -> None:
        """Until ``admin`` gets an answer naming brokers (``what`` says which, in the error)."""
        from confluent_kafka import KafkaException

        while True:
            self._check_alive_while_starting()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._start_failure(f"did not answer {what} in time")
            try:
                if admin.list_topics(timeout=min(2.0, max(remaining, 0.1))).brokers:
                    return
            except KafkaException:
                pass
            time.sleep(0.05)

    def _ensure_scram_credentials(self, deadline: float) -> None:
        """Add the SCRAM credentials when the storage was formatted without them.

        A fresh storage gets them at format time; this covers a work dir first started
        without ``sasl_ssl`` (``./dev kafka start`` and later ``--sasl-ssl``).
        """
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

        admin = _admin_client(self.bootstrap)
        remaining = max(deadline - time.monotonic(), 1.0)
        try:
            described = admin.describe_user_scram_credentials(request_timeout=remaining).result(timeout=remaining)
        except KafkaException as exc:
            raise self._start_failure(f"did not list its SCRAM credentials ({exc})") from exc
        have = (
            {info.mechanism.name for info in described[SASL_USER].scram_credential_infos}
            if SASL_USER in described
            else set()
        )
        missing = [m for m in _SCRAM_MECHANISMS if m.replace("-", "_") not in have]
        if not missing:
            return
        log.info("adding SCRAM credentials of %s (%s) to the existing storage", SASL_USER, ", ".join(missing))
        for mechanism in missing:  # one request each: Kafka refuses two changes of a user in one
            upsert = UserScramCredentialUpsertion(
                SASL_USER,
                ScramCredentialInfo(ScramMechanism[mechanism.replace("-", "_")], _SCRAM_ITERATIONS),
                SASL_PASSWORD.encode(),
            )
            remaining = max(deadline - time.monotonic(), 1.0)
            try:
                admin.alter_user_scram_credentials([upsert], request_timeout=remaining)[SASL_USER].result(
                    timeout=remaining
                )
            except KafkaException as exc:
                raise self._start_failure(f"refused the {mechanism} credentials of {SASL_USER} ({exc})") from exc

    def _wait_sasl_ssl_ready(self, deadline: float) -> None:
        """Wait for an authenticated metadata answer on the SASL_SSL listener: proves the
        listener, its certificate and the credentials before tests rely on them."""
        from confluent_kafka.admin import AdminClient

        config: dict[str, Any] = {
            "bootstrap.servers": self.sasl_ssl_bootstrap,
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": SASL_USER,
            "sasl.password": SASL_PASSWORD,
            "ssl.ca.location": str(self.tls.ca_pem),
            "logger": quiet_client_logger(),
        }
        self._wait_for_metadata(
            AdminClient(config), deadline, f"an authenticated metadata request on SASL_SSL {self.sasl_ssl_bootstrap}"
        )

    def _start_failure(self, what: str) -> DevToolsError:
        return DevToolsError(f"The Kafka broker in {self.work_dir} {what}. Last log lines:\n{self._log_tail()}")

    def _log_tail(self) -> str:
        parts = []
        for path in (self._out_file, self.log_file):
            if path.is_file() and path.stat().st_size:
                parts.append(f"--- {path}\n{tail(path.read_text(errors='replace'))}")
        return "\n".join(parts) or "(no log output)"

    # ------------------------------------------------------------------ internals: processes

    def _is_this_process(self, cmdline: str) -> bool:
        return "kafka.Kafka" in cmdline and str(self._config_file) in cmdline

    def _forget_process(self) -> None:
        self._proc = None
        self._pid = None
        self._bootstrap = None
        self._sasl_ssl_bootstrap = None
        state = self._read_state()
        if state is not None and state.get("pid") is not None:
            state["pid"] = None
            state["bootstrap"] = None
            state["sasl_ssl_bootstrap"] = None
            self._write_state(state)

    # ------------------------------------------------------------------ internals: files

    def _read_properties(self) -> dict[str, str]:
        try:
            lines = self._config_file.read_text().splitlines()
        except OSError:
            return {}
        props = {}
        for line in lines:
            if line.strip() and not line.lstrip().startswith("#") and "=" in line:
                key, _, value = line.partition("=")
                props[key.strip()] = value.strip()
        return props


# ---------------------------------------------------------------------------- helpers


def _admin_client(bootstrap: str) -> Any:
    from confluent_kafka.admin import AdminClient

    config: dict[str, Any] = {"bootstrap.servers": bootstrap, "logger": quiet_client_logger()}
    return AdminClient(config)


def create_topic(
    bootstrap: str,
    name: str,
    partitions: int = 1,
    *,
    config: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> None:
    """Create a topic on the broker at ``bootstrap`` and wait until every partition has a leader.

    Works for any broker (also one not started by this module); replication factor 1.
    """
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import NewTopic

    admin = _admin_client(bootstrap)
    topic = NewTopic(name, num_partitions=partitions, replication_factor=1, config=dict(config or {}))
    futures = admin.create_topics([topic], operation_timeout=timeout, request_timeout=timeout)
    try:
        futures[name].result(timeout=timeout)
    except KafkaException as exc:
        raise DevToolsError(f"Could not create topic {name!r}: {exc}") from exc
    deadline = time.monotonic() + timeout
    while True:
        meta = admin.list_topics(topic=name, timeout=timeout).topics.get(name)
        if (
            meta is not None
            and meta.error is None
            and len(meta.partitions) == partitions
            and all(p.leader >= 0 for p in meta.partitions.values())
        ):
            return
        if time.monotonic() > deadline:
            raise DevToolsError(f"Topic {name!r} has no leader after {timeout}s.")
        time.sleep(0.05)


def _random_cluster_id() -> str:
    """A Kafka cluster id, as ``kafka-storage random-uuid`` makes (base64url, 22 chars)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def _escape_property(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n")
