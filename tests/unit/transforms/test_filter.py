"""Filter: drops every record it is applied to."""

from __future__ import annotations

from sluice.api.data import Schema
from sluice.api.records import SinkRecord, SourceRecord
from sluice.api.transforms import Transformation
from sluice.transforms.filter import Filter


def test_drops_source_and_sink_records() -> None:
    xform = Filter()
    xform.configure({})
    assert isinstance(xform, Transformation)
    assert xform.apply(SourceRecord(None, None, "t", 0, None, "k", Schema.STRING_SCHEMA, "v")) is None
    assert xform.apply(SinkRecord("t", 0, None, None, None, None, 0)) is None
    xform.close()


def test_ignores_any_config() -> None:
    xform = Filter()
    xform.configure({"type": "Filter", "anything": "goes"})
    assert xform.apply(SourceRecord(None, None, "t")) is None


def test_config_def_is_empty() -> None:
    assert Filter().config().names() == []
