"""``sluice``'s command dispatch: built-in commands, and the commands other distributions add
through ``sluice.cli_commands`` entry points (the development tooling's ``dev`` and
``quickstart``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from sluice.cli import main as cli_main


@dataclass
class FakeEntryPoint:
    name: str
    command: Callable[[Sequence[str]], int] | None = None
    value: str = "somewhere:command"
    dist: Any = None
    calls: list[list[str]] = field(default_factory=list)

    def load(self) -> Callable[[Sequence[str]], int]:
        if self.command is None:
            raise ImportError("No module named 'somewhere'")
        return self.command


def _recording(code: int, calls: list[list[str]]) -> Callable[[Sequence[str]], int]:
    def command(argv: Sequence[str]) -> int:
        calls.append(list(argv))
        return code

    return command


@pytest.fixture
def logging_levels(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    levels: list[str] = []
    monkeypatch.setattr(cli_main, "setup_logging", levels.append)
    return levels


def test_an_added_command_gets_its_arguments_unparsed(
    monkeypatch: pytest.MonkeyPatch, logging_levels: list[str]
) -> None:
    calls: list[list[str]] = []
    dev = FakeEntryPoint("dev", _recording(7, calls))
    monkeypatch.setattr(cli_main, "extension_commands", lambda: {"dev": dev})

    assert cli_main.main(["dev", "kafka", "start", "--dir", "/tmp/k", "--help", "-h"]) == 7
    assert calls == [["kafka", "start", "--dir", "/tmp/k", "--help", "-h"]]
    assert logging_levels == []  # the command sets up its own logging

    assert cli_main.main(["--log-level", "DEBUG", "dev", "fetch"]) == 7
    assert calls[-1] == ["fetch"]
    assert logging_levels == ["DEBUG"]


def test_devtools_commands_without_the_devtools_say_what_to_do(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_main, "extension_commands", dict)
    for command in (["dev", "kafka", "status"], ["quickstart"]):
        assert cli_main.main(command) == 1
        err = capsys.readouterr().err
        assert f"sluice {command[0]} needs the development tooling from a source checkout: ./dev setup" in err


def test_an_added_command_that_does_not_load_is_an_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_main, "extension_commands", lambda: {"quickstart": FakeEntryPoint("quickstart")})
    assert cli_main.main(["quickstart"]) == 1
    assert "cannot load somewhere:command" in capsys.readouterr().err


def test_other_added_commands_are_listed_and_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[list[str]] = []

    @dataclass
    class Dist:
        name: str = "sluice-extras"

    extra = FakeEntryPoint("extra", _recording(0, calls), dist=Dist())
    monkeypatch.setattr(cli_main, "extension_commands", lambda: {"extra": extra})
    with pytest.raises(SystemExit) as exited:
        cli_main.main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "added by sluice-extras" in out
    assert "needs the development tooling: ./dev setup" in out  # dev and quickstart, not installed
    assert cli_main.main(["extra", "a"]) == 0
    assert calls == [["a"]]


def test_built_in_commands_are_not_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    class Points(list[FakeEntryPoint]):
        pass

    fakes = Points([FakeEntryPoint("standalone"), FakeEntryPoint("dev", _recording(0, []))])
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: fakes)
    assert set(cli_main.extension_commands()) == {"dev"}


def test_built_in_commands_still_reject_unknown_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli_main.main(["standalone", "worker.properties", "--bogus"])
    assert exited.value.code == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_the_checkouts_devtools_add_dev_and_quickstart() -> None:
    """In the environment ``./dev setup`` makes, the development tooling is installed."""
    commands = cli_main.extension_commands()
    assert commands["dev"].value == "sluice_devtools.cli:dev_main"
    assert commands["quickstart"].value == "sluice_devtools.quickstart:quickstart_main"
    assert callable(commands["dev"].load())
