"""Key/value plumbing of the ``$Key``/``$Value`` transform pairs:
:class:`KeyOrValueTransformation` with the :class:`KeySide` / :class:`ValueSide` mixins
that pick the part of the record a variant works on, and :func:`new_record`, which copies
a record the way Kafka's ``newRecord`` does (headers duplicated)."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Generic, TypeVar

from sluice.api.data import Schema
from sluice.api.records import ConnectRecord
from sluice.api.transforms import Transformation

__all__ = ["KeyOrValueTransformation", "KeySide", "ValueSide", "new_record"]

R = TypeVar("R", bound=ConnectRecord)


def new_record(record: R, **changes: Any) -> R:
    """A copy of ``record`` with ``changes`` applied (key, value, schemas, …), carrying a
    duplicate of its headers, as Kafka's ``ConnectRecord.newRecord`` does."""
    if "headers" not in changes:
        changes["headers"] = record.headers.duplicate()
    return record.new_record(**changes)  # type: ignore[return-value]


class KeyOrValueTransformation(Transformation[R], Generic[R]):
    """Base of transforms that come as a ``$Key``/``$Value`` pair (abstract, as in Kafka, so
    plugin scanning does not list it). Mix in :class:`KeySide` or :class:`ValueSide` first to
    choose the part of the record worked on.

    Transforms keep the schema computation (cached per input schema) apart from the value
    computation, so that a columnar form of a chain can reuse the former."""

    @abstractmethod
    def operating_schema(self, record: R) -> Schema | None:
        """The schema of the part worked on (key or value)."""

    @abstractmethod
    def operating_value(self, record: R) -> Any:
        """The part worked on (key or value)."""

    @abstractmethod
    def new_record(self, record: R, schema: Schema | None, value: Any) -> R:
        """A copy of ``record`` with that part (and its schema) replaced."""


class KeySide:
    """Mixin: the transform works on the record key (the ``$Key`` variant)."""

    def operating_schema(self, record: ConnectRecord) -> Schema | None:
        return record.key_schema

    def operating_value(self, record: ConnectRecord) -> Any:
        return record.key

    def new_record(self, record: R, schema: Schema | None, value: Any) -> R:
        return new_record(record, key_schema=schema, key=value)


class ValueSide:
    """Mixin: the transform works on the record value (the ``$Value`` variant)."""

    def operating_schema(self, record: ConnectRecord) -> Schema | None:
        return record.value_schema

    def operating_value(self, record: ConnectRecord) -> Any:
        return record.value

    def new_record(self, record: R, schema: Schema | None, value: Any) -> R:
        return new_record(record, value_schema=schema, value=value)
