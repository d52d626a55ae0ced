"""Lint markers say why: a broad ``except`` silenced for ruff's BLE001 gives its reason on
the same line (ruff itself fails on markers that silence nothing, RUF100)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TREES = ("src", "tests", "devtools", "bench", "examples")
MARKER = re.compile(r"#\s*noqa:\s*BLE001\b(?P<reason>.*)$")


def test_every_silenced_broad_except_says_why() -> None:
    unexplained = []
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            if ".venv" in path.parts:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                marker = MARKER.search(line)
                if marker and len(marker.group("reason").strip(" -—:")) < 10:
                    unexplained.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not unexplained, "broad excepts silenced without a reason:\n" + "\n".join(unexplained)
