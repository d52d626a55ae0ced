"""The columnar path of a transformation chain: its steps as Spark SQL expressions.

A sink task's records are read by Spark's Kafka source; when every stage of the
connector's chain acts on the record envelope only (topic, headers, timestamp, whether
the value is null), Spark evaluates the chain on the Kafka rows before they cross into
Python, and the executor skips the per-record chain (``SinkBatchSpec.columnar``)::

    Kafka rows ──chain as expressions──▶ sink_topic, sink_headers; rows the Filter drops removed
        ──mapInArrow──▶ converters (original topic and headers) ──▶ topic := sink_topic ──▶ put()

Steps with a columnar form:

* ``RegexRouter``: ``rlike('\\A(?:regex)\\z')`` then ``regexp_replace('\\A(?:regex)', replacement)``:
  Spark's regular expressions and replacement strings are Java's, and a regex that
  matches the whole topic has its first match at index 0, so this is
  ``Matcher.replaceFirst``.
* ``TimestampRouter``: the record timestamp (epoch ms) as a UTC wall clock
  (``TIMESTAMP_NTZ`` arithmetic: no session time zone involved), formatted field by field
  exactly as the per-record ``SimpleDateFormat`` does (Spark's ``date_format`` follows
  ``DateTimeFormatter``, whose letters mean other things: ``S``, ``u``, ``E``…). Week
  fields (``w``, ``Y``) have no columnar form. A record whose timestamp is null or outside
  the years 1–9999 (the per-record path raises DataError there) is handed to the Python
  chain on the executor (``sink_topic`` null), so the error policy sees the same error.
* ``Filter``: the rows are removed. Only with converters that never fail to read a record
  (String, ByteArray, SimpleHeader): Kafka converts a record before its chain runs, so a
  record a Filter drops can still fail conversion — with other converters Spark could not
  reproduce that error.
* ``DropHeaders``, ``InsertHeader``: the headers the executor converts are the changed
  ones (``sink_headers``); only with the never-failing converters, so a dead-lettered
  record (which carries its headers as consumed) cannot come from a conversion of changed
  headers. ``InsertHeader`` needs the header converter's bytes for its value to read back
  as exactly the value the per-record transform adds (checked when compiling).
* Predicates ``TopicNameMatches`` (``rlike`` anchored), ``HasHeaderKey`` (``exists``),
  ``RecordIsTombstone`` (``value IS NULL``: with String and ByteArray value converters only,
  whose value is null exactly when the bytes are), each with ``negate``.

Key and value steps (HoistField, InsertField, Cast, …) have columnar forms of their own,
on typed columns (``columnar_values``); the chain then adds ``sink_key``/``sink_value``/
``sink_added_headers`` and the executor builds the records' keys and values from them.

Anything else, a subclass, or a chain class other than Sluice's: the whole chain stays
on the per-record path. The source path always stays per record (see
``docs/architecture.md``).
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from sluice._java.dates import MONTHS, WEEKDAYS, pattern_tokens
from sluice.api.config import ConfigType, parse_type
from sluice.api.records import SinkRecord
from sluice.spark import columnar_values
from sluice.spark.columnar_values import NotColumnar, Sides
from sluice.spark.executor import PluginSpec, TaskSpec
from sluice.spark.typed_values import SINK_ADDED_HEADERS, SINK_KEY, SINK_VALUE, TypedOutputs

__all__ = [
    "SINK_HEADERS",
    "SINK_TOPIC",
    "ColumnarChain",
    "compile_chain",
    "compile_sink_chain",
    "simple_date_format",
]

log = logging.getLogger(__name__)

CHAIN_CLASS = "sluice.transforms.chain.TransformationChain"
REGEX_ROUTER = "sluice.transforms.regex_router.RegexRouter"
TIMESTAMP_ROUTER = "sluice.transforms.timestamp_router.TimestampRouter"
FILTER = "sluice.transforms.filter.Filter"
DROP_HEADERS = "sluice.transforms.drop_headers.DropHeaders"
INSERT_HEADER = "sluice.transforms.insert_header.InsertHeader"
TOPIC_NAME_MATCHES = "sluice.transforms.predicates.TopicNameMatches"
HAS_HEADER_KEY = "sluice.transforms.predicates.HasHeaderKey"
RECORD_IS_TOMBSTONE = "sluice.transforms.predicates.RecordIsTombstone"

_STRING = "sluice.converters.string.StringConverter"
_BYTES = "sluice.converters.bytearray.ByteArrayConverter"
_SIMPLE_HEADER = "sluice.converters.simple_header.SimpleHeaderConverter"
# Reading a record never fails and ignores the topic: the record reaches the chain
# whatever its bytes, so removing or changing it before conversion changes nothing else.
INFALLIBLE_CONVERTERS = frozenset({_STRING, _BYTES})
INFALLIBLE_HEADER_CONVERTERS = frozenset({_SIMPLE_HEADER, _STRING, _BYTES})
# The Connect value is null exactly when the bytes are (RecordIsTombstone on bytes).
NULL_EXACT_CONVERTERS = frozenset({_STRING, _BYTES})

# Columns the chain adds for the executor.
SINK_TOPIC = "sink_topic"  # the record's topic after the chain; null: run the Python chain
SINK_HEADERS = "sink_headers"  # the headers after the chain (array<struct<key, value>>)

# Epoch milliseconds the per-record SimpleDateFormat formats (years 1 to 9999).
MIN_TIMESTAMP_MS = -62_135_596_800_000
MAX_TIMESTAMP_MS = 253_402_300_799_999

_W = "__sluice_"  # prefix of working columns


# --------------------------------------------------------------------------- the chain


@dataclass(frozen=True)
class _State:
    """Column expressions for one record as it goes through the chain."""

    topic: Column
    headers: Column
    alive: Column  # not dropped by a Filter
    fallback: Column  # a step needs the per-record chain for this record
    value: Column  # the bytes as consumed
    timestamp: Column  # epoch milliseconds, as consumed
    partition: Column
    offset: Column
    # The key and value once a step needs them converted (columnar_values), else None.
    key_typed: Column | None = None
    value_typed: Column | None = None
    added_headers: tuple[Column, ...] = ()  # HeaderFrom's headers, in order


Step = Callable[[_State, Column], _State]  # (state, applies) -> state
Condition = Callable[[_State], Column]


@dataclass(frozen=True)
class _Stage:
    description: str
    step: Step
    predicate: Condition | None
    negate: bool


class ColumnarChain:
    """A compiled chain: :meth:`apply` adds ``sink_topic``/``sink_headers`` (and, when steps
    change the key or value, ``sink_key``/``sink_value``/``sink_added_headers``) and removes
    the rows a Filter drops. Input columns: ``key``, ``topic``, ``partition``, ``offset``,
    ``value``, ``headers`` and a long epoch millisecond timestamp column."""

    def __init__(
        self, stages: list[_Stage], routes: bool, header_ops: bool, filters: bool, typed: TypedOutputs | None = None
    ) -> None:
        self.stages = tuple(stages)
        self.typed = typed
        self.routes = routes or typed is not None  # a null sink_topic marks the rows to redo
        self.header_ops = header_ops
        self.filters = filters

    def describe(self) -> str:
        return ", ".join(s.description for s in self.stages)

    def apply(self, frame: DataFrame, timestamp: str = "ts_ms") -> DataFrame:
        names = [c for c in frame.columns if not c.startswith(_W)]
        slots = ("topic", "headers", "alive", "fallback", "key_typed", "value_typed")
        working = {slot: _W + slot for slot in slots}
        frame = frame.select(
            *names,
            F.col("topic").alias(working["topic"]),
            F.col("headers").alias(working["headers"]),
            F.lit(True).alias(working["alive"]),
            F.lit(False).alias(working["fallback"]),
        )
        present = {"topic", "headers", "alive", "fallback"}
        header_count = 0
        for stage in self.stages:
            state = _State(
                topic=F.col(working["topic"]),
                headers=F.col(working["headers"]),
                alive=F.col(working["alive"]),
                fallback=F.col(working["fallback"]),
                value=F.col("value"),
                timestamp=F.col(timestamp),
                partition=F.col("partition"),
                offset=F.col("offset"),
                key_typed=F.col(working["key_typed"]) if "key_typed" in present else None,
                value_typed=F.col(working["value_typed"]) if "value_typed" in present else None,
                added_headers=tuple(F.col(f"{_W}h{i}") for i in range(header_count)),
            )
            applies = state.alive & ~state.fallback
            if stage.predicate is not None:
                matched = F.coalesce(stage.predicate(state), F.lit(False))
                applies = applies & (~matched if stage.negate else matched)
            new = stage.step(state, applies)
            # One projection per stage: a stage's inputs are computed once, not copied
            # into every later expression.
            out = [
                new.topic.alias(working["topic"]),
                new.headers.alias(working["headers"]),
                new.alive.alias(working["alive"]),
                new.fallback.alias(working["fallback"]),
            ]
            for slot in ("key_typed", "value_typed"):
                column = getattr(new, slot)
                if column is not None:
                    out.append(column.alias(working[slot]))
                    present.add(slot)
            header_count = len(new.added_headers)
            out.extend(c.alias(f"{_W}h{i}") for i, c in enumerate(new.added_headers))
            frame = frame.select(*names, *out)
        if self.filters:
            frame = frame.where(F.col(working["alive"]) | F.col(working["fallback"]))
        fallback = F.col(working["fallback"])
        out = [F.col(n) for n in names]
        if self.routes:
            out.append(
                F.when(fallback, F.lit(None).cast("string")).otherwise(F.col(working["topic"])).alias(SINK_TOPIC)
            )
        if self.header_ops:
            # A record for the per-record chain is converted as consumed.
            out.append(F.when(fallback, F.col("headers")).otherwise(F.col(working["headers"])).alias(SINK_HEADERS))
        if self.typed is not None:
            if self.typed.key_schema is not None:
                out.append(F.col(working["key_typed"]).alias(SINK_KEY))
            if self.typed.value_schema is not None:
                out.append(F.col(working["value_typed"]).alias(SINK_VALUE))
            if self.typed.added_headers:
                out.append(
                    F.struct(*[F.col(f"{_W}h{i}").alias(f"h{i}") for i in range(header_count)]).alias(
                        SINK_ADDED_HEADERS
                    )
                )
        return frame.select(*out)


# --------------------------------------------------------------------------- compiling


def compile_sink_chain(task: TaskSpec, jvm: Any = None) -> tuple[ColumnarChain | None, str]:
    """The columnar form of a sink task's chain, or ``(None, why not)``."""
    return compile_chain(
        task.transforms,
        key_converter=task.key_converter,
        value_converter=task.value_converter,
        header_converter=task.header_converter,
        jvm=jvm,
    )


def compile_chain(
    spec: PluginSpec | None,
    *,
    key_converter: PluginSpec,
    value_converter: PluginSpec,
    header_converter: PluginSpec,
    jvm: Any = None,
) -> tuple[ColumnarChain | None, str]:
    """Compile the chain ``spec`` describes (``TaskSpec.transforms``) for sink records read
    with these converters: ``(chain, description)`` or ``(None, reason)``.

    ``jvm`` (``spark._jvm``), when given, checks that Java compiles every regular
    expression the way it is used (an invalid one would fail the Spark job).
    """
    if spec is None:
        return None, "no transforms"
    if spec.class_path != CHAIN_CLASS:
        return None, f"chain class {spec.class_path}"
    try:
        chain = _load(spec.class_path).from_connector_config(dict(spec.configs), lambda _kind, path: _load(path))
    except Exception as exc:  # noqa: BLE001 - the executor reports it when it builds the chain
        return None, f"the chain does not build here: {exc}"
    try:
        if chain.is_empty:
            return None, "no transforms"
        converters = _Converters(key_converter, value_converter, header_converter)
        stages: list[_Stage] = []
        routes = header_ops = filters = False
        sides = Sides()
        for stage in chain.stages:
            prefix = f"transforms.{stage.alias}."
            own = {k[len(prefix) :]: v for k, v in spec.configs.items() if k.startswith(prefix)}
            own.pop("predicate", None)
            own.pop("negate", None)
            kind = _class_path(type(stage.transformation))
            if columnar_values.is_value_step(kind):
                operating = columnar_values.operating_side(kind)
                if sides.schema(operating) is None:
                    stages.append(_decode_stage(operating, converters, sides))
                step, description = columnar_values.value_step(
                    kind, stage.transformation, sides, conditional=stage.predicate is not None
                )
            else:
                if sides.headers and kind in (DROP_HEADERS, INSERT_HEADER):
                    raise NotColumnar(f"{kind} after HeaderFrom")
                step, description = _transformation(kind, stage.transformation, own, converters, jvm)
            routes |= kind in (REGEX_ROUTER, TIMESTAMP_ROUTER)
            header_ops |= kind in (DROP_HEADERS, INSERT_HEADER)
            filters |= kind == FILTER
            predicate = None
            if stage.predicate is not None:
                predicate_prefix = f"predicates.{stage.predicate_alias}."
                predicate_own = {
                    k[len(predicate_prefix) :]: v for k, v in spec.configs.items() if k.startswith(predicate_prefix)
                }
                predicate, predicate_text = _predicate(stage.predicate, predicate_own, converters, jvm, sides)
                description += f" if {'not ' if stage.negate else ''}{predicate_text}"
            stages.append(_Stage(f"{stage.alias}: {description}", step, predicate, stage.negate))
        typed = None
        if sides.key is not None or sides.value is not None or sides.headers:
            typed = TypedOutputs(sides.key, sides.value, tuple(sides.headers))
        compiled = ColumnarChain(stages, routes, header_ops, filters, typed)
        return compiled, compiled.describe()
    except NotColumnar as exc:
        return None, str(exc)
    finally:
        chain.close()


def _decode_stage(side: str, converters: _Converters, sides: Sides) -> _Stage:
    """Spark reads the key or value as its converter would, for the steps that need it."""
    schema, read = columnar_values.decoder(converters.key if side == "key" else converters.value)
    setattr(sides, side, schema)

    def decode(s: _State, applies: Column) -> _State:
        raw = F.col("key") if side == "key" else s.value
        typed, bad = read(raw)
        return _replace(s, fallback=s.fallback | bad, **{f"{side}_typed": typed})

    return _Stage(f"{side} read as {schema.type.name.lower()}", decode, None, False)


def _load(path: str) -> Any:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _class_path(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


class _Converters:
    def __init__(self, key: PluginSpec, value: PluginSpec, header: PluginSpec) -> None:
        self.key, self.value, self.header = key, value, header

    def require_infallible(self, what: str) -> None:
        """Kafka converts each record before its chain: a step that removes records or
        changes headers before conversion is exact only when conversion cannot fail."""
        for role, spec, allowed in (
            ("key converter", self.key, INFALLIBLE_CONVERTERS),
            ("value converter", self.value, INFALLIBLE_CONVERTERS),
            ("header converter", self.header, INFALLIBLE_HEADER_CONVERTERS),
        ):
            if spec.class_path not in allowed:
                raise NotColumnar(f"{what} with {role} {spec.class_path}, which may fail to read a record")

    def header_bytes(self, key: str, schema: Any, value: Any) -> bytes | None:
        """The bytes of a header the executor reads back as exactly ``(schema, value)``."""
        if self.header.class_path not in INFALLIBLE_HEADER_CONVERTERS:
            raise NotColumnar(f"InsertHeader with header converter {self.header.class_path}")
        converter = _load(self.header.class_path)()
        converter.configure(dict(self.header.configs))
        try:
            raw = converter.from_connect_header("", key, schema, value)
            back = converter.to_connect_header("", key, raw)
        finally:
            converter.close()
        if raw is not None and not isinstance(raw, bytes):
            raw = bytes(raw)
        if back.schema != schema or back.value != value or type(back.value) is not type(value):
            raise NotColumnar(f"InsertHeader: header {key!r} does not read back as the value the transform adds")
        return raw


# --------------------------------------------------------------------------- transformations


def _transformation(
    kind: str, transformation: Any, own: dict[str, Any], converters: _Converters, jvm: Any
) -> tuple[Step, str]:
    values = _parse(transformation, own)
    if kind == REGEX_ROUTER:
        regex, replacement = values["regex"], values["replacement"]
        if getattr(getattr(transformation, "_replacement", None), "_error", "unknown") is not None:
            raise NotColumnar(f"RegexRouter replacement {replacement!r} is not valid for {regex!r}")
        full, first = _anchored(regex, jvm)
        python_groups = getattr(getattr(transformation, "_regex", None), "groups", None)
        if jvm is not None and _java_groups(jvm, regex) != python_groups:
            # The replacement was checked against Python's reading of the groups.
            raise NotColumnar(f"RegexRouter {regex!r}: Java and Python count its groups differently")

        def route(s: _State, applies: Column) -> _State:
            topic = F.when(applies & s.topic.rlike(full), F.regexp_replace(s.topic, F.lit(first), F.lit(replacement)))
            return _replace(s, topic=topic.otherwise(s.topic))

        return route, f"RegexRouter {regex!r} -> {replacement!r}"
    if kind == TIMESTAMP_ROUTER:
        topic_format, timestamp_format = values["topic.format"], values["timestamp.format"]
        formatter = simple_date_format(timestamp_format)

        def route_by_time(s: _State, applies: Column) -> _State:
            ts = s.timestamp
            usable = ts.isNotNull() & (ts >= F.lit(MIN_TIMESTAMP_MS)) & (ts <= F.lit(MAX_TIMESTAMP_MS))
            text = formatter(F.when(usable, ts).otherwise(F.lit(0)))
            topic = F.replace(F.replace(F.lit(topic_format), F.lit("${topic}"), s.topic), F.lit("${timestamp}"), text)
            return _replace(
                s,
                topic=F.when(applies & usable, topic).otherwise(s.topic),
                fallback=s.fallback | (applies & ~usable),
            )

        return route_by_time, f"TimestampRouter {topic_format!r} {timestamp_format!r}"
    if kind == FILTER:
        converters.require_infallible("Filter")
        return (lambda s, applies: _replace(s, alive=s.alive & ~applies)), "Filter"
    if kind == DROP_HEADERS:
        converters.require_infallible("DropHeaders")
        names = list(dict.fromkeys(parse_type("headers", own.get("headers"), ConfigType.LIST) or []))
        if not names:
            return (lambda s, applies: s), "DropHeaders []"

        def drop(s: _State, applies: Column) -> _State:
            kept = F.filter(s.headers, lambda h: ~h["key"].isin(names))
            return _replace(s, headers=F.when(applies, kept).otherwise(s.headers))

        return drop, f"DropHeaders {names}"
    if kind == INSERT_HEADER:
        converters.require_infallible("InsertHeader")
        probe = transformation.apply(SinkRecord("t", 0, None, None, None, None, 0))
        added = probe.headers.last_with_name(values["header"])
        if added is None:  # pragma: no cover - InsertHeader always adds it
            raise NotColumnar("InsertHeader adds no header")
        raw = converters.header_bytes(added.key, added.schema, added.value)

        def insert(s: _State, applies: Column) -> _State:
            header = F.struct(F.lit(added.key).alias("key"), F.lit(raw).cast("binary").alias("value"))
            present = F.coalesce(s.headers, F.array().cast("array<struct<key:string,value:binary>>"))
            return _replace(s, headers=F.when(applies, F.concat(present, F.array(header))).otherwise(s.headers))

        return insert, f"InsertHeader {added.key!r}"
    raise NotColumnar(f"{kind} has no columnar form")


def _predicate(
    predicate: Any, own: dict[str, Any], converters: _Converters, jvm: Any, sides: Sides | None = None
) -> tuple[Condition, str]:
    kind = _class_path(type(predicate))
    values = _parse(predicate, own)
    if kind == TOPIC_NAME_MATCHES:
        pattern = values["pattern"]
        full, _ = _anchored(pattern, jvm)
        return (lambda s: s.topic.rlike(full)), f"TopicNameMatches {pattern!r}"
    if kind == HAS_HEADER_KEY:
        if sides is not None and sides.headers:
            raise NotColumnar("HasHeaderKey after HeaderFrom")
        name = values["name"]
        return (lambda s: F.exists(s.headers, lambda h: h["key"] == F.lit(name))), f"HasHeaderKey {name!r}"
    if kind == RECORD_IS_TOMBSTONE:
        if sides is not None and sides.value is not None:  # a typed value is null exactly when Connect's is
            return (lambda s: s.value_typed.isNull()), "RecordIsTombstone"
        if converters.value.class_path not in NULL_EXACT_CONVERTERS:
            raise NotColumnar(f"RecordIsTombstone with value converter {converters.value.class_path}")
        return (lambda s: s.value.isNull()), "RecordIsTombstone"
    raise NotColumnar(f"predicate {kind} has no columnar form")


def _parse(plugin: Any, own: Mapping[str, Any]) -> dict[str, Any]:
    """The plugin's own keys, typed and with defaults, as its ``configure`` read them."""
    try:
        return dict(plugin.config().parse(own))
    except Exception as exc:  # noqa: BLE001 - configure accepted it: read it per record
        raise NotColumnar(f"{type(plugin).__name__}: {exc}") from exc


def _replace(state: _State, **changes: Any) -> _State:
    return dataclasses.replace(state, **changes)


# Inline flags that change how the rest of the pattern reads (comments mode) and quoting
# that runs to the end of the pattern would swallow the anchors added around it.
_UNSAFE_TO_WRAP = re.compile(r"\(\?[a-zA-Z-]*x|\\Q(?!.*\\E)", re.DOTALL)


def _anchored(regex: str, jvm: Any) -> tuple[str, str]:
    """``(whole-input match, match at the start)``: ``Matcher.matches()`` as a ``find``
    (Spark's ``rlike``) and the first match of a regex that matches the whole input."""
    if _UNSAFE_TO_WRAP.search(regex):
        raise NotColumnar(f"regular expression {regex!r} cannot be anchored as written")
    full, first = f"\\A(?:{regex})\\z", f"\\A(?:{regex})"
    if jvm is not None:
        try:
            for pattern in (regex, full):
                jvm.java.util.regex.Pattern.compile(pattern)
        except Exception as exc:  # noqa: BLE001 - Java disagrees: keep the per-record path
            raise NotColumnar(f"Java does not compile {regex!r}: {exc}") from exc
        if _java_groups(jvm, regex) != _java_groups(jvm, full):
            raise NotColumnar(f"anchoring {regex!r} changes its groups")
    return full, first


def _java_groups(jvm: Any, regex: str) -> int:
    return int(jvm.java.util.regex.Pattern.compile(regex).matcher("").groupCount())


# --------------------------------------------------------------------------- SimpleDateFormat

# Spark's dayofweek counts from Sunday = 1.
_DAYS_FROM_SUNDAY = WEEKDAYS[-1:] + WEEKDAYS[:-1]


def simple_date_format(pattern: str) -> Callable[[Column], Column]:
    """A ``java.text.SimpleDateFormat`` pattern (UTC, ``en_US``) as a function from a long
    epoch-millisecond column to the formatted text, field for field what the per-record
    ``TimestampRouter`` writes. Raises :class:`NotColumnar` for week fields (``w``, ``Y``)
    and for what the per-record formatter rejects."""

    def refuse_week_fields(letter: str, count: int) -> None:
        if letter in "wY":
            raise NotColumnar(f"week field '{letter}' in {pattern!r}")

    try:
        tokens = pattern_tokens(pattern, refuse_week_fields)
    except ValueError as e:  # Java's message for an unknown letter or an unterminated quote
        raise NotColumnar(str(e)) from None

    def format_column(millis: Column) -> Column:
        wall = F.timestamp_add("MILLISECOND", millis, F.lit("1970-01-01 00:00:00").cast("timestamp_ntz"))
        parts = [F.lit(t) if isinstance(t, str) else _field(t[0], t[1], wall, millis) for t in tokens]
        return F.concat(*parts) if parts else F.lit("")

    return format_column


def _pad(value: Column, count: int) -> Column:
    return F.format_string(f"%0{count}d", value)


def _names(names: tuple[str, ...], index: Column, count: int) -> Column:
    values = names if count >= 4 else tuple(name[:3] for name in names)
    return F.element_at(F.array(*[F.lit(v) for v in values]), index)


def _field(letter: str, count: int, wall: Column, millis: Column) -> Column:
    if letter == "G":
        return F.lit("AD")
    if letter == "y":
        year = F.year(wall)
        return _pad(year % 100, 2) if count == 2 else _pad(year, count)
    if letter in "ML":
        return _names(MONTHS, F.month(wall), count) if count >= 3 else _pad(F.month(wall), count)
    if letter == "d":
        return _pad(F.dayofmonth(wall), count)
    hour = F.hour(wall)
    if letter == "k":
        return _pad(F.when(hour == 0, F.lit(24)).otherwise(hour), count)
    if letter == "H":
        return _pad(hour, count)
    if letter == "K":
        return _pad(hour % 12, count)
    if letter == "h":
        return _pad(F.when(hour % 12 == 0, F.lit(12)).otherwise(hour % 12), count)
    if letter == "m":
        return _pad(F.minute(wall), count)
    if letter == "s":
        return _pad(F.second(wall), count)
    if letter == "S":
        return _pad(F.pmod(millis, F.lit(1000)), count)
    if letter == "E":
        return _names(_DAYS_FROM_SUNDAY, F.dayofweek(wall), count)
    if letter == "u":
        return _pad((F.dayofweek(wall) + 5) % 7 + 1, count)
    if letter == "D":
        return _pad(F.dayofyear(wall), count)
    if letter == "F":
        return _pad(((F.dayofmonth(wall) - 1) / 7).cast("int") + 1, count)
    if letter == "W":
        first = F.dayofweek(F.trunc(F.to_date(wall), "month")) - 1  # Sunday = 0
        return _pad(((F.dayofmonth(wall) - 1 + first) / 7).cast("int") + 1, count)
    if letter == "a":
        return F.when(hour < 12, F.lit("AM")).otherwise(F.lit("PM"))
    if letter == "z":
        return F.lit("Coordinated Universal Time" if count >= 4 else "UTC")
    if letter == "Z":
        return F.lit("+0000")
    return F.lit("Z")  # X
