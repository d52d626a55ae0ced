"""docs/writing-a-connector.md shows the example's files as they are.

A code block of the guide that shows a file is preceded by ``<!-- file: <path> -->`` (an
HTML comment, invisible when the page is rendered) and must equal that file, byte for
byte. Every file of the example is shown, every code block other than shell commands
shows a file, and every path of the repository the guide names exists.
"""

from __future__ import annotations

import re

import pytest

from tests.unit.examples.conftest import COUNTER_EXAMPLE, REPO

GUIDE = REPO / "docs" / "writing-a-connector.md"
BLOCK = re.compile(r"^(?:<!-- file: (?P<path>\S+) -->\n)?```(?P<lang>[\w-]*)\n(?P<body>.*?)^```$", re.M | re.S)


def _blocks() -> list[re.Match[str]]:
    return list(BLOCK.finditer(GUIDE.read_text(encoding="utf-8")))


def _shown() -> dict[str, str]:
    return {m["path"]: m["body"] for m in _blocks() if m["path"]}


def _example_files() -> list[str]:
    """The example's own files, not what tools leave next to them (caches, build output)."""

    def generated(part: str) -> bool:
        return part.startswith(".") or part in ("__pycache__", "build", "dist") or part.endswith(".egg-info")

    return sorted(
        str(p.relative_to(REPO))
        for p in COUNTER_EXAMPLE.rglob("*")
        if p.is_file() and not any(generated(part) for part in p.relative_to(COUNTER_EXAMPLE).parts)
    )


@pytest.mark.parametrize("path", sorted(_shown()))
def test_a_file_shown_in_the_guide_is_the_file(path: str):
    assert _shown()[path] == (REPO / path).read_text(encoding="utf-8"), (
        f"docs/writing-a-connector.md shows an outdated {path}: copy the file into its code block"
    )


def test_the_guide_shows_every_file_of_the_example():
    assert set(_example_files()) - set(_shown()) == set()


def test_only_shell_commands_are_not_files():
    for block in _blocks():
        if not block["path"]:
            assert block["lang"] == "bash", f"a {block['lang'] or 'plain'} code block that shows no file"


def test_the_paths_the_guide_names_exist():
    text = GUIDE.read_text(encoding="utf-8")
    named = {p.rstrip(".,)`") for p in re.findall(r"(?:examples|tests|docs|src)/[\w./-]+", text)}
    assert named, "the guide names no path"
    missing = sorted(p for p in named if not (REPO / p).exists())
    assert missing == []
