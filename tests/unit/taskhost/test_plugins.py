"""Loading plugin classes where tasks run: a task host starts many tasks at once, each on a
thread of its own, and their plugins may come from one package."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sluice.taskhost.plugins import load_class
from tests.helpers import wait_until

# A package like the guide's example: its __init__ imports its modules, and they import
# its version from it. Starting it signals, then waits for the go-ahead, so that the test can
# start the second import exactly while the first is inside the package's __init__.
PACKAGE = {
    "__init__.py": (
        "VERSION = '1'\n"
        "import racing_signal\n"
        "racing_signal.entered.set()\n"
        "racing_signal.go_on.wait(10)\n"
        "from racing_plugin.sink import Sink\n"
        "from racing_plugin.source import Source\n"
    ),
    "sink.py": "from racing_plugin import VERSION\n\nclass Sink:\n    version = VERSION\n",
    "source.py": "from racing_plugin import VERSION\n\nclass Source:\n    version = VERSION\n",
}


@pytest.fixture
def racing_package(tmp_path: Path) -> Iterator[Any]:
    (tmp_path / "racing_signal.py").write_text(
        "import threading\nentered = threading.Event()\ngo_on = threading.Event()\n"
    )
    package = tmp_path / "racing_plugin"
    package.mkdir()
    for name, text in PACKAGE.items():
        (package / name).write_text(text)
    sys.path.insert(0, str(tmp_path))
    try:
        import racing_signal  # type: ignore[import-not-found]

        yield racing_signal
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n.startswith(("racing_plugin", "racing_signal"))]:
            del sys.modules[name]


def _waiting_to_import(thread: threading.Thread) -> bool:
    """The thread is blocked before its import: on the loader's lock, or Python's lock of
    the module it imports."""
    frame = sys._current_frames().get(thread.ident or -1)
    return frame is not None and frame.f_code.co_name in ("load_class", "acquire", "_get_module_lock")


def test_two_tasks_loading_classes_of_one_package_at_once_both_get_them(racing_package: Any) -> None:
    loaded: dict[str, Any] = {}

    def load(path: str) -> None:
        try:
            loaded[path] = load_class(path)
        except BaseException as exc:  # noqa: BLE001 - what the test reports
            loaded[path] = exc

    first = threading.Thread(target=load, args=("racing_plugin.source.Source",))
    first.start()
    assert racing_package.entered.wait(10), "the first import did not reach the package's __init__"
    second = threading.Thread(target=load, args=("racing_plugin.sink.Sink",))
    second.start()
    wait_until(lambda: _waiting_to_import(second), timeout=10, message="the second import waiting")
    racing_package.go_on.set()
    first.join(10)
    second.join(10)

    assert {path: getattr(value, "__name__", value) for path, value in loaded.items()} == {
        "racing_plugin.source.Source": "Source",
        "racing_plugin.sink.Sink": "Sink",
    }
