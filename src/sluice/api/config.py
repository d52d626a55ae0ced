"""Configuration definitions, mirroring ``org.apache.kafka.common.config.ConfigDef``.

A :class:`ConfigDef` declares keys with a type, default, validator, importance,
documentation and display metadata (group, order, width, display name,
dependents). ``parse`` turns a string map into typed values; ``validate`` returns
one :class:`ConfigValue` per key with its errors, the shape the REST validate
endpoint serialises.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sluice.api.data import java_double_string
from sluice.api.errors import ConfigError

__all__ = [
    "NO_DEFAULT",
    "CaseInsensitiveValidString",
    "CompositeValidator",
    "Config",
    "ConfigDef",
    "ConfigKey",
    "ConfigType",
    "ConfigValue",
    "Importance",
    "NonEmptyString",
    "NonEmptyStringWithoutControlChars",
    "NonNullValidator",
    "Password",
    "Range",
    "Recommender",
    "ValidList",
    "ValidString",
    "Validator",
    "Width",
]


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


class ConfigType(enum.Enum):
    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    SHORT = "SHORT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"
    CLASS = "CLASS"
    PASSWORD = "PASSWORD"


class Importance(enum.Enum):
    HIGH = "HIGH"
    MEDIUM = "MEDIUM"
    LOW = "LOW"


class Width(enum.Enum):
    NONE = "NONE"
    SHORT = "SHORT"
    MEDIUM = "MEDIUM"
    LONG = "LONG"


class Password:
    """A secret value; its ``repr`` never shows the secret."""

    HIDDEN = "[hidden]"

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return Password.HIDDEN

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Password) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)


Validator = Callable[[str, Any], None]
"""A validator is called with (name, parsed value) and raises ConfigError."""


class Recommender:
    """Suggests valid values and visibility of a key given the other parsed values."""

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        return []

    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool:
        return True


class Range:
    """Numeric range validator: ``Range.at_least(1)``, ``Range.between(0, 10)``."""

    def __init__(self, min: float | None, max: float | None) -> None:
        self.min, self.max = min, max

    @staticmethod
    def at_least(min: float) -> Range:
        return Range(min, None)

    @staticmethod
    def between(min: float, max: float) -> Range:
        return Range(min, max)

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigError(name, "null", "Value must be non-null")
        if self.min is not None and value < self.min:
            raise ConfigError(name, _jv(value), f"Value must be at least {_jv(self.min)}")
        if self.max is not None and value > self.max:
            raise ConfigError(name, _jv(value), f"Value must be no more than {_jv(self.max)}")

    def __str__(self) -> str:
        if self.min is None and self.max is None:
            return "[...]"
        if self.max is None:
            return f"[{_jv(self.min)},...]"
        if self.min is None:
            return f"[...,{_jv(self.max)}]"
        return f"[{_jv(self.min)},...,{_jv(self.max)}]"


class ValidString:
    """The value must be one of the given strings (``ValidString.in_(...)``)."""

    def __init__(self, valid: Sequence[str], case_sensitive: bool = True) -> None:
        self.valid = list(valid)
        self.case_sensitive = case_sensitive

    @staticmethod
    def in_(*valid: str) -> ValidString:
        return ValidString(valid)

    @staticmethod
    def in_case_insensitive(*valid: str) -> ValidString:
        """``ConfigDef.CaseInsensitiveValidString.in(...)``."""
        return ValidString(valid, case_sensitive=False)

    def __call__(self, name: str, value: Any) -> None:
        if self.case_sensitive:
            if value not in self.valid:
                raise ConfigError(name, _jv(value), f"String must be one of: {', '.join(self.valid)}")
        else:
            if not isinstance(value, str) or value.upper() not in (v.upper() for v in self.valid):
                raise ConfigError(
                    name, _jv(value), f"String must be one of (case insensitive): {', '.join(self.valid)}"
                )

    def __str__(self) -> str:
        if self.case_sensitive:
            return "[" + ", ".join(self.valid) + "]"
        return "(case insensitive) [" + ", ".join(self.valid) + "]"


class CaseInsensitiveValidString(ValidString):
    """``ConfigDef.CaseInsensitiveValidString``: one of the strings, ignoring case."""

    def __init__(self, valid: Sequence[str]) -> None:
        super().__init__(valid, case_sensitive=False)

    @staticmethod
    def in_(*valid: str) -> CaseInsensitiveValidString:  # type: ignore[override]
        return CaseInsensitiveValidString(valid)


class ValidList:
    """Each list item must be one of the given strings."""

    def __init__(self, valid: Sequence[str]) -> None:
        self.valid = list(valid)

    @staticmethod
    def in_(*valid: str) -> ValidList:
        return ValidList(valid)

    def __call__(self, name: str, value: Any) -> None:
        for item in value or []:
            if item not in self.valid:
                raise ConfigError(name, _jv(item), f"String must be one of: {', '.join(self.valid)}")

    def __str__(self) -> str:
        return "[" + ", ".join(self.valid) + "]"


class NonEmptyString:
    """The string must be non-empty (null is allowed): ``ConfigDef.NonEmptyString``."""

    def __call__(self, name: str, value: Any) -> None:
        if value is not None and value == "":
            raise ConfigError(name, value, "String must be non-empty")

    def __str__(self) -> str:
        return "non-empty string"


class NonEmptyStringWithoutControlChars:
    """``ConfigDef.NonEmptyStringWithoutControlChars`` (used for the connector ``name``):
    null is allowed; otherwise the string must be non-empty and contain no ISO control
    characters."""

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            return
        if value == "":
            raise ConfigError(name, value, "String may not be empty")
        bad = [str(ord(c)) for c in value if ord(c) <= 0x1F or 0x7F <= ord(c) <= 0x9F]
        if bad:
            raise ConfigError(
                name,
                value,
                "String may not contain control sequences but had the following ASCII chars: " + ", ".join(bad),
            )

    def __str__(self) -> str:
        return "non-empty string without ISO control characters"


class NonNullValidator:
    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigError(name, "null", "entry must be non null")

    def __str__(self) -> str:
        return "non-null value"


class CompositeValidator:
    """Runs several validators in order (``ConfigDef.CompositeValidator.of(...)``)."""

    def __init__(self, *validators: Validator) -> None:
        self.validators = list(validators)

    @staticmethod
    def of(*validators: Validator) -> CompositeValidator:
        return CompositeValidator(*validators)

    def __call__(self, name: str, value: Any) -> None:
        for v in self.validators:
            v(name, value)

    def __str__(self) -> str:
        return ", ".join(str(v) for v in self.validators)


@dataclass
class ConfigKey:
    name: str
    type: ConfigType
    default_value: Any
    validator: Validator | None
    importance: Importance
    documentation: str
    group: str | None = None
    order_in_group: int = -1
    width: Width = Width.NONE
    display_name: str | None = None
    dependents: list[str] = field(default_factory=list)
    recommender: Recommender | None = None
    internal: bool = False

    @property
    def has_default(self) -> bool:
        return self.default_value is not NO_DEFAULT


@dataclass
class ConfigValue:
    """The validation result of one key (``org.apache.kafka.common.config.ConfigValue``)."""

    name: str
    value: Any = None
    recommended_values: list[Any] = field(default_factory=list)
    error_messages: list[str] = field(default_factory=list)
    visible: bool = True

    def add_error_message(self, message: str) -> None:
        self.error_messages.append(message)


@dataclass
class Config:
    """What :meth:`Connector.validate` returns: one ConfigValue per key."""

    config_values: list[ConfigValue]


_TRUE = "true"
_FALSE = "false"


def parse_type(name: str, value: Any, type: ConfigType) -> Any:
    """Convert a raw (usually string) value to ``type``, as Kafka's ``ConfigDef.parseType``.

    Strings are trimmed first; ``None`` stays ``None``. Error messages are Kafka's.
    """
    if value is None:
        return None
    trimmed = value.strip() if isinstance(value, str) else None
    if type is ConfigType.BOOLEAN:
        if isinstance(value, bool):
            return value
        if trimmed is not None:
            if trimmed.lower() == _TRUE:
                return True
            if trimmed.lower() == _FALSE:
                return False
        raise ConfigError(name, _jv(value), "Expected value to be either true or false")
    if type is ConfigType.PASSWORD:
        if isinstance(value, Password):
            return value
        if trimmed is not None:
            return Password(trimmed)
        raise ConfigError(name, _jv(value), "Expected value to be a string, but it was a " + _java_type(value))
    if type is ConfigType.STRING:
        if trimmed is not None:
            return trimmed
        raise ConfigError(name, _jv(value), "Expected value to be a string, but it was a " + _java_type(value))
    if type in (ConfigType.INT, ConfigType.SHORT, ConfigType.LONG):
        bits = {ConfigType.INT: 32, ConfigType.SHORT: 16, ConfigType.LONG: 64}[type]
        if isinstance(value, int) and not isinstance(value, bool):
            n = value
        elif trimmed is not None:
            if not _INTEGER.fullmatch(trimmed):
                raise ConfigError(name, _jv(value), f"Not a number of type {type.value}")
            n = int(trimmed)
        else:
            what = {
                ConfigType.INT: "a 32-bit integer",
                ConfigType.SHORT: "a 16-bit integer (short)",
                ConfigType.LONG: "a 64-bit integer (long)",
            }[type]
            raise ConfigError(name, _jv(value), f"Expected value to be {what}, but it was a " + _java_type(value))
        if not -(2 ** (bits - 1)) <= n < 2 ** (bits - 1):
            raise ConfigError(name, _jv(value), f"Not a number of type {type.value}")
        return n
    if type is ConfigType.DOUBLE:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if trimmed is not None:
            if _DOUBLE.fullmatch(trimmed):
                return float(trimmed.rstrip("dDfF").replace("Infinity", "inf"))
            raise ConfigError(name, _jv(value), f"Not a number of type {type.value}")
        raise ConfigError(name, _jv(value), "Expected value to be a double, but it was a " + _java_type(value))
    if type is ConfigType.LIST:
        if isinstance(value, (list, tuple)):
            return list(value)
        if trimmed is not None:
            if trimmed == "":
                return []
            return re.split(r"\s*,\s*", trimmed)
        raise ConfigError(name, _jv(value), "Expected a comma separated list.")
    if type is ConfigType.CLASS:
        if trimmed is not None:
            return trimmed
        if isinstance(value, type_):
            return f"{value.__module__}.{value.__qualname__}"
        raise ConfigError(name, _jv(value), "Expected a Class instance or class name.")
    raise ConfigError(name, _jv(value), "Unknown type.")


_INTEGER = re.compile(r"[+-]?[0-9]+")
# Java's Double.parseDouble: decimal or exponent forms, NaN/Infinity, optional d/f suffix.
_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)[dDfF]?)")

type_ = type


def _java_type(value: Any) -> str:
    """``value.getClass().getName()`` for the Python types a config map may hold."""
    return {
        bool: "java.lang.Boolean",
        int: "java.lang.Integer",
        float: "java.lang.Double",
        list: "java.util.ArrayList",
        tuple: "java.util.ArrayList",
        dict: "java.util.HashMap",
        str: "java.lang.String",
    }.get(type_(value), f"{type_(value).__module__}.{type_(value).__qualname__}")


def _jv(value: Any) -> str:
    """A value as Java's ``String.valueOf`` renders it in ``ConfigException`` messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return _TRUE if value else _FALSE
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_jv(v) for v in value) + "]"
    return str(value)


_java_double = java_double_string


def convert_to_string(value: Any, type: ConfigType | None) -> str | None:
    """Render a parsed value as Kafka's ``ConfigDef.convertToString`` does."""
    if value is None:
        return None
    if type is ConfigType.LIST and isinstance(value, list):
        return ",".join(str(v) for v in value)
    if type is ConfigType.PASSWORD:
        return Password.HIDDEN
    if isinstance(value, bool):
        return _TRUE if value else _FALSE
    if isinstance(value, type_):
        return f"{value.__module__}.{value.__qualname__}"
    if isinstance(value, float):
        return _java_double(value)
    return str(value)


class ConfigDef:
    """An ordered set of :class:`ConfigKey` definitions."""

    def __init__(self, base: ConfigDef | None = None) -> None:
        self._keys: dict[str, ConfigKey] = dict(base._keys) if base else {}
        self._groups: list[str] = list(base._groups) if base else []

    def define(
        self,
        name: str,
        type: ConfigType,
        default_value: Any = NO_DEFAULT,
        validator: Validator | None = None,
        importance: Importance = Importance.MEDIUM,
        documentation: str = "",
        group: str | None = None,
        order_in_group: int = -1,
        width: Width = Width.NONE,
        display_name: str | None = None,
        dependents: Iterable[str] = (),
        recommender: Recommender | None = None,
        internal: bool = False,
    ) -> ConfigDef:
        if name in self._keys:
            raise ConfigError(f"Configuration {name} is defined twice.")
        if group is not None and group not in self._groups:
            self._groups.append(group)
        parsed_default = default_value
        if default_value is not NO_DEFAULT and default_value is not None:
            parsed_default = parse_type(name, default_value, type)
        if validator is not None and default_value is not NO_DEFAULT:
            # Kafka's ConfigKey checks the default against the validator at definition time.
            validator(name, parsed_default)
        self._keys[name] = ConfigKey(
            name=name,
            type=type,
            default_value=parsed_default,
            validator=validator,
            importance=importance,
            documentation=documentation,
            group=group,
            order_in_group=order_in_group,
            width=width,
            display_name=display_name if display_name is not None else name,
            dependents=list(dependents),
            recommender=recommender,
            internal=internal,
        )
        return self

    def define_internal(self, name: str, type: ConfigType, default_value: Any, importance: Importance) -> ConfigDef:
        return self.define(name, type, default_value, importance=importance, internal=True)

    def config_keys(self) -> dict[str, ConfigKey]:
        return dict(self._keys)

    def names(self) -> list[str]:
        return list(self._keys)

    def config_key(self, name: str) -> ConfigKey | None:
        return self._keys.get(name)

    def default_values(self) -> dict[str, Any]:
        """Defaults of every key that has one (``ConfigDef.defaultValues()``)."""
        return {k.name: k.default_value for k in self._keys.values() if k.has_default}

    def groups(self) -> list[str]:
        return list(self._groups)

    def __contains__(self, name: str) -> bool:
        return name in self._keys

    def parse(self, props: Mapping[str, Any]) -> dict[str, Any]:
        """Typed values for every defined key; raises :class:`ConfigError` on the first
        missing required key or invalid value."""
        values: dict[str, Any] = {}
        for key in self._keys.values():
            values[key.name] = self._parse_value(key, props.get(key.name, NO_DEFAULT), key.name in props)
        return values

    def _parse_value(self, key: ConfigKey, raw: Any, is_set: bool) -> Any:
        if is_set:
            value = parse_type(key.name, raw, key.type)
        elif not key.has_default:
            raise ConfigError(f'Missing required configuration "{key.name}" which has no default value.')
        else:
            value = key.default_value
        if key.validator is not None:
            key.validator(key.name, value)
        return value

    def validate(self, props: Mapping[str, Any]) -> list[ConfigValue]:
        """One :class:`ConfigValue` per defined key, in definition order.

        As Kafka's ``ConfigDef.validate``: a value that fails to parse becomes ``None``
        (and ``ConfigValue.value`` is ``None``); the validator then still runs on the
        parsed (or default, or ``None``) value, so a bad number under a ``Range`` yields
        both the parse error and ``Value must be non-null``. Recommenders run last.
        """
        results: dict[str, ConfigValue] = {}
        parsed: dict[str, Any] = {}
        for key in self._keys.values():
            cv = ConfigValue(key.name)
            results[key.name] = cv
            value: Any = None
            if key.name in props:
                try:
                    value = parse_type(key.name, props[key.name], key.type)
                except ConfigError as e:
                    cv.add_error_message(str(e))
            elif not key.has_default:
                cv.add_error_message(f'Missing required configuration "{key.name}" which has no default value.')
            else:
                value = key.default_value
            if key.validator is not None:
                try:
                    key.validator(key.name, value)
                except ConfigError as e:
                    cv.add_error_message(str(e))
                except Exception as e:  # a validator that trips over None, as a Java NPE would
                    cv.add_error_message(f"Invalid value {_jv(value)} for configuration {key.name}: {e}")
            cv.value = value
            parsed[key.name] = value
        for key in self._keys.values():
            cv = results[key.name]
            if key.recommender is not None:
                try:
                    cv.recommended_values = list(key.recommender.valid_values(key.name, parsed))
                    cv.visible = key.recommender.visible(key.name, parsed)
                except ConfigError as e:
                    cv.add_error_message(str(e))
        return list(results.values())
