"""Configuration helpers shared by the built-in transforms: parsing a transform's configs,
and the configs several transforms define alike — ``replace.null.with.default``
(KIP-1040) and ``field.syntax.version`` (KIP-821)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from sluice.api.config import CaseInsensitiveValidString, ConfigDef, ConfigType, Importance
from sluice.api.errors import ConfigError

__all__ = [
    "FIELD_SYNTAX_VERSION_CONFIG",
    "REPLACE_NULL_WITH_DEFAULT_CONFIG",
    "FieldSyntaxVersion",
    "define_field_syntax_version",
    "define_replace_null_with_default",
    "parse_config",
]


def parse_config(config_def: ConfigDef, props: Mapping[str, Any] | None) -> dict[str, Any]:
    """Parse and validate a transform's configs against its definition (``SimpleConfig``);
    keys the definition does not know are ignored. Raises
    :class:`~sluice.api.errors.ConfigError`."""
    return config_def.parse(dict(props or {}))


# -- replace.null.with.default (KIP-1040) -------------------------------------------------


REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
_REPLACE_NULL_WITH_DEFAULT_DOC = (
    "When a field is null and its schema has a default value, use that default (true) or keep the null (false)."
)


def define_replace_null_with_default(config_def: ConfigDef) -> ConfigDef:
    """Add ``replace.null.with.default`` (BOOLEAN, default true, MEDIUM) to ``config_def``."""
    return config_def.define(
        REPLACE_NULL_WITH_DEFAULT_CONFIG,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.MEDIUM,
        documentation=_REPLACE_NULL_WITH_DEFAULT_DOC,
    )


# -- field.syntax.version (KIP-821) ---------------------------------------------------------


FIELD_SYNTAX_VERSION_CONFIG = "field.syntax.version"
_FIELD_SYNTAX_VERSION_DOC = (
    "How field names in this transform's configs are read. V1: a name is a top-level field, "
    "taken literally even if it has dots. V2: dots separate the steps of a path into nested "
    "structs or maps (a.b.c); wrap a step that itself contains dots in backticks "
    "(`a.b`.c), and escape a backtick that ends such a step with a backslash."
)


class FieldSyntaxVersion(enum.Enum):
    """How field names in configs are interpreted (``FieldSyntaxVersion``)."""

    V1 = "V1"
    V2 = "V2"

    @staticmethod
    def from_config(value: str) -> FieldSyntaxVersion:
        try:
            return FieldSyntaxVersion[str(value).upper()]
        except KeyError:
            raise ConfigError(FIELD_SYNTAX_VERSION_CONFIG, value, "Unrecognized field syntax version") from None


def define_field_syntax_version(config_def: ConfigDef) -> ConfigDef:
    """Add ``field.syntax.version`` (STRING, default V1, case-insensitive V1/V2, HIGH)."""
    return config_def.define(
        FIELD_SYNTAX_VERSION_CONFIG,
        ConfigType.STRING,
        FieldSyntaxVersion.V1.value,
        CaseInsensitiveValidString.in_(*(v.value for v in FieldSyntaxVersion)),
        Importance.HIGH,
        _FIELD_SYNTAX_VERSION_DOC,
    )
