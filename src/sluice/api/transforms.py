"""Single message transforms and predicates, mirroring ``org.apache.kafka.connect.transforms``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from sluice.api.records import ConnectRecord

if TYPE_CHECKING:
    from sluice.api.config import ConfigDef

__all__ = ["Predicate", "Transformation"]

R = TypeVar("R", bound=ConnectRecord)


class Transformation(ABC, Generic[R]):
    """Transforms one record at a time; returning ``None`` drops the record. Runs in
    Spark executors, inside the task's Python worker."""

    def configure(self, configs: dict[str, Any]) -> None:
        """Called once with the transform's own configs (``transforms.<alias>.`` stripped)."""

    @abstractmethod
    def apply(self, record: R) -> R | None: ...

    @abstractmethod
    def config(self) -> ConfigDef: ...

    def close(self) -> None:
        """Release resources."""


class Predicate(ABC, Generic[R]):
    """Decides whether a transform applies to a record."""

    def configure(self, configs: dict[str, Any]) -> None:
        """Called once with the predicate's own configs."""

    @abstractmethod
    def test(self, record: R) -> bool: ...

    @abstractmethod
    def config(self) -> ConfigDef: ...

    def close(self) -> None:
        """Release resources."""
