"""Converters between Connect data and bytes, mirroring ``org.apache.kafka.connect.storage``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from sluice.api.data import Schema

if TYPE_CHECKING:
    from sluice.api.config import ConfigDef
    from sluice.api.records import Headers

__all__ = ["Converter", "HeaderConverter", "SchemaAndValue"]


@dataclass(frozen=True)
class SchemaAndValue:
    """A Connect value and its schema (``None``: schemaless)."""

    schema: Schema | None
    value: Any

    NULL: ClassVar[SchemaAndValue]


SchemaAndValue.NULL = SchemaAndValue(None, None)


class Converter(ABC):
    """Converts record keys or values between Connect data and bytes.

    Where: in the executor, one instance per role (key, value) per task instance, made
    with no arguments and configured when the task instance is set up (before its
    ``start``), and used only from the task thread — for a source task on the records
    ``poll()`` returned (after the transforms), for a sink task on the records read from
    Kafka (before the transforms and ``put()``). A chunk is the records of one
    ``poll()`` (source) or of one read from Kafka (sink). Each part of a source task's
    split read gets instances of its own, in the Python worker that reads it. In the
    worker process, throwaway instances answer :meth:`config`. Instances must be cheap
    to build: every task instance makes its own.
    """

    def configure(self, configs: dict[str, Any], is_key: bool) -> None:
        """Called once per instance, before any conversion, with the converter's settings:
        ``key.converter.*`` or ``value.converter.*`` (prefix stripped) of the connector
        config when it names its own converter, else of the worker's, plus
        ``converter.type`` (``key`` or ``value``) unless set. Values are strings.

        Raises: the task fails when its instance starts.
        """

    @abstractmethod
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """Serialise a source record's key or value for ``topic``; ``None`` writes null.

        Called on the task thread, record by record, when :meth:`from_connect_batch`
        does not apply. ``headers`` are the record's, or ``None`` when it has none.

        Raises: :class:`~sluice.api.errors.DataError` for data it cannot convert. Any
        error goes through the connector's ``errors.*`` policy (retried with
        ``errors.retry.timeout`` if retriable, logged, dead-lettered if set), then the
        record is skipped (``errors.tolerance=all``) or the task fails after the records
        before it were written.

        Not guaranteed: one call per record — after an error in a chunk, the runtime
        converts the chunk again record by record.
        """

    @abstractmethod
    def to_connect_data(self, topic: str, value: bytes | None, headers: Headers | None = None) -> SchemaAndValue:
        """Deserialise a key or value read from ``topic`` for a sink task (``value`` is
        ``None`` for a null key or a tombstone).

        Called on the task thread, record by record, when :meth:`to_connect_batch` does
        not apply; ``headers`` are the record's converted headers (empty when it has none).

        Raises: as :meth:`from_connect_data`; the dead letter queue gets the raw record.
        Not guaranteed: one call per record (as for :meth:`from_connect_data`).
        """

    # Optional batch forms. A converter whose results never depend on the record headers
    # may override them to convert a whole batch in one call (no per-record method call or
    # SchemaAndValue); the framework then uses them instead of the per-record methods.
    # Returning None means "not supported": the framework falls back to the per-record
    # methods, with headers.

    def to_connect_batch(self, topic: str, values: list[bytes | None]) -> tuple[list[Schema | None], list[Any]] | None:
        """Deserialise many values of one topic: ``(schemas, values)``, one entry per input.

        Called on the task thread with a whole chunk when all its records come from one
        topic; for a chunk whose keys are all null it may be called with ``[None]`` only,
        and that result used for every record. Return ``None`` (the default) to have
        :meth:`to_connect_data` called per record instead. If it raises, the chunk is
        converted again record by record, under the error policy.
        """
        return None

    def from_connect_batch(
        self, topic: str, schemas: list[Schema | None], values: list[Any]
    ) -> list[bytes | None] | None:
        """Serialise many values for one topic, one result per input.

        Called on the task thread with a whole chunk when all its records go to one
        topic; headers are not passed. Return ``None`` (the default) to have
        :meth:`from_connect_data` called per record instead. If it raises, the chunk is
        converted again record by record, under the error policy.
        """
        return None

    def config(self) -> ConfigDef:
        """The :class:`~sluice.api.config.ConfigDef` of the converter's settings. Called
        in the worker process on a throwaway, unconfigured instance when a connector
        config names this converter (validation of its ``<x>.converter.*`` keys), which
        is then closed. Default: no keys."""
        from sluice.api.config import ConfigDef

        return ConfigDef()

    def close(self) -> None:
        """Release resources. Called only on instances the worker process made for
        itself (for :meth:`config`). Not called on the instances tasks use: those live as
        long as the task instance and are dropped with it, so hold nothing that needs
        closing there."""


class HeaderConverter(ABC):
    """Converts header values (``org.apache.kafka.connect.storage.HeaderConverter``).

    Built, used and left like :class:`Converter`: one instance per task instance in the
    executor (``header.converter``, by default ``SimpleHeaderConverter``), called from
    the task thread for each header of each record.
    """

    def configure(self, configs: dict[str, Any]) -> None:
        """Called once per instance, before any conversion, with the ``header.converter.*``
        settings (prefix stripped) of the connector config when it names its own header
        converter, else of the worker's. Raises: the task fails when its instance
        starts."""

    @abstractmethod
    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None, value: Any) -> bytes | None:
        """Serialise one header of a source record for ``topic``. Called on the task
        thread per header. Raises: as :meth:`Converter.from_connect_data`."""

    @abstractmethod
    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        """Deserialise one header of a record read from ``topic`` for a sink task. Called
        on the task thread per header, before the key and value are converted. Raises:
        as :meth:`Converter.to_connect_data`."""

    def config(self) -> ConfigDef:
        """The :class:`~sluice.api.config.ConfigDef` of the header converter's settings;
        called as :meth:`Converter.config`. Default: no keys."""
        from sluice.api.config import ConfigDef

        return ConfigDef()

    def close(self) -> None:
        """Release resources. Called as :meth:`Converter.close`: not on the instances
        tasks use."""
