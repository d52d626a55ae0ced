"""The example plugin packages under ``examples/`` are importable in these tests, as they
are for a worker whose ``plugin.path`` lists their ``src`` directories."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
COUNTER_EXAMPLE = REPO / "examples" / "counter_connector"

if str(COUNTER_EXAMPLE / "src") not in sys.path:
    sys.path.append(str(COUNTER_EXAMPLE / "src"))
