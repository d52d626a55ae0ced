"""``sluice._java.names``: class names as Java's (and Kafka's) messages print them."""

from __future__ import annotations

import collections
import decimal

from sluice._java.names import class_name, class_string, java_class_of, type_name


class Local:
    pass


def test_type_name() -> None:
    assert type_name(int) == "int"
    assert type_name(ValueError) == "ValueError"
    assert type_name(decimal.Decimal) == "decimal.Decimal"
    assert type_name(Local) == f"{__name__}.Local"


def test_class_name_is_null_safe() -> None:
    assert class_name(None) == "null"
    assert class_name(1) == "int"
    assert class_name({}) == "dict"
    assert class_name(collections.OrderedDict()) == "collections.OrderedDict"
    assert class_name(Local()) == f"{__name__}.Local"


def test_class_string() -> None:
    assert class_string("s") == "class str"
    assert class_string(decimal.Decimal(1)) == "class decimal.Decimal"
    assert class_string(None) == "class NoneType"


def test_java_class_of() -> None:
    assert java_class_of(True) == "java.lang.Boolean"
    assert java_class_of(1) == "java.lang.Long"
    assert java_class_of(1.5) == "java.lang.Double"
    assert java_class_of("s") == "java.lang.String"
    assert java_class_of(b"b") == "[B"
    assert java_class_of(bytearray()) == "[B"
    assert java_class_of((1,)) == "java.util.ArrayList"
    assert java_class_of(collections.OrderedDict()) == "java.util.HashMap"
    assert java_class_of({1}) == "builtins.set"  # module-qualified, builtins too
    assert java_class_of(decimal.Decimal(1)) == "decimal.Decimal"
