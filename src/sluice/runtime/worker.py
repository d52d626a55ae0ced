"""The Worker: starts and stops connectors and tasks, and knows nothing of coordination.

Connectors run on the driver (this process); their tasks run on Spark through
:mod:`sluice.runtime.tasks`. The engine — the SparkSession and a warm task host — starts
in the background (:meth:`Worker.start_engine`), so the REST API answers before Spark is
up; the worker's herder takes work only once the engine is ready (:attr:`Worker.startup`).
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from sluice.api.connector import Connector, ConnectorContext
from sluice.api.errors import ConfigError, IllegalWorkerStateError
from sluice.kafka.security import security_settings
from sluice.kafka.settings import librdkafka_config, librdkafka_consumer_config
from sluice.kafka.topics import TopicCreationSpec
from sluice.kafka.transactions import fence_transactional_ids
from sluice.runtime.config import SIMPLE_HEADER_CONVERTER, WorkerConfig, converter_props
from sluice.runtime.config.worker import TASK_HOSTS_STANDBY_CONFIG
from sluice.runtime.config_transformer import ConfigProviders, reverse_transform
from sluice.runtime.connector_offsets import ConnectorOffsetStores
from sluice.runtime.data_path import (
    DeadLetterTopic,
    error_policy,
    topic_creation_active,
    topic_creation_spec,
    transforms_spec,
)
from sluice.runtime.herder.base import State, TargetState
from sluice.runtime.java_plugins import JavaConnector, JavaRuntime
from sluice.runtime.metrics.recorders import WorkerCounters
from sluice.runtime.metrics.snapshot import ConnectorSnapshot, TaskSnapshot, WorkerSnapshot
from sluice.runtime.plugins import Plugins, task_class_name, task_python_path
from sluice.runtime.startup import Startup
from sluice.runtime.tasks import (
    JavaSinkTask,
    JavaSourceTask,
    TaskHooks,
    TaskLauncher,
    TaskSettings,
    TopicListings,
    WorkerSinkTask,
    WorkerSourceTask,
    WorkerTask,
    new_incarnation,
    source_transactions,
    transactional_id,
    wants_dedicated_host,
)
from sluice.storage.base import ConnectorStatus, OffsetBackingStore, StatusBackingStore, TaskStatus
from sluice.storage.offset_codec import partition_offsets
from sluice.taskhost.protocol import PluginSpec, RunJavaTask, TaskSpec

log = logging.getLogger(__name__)

__all__ = ["SparkProvider", "Worker"]

PLUGIN_PATH_TASK_KEY = "__sluice.plugin.path"
#: How long the engine's first task host may take to connect back (Spark's first job,
#: its Python daemon's start, the task host's imports: seconds; minutes on a cluster
#: that is still granting executors).
TASK_HOST_WARM_UP_TIMEOUT_S = 300.0
#: A Java task's converters in its TaskSpec: the JVM task host builds them, and reads none.
_BUILT_IN_THE_JVM = PluginSpec("")


def _trace(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


class SparkProvider:
    """Builds the SparkSession once — on first use (the engine's start, :meth:`Worker.start_engine`)
    or when :meth:`prepare` starts it early — and hands it to every caller; callers meanwhile
    wait for it."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self._session: Any = None
        self._error: BaseException | None = None
        self._built = False
        self._lock = threading.Lock()

    def prepare(self) -> None:
        """Start building the session now, in the background: its JVM starts while the
        rest of the worker is made. A failure is kept for the first caller."""
        threading.Thread(target=self._build, name="sluice-spark-start", daemon=True).start()

    def __call__(self) -> Any:
        self._build()
        if self._error is not None:
            raise RuntimeError(f"Spark failed to start: {self._error}") from self._error
        return self._session

    def _build(self) -> None:
        with self._lock:
            if self._built:
                return
            self._built = True
            started = time.monotonic()
            try:
                self._session = self._factory()
                log.info("Spark session ready in %.2f s", time.monotonic() - started)
            except BaseException as exc:  # noqa: BLE001 - kept and raised to every caller; the engine logs it
                self._error = exc

    def stop(self) -> None:
        session = self._session
        if session is not None:
            from sluice.spark.session import stop_spark_session

            stop_spark_session(session)


class _Context(ConnectorContext):
    def __init__(self, worker: Worker, name: str) -> None:
        self._worker = worker
        self._name = name

    def request_task_reconfiguration(self) -> None:
        self._worker.on_reconfiguration_request(self._name)

    def raise_error(self, error: BaseException) -> None:
        self._worker.fail_connector(self._name, error)

    def stored_offsets(self, partitions: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
        """The stored offsets of the connector's source ``partitions`` (a Java connector's
        ``offsetStorageReader()`` reads them), in order; ``None`` where there is none."""
        return partition_offsets(self._worker.offset_store_of_connector(self._name), self._name, partitions)


@dataclass
class WorkerConnector:
    """A connector on this worker: its instance (None on a distributed worker that only
    hosts some of its tasks) and the tasks this worker runs."""

    name: str
    config: dict[str, str]
    connector: Connector | None
    kind: str
    state: State = State.UNASSIGNED
    trace: str | None = None
    started: bool = False
    tasks: dict[int, WorkerTask] = field(default_factory=dict)
    version: str | None = None  # the instance's version(), read when it was created


class Worker:
    def __init__(
        self,
        worker_id: str,
        config: WorkerConfig,
        plugins: Plugins,
        offset_store: OffsetBackingStore,
        status_store: StatusBackingStore,
        spark: SparkProvider,
        on_reconfiguration_request: Callable[[str], None] | None = None,
        config_providers: ConfigProviders | None = None,
        connector_offsets: ConnectorOffsetStores | None = None,
    ) -> None:
        self.worker_id = worker_id
        self.config_providers = config_providers or ConfigProviders()
        self.config = config
        self.plugins = plugins
        #: Kafka Connect's runtime for Java plugins, when plugin.path holds any.
        self.java_runtime: JavaRuntime | None = plugins.java if isinstance(plugins.java, JavaRuntime) else None
        self.offset_store = offset_store
        # a distributed worker's: connectors with offsets topics of their own
        self._connector_offsets = connector_offsets
        self.status_store = status_store
        self.spark = spark
        # Told when a connector asks for new task configs; the herder sets it.
        self.reconfiguration_listener = on_reconfiguration_request
        self._connectors: dict[str, WorkerConnector] = {}
        self._lock = threading.RLock()
        self._admin: Any = None
        self._launcher: TaskLauncher | None = None
        self._topic_listings = TopicListings()  # the sink tasks' topic listings and admin clients
        self.generation = 0
        self.counters = WorkerCounters()  # connect-worker-metrics' totals
        self.startup = Startup()  # the engine's start-up (start_engine)
        # Told each status this worker writes, before it is written; returns the trace to
        # write (the herder's automatic restarts, runtime/auto_restart.py).
        self.status_hook: Callable[[str, int | None, State, str | None], str | None] | None = None

    # -- status ---------------------------------------------------------------------

    def _put_connector_status(self, name: str, state: State, trace: str | None = None) -> None:
        if self.status_hook is not None:
            trace = self.status_hook(name, None, state, trace)
        self.status_store.put_connector(
            ConnectorStatus(name, state.value, self.worker_id, trace, self.generation, self.connector_version(name))
        )

    def connector_version(self, name: str) -> str | None:
        """The version of the connector instance this worker runs (``Worker.connectorVersion``
        in Kafka, recorded with its statuses); ``None`` when it runs none."""
        wc = self._connectors.get(name)
        return wc.version if wc is not None and wc.connector is not None else None

    def _task_listener(self, name: str, task: int, version: str | None = None) -> Callable[[State, str | None], None]:
        """Writes the task's statuses with ``version``, the task's version. The UNASSIGNED
        of a stopped task carries none: Kafka's worker has dropped the task by the time the
        task reports it, so its record says ``"version":null``."""

        def report(state: State, trace: str | None) -> None:
            if self.status_hook is not None:
                trace = self.status_hook(name, task, state, trace)
            status = TaskStatus(
                name,
                task,
                state.value,
                self.worker_id,
                trace,
                self.generation,
                None if state is State.UNASSIGNED else version,
            )
            # As Kafka's herder: a failure or shutdown may come from a task another worker
            # has taken over meanwhile, so it is written only if nobody wrote a newer one.
            if state in (State.FAILED, State.UNASSIGNED):
                self.status_store.put_task_safe(status)
            else:
                self.status_store.put_task(status)

        return report

    @staticmethod
    def _version_of(connector: Connector) -> str | None:
        try:
            version = connector.version()
        except Exception:
            log.warning("Could not read the version of connector %s", type(connector).__name__, exc_info=True)
            return None
        return None if version is None else str(version)

    def resolve(self, config: dict[str, str]) -> dict[str, str]:
        """``${provider:path:key}`` placeholders replaced: what connectors and tasks see.
        Stored configs and REST answers keep the placeholders."""
        return self.config_providers.transform(config)

    # -- connectors -----------------------------------------------------------------

    def start_connector(self, name: str, config: dict[str, str], target: TargetState) -> bool:
        """Instantiate and start a connector on the driver; False (FAILED) on error."""
        with self._lock:
            hosted = self._connectors.get(name)
            if hosted is not None and hosted.connector is not None:
                raise RuntimeError(f"Connector {name} already running on this worker")
            try:
                desc = self.plugins.resolve_connector_of(config)
                connector: Connector = desc.cls()
            except BaseException as exc:  # noqa: BLE001 - the connector's own class failed to load or construct: it is FAILED with the trace
                self.counters.connector_startup_attempts += 1
                self.counters.start_ended("connector", False)
                self._put_connector_status(name, State.FAILED, _trace(exc))
                return False
            if hosted is not None:  # this worker already runs some of its tasks
                hosted.connector, hosted.config, hosted.state, hosted.trace = connector, config, State.UNASSIGNED, None
                wc = hosted
            else:
                wc = WorkerConnector(name, config, connector, desc.type)
                self._connectors[name] = wc
            wc.version = self._version_of(connector)
            connector.initialize(_Context(self, name))
            self.counters.connector_startup_attempts += 1
            started = self._transition_connector(wc, target)
            self.counters.start_ended("connector", started)
            return started

    def host_tasks_of(self, name: str, config: dict[str, str]) -> None:
        """Make room for tasks of a connector whose instance runs on another worker."""
        with self._lock:
            if name in self._connectors:
                return
            desc = self.plugins.resolve_connector_of(config)
            self._connectors[name] = WorkerConnector(name, config, None, desc.type)

    def stop_connector_instance(self, name: str) -> None:
        """Stop the connector object only; tasks this worker runs keep running."""
        with self._lock:
            wc = self._connectors.get(name)
            if wc is None or wc.connector is None:
                return
            connector, wc.connector = wc.connector, None
            started, wc.started = wc.started, False
            if not wc.tasks:
                del self._connectors[name]
        try:
            if started:
                connector.stop()
        except Exception:
            log.warning("Error stopping connector %s", name, exc_info=True)

    def delivers_exactly_once(self, config: dict[str, str]) -> bool:
        """Whether the connector of ``config`` is a source whose tasks deliver exactly once
        here (``exactly.once.source.support=enabled``): its tasks start only once the
        producers of its earlier tasks are fenced."""
        if not self.config.exactly_once_source:
            return False
        try:
            return self.plugins.resolve_connector_of(config).type == "source"
        except Exception:  # noqa: BLE001 - an unknown class: its tasks fail on their own
            return False

    def fence_source_producers(self, name: str, connector_config: dict[str, str], task_count: int) -> None:
        """Fence the transactional producers of the connector's tasks ``0…task_count-1``
        (Kafka's zombie fencing), with the tasks' producer settings. Raises when one
        cannot be fenced (a missing permission on its transactional id)."""
        producer = librdkafka_config(self._producer_config(self.resolve(dict(connector_config))))
        group = str(self.config.get("group.id"))
        fence_transactional_ids(producer, [transactional_id(group, name, task) for task in range(task_count)])

    def runs_connector(self, name: str) -> bool:
        wc = self._connectors.get(name)
        return wc is not None and wc.connector is not None

    def _transition_connector(self, wc: WorkerConnector, target: TargetState) -> bool:
        if wc.connector is None:
            return True  # only tasks here: the connector's own worker reports its state
        try:
            if target is TargetState.STOPPED:
                if wc.started:
                    wc.connector.stop()
                    wc.started = False
                wc.state, wc.trace = State.STOPPED, None
            elif wc.state is State.FAILED:
                return False  # a failed connector stays failed until restarted
            else:
                if not wc.started:
                    wc.connector.start(self.resolve(dict(wc.config)))
                    wc.started = True
                wc.state = State.RUNNING if target is TargetState.STARTED else State.PAUSED
                wc.trace = None
        except BaseException as exc:
            log.error("Connector %s failed", wc.name, exc_info=True)
            wc.state, wc.trace = State.FAILED, _trace(exc)
        self._put_connector_status(wc.name, wc.state, wc.trace)
        return wc.state is not State.FAILED

    def start_engine(self, tasks_to_come: int = 1) -> None:
        """Start the engine in the background: the Spark session, then the shared task hosts,
        which connect back and wait for tasks (so that each starts at once); it is ready
        once the first connected — or as many as ``tasks_to_come``, the tasks the worker
        will start once ready, so that they spread over the hosts. :attr:`startup` says
        where it is; the herder waits for it before it takes work."""
        threading.Thread(
            target=self._start_engine, args=(tasks_to_come,), name="sluice-engine-start", daemon=True
        ).start()

    def _start_engine(self, tasks_to_come: int) -> None:
        started = time.monotonic()
        host_s = 0.0
        standby = bool(self.config.get(TASK_HOSTS_STANDBY_CONFIG))
        try:
            self.startup.begin("starting its Spark session")
            launcher = self.task_launcher()
            session_s = time.monotonic() - started
            if self.java_runtime is not None:
                # Kafka's scan of plugin.path takes seconds: done before the worker is ready,
                # not on the first request that lists or names a plugin.
                self.startup.begin("scanning the Java plugins on plugin.path")
                self.plugins.load_java()
            if standby:
                self.startup.begin("waiting for its first task host to start on Spark")
                host_s = launcher.warm_up(TASK_HOST_WARM_UP_TIMEOUT_S, hosts=tasks_to_come)
        except BaseException as exc:  # the worker cannot run tasks: its herder reports it and stops
            log.error("The worker's engine could not start", exc_info=True)
            self.startup.fail(exc)
            return
        hosts = (
            f"first task host {host_s:.2f} s"
            if standby
            else f"no task host on standby ({TASK_HOSTS_STANDBY_CONFIG}=false)"
        )
        log.info("Engine ready in %.2f s: Spark session %.2f s, %s", time.monotonic() - started, session_s, hosts)
        self.startup.finish()

    def task_launcher(self) -> TaskLauncher:
        """What launches this worker's tasks on Spark (made once the session is ready)."""
        session = self.spark()
        with self._lock:
            if self._launcher is None:
                from sluice.spark.launcher import SparkTaskLauncher

                self._launcher = SparkTaskLauncher(session, hosts=self.config.get("sluice.task.hosts"))
                java = self.java_runtime
                if java is not None:
                    from sluice.spark.jvm_hosts import JvmHostPool

                    self._launcher.java_hosts = JvmHostPool(
                        session, self._launcher.server, java.classpath, java.settings
                    )
            return self._launcher

    def set_target_state(self, name: str, target: TargetState) -> None:
        with self._lock:
            wc = self._connectors.get(name)
            if wc is None:
                return
            self._transition_connector(wc, target)
            for task in wc.tasks.values():
                task.transition_to(target)

    def restart_connector_instance(self, name: str, config: dict[str, str], target: TargetState) -> bool:
        """Stop and start the connector object only; its tasks keep running."""
        with self._lock:
            wc = self._connectors[name]
            try:
                if wc.started and wc.connector is not None:
                    wc.connector.stop()
            except Exception:
                log.warning("Error stopping connector %s", name, exc_info=True)
            wc.started, wc.state, wc.trace, wc.config = False, State.UNASSIGNED, None, dict(config)
            wc.version = None
            try:
                desc = self.plugins.resolve_connector_of(config)
                connector: Connector = desc.cls()
                wc.connector = connector
                wc.version = self._version_of(connector)
                connector.initialize(_Context(self, name))
            except BaseException as exc:  # noqa: BLE001 - the connector's own initialize() failed: it is FAILED with the trace
                wc.state, wc.trace = State.FAILED, _trace(exc)
                self._put_connector_status(name, wc.state, wc.trace)
                return False
            return self._transition_connector(wc, target)

    def fail_connector(self, name: str, error: BaseException) -> None:
        with self._lock:
            wc = self._connectors.get(name)
            if wc is not None:
                wc.state, wc.trace = State.FAILED, _trace(error)
                self._put_connector_status(name, wc.state, wc.trace)

    def on_reconfiguration_request(self, name: str) -> None:
        if self.reconfiguration_listener is not None:
            self.reconfiguration_listener(name)

    def connector_task_configs(self, name: str, max_tasks: int) -> list[dict[str, str]]:
        """Ask the running connector for its task configs, adding ``task.class`` (Kafka's
        class name for a built-in connector's task, the Python path for other tasks)."""
        with self._lock:
            wc = self._connectors[name]
            if wc.connector is None:
                raise IllegalWorkerStateError(f"Connector {name} does not run on this worker")
            configs = wc.connector.task_configs(max_tasks)
            if isinstance(wc.connector, JavaConnector):
                task_class = wc.connector.java_task_class or ""
            else:
                task_class = task_class_name(wc.connector.task_class())
            enforce = wc.config.get("tasks.max.enforce", "true").lower() != "false"
            if enforce and len(configs) > max_tasks:
                raise RuntimeError(
                    f"The connector {name} has generated {len(configs)} tasks, which is greater than "
                    f"{max_tasks}, the maximum number of tasks it is configured to create."
                )
            result = []
            for cfg in configs:
                task_config = dict(cfg)
                task_config["task.class"] = task_class
                if wc.kind == "sink":
                    for key in ("topics", "topics.regex"):
                        if key in wc.config:
                            task_config[key] = wc.config[key]
                result.append(task_config)
            # Stored and shown with the connector's placeholders, not the secrets behind them.
            return reverse_transform(wc.config, result)

    def stop_connector(self, name: str) -> None:
        with self._lock:
            wc = self._connectors.pop(name, None)
        if wc is None:
            return
        self.stop_tasks(name, wc)
        try:
            if wc.started and wc.connector is not None:
                wc.connector.stop()
        except Exception:
            log.warning("Error stopping connector %s", name, exc_info=True)

    def connector_type(self, name: str) -> str | None:
        wc = self._connectors.get(name)
        return wc.kind if wc else None

    def is_running(self, name: str) -> bool:
        return name in self._connectors

    # -- tasks ----------------------------------------------------------------------

    def _converter_spec(self, connector_config: dict[str, str], prefix: str, default_class: str | None) -> PluginSpec:
        kinds = ("header_converter",) if prefix == "header.converter" else ("converter",)
        if connector_config.get(prefix):
            name, props = connector_config[prefix], converter_props(connector_config, prefix)
        else:
            configured = self.config.raw.get(prefix) or default_class
            if configured is None:
                raise ConfigError(f"No {prefix} is configured for the connector or the worker")
            name, props = configured, converter_props(self.config.raw, prefix)
        desc = self.plugins.resolve(name, kinds)
        if prefix != "header.converter":
            props.setdefault("converter.type", prefix.split(".")[0])
        return PluginSpec(desc.python_path, props)

    def start_task(
        self,
        name: str,
        task: int,
        connector_config: dict[str, str],
        task_config: dict[str, str],
        target: TargetState,
        task_count: int = 1,
        may_commit: Callable[[], bool] | None = None,
    ) -> None:
        """``may_commit`` (distributed mode) says whether the task still owns its work; a
        task that does not commits no offsets (zombie fencing)."""
        with self._lock:
            wc = self._connectors[name]
            self.counters.task_startup_attempts += 1
            report = self._task_listener(name, task)  # until the task exists: no version, as in Kafka
            try:
                config = self.resolve(dict(task_config))
                connector_config = self.resolve(dict(connector_config))
                desc = self.plugins.resolve_connector_of(connector_config)
                if issubclass(desc.cls, JavaConnector):
                    java_task = self._java_task(
                        name, task, wc.kind, desc.version, connector_config, config, target, task_count, may_commit
                    )
                    wc.tasks[task] = java_task
                    java_task.start()
                    return
                if self.config.plugin_path:
                    config[PLUGIN_PATH_TASK_KEY] = ",".join(self.plugins.plugin_path)
                # Kafka's names of the built-ins' tasks load the Python classes; Python paths
                # (Python plugins, task configs written by earlier Sluice versions) load as is.
                task_class = task_python_path(config["task.class"])
                spec = TaskSpec(
                    connector=name,
                    task=task,
                    task_class=task_class,
                    task_config=config,
                    incarnation=new_incarnation(),
                    key_converter=self._converter_spec(connector_config, "key.converter", None),
                    value_converter=self._converter_spec(connector_config, "value.converter", None),
                    header_converter=self._converter_spec(
                        connector_config, "header.converter", SIMPLE_HEADER_CONVERTER
                    ),
                    errors=error_policy(connector_config),
                    transforms=transforms_spec(connector_config, self.plugins),
                    topic_creation=self._topic_creation(wc.kind, connector_config),
                    columnar_transforms=self.config.get("sluice.transforms.columnar.enable"),
                )
                settings = TaskSettings(
                    offset_flush_interval_ms=self.config.get("offset.flush.interval.ms"),
                    sink_max_records=self.config.get("sluice.sink.batch.max.records"),
                    sink_poll_interval_ms=self.config.get("sluice.sink.poll.interval.ms"),
                    dedicated_host=wants_dedicated_host(connector_config),
                )
                hooks = TaskHooks(
                    # The task reports with its version from here on (Kafka's WorkerTask reads
                    # version() of its task instance; ours live on the executors, see
                    # Plugins.task_version).
                    report=self._task_listener(name, task, self.plugins.task_version(task_class)),
                    record_topic=self._topic_recorder(name),
                    may_commit=may_commit,
                    counters=self.counters,
                )
                dead_letter_topic = DeadLetterTopic.of_connector(connector_config, self.admin_client())
                worker_task: WorkerTask
                if wc.kind == "source":
                    producer_config = librdkafka_config(self._producer_config(connector_config))
                    worker_task = WorkerSourceTask(
                        spec,
                        target,
                        self.task_launcher,
                        hooks,
                        settings,
                        offset_store=self._offset_store(connector_config, producer_config),
                        kafka_options=self._producer_options(connector_config),
                        producer_config=producer_config,
                        dead_letter_topic=dead_letter_topic,
                        transactions=source_transactions(
                            self.config,
                            name,
                            task,
                            connector_config,
                            self._offsets_topic(connector_config, producer_config),
                        ),
                    )
                else:
                    topics_regex = connector_config.get("topics.regex") or None
                    topics = [t.strip() for t in connector_config.get("topics", "").split(",") if t.strip()]
                    worker_task = WorkerSinkTask(
                        spec,
                        target,
                        self.task_launcher,
                        hooks,
                        settings,
                        bootstrap_servers=self.config.bootstrap_servers,
                        consumer_overrides=self._client_props(connector_config, "consumer"),
                        consumer_config=self._consumer_config(connector_config),
                        producer_config=librdkafka_config(self._producer_config(connector_config)),
                        topics=topics,
                        topics_regex=topics_regex,
                        task_count=task_count,
                        listings=self._topic_listings,
                        dead_letter_topic=dead_letter_topic,
                    )
            except BaseException as exc:  # noqa: BLE001 - a task that cannot be built is FAILED with the trace; its siblings go on
                self.counters.start_ended("task", False)
                report(State.FAILED, _trace(exc))
                return
            wc.tasks[task] = worker_task
            worker_task.start()

    def _java_task(
        self,
        name: str,
        task: int,
        kind: str,
        version: str | None,
        connector_config: dict[str, str],
        task_config: dict[str, str],
        target: TargetState,
        task_count: int,
        may_commit: Callable[[], bool] | None,
    ) -> WorkerTask:
        """The supervisor of a Java plugin's task (it runs in the JVM task host)."""
        spec = TaskSpec(
            connector=name,
            task=task,
            task_class=task_config.get("task.class", ""),
            task_config=task_config,
            incarnation=new_incarnation(),
            # Kafka's classes make a Java task's converters from the configs in its launch.
            key_converter=_BUILT_IN_THE_JVM,
            value_converter=_BUILT_IN_THE_JVM,
            header_converter=_BUILT_IN_THE_JVM,
        )
        launch = RunJavaTask(
            task=spec,
            sink=kind == "sink",
            connector_config=connector_config,
            worker_config={k: str(v) for k, v in self.config.raw.items() if v is not None},
            worker_id=self.worker_id,
            task_count=task_count,
        )
        settings = TaskSettings(offset_flush_interval_ms=self.config.get("offset.flush.interval.ms"))
        hooks = TaskHooks(
            # Kafka records the task instance's version(); a Java task's is its plugin's.
            report=self._task_listener(name, task, version),
            record_topic=self._topic_recorder(name),
            may_commit=may_commit,
            counters=self.counters,
        )
        if kind == "source":
            fencing: dict[str, Any] = {}
            if self.config.exactly_once_source:
                # Resolved once (config providers may read files or call out), for the
                # offset store and the fencing both. Kafka's task in the JVM fences its
                # earlier instances too, but only once launched, and its supervisor reads
                # its offsets before launching it.
                resolved = self.resolve(dict(connector_config))
                producer = librdkafka_config(self._producer_config(resolved))
                offset_store = self._offset_store(resolved, producer)
                fencing = {
                    "producer_config": producer,
                    "fenced_transactional_id": transactional_id(str(self.config.get("group.id")), name, task),
                }
            else:
                offset_store = self.offset_store_of(connector_config)
            return JavaSourceTask(
                spec,
                target,
                self.task_launcher,
                hooks,
                settings,
                offset_store=offset_store,
                launch=launch,
                **fencing,
            )
        return JavaSinkTask(spec, target, self.task_launcher, hooks, settings, launch=launch)

    def offset_store_of(self, connector_config: dict[str, str]) -> OffsetBackingStore:
        """Where the source connector of ``connector_config`` keeps its offsets: the worker's
        store, or on a distributed worker a topic of its own backed by the worker's
        (:mod:`sluice.runtime.connector_offsets`)."""
        if self._connector_offsets is None:
            return self.offset_store
        resolved = self.resolve(dict(connector_config))
        return self._offset_store(resolved, librdkafka_config(self._producer_config(resolved)))

    def _offset_store(self, resolved: dict[str, str], producer: dict[str, str]) -> OffsetBackingStore:
        """:meth:`offset_store_of` a resolved config whose producer has the librdkafka
        settings ``producer``."""
        if self._connector_offsets is None:
            return self.offset_store
        return self._connector_offsets.for_connector(resolved, producer)

    def offset_store_of_connector(self, name: str) -> OffsetBackingStore:
        """:meth:`offset_store_of` the connector ``name`` this worker runs."""
        wc = self._connectors.get(name)
        return self.offset_store if wc is None else self.offset_store_of(wc.config)

    def _offsets_topic(self, resolved: dict[str, str], producer: dict[str, str]) -> str:
        """The topic a source task that delivers exactly once writes its offsets to (on its
        producer's cluster, whose librdkafka settings are ``producer``)."""
        if self._connector_offsets is None:  # standalone: no offsets topic (and no exactly once)
            return ""
        return self._connector_offsets.topic_of(resolved, producer)[0]

    def admin_client(self) -> Any:
        """The worker's librdkafka admin client (``admin.*`` settings), made on first use."""
        with self._lock:
            if self._admin is None:
                from confluent_kafka.admin import AdminClient

                self._admin = AdminClient(
                    dict[str, str | int | float | bool](librdkafka_config(self._admin_config(), "admin"))
                )
            return self._admin

    def close(self) -> None:
        """Release the worker's own Kafka clients, once its connectors and tasks stopped
        (and before the brokers go away: an open client keeps reconnecting, and says so)."""
        with self._lock:
            self._admin = None  # librdkafka closes a client when its last reference goes
            launcher = self._launcher
        if launcher is not None:
            launcher.close()  # its standby task host
        if self.java_runtime is not None:
            self.java_runtime.close()
        if self._connector_offsets is not None:
            self._connector_offsets.close()

    def _admin_config(self, connector_config: dict[str, str] | None = None) -> dict[str, str]:
        # As Kafka's Worker.adminConfigs: the worker's own settings (here: the security
        # ones, the others are not client settings), then admin.* (admin.listeners is a
        # REST setting, not a client one), then a connector's admin.override.*.
        props = {"bootstrap.servers": self.config.bootstrap_servers, **security_settings(self.config.raw)}
        admin = self._client_props(connector_config or {}, "admin")
        props.update({k: v for k, v in admin.items() if not k.startswith(("override.", "listeners"))})
        return props

    def _topic_creation(self, kind: str, connector_config: dict[str, str]) -> TopicCreationSpec | None:
        if kind != "source" or not topic_creation_active(
            connector_config, bool(self.config.get("topic.creation.enable"))
        ):
            return None
        return topic_creation_spec(connector_config, librdkafka_config(self._admin_config(connector_config), "admin"))

    def _topic_recorder(self, name: str) -> Callable[[str], None]:
        """Records the topics a connector's tasks use, once each (``TopicStatus``)."""
        seen: set[str] = set()
        enabled = bool(self.config.get("topic.tracking.enable"))

        def record(topic: str) -> None:
            if enabled and topic not in seen:
                seen.add(topic)
                self.status_store.put_topic(name, topic)

        return record

    def _client_props(self, connector_config: dict[str, str], client: str) -> dict[str, str]:
        props = self.config.prefixed(f"{client}.")
        props.update(
            {
                k[len(f"{client}.override.") :]: v
                for k, v in connector_config.items()
                if k.startswith(f"{client}.override.")
            }
        )
        return props

    def _producer_config(self, connector_config: dict[str, str]) -> dict[str, str]:
        # What Kafka Connect forces on its producers (Worker.baseProducerConfigs),
        # then worker producer.* and connector producer.override.* settings, which may
        # point the producer at another cluster (bootstrap.servers), as in Kafka.
        props = {
            "bootstrap.servers": self.config.bootstrap_servers,
            "acks": "all",
            "delivery.timeout.ms": str(2**31 - 1),
        }
        props.update(self._client_props(connector_config, "producer"))
        return props

    def _producer_options(self, connector_config: dict[str, str]) -> dict[str, str]:
        return {f"kafka.{k}": v for k, v in self._producer_config(connector_config).items()}

    def _consumer_config(self, connector_config: dict[str, str]) -> dict[str, str]:
        """The librdkafka settings of a sink task's consumer (its group is set by the task)."""
        props = {"bootstrap.servers": self.config.bootstrap_servers}
        props.update(self._client_props(connector_config, "consumer"))
        return librdkafka_consumer_config(props)

    def hosted_connectors(self) -> list[WorkerConnector]:
        """The connectors this worker runs, or runs tasks of (a copy of each, tasks included)."""
        with self._lock:
            return [replace(wc, tasks=dict(wc.tasks)) for wc in self._connectors.values()]

    def metrics_snapshot(self) -> WorkerSnapshot:
        """What this worker runs, for its metrics."""
        connectors = tuple(
            ConnectorSnapshot(
                name=wc.name,
                kind=wc.kind,
                instance_here=wc.connector is not None,
                state=wc.state,
                connector_class=wc.config.get("connector.class", ""),
                version=wc.version,
                tasks=tuple(TaskSnapshot(i, t.kind, t.state, t.series) for i, t in sorted(wc.tasks.items())),
            )
            for wc in self.hosted_connectors()
        )
        return WorkerSnapshot(self.counters, connectors)

    def task_states(self, name: str) -> dict[int, WorkerTask]:
        wc = self._connectors.get(name)
        return dict(wc.tasks) if wc else {}

    def stop_task(self, name: str, task: int) -> None:
        self.stop_and_await_tasks([(name, task)])

    def stop_and_await_tasks(self, tasks: list[tuple[str, int]]) -> None:
        """Stop these tasks together and wait for them with one deadline (Kafka's
        ``stopAndAwaitTasks``): a revocation of many tasks takes as long as the slowest."""
        stopping: list[tuple[str, int, WorkerTask]] = []
        with self._lock:
            for name, task in tasks:
                wc = self._connectors.get(name)
                worker_task = wc.tasks.pop(task, None) if wc else None
                if wc is not None and wc.connector is None and not wc.tasks:
                    del self._connectors[name]  # nothing of this connector runs here any more
                if worker_task is not None:
                    stopping.append((name, task, worker_task))
        self._stop_together(stopping)

    def stop_tasks(self, name: str, wc: WorkerConnector | None = None) -> None:
        wc = wc or self._connectors.get(name)
        if wc is None:
            return
        stopping = [(name, task_id, task) for task_id, task in wc.tasks.items()]
        wc.tasks.clear()
        self._stop_together(stopping)

    def _stop_together(self, stopping: list[tuple[str, int, WorkerTask]]) -> None:
        """Tell every task to stop, then wait for them with one deadline for all (Kafka's
        ``task.shutdown.graceful.timeout.ms`` is a total); a task still running after it
        is abandoned: it reports nothing and commits nothing any more."""
        for _, _, task in stopping:
            task.stop()
        deadline = time.monotonic() + self._graceful_s()
        for name, task_id, task in stopping:
            if not task.join(max(0.0, deadline - time.monotonic())):
                log.error(
                    "Graceful stop of task %s-%s failed: it did not stop within "
                    "task.shutdown.graceful.timeout.ms; abandoning it",
                    name,
                    task_id,
                )
                task.cancel()

    def _graceful_s(self) -> float:
        return self.config.get("task.shutdown.graceful.timeout.ms") / 1000.0

    def stop(self) -> None:
        """Every task told to stop at once and awaited with one deadline, then the connectors."""
        with self._lock:
            hosted = list(self._connectors.items())
            stopping = [(name, task_id, task) for name, wc in hosted for task_id, task in wc.tasks.items()]
            for _, wc in hosted:
                wc.tasks.clear()
        self._stop_together(stopping)
        for name, _ in hosted:
            self.stop_connector(name)
        self._topic_listings.clear()
