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

from sluice.api.errors import ConfigError

__all__ = [
    "NO_DEFAULT",
    "Config",
    "ConfigDef",
    "ConfigKey",
    "ConfigType",
    "ConfigValue",
    "Importance",
    "NonEmptyString",
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
            raise ConfigError(name, None, "Value must be non-null")
        if self.min is not None and value < self.min:
            raise ConfigError(name, value, f"Value must be at least {self.min}")
        if self.max is not None and value > self.max:
            raise ConfigError(name, value, f"Value must be no more than {self.max}")

    def __str__(self) -> str:
        if self.max is None:
            return f"[{self.min},...]"
        if self.min is None:
            return f"[...,{self.max}]"
        return f"[{self.min},...,{self.max}]"


class ValidString:
    """The value must be one of the given strings (``ValidString.in_(...)``)."""

    def __init__(self, valid: Sequence[str], case_sensitive: bool = True) -> None:
        self.valid = list(valid)
        self.case_sensitive = case_sensitive

    @staticmethod
    def in_(*valid: str) -> ValidString:
        return ValidString(valid)

    def __call__(self, name: str, value: Any) -> None:
        if self.case_sensitive:
            ok = value in self.valid
        else:
            ok = isinstance(value, str) and value.lower() in (v.lower() for v in self.valid)
        if not ok:
            raise ConfigError(name, value, f"String must be one of: {', '.join(self.valid)}")

    def __str__(self) -> str:
        return "[" + ", ".join(self.valid) + "]"


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
                raise ConfigError(name, item, f"String must be one of: {', '.join(self.valid)}")


class NonEmptyString:
    """The string must be non-empty (null is allowed)."""

    def __call__(self, name: str, value: Any) -> None:
        if value is not None and value == "":
            raise ConfigError(name, value, "String may not be empty")

    def __str__(self) -> str:
        return "non-empty string"


class NonNullValidator:
    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigError(name, value, "entry must be non null")


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
    """Convert a raw (usually string) value to ``type``, as Kafka's ``ConfigDef.parseType``."""
    if value is None:
        return None
    try:
        if isinstance(value, str):
            trimmed = value.strip()
        if type is ConfigType.BOOLEAN:
            if isinstance(value, bool):
                return value
            if isinstance(value, str):
                if trimmed.lower() == _TRUE:
                    return True
                if trimmed.lower() == _FALSE:
                    return False
            raise ConfigError(name, value, "Expected value to be either true or false")
        if type is ConfigType.PASSWORD:
            if isinstance(value, Password):
                return value
            if isinstance(value, str):
                return Password(value)
            raise ConfigError(name, value, "Expected value to be a string, but it was a " + _java_type(value))
        if type is ConfigType.STRING:
            if isinstance(value, str):
                return trimmed
            raise ConfigError(name, value, "Expected value to be a string, but it was a " + _java_type(value))
        if type in (ConfigType.INT, ConfigType.SHORT, ConfigType.LONG):
            bits = {ConfigType.INT: 32, ConfigType.SHORT: 16, ConfigType.LONG: 64}[type]
            if isinstance(value, bool):
                raise ConfigError(name, value, f"Not a number of type {type.value}")
            if isinstance(value, int):
                n = value
            elif isinstance(value, str) and re.fullmatch(r"[+-]?\d+", trimmed):
                n = int(trimmed)
            else:
                raise ConfigError(name, value, f"Not a number of type {type.value}")
            if not -(2 ** (bits - 1)) <= n < 2 ** (bits - 1):
                raise ConfigError(name, value, f"Not a number of type {type.value}")
            return n
        if type is ConfigType.DOUBLE:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
            if isinstance(value, str):
                try:
                    return float(trimmed)
                except ValueError:
                    pass
            raise ConfigError(name, value, "Not a number of type DOUBLE")
        if type is ConfigType.LIST:
            if isinstance(value, list):
                return value
            if isinstance(value, str):
                if trimmed == "":
                    return []
                return [item.strip() for item in re.split(r"\s*,\s*", trimmed)]
            raise ConfigError(name, value, "Expected a comma separated list.")
        if type is ConfigType.CLASS:
            if isinstance(value, str):
                return trimmed
            if isinstance(value, type_):
                return f"{value.__module__}.{value.__qualname__}"
            raise ConfigError(name, value, "Expected a Class instance or class name.")
    except ConfigError:
        raise
    raise ConfigError(name, value, "Unknown type.")


type_ = type


def _java_type(value: Any) -> str:
    return {bool: "Boolean", int: "Integer", float: "Double", list: "List"}.get(type_(value), type_(value).__name__)


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
    if type is ConfigType.DOUBLE and isinstance(value, float):
        return repr(value)
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
        """One :class:`ConfigValue` per defined key, in definition order."""
        results: dict[str, ConfigValue] = {}
        parsed: dict[str, Any] = {}
        for key in self._keys.values():
            cv = ConfigValue(key.name)
            results[key.name] = cv
            raw = props.get(key.name)
            if key.name in props:
                try:
                    parsed[key.name] = parse_type(key.name, raw, key.type)
                    cv.value = parsed[key.name]
                except ConfigError as e:
                    cv.add_error_message(str(e))
                    cv.value = raw
                    continue
            elif key.has_default:
                parsed[key.name] = key.default_value
                cv.value = key.default_value
            else:
                cv.add_error_message(f'Missing required configuration "{key.name}" which has no default value.')
                continue
        for key in self._keys.values():
            cv = results[key.name]
            if key.recommender is not None:
                try:
                    cv.recommended_values = list(key.recommender.valid_values(key.name, parsed))
                    cv.visible = key.recommender.visible(key.name, parsed)
                except ConfigError as e:
                    cv.add_error_message(str(e))
            if key.name in parsed and key.validator is not None and not cv.error_messages:
                try:
                    key.validator(key.name, parsed[key.name])
                except ConfigError as e:
                    cv.add_error_message(str(e))
        return list(results.values())
