"""The public plugin API: what connector, converter and transform authors import.

This package imports nothing else from Sluice but the private leaf ``sluice._java`` (how
Java formats, narrows, parses and names things), and nothing from PySpark, so a plugin
written against it can be unit-tested without a JVM.
"""

from sluice.api.config import (
    NO_DEFAULT,
    Config,
    ConfigDef,
    ConfigKey,
    ConfigType,
    ConfigValue,
    Importance,
    NonEmptyString,
    Password,
    Range,
    Recommender,
    ValidList,
    ValidString,
    Width,
)
from sluice.api.config_provider import ConfigData, ConfigProvider
from sluice.api.connector import Connector, ConnectorContext, Task
from sluice.api.converter import Converter, HeaderConverter, SchemaAndValue
from sluice.api.data import Field, Schema, SchemaBuilder, Struct, Type
from sluice.api.errors import (
    AlreadyExistsError,
    ConfigError,
    ConnectError,
    DataError,
    IllegalWorkerStateError,
    NotFoundError,
    RetriableError,
    SchemaProjectorError,
)
from sluice.api.metrics import Metric, MetricsReporter
from sluice.api.records import (
    ConnectRecord,
    Header,
    Headers,
    SinkBatch,
    SinkRecord,
    SourceRecord,
    TimestampType,
    TopicPartition,
)
from sluice.api.schema_projector import SchemaProjector
from sluice.api.sink import ErrantRecordReporter, SinkConnector, SinkTask, SinkTaskContext
from sluice.api.source import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    OffsetStorageReader,
    SourceConnector,
    SourceTask,
    SourceTaskContext,
    TransactionContext,
)
from sluice.api.transforms import Predicate, Transformation

__all__ = [
    "AlreadyExistsError",
    "Config",
    "ConfigData",
    "ConfigDef",
    "ConfigError",
    "ConfigKey",
    "ConfigProvider",
    "ConfigType",
    "ConfigValue",
    "ConnectError",
    "ConnectRecord",
    "Connector",
    "ConnectorContext",
    "ConnectorTransactionBoundaries",
    "Converter",
    "DataError",
    "ErrantRecordReporter",
    "ExactlyOnceSupport",
    "Field",
    "Header",
    "HeaderConverter",
    "Headers",
    "IllegalWorkerStateError",
    "Importance",
    "Metric",
    "MetricsReporter",
    "NO_DEFAULT",
    "NonEmptyString",
    "NotFoundError",
    "OffsetStorageReader",
    "Password",
    "Predicate",
    "Range",
    "Recommender",
    "RetriableError",
    "Schema",
    "SchemaAndValue",
    "SchemaBuilder",
    "SchemaProjector",
    "SchemaProjectorError",
    "SinkBatch",
    "SinkConnector",
    "SinkRecord",
    "SinkTask",
    "SinkTaskContext",
    "SourceConnector",
    "SourceRecord",
    "SourceTask",
    "SourceTaskContext",
    "Struct",
    "Task",
    "TimestampType",
    "TopicPartition",
    "TransactionContext",
    "Transformation",
    "Type",
    "ValidList",
    "ValidString",
    "Width",
]
