"""Real PostgreSQL and MariaDB servers for local use, from the machine's Debian packages.

``PostgresServer(work_dir).start()`` and ``MariaDbServer(work_dir).start()`` run a private
server whose files all live in ``work_dir``; the machine's own database services
(``/var/lib/postgresql``, ``/var/lib/mysql``, port 5432/3306, ``/run/...`` sockets) are
never used or touched. Each start:

1. finds the server programs: PostgreSQL's ``initdb`` and ``postgres`` in
   ``/usr/lib/postgresql/<newest version>/bin`` (or on ``PATH``); MariaDB's ``mariadbd``
   (or ``mysqld``) and ``mariadb-install-db`` (or ``mysql_install_db``). When they are
   missing they are installed once with ``apt-get install -y --no-install-recommends
   postgresql`` / ``mariadb-server`` (after ``apt-get update`` when the package lists do
   not know the package), as root or through ``sudo -n``; otherwise the error says which
   package to install. Installing a package may start the machine's own service of that
   database (not on machines where ``policy-rc.d`` forbids it, such as containers); ours
   does not use it.
2. initialises ``work_dir/data`` once (``initdb`` / ``mariadb-install-db``).
3. starts the server as a child process in its own session (it outlives the caller),
   listening on 127.0.0.1 only, on a free port (the previous one when restarting, if it
   is still free) and on a unix socket in the private directory ``work_dir/run``
   (mode 0700; a short directory under the temp dir when that path is too long for a
   socket), records pid and port in ``work_dir/state.json`` and waits until it accepts
   connections (the error shows the server log's last lines).
4. creates the database ``sluice`` and the user ``sluice`` (password ``sluice``), with
   every right on that database (PostgreSQL: its owner, plus ``CREATEDB`` and
   ``REPLICATION`` for change data capture; MariaDB:
   ``GRANT ALL ON sluice.*``). Administration goes over the unix socket as the
   superuser (``postgres`` / ``root``), which has no password and cannot log in over TCP.

:attr:`~PostgresServer.url` is the JDBC URL users put in ``connection.url``
(``jdbc:postgresql://127.0.0.1:PORT/sluice``, ``jdbc:mariadb://127.0.0.1:PORT/sluice``);
``host``, ``port``, ``database``, ``user``, ``password`` and ``pid`` are there too, and
``connect()`` opens a Python driver connection (psycopg 3 / PyMySQL) as ``sluice``.

**Running as root.** PostgreSQL refuses to run as root and MariaDB needs ``--user``: as
root the servers run as the ``postgres`` / ``mysql`` system user that the Debian packages
create (created with ``useradd --system`` if missing). ``work_dir/data`` and
``work_dir/run`` are owned by that user; ``work_dir`` itself, the log and the state stay
the caller's. That user must be able to reach ``work_dir``: every directory above it that
it cannot traverse is given search permission for others (``o+x``, never read), which is
logged. (Under ``/root`` that includes ``/root`` itself; use a work directory elsewhere to
avoid it.)

**Stopping** (also from another process: ``PostgresServer(work_dir).stop()``) signals the
recorded pid, checked first to still be this work directory's server: PostgreSQL gets
SIGINT (its "fast" shutdown, what ``pg_ctl stop`` sends; SIGTERM would wait for every
client to disconnect), MariaDB SIGTERM (normal shutdown); SIGKILL after the timeout.
Restarting on the same ``work_dir`` keeps the data.

**Settings** favour test speed over crash safety of the database itself (the server is
a test and development fixture): PostgreSQL runs with ``fsync=off``,
``synchronous_commit=off`` and ``full_page_writes=off``, and with ``wal_level=logical``
(and replication slots and WAL senders) for change data capture; MariaDB with
``innodb_flush_log_at_trx_commit=2``, ``utf8mb4`` and ``skip-name-resolve``. ``settings=``
overrides or adds server settings (``{"max_connections": "300"}``).

Files in ``work_dir``: ``state.json``, ``data/``, ``run/`` (socket; MariaDB's pid file) and
``logs/postgres.log`` / ``logs/mariadb.log`` (the server's output, rewritten on each start).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from sluice_devtools import DevToolsError
from sluice_devtools.cache import run_dir
from sluice_devtools.processes import (
    LOOPBACK,
    Account,
    LocalService,
    ServiceStatus,
    as_account,
    free_port,
    grant_traverse,
    private_dir,
    service_account,
    tail,
    write_atomic,
)
from sluice_devtools.processes import (
    STATE_FILE as _STATE,
)

__all__ = [
    "DatabaseEndpoint",
    "MariaDbBinaries",
    "MariaDbServer",
    "PostgresBinaries",
    "PostgresServer",
    "install_packages",
    "mariadb_binaries",
    "postgres_binaries",
]

log = logging.getLogger(__name__)

_HOST = LOOPBACK
_INITIALIZED = ".initialized"
_PORT_ATTEMPTS = 3
# sun_path holds 107 characters; leave room for "/.s.PGSQL.65535.lock" / "/mysqld.sock".
_MAX_SOCKET_DIR = 85
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_SBIN = ("/usr/sbin", "/usr/local/sbin", "/sbin", "/usr/libexec")


# ---------------------------------------------------------------------------- endpoints


@dataclasses.dataclass(frozen=True)
class DatabaseEndpoint:
    """Where a database is and how to log in: what connectors and tests need of a server.

    ``kind`` is ``postgresql``, ``mariadb`` or ``mysql`` (the JDBC URL's sub-protocol).
    The servers in this module have the same attributes, so code written against an
    endpoint works with a started server too.
    """

    kind: str
    host: str
    port: int
    database: str
    user: str
    password: str

    @property
    def url(self) -> str:
        """The JDBC URL (``jdbc:postgresql://HOST:PORT/DB``), as ``connection.url`` takes it."""
        return _jdbc_url(self.kind, self.host, self.port, self.database)

    def connect(self, **kwargs: Any) -> Any:
        """A new Python driver connection (psycopg 3 or PyMySQL); ``kwargs`` go to the driver."""
        return _connect(self.kind, self.host, self.port, self.database, self.user, self.password, **kwargs)

    @classmethod
    def from_url(cls, url: str, *, user: str | None = None, password: str | None = None) -> DatabaseEndpoint:
        """Parse ``jdbc:postgresql://host:port/db?user=u&password=p`` or ``postgresql://u:p@host:port/db``.

        Also ``mariadb``/``mysql`` URLs. The user and password come from the arguments, else
        the URL, else ``sluice``; the database from the path, else ``sluice``.
        """
        text = url.strip()
        if text.startswith("jdbc:"):
            text = text[len("jdbc:") :]
        parts = urllib.parse.urlsplit(text)
        scheme = parts.scheme.lower()
        kinds = {"postgresql": "postgresql", "postgres": "postgresql", "mariadb": "mariadb", "mysql": "mysql"}
        if scheme not in kinds or not parts.hostname:
            raise DevToolsError(
                f"Not a PostgreSQL or MariaDB/MySQL URL: {url!r} (expected e.g. "
                "jdbc:postgresql://127.0.0.1:5432/sluice?user=sluice&password=sluice)."
            )
        kind = kinds[scheme]
        query = dict(urllib.parse.parse_qsl(parts.query))
        try:
            port = parts.port or (5432 if kind == "postgresql" else 3306)
        except ValueError as exc:
            raise DevToolsError(f"Bad port in database URL {url!r}.") from exc
        return cls(
            kind=kind,
            host=parts.hostname,
            port=port,
            database=urllib.parse.unquote(parts.path.lstrip("/")) or "sluice",
            user=user or query.get("user") or urllib.parse.unquote(parts.username or "") or "sluice",
            password=(
                password
                if password is not None
                else query.get("password") or urllib.parse.unquote(parts.password or "") or "sluice"
            ),
        )


def _jdbc_url(kind: str, host: str, port: int, database: str) -> str:
    return f"jdbc:{kind}://{host}:{port}/{database}"


def _connect(kind: str, host: str, port: int, database: str, user: str, password: str, **kwargs: Any) -> Any:
    if kind == "postgresql":
        import psycopg

        options = {"connect_timeout": 10, **kwargs}
        return psycopg.connect(host=host, port=port, dbname=database, user=user, password=password, **options)
    import pymysql

    options = {"connect_timeout": 10, "charset": "utf8mb4", **kwargs}
    return pymysql.connect(host=host, port=port, database=database, user=user, password=password, **options)


# ---------------------------------------------------------------------------- binaries


@dataclasses.dataclass(frozen=True)
class PostgresBinaries:
    version: str
    bin_dir: Path

    @property
    def initdb(self) -> Path:
        return self.bin_dir / "initdb"

    @property
    def postgres(self) -> Path:
        return self.bin_dir / "postgres"

    @property
    def pg_ctl(self) -> Path:
        return self.bin_dir / "pg_ctl"


@dataclasses.dataclass(frozen=True)
class MariaDbBinaries:
    version: str
    server: Path
    install_db: Path


def postgres_binaries(install: bool = True) -> PostgresBinaries:
    """PostgreSQL's server programs, installed from the ``postgresql`` package if missing."""
    found = _find_postgres()
    if found is None and install:
        install_packages(["postgresql"], "PostgreSQL's server (initdb, postgres)")
        found = _find_postgres()
    if found is None:
        raise DevToolsError(
            "PostgreSQL's server programs (initdb, postgres) were not found in "
            "/usr/lib/postgresql/<version>/bin or on PATH. Install the Debian package "
            "as root: apt-get install --no-install-recommends postgresql"
        )
    return found


def mariadb_binaries(install: bool = True) -> MariaDbBinaries:
    """MariaDB's server programs, installed from the ``mariadb-server`` package if missing."""
    found = _find_mariadb()
    if found is None and install:
        install_packages(["mariadb-server"], "MariaDB's server (mariadbd, mariadb-install-db)")
        found = _find_mariadb()
    if found is None:
        raise DevToolsError(
            "MariaDB's server programs (mariadbd or mysqld, and mariadb-install-db or "
            "mysql_install_db) were not found in /usr/sbin, /usr/bin or on PATH. Install the "
            "Debian package as root: apt-get install --no-install-recommends mariadb-server"
        )
    return found


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", text)) or (0,)


def _find_postgres() -> PostgresBinaries | None:
    candidates: list[Path] = []
    with contextlib.suppress(OSError):
        versions = sorted(Path("/usr/lib/postgresql").iterdir(), key=lambda p: _version_key(p.name), reverse=True)
        candidates.extend(v / "bin" for v in versions)
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    for bin_dir in candidates:
        if all(os.access(bin_dir / name, os.X_OK) for name in ("initdb", "postgres")):
            return PostgresBinaries(version=_program_version(bin_dir / "postgres"), bin_dir=bin_dir)
    return None


def _find_program(names: Sequence[str], extra_dirs: Sequence[str]) -> Path | None:
    search = os.pathsep.join([os.environ.get("PATH", os.defpath), *extra_dirs, "/usr/bin", "/usr/local/bin"])
    for name in names:
        found = shutil.which(name, path=search)
        if found:
            return Path(found)
    return None


def _find_mariadb() -> MariaDbBinaries | None:
    server = _find_program(("mariadbd", "mysqld"), _SBIN)
    install_db = _find_program(("mariadb-install-db", "mysql_install_db"), _SBIN)
    if server is None or install_db is None:
        return None
    return MariaDbBinaries(version=_program_version(server), server=server, install_db=install_db)


def _program_version(program: Path) -> str:
    try:
        out = subprocess.run(
            [str(program), "--version"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    match = re.search(r"(?:Ver\s+|\)\s*)(\d+\.\d+(?:\.\d+)?)", out.stdout) or re.search(
        r"(\d+\.\d+(?:\.\d+)?)", out.stdout
    )
    return match.group(1) if match else "unknown"


_install_attempted: set[str] = set()


def install_packages(packages: Sequence[str], what: str) -> None:
    """Install Debian ``packages`` with apt-get (as root, or through ``sudo -n``), once per process.

    Serialised across processes with a lock file in the cache; apt's own lock is waited
    for. Runs ``apt-get update`` first when the package lists do not know a package, and
    once more when the install fails to find or fetch one (stale lists).
    """
    wanted = [p for p in packages if p not in _install_attempted]
    names = " ".join(packages)
    if not wanted:
        raise DevToolsError(f"{what} is still missing after installing {names}; see apt-get's output above.")
    if shutil.which("apt-get") is None:
        raise DevToolsError(
            f"{what} is not installed and this system has no apt-get to install it. Install "
            f"it with the system's package manager (Debian/Ubuntu packages: {names}) and retry."
        )
    if os.geteuid() == 0:
        prefix: list[str] = []
    elif shutil.which("sudo") and _run_quietly(["sudo", "-n", "true"]):
        prefix = ["sudo", "-n"]
    else:
        raise DevToolsError(
            f"{what} is not installed, and installing it needs root (this process is not root "
            f"and `sudo -n` is not allowed). Install it as root: "
            f"apt-get install --no-install-recommends {names}"
        )
    _install_attempted.update(wanted)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    apt = [*prefix, "apt-get", "-o", "DPkg::Lock::Timeout=600"]
    lock_path = run_dir() / ".apt-install.lock"
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        started = time.monotonic()
        if not all(_run_quietly(["apt-cache", "show", "--no-all-versions", p]) for p in wanted):
            log.info("apt-get update (the package lists do not know %s yet)", " ".join(wanted))
            _apt(apt + ["update"], env, what)
        log.info("installing %s with apt-get (once; this takes a minute)", " ".join(wanted))
        install = apt + ["install", "-y", "--no-install-recommends", *wanted]
        proc = subprocess.run(install, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0 and re.search(
            r"Unable to locate package|Failed to fetch|404\s+Not Found", proc.stdout + proc.stderr
        ):
            log.info("apt-get update, then installing %s again", " ".join(wanted))
            _apt(apt + ["update"], env, what)
            proc = subprocess.run(
                install, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=1800
            )
        if proc.returncode != 0:
            raise DevToolsError(
                f"Installing {' '.join(wanted)} for {what} failed (`{' '.join(install)}` exited with "
                f"{proc.returncode}):\n{tail(proc.stdout + proc.stderr)}"
            )
        log.info("installed %s in %.1fs", " ".join(wanted), time.monotonic() - started)


def _apt(command: list[str], env: Mapping[str, str], what: str) -> None:
    proc = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise DevToolsError(
            f"`{' '.join(command)}` failed (exit code {proc.returncode}) while installing {what}:\n"
            + tail(proc.stdout + proc.stderr)
        )


def _run_quietly(command: list[str]) -> bool:
    try:
        return subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


# ---------------------------------------------------------------------------- servers


class _LocalDatabase(LocalService):
    """What PostgreSQL and MariaDB servers share: files, ports, state, processes."""

    kind: ClassVar[str]
    name: ClassVar[str]
    service_user: ClassVar[str]
    log_name: ClassVar[str]
    stop_signals: ClassVar[tuple[signal.Signals, ...]]

    def __init__(
        self,
        work_dir: Path | str,
        port: int | None = None,
        *,
        user: str = "sluice",
        password: str = "sluice",
        database: str = "sluice",
        settings: Mapping[str, str] | None = None,
    ) -> None:
        for label, value in (("user", user), ("database", database)):
            if not _NAME.match(value):
                raise DevToolsError(
                    f"{self.name} {label} name {value!r} must be a plain identifier ([A-Za-z_][A-Za-z0-9_]*)."
                )
        self.work_dir = Path(work_dir).expanduser().absolute()
        self.port_option = port
        self.user = user
        self.password = password
        self.database = database
        self.settings = dict(settings or {})
        self.host = _HOST
        self._proc: subprocess.Popen[bytes] | None = None
        self._pid: int | None = None
        self._port: int | None = None
        self._socket_dir: Path | None = None
        self._version: str | None = None

    @classmethod
    def from_state(cls, work_dir: Path | str) -> Any:
        """The server recorded in ``work_dir/state.json`` by an earlier ``start()``."""
        server = cls(work_dir)
        state = server._read_state()
        if state is None:
            raise DevToolsError(f"No {cls.name} server was started in {server.work_dir} (no {_STATE}).")
        server._adopt(state)
        return server

    # ------------------------------------------------------------------ properties

    @property
    def port(self) -> int:
        """The TCP port on 127.0.0.1 of the running server."""
        if self._port is None:
            raise DevToolsError(f"The {self.name} server in {self.work_dir} has not been started.")
        return self._port

    @property
    def url(self) -> str:
        """The JDBC URL for ``connection.url`` (``jdbc:postgresql://127.0.0.1:PORT/sluice``)."""
        return _jdbc_url(self.kind, self.host, self.port, self.database)

    @property
    def version(self) -> str | None:
        return self._version

    @property
    def endpoint(self) -> DatabaseEndpoint:
        return DatabaseEndpoint(self.kind, self.host, self.port, self.database, self.user, self.password)

    @property
    def data_dir(self) -> Path:
        return self.work_dir / "data"

    @property
    def socket_dir(self) -> Path:
        """The private directory of the server's unix socket."""
        if self._socket_dir is not None:
            return self._socket_dir
        return self._choose_socket_dir()

    @property
    def log_file(self) -> Path:
        return self.work_dir / "logs" / self.log_name

    def connect(self, **kwargs: Any) -> Any:
        """A new Python driver connection (psycopg 3 / PyMySQL) as :attr:`user` to :attr:`database`."""
        return _connect(self.kind, self.host, self.port, self.database, self.user, self.password, **kwargs)

    # ------------------------------------------------------------------ lifecycle

    def start(self, timeout: float = 60.0) -> str:
        """Start the server (a no-op if it already runs) and return :attr:`url`.

        ``timeout`` bounds the wait for the started server to accept connections; installing
        the package on first use and initialising the data directory come before it.
        """
        self._adopt_from_state()
        if self._pid is not None and self._is_running(self._pid):
            self._wait_ready(time.monotonic() + timeout)
            self._create_account()
            self._check_login()
            return self.url

        if self.port_option is not None:
            self._choose_port(None)  # fail before installing or initialising anything
        binaries = self._binaries()
        account = service_account(self.service_user)
        (self.work_dir / "logs").mkdir(parents=True, exist_ok=True)
        if account is not None:
            grant_traverse(self.work_dir, account)
        if not (self.work_dir / _INITIALIZED).is_file():
            started = time.monotonic()
            self._initialize(binaries, account)
            write_atomic(self.work_dir / _INITIALIZED, f"{self._version}\n")
            log.info("%s data directory initialised in %.1fs", self.name, time.monotonic() - started)
        self._socket_dir = self._choose_socket_dir()
        private_dir(self._socket_dir, account)
        previous = (self._read_state() or {}).get("port")
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            port = self._choose_port(previous)
            self._launch(binaries, account, port)
            try:
                self._wait_ready(time.monotonic() + timeout)
            except DevToolsError:
                output = self._log_tail()
                self._kill_failed_start()
                if "Address already in use" in output and self.port_option is None and attempt < _PORT_ATTEMPTS:
                    previous = None  # lost a race for a free port: pick another
                    continue
                raise
            self._create_account()
            self._check_login()
            log.info(
                "%s %s up at %s (user %s, password %s, pid %s)",
                self.name,
                self._version,
                self.url,
                self.user,
                self.password,
                self._pid,
            )
            return self.url
        raise AssertionError("unreachable")

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop the server (graceful signal, SIGKILL after ``timeout``). True if it was running."""
        self._adopt_from_state()
        pid = self._pid
        if pid is None or not self._is_running(pid):
            self._forget_process()
            return False
        first, *escalation = self.stop_signals
        self._signal(pid, first)
        if not self._wait_exit(pid, timeout):
            for sig in [*escalation, signal.SIGKILL]:
                log.warning("%s pid %s did not stop within %ss; sending %s", self.name, pid, timeout, sig.name)
                self._signal(pid, sig)
                if self._wait_exit(pid, 15.0):
                    break
            else:
                raise DevToolsError(f"{self.name} pid {pid} did not exit after SIGKILL.")
        self._forget_process()
        return True

    def status(self) -> ServiceStatus:
        self._adopt_from_state()
        running = self._pid is not None and self._is_running(self._pid)
        url = self.url if running and self._port is not None else None
        return ServiceStatus(running, self._pid if running else None, self.work_dir, (("url", url),))

    # ------------------------------------------------------------------ per-database parts

    def _binaries(self) -> Any:
        raise NotImplementedError

    def _initialize(self, binaries: Any, account: Account | None) -> None:
        raise NotImplementedError

    def _command(self, binaries: Any, account: Account | None, port: int) -> list[str]:
        raise NotImplementedError

    @contextlib.contextmanager
    def _admin(self) -> Iterator[Any]:
        """An autocommit superuser connection over the unix socket."""
        raise NotImplementedError
        yield

    def _create_account(self) -> None:
        raise NotImplementedError

    def _is_this_server(self, cmdline: str) -> bool:
        raise NotImplementedError

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        raise NotImplementedError

    # ------------------------------------------------------------------ internals

    def _choose_socket_dir(self) -> Path:
        preferred = self.work_dir / "run"
        if len(str(preferred)) <= _MAX_SOCKET_DIR:
            return preferred
        digest = hashlib.sha256(str(self.work_dir).encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"sluice-{self.kind}-{digest}"

    def _choose_port(self, previous: int | None) -> int:
        if self.port_option is not None:
            if _reusable_port(self.port_option) is None:
                raise DevToolsError(f"Port {self.port_option} on {_HOST} is in use; choose another or omit the port.")
            return self.port_option
        return _reusable_port(previous) or free_port()

    def _launch(self, binaries: Any, account: Account | None, port: int) -> None:
        command = self._command(binaries, account, port)
        with open(self.log_file, "wb") as out:
            self._proc = subprocess.Popen(
                command,
                cwd=self.work_dir,
                env=_server_env(),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
                **as_account(account),
            )
        self._pid = self._proc.pid
        self._port = port
        self._write_state(
            {
                "server": self.name,
                "pid": self._pid,
                "host": _HOST,
                "port": port,
                "url": self.url,
                "database": self.database,
                "user": self.user,
                "password": self.password,
                "socket_dir": str(self._socket_dir),
                "version": self._version,
                "run_as": account.name if account is not None else None,
                "started_at": time.time(),
                "log": str(self.log_file),
            }
        )

    def _wait_ready(self, deadline: float) -> None:
        """Wait until the superuser can log in over the unix socket."""
        errors = self._driver_errors()
        last: BaseException | None = None
        while True:
            self._check_alive_while_starting()
            try:
                with self._admin() as conn:
                    conn.cursor().execute("SELECT 1")
                return
            except errors as exc:
                last = exc
            if time.monotonic() > deadline:
                detail = f" (last error: {last})" if last is not None else ""
                raise self._start_failure(f"did not accept connections in time{detail}")
            time.sleep(0.05)

    def _check_login(self) -> None:
        """Log in as :attr:`user` over TCP, as clients will."""
        try:
            conn = self.connect()
        except self._driver_errors() as exc:
            raise DevToolsError(
                f"The {self.name} server in {self.work_dir} runs, but {self.user} cannot log in "
                f"at {self.url}: {exc}\nLast log lines:\n{self._log_tail()}"
            ) from exc
        conn.close()

    def _start_failure(self, what: str) -> DevToolsError:
        return DevToolsError(f"The {self.name} server in {self.work_dir} {what}. Last log lines:\n{self._log_tail()}")

    def _log_tail(self) -> str:
        if self.log_file.is_file() and self.log_file.stat().st_size:
            return f"--- {self.log_file}\n{tail(self.log_file.read_text(errors='replace'))}"
        return "(no log output)"

    def _is_this_process(self, cmdline: str) -> bool:
        return self._is_this_server(f" {cmdline.strip()} ")

    def _adopt(self, state: Mapping[str, Any]) -> None:
        self._pid = state.get("pid")
        self._port = state.get("port") if state.get("pid") is not None else None
        socket_dir = state.get("socket_dir")
        self._socket_dir = Path(socket_dir) if socket_dir else None
        self._version = state.get("version")
        # the account a running server was set up with (another process may have chosen them)
        for key in ("user", "password", "database"):
            if state.get(key) and state.get("pid") is not None:
                setattr(self, key, state[key])

    def _adopt_from_state(self) -> None:
        if self._proc is not None:
            return
        state = self._read_state()
        if state is not None:
            self._adopt(state)

    def _forget_process(self) -> None:
        self._proc = None
        self._pid = None
        self._port = None
        state = self._read_state()
        if state is not None and state.get("pid") is not None:
            state["pid"] = None
            state["url"] = None
            self._write_state(state)

    def _run_tool(self, command: list[str], account: Account | None, what: str, *, as_server_user: bool) -> None:
        proc = subprocess.run(
            command,
            cwd=self.work_dir,
            env=_server_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
            **(as_account(account) if as_server_user else {}),
        )
        if proc.returncode != 0:
            raise DevToolsError(
                f"{what} in {self.data_dir} failed (exit code {proc.returncode}):\n{tail(proc.stdout + proc.stderr)}"
            )

    def _reset_data_dir(self, account: Account | None) -> None:
        """An empty ``data/`` owned by the server's user (an earlier init may not have finished)."""
        if self.data_dir.exists():
            shutil.rmtree(self.data_dir)
        private_dir(self.data_dir, account)


def _reusable_port(port: int | None) -> int | None:
    """``port`` if a server could listen on it now (both servers set SO_REUSEADDR, so
    connections of a previous run left in TIME_WAIT do not count)."""
    if port is None:
        return None
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((_HOST, port))
        except OSError:
            return None
    return port


def _server_env() -> dict[str, str]:
    """The caller's environment without libpq/MySQL client variables that could redirect tools."""
    return {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PG", "MYSQL", "MARIADB")) and key not in ("LANGUAGE",)
    }


class PostgresServer(_LocalDatabase):
    """One private PostgreSQL server whose files live in ``work_dir`` (see the module doc).

    ``port`` fixes the TCP port (default: a free one); ``settings`` adds or overrides
    server settings (``-c name=value``).
    """

    kind = "postgresql"
    name = "PostgreSQL"
    service_user = "postgres"
    log_name = "postgres.log"
    # fast shutdown, then immediate shutdown, then SIGKILL
    stop_signals = (signal.SIGINT, signal.SIGQUIT)
    superuser = "postgres"

    DEFAULT_SETTINGS: ClassVar[dict[str, str]] = {
        "fsync": "off",
        "synchronous_commit": "off",
        "full_page_writes": "off",
        # Logical decoding, for change data capture (Debezium's pgoutput plugin): set before
        # start, as the server reads these only then.
        "wal_level": "logical",
        "max_replication_slots": "10",
        "max_wal_senders": "10",
    }

    def _binaries(self) -> PostgresBinaries:
        binaries = postgres_binaries()
        self._version = binaries.version
        return binaries

    def _initialize(self, binaries: PostgresBinaries, account: Account | None) -> None:
        self._reset_data_dir(account)
        self._run_tool(
            [
                str(binaries.initdb),
                "-D",
                str(self.data_dir),
                "-U",
                self.superuser,
                "-E",
                "UTF8",
                "--no-locale",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--no-sync",
            ],
            account,
            "initdb",
            as_server_user=True,
        )

    def _command(self, binaries: PostgresBinaries, account: Account | None, port: int) -> list[str]:
        settings = {
            **self.DEFAULT_SETTINGS,
            **self.settings,
            "listen_addresses": _HOST,
            "port": str(port),
            "unix_socket_directories": str(self._socket_dir),
        }
        command = [str(binaries.postgres), "-D", str(self.data_dir)]
        for key, value in settings.items():
            command += ["-c", f"{key}={value}"]
        return command

    def _is_this_server(self, cmdline: str) -> bool:
        return "postgres " in cmdline and f" -D {self.data_dir} " in cmdline

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        import psycopg

        return (psycopg.Error, OSError)

    @contextlib.contextmanager
    def _admin(self) -> Iterator[Any]:
        import psycopg

        conn = psycopg.connect(
            host=str(self.socket_dir),
            port=self.port,
            user=self.superuser,
            dbname="postgres",
            autocommit=True,
            connect_timeout=5,
        )
        try:
            yield conn
        finally:
            conn.close()

    def _create_account(self) -> None:
        from psycopg import sql

        with self._admin() as conn:
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (self.user,)).fetchone()
            conn.execute(
                sql.SQL("{} ROLE {} LOGIN CREATEDB REPLICATION PASSWORD {}").format(
                    sql.SQL("ALTER" if exists else "CREATE"), sql.Identifier(self.user), sql.Literal(self.password)
                )
            )
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (self.database,)).fetchone():
                conn.execute(
                    sql.SQL("CREATE DATABASE {} OWNER {}").format(
                        sql.Identifier(self.database), sql.Identifier(self.user)
                    )
                )


class MariaDbServer(_LocalDatabase):
    """One private MariaDB server whose files live in ``work_dir`` (see the module doc).

    ``port`` fixes the TCP port (default: a free one); ``settings`` adds or overrides
    server options (``--name=value``).
    """

    kind = "mariadb"
    name = "MariaDB"
    service_user = "mysql"
    log_name = "mariadb.log"
    stop_signals = (signal.SIGTERM,)
    superuser = "root"

    DEFAULT_SETTINGS: ClassVar[dict[str, str]] = {
        "character-set-server": "utf8mb4",
        "collation-server": "utf8mb4_general_ci",
        "innodb-flush-log-at-trx-commit": "2",
    }

    @property
    def _socket(self) -> Path:
        return self.socket_dir / "mysqld.sock"

    def _binaries(self) -> MariaDbBinaries:
        binaries = mariadb_binaries()
        self._version = binaries.version
        return binaries

    def _initialize(self, binaries: MariaDbBinaries, account: Account | None) -> None:
        self._reset_data_dir(account)
        command = [
            str(binaries.install_db),
            "--no-defaults",
            f"--datadir={self.data_dir}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
        ]
        if account is not None:
            command.append(f"--user={account.name}")
        self._run_tool(command, account, "mariadb-install-db", as_server_user=False)

    def _command(self, binaries: MariaDbBinaries, account: Account | None, port: int) -> list[str]:
        settings = {
            **self.DEFAULT_SETTINGS,
            **self.settings,
            "datadir": str(self.data_dir),
            "socket": str(self._socket),
            "pid-file": str(self.socket_dir / "mariadbd.pid"),
            "port": str(port),
            "bind-address": _HOST,
        }
        command = [str(binaries.server), "--no-defaults", "--skip-name-resolve"]
        command += [f"--{key}={value}" for key, value in settings.items()]
        if account is not None:
            command.append(f"--user={account.name}")
        return command

    def _is_this_server(self, cmdline: str) -> bool:
        return f" --datadir={self.data_dir} " in cmdline

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        import pymysql

        return (pymysql.Error, OSError)

    @contextlib.contextmanager
    def _admin(self) -> Iterator[Any]:
        import pymysql

        conn = pymysql.connect(
            unix_socket=str(self._socket), user=self.superuser, password="", autocommit=True, connect_timeout=5
        )
        try:
            yield conn
        finally:
            conn.close()

    def _create_account(self) -> None:
        with self._admin() as conn, conn.cursor() as cur:
            # Only root@localhost (the unix socket) stays: no anonymous users, no root over TCP.
            cur.execute(
                "SELECT User, Host FROM mysql.global_priv WHERE User = '' OR (User = %s AND Host <> 'localhost')",
                (self.superuser,),
            )
            for user, host in cur.fetchall():
                cur.execute("DROP USER %s@%s", (user, host))
            cur.execute(f"CREATE DATABASE IF NOT EXISTS `{self.database}` CHARACTER SET utf8mb4")
            for host in ("%", "localhost"):
                cur.execute("CREATE USER IF NOT EXISTS %s@%s IDENTIFIED BY %s", (self.user, host, self.password))
                cur.execute("ALTER USER %s@%s IDENTIFIED BY %s", (self.user, host, self.password))
                cur.execute(f"GRANT ALL PRIVILEGES ON `{self.database}`.* TO %s@%s", (self.user, host))
