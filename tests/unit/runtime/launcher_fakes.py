"""A launcher and launches of our own, standing in for Spark's: a task supervisor under
test launches into them, the test plays the task's part through the launch's inbox and
reads what the supervisor sent it."""

from __future__ import annotations

import threading
from typing import Any

from sluice.spark.inbox import Inbox
from sluice.taskhost.protocol import TaskLaunch, WorkerMessage


class FakeConnection:
    def __init__(self) -> None:
        self.sent: list[Any] = []
        self.lock = threading.Lock()

    def send(self, message: WorkerMessage) -> bool:
        with self.lock:
            self.sent.append(message)
        return True

    def close(self) -> None:
        pass

    def of(self, kind: type) -> list[Any]:
        with self.lock:
            return [m for m in self.sent if isinstance(m, kind)]


class FakeLaunch:
    def __init__(self, task: TaskLaunch, inbox: Inbox, dedicated: bool = False) -> None:
        self.task = task
        self.inbox = inbox
        self.dedicated = dedicated
        self.connection = FakeConnection()
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeLauncher:
    slots = 4
    master = "local[4]"

    def __init__(self) -> None:
        self.launches: list[FakeLaunch] = []

    def warm_up(self, timeout_s: float, hosts: int = 1) -> float:
        return 0.0

    def launch(self, task: TaskLaunch, inbox: Inbox, dedicated: bool = False) -> FakeLaunch:
        launch = FakeLaunch(task, inbox, dedicated)
        self.launches.append(launch)
        return launch

    def close(self) -> None:
        pass

    def run_split_read(self, *args: Any) -> Any:
        raise AssertionError("not used")
