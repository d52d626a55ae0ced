"""The worker's configuration: Kafka Connect's worker keys and defaults, parsed.

Worker properties keep Kafka's keys (``bootstrap.servers``, ``key.converter``,
``offset.storage.file.filename`` …); Sluice's own knobs live under ``sluice.`` and
everything under ``spark.`` goes to the SparkSession. :class:`WorkerConfig` holds a
standalone or distributed worker's parsed values with the raw map, and
:func:`converter_props` picks a converter's own settings out of a config.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sluice.api.config import (
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigType,
    Importance,
    LambdaValidator,
    Range,
    ValidString,
)
from sluice.api.errors import ConfigError
from sluice.runtime.herder.request_signing import (
    KEY_GENERATION_ALGORITHM_CONFIG,
    KEY_SIZE_CONFIG,
    KEY_TTL_MS_CONFIG,
    MAC_ALGORITHMS,
    SIGNATURE_ALGORITHM_CONFIG,
    VERIFICATION_ALGORITHMS_CONFIG,
    session_key_bits,
)

__all__ = ["SIMPLE_HEADER_CONVERTER", "WorkerConfig", "converter_props"]

SIMPLE_HEADER_CONVERTER = "org.apache.kafka.connect.storage.SimpleHeaderConverter"


def _worker_def(standalone: bool) -> ConfigDef:
    d = ConfigDef()
    d.define(
        "bootstrap.servers",
        ConfigType.LIST,
        "localhost:9092",
        importance=Importance.HIGH,
        documentation="Kafka bootstrap servers.",
    )
    d.define(
        "key.converter", ConfigType.CLASS, importance=Importance.HIGH, documentation="Converter class for record keys."
    )
    d.define(
        "value.converter",
        ConfigType.CLASS,
        importance=Importance.HIGH,
        documentation="Converter class for record values.",
    )
    d.define(
        "header.converter",
        ConfigType.CLASS,
        SIMPLE_HEADER_CONVERTER,
        importance=Importance.LOW,
        documentation="Converter class for header values.",
    )
    d.define(
        "task.shutdown.graceful.timeout.ms",
        ConfigType.LONG,
        5000,
        importance=Importance.LOW,
        documentation="How long to wait for tasks to shut down gracefully (total).",
    )
    d.define(
        "offset.flush.interval.ms",
        ConfigType.LONG,
        60000,
        importance=Importance.LOW,
        documentation="Upper bound between offset commits (Sluice commits after every batch).",
    )
    d.define(
        "offset.flush.timeout.ms",
        ConfigType.LONG,
        5000,
        importance=Importance.LOW,
        documentation="Maximum wait for an offset commit.",
    )
    d.define(
        "plugin.path",
        ConfigType.LIST,
        None,
        importance=Importance.LOW,
        documentation="Directories holding Python plugin modules and packages.",
    )
    d.define(
        "listeners",
        ConfigType.LIST,
        "http://:8083",
        importance=Importance.LOW,
        documentation="REST listeners, protocol://host:port with protocol http or https (https: the "
        "listeners.https.ssl.* keys, else the top-level ssl.* keys).",
    )
    d.define("rest.advertised.host.name", ConfigType.STRING, None, importance=Importance.LOW, documentation="")
    d.define("rest.advertised.port", ConfigType.INT, None, importance=Importance.LOW, documentation="")
    d.define(
        "rest.advertised.listener",
        ConfigType.STRING,
        None,
        importance=Importance.LOW,
        documentation="The protocol (http or https) of the listener other workers are given; unset: http "
        "when a listener is http, else https.",
    )
    d.define(
        "admin.listeners",
        ConfigType.LIST,
        None,
        importance=Importance.LOW,
        documentation="Listeners serving only the /admin endpoints (https: the admin.listeners.https.ssl.* "
        "keys, else the top-level ssl.* keys); empty: /admin is disabled; unset: /admin is served on the "
        "REST listeners.",
    )
    d.define(
        "access.control.allow.origin",
        ConfigType.STRING,
        "",
        importance=Importance.LOW,
        documentation="Value of Access-Control-Allow-Origin for CORS requests; empty disables CORS.",
    )
    d.define(
        "access.control.allow.methods",
        ConfigType.STRING,
        "",
        importance=Importance.LOW,
        documentation="Methods allowed for CORS requests (default GET, POST, HEAD).",
    )
    d.define(
        "response.http.headers.config",
        ConfigType.STRING,
        "",
        importance=Importance.LOW,
        documentation="Rules for HTTP response headers: comma-separated "
        "'[action] [name]:[value]' with action set, add, setDate, addDate or unset.",
    )
    d.define(
        "topic.creation.enable",
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Allow source connectors to create the topics they write to, as their "
        "topic.creation.* settings say.",
    )
    d.define(
        "topic.tracking.enable",
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Track the topics each connector uses (GET /connectors/{name}/topics).",
    )
    d.define(
        "topic.tracking.allow.reset",
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Allow PUT /connectors/{name}/topics/reset.",
    )
    d.define(
        "config.providers",
        ConfigType.LIST,
        "",
        importance=Importance.LOW,
        documentation="Names of ConfigProviders; each has config.providers.<name>.class and "
        "optional config.providers.<name>.param.* settings.",
    )
    d.define(
        "sluice.source.batch.max.records",
        ConfigType.INT,
        500_000,
        Range.at_least(1),
        Importance.LOW,
        "Not used since source tasks run as long-lived Spark tasks (each poll's records are "
        "written as they come); accepted so that existing worker configs keep working.",
    )
    d.define(
        "sluice.source.batch.max.wait.ms",
        ConfigType.INT,
        500,
        Range.at_least(1),
        Importance.LOW,
        "Not used since source tasks run as long-lived Spark tasks; accepted so that "
        "existing worker configs keep working.",
    )
    d.define(
        "sluice.sink.batch.max.records",
        ConfigType.INT,
        10_000,
        Range.at_least(1),
        Importance.LOW,
        "Most records one put() call of a sink task receives (Kafka Connect: the consumer's max.poll.records).",
    )
    d.define(
        "sluice.sink.poll.interval.ms",
        ConfigType.INT,
        100,
        Range.at_least(1),
        Importance.LOW,
        "How long a sink task's consumer waits for records at a time after records came, "
        "between looks at what the worker asked (pause, stop, new partitions); each empty "
        "wait doubles the next, up to 500 ms (or this, when longer).",
    )
    d.define(
        "sluice.task.hosts",
        ConfigType.INT,
        0,
        Range.at_least(0),
        Importance.LOW,
        "How many task hosts (long-lived Spark tasks, each a Python process) the worker spreads "
        "its connectors' tasks over; each runs many tasks on threads. 0: one per core in local "
        "mode, half of Spark's slots on a cluster (at most 8). Connectors with "
        "sluice.task.host=dedicated get a host of their own for each task besides.",
    )
    d.define(
        TASK_HOSTS_STANDBY_CONFIG,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Keep the shared task hosts up ahead of need, with or without tasks, from the "
        "worker's start: a task starts at once. false: no Python process runs until a task that "
        "needs one comes (it waits a few seconds for its host), and an empty host is let go — for "
        "workers whose connectors are Java plugins (their tasks run in the JVM task host), where the "
        "hosts would only cost memory.",
    )
    d.define(
        "sluice.console.enable",
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Serve the web console at /ui/ on the REST listeners (it makes ordinary REST calls "
        "to this worker, with the caller's credentials); false: no console.",
    )
    d.define(
        "sluice.transforms.columnar.enable",
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Run a sink connector's transformation chain over whole batches of records when "
        "every stage has a batch form (RegexRouter, Filter, DropHeaders and the predicates RecordIsTombstone, "
        "TopicNameMatches and HasHeaderKey do); false: always record by record.",
    )
    if standalone:
        d.define(
            "offset.storage.file.filename",
            ConfigType.STRING,
            importance=Importance.HIGH,
            documentation="File to store source connector offsets in.",
        )
        d.define(
            "sluice.config.storage.file.filename",
            ConfigType.STRING,
            None,
            importance=Importance.LOW,
            documentation="File keeping REST-created connectors and target states across restarts "
            "(default: the offsets file name plus '.connectors.json').",
        )
    else:
        _distributed_keys(d)
    return d


def _distributed_keys(d: ConfigDef) -> None:
    """Kafka Connect's DistributedConfig keys Sluice uses (spec 3.3)."""
    d.define(
        "group.id",
        ConfigType.STRING,
        importance=Importance.HIGH,
        documentation="The cluster this worker belongs to: workers with the same group.id form one cluster.",
    )
    for kind, partitions, what in (
        ("config", None, "connector and task configurations"),
        ("offset", 25, "source connector offsets"),
        ("status", 5, "connector and task statuses"),
    ):
        d.define(
            f"{kind}.storage.topic",
            ConfigType.STRING,
            importance=Importance.HIGH,
            documentation=f"Compacted topic holding the {what}.",
        )
        d.define(
            f"{kind}.storage.replication.factor",
            ConfigType.SHORT,
            3,
            importance=Importance.LOW,
            documentation=f"Replication factor of {kind}.storage.topic when it is created (-1: broker default).",
        )
        if partitions is not None:
            d.define(
                f"{kind}.storage.partitions",
                ConfigType.INT,
                partitions,
                importance=Importance.LOW,
                documentation=f"Partitions of {kind}.storage.topic when it is created (-1: broker default).",
            )
    d.define(
        "session.timeout.ms",
        ConfigType.INT,
        10000,
        importance=Importance.HIGH,
        documentation="How long the group waits for a worker's heartbeat before it is considered gone.",
    )
    d.define(
        "heartbeat.interval.ms",
        ConfigType.INT,
        3000,
        importance=Importance.HIGH,
        documentation="How often a worker heartbeats to the group coordinator.",
    )
    d.define(
        "rebalance.timeout.ms",
        ConfigType.INT,
        60000,
        importance=Importance.HIGH,
        documentation="How long workers have to rejoin the group once a rebalance starts.",
    )
    d.define(
        "scheduled.rebalance.max.delay.ms",
        ConfigType.INT,
        300000,
        Range.between(0, 2**31 - 1),
        Importance.LOW,
        "How long the work of a worker that left is held back for its return.",
    )
    d.define(
        "connect.protocol",
        ConfigType.STRING,
        "sessioned",
        ValidString.in_case_insensitive("eager", "compatible", "sessioned"),
        Importance.LOW,
        "The group protocol workers speak.",
    )
    d.define(
        EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG,
        ConfigType.STRING,
        "disabled",
        CaseInsensitiveValidString.in_("disabled", "preparing", "enabled"),
        Importance.HIGH,
        "Exactly-once delivery of source records (Kafka's KIP-618): 'enabled' runs every source task "
        "with a transactional producer; 'disabled' delivers at least once; 'preparing' (Kafka's step "
        "of a rolling upgrade) delivers at least once, as 'disabled'.",
    )
    _inter_worker_keys(d)
    d.define(
        "worker.sync.timeout.ms",
        ConfigType.INT,
        3000,
        importance=Importance.MEDIUM,
        documentation="How long a worker waits to catch up with the config topic before it gives up "
        "its work and rejoins.",
    )


def _supported(kind: str) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        for algorithm in value if isinstance(value, list) else [value]:
            if algorithm not in MAC_ALGORITHMS:
                raise ConfigError(
                    name,
                    algorithm,
                    f"the algorithm is not supported by this worker; the supported {kind} algorithms are: "
                    + ", ".join(MAC_ALGORITHMS),
                )
        if isinstance(value, list) and not value:
            raise ConfigError(name, "", "At least one signature verification algorithm must be provided")

    return check


def _inter_worker_keys(d: ConfigDef) -> None:
    """KIP-507's keys: how the leader makes session keys and how workers sign and check
    internal requests (:mod:`sluice.runtime.herder.request_signing`)."""
    d.define(
        KEY_TTL_MS_CONFIG,
        ConfigType.INT,
        3600000,
        Range.between(0, 2**31 - 1),
        Importance.LOW,
        "How long a session key signs internal requests before the leader makes a new one (ms).",
    )
    d.define(
        KEY_GENERATION_ALGORITHM_CONFIG,
        ConfigType.STRING,
        "HmacSHA256",
        LambdaValidator.with_(_supported("KeyGenerator"), "Any KeyGenerator algorithm supported by the worker"),
        Importance.LOW,
        "The algorithm the leader makes session keys with.",
    )
    d.define(
        KEY_SIZE_CONFIG,
        ConfigType.INT,
        None,
        importance=Importance.LOW,
        documentation="The size of session keys in bits (the algorithm's default when unset).",
    )
    d.define(
        SIGNATURE_ALGORITHM_CONFIG,
        ConfigType.STRING,
        "HmacSHA256",
        LambdaValidator.with_(_supported("Mac"), "Any MAC algorithm supported by the worker"),
        Importance.LOW,
        "The algorithm this worker signs internal requests with.",
    )
    d.define(
        VERIFICATION_ALGORITHMS_CONFIG,
        ConfigType.LIST,
        "HmacSHA256",
        LambdaValidator.with_(_supported("Mac"), "A list of one or more MAC algorithms, each supported by the worker"),
        Importance.LOW,
        f"The algorithms this worker accepts on signed internal requests; must include {SIGNATURE_ALGORITHM_CONFIG}.",
    )


#: Whether shared task hosts are kept up ahead of need (true) or started for the tasks that come.
TASK_HOSTS_STANDBY_CONFIG = "sluice.task.hosts.standby"
#: A distributed worker's exactly-once source support (``disabled``, ``preparing``, ``enabled``).
EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG = "exactly.once.source.support"


@dataclass(frozen=True)
class WorkerConfig:
    """Parsed worker properties plus the raw map (converter and client prefixes)."""

    raw: dict[str, str]
    values: dict[str, Any]

    @classmethod
    def standalone(cls, props: Mapping[str, str]) -> WorkerConfig:
        raw = {str(k): str(v) for k, v in props.items()}
        return cls(raw, _worker_def(True).parse(raw))

    @classmethod
    def distributed(cls, props: Mapping[str, str]) -> WorkerConfig:
        raw = {str(k): str(v) for k, v in props.items()}
        values = _worker_def(False).parse(raw)
        signature = values[SIGNATURE_ALGORITHM_CONFIG]
        if signature not in values[VERIFICATION_ALGORITHMS_CONFIG]:
            raise ConfigError(
                SIGNATURE_ALGORITHM_CONFIG,
                signature,
                f"Signature algorithm must be present in {VERIFICATION_ALGORITHMS_CONFIG} list",
            )
        algorithm, size = values[KEY_GENERATION_ALGORITHM_CONFIG], values[KEY_SIZE_CONFIG]
        try:
            session_key_bits(algorithm, size)
        except ValueError as e:
            raise ConfigError(
                f"Unable to create key generator with algorithm {algorithm} and key size {size}: {e}"
            ) from None
        return cls(raw, values)

    def get(self, key: str) -> Any:
        return self.values[key]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(self.values["bootstrap.servers"])

    def spark_conf(self) -> dict[str, str]:
        return {k: v for k, v in self.raw.items() if k.startswith("spark.")}

    def prefixed(self, prefix: str) -> dict[str, str]:
        return {k[len(prefix) :]: v for k, v in self.raw.items() if k.startswith(prefix)}

    @property
    def exactly_once_source_support(self) -> str:
        """``exactly.once.source.support`` in lower case (``disabled``, ``preparing``,
        ``enabled``; ``none`` where the worker has no such setting, as in standalone mode)."""
        return str(self.values.get(EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG)).strip().lower()

    @property
    def exactly_once_source(self) -> bool:
        """Whether source tasks deliver exactly once (a distributed worker with
        ``exactly.once.source.support=enabled``)."""
        return self.exactly_once_source_support == "enabled"

    @property
    def transactional_leader(self) -> bool:
        """Whether the group's leader writes the config topic in transactions (Kafka's
        ``transactionalLeaderEnabled``: exactly-once source support ``preparing`` or
        ``enabled``)."""
        return self.exactly_once_source_support in ("preparing", "enabled")

    @property
    def plugin_path(self) -> list[str]:
        return list(self.values.get("plugin.path") or [])


def converter_props(config: Mapping[str, str], prefix: str) -> dict[str, str]:
    """``<prefix>.x=y`` → ``{"x": "y"}`` for a converter (``prefix`` e.g. ``key.converter``)."""
    head = prefix + "."
    return {k[len(head) :]: v for k, v in config.items() if k.startswith(head)}
