"""DropHeaders (``org.apache.kafka.connect.transforms.DropHeaders``): removes every header
whose name is listed in ``headers``."""

from __future__ import annotations

import logging
from typing import Any

from sluice.api.config import ConfigDef, ConfigType, Importance, ValidList, parse_type
from sluice.api.records import ConnectRecord, Headers, SinkBatch
from sluice.api.transforms import Transformation

__all__ = ["DropHeaders"]

log = logging.getLogger(__name__)

HEADERS_FIELD = "headers"

CONFIG_DEF = ConfigDef().define(
    HEADERS_FIELD,
    ConfigType.LIST,
    validator=ValidList.any_non_duplicate_values(False, False),
    importance=Importance.HIGH,
    documentation="Names of the headers to remove; every header with one of these names is dropped.",
)


class DropHeaders(Transformation):
    """Removes one or more headers from each record."""

    OVERVIEW_DOC = "Removes the headers with the given names from each record."

    def __init__(self) -> None:
        self._names: frozenset[str] = frozenset()

    def configure(self, configs: dict[str, Any]) -> None:
        props = dict(configs)
        if props.get(HEADERS_FIELD) is not None:
            # Kafka 4.x drops repeated names with a warning before validating the list
            # (validation, as in the REST validate endpoint, still reports them).
            names = parse_type(HEADERS_FIELD, props[HEADERS_FIELD], ConfigType.LIST)
            unique = list(dict.fromkeys(names))
            if len(unique) != len(names):
                log.warning(
                    'Configuration key "%s" contains duplicate values. Duplicates will be removed. '
                    "The original value is: %s, the updated value is: %s",
                    HEADERS_FIELD,
                    names,
                    unique,
                )
            props[HEADERS_FIELD] = unique
        self._names = frozenset(CONFIG_DEF.parse(props)[HEADERS_FIELD])

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        names = self._names
        kept = Headers([h for h in record.headers if h.key not in names])
        return record.new_record(headers=kept)

    def apply_batch(self, batch: SinkBatch) -> SinkBatch:
        headers = batch.headers
        if headers.count(None) == len(headers):
            return batch  # no record has headers: nothing to drop
        names = self._names
        return batch.with_columns(
            headers=[None if h is None else Headers([x for x in h if x.key not in names]) for h in headers]
        )

    def config(self) -> ConfigDef:
        return CONFIG_DEF
