"""Composition root of a standalone worker: builds stores, Spark, worker, herder and REST.

Start-up order keeps the REST API responsive early: the REST server binds first
(its address is the worker id), Spark starts in the background, then the
connectors already stored and those given on the command line are started.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sluice.jvm.connect_runtime import runs_java_plugins
from sluice.kafka.security import ClientSecurity
from sluice.runtime.config import WorkerConfig
from sluice.runtime.config_transformer import ConfigProviders
from sluice.runtime.herder.base import Herder, TargetState
from sluice.runtime.herder.standalone import StandaloneHerder
from sluice.runtime.java_plugins import JavaRuntime
from sluice.runtime.plugins import Plugins, resolved_plugin_path
from sluice.runtime.worker import SparkProvider, Worker
from sluice.storage.base import ClusterConfigState
from sluice.storage.file import FileOffsetBackingStore
from sluice.storage.file_config import FileConfigBackingStore
from sluice.storage.memory import MemoryStatusBackingStore

if TYPE_CHECKING:
    from sluice.rest.tls import WorkerTls

log = logging.getLogger(__name__)

#: A worker that starts with tasks waits for at most this many task hosts before it takes
#: them (the launcher starts as many as tasks spread over; see sluice.spark.launcher).
MAX_HOSTS_WARMED_UP = 4

__all__ = ["KafkaClusterId", "StandaloneConnect", "build_rest_server", "tasks_to_come"]


def _default_spark_factory(config: WorkerConfig, java_plugins: bool) -> Callable[[], Any]:
    def build() -> Any:
        from sluice.jvm import JvmArtifactError
        from sluice.jvm.connect_runtime import boot_jar
        from sluice.jvm.interceptor import SOURCE_TIMESTAMP_INTERCEPTOR, source_timestamp_interceptor_jar
        from sluice.jvm.jars import spark_kafka_jars
        from sluice.runtime.loggers import mirror_levels
        from sluice.spark.session import TIMESTAMP_INTERCEPTOR_CONF, build_spark_session, set_jvm_log_level

        kafka_jars = spark_kafka_jars()
        jars = [str(p) for p in kafka_jars]
        conf = dict(config.spark_conf())
        try:
            jars.append(str(source_timestamp_interceptor_jar(kafka_jars)))
            conf[TIMESTAMP_INTERCEPTOR_CONF] = SOURCE_TIMESTAMP_INTERCEPTOR
        except JvmArtifactError as exc:
            log.warning("Source records' own timestamps are not written, Kafka stamps them when sent: %s", exc)
        if java_plugins:
            jars.append(str(boot_jar()))  # their task host and registry start from it
        session = build_spark_session(conf, jars, resolved_plugin_path(config.plugin_path))
        # /admin/loggers and CONNECT_LOG4J_* set the JVM's loggers too (Java plugins log there).
        mirror_levels(lambda namespace, level: set_jvm_log_level(session, namespace, level))
        return session

    return build


def spark_and_plugins(config: WorkerConfig, spark_factory: Callable[[], Any] | None) -> tuple[SparkProvider, Plugins]:
    """The worker's Spark session, already starting in the background (its JVM's start is
    the longest part of the worker's), and its plugins: Python ones, and Java ones when
    ``plugin.path`` or ``CLASSPATH`` holds any (read through Kafka Connect's runtime in the
    Spark driver's JVM, whose session then carries the runtime's bootstrap jar)."""
    plugin_path = resolved_plugin_path(config.plugin_path)
    java_plugins = runs_java_plugins(plugin_path)
    spark = SparkProvider(spark_factory or _default_spark_factory(config, java_plugins))
    spark.prepare()
    java = None
    if java_plugins:
        java = JavaRuntime(plugin_path, str(config.raw.get("plugin.discovery") or "hybrid_warn"), spark)
    return spark, Plugins(config.plugin_path, java=java)


def rest_listeners(config: WorkerConfig) -> list[str]:
    """``listeners``; when it is not set, Kafka 3's ``rest.host.name`` and ``rest.port`` (which
    container images still set, e.g. ``CONNECT_REST_PORT``) say where to listen."""
    if "listeners" not in config.raw and config.raw.get("rest.port"):
        return [f"http://{config.raw.get('rest.host.name', '')}:{config.raw['rest.port']}"]
    return list(config.get("listeners"))


def build_rest_server(herder: Herder, config: WorkerConfig, tls: WorkerTls | None = None) -> Any:
    """The REST server of a worker, with the worker's HTTP and TLS settings (``tls``: the
    worker's :class:`~sluice.rest.tls.WorkerTls`, made here when not given)."""
    from sluice.console.app import console_app
    from sluice.rest.app import create_app  # the cli layer wires every layer together
    from sluice.rest.basic_auth import basic_auth_users
    from sluice.rest.server import PROTOCOL_HTTPS, RestServer, parse_listeners
    from sluice.rest.tls import WorkerTls

    listeners = rest_listeners(config)
    tls = tls if tls is not None else WorkerTls(config.raw)
    console = None
    if config.get("sluice.console.enable"):
        # The console calls back the listener a page came in by: over https it trusts the
        # worker's own certificate (and truststore).
        https = any(listener.protocol == PROTOCOL_HTTPS for listener in parse_listeners(listeners))
        console = console_app(verify=tls.own_listener_client_context() if https else None)
    app = create_app(
        herder,
        cors_allowed_origins=config.get("access.control.allow.origin") or "",
        cors_allowed_methods=config.get("access.control.allow.methods") or "",
        response_headers=config.get("response.http.headers.config") or "",
        mounts={"/ui": console} if console is not None else None,
        basic_auth_users=basic_auth_users(config.raw),
        forwarding_ssl_context=tls.client_context,
    )
    return RestServer(
        herder,
        listeners=listeners,
        advertised_host=config.get("rest.advertised.host.name"),
        advertised_port=config.get("rest.advertised.port"),
        app=app,
        admin_listeners=config.get("admin.listeners"),
        advertised_listener=config.get("rest.advertised.listener"),
        tls=tls,
    )


class KafkaClusterId:
    """Looks the Kafka cluster id up once, lazily (``GET /`` shows it)."""

    def __init__(self, bootstrap_servers: str, client_config: Mapping[str, str] | None = None) -> None:
        self._client_config: dict[str, str | int | float | bool] = {
            **(client_config or {}),
            "bootstrap.servers": bootstrap_servers,
            "log_level": 3,
        }
        self._value: str | None = None
        self._lock = threading.Lock()

    def __call__(self) -> str | None:
        with self._lock:
            if self._value is None:
                try:
                    from confluent_kafka.admin import AdminClient

                    admin = AdminClient(dict(self._client_config))
                    self._value = admin.list_topics(timeout=5).cluster_id
                except Exception:
                    log.warning("Could not look up the Kafka cluster id", exc_info=True)
            return self._value


def tasks_to_come(
    snapshot: ClusterConfigState, connector_configs: Sequence[tuple[dict[str, str], TargetState | None]]
) -> int:
    """How many tasks a standalone worker will start once its engine is ready, as far as it
    can tell before the connectors run: each stored connector's tasks and each command-line
    connector's ``tasks.max``, leaving out paused and stopped ones; at least one, at most
    :data:`MAX_HOSTS_WARMED_UP` (hosts are warmed up for them together)."""
    given = {config["name"]: (config, initial) for config, initial in connector_configs}
    count = 0
    for name in set(snapshot.connectors()) | set(given):
        config, initial = given.get(name, (snapshot.connector_config(name) or {}, None))
        if snapshot.contains(name):
            initial = TargetState(snapshot.target_state(name))
        if initial not in (None, TargetState.STARTED):
            continue
        try:
            wanted = int(config.get("tasks.max", "1"))
        except ValueError:
            wanted = 1  # the connector's validation says what is wrong
        count += max(1, min(wanted, snapshot.task_count(name) or wanted))
    return max(1, min(count, MAX_HOSTS_WARMED_UP))


class StandaloneConnect:
    """A standalone worker process's parts, started and stopped as one."""

    def __init__(
        self,
        worker_props: dict[str, str],
        spark_factory: Callable[[], Any] | None = None,
    ) -> None:
        self.config = WorkerConfig.standalone(worker_props)
        self.spark, self.plugins = spark_and_plugins(self.config, spark_factory)  # Spark first
        offsets_file = self.config.get("offset.storage.file.filename")
        configs_file = self.config.get("sluice.config.storage.file.filename") or f"{offsets_file}.connectors.json"
        self.offset_store = FileOffsetBackingStore(offsets_file)
        self.config_store = FileConfigBackingStore(configs_file)
        self.status_store = MemoryStatusBackingStore()
        # After Plugins: plugin.path is importable, so users' own providers load by Python path.
        self.config_providers = ConfigProviders.from_worker_config(worker_props)
        self.worker = Worker(
            "",
            self.config,
            self.plugins,
            self.offset_store,
            self.status_store,
            self.spark,
            config_providers=self.config_providers,
        )
        self.herder = StandaloneHerder(
            self.worker,
            self.config_store,
            self.status_store,
            KafkaClusterId(
                self.config.bootstrap_servers,
                ClientSecurity.from_java(self.config.raw, "the worker's Kafka clients").librdkafka(),
            ),
        )
        self.rest = build_rest_server(self.herder, self.config)
        self._stopped = threading.Event()
        self.interrupted = threading.Event()  # set when the worker is to stop (a signal)
        self.herder.start_reporters()  # metric.reporters: one that cannot be made stops the worker here

    def start(self, connector_configs: Sequence[tuple[dict[str, str], TargetState | None]] = ()) -> None:
        """Start everything; raise if a command-line connector cannot be created, or
        :class:`~sluice.runtime.startup.EngineFailed` if the worker cannot run tasks.

        The REST API answers from the start (``GET /health``: 503 while starting); the
        connectors start once the engine can run their tasks."""
        self.offset_store.start()
        self.config_store.start()
        self.status_store.start()
        self.worker.start_engine(tasks_to_come(self.config_store.snapshot(), connector_configs))
        self.rest.start()
        self.worker.worker_id = self.rest.worker_id
        log.info("REST API listening on %s (worker id %s)", self.rest.url, self.worker.worker_id)
        if not self.worker.startup.wait_unless(self.interrupted):
            return  # stopping before it started
        self.herder.start()
        for config, initial_state in connector_configs:
            name = config["name"]
            exists = self.config_store.snapshot().contains(name)
            # A command-line connector is (re)created on every start, keeping a stored
            # pause or stop: only a new connector takes the file's initial state.
            self.herder.put_connector_config(
                name, config, allow_replace=True, initial_state=None if exists else initial_state
            )
        self.herder.ready()

    def stop(self) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        log.info("Stopping the standalone worker")
        try:
            self.herder.close_reporters()
            self.herder.stop()
        finally:
            try:
                self.rest.stop()
            finally:
                self.worker.close()
                self.spark.stop()
                self.offset_store.stop()
                self.config_store.stop()
                self.status_store.stop()
                self.config_providers.close()

    @property
    def url(self) -> str:
        return str(self.rest.url)


def load_connector_file(path: str | Path) -> tuple[dict[str, str], TargetState | None]:
    """Read a connector config file as Kafka's ConnectStandalone does: a JSON map, a JSON
    create request, or Java properties. Returns the config and an optional initial state."""
    import json

    import javaproperties

    data = Path(path).read_bytes()
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        parsed = None
    if isinstance(parsed, dict):
        if isinstance(parsed.get("config"), dict):
            config = {str(k): _str(v) for k, v in parsed["config"].items()}
            name = str(parsed.get("name", "")).strip()
            if "name" in config and config["name"] != name:
                raise ValueError(
                    f"Connector name configuration ({config['name']}) doesn't match connector name in the URL ({name})"
                )
            config["name"] = name
            state = parsed.get("initial_state")
            return config, _initial_state(state) if state is not None else None
        config = {str(k): _str(v) for k, v in parsed.items()}
    else:
        with open(path, "rb") as fp:
            config = dict(javaproperties.load(fp))
    if not config.get("name"):
        raise ValueError(f"Connector configuration in {path} has no 'name'")
    return config, None


def _str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _initial_state(value: str) -> TargetState:
    mapping = {"RUNNING": TargetState.STARTED, "PAUSED": TargetState.PAUSED, "STOPPED": TargetState.STOPPED}
    try:
        return mapping[value.upper()]
    except KeyError:
        raise ValueError(f"Invalid initial state {value}; expected RUNNING, PAUSED or STOPPED") from None
