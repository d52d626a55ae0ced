"""The process of a benchmark's bound (a bare Spark job, a bare bulk loader): the benchmark's
own script run again with a spec file, speaking a small protocol on its standard output.

The child prints ``MARK + "ready"`` once its warm-up is done, starts the measured load when
it reads ``go`` on its standard input, and prints ``MARK + "done …"`` when it is over. Its
standard error goes to a log file, whose tail the errors carry.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

from bench.harness.procs import PeakRss, on_cpus
from bench.harness.workers import WorkerFailed

__all__ = ["MARK", "BoundProcess", "tail"]

MARK = "@@bench "  # the protocol lines on the child's standard output


def tail(path: Path, chars: int = 4000) -> str:
    """The end of a log file ("" when it cannot be read)."""
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return ""


class BoundProcess:
    """``script --flag spec_file`` started in ``run_dir``, its peak RSS sampled from the start."""

    def __init__(
        self,
        what: str,
        script: Path,
        flag: str,
        spec_file: Path,
        log_path: Path,
        env: dict[str, str] | None = None,
        cpus: set[int] | None = None,
    ) -> None:
        """``cpus``: the CPUs the process (and all it starts) may run on; None: any."""
        self.what = what  # for messages: "the bulk loader"
        self.log_path = log_path
        command = [sys.executable, str(script), flag, str(spec_file)]
        with log_path.open("ab") as err:
            self.proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                cwd=spec_file.parent,
                env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
                text=True,
                preexec_fn=on_cpus(cpus),
            )
        self.sampler = PeakRss(self.proc.pid)
        self.sampler.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def tail(self, chars: int = 4000) -> str:
        return tail(self.log_path, chars)

    def await_mark(self, mark: str, deadline: float) -> str:
        """Wait (until ``deadline``, a ``time.monotonic()``) for a protocol line starting with
        ``mark``; return it. Raises :class:`WorkerFailed` on a timeout or an exit."""
        stdout = self.proc.stdout
        assert stdout is not None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerFailed(f"{self.what} did not say {mark!r} in time\n{self.tail()}")
            ready, _, _ = select.select([stdout], [], [], min(remaining, 1.0))
            if ready:
                line = stdout.readline()
                if not line:
                    raise WorkerFailed(f"{self.what} exited with code {self.proc.wait()}\n{self.tail()}")
                if line.startswith(MARK + mark):
                    return line.strip()

    def go(self) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        stdin.write("go\n")
        stdin.flush()

    def check_alive(self) -> None:
        if self.proc.poll() is not None:
            raise WorkerFailed(f"{self.what} exited with code {self.proc.returncode}\n{self.tail()}")

    def close(self, timeout: float) -> None:
        """Stop sampling; a child still waiting for ``go`` stops when its standard input
        closes; one that does not end within ``timeout`` seconds is killed."""
        if self.sampler.is_alive():
            self.sampler.stop()
        proc = self.proc
        if proc.poll() is None:
            if proc.stdin is not None and not proc.stdin.closed:
                proc.stdin.close()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
