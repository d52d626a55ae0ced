"""Config, offset and status stores, in Kafka Connect's formats (spec section 5).

Layer rule: this package imports only :mod:`sluice.api` and the standard library.

* :mod:`sluice.storage.base`: the store interfaces and their values.
* :mod:`sluice.storage.memory`: in-memory stores (standalone statuses and configs, tests).
* :mod:`sluice.storage.file`: the standalone offset file, Kafka's Java-serialized format.
* :mod:`sluice.storage.offset_codec`: a connector's offsets in a store, decoded (the bytes are
  :mod:`sluice.kafka.offset_format`'s, as Kafka's JsonConverter writes them).
* :mod:`sluice.storage.java_serialization`: the ``HashMap<byte[], byte[]>`` serialization subset.
"""

from sluice.kafka.offset_format import (
    decode_offset_key,
    decode_offset_value,
    encode_offset_key,
    encode_offset_value,
)
from sluice.storage.base import (
    DESTROYED,
    TARGET_STATES,
    ClusterConfigState,
    ConfigBackingStore,
    ConnectorStatus,
    OffsetBackingStore,
    StatusBackingStore,
    TaskStatus,
)
from sluice.storage.file import FileOffsetBackingStore
from sluice.storage.java_serialization import (
    JavaSerializationError,
    TruncatedStreamError,
    dump_hashmap,
    load_hashmap,
)
from sluice.storage.memory import (
    MemoryConfigBackingStore,
    MemoryOffsetBackingStore,
    MemoryStatusBackingStore,
)
from sluice.storage.offset_codec import connector_offsets

__all__ = [
    "DESTROYED",
    "TARGET_STATES",
    "ClusterConfigState",
    "ConfigBackingStore",
    "ConnectorStatus",
    "FileOffsetBackingStore",
    "JavaSerializationError",
    "MemoryConfigBackingStore",
    "MemoryOffsetBackingStore",
    "MemoryStatusBackingStore",
    "OffsetBackingStore",
    "StatusBackingStore",
    "TaskStatus",
    "TruncatedStreamError",
    "connector_offsets",
    "decode_offset_key",
    "decode_offset_value",
    "dump_hashmap",
    "encode_offset_key",
    "encode_offset_value",
    "load_hashmap",
]
