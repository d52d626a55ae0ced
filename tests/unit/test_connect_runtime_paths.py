"""Which plugin.path entries are Java plugins, and what CLASSPATH adds to the runtime."""

from __future__ import annotations

import os
from pathlib import Path

from sluice.jvm.connect_runtime import extra_classpath, java_plugin_locations


def test_java_plugins_are_jars_and_directories_of_jars_or_classes(tmp_path: Path) -> None:
    (tmp_path / "uber.jar").write_bytes(b"PK")
    (tmp_path / "debezium" / "lib").mkdir(parents=True)
    (tmp_path / "debezium" / "lib" / "a.jar").write_bytes(b"PK")
    (tmp_path / "classes" / "com" / "example").mkdir(parents=True)
    (tmp_path / "classes" / "com" / "example" / "C.class").write_bytes(b"\xca\xfe")
    (tmp_path / "python_plugin").mkdir()
    (tmp_path / "python_plugin" / "__init__.py").write_text("")
    (tmp_path / "module.py").write_text("")
    found = java_plugin_locations([str(tmp_path), str(tmp_path / "missing")])
    assert found == [tmp_path / "classes", tmp_path / "debezium", tmp_path / "uber.jar"]


def test_a_python_only_plugin_path_has_no_java_plugin(tmp_path: Path) -> None:
    (tmp_path / "plugin.py").write_text("")
    assert java_plugin_locations([str(tmp_path)]) == []


def test_classpath_entries_and_wildcards(tmp_path: Path) -> None:
    (tmp_path / "libs").mkdir()
    for name in ("b.jar", "a.jar", "notes.txt"):
        (tmp_path / "libs" / name).write_bytes(b"")
    single = tmp_path / "single.jar"
    single.write_bytes(b"")
    value = os.pathsep.join([str(tmp_path / "libs" / "*"), str(single), str(tmp_path / "gone.jar"), ""])
    assert extra_classpath({"CLASSPATH": value}) == [tmp_path / "libs" / "a.jar", tmp_path / "libs" / "b.jar", single]
    assert extra_classpath({}) == []
