"""TransformationChain: building from a connector config as Kafka's ConnectorConfig does,
and applying the stages with their predicates."""

from __future__ import annotations

from typing import Any

import pytest

from sluice.api.config import ConfigDef, ConfigType, Importance
from sluice.api.data import Schema
from sluice.api.errors import ConfigError, ConnectError, DataError
from sluice.api.records import ConnectRecord, Headers, SinkRecord, SourceRecord
from sluice.api.transforms import Predicate, Transformation
from sluice.transforms.chain import TransformationChain, TransformationStage
from sluice.transforms.drop_headers import DropHeaders
from sluice.transforms.filter import Filter
from sluice.transforms.header_from import HeaderFrom, HeaderFromKey, HeaderFromValue
from sluice.transforms.insert_header import InsertHeader
from sluice.transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches
from sluice.transforms.regex_router import RegexRouter
from sluice.transforms.timestamp_router import TimestampRouter

EVENTS: list[tuple[str, Any]] = []


class Recording(Transformation):
    """Appends ``suffix`` to the topic and records its life."""

    def configure(self, configs: dict[str, Any]) -> None:
        self.configs = dict(configs)
        self.suffix = (
            ConfigDef().define("suffix", ConfigType.STRING, "", importance=Importance.LOW).parse(configs)["suffix"]
        )
        EVENTS.append(("configure", self.configs))

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        EVENTS.append(("apply", self.suffix))
        return record.new_record(topic=record.topic + self.suffix)

    def config(self) -> ConfigDef:
        return ConfigDef().define("suffix", ConfigType.STRING, "", importance=Importance.LOW)

    def close(self) -> None:
        EVENTS.append(("close", self.suffix))


class Failing(Recording):
    def apply(self, record: ConnectRecord) -> ConnectRecord:
        raise DataError("boom")


class Always(Predicate):
    def configure(self, configs: dict[str, Any]) -> None:
        self.configs = dict(configs)
        self.answer = str(configs.get("answer", "true")) == "true"
        EVENTS.append(("configure predicate", self.configs))

    def test(self, record: ConnectRecord) -> bool:
        EVENTS.append(("test", self.answer))
        return self.answer

    def config(self) -> ConfigDef:
        return ConfigDef().define("answer", ConfigType.STRING, "true", importance=Importance.LOW)

    def close(self) -> None:
        EVENTS.append(("close predicate", self.answer))


class BadConfig(Transformation):
    def apply(self, record):
        return record

    def config(self):
        return None  # type: ignore[return-value]


class RefusesToConfigure(Recording):
    def configure(self, configs: dict[str, Any]) -> None:
        raise ConfigError("suffix", "x", "refused")


CLASSES: dict[str, type] = {
    "Recording": Recording,
    "Failing": Failing,
    "Always": Always,
    "BadConfig": BadConfig,
    "RefusesToConfigure": RefusesToConfigure,
    "org.apache.kafka.connect.transforms.RegexRouter": RegexRouter,
    "org.apache.kafka.connect.transforms.TimestampRouter": TimestampRouter,
    "org.apache.kafka.connect.transforms.InsertHeader": InsertHeader,
    "org.apache.kafka.connect.transforms.DropHeaders": DropHeaders,
    "org.apache.kafka.connect.transforms.Filter": Filter,
    "Filter": Filter,
    "org.apache.kafka.connect.transforms.HeaderFrom": HeaderFrom,
    "org.apache.kafka.connect.transforms.HeaderFrom$Key": HeaderFromKey,
    "org.apache.kafka.connect.transforms.HeaderFrom$Value": HeaderFromValue,
    "org.apache.kafka.connect.transforms.predicates.TopicNameMatches": TopicNameMatches,
    "org.apache.kafka.connect.transforms.predicates.HasHeaderKey": HasHeaderKey,
    "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone": RecordIsTombstone,
    "RecordIsTombstone": RecordIsTombstone,
    "String": str,
}
LOADED: list[tuple[str, str]] = []


def load(kind: str, name: str) -> type:
    LOADED.append((kind, name))
    return CLASSES[name]


@pytest.fixture(autouse=True)
def _reset() -> None:
    EVENTS.clear()
    LOADED.clear()


def chain(**config: str) -> TransformationChain:
    return TransformationChain.from_connector_config({k.replace("__", "."): v for k, v in config.items()}, load)


def build(config: dict[str, str]) -> TransformationChain:
    return TransformationChain.from_connector_config(config, load)


def source(topic: str = "t", value: Any = "v", headers: Headers | None = None) -> SourceRecord:
    return SourceRecord({"p": 0}, {"o": 1}, topic, 0, None, "k", None, value, 1483425001864, headers)


# -- empty chains -----------------------------------------------------------------------------


@pytest.mark.parametrize("config", [{}, {"transforms": ""}, {"transforms": " "}, {"name": "c", "topics": "t"}])
def test_empty_chain(config) -> None:
    empty = build(config)
    assert empty.is_empty and len(empty) == 0 and empty.stages == ()
    record = source()
    assert empty.apply(record) is record
    empty.close()
    assert LOADED == []


def test_direct_construction() -> None:
    assert TransformationChain().is_empty
    router = RegexRouter()
    router.configure({"regex": "t", "replacement": "u"})
    built = TransformationChain([TransformationStage(router)])
    assert not built.is_empty
    assert built.apply(source()).topic == "u"


# -- building ---------------------------------------------------------------------------------


def test_stages_in_order_with_own_configs() -> None:
    built = build(
        {
            "transforms": "first, second",
            "transforms.second.type": "Recording",
            "transforms.second.suffix": "-2",
            "transforms.first.type": "Recording",
            "transforms.first.suffix": "-1",
            "transforms.first.extra": "kept",
            "transforms.firstx.suffix": "ignored",
            "transforms.unlisted.type": "Recording",
        }
    )
    assert [s.alias for s in built.stages] == ["first", "second"]
    assert LOADED == [("transformation", "Recording"), ("transformation", "Recording")]
    configured = [e[1] for e in EVENTS if e[0] == "configure"]
    # the transformation's keys with the prefix stripped, "type" included, as Kafka passes them
    assert configured == [{"type": "Recording", "suffix": "-1", "extra": "kept"}, {"type": "Recording", "suffix": "-2"}]
    assert built.apply(source("t")).topic == "t-1-2"
    assert repr(built) == (
        "TransformationChain{tests.unit.transforms.test_chain.Recording, tests.unit.transforms.test_chain.Recording}"
    )


def test_predicate_and_negate_are_not_passed_to_the_transformation() -> None:
    built = build(
        {
            "transforms": "a",
            "transforms.a.type": "Recording",
            "transforms.a.predicate": "p",
            "transforms.a.negate": "false",
            "predicates": "p",
            "predicates.p.type": "Always",
            "predicates.p.answer": "true",
        }
    )
    assert EVENTS[0] == ("configure", {"type": "Recording"})
    assert EVENTS[1] == ("configure predicate", {"type": "Always", "answer": "true"})
    stage = built.stages[0]
    assert (stage.predicate_alias, stage.negate, type(stage.predicate)) == ("p", False, Always)


def test_each_stage_gets_its_own_predicate_instance() -> None:
    built = build(
        {
            "transforms": "a,b",
            "transforms.a.type": "Recording",
            "transforms.a.predicate": "p",
            "transforms.b.type": "Recording",
            "transforms.b.predicate": "p",
            "predicates": "p",
            "predicates.p.type": "Always",
        }
    )
    first, second = built.stages
    assert first.predicate is not second.predicate


def test_kafka_class_names() -> None:
    built = build(
        {
            "transforms": "route,hdr,drop",
            "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.route.regex": "(.*)-raw",
            "transforms.route.replacement": "$1",
            "transforms.hdr.type": "org.apache.kafka.connect.transforms.HeaderFrom$Value",
            "transforms.hdr.fields": "id",
            "transforms.hdr.headers": "record-id",
            "transforms.hdr.operation": "copy",
            "transforms.drop.type": "org.apache.kafka.connect.transforms.DropHeaders",
            "transforms.drop.headers": "secret",
        }
    )
    record = source("orders-raw", {"id": 7}, Headers().add_string("secret", "s"))
    out = built.apply(record)
    assert out.topic == "orders"
    assert [(h.key, h.value) for h in out.headers] == [("record-id", 7)]


# -- predicates at work ------------------------------------------------------------------------

TOMBSTONE_FILTER = {
    "transforms": "dropTombstones",
    "transforms.dropTombstones.type": "org.apache.kafka.connect.transforms.Filter",
    "transforms.dropTombstones.predicate": "isTombstone",
    "predicates": "isTombstone",
    "predicates.isTombstone.type": "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
}


def test_filter_with_predicate() -> None:
    built = build(TOMBSTONE_FILTER)
    assert built.apply(source(value=None)) is None
    kept = source(value="v")
    assert built.apply(kept) is kept


@pytest.mark.parametrize("negate", ["true", "TRUE", "True"])
def test_filter_with_negated_predicate(negate: str) -> None:
    built = build({**TOMBSTONE_FILTER, "transforms.dropTombstones.negate": negate})
    tombstone = source(value=None)
    assert built.apply(tombstone) is tombstone
    assert built.apply(source(value="v")) is None


def test_negate_is_read_as_kafka_reads_it() -> None:
    # The config check trims " true", but the stage reads the value as given, as Kafka does.
    built = build({**TOMBSTONE_FILTER, "transforms.dropTombstones.negate": " true"})
    assert built.stages[0].negate is False


def test_topic_and_header_predicates_on_sink_records() -> None:
    built = build(
        {
            "transforms": "routeOrders,tag",
            "transforms.routeOrders.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.routeOrders.regex": ".*",
            "transforms.routeOrders.replacement": "orders-archive",
            "transforms.routeOrders.predicate": "isOrders",
            "transforms.tag.type": "org.apache.kafka.connect.transforms.InsertHeader",
            "transforms.tag.header": "untagged",
            "transforms.tag.value.literal": "true",
            "transforms.tag.predicate": "hasTag",
            "transforms.tag.negate": "true",
            "predicates": "isOrders,hasTag",
            "predicates.isOrders.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
            "predicates.isOrders.pattern": "orders",
            "predicates.hasTag.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
            "predicates.hasTag.name": "tag",
        }
    )
    orders = SinkRecord("orders", 1, None, None, Schema.STRING_SCHEMA, "x", 5)
    out = built.apply(orders)
    assert isinstance(out, SinkRecord) and out.kafka_offset == 5
    assert out.topic == "orders-archive"
    assert [(h.key, h.value, h.schema) for h in out.headers] == [("untagged", True, Schema.BOOLEAN_SCHEMA)]
    tagged = SinkRecord("payments", 1, None, None, None, "x", 6, headers=Headers().add_string("tag", "y"))
    assert built.apply(tagged) is tagged


def test_predicate_is_asked_only_for_its_stage() -> None:
    built = build(
        {
            "transforms": "a,b",
            "transforms.a.type": "Recording",
            "transforms.a.suffix": "-a",
            "transforms.a.predicate": "no",
            "transforms.b.type": "Recording",
            "transforms.b.suffix": "-b",
            "predicates": "no",
            "predicates.no.type": "Always",
            "predicates.no.answer": "false",
        }
    )
    EVENTS.clear()
    assert built.apply(source("t")).topic == "t-b"
    assert EVENTS == [("test", False), ("apply", "-b")]


def test_a_dropped_record_ends_the_chain() -> None:
    built = build({"transforms": "drop,after", "transforms.drop.type": "Filter", "transforms.after.type": "Recording"})
    EVENTS.clear()
    assert built.apply(source()) is None
    assert EVENTS == []


def test_timestamp_router_in_chain() -> None:
    built = build(
        {
            "transforms": "ts",
            "transforms.ts.type": "org.apache.kafka.connect.transforms.TimestampRouter",
            "transforms.ts.topic.format": "${topic}_${timestamp}",
            "transforms.ts.timestamp.format": "yyyy",
        }
    )
    assert built.apply(source("events")).topic == "events_2017"


# -- errors while applying -----------------------------------------------------------------------


def test_errors_propagate_with_the_failing_stage() -> None:
    built = build({"transforms": "ok,bad", "transforms.ok.type": "Recording", "transforms.bad.type": "Failing"})
    with pytest.raises(DataError, match="boom") as e:
        built.apply(source())
    assert e.value.transformation_alias == "bad"  # type: ignore[attr-defined]
    assert e.value.transformation_class == "tests.unit.transforms.test_chain.Failing"  # type: ignore[attr-defined]


def test_missing_timestamp_error_from_a_stage() -> None:
    built = build({"transforms": "ts", "transforms.ts.type": "org.apache.kafka.connect.transforms.TimestampRouter"})
    with pytest.raises(DataError, match="Timestamp missing on record"):
        built.apply(SourceRecord(None, None, "t"))


# -- close ----------------------------------------------------------------------------------------


def test_close_closes_everything_once() -> None:
    built = build(
        {
            "transforms": "a,b",
            "transforms.a.type": "Recording",
            "transforms.a.suffix": "a",
            "transforms.a.predicate": "p",
            "transforms.b.type": "Recording",
            "transforms.b.suffix": "b",
            "predicates": "p",
            "predicates.p.type": "Always",
        }
    )
    EVENTS.clear()
    built.close()
    built.close()
    assert EVENTS == [("close", "a"), ("close predicate", True), ("close", "b")]


def test_close_goes_on_after_a_failing_close(caplog) -> None:
    class FailingClose(Recording):
        def close(self) -> None:
            raise RuntimeError("cannot close")

    first, second = FailingClose(), Recording()
    first.configure({"suffix": "1"})
    second.configure({"suffix": "2"})
    EVENTS.clear()
    TransformationChain([TransformationStage(first), TransformationStage(second)]).close()
    assert EVENTS == [("close", "2")]
    assert "Failed to close transformation" in caplog.text


def test_a_failed_build_closes_what_it_created() -> None:
    with pytest.raises(ConfigError, match="refused"):
        build(
            {
                "transforms": "a,b",
                "transforms.a.type": "Recording",
                "transforms.a.suffix": "a",
                "transforms.b.type": "RefusesToConfigure",
            }
        )
    assert ("close", "a") in EVENTS


# -- config errors, in Kafka's words ---------------------------------------------------------------


def _error(config: dict[str, str]) -> str:
    with pytest.raises(ConnectError) as e:
        build(config)
    return str(e.value)


def test_duplicate_aliases() -> None:
    assert _error({"transforms": "a,a", "transforms.a.type": "Filter"}) == (
        "Invalid value [a, a] for configuration transforms: Duplicate alias provided."
    )
    assert _error(
        {
            "transforms": "a",
            "transforms.a.type": "Filter",
            "predicates": "p, p",
            "predicates.p.type": "RecordIsTombstone",
        }
    ) == ("Invalid value [p, p] for configuration predicates: Duplicate alias provided.")


def test_missing_type() -> None:
    assert _error({"transforms": "a"}) == "Invalid value null for configuration transforms.a.type: Not a Transformation"
    assert _error({"transforms": "", "predicates": "p"}) == (
        "Invalid value null for configuration predicates.p.type: Not a Predicate"
    )


def test_unknown_class() -> None:
    assert _error({"transforms": "a", "transforms.a.type": " NoSuchClass "}) == (
        "Invalid value NoSuchClass for configuration transforms.a.type: Class NoSuchClass could not be found."
    )


def test_loader_config_errors_propagate() -> None:
    def refusing(kind: str, name: str) -> type:
        raise ConfigError(f"no {kind} called {name}")

    with pytest.raises(ConfigError, match="no transformation called X"):
        TransformationChain.from_connector_config({"transforms": "a", "transforms.a.type": "X"}, refusing)


def test_wrong_kind_of_class() -> None:
    assert _error({"transforms": "a", "transforms.a.type": "String"}) == (
        "Class class String does not implement the Transformation interface"
    )
    assert _error(
        {
            "transforms": "a",
            "transforms.a.type": "Filter",
            "transforms.a.predicate": "p",
            "predicates": "p",
            "predicates.p.type": "Filter",
        }
    ) == ("Class class Filter does not implement the Predicate interface")


def test_abstract_class() -> None:
    assert _error({"transforms": "a", "transforms.a.type": "org.apache.kafka.connect.transforms.HeaderFrom"}) == (
        "This class is abstract and cannot be created. Did you mean "
        "sluice.transforms.header_from.HeaderFromKey, sluice.transforms.header_from.HeaderFromValue?"
    )


def test_config_def_must_not_be_none() -> None:
    assert _error({"transforms": "a", "transforms.a.type": "BadConfig"}) == (
        "tests.unit.transforms.test_chain.BadConfig.config() must return a ConfigDef that is not null."
    )


def test_negate_without_predicate() -> None:
    assert _error({"transforms": "a", "transforms.a.type": "Filter", "transforms.a.negate": "true"}) == (
        "Config 'transforms.a.negate' was provided but there is no config 'transforms.a.predicate' "
        "defining a predicate to be negated."
    )


def test_invalid_negate() -> None:
    assert _error({**TOMBSTONE_FILTER, "transforms.dropTombstones.negate": "maybe"}) == (
        "Invalid value maybe for configuration transforms.dropTombstones.negate: "
        "Expected value to be either true or false"
    )


def test_predicate_not_listed() -> None:
    message = _error({"transforms": "a", "transforms.a.type": "Filter", "transforms.a.predicate": "p"})
    assert message.startswith("Unknown configuration 'predicates.p.type'")
    assert "'transforms.a.predicate'" in message
    assert ("close", None) not in EVENTS


def test_transformation_config_is_checked_with_prefixed_names() -> None:
    router = {"transforms": "r", "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter"}
    assert _error({**router, "transforms.r.replacement": "x"}) == (
        'Missing required configuration "transforms.r.regex" which has no default value.'
    )
    # validators see the name without the prefix, as in Kafka
    assert _error({**router, "transforms.r.regex": "(", "transforms.r.replacement": "x"}).startswith(
        "Invalid value ( for configuration regex: Invalid regex: "
    )


def test_predicate_config_is_checked_even_without_transforms() -> None:
    assert _error(
        {"predicates": "p", "predicates.p.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches"}
    ) == ('Missing required configuration "predicates.p.pattern" which has no default value.')


def test_transformation_configure_errors_propagate() -> None:
    with pytest.raises(ConfigError, match="Illegal pattern character 'q'"):
        build(
            {
                "transforms": "ts",
                "transforms.ts.type": "org.apache.kafka.connect.transforms.TimestampRouter",
                "transforms.ts.timestamp.format": "yyyyq",
            }
        )


def test_null_transforms_list() -> None:
    with pytest.raises(ConfigError, match="Invalid value null for configuration transforms: entry must be non null"):
        TransformationChain.from_connector_config({"transforms": None}, load)  # type: ignore[dict-item]


def test_a_configured_chain_pickles() -> None:
    import pickle

    built = build(
        {
            **TOMBSTONE_FILTER,
            "transforms": "ts,dropTombstones",
            "transforms.ts.type": "org.apache.kafka.connect.transforms.TimestampRouter",
            "transforms.ts.timestamp.format": "yyyy-MM",
        }
    )
    copy = pickle.loads(pickle.dumps(built))
    assert copy.apply(source("t")).topic == "t-2017-01"
    assert copy.apply(source(value=None)) is None
