"""A real Spark standalone cluster (one master, one worker) from the installed PySpark.

``SparkStandaloneCluster(work_dir).start()`` runs ``org.apache.spark.deploy.master.Master``
and ``org.apache.spark.deploy.worker.Worker`` with ``java -cp <pyspark>/jars/*`` (the
same classes ``sbin/start-master.sh`` runs), each as a child process in its own session,
bound to 127.0.0.1 on free ports, and waits until the master's JSON endpoint
(``http://127.0.0.1:<ui port>/json/``) shows it ALIVE with the worker registered. It
returns the master URL (``spark://127.0.0.1:<port>``) to use as a Sluice worker's
``spark.master``.

The worker launches executors for the applications that connect (a Sluice worker's
SparkSession); they inherit the worker's environment: ``SPARK_LOCAL_IP=127.0.0.1``,
``PYSPARK_PYTHON`` (this interpreter by default, which has Sluice installed) and
``PYTHONPATH`` (this process's). The Python that executors run for a job is the one the
driver names (``PYSPARK_PYTHON`` of the driver), which on one machine is the same
interpreter.

Another process can stop it or ask for its status with ``SparkStandaloneCluster(work_dir)``
(pids and URLs are recorded in ``work_dir/state.json``). Stopping sends SIGTERM to the
worker (it kills its executors) and then to the master, SIGKILL after the timeout; a pid is
signalled only while its command line is still this cluster's daemon, and executors left
behind by a killed worker are stopped by the pids recorded when stopping began.

Files in ``work_dir``: ``state.json``, ``conf/`` (an empty ``SPARK_CONF_DIR``, so no
``spark-defaults.conf`` of the machine applies), ``logs/master.log``, ``logs/worker.log``,
``work/`` (the worker's work dir: one directory per application and executor with the
executor's ``stdout`` and ``stderr``) and ``local/`` (executors' scratch space).
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sluice.jvm.jars import SPARK_VERSION, pyspark_jars_dir
from sluice.jvm.java import java_executable
from sluice_devtools import DevToolsError
from sluice_devtools.processes import (
    LOOPBACK,
    ServiceStatus,
    free_port,
    process_info,
    read_state,
    reap_if_child,
    send_signal,
    tail,
    wait_exit,
    write_state,
)

__all__ = ["SparkStandaloneCluster"]

log = logging.getLogger(__name__)

_HOST = LOOPBACK
_PORT_ATTEMPTS = 3
_MASTER_CLASS = "org.apache.spark.deploy.master.Master"
_WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


class SparkStandaloneCluster:
    """A Spark standalone master and one worker whose files live in ``work_dir``.

    ``cores`` and ``memory`` are what the worker offers to applications (an application
    takes all offered cores unless it sets ``spark.cores.max``; its executors need
    ``spark.executor.memory`` ≤ ``memory``). ``python`` is the executors' ``PYSPARK_PYTHON``
    (default: this interpreter). ``daemon_heap`` is the heap of the master and worker JVMs
    themselves (executors get ``spark.executor.memory``).
    """

    def __init__(
        self,
        work_dir: Path | str,
        *,
        cores: int = 2,
        memory: str = "1g",
        python: str | None = None,
        daemon_heap: str = "256m",
        extra_env: Mapping[str, str] | None = None,
    ) -> None:
        self.work_dir = Path(work_dir).expanduser().absolute()
        self.cores = cores
        self.memory = memory
        self.python = python or sys.executable
        self.daemon_heap = daemon_heap
        self.extra_env = dict(extra_env or {})
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._state: dict[str, Any] = {}

    def __enter__(self) -> SparkStandaloneCluster:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ properties

    @property
    def master_url(self) -> str:
        """``spark://127.0.0.1:PORT``: the ``spark.master`` of applications."""
        self._adopt_from_state()
        url = self._state.get("master_url")
        if not url:
            raise DevToolsError(f"The Spark cluster in {self.work_dir} has not been started.")
        return str(url)

    @property
    def web_url(self) -> str:
        """The master's web UI (``/json/`` there describes the cluster)."""
        self._adopt_from_state()
        url = self._state.get("web_url")
        if not url:
            raise DevToolsError(f"The Spark cluster in {self.work_dir} has not been started.")
        return str(url)

    @property
    def master_pid(self) -> int | None:
        self._adopt_from_state()
        return self._state.get("master_pid")

    @property
    def worker_pid(self) -> int | None:
        self._adopt_from_state()
        return self._state.get("worker_pid")

    @property
    def worker_dir(self) -> Path:
        """The worker's work dir: ``<app id>/<executor id>/{stdout,stderr}``."""
        return self.work_dir / "work"

    @property
    def log_dir(self) -> Path:
        return self.work_dir / "logs"

    # ------------------------------------------------------------------ lifecycle

    def start(self, timeout: float = 90.0) -> str:
        """Start master and worker (a no-op if they run) and return the master URL.

        ``timeout`` bounds the wait until the worker has registered with the master.
        """
        self._adopt_from_state()
        if self._daemons_running():
            self._wait_ready(time.monotonic() + timeout)
            return self.master_url
        self._stop_leftovers()

        java = java_executable()
        classpath = str(pyspark_jars_dir() / "*")
        for sub in ("conf", "logs", "work", "local"):
            (self.work_dir / sub).mkdir(parents=True, exist_ok=True)
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            ports: dict[str, int] = {}
            for name in ("master", "master_ui", "worker", "worker_ui"):
                ports[name] = free_port(avoid=tuple(ports.values()))
            master_url = f"spark://{_HOST}:{ports['master']}"
            self._state = {
                "master_url": master_url,
                "web_url": f"http://{_HOST}:{ports['master_ui']}",
                "worker_url": f"http://{_HOST}:{ports['worker_ui']}",
                "ports": ports,
                "spark_version": SPARK_VERSION,
                "started_at": time.time(),
            }
            self._launch(
                "master",
                java,
                classpath,
                [
                    _MASTER_CLASS,
                    "--host",
                    _HOST,
                    "--port",
                    str(ports["master"]),
                    "--webui-port",
                    str(ports["master_ui"]),
                ],
            )
            self._launch(
                "worker",
                java,
                classpath,
                [
                    _WORKER_CLASS,
                    "--host",
                    _HOST,
                    "--port",
                    str(ports["worker"]),
                    "--webui-port",
                    str(ports["worker_ui"]),
                    "--cores",
                    str(self.cores),
                    "--memory",
                    self.memory,
                    "--work-dir",
                    str(self.worker_dir),
                    master_url,
                ],
            )
            try:
                self._wait_ready(time.monotonic() + timeout)
            except DevToolsError:
                output = self._log_tail()
                self._kill_failed_start()
                if _lost_port_race(output) and attempt < _PORT_ATTEMPTS:
                    continue  # another process took a port between choosing and binding
                raise
            log.info(
                "Spark %s standalone cluster up at %s (master pid %s, worker pid %s)",
                SPARK_VERSION,
                master_url,
                self.master_pid,
                self.worker_pid,
            )
            return master_url
        raise AssertionError("unreachable")

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop worker (and its executors), then master: SIGTERM, SIGKILL after ``timeout``.

        True if anything was running.
        """
        self._adopt_from_state()
        worker, master = self._state.get("worker_pid"), self._state.get("master_pid")
        # This worker's executors: its children that name it as their worker.
        worker_ref = f"--worker-url spark://Worker@{_HOST}:{self._state.get('ports', {}).get('worker')}"
        executors = [pid for pid in _children(worker) if _cmdline_has(pid, worker_ref)] if worker else []
        stopped = False
        for role, pid in (("worker", worker), ("master", master)):
            if pid is not None and self._is_daemon(role, pid):
                stopped = True
                self._terminate(role, pid, timeout)
        for pid in executors:  # normally gone with the worker already
            if _cmdline_has(pid, worker_ref):
                send_signal(pid, signal.SIGTERM)
                if not wait_exit(pid, timeout, self._procs.values()):
                    send_signal(pid, signal.SIGKILL)
                    wait_exit(pid, 15.0, self._procs.values())
        self._forget_processes()
        return stopped

    def status(self) -> ServiceStatus:
        self._adopt_from_state()
        running = self._daemons_running()
        state = self._state if running else {}
        return ServiceStatus(
            running,
            None,
            self.work_dir,
            (
                ("master", state.get("master_url")),
                ("ui", state.get("web_url")),
                ("master_pid", state.get("master_pid")),
                ("worker_pid", state.get("worker_pid")),
            ),
        )

    # ------------------------------------------------------------------ inspection

    def master_json(self, timeout: float = 5.0) -> dict[str, Any]:
        """The master's ``/json/`` document: ``status``, ``workers``, ``activeapps``, …"""
        with urllib.request.urlopen(f"{self.web_url}/json/", timeout=timeout) as response:
            return dict(json.loads(response.read()))

    def applications(self) -> list[dict[str, Any]]:
        """The running applications (``id``, ``name``, ``cores``, ``state``, …)."""
        return list(self.master_json().get("activeapps", []))

    def executor_dirs(self) -> list[Path]:
        """``work/<app id>/<executor id>`` of every executor this worker has launched."""
        if not self.worker_dir.is_dir():
            return []
        return sorted(p for app in self.worker_dir.iterdir() if app.is_dir() for p in app.iterdir() if p.is_dir())

    # ------------------------------------------------------------------ internals

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            {
                "SPARK_HOME": str(pyspark_jars_dir().parent),
                # The worker builds executors' command lines with Spark's launcher, which
                # needs the Scala version (bin/load-spark-env.sh would set it).
                "SPARK_SCALA_VERSION": _scala_binary_version(),
                "SPARK_CONF_DIR": str(self.work_dir / "conf"),
                "SPARK_LOCAL_IP": _HOST,
                "SPARK_LOCAL_HOSTNAME": _HOST,
                "SPARK_PUBLIC_DNS": _HOST,
                "PYSPARK_PYTHON": self.python,
                "SPARK_LOG_DIR": str(self.log_dir),
                "SPARK_LOCAL_DIRS": str(self.work_dir / "local"),  # executors' scratch space
            }
        )
        env.update(self.extra_env)
        return env

    def _launch(self, role: str, java: Path, classpath: str, arguments: list[str]) -> None:
        command = [
            str(java),
            f"-Xmx{self.daemon_heap}",
            "-XX:+ExitOnOutOfMemoryError",
            "-Djava.awt.headless=true",
            # Fail on a taken port instead of silently moving to the next one: the URLs
            # recorded here must be the ones bound.
            "-Dspark.port.maxRetries=0",
            "-Dspark.master.rest.enabled=false",
            "-cp",
            classpath,
            *arguments,
        ]
        with open(self.log_dir / f"{role}.log", "ab") as out:
            proc = subprocess.Popen(
                command,
                cwd=self.work_dir,
                env=self._environment(),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own session: outlives the caller, ignores its Ctrl-C
                close_fds=True,
            )
        self._procs[role] = proc
        self._state[f"{role}_pid"] = proc.pid
        self._write_state()

    def _wait_ready(self, deadline: float) -> None:
        worker_address = f"{_HOST}:{self._state['ports']['worker']}"
        last: object = None
        while True:
            for role in ("master", "worker"):
                pid = self._state.get(f"{role}_pid")
                if pid is None or not self._is_daemon(role, pid):
                    raise self._start_failure(f"{role} exited during start-up")
            try:
                doc = self.master_json(timeout=2.0)
            except (OSError, ValueError) as exc:  # not listening yet
                last = exc
            else:
                last = {"status": doc.get("status"), "workers": doc.get("workers")}
                alive = [
                    w
                    for w in doc.get("workers", [])
                    if w.get("state") == "ALIVE" and f"{w.get('host')}:{w.get('port')}" == worker_address
                ]
                if doc.get("status") == "ALIVE" and alive:
                    return
            if time.monotonic() > deadline:
                raise self._start_failure(f"did not have its worker registered in time (last: {last!r})")
            time.sleep(0.1)

    def _start_failure(self, what: str) -> DevToolsError:
        return DevToolsError(f"The Spark cluster in {self.work_dir} {what}. Last log lines:\n{self._log_tail()}")

    def _log_tail(self) -> str:
        parts = []
        for role in ("master", "worker"):
            path = self.log_dir / f"{role}.log"
            if path.is_file() and path.stat().st_size:
                parts.append(f"--- {path}\n{tail(path.read_text(errors='replace'))}")
        return "\n".join(parts) or "(no log output)"

    def _kill_failed_start(self) -> None:
        for role in ("worker", "master"):
            pid = self._state.get(f"{role}_pid")
            if pid is not None and self._is_daemon(role, pid):
                send_signal(pid, signal.SIGKILL)
                wait_exit(pid, 15.0, self._procs.values())
        self._forget_processes()

    def _terminate(self, role: str, pid: int, timeout: float) -> None:
        send_signal(pid, signal.SIGTERM)
        if not wait_exit(pid, timeout, self._procs.values()):
            log.warning("Spark %s pid %s did not stop within %ss; killing it", role, pid, timeout)
            send_signal(pid, signal.SIGKILL)
            if not wait_exit(pid, 15.0, self._procs.values()):
                raise DevToolsError(f"Spark {role} pid {pid} did not exit after SIGKILL.")

    def _stop_leftovers(self) -> None:
        """Before a start: stop a half of an earlier cluster that is still running."""
        if any(self._state.get(f"{role}_pid") for role in ("master", "worker")):
            self.stop()

    def _daemons_running(self) -> bool:
        return all(
            (pid := self._state.get(f"{role}_pid")) is not None and self._is_daemon(role, pid)
            for role in ("master", "worker")
        )

    def _is_daemon(self, role: str, pid: int) -> bool:
        """Whether ``pid`` is alive and still this cluster's master/worker (not a reused pid)."""
        proc = self._procs.get(role)
        if proc is not None and proc.pid == pid:
            return proc.poll() is None
        if reap_if_child(pid):
            return False
        info = process_info(pid)
        if info is None or info[0].startswith("Z"):
            return False
        cmdline = info[1]
        main_class = _MASTER_CLASS if role == "master" else _WORKER_CLASS
        port = str(self._state.get("ports", {}).get(role, ""))
        return main_class in cmdline and port in cmdline

    def _adopt_from_state(self) -> None:
        if self._procs:
            return
        state = self._read_state()
        if state is not None:
            self._state = state

    def _forget_processes(self) -> None:
        self._procs.clear()
        state = self._read_state() or dict(self._state)
        for role in ("master", "worker"):
            state[f"{role}_pid"] = None
            self._state[f"{role}_pid"] = None
        if self.work_dir.is_dir():
            self._state = state
            self._write_state()

    def _read_state(self) -> dict[str, Any] | None:
        return read_state(self.work_dir)

    def _write_state(self) -> None:
        write_state(self.work_dir, self._state)


# ---------------------------------------------------------------------------- helpers


def _scala_binary_version() -> str:
    for jar in pyspark_jars_dir().glob("spark-core_*.jar"):
        match = re.match(r"spark-core_(\d+\.\d+)-", jar.name)
        if match:
            return match.group(1)
    raise DevToolsError(f"No spark-core_<scala>-*.jar in {pyspark_jars_dir()}; is the PySpark install complete?")


def _lost_port_race(output: str) -> bool:
    return "Address already in use" in output or "BindException" in output


def _cmdline_has(pid: int, text: str) -> bool:
    info = process_info(pid)
    return info is not None and not info[0].startswith("Z") and text in info[1]


def _children(pid: int) -> list[int]:
    """Pids of the live children of ``pid``."""
    if Path("/proc/self").exists():
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
        return found
    try:
        out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [int(p) for p in out.stdout.split()]
