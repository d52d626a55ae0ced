"""Filter (``org.apache.kafka.connect.transforms.Filter``): drops every record. Meant to be
used with a predicate (``transforms.<alias>.predicate``), so that only the records the
predicate matches (or, with ``negate=true``, does not match) are dropped."""

from __future__ import annotations

from typing import Any

from sluice.api.config import ConfigDef
from sluice.api.records import ConnectRecord, SinkBatch
from sluice.api.transforms import Transformation

__all__ = ["Filter"]

CONFIG_DEF = ConfigDef()


class Filter(Transformation):
    """Drops each record it is applied to; later transformations never see it."""

    OVERVIEW_DOC = (
        "Drops each record it is applied to, so later transformations and the connector never see it. "
        "Combine it with a predicate to drop only some records."
    )

    def configure(self, configs: dict[str, Any]) -> None:
        pass

    def apply(self, record: ConnectRecord) -> None:
        return None

    def apply_batch(self, batch: SinkBatch) -> SinkBatch:
        return batch.take([])

    def config(self) -> ConfigDef:
        return CONFIG_DEF
