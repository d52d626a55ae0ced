"""``sluice.api`` exports exactly its public names, sorted, and each is importable
(in the spirit of httpx's tests/test_exported_members.py)."""

from __future__ import annotations

import importlib
import inspect

import pytest

import sluice.api

SUBMODULES = [
    "config",
    "connector",
    "converter",
    "data",
    "errors",
    "records",
    "schema_projector",
    "sink",
    "source",
    "transforms",
]


def test_all_is_sorted_and_unique() -> None:
    assert sluice.api.__all__ == sorted(sluice.api.__all__)
    assert len(set(sluice.api.__all__)) == len(sluice.api.__all__)


def test_all_matches_public_names() -> None:
    public = {
        name for name, value in vars(sluice.api).items() if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert set(sluice.api.__all__) == public


@pytest.mark.parametrize("name", sluice.api.__all__)
def test_exported_name_is_importable(name: str) -> None:
    namespace: dict = {}
    exec(f"from sluice.api import {name}", namespace)
    assert namespace[name] is getattr(sluice.api, name)


@pytest.mark.parametrize("module_name", SUBMODULES)
def test_submodule_all_names_exist(module_name: str) -> None:
    module = importlib.import_module(f"sluice.api.{module_name}")
    for name in module.__all__:
        assert hasattr(module, name), f"sluice.api.{module_name}.__all__ names missing {name}"


def test_api_exports_come_from_api_modules() -> None:
    for name in sluice.api.__all__:
        value = getattr(sluice.api, name)
        module = getattr(value, "__module__", None)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert module is not None and module.startswith("sluice.api."), (name, module)
