"""Worker and connector configuration with Kafka Connect's keys and defaults.

The package's modules, each importing only the ones listed before it:

- :mod:`~sluice.runtime.config.clients`: the Kafka clients' keys, shown for the
  ``producer.override.*``, ``consumer.override.*`` and ``admin.override.*`` settings.
- :mod:`~sluice.runtime.config.worker`: the worker's keys and :class:`WorkerConfig`.
- :mod:`~sluice.runtime.config.keys`: the names of the connector config keys and groups.
- :mod:`~sluice.runtime.config.versions`: ``*.plugin.version`` requirements
  (:class:`VersionRange`, Maven's syntax).
- :mod:`~sluice.runtime.config.installed_plugins`: recommenders and validators that
  consult the installed plugins.
- :mod:`~sluice.runtime.config.enrichment`: :func:`enrich`, the keys of each
  ``transforms``/``predicates`` alias.
- :mod:`~sluice.runtime.config.connector`: :func:`connector_config_def`, the framework's
  keys of a sink or source connector, and :class:`ConnectorConfigDefs`, which bundles
  them with the alias keys for validation and the plugin config endpoint.

This module only re-exports the names the rest of Sluice and its tests import from it.
"""

from __future__ import annotations

from sluice.runtime.config.connector import (
    ConnectorConfigDefs,
    ConverterDefault,
    connector_config_def,
    worker_converter_defaults,
)
from sluice.runtime.config.enrichment import enrich
from sluice.runtime.config.installed_plugins import PLUGIN_KINDS, resolve_class_name
from sluice.runtime.config.keys import (
    ADMIN_OVERRIDES_PREFIX,
    CONNECTOR_CLASS_CONFIG,
    CONNECTOR_VERSION_CONFIG,
    CONSUMER_OVERRIDES_PREFIX,
    CONVERTER_KEYS,
    DLQ_CONTEXT_HEADERS_ENABLE_CONFIG,
    DLQ_TOPIC_NAME_CONFIG,
    DLQ_TOPIC_REPLICATION_FACTOR_CONFIG,
    ERRORS_TOLERANCE_CONFIG,
    HEADER_CONVERTER_CLASS_CONFIG,
    KEY_CONVERTER_CLASS_CONFIG,
    PLUGIN_VERSION_SUFFIX,
    PREDICATES_CONFIG,
    PRODUCER_OVERRIDES_PREFIX,
    TOPIC_CREATION_GROUPS_CONFIG,
    TOPIC_CREATION_PREFIX,
    TOPICS_CONFIG,
    TOPICS_REGEX_CONFIG,
    TRANSFORMS_CONFIG,
    VALUE_CONVERTER_CLASS_CONFIG,
)
from sluice.runtime.config.versions import VersionRange, version_mismatch_message, version_range
from sluice.runtime.config.worker import SIMPLE_HEADER_CONVERTER, WorkerConfig, converter_props

__all__ = [
    "ADMIN_OVERRIDES_PREFIX",
    "CONNECTOR_CLASS_CONFIG",
    "CONNECTOR_VERSION_CONFIG",
    "CONSUMER_OVERRIDES_PREFIX",
    "CONVERTER_KEYS",
    "DLQ_CONTEXT_HEADERS_ENABLE_CONFIG",
    "DLQ_TOPIC_NAME_CONFIG",
    "DLQ_TOPIC_REPLICATION_FACTOR_CONFIG",
    "ERRORS_TOLERANCE_CONFIG",
    "HEADER_CONVERTER_CLASS_CONFIG",
    "KEY_CONVERTER_CLASS_CONFIG",
    "PLUGIN_KINDS",
    "PLUGIN_VERSION_SUFFIX",
    "PREDICATES_CONFIG",
    "PRODUCER_OVERRIDES_PREFIX",
    "SIMPLE_HEADER_CONVERTER",
    "TOPICS_CONFIG",
    "TOPICS_REGEX_CONFIG",
    "TOPIC_CREATION_GROUPS_CONFIG",
    "TOPIC_CREATION_PREFIX",
    "TRANSFORMS_CONFIG",
    "VALUE_CONVERTER_CLASS_CONFIG",
    "ConnectorConfigDefs",
    "ConverterDefault",
    "VersionRange",
    "WorkerConfig",
    "connector_config_def",
    "converter_props",
    "enrich",
    "resolve_class_name",
    "version_mismatch_message",
    "version_range",
    "worker_converter_defaults",
]
