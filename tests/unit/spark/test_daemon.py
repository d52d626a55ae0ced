"""The daemon Spark forks task hosts from loads the task host, and nothing that makes a fork
unsafe: after importing it the process has one thread and no pyarrow (whose allocator
starts threads), and the session names it as Spark's daemon."""

from __future__ import annotations

import json
import subprocess
import sys

from sluice.spark.session import DEFAULTS

PROBE = """
import json, os, sys
import sluice.spark.daemon
print(json.dumps({
    "threads": len(os.listdir("/proc/self/task")),
    "pyarrow": "pyarrow" in sys.modules,
    "task_host": "sluice.taskhost.host" in sys.modules,
}))
"""


def test_the_daemon_loads_the_task_host_and_stays_safe_to_fork() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True)
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert loaded == {"threads": 1, "pyarrow": False, "task_host": True}


def test_the_session_forks_python_workers_from_it() -> None:
    assert DEFAULTS["spark.python.daemon.module"] == "sluice.spark.daemon"
