"""The create and edit form of a connector, generated from the plugin's ConfigDef as
``PUT /connector-plugins/{plugin}/config/validate`` describes it: its groups in order, each
key with its type, display name, documentation, default and recommended values, and the
errors of the values entered so far beside their keys."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import javaproperties

__all__ = ["ConfigForm", "FormField", "FormGroup", "build_form", "config_from_text", "field_id"]

EXTRA_GROUP = "Settings the plugin does not define"

_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def field_id(key: str) -> str:
    """An HTML id for a config key, stable across renders (the browser keeps focus on it
    when the form is drawn again) and safe whatever the key holds."""
    return "cfg-" + _ID_UNSAFE.sub(lambda m: f"_{ord(m.group()):x}_", key)


@dataclass
class FormField:
    """One config key as the form shows it."""

    name: str
    type: str
    required: bool
    default: str | None
    importance: str
    documentation: str
    display_name: str
    value: str  # what the person entered; "" leaves the key unset
    recommended: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    visible: bool = True

    @property
    def id(self) -> str:
        return field_id(self.name)

    @property
    def secret(self) -> bool:
        return self.type == "PASSWORD"


@dataclass
class FormGroup:
    name: str
    fields: list[FormField]

    @property
    def has_errors(self) -> bool:
        return any(f.errors for f in self.fields)

    @property
    def opened(self) -> bool:
        """Shown unfolded: it needs attention or holds values (a plugin may have 200 keys)."""
        return any(f.errors or f.value or (f.required and f.default is None) for f in self.fields)


@dataclass
class ConfigForm:
    plugin: str
    mode: str  # "create" or "edit"
    name: str
    groups: list[FormGroup]
    error_count: int
    show_errors: bool
    open_groups: frozenset[str] = frozenset()  # unfolded by the person: kept so across a redraw

    @property
    def values(self) -> dict[str, str]:
        return {f.name: f.value for g in self.groups for f in g.fields if f.value != ""}

    def errors(self) -> list[tuple[FormField, str]]:
        return [(f, e) for g in self.groups for f in g.fields for e in f.errors]


def build_form(
    plugin: str,
    answer: dict[str, Any],
    values: dict[str, str],
    *,
    mode: str,
    show_errors: bool,
    open_groups: frozenset[str] = frozenset(),
) -> ConfigForm:
    """The form for ``plugin`` from its validate ``answer``, holding ``values``."""
    order = [str(g) for g in answer.get("groups") or []]
    # Keys the plugin defines without a group are its own (FileStreamSource's file and
    # topic): shown right after the framework's Common group, under the plugin's name.
    own_group = plugin.rsplit(".", 1)[-1] or "Plugin"
    order.insert(1 if order else 0, own_group)
    grouped: dict[str, list[tuple[int, int, FormField]]] = {}
    defined: set[str] = set()
    for position, item in enumerate(answer.get("configs") or []):
        definition = item.get("definition") or {}
        result = item.get("value") or {}
        key = str(definition.get("name") or result.get("name") or "")
        if not key or key in defined:
            continue
        defined.add(key)
        default = definition.get("default_value")
        form_field = FormField(
            name=key,
            type=str(definition.get("type") or "STRING"),
            required=bool(definition.get("required")),
            default=None if default is None else str(default),
            importance=str(definition.get("importance") or ""),
            documentation=str(definition.get("documentation") or ""),
            display_name=str(definition.get("display_name") or key),
            value=values.get(key, ""),
            recommended=[str(v) for v in result.get("recommended_values") or []],
            errors=[str(e) for e in result.get("errors") or []] if show_errors else [],
            visible=result.get("visible", True) is not False,
        )
        group = str(definition.get("group") or own_group)
        order_in_group = definition.get("order_in_group", definition.get("order"))
        rank = order_in_group if isinstance(order_in_group, int) and order_in_group >= 0 else 1 << 30
        grouped.setdefault(group, []).append((rank, position, form_field))
    extras = [
        FormField(key, "STRING", False, None, "", "Not a key of this plugin's ConfigDef.", key, value)
        for key, value in sorted(values.items())
        if key not in defined and key != "connector.class"
    ]
    names = [g for g in order if g in grouped] + [g for g in grouped if g not in order]
    groups = [FormGroup(g, [f for _, _, f in sorted(grouped[g], key=lambda t: (t[0], t[1]))]) for g in names]
    if extras:
        groups.append(FormGroup(EXTRA_GROUP, extras))
    return ConfigForm(
        plugin=plugin,
        mode=mode,
        name=values.get("name", ""),
        groups=groups,
        error_count=int(answer.get("error_count") or 0) if show_errors else 0,
        show_errors=show_errors,
        open_groups=open_groups,
    )


def config_from_text(text: str) -> dict[str, str]:
    """A whole config pasted as JSON (a config object, or ``{"name": …, "config": {…}}`` as
    ``POST /connectors`` takes it) or as Java properties. Raises ValueError when it is neither."""
    stripped = text.strip()
    if not stripped:
        return {}
    if stripped.startswith(("{", "[")):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as e:
            raise ValueError(f"The text is not valid JSON: {e}") from None
        if not isinstance(data, dict):
            raise ValueError("The JSON must be an object of config keys and values")
        if isinstance(data.get("config"), dict):
            config = dict(data["config"])
            if "name" in data and "name" not in config:
                config["name"] = data["name"]
            data = config
        return {str(k): _text(v) for k, v in data.items()}
    try:
        return {str(k): str(v) for k, v in javaproperties.loads(stripped).items()}
    except Exception as e:  # noqa: BLE001 - javaproperties raises several kinds
        raise ValueError(f"The text is neither a JSON object nor Java properties: {e}") from None


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, list):
        return ",".join(_text(v) for v in value)
    return str(value)
