"""The names of the framework's connector config keys and groups.

The same names as Kafka Connect 4.x's ``ConnectorConfig``, ``SinkConnectorConfig`` and
``SourceConnectorConfig`` use; :mod:`~sluice.runtime.config.connector` defines the keys
themselves, and the runtime reads connector configs by these names.
"""

from __future__ import annotations

NAME_CONFIG = "name"
CONNECTOR_CLASS_CONFIG = "connector.class"
CONNECTOR_VERSION_CONFIG = "connector.plugin.version"
TASKS_MAX_CONFIG = "tasks.max"
TASKS_MAX_ENFORCE_CONFIG = "tasks.max.enforce"
KEY_CONVERTER_CLASS_CONFIG = "key.converter"
KEY_CONVERTER_VERSION_CONFIG = "key.converter.plugin.version"
VALUE_CONVERTER_CLASS_CONFIG = "value.converter"
VALUE_CONVERTER_VERSION_CONFIG = "value.converter.plugin.version"
HEADER_CONVERTER_CLASS_CONFIG = "header.converter"
HEADER_CONVERTER_VERSION_CONFIG = "header.converter.plugin.version"
TRANSFORMS_CONFIG = "transforms"
PREDICATES_CONFIG = "predicates"
CONFIG_RELOAD_ACTION_CONFIG = "config.action.reload"
ERRORS_RETRY_TIMEOUT_CONFIG = "errors.retry.timeout"
ERRORS_RETRY_MAX_DELAY_CONFIG = "errors.retry.delay.max.ms"
ERRORS_TOLERANCE_CONFIG = "errors.tolerance"
ERRORS_LOG_ENABLE_CONFIG = "errors.log.enable"
ERRORS_LOG_INCLUDE_MESSAGES_CONFIG = "errors.log.include.messages"
TOPICS_CONFIG = "topics"
TOPICS_REGEX_CONFIG = "topics.regex"
DLQ_TOPIC_NAME_CONFIG = "errors.deadletterqueue.topic.name"
DLQ_TOPIC_REPLICATION_FACTOR_CONFIG = "errors.deadletterqueue.topic.replication.factor"
DLQ_CONTEXT_HEADERS_ENABLE_CONFIG = "errors.deadletterqueue.context.headers.enable"
TOPIC_CREATION_GROUPS_CONFIG = "topic.creation.groups"
TOPIC_CREATION_PREFIX = "topic.creation."
EXACTLY_ONCE_SUPPORT_CONFIG = "exactly.once.support"
TRANSACTION_BOUNDARY_CONFIG = "transaction.boundary"
TRANSACTION_BOUNDARY_INTERVAL_CONFIG = "transaction.boundary.interval.ms"
OFFSETS_TOPIC_CONFIG = "offsets.storage.topic"
PLUGIN_VERSION_SUFFIX = "plugin.version"
PRODUCER_OVERRIDES_PREFIX = "producer.override."
CONSUMER_OVERRIDES_PREFIX = "consumer.override."
ADMIN_OVERRIDES_PREFIX = "admin.override."

COMMON_GROUP = "Common"
TRANSFORMS_GROUP = "Transforms"
PREDICATES_GROUP = "Predicates"
ERROR_GROUP = "Error Handling"
TOPIC_CREATION_GROUP = "Topic Creation"
EXACTLY_ONCE_GROUP = "Exactly Once Support"
OFFSETS_TOPIC_GROUP = "offsets.topic"

# Each converter key, the key of its version and the plugin type it takes.
CONVERTER_KEYS: tuple[tuple[str, str, str], ...] = (
    (KEY_CONVERTER_CLASS_CONFIG, KEY_CONVERTER_VERSION_CONFIG, "converter"),
    (VALUE_CONVERTER_CLASS_CONFIG, VALUE_CONVERTER_VERSION_CONFIG, "converter"),
    (HEADER_CONVERTER_CLASS_CONFIG, HEADER_CONVERTER_VERSION_CONFIG, "header_converter"),
)
