"""What the local services of the tooling (Kafka broker, Schema Registry, databases, Spark
cluster, search servers) share: free loopback ports, process checks by pid, the work dir's
state file, and the system user a server that refuses root runs as.

Services are stopped by the pid they were started with, never by name; before signalling a
pid recorded by another process, :meth:`LocalService._is_running` checks that it is still
the work dir's own process (pids are reused).

**Service accounts.** Servers that refuse to run as root (PostgreSQL, OpenSearch,
Elasticsearch) run, when we are root, as a system user (:func:`service_account`, created
with ``useradd --system`` if missing): :func:`private_dir` makes the directories it writes
its own (mode 0700), :func:`grant_traverse` gives others search permission (``o+x``, never
read; logged) on the directories above a path that it cannot traverse, and
:func:`as_account` holds the ``Popen`` arguments that start the child as that user.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import os
import pwd
import random
import signal
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any, Self

from sluice_devtools import DevToolsError

__all__ = [
    "LOOPBACK",
    "STATE_FILE",
    "Account",
    "LocalService",
    "ServiceStatus",
    "as_account",
    "can_connect",
    "free_port",
    "grant_traverse",
    "has_exited",
    "port_if_free",
    "private_dir",
    "process_info",
    "read_state",
    "reap_if_child",
    "send_signal",
    "service_account",
    "tail",
    "wait_exit",
    "write_atomic",
    "write_state",
]

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class ServiceStatus:
    """What a dev service's ``status()`` reports: whether it runs, its process, where
    clients reach it (``addresses``: name → value, as ``./dev … status`` prints them) and its
    directory."""

    running: bool
    pid: int | None
    work_dir: Path
    addresses: tuple[tuple[str, object], ...] = ()

    def address(self, name: str) -> object:
        """The address (or other detail) named ``name``; ``None`` when not running."""
        return dict(self.addresses).get(name) if self.running else None

    def __str__(self) -> str:
        if not self.running:
            return f"stopped dir={self.work_dir}"
        details = "".join(f" {name}={value}" for name, value in self.addresses if value is not None)
        pid = f" pid={self.pid}" if self.pid is not None else ""
        return f"running{pid}{details} dir={self.work_dir}"


LOOPBACK = "127.0.0.1"
STATE_FILE = "state.json"


# Ports handed out by free_port in this process, so one process never gets the same twice.
_HANDED_OUT: set[int] = set()
_HANDED_OUT_LOCK = threading.Lock()


@functools.cache
def _chosen_range() -> range:
    """Where free_port looks: below the kernel's ephemeral range when there is room, else above.

    A port from the ephemeral range can be taken, between being chosen and being bound, by any
    process's outgoing connection (the kernel picks its local port there); a port outside it
    can only be taken by a program that asks for that very number.
    """
    try:
        low, high = (int(n) for n in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        low, high = 32768, 60999
    if low - 1024 >= 8192:
        return range(max(1024, low - 22000), low)
    return range(high + 1, 65536)


def free_port(avoid: int | Collection[int] | None = None) -> int:
    """A free TCP port on the loopback address (not ``avoid``, one port or several).

    Chosen outside the kernel's ephemeral range (from a random place in it, so that processes
    seldom try the same ports), never twice in one process, and free when chosen; the caller
    binds it soon after.
    """
    avoided = {avoid} if isinstance(avoid, int) else set(avoid or ())
    ports = _chosen_range()
    first = random.randrange(len(ports))
    with _HANDED_OUT_LOCK:
        for i in range(len(ports)):
            port = ports[(first + i) % len(ports)]
            if port not in avoided and port not in _HANDED_OUT and port_if_free(port) is not None:
                _HANDED_OUT.add(port)
                return port
    raise OSError(f"no free loopback port in {ports.start}-{ports.stop - 1}")


def port_if_free(port: int | None, avoid: int | None = None) -> int | None:
    """``port`` if it can be bound on the loopback address now (and is not ``avoid``)."""
    if port is None or port == avoid:
        return None
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            return None
    return port


def can_connect(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def reap_if_child(pid: int) -> bool | None:
    """Reap ``pid`` if it is an exited child of this process (started by another object).

    True: reaped now; False: a child of ours that has not exited; None: not our child.
    """
    try:
        reaped, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return None
    return reaped == pid


def process_info(pid: int) -> tuple[str, str] | None:
    """(state, command line) of a process, or None if there is no such process."""
    proc = Path("/proc") / str(pid)
    if Path("/proc/self").exists():
        try:
            stat = (proc / "stat").read_text()
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return None
        return stat.rsplit(")", 1)[1].split()[0], cmdline
    try:  # no /proc (macOS): ask ps
        out = subprocess.run(
            ["ps", "-o", "stat=", "-o", "command=", "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    line = out.stdout.strip()
    if out.returncode != 0 or not line:
        return None
    state, _, cmdline = line.partition(" ")
    return state, cmdline


def has_exited(pid: int, own: Iterable[subprocess.Popen[Any]] = ()) -> bool:
    """Whether ``pid`` is gone: one of ``own`` (the processes this object started) that
    exited, a child reaped now, else no such process or a zombie.

    The command line is not looked at: it reads as empty while a process exits. A child
    counts only once reaped, because a multi-threaded process shows as a zombie before its
    last thread has exited and it can be reaped.
    """
    for proc in own:
        if proc.pid == pid:
            return proc.poll() is not None
    reaped = reap_if_child(pid)
    if reaped is not None:
        return reaped
    info = process_info(pid)
    return info is None or info[0].startswith("Z")


def wait_exit(pid: int, timeout: float, own: Iterable[subprocess.Popen[Any]] = ()) -> bool:
    """Wait up to ``timeout`` seconds for :func:`has_exited`; whether it did."""
    own = list(own)
    deadline = time.monotonic() + timeout
    while not has_exited(pid, own):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def read_state(work_dir: Path) -> dict[str, Any] | None:
    """The JSON object in ``work_dir``'s state file, None when missing or unreadable."""
    try:
        state = json.loads((work_dir / STATE_FILE).read_text())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def write_state(work_dir: Path, state: Mapping[str, Any]) -> None:
    work_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(work_dir / STATE_FILE, json.dumps(state, indent=2) + "\n")


def send_signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


# ---------------------------------------------------------------------------- accounts


@dataclasses.dataclass(frozen=True)
class Account:
    """The OS user a server runs as when we are root."""

    name: str
    uid: int
    gid: int
    groups: frozenset[int]


def service_account(name: str) -> Account | None:
    """``None`` when not root (the server runs as us); else the system user, created if missing."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        log.info("creating the system user %s", name)
        proc = subprocess.run(
            ["useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if proc.returncode != 0:
            raise DevToolsError(
                f"Could not create the system user {name}:\n{tail(proc.stdout + proc.stderr)}"
            ) from None
        entry = pwd.getpwnam(name)
    groups = frozenset(os.getgrouplist(name, entry.pw_gid))
    return Account(name=name, uid=entry.pw_uid, gid=entry.pw_gid, groups=groups)


def _can_search(info: os.stat_result, account: Account) -> bool:
    if info.st_uid == account.uid:
        return bool(info.st_mode & stat.S_IXUSR)
    if info.st_gid in account.groups:
        return bool(info.st_mode & stat.S_IXGRP)
    return bool(info.st_mode & stat.S_IXOTH)


def grant_traverse(path: Path, account: Account) -> None:
    """Let ``account`` reach ``path``: add search permission (o+x) where it lacks it."""
    for directory in [*reversed(path.parents), path]:
        info = directory.stat()
        if not _can_search(info, account):
            os.chmod(directory, stat.S_IMODE(info.st_mode) | stat.S_IXOTH)
            log.info("gave others search permission (o+x) on %s so that %s can reach %s", directory, account.name, path)


def _chown(path: Path, account: Account | None) -> None:
    if account is not None:
        os.chown(path, account.uid, account.gid)


def private_dir(path: Path, account: Account | None) -> None:
    """``path`` as a directory owned by the server's user, mode 0700."""
    if path.is_symlink():
        raise DevToolsError(f"{path} is a symbolic link; remove it (a server's private directory must be a directory).")
    path.mkdir(parents=True, exist_ok=True)
    _chown(path, account)
    os.chmod(path, 0o700)


def as_account(account: Account | None) -> dict[str, Any]:
    """Popen arguments that run the child as ``account`` (nothing when not root)."""
    if account is None:
        return {}
    return {"user": account.uid, "group": account.gid, "extra_groups": []}


# ---------------------------------------------------------------------------- services


class LocalService:
    """A service process run from ``work_dir``, known by its pid, with a JSON state file.

    Subclasses hold the process they started in ``_proc`` (None when it was started by
    another process) and say how to recognise their process by its command line.
    """

    work_dir: Path
    _proc: subprocess.Popen[Any] | None
    _pid: int | None

    def start(self, timeout: float = 60.0) -> str:
        raise NotImplementedError

    def stop(self, timeout: float = 30.0) -> bool:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def pid(self) -> int | None:
        return self._pid

    def _start_failure(self, what: str) -> Exception:
        """The error saying the service ``what`` (e.g. "exited during start-up"), with its log."""
        raise NotImplementedError

    def _forget_process(self) -> None:
        """Drop the process: from this object and from the state file."""
        raise NotImplementedError

    def _check_alive_while_starting(self) -> None:
        assert self._pid is not None
        if not self._is_running(self._pid):
            raise self._start_failure("exited during start-up")

    def _kill_failed_start(self) -> None:
        if self._pid is not None and self._is_running(self._pid):
            self._signal(self._pid, signal.SIGKILL)
            self._wait_exit(self._pid, 15.0)
        self._forget_process()

    def _is_this_process(self, cmdline: str) -> bool:
        """Whether a process with this command line is this work dir's service."""
        raise NotImplementedError

    def _is_running(self, pid: int) -> bool:
        """Whether ``pid`` is alive and still this work dir's process (not a reused pid)."""
        if self._proc is not None and self._proc.pid == pid:
            return self._proc.poll() is None
        reaped = reap_if_child(pid)
        if reaped:
            return False
        info = process_info(pid)
        if info is None:
            return False
        state, cmdline = info
        if reaped is False:  # our unreaped child: its pid cannot have been reused
            return True
        return not state.startswith("Z") and self._is_this_process(cmdline)

    def _wait_exit(self, pid: int, timeout: float) -> bool:
        return wait_exit(pid, timeout, [self._proc] if self._proc is not None else [])

    _signal = staticmethod(send_signal)

    def _read_state(self) -> dict[str, Any] | None:
        return read_state(self.work_dir)

    def _write_state(self, state: Mapping[str, Any]) -> None:
        write_state(self.work_dir, state)
