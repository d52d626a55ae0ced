"""Connector base classes, mirroring ``org.apache.kafka.connect.connector``.

Where plugin code runs — the words every docstring of :mod:`sluice.api` uses:

* **Worker process** (the Spark driver): connectors, config providers and validation.
  Calls come from the worker's control threads (REST request threads, the herder's
  thread, start-up), one lifecycle call of a connector instance at a time.
* **Executor**: a Python worker process of a Spark executor (in local mode, a child
  process of the worker). Each running task is one long-lived Spark task: its task
  instance, converters and transformations live in a Python worker that serves that
  task alone, from the instance's start to its stop.
* **Task thread**: the thread of that Spark task in its Python worker. It makes every
  call to the task, its converters and its transformations — ``initialize``,
  ``start``, ``poll``/``put``, ``commit``/``commit_record``/``pre_commit``/``flush``,
  ``open``/``close``, ``stop`` — one at a time. The framework's two other threads
  there (one reads the worker's control messages, one sends heartbeats) never call
  plugin code.

Any plugin class may also be instantiated (no arguments) where it is not used: the
worker process makes throwaway instances of connectors, converters, transformations
and predicates to call ``version()``/``config()``/``validate()``, and of task classes
to call ``version()``. Keep ``__init__`` cheap and free of side effects.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from sluice.api.errors import ConnectError

if TYPE_CHECKING:
    from sluice.api.config import Config, ConfigDef

__all__ = ["Connector", "ConnectorContext", "Task"]


class ConnectorContext(ABC):
    """What the worker offers a running :class:`Connector`, in the worker process.

    Both methods may be called from any thread of that process, including threads the
    connector started itself (say, one that watches the source system for new tables).
    """

    @abstractmethod
    def request_task_reconfiguration(self) -> None:
        """Ask the worker to call :meth:`Connector.task_configs` again and, if the configs
        it returns differ from the stored ones, to restart the tasks with them.

        Returns at once: ``task_configs`` runs later on another thread (standalone: a
        thread started for this request; distributed: the herder thread of the worker
        that runs the connector), so do not hold a lock that ``task_configs`` needs while
        calling this. Ignored while the connector is STOPPED. If ``task_configs`` then
        raises, the connector becomes FAILED. Standalone workers stop all the connector's
        tasks and start them with the new configs; distributed workers store the new
        configs and the cluster restarts the tasks.
        """

    @abstractmethod
    def raise_error(self, error: BaseException) -> None:
        """Report an unrecoverable error: the connector's status becomes FAILED with the
        traceback of ``error``.

        Nothing else happens then: the instance is not stopped and its tasks keep
        running. :meth:`Connector.stop` is called when the connector is next restarted,
        stopped or deleted, or the worker shuts down; pause and resume leave the
        connector FAILED (they still pause and resume its tasks).
        """


class Task(ABC):
    """Common base of :class:`~sluice.api.source.SourceTask` and :class:`~sluice.api.sink.SinkTask`.

    Task instances do their work in an executor's Python worker (see the module
    docstring), where the class is instantiated with no arguments from its Python path
    (``task.class``). The worker process also makes one instance per task class, only to
    call :meth:`version`. So the class must be importable on both sides, and
    ``__init__`` should only set attributes: connect to things in :meth:`start`.

    A task (``<connector>-<n>``) may go through many instances: each launch of the task
    makes one — when the task starts, after a restart (of the task or its connector), a
    reconfiguration, or a rebalance that moves it. An instance serves the task until it
    stops or fails; a failed task gets a new instance only when restarted. Every
    instance starts from the committed offsets.

    Not guaranteed: that two instances of a task never exist at once. An instance whose
    worker lost the task (a rebalance, a worker cut off from the group) or that was
    abandoned (it did not stop within ``task.shutdown.graceful.timeout.ms``) may still
    run while the next one starts; it commits no offsets any more.
    """

    def version(self) -> str:
        """The task's version, recorded with the task's statuses (``GET …/status``).

        Called in the worker process on a throwaway instance (never started), once per
        task class; if it raises, the statuses carry no version. Default: ``"unknown"``.
        """
        return "unknown"

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Start this instance with the task's config.

        ``props`` is the dict :meth:`Connector.task_configs` returned for this task,
        with config-provider placeholders resolved, plus ``task.class`` (and, for sink
        tasks, ``topics``/``topics.regex`` from the connector config; with ``plugin.path``
        set, a private ``__sluice.plugin.path`` key). Called once per instance, in the
        executor, on the task thread, after ``initialize`` and before any other call —
        for a sink task right before ``open``. A task whose connector is PAUSED is
        launched, and so started, only once the connector is resumed. The task is
        reported RUNNING once ``start`` (and a sink's ``open`` of its initial
        partitions) returned.

        Raises: any exception (:class:`~sluice.api.errors.RetriableError` too) fails the
        task: FAILED with the traceback, until restarted. :meth:`stop` is still called on
        this instance, as Kafka Connect does (a sink's ``close`` is not), so that it
        releases what ``start`` took before it raised: ``stop`` must cope with a ``start``
        that did not finish.
        """

    @abstractmethod
    def stop(self) -> None:
        """Stop this instance and release what it holds. Called at most once per instance,
        on the task thread, as its last call.

        When the worker stops the task (task or connector restarted, connector stopped,
        deleted or reconfigured, a rebalance, worker shutdown), when the task failed
        (``initialize``, ``start``, ``poll``, ``commit``, ``commit_record``, ``put``,
        ``open``, ``close`` of removed partitions or ``pre_commit`` raised, a record failed
        beyond ``errors.tolerance``, a sink's offset commit or a dead letter queue write
        failed), and when the worker's control connection is lost. Not on pause.

        Source tasks: after the ``poll()`` under way returned (``stop`` never runs while
        ``poll`` does, as in Kafka Connect), its records were produced, Kafka's
        acknowledgements were awaited (up to 30 s) and — unless the worker is gone — the
        acknowledged offsets stored, followed by ``commit()``; so a ``poll`` that waits
        for data should return within about a second, or it delays the stop. Sink
        tasks: right after :meth:`~sluice.api.sink.SinkTask.close` with all the task's
        partitions (once ``start`` returned), on the same thread (``stop`` is called even
        if ``close`` raised); on a clean stop a final ``pre_commit`` comes before ``close``.

        Raises: logged and ignored; the task's status does not change.

        Not guaranteed: that ``stop`` is called at all. It is not when the Python worker,
        its executor or the worker process dies, or when the task is abandoned because it
        did not stop within ``task.shutdown.graceful.timeout.ms`` (its Spark task is
        cancelled and its Python worker killed). Offsets are committed every
        ``offset.flush.interval.ms`` (capped at 1 s) and, on a clean stop, before ``stop``:
        no data depends on ``stop``.
        """


class Connector(ABC):
    """A connector: configures and splits work into task configs. Runs in the worker
    process (the Spark driver), never on executors.

    The *running* instance of a connector goes through ``initialize`` → ``start`` →
    ``task_configs`` (again after each reconfiguration request) → ``stop``; a STOPPED
    connector that is resumed is started again on the same instance. Its lifecycle calls
    come from the worker's control threads one at a time (standalone: under the herder's
    lock; distributed: the herder thread). Other instances are throwaway: made only to
    call :meth:`version`, :meth:`config`, :meth:`validate` or ``alter_offsets``, never
    initialized, started or stopped.

    Subclasses implement :meth:`start`, :meth:`stop`, :meth:`task_class`,
    :meth:`task_configs` and :meth:`config`; :meth:`validate` has a working default.
    """

    context: ConnectorContext

    def initialize(self, context: ConnectorContext) -> None:
        """Called once on the running instance, right after it is made and before
        :meth:`start`; keeps ``context``. Call ``super().initialize(context)`` if you
        override it."""
        self.context = context

    def version(self) -> str:
        """The connector's version. Default: ``"unknown"``.

        Shown by ``GET /connector-plugins``, read once from a throwaway instance when the
        worker discovers its plugins (if it raises, the version of the installed
        distribution named like the plugin's top-level package is shown), and recorded
        with the connector's statuses, read from each running instance when it is made
        (if it raises, the statuses carry no version).
        """
        return "unknown"

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Start the running instance with the connector's config.

        ``props`` is the whole connector config — the framework's keys (``name``,
        ``connector.class``, ``tasks.max``, …) and the connector's own — with
        config-provider placeholders resolved (values may be secrets: never log them).
        Called in the worker process when the connector is created or its config
        updated (a new instance), when the worker starts or a rebalance gives it the
        connector, when it is restarted, and when it is resumed from STOPPED. A connector
        created PAUSED is started too (pausing stops only its tasks); one created STOPPED
        is started when resumed. Keep what :meth:`task_configs` needs.

        Raises: any exception makes the connector FAILED with its traceback; no task
        configs are generated and :meth:`stop` is not called for this start.
        """

    def reconfigure(self, props: dict[str, str]) -> None:
        """Not called by Sluice: when a connector's config changes, the worker stops
        this instance and starts a new one with the new config. The default stops and
        starts this instance; it is kept for compatibility with Kafka's API."""
        self.stop()
        self.start(props)

    @abstractmethod
    def task_class(self) -> type[Task]:
        """The task class. Called in the worker process right after every
        :meth:`task_configs`; its Python path (``module.Class``) is written into every
        task config as ``task.class``, and executors import the class from that path. So
        it must be a module-level class of a module the executors' Python can import (an
        installed package, or a module in a ``plugin.path`` directory) — not a nested
        class, nor one defined in ``__main__``."""

    @abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """Split the work into at most ``max_tasks`` task configs (``max_tasks`` is the
        connector's ``tasks.max``); task *n* runs with the *n*-th config.

        Called in the worker process after :meth:`start` (not while the connector is
        STOPPED), when it is resumed from STOPPED, and after each
        :meth:`ConnectorContext.request_task_reconfiguration` (on another thread, see
        there). The configs are stored (config file or topic) and shown by
        ``GET /connectors/{name}/tasks``, so use ``str`` keys and values. The worker adds
        ``task.class`` and, for sink connectors, ``topics``/``topics.regex``. For every
        key whose value in the connector config holds a config-provider placeholder, the
        placeholder is stored instead of the resolved value (and resolved again when the
        task starts): keep secrets under the keys they had in the connector config, since
        a resolved secret under another key is stored as is. When the configs equal the
        stored ones, running tasks are left alone.

        Raises: any exception makes the connector FAILED; so does returning more than
        ``max_tasks`` configs (unless ``tasks.max.enforce=false``).
        """

    @abstractmethod
    def stop(self) -> None:
        """Stop the running instance: release what :meth:`start` acquired and end the
        threads it started.

        Called in the worker process when the connector is deleted, stopped
        (``PUT /connectors/{name}/stop``), restarted, reconfigured (config updated),
        moved to another worker by a rebalance, or the worker shuts down — only after a
        :meth:`start` that succeeded, once per such start. Not called on pause. On
        delete, shutdown and (standalone) reconfiguration the connector's tasks were
        stopped first; on a restart of the connector alone and on a rebalance they may
        still be running.

        Raises: logged and ignored, except while the connector is being STOPPED, where
        it becomes FAILED. Not guaranteed: a call when the worker process dies.
        """

    @abstractmethod
    def config(self) -> ConfigDef:
        """The :class:`~sluice.api.config.ConfigDef` of the connector's own keys (not the
        framework's ``name``, ``tasks.max``, ``transforms``, …; a key of the same name
        replaces the framework's in validation results).

        Called on throwaway instances, in the worker process, for validation and
        ``GET /connector-plugins/{name}/config``: it must not depend on :meth:`start`,
        must not return ``None``, and should return the same definition every time (a
        module-level constant is typical).
        """

    def validate(self, connector_configs: dict[str, str]) -> Config:
        """Check a connector config before it is created or updated.

        Called in the worker process, on a throwaway instance (never initialized nor
        started), on a REST request thread for
        ``PUT /connector-plugins/{type}/config/validate`` and before every create or
        update (in a distributed cluster, by the worker that received the request and
        again by the leader it forwards it to; in standalone mode also at start-up for the connector
        files on the command line), with the whole connector config: the framework's
        keys (``name``, ``tasks.max``, ``transforms``, …) and the connector's own.
        Config-provider placeholders are already resolved, so values may be secrets:
        never log them.

        The default checks each value against :meth:`config` and returns one
        :class:`~sluice.api.config.ConfigValue` per key it defines. Override it to add
        checks that involve several keys (or a remote system), usually by calling
        ``super().validate(connector_configs)`` and adding error messages to the values
        it returns. A value for a key :meth:`config` does not define is still reported,
        without a definition. Each error message counts as one error; a config with
        errors is refused.

        Raises: an exception fails the request (HTTP 500) and nothing is created; report
        problems as error messages instead.
        """
        from sluice.api.config import Config

        config_def = self.config()
        if config_def is None:
            raise ConnectError(
                f"{type(self).__module__}.{type(self).__qualname__}.config() must return a ConfigDef that is not null."
            )
        return Config(config_def.validate(connector_configs))
