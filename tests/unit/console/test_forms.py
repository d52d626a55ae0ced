"""The console's form model: groups and order from a validate answer, values kept, errors
shown only once asked for, pasted configs parsed."""

from __future__ import annotations

import pytest

from sluice.console.forms import build_form, config_from_text, field_id


def _item(name, group=None, order=-1, errors=(), type_="STRING", default=None, required=False, visible=True):
    return {
        "definition": {
            "name": name,
            "type": type_,
            "required": required,
            "default_value": default,
            "importance": "HIGH",
            "documentation": f"doc of {name}",
            "group": group,
            "order": order,
            "display_name": name.title(),
        },
        "value": {"name": name, "value": None, "recommended_values": [], "errors": list(errors), "visible": visible},
    }


ANSWER = {
    "name": "p",
    "error_count": 1,
    "groups": ["Common", "Transforms"],
    "configs": [
        _item("name", "Common", 1, required=True),
        _item("connector.class", "Common", 2, required=True),
        _item("transforms", "Transforms", 1, type_="LIST"),
        _item("topic", None, errors=['Missing required configuration "topic" which has no default value.']),
        _item("file", None, default=""),
        _item("tasks.max", "Common", 0, type_="INT", default="1"),
    ],
}


def test_groups_follow_the_answer_with_the_plugins_own_keys_after_common() -> None:
    form = build_form(
        "org.example.FileSource", ANSWER, {"topic": "t", "x.unknown": "1"}, mode="create", show_errors=True
    )
    assert [g.name for g in form.groups] == [
        "Common",
        "FileSource",
        "Transforms",
        "Settings the plugin does not define",
    ]
    assert [f.name for f in form.groups[0].fields] == ["tasks.max", "name", "connector.class"]
    assert [f.name for f in form.groups[1].fields] == ["topic", "file"]
    assert form.groups[3].fields[0].value == "1"
    assert form.values == {"topic": "t", "x.unknown": "1"}
    assert form.error_count == 1
    assert [(f.name, e) for f, e in form.errors()] == [("topic", ANSWER["configs"][3]["value"]["errors"][0])]


def test_errors_are_not_shown_before_the_person_asks() -> None:
    form = build_form("p", ANSWER, {}, mode="create", show_errors=False)
    assert form.error_count == 0 and form.errors() == []


def test_a_group_opens_when_it_needs_attention() -> None:
    form = build_form("p", ANSWER, {}, mode="create", show_errors=True)
    opened = {g.name: g.opened for g in form.groups}
    assert opened == {"Common": True, "p": True, "Transforms": False}


@pytest.mark.parametrize("key", ["a.b", "transforms.x y.type", "q\"uo'te", "ü/</script>"])
def test_field_ids_are_safe_and_distinct(key: str) -> None:
    html_id = field_id(key)
    assert html_id.startswith("cfg-")
    assert all(c.isalnum() or c in "_.-" for c in html_id)
    assert field_id(key + "x") != html_id


def test_pasted_configs_as_json_request_json_or_properties() -> None:
    assert config_from_text('{"topic": "t", "tasks.max": 2, "flag": true, "list": ["a", "b"]}') == {
        "topic": "t",
        "tasks.max": "2",
        "flag": "true",
        "list": "a,b",
    }
    assert config_from_text('{"name": "n", "config": {"topic": "t"}}') == {"topic": "t", "name": "n"}
    assert config_from_text("topic=t\n# a comment\nfile = /tmp/x\n") == {"topic": "t", "file": "/tmp/x"}
    assert config_from_text("  ") == {}


@pytest.mark.parametrize("text", ['{"topic": ', "[1, 2]"])
def test_a_paste_that_is_not_a_config_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="JSON"):
        config_from_text(text)
