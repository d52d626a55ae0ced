"""``org.apache.kafka.connect.storage.StringConverter``.

Serialises any value as its Java-style string form (``java_string``: ``str`` as is,
``true``/``false``, ``1.0E10``, ``{k=v}``, ``[a, b]``, ``Struct{...}``) encoded with
``converter.encoding`` (default UTF-8); deserialises to an optional STRING. Unencodable
characters become ``?`` and malformed input decodes to U+FFFD, as Java's ``String``
conversions do. Also usable as a header converter.
"""

from __future__ import annotations

import codecs
from typing import Any

from sluice.api.config import ConfigDef, ConfigType, Importance, Width
from sluice.api.converter import Converter, SchemaAndValue
from sluice.api.data import Schema, java_string
from sluice.api.errors import ConfigError, DataError
from sluice.converters._common import ConvertsHeadersAsValues, converter_config_def

__all__ = ["StringConverter"]

ENCODING_CONFIG = "converter.encoding"
ENCODING_DEFAULT = "UTF-8"

_UTF16 = {"utf-16", "utf16", "unicode"}


def _codec(encoding: str) -> tuple[str, bool]:
    """The Python codec for a Java charset name, and whether it is Java's UTF-16
    (big-endian with a byte-order mark on output, big-endian when unmarked on input)."""
    if encoding.strip().lower() in _UTF16:
        return "utf-16-be", True
    try:
        return codecs.lookup(encoding.strip()).name, False
    except LookupError:
        raise ConfigError(ENCODING_CONFIG, encoding, "Unsupported encoding") from None


def _config_def() -> ConfigDef:
    return converter_config_def().define(
        ENCODING_CONFIG,
        ConfigType.STRING,
        ENCODING_DEFAULT,
        importance=Importance.HIGH,
        documentation="The name of the Java character set to use for encoding strings as byte arrays.",
        width=Width.MEDIUM,
        display_name="Encoding",
    )


class StringConverter(Converter, ConvertsHeadersAsValues):
    """Values as strings. Config: ``converter.encoding`` (``encoding`` is accepted too)."""

    def __init__(self) -> None:
        self._codec = "utf-8"
        self._utf16 = False

    def config(self) -> ConfigDef:
        return _config_def()

    def configure(self, configs: dict[str, Any], is_key: bool | None = None) -> None:
        encoding = configs.get(ENCODING_CONFIG)
        if encoding is None:
            encoding = configs.get("encoding", ENCODING_DEFAULT)
        self._codec, self._utf16 = _codec(str(encoding))

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any, headers: Any = None) -> bytes | None:
        if value is None:
            return None
        text = value if isinstance(value, str) else java_string(value, schema)
        try:
            if self._codec == "utf-8":
                return text.encode("utf-8", "replace")
            data = text.encode(self._codec, "replace")
            # Java's UTF-16 encoder writes a byte-order mark, but not for an empty string.
            return b"\xfe\xff" + data if self._utf16 and data else data
        except Exception as e:  # pragma: no cover - codec failures are exotic
            raise DataError("Failed to serialize to a string: ") from e

    def to_connect_data(self, topic: str, value: bytes | None, headers: Any = None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, None)
        try:
            if self._utf16:
                raw = bytes(value)
                if raw[:2] in (b"\xfe\xff", b"\xff\xfe"):
                    text = raw.decode("utf-16", "replace")
                else:
                    text = raw.decode("utf-16-be", "replace")
            else:
                text = bytes(value).decode(self._codec, "replace")
        except Exception as e:  # pragma: no cover
            raise DataError("Failed to deserialize string: ") from e
        return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, text)

    def to_connect_batch(self, topic: str, values: list[bytes | None]) -> tuple[list[Schema | None], list[Any]] | None:
        if self._utf16:
            return None
        codec = self._codec
        try:
            texts = [
                v.decode(codec, "replace")
                if type(v) is bytes
                else (None if v is None else bytes(v).decode(codec, "replace"))
                for v in values
            ]
        except Exception as e:  # pragma: no cover
            raise DataError("Failed to deserialize string: ") from e
        return [Schema.OPTIONAL_STRING_SCHEMA] * len(values), texts

    def from_connect_batch(
        self, topic: str, schemas: list[Schema | None], values: list[Any]
    ) -> list[bytes | None] | None:
        if self._codec != "utf-8":
            return None
        return [
            None if v is None else (v if type(v) is str else java_string(v, s)).encode("utf-8", "replace")
            for s, v in zip(schemas, values, strict=True)
        ]

    def close(self) -> None:
        pass
