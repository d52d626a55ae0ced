"""Automatic restarts: the policy's keys, waits that double up to the most, the limit, and a
healthy run that starts the count again."""

from __future__ import annotations

import threading

from sluice.runtime.auto_restart import AutoRestarter, RestartPolicy
from sluice.runtime.herder.base import State


def test_the_policy_reads_its_keys_and_keeps_defaults_for_bad_values() -> None:
    assert RestartPolicy.of({}) == RestartPolicy()
    assert not RestartPolicy.of({"sluice.auto.restart.max.restarts": "3"}).enabled
    policy = RestartPolicy.of(
        {
            "sluice.auto.restart.enable": "TRUE",
            "sluice.auto.restart.max.restarts": "3",
            "sluice.auto.restart.backoff.initial.ms": "100",
            "sluice.auto.restart.backoff.max.ms": "350",
            "sluice.auto.restart.reset.after.ms": "-1",
        }
    )
    assert (policy.enabled, policy.max_restarts, policy.reset_after_ms) == (True, 3, 600_000)
    assert [policy.delay_ms(n) for n in range(4)] == [100, 200, 350, 350]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_restarts_up_to_the_limit_and_a_healthy_run_resets_the_count() -> None:
    config = {
        "sluice.auto.restart.enable": "true",
        "sluice.auto.restart.max.restarts": "2",
        "sluice.auto.restart.backoff.initial.ms": "0",
        "sluice.auto.restart.reset.after.ms": "60000",
    }
    restarted: list[tuple[str, int]] = []
    done = threading.Semaphore(0)

    def restart_task(name: str, task: int) -> None:
        restarted.append((name, task))
        done.release()

    clock = Clock()
    restarter = AutoRestarter(restart_task, lambda name: None, lambda name: config, clock=clock)
    for expected in (1, 2):
        trace = restarter.on_status("c", 0, State.FAILED, "boom")
        assert trace is not None and f"restart {expected} of 2" in trace
        assert done.acquire(timeout=10)
        note = restarter.on_status("c", 0, State.RUNNING, None)
        assert note is not None and f"Restarted automatically {expected} time(s)" in note and "boom" in note
    final = restarter.on_status("c", 0, State.FAILED, "boom")
    assert final is not None and "Not restarted again" in final
    assert restarted == [("c", 0), ("c", 0)]
    # after a minute of health, a failure is the first again
    restarter.on_status("c", 0, State.RUNNING, None)
    clock.now += 61
    again = restarter.on_status("c", 0, State.FAILED, "boom")
    assert again is not None and "restart 1 of 2" in again
    assert done.acquire(timeout=10)
    restarter.close()


def test_a_connector_without_the_setting_is_left_alone() -> None:
    restarter = AutoRestarter(lambda n, t: None, lambda n: None, lambda name: {"connector.class": "X"})
    assert restarter.on_status("c", 0, State.FAILED, "boom") == "boom"
    assert restarter.on_status("c", None, State.RUNNING, None) is None
