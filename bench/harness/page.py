"""What the benchmark scripts share to run and report: the systems of ``--systems`` and
their alternating order, a timestamped progress log, number cells, medians over runs, and
their block of ``docs/benchmarks.md`` between its own markers."""

from __future__ import annotations

import argparse
import datetime as dt
import math
import statistics
import sys
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = [
    "add_warmup_runs",
    "alternating",
    "chosen_systems",
    "load_text",
    "log",
    "median",
    "merge_block",
    "num",
    "ratio",
    "runs_ok",
]

ANALYSIS_HEADING = "## What the figures say"


def chosen_systems(parser: argparse.ArgumentParser, spec: str, known: Sequence[str]) -> list[str]:
    """The systems ``spec`` names (comma-separated); the parser's usage error when one of
    them is not ``known``."""
    systems = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = sorted(set(systems) - set(known))
    if unknown:
        parser.error(f"unknown systems {', '.join(unknown)} (choose from {', '.join(known)})")
    return systems


def add_warmup_runs(parser: argparse.ArgumentParser) -> None:
    """``--warmup-runs N`` (default 1): unmeasured runs of each system before the measured
    rounds, since first runs are slower, whoever goes first; 0 skips them (smoke runs)."""

    def count(text: str) -> int:
        value = int(text)
        if value < 0:
            raise argparse.ArgumentTypeError("must be 0 or more")
        return value

    parser.add_argument("--warmup-runs", type=count, default=1, help="unmeasured runs of each system before the rounds")


def alternating(systems: Sequence[str], rounds: int) -> Iterator[tuple[int, str]]:
    """``(round, system)`` of each measured run, rounds counted from 1; which system goes
    first turns every round (a sitting's slow moments do not always fall on the same one)."""
    for round_ in range(rounds):
        turn = round_ % len(systems)
        for system in [*systems[turn:], *systems[:turn]]:
            yield round_ + 1, system


def runs_ok(runs: list[dict[str, Any]], system: str) -> str:
    """``ok/total`` of the runs of ``system``."""
    mine = [r for r in runs if r["system"] == system]
    return f"{sum(1 for r in mine if r['ok'])}/{len(mine)}"


def log(message: str) -> None:
    print(f"[{dt.datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def num(value: float | None, digits: int = 0) -> str:
    """``value`` with thousands separators, ``–`` when there is none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}"


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or not b:
        return "–"
    return f"{a / b:.2f}×"


def median(runs: list[dict[str, Any]], key: str) -> float | None:
    """The median of ``key`` over the runs that passed their check and have it."""
    values = [r[key] for r in runs if r.get("ok") and r.get(key) is not None]
    return statistics.median(values) if values else None


def load_text(results: dict[str, Any]) -> str:
    """The load average (1 min) at the start of a benchmark, at the start of its runs
    (``load_1min_at_start`` of each run in ``results["runs"]``) and at the end."""
    loads = [r["load_1min_at_start"] for rs in results["runs"].values() for r in rs if "load_1min_at_start" in r]
    return (
        f"Load average (1 min): {results['load_before'][0]:.1f} at the start, {min(loads, default=0):.1f}–"
        f"{max(loads, default=0):.1f} at the start of the runs, {results['load_after'][0]:.1f} at the end"
    )


def merge_block(text: str, block: str, begin: str, end: str, after: str | None = None) -> str:
    """``text`` with its ``begin``…``end`` block replaced by ``block``; the first time, the
    block goes after the marker ``after``, else before the hand-written analysis, else at
    the end. The rest of the page is left as it is."""
    if begin in text and end in text:
        return text[: text.index(begin)] + block + text[text.index(end) + len(end) :]
    if after is not None and after in text:
        at = text.index(after) + len(after)
        return text[:at] + "\n\n" + block + text[at:]
    if ANALYSIS_HEADING in text:
        return text.replace(ANALYSIS_HEADING, block + "\n\n" + ANALYSIS_HEADING, 1)
    return text + ("\n" if text else "") + block + "\n"
