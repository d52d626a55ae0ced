"""Configuration definitions, mirroring ``org.apache.kafka.common.config.ConfigDef``.

A :class:`ConfigDef` declares keys with a type, default, validator, importance,
documentation and display metadata (group, order in group, width, display name),
plus ``dependents`` and a :class:`Recommender` for keys whose suggested values or
visibility depend on other keys. ``parse`` turns a string map into typed values and
raises on the first problem; ``validate`` returns one :class:`ConfigValue` per key with
all its errors, recommended values and visibility — the shape the REST validate endpoint
serialises. ``embed`` nests another definition under a prefix, as the framework does for
``transforms.<alias>.*``. Validators and error texts are Kafka's, so messages read the
same as Kafka Connect's.
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
    "LambdaValidator",
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
    """Suggests values for a key and says whether it applies (``ConfigDef.Recommender``).

    :meth:`ConfigDef.validate` calls both methods after every key has been parsed, with
    ``parsed`` holding each key's parsed value (``None`` where parsing failed). What
    :meth:`valid_values` returns becomes ``recommended_values`` of the key's
    :class:`ConfigValue`, and :meth:`visible` its ``visible`` flag: a UI shows a key only
    when it is visible (say, ``ssl.keystore.location`` only when ``security.protocol`` is
    ``SSL``). Declare the keys it depends on as ``dependents`` of the key it reads, as in
    Kafka. Raise :class:`~sluice.api.errors.ConfigError` to report an error on the key.
    """

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
    def in_(*valid: str) -> CaseInsensitiveValidString:
        return CaseInsensitiveValidString(valid)


class ValidList:
    """A list whose items are unique, non-empty and, when ``valid`` is given, each one of
    ``valid`` (Kafka 4.x ``ConfigDef.ValidList``).

    ``ValidList.in_("a", "b")`` accepts an empty list; ``any_non_duplicate_values()``
    accepts any items. A ``None`` list is refused unless ``is_null_allowed``.
    """

    def __init__(self, valid: Sequence[str] = (), is_empty_allowed: bool = True, is_null_allowed: bool = False) -> None:
        self.valid = list(valid)
        self.is_empty_allowed = is_empty_allowed
        self.is_null_allowed = is_null_allowed

    @staticmethod
    def in_(*valid: str, is_empty_allowed: bool = True) -> ValidList:
        if not is_empty_allowed and not valid:
            raise ValueError("At least one valid string must be provided when empty values are not allowed")
        return ValidList(valid, is_empty_allowed=is_empty_allowed)

    @staticmethod
    def any_non_duplicate_values(is_empty_allowed: bool, is_null_allowed: bool) -> ValidList:
        return ValidList((), is_empty_allowed=is_empty_allowed, is_null_allowed=is_null_allowed)

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            if self.is_null_allowed:
                return
            raise ConfigError(f"Configuration '{name}' values must not be null.")
        items = list(value)
        if not items and not self.is_empty_allowed:
            allowed = "[" + ", ".join(self.valid) + "]" if self.valid else "any non-empty value"
            raise ConfigError(f"Configuration '{name}' must not be empty. Valid values include: {allowed}")
        if len(set(items)) != len(items):
            raise ConfigError(f"Configuration '{name}' values must not be duplicated.")
        for item in items:
            if item == "":
                raise ConfigError(f"Configuration '{name}' values must not be empty.")
            if self.valid and item not in self.valid:
                raise ConfigError(name, _jv(item), f"String must be one of: {', '.join(self.valid)}")

    def __str__(self) -> str:
        return "[" + ", ".join(self.valid) + "]" if self.valid else ""


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
        return "non-null string"


class LambdaValidator:
    """A validator from a function and a description (``ConfigDef.LambdaValidator.with``)."""

    def __init__(self, check: Validator, description: str | Callable[[], str] = "") -> None:
        self.check = check
        self.description = description

    @staticmethod
    def with_(check: Validator, description: str | Callable[[], str] = "") -> LambdaValidator:
        return LambdaValidator(check, description)

    def __call__(self, name: str, value: Any) -> None:
        self.check(name, value)

    def __str__(self) -> str:
        return self.description() if callable(self.description) else self.description


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
    """One key of a :class:`ConfigDef`. ``default_value`` is already parsed (``NO_DEFAULT``
    for a required key); ``order_in_group`` is -1 and ``width`` NONE for keys defined
    without display metadata, and ``display_name`` defaults to the key's name."""

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
    """Render a parsed value as Kafka's ``ConfigDef.convertToString`` does: lists joined
    with ``,``, passwords as ``[hidden]``; without a type, as Java's ``toString``."""
    if value is None:
        return None
    if type is None:
        return _jv(value)
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


ClassResolver = Callable[[str], str]
"""Turns a ``CLASS`` value into the class name it designates, or raises when there is none."""


class ConfigDef:
    """An ordered set of :class:`ConfigKey` definitions (``org.apache.kafka.common.config.ConfigDef``).

    Keys keep their definition order. Display metadata (group, order in group, width,
    display name) only affects how tools present the keys; ``dependents`` name keys whose
    recommendations or visibility depend on this key's value (see :meth:`validate`).
    """

    def __init__(self, base: ConfigDef | None = None) -> None:
        self._keys: dict[str, ConfigKey] = base.config_keys() if base else {}
        self._groups: list[str] = list(base.groups()) if base else []

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
        parsed_default = default_value
        if default_value is not NO_DEFAULT and default_value is not None:
            parsed_default = parse_type(name, default_value, type)
        if validator is not None and default_value is not NO_DEFAULT:
            # Kafka's ConfigKey checks the default against the validator at definition time.
            validator(name, parsed_default)
        return self.define_key(
            ConfigKey(
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
        )

    def define_key(self, key: ConfigKey) -> ConfigDef:
        """Add an already built key (its default is taken as parsed)."""
        if key.name in self._keys:
            raise ConfigError(f"Configuration {key.name} is defined twice.")
        if key.group is not None and key.group not in self._groups:
            self._groups.append(key.group)
        self._keys[key.name] = key
        return self

    def define_internal(self, name: str, type: ConfigType, default_value: Any, importance: Importance) -> ConfigDef:
        return self.define(name, type, default_value, importance=importance, internal=True)

    def embed(self, key_prefix: str, group_prefix: str, starting_order: int, child: ConfigDef) -> ConfigDef:
        """Add every key of ``child`` under ``key_prefix`` (``ConfigDef.embed``).

        The keys come in :meth:`sorted_configs` order and are numbered from
        ``starting_order``; their group becomes ``group_prefix`` (``"<group_prefix>:
        <group>"`` for a key that has a group). Validators and recommenders still see the
        names without the prefix, and dependents get the prefix too.
        """
        order = starting_order
        for key in child.sorted_configs():
            self.define_key(
                ConfigKey(
                    name=key_prefix + key.name,
                    type=key.type,
                    default_value=key.default_value,
                    validator=_EmbeddedValidator(key_prefix, key.validator) if key.validator else None,
                    importance=key.importance,
                    documentation=key.documentation,
                    group=group_prefix if key.group is None else f"{group_prefix}: {key.group}",
                    order_in_group=order,
                    width=key.width,
                    display_name=key.display_name,
                    dependents=[key_prefix + d for d in key.dependents],
                    recommender=_EmbeddedRecommender(key_prefix, key.recommender) if key.recommender else None,
                    internal=key.internal,
                )
            )
            order += 1
        return self

    def sorted_configs(self) -> list[ConfigKey]:
        """The keys in documentation order: keys without a group first, then by group (in
        the order groups were first used), order in group, required before optional,
        importance (high first) and name."""
        group_rank = {g: i for i, g in enumerate(self._groups)}
        importance_rank = {Importance.HIGH: 0, Importance.MEDIUM: 1, Importance.LOW: 2}

        def sort_key(key: ConfigKey) -> tuple[int, int, int, int, int, str]:
            grouped = 0 if key.group is None else 1
            return (
                grouped,
                group_rank.get(key.group, 0) if key.group is not None else 0,
                key.order_in_group,
                0 if not key.has_default else 1,
                importance_rank[key.importance],
                key.name,
            )

        return sorted(self._keys.values(), key=sort_key)

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
        undefined = self._undefined_dependents()
        if undefined:
            raise ConfigError(
                "Some configurations in are referred in the dependents, but not defined: " + ",".join(undefined)
            )
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

    def validate(self, props: Mapping[str, Any], class_resolver: ClassResolver | None = None) -> list[ConfigValue]:
        """One :class:`ConfigValue` per defined key, in definition order (then one per
        key named as a dependent but not defined). See :meth:`validate_all`."""
        return list(self.validate_all(props, class_resolver).values())

    def validate_all(
        self, props: Mapping[str, Any], class_resolver: ClassResolver | None = None
    ) -> dict[str, ConfigValue]:
        """Validate ``props`` key by key, as Kafka's ``ConfigDef.validateAll``.

        * Each key is parsed: a value that fails to parse is reported and becomes
          ``None``; a missing key takes its default, or is reported as missing when it
          has none. The validator then runs on that value (so a bad number under a
          ``Range`` is reported twice: not a number, and null).
        * Keys are visited from those no other key names as a dependent, each followed
          by its dependents, so a key shared by two parents is checked twice.
        * Once every key is parsed, recommenders fill ``recommended_values`` and
          ``visible`` from all the parsed values.
        * A dependent that is not defined gets a value of its own, with an error and
          ``visible=False``.

        ``class_resolver`` turns ``CLASS`` values into the class name they designate; a
        value it rejects is reported as ``Class <v> could not be found.`` and becomes
        ``None``. Without it ``CLASS`` values stay the names given.
        """
        results: dict[str, ConfigValue] = {name: ConfigValue(name) for name in self._keys}
        for name in self._undefined_dependents():
            missing = ConfigValue(name, visible=False)
            missing.add_error_message(f"{name} is referred in the dependents, but not defined.")
            results[name] = missing
        parsed: dict[str, Any] = {}
        roots = self._roots()
        for name in roots:
            self._parse_for_validate(name, props, parsed, results, class_resolver, set())
        for name in roots:
            self._recommend(name, parsed, results, set())
        return results

    def _roots(self) -> list[str]:
        children = {d for key in self._keys.values() for d in key.dependents}
        return [name for name in self._keys if name not in children]

    def _undefined_dependents(self) -> list[str]:
        undefined = [d for key in self._keys.values() for d in key.dependents if d not in self._keys]
        return list(dict.fromkeys(undefined))

    def _parse_for_validate(
        self,
        name: str,
        props: Mapping[str, Any],
        parsed: dict[str, Any],
        results: dict[str, ConfigValue],
        class_resolver: ClassResolver | None,
        path: set[str],
    ) -> None:
        key = self._keys.get(name)
        if key is None or name in path:  # an undefined dependent, or a dependency cycle
            return
        cv = results[name]
        value: Any = None
        if name in props:
            try:
                value = parse_type(name, props[name], key.type)
                if key.type is ConfigType.CLASS and class_resolver is not None and value is not None:
                    value = _resolve_class(name, value, class_resolver)
            except ConfigError as e:
                cv.add_error_message(str(e))
                value = None
        elif not key.has_default:
            cv.add_error_message(f'Missing required configuration "{name}" which has no default value.')
        else:
            value = key.default_value
        if key.validator is not None:
            try:
                key.validator(name, value)
            except ConfigError as e:
                cv.add_error_message(str(e))
            except Exception as e:  # noqa: BLE001 - a validator that trips over None, as a Java NPE would
                cv.add_error_message(f"Invalid value {_jv(value)} for configuration {name}: {e}")
        cv.value = value
        parsed[name] = value
        for dependent in key.dependents:
            self._parse_for_validate(dependent, props, parsed, results, class_resolver, path | {name})

    def _recommend(self, name: str, parsed: Mapping[str, Any], results: dict[str, ConfigValue], path: set[str]) -> None:
        key = self._keys.get(name)
        if key is None or name in path:
            return
        cv = results[name]
        if key.recommender is not None:
            try:
                recommended = list(key.recommender.valid_values(name, parsed))
                if cv.recommended_values:
                    earlier = list(cv.recommended_values)
                    recommended = [v for v in recommended if v in earlier]
                cv.recommended_values = recommended
                cv.visible = key.recommender.visible(name, parsed)
            except ConfigError as e:
                cv.add_error_message(str(e))
        for dependent in key.dependents:
            self._recommend(dependent, parsed, results, path | {name})


def _resolve_class(name: str, value: Any, resolver: ClassResolver) -> str:
    try:
        return resolver(str(value))
    except Exception as e:
        raise ConfigError(name, value, f"Class {value} could not be found.") from e


class _EmbeddedValidator:
    """Runs a child definition's validator with the name it knows (no prefix)."""

    def __init__(self, prefix: str, base: Validator) -> None:
        self.prefix, self.base = prefix, base

    def __call__(self, name: str, value: Any) -> None:
        self.base(name[len(self.prefix) :] if name.startswith(self.prefix) else name, value)

    def __str__(self) -> str:
        return str(self.base)


class _EmbeddedRecommender(Recommender):
    """Runs a child definition's recommender on the names and values it knows."""

    def __init__(self, prefix: str, base: Recommender) -> None:
        self.prefix, self.base = prefix, base

    def _unprefixed(self, parsed: Mapping[str, Any]) -> dict[str, Any]:
        n = len(self.prefix)
        return {k[n:]: v for k, v in parsed.items() if k.startswith(self.prefix)}

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        return self.base.valid_values(name[len(self.prefix) :], self._unprefixed(parsed))

    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool:
        return self.base.visible(name[len(self.prefix) :], self._unprefixed(parsed))
