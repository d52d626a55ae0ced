"""Single message transforms and predicates, mirroring ``org.apache.kafka.connect.transforms``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from sluice.api.records import ConnectRecord, SinkBatch

if TYPE_CHECKING:
    from sluice.api.config import ConfigDef

__all__ = ["Predicate", "Transformation"]

R = TypeVar("R", bound=ConnectRecord)


class Transformation(ABC, Generic[R]):
    """Transforms one record at a time (a single message transform).

    Where: in the executor, one chain of instances per task instance, built when the
    task instance is set up, before its ``start`` (class instantiated with no arguments,
    then :meth:`configure`), and used only from the task thread — for a source connector
    on the records ``poll()`` returned, before the converters; for a sink connector on
    the converted records, before ``put()``. Each part of a source task's split read
    gets a chain of its own, in the Python worker that reads it. In the worker process,
    throwaway instances answer :meth:`config` (validation,
    ``GET /connector-plugins/{name}/config``).
    """

    def configure(self, configs: dict[str, Any]) -> None:
        """Called once per instance, before any :meth:`apply`, with the transform's own
        keys: ``transforms.<alias>.*`` with the prefix stripped, ``predicate`` and
        ``negate`` left out, values as written in the connector config (strings, with
        config-provider placeholders resolved). They were checked against
        :meth:`config` first.

        Raises: any exception (:class:`~sluice.api.errors.ConfigError` for a bad value)
        fails the task when its instance is set up in the executor, and the
        transformations made so far are closed.
        """

    @abstractmethod
    def apply(self, record: R) -> R | None:
        """Return the transformed record — a new one, usually ``record.new_record(...)``
        — or ``None`` to drop it.

        Called on the task thread, once per record for each stage, in record order;
        with a predicate, only for the records it selects (``negate`` inverts it). Once a
        stage returns ``None`` the later stages are skipped; a dropped record counts as
        processed (its offset is committed).

        Raises: the error goes through the connector's ``errors.*`` policy. With
        ``errors.retry.timeout`` set, a :class:`~sluice.api.errors.RetriableError` runs
        the whole chain again on the record, with backoff, until that timeout; then (or
        at once for any other error) the error is logged (``errors.log.enable``), the
        record goes to the dead letter queue if one is set, and the record is skipped
        (``errors.tolerance=all``) or the task fails (``none``, the default) after the
        records before it were delivered.

        Not guaranteed: one call per record — retries and a source chunk's
        record-by-record conversion after a failure may pass the same record again. Do
        not modify ``record`` in place (the runtime may still need it as it was).
        """

    def apply_batch(self, batch: SinkBatch) -> SinkBatch | None:
        """Optional, for sink connectors: :meth:`apply` on every record of ``batch`` at
        once — the batch of the records it keeps, in order, each exactly as ``apply``
        would return it (``batch.with_columns(...)`` for a transformation that keeps every
        record, ``batch.take(rows)`` to keep some) — or ``None`` when it cannot for this
        batch; the default returns ``None``.

        Called on the task thread, before any ``apply`` of the batch's records, when the
        worker's ``sluice.transforms.columnar.enable`` is true (the default) and every
        stage up to this one took the batch whole; with a predicate, on the records it
        selects. After a ``None`` — from any stage — the whole chain runs per record on
        the batch, from the first stage.

        Never raise for a record ``apply`` would fail on: return ``None`` and let
        ``apply`` report it under the error policy. An exception raised anyway is
        treated as ``None``. Do not modify ``batch``; it stays the runtime's.
        """
        return None

    @abstractmethod
    def config(self) -> ConfigDef:
        """The :class:`~sluice.api.config.ConfigDef` of the transform's own keys (without
        the ``transforms.<alias>.`` prefix). Called on fresh, unconfigured instances, in
        the worker process (validation) and in the executor (building the chain): it
        must not depend on :meth:`configure` and must not return ``None``. Keys named
        ``predicate`` or ``negate`` are hidden by the framework's."""

    def close(self) -> None:
        """Release resources. Called once per instance, on the task thread: when the
        task instance stops, after its ``stop()`` — also when its ``start`` failed —
        with the limits of :meth:`Task.stop <sluice.api.connector.Task.stop>` (no call
        when the Python worker dies or the task is abandoned); at the end of a split
        read's part; and when building the chain fails after this instance was made.
        Raises: logged and ignored."""


class Predicate(ABC, Generic[R]):
    """Decides whether a transformation applies to a record (``transforms.<alias>.predicate``).

    Built, used and closed like :class:`Transformation`, next to the transformation it
    guards; every stage that names a predicate gets an instance of its own.
    """

    def configure(self, configs: dict[str, Any]) -> None:
        """Called once per instance, before any :meth:`test`, with the predicate's own
        keys (``predicates.<alias>.*`` with the prefix stripped; strings, placeholders
        resolved). Raises: as :meth:`Transformation.configure`."""

    @abstractmethod
    def test(self, record: R) -> bool:
        """Whether the stage's transformation applies to ``record`` (inverted when the
        stage sets ``negate=true``).

        Called on the task thread before the stage's transformation, once per record
        that reaches the stage. Raises: as :meth:`Transformation.apply` (the failure's
        stage is the transformation's). Not guaranteed: one call per record (see
        :meth:`Transformation.apply`); keep it free of side effects.
        """

    def test_batch(self, batch: SinkBatch) -> list[bool] | None:
        """Optional, for sink connectors: :meth:`test` of every record of ``batch``, one
        answer per record in order, or ``None`` when it cannot for this batch (the chain
        then runs per record, see :meth:`Transformation.apply_batch`); the default
        returns ``None``. Never raise for a record ``test`` would fail on: return ``None``."""
        return None

    @abstractmethod
    def config(self) -> ConfigDef:
        """The :class:`~sluice.api.config.ConfigDef` of the predicate's own keys. Called
        on fresh, unconfigured instances, as :meth:`Transformation.config`."""

    def close(self) -> None:
        """Release resources. Called as :meth:`Transformation.close`. Raises: logged and
        ignored."""
