"""InsertHeader (``org.apache.kafka.connect.transforms.InsertHeader``): adds a header with a
fixed value to each record.

``value.literal`` is parsed as Kafka's ``Values.parseString`` does, so ``42`` is added as
an INT8 header, ``true`` as a BOOLEAN, ``[1,2]`` as an ARRAY, ``2024-01-31`` as a Date, and
text as a STRING; ``null`` adds a header without schema or value.
"""

from __future__ import annotations

from typing import Any

from sluice.api.config import ConfigDef, ConfigType, Importance, NonNullValidator
from sluice.api.records import ConnectRecord
from sluice.api.transforms import Transformation
from sluice.api.values import parse_string

__all__ = ["InsertHeader"]

HEADER_FIELD = "header"
VALUE_LITERAL_FIELD = "value.literal"

CONFIG_DEF = (
    ConfigDef()
    .define(
        HEADER_FIELD,
        ConfigType.STRING,
        validator=NonNullValidator(),
        importance=Importance.HIGH,
        documentation="Name of the header to add.",
    )
    .define(
        VALUE_LITERAL_FIELD,
        ConfigType.STRING,
        validator=NonNullValidator(),
        importance=Importance.HIGH,
        documentation="Value of the header, the same for every record; its type is inferred from the text "
        "(a number, boolean, array, map, date, time or timestamp, else a string).",
    )
)


class InsertHeader(Transformation):
    """Adds a header to each record (after any header of the same name already there)."""

    OVERVIEW_DOC = "Adds a header with a fixed value to each record."

    def __init__(self) -> None:
        self._header = ""
        self._value: Any = None
        self._schema: Any = None

    def configure(self, configs: dict[str, Any]) -> None:
        values = CONFIG_DEF.parse(configs)
        self._header = values[HEADER_FIELD]
        literal = parse_string(values[VALUE_LITERAL_FIELD])
        self._schema = literal.schema
        self._value = literal.value

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        headers = record.headers.duplicate()
        headers.add(self._header, self._value, self._schema)
        return record.new_record(headers=headers)

    def config(self) -> ConfigDef:
        return CONFIG_DEF
