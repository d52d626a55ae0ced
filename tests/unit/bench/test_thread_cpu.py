"""bench/thread_cpu.py's reading of its samples: the busy stretch and the threads' cores."""

from __future__ import annotations

from bench import thread_cpu


def _samples(cores_per_interval: list[float]) -> list[tuple[float, dict[str, tuple[str, float]]]]:
    """One thread ("task") using the given cores in each 1 s interval, and an idle one."""
    samples = []
    used = 0.0
    for t, cores in enumerate([0.0, *cores_per_interval]):
        used += cores
        samples.append((float(t), {"1": ("task", used), "2": ("idle", 0.0)}))
    return samples


def test_the_busy_stretch_is_the_longest_run_above_the_threshold() -> None:
    samples = _samples([0.2, 1.5, 1.5, 0.1, 1.2, 1.3, 1.4, 1.2, 1.1, 0.3])
    stretch = thread_cpu.busiest_stretch(samples)
    assert stretch is not None
    (start, _), (end, _) = stretch
    assert (start, end) == (4.0, 9.0)


def test_a_process_never_busy_for_long_has_no_stretch() -> None:
    assert thread_cpu.busiest_stretch(_samples([0.2, 1.5, 1.5, 0.1, 0.2])) is None


def test_the_report_gives_each_threads_cores_over_the_stretch() -> None:
    sampler = thread_cpu.Sampler()
    sampler.kinds[42] = "Sluice driver JVM"
    sampler.samples[42] = _samples([0.1, 1.5, 1.5, 1.5, 1.5, 1.5, 0.1])
    text = thread_cpu.report(sampler)
    assert text.splitlines()[0] == "Sluice driver JVM, pid 42: 1.50 cores over 5.0 s"
    assert text.splitlines()[1].split() == ["1.50", "task"]
    assert "idle" not in text
