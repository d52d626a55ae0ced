"""Class names as Java (and Kafka's messages) print them, for Python values.

Java names a class ``java.lang.String``; Sluice names a Python class by its bare name
when it is a builtin (``int``, ``dict``) and ``module.Qualname`` otherwise, and maps the
Python types Connect values use to the Java classes Kafka would hold."""

from __future__ import annotations

from typing import Any

__all__ = ["class_name", "class_string", "java_class_of", "type_name"]


def type_name(cls: type) -> str:
    """``Class.getName()`` for a Python class: the bare name for builtins (``dict``,
    ``ValueError``), ``module.Qualname`` otherwise."""
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def class_name(value: Any) -> str:
    """The name of ``value``'s class (:func:`type_name`), ``"null"`` for ``None``: Kafka's
    ``nullSafeClassName``."""
    return "null" if value is None else type_name(type(value))


def class_string(value: Any) -> str:
    """``value.getClass().toString()``: ``"class "`` and :func:`type_name` of its class
    (``None`` is not special: ``class NoneType``)."""
    return "class " + type_name(type(value))


def java_class_of(value: Any) -> str:
    """The Java class of a schemaless Connect value, as Kafka would hold it: ``bool`` is
    ``java.lang.Boolean``, ``int`` ``java.lang.Long``, ``float`` ``java.lang.Double``, ``str``
    ``java.lang.String``, bytes ``[B``, lists and tuples ``java.util.ArrayList``, dicts
    ``java.util.HashMap``; any other value is named ``module.Qualname`` (builtins too)."""
    if isinstance(value, bool):
        return "java.lang.Boolean"
    if isinstance(value, int):
        return "java.lang.Long"
    if isinstance(value, float):
        return "java.lang.Double"
    if isinstance(value, str):
        return "java.lang.String"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "[B"
    if isinstance(value, (list, tuple)):
        return "java.util.ArrayList"
    if isinstance(value, dict):
        return "java.util.HashMap"
    cls = type(value)
    return f"{cls.__module__}.{cls.__qualname__}"
