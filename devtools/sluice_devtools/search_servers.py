"""Real OpenSearch and Elasticsearch servers for local use (the Elasticsearch sink's tests).

``OpenSearchServer(work_dir).start()`` and ``ElasticsearchServer(work_dir).start()`` run a
single-node cluster on free loopback ports from the "integ-test" distribution on Maven
Central (:func:`sluice_devtools.jars.opensearch_home` / ``elasticsearch_home``, fetched
once into the cache): OpenSearch 2.19 and Elasticsearch 8.19. They speak plain HTTP
without authentication (Elasticsearch's security is switched off with
``xpack.security.enabled=false``). Both run on the Java Sluice uses (``JAVA_HOME`` or
``java`` on PATH; OpenSearch 2.19 needs 17 to 23). :attr:`~_SearchServer.url` is
``http://127.0.0.1:PORT``, what a sink's ``connection.url`` takes.

**What these distributions lack.** They hold the server and its transport module
(Elasticsearch's also x-pack-core, x-pack-security and apm), no plugins and none of the
other modules: no painless scripts, ingest pipelines, ``_reindex``, ``scaled_float``...
Indexing, ``_bulk`` (external versions included), mappings, aliases, index templates and
data streams created by a first write are all there. Elasticsearch's also lacks the
modules behind ``GET /`` (405: only ``DELETE /`` is routed) and the ``/_data_stream`` API
(``PUT``/``GET /_data_stream/<name>``: 405); OpenSearch has both. Neither ships index
templates (no built-in ``logs-*-*``).

Each start runs the distribution's own launch script (``bash bin/opensearch`` /
``bash bin/elasticsearch``: run through bash, so a cache unpacked before zip entries kept
their exec bits works too) as a child process in its own session, with:

- a copy of the distribution's ``config/`` in ``work_dir/config`` (``OPENSEARCH_PATH_CONF``
  / ``ES_PATH_CONF``, made anew at each start) whose GC log, error file and heap dump paths
  point into ``work_dir`` (the distribution's are relative to the server's working
  directory) and whose ``jvm.options.d/sluice.options`` sets the heap (512m by default);
- ``-E`` settings: ``discovery.type=single-node``, ``network.host=127.0.0.1``,
  ``http.port``, ``transport.port``, ``path.data=work_dir/data``,
  ``path.logs=work_dir/logs``, ``cluster.name=sluice``, plus two for tests: wildcard index
  deletes are allowed (``action.destructive_requires_name=false``) and the disk-usage
  watermarks are off (``cluster.routing.allocation.disk.threshold_enabled=false``: a
  nearly full disk would otherwise make indices read-only). ``settings=`` adds or
  overrides settings;
- ``OPENSEARCH_TMPDIR`` / ``ES_TMPDIR`` = ``work_dir/tmp``.

``start()`` returns once ``GET /_cluster/health?wait_for_status=yellow`` answers (the error
shows the server log's last lines) and records pids, ports and the URL in
``work_dir/state.json``; ``start()`` on a work dir whose server runs adopts it, and a
restart keeps the data and takes the previous ports when they are still free.

**Processes.** OpenSearch's script replaces itself with its server JVM (``exec``): one
process, the recorded ``pid``. Elasticsearch's starts a small CLI JVM (the recorded ``pid``, leader of the
process group) that forks the server JVM as its child (``server_pid``, recorded once the
server answers). Stopping (also from another process: ``ElasticsearchServer(work_dir).stop()``)
sends SIGTERM to the recorded pid, checked first to still be this work dir's process
(its command line names ``work_dir``), waits for it *and* the server JVM to exit, and
sends SIGKILL to each of them still running after the timeout. Nothing is ever signalled
by name.

**Running as root.** Both servers refuse to run as root: as root they run as the system
user ``opensearch`` / ``elasticsearch`` (created with ``useradd --system`` if missing;
see :mod:`sluice_devtools.processes`). ``work_dir/config``, ``data``, ``logs`` and ``tmp``
are owned by that user (mode 0700); ``work_dir`` itself and the state file stay the
caller's. The user runs the distribution from the cache, which is readable by all (but
``config/``, which each server copies); every
directory above it and above ``work_dir`` that the user cannot traverse gets search
permission for others (``o+x``, never read), which is logged. With the default cache
``~/.cache/sluice`` of root, that is ``/root`` itself: set ``SLUICE_CACHE`` and use a work
directory outside ``/root`` to avoid it. The user must keep that access for as long as the
server runs (a server cut off from its data directory fails): pytest, for one, resets its
``/tmp/pytest-of-root`` to 0700 whenever a session starts, so tests keep these work
directories elsewhere (``tests/integration/conftest_search.py``).

Files in ``work_dir``: ``state.json``, ``config/``, ``data/`` (the indices), ``tmp/`` and
``logs/`` (the server's own logs and GC log, and ``opensearch.out`` /
``elasticsearch.out``, the launcher's output, rewritten on each start).

Small HTTP helpers for tests: :meth:`~_SearchServer.request` (any API call, JSON in and
out), :meth:`~_SearchServer.refresh`, :meth:`~_SearchServer.count`,
:meth:`~_SearchServer.delete_index` and :meth:`~_SearchServer.version`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import httpx2

from sluice_devtools import DevToolsError
from sluice_devtools.jars import ELASTICSEARCH_VERSION, OPENSEARCH_VERSION, elasticsearch_home, opensearch_home
from sluice_devtools.processes import (
    LOOPBACK,
    Account,
    ServiceStatus,
    as_account,
    grant_traverse,
    private_dir,
    process_info,
    service_account,
)
from sluice_devtools.storage_servers import JavaServer, http_status

__all__ = ["ElasticsearchServer", "OpenSearchServer"]

log = logging.getLogger(__name__)


@functools.cache
def _http() -> httpx2.Client:
    """One client for every server's REST calls, made on first use: ``httpx2.request`` would
    build a client, and an SSL context loading the system's CA certificates (some 50 ms of
    CPU), for each call of the tests' polling loops. No connection is kept, so a restarted
    server is reached afresh."""
    return httpx2.Client(limits=httpx2.Limits(max_keepalive_connections=0))


_HOST = LOOPBACK
DEFAULT_HEAP = "512m"

# Inherited variables that would change how the launch scripts pick Java or options.
_DROPPED_ENV = ("JAVA_HOME", "JAVA_OPTS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "CLI_JAVA_OPTS")

# jvm.options lines (after an optional "N-M:" Java version range) whose paths are relative
# to the server's working directory.
_HEAP_LINE = re.compile(r"^((?:[0-9-]+:)?-Xm[sx]\S+)$", re.MULTILINE)
_HEAP_DUMP_LINE = re.compile(r"^((?:[0-9-]+:)?-XX:HeapDumpPath=.*)$", re.MULTILINE)
_ERROR_FILE = re.compile(r"^((?:[0-9-]+:)?-XX:ErrorFile=).*$", re.MULTILINE)
_GC_LOG = re.compile(r"^((?:[0-9-]+:)?-Xlog:gc[^\n]*?:file=)[^:\n]*", re.MULTILINE)
_OLD_GC_LOG = re.compile(r"^((?:[0-9-]+:)?-Xloggc:).*$", re.MULTILINE)


class _SearchServer(JavaServer):
    """One single-node OpenSearch or Elasticsearch cluster whose files live in ``work_dir``.

    ``port`` fixes the HTTP port and ``transport_port`` the transport port (default: free
    loopback ports, the previous ones when restarting if still free). ``heap`` is the JVM's
    heap (``-Xms`` and ``-Xmx``); ``settings`` adds or overrides node settings
    (``{"indices.query.bool.max_clause_count": "2048"}``).
    """

    distribution: ClassVar[str]  # "opensearch" / "elasticsearch": also the launch script's name
    _service_user: ClassVar[str]  # the system user when we are root
    _env_prefix: ClassVar[str]  # OPENSEARCH / ES: <prefix>_JAVA_HOME, _PATH_CONF, _TMPDIR, _JAVA_OPTS
    _server_main: ClassVar[str]  # the server JVM's main class, on its command line
    _extra_settings: ClassVar[Mapping[str, str]] = {}
    _port_names = ("port", "transport_port")

    def __init__(
        self,
        work_dir: Path | str,
        port: int | None = None,
        transport_port: int | None = None,
        *,
        heap: str = DEFAULT_HEAP,
        settings: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(work_dir, heap=heap)
        self._fixed_ports = {"port": port, "transport_port": transport_port}
        self.settings = dict(settings or {})
        self._home: Path | None = None
        self._account: Account | None = None
        self._server_pid: int | None = None

    # ------------------------------------------------------------------ properties

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` of the running server (a sink's ``connection.url``)."""
        return self._url()

    @property
    def port(self) -> int:
        """The HTTP port of the running server."""
        return self._port("port")

    @property
    def transport_port(self) -> int:
        return self._port("transport_port")

    @property
    def config_dir(self) -> Path:
        return self.work_dir / "config"

    @property
    def server_pid(self) -> int | None:
        """The server JVM's pid (Elasticsearch: the CLI's child; OpenSearch: :attr:`pid`)."""
        self._adopt_from_state()
        return self._server_pid

    # ------------------------------------------------------------------ lifecycle

    def start(self, timeout: float = 120.0) -> str:
        """Start the server (a no-op if it already runs) and return :attr:`url`.

        ``timeout`` bounds the wait for the cluster to turn yellow; fetching the
        distribution on first use comes before it.
        """
        self._adopt_from_state()
        if self._pid is None or not self._is_running(self._pid):
            self._home = self._distribution_home()
            self._account = service_account(self._service_user)
        url = super().start(timeout)
        self._record_server_pid()
        return url

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop the server: SIGTERM, then SIGKILL after ``timeout``. True if it was running."""
        self._adopt_from_state()
        pid = self._pid
        launcher = pid if pid is not None and self._is_running(pid) else None
        server = self._find_server_pid(launcher)
        alive = [p for p in dict.fromkeys((launcher, server)) if p is not None]
        if not alive:
            self._forget_process()
            return False
        self._signal(alive[0], signal.SIGTERM)  # the launcher stops its server JVM itself
        deadline = time.monotonic() + timeout
        left = [p for p in alive if not self._wait_exit(p, max(0.0, deadline - time.monotonic()))]
        if left:
            log.warning("%s pids %s did not stop within %ss; killing them", self._label, left, timeout)
            for p in left:
                if self._is_running(p):
                    self._signal(p, signal.SIGKILL)
            left = [p for p in left if not self._wait_exit(p, 15.0)]
            if left:
                raise DevToolsError(f"{self._label} pids {left} did not exit after SIGKILL.")
        self._forget_process()
        return True

    def status(self) -> ServiceStatus:
        running = self._running()
        pid = self._pid if running else None
        server_pid = self._server_pid if running and self._server_pid != self._pid else None
        url = self.url if running and self._ports else None
        return ServiceStatus(running, pid, self.work_dir, (("server_pid", server_pid), ("url", url)))

    # ------------------------------------------------------------------ HTTP helpers

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: Mapping[str, str] | None = None,
        timeout: float = 30.0,
    ) -> tuple[int, Any]:
        """One API call: ``(status, decoded body)``; error statuses are returned, not raised.

        ``body``: a JSON value (sent as JSON), or ``str``/``bytes`` sent as is (NDJSON for
        ``_bulk``/``_msearch`` paths). The answer is decoded from JSON; a body that is not
        JSON (``_cat`` APIs) comes back as text, an empty one as None.
        """
        headers: dict[str, str] = {}
        content: bytes | None = None
        if isinstance(body, str | bytes):
            content = body.encode() if isinstance(body, str) else body
            ndjson = "_bulk" in path or "_msearch" in path
            headers["Content-Type"] = "application/x-ndjson" if ndjson else "application/json"
        elif body is not None:
            content = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        response = _http().request(
            method,
            f"{self.url}/{path.lstrip('/')}",
            params=dict(params or {}),
            content=content,
            headers=headers,
            timeout=timeout,
        )
        if not response.content:
            return response.status_code, None
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, response.text

    def version(self) -> str:
        """The running server's version number (``"2.19.6"``), from ``GET /_nodes/_local``
        (Elasticsearch's integ-test distribution has no ``GET /``: see the module doc)."""
        nodes = self._ok("GET", "/_nodes/_local", params={"filter_path": "nodes.*.version"}, what="GET /_nodes/_local")
        return str(next(iter(nodes["nodes"].values()))["version"])

    def refresh(self, index: str) -> None:
        """Make everything indexed so far in ``index`` (a name or pattern) searchable."""
        self._ok("POST", f"/{index}/_refresh", what=f"refreshing {index}")

    def count(self, index: str, query: Mapping[str, Any] | None = None) -> int:
        """The number of searchable documents in ``index`` (matching ``query`` when given)."""
        body = {"query": dict(query)} if query is not None else None
        return int(self._ok("POST", f"/{index}/_count", body, what=f"counting {index}")["count"])

    def delete_index(self, pattern: str) -> bool:
        """Delete the indices ``pattern`` names (comma-separated names, wildcards allowed).

        False when a named index does not exist (404); a wildcard that matches nothing is
        no error (True).
        """
        status, answer = self.request("DELETE", f"/{pattern}")
        if status == 404:
            return False
        if status >= 300:
            raise DevToolsError(f"Deleting {pattern} on {self.url} failed ({status}): {answer}")
        return True

    def _ok(
        self, method: str, path: str, body: Any = None, *, params: Mapping[str, str] | None = None, what: str
    ) -> Any:
        status, answer = self.request(method, path, body, params=params)
        if status >= 300:
            raise DevToolsError(f"{what} on {self.url} failed ({status}): {answer}")
        return answer

    # ------------------------------------------------------------------ JavaServer parts

    def _distribution_home(self) -> Path:
        raise NotImplementedError

    def _classpath(self) -> list[Path]:
        return []  # the launch script builds it

    def _prepare(self, ports: Mapping[str, int]) -> None:
        account = self._account
        if account is not None:
            assert self._home is not None
            grant_traverse(self._home, account)
            grant_traverse(self.work_dir, account)
        for directory in (self.work_dir / "logs", self.work_dir / "tmp", self.data_dir):
            private_dir(directory, account)
        self._write_config(account)

    def _write_config(self, account: Account | None) -> None:
        """A fresh copy of the distribution's config/ with paths into ``work_dir`` and our heap."""
        assert self._home is not None
        config = self.config_dir
        if config.is_symlink() or config.is_file():
            raise DevToolsError(f"{config} is not a directory; remove it.")
        if config.exists():
            shutil.rmtree(config)
        shutil.copytree(self._home / "config", config, symlinks=False)
        logs = self.work_dir / "logs"
        options = config / "jvm.options"
        text = options.read_text()
        text = _HEAP_LINE.sub(r"# \1  (sluice: the heap is set in jvm.options.d/sluice.options)", text)
        text = _HEAP_DUMP_LINE.sub(r"# \1  (sluice: set in jvm.options.d/sluice.options)", text)
        text = _ERROR_FILE.sub(lambda m: f"{m.group(1)}{logs}/hs_err_pid%p.log", text)
        text = _GC_LOG.sub(lambda m: f"{m.group(1)}{logs}/gc.log", text)
        text = _OLD_GC_LOG.sub(lambda m: f"{m.group(1)}{logs}/gc.log", text)
        options.write_text(text)
        options_d = config / "jvm.options.d"
        options_d.mkdir(exist_ok=True)
        (options_d / "sluice.options").write_text(
            "# written by sluice_devtools.search_servers at each start\n"
            f"-Xms{self.heap}\n-Xmx{self.heap}\n"
            f"-XX:HeapDumpPath={self.data_dir}\n"  # also what recognises the server JVM
            f"-XX:ReplayDataFile={logs}/replay_pid%p.log\n"
        )
        private_dir(config, account)
        for directory, dirs, files in os.walk(config):
            for name in [*dirs, *files]:
                path = Path(directory, name)
                if account is not None:
                    os.chown(path, account.uid, account.gid)
                path.chmod(0o700 if name in dirs else 0o600)

    def _node_settings(self, ports: Mapping[str, int]) -> dict[str, str]:
        return {
            "cluster.name": "sluice",
            "node.name": f"sluice-{self.distribution}",
            "discovery.type": "single-node",
            "network.host": _HOST,
            "http.port": str(ports["port"]),
            "transport.port": str(ports["transport_port"]),
            "path.data": str(self.data_dir),
            "path.logs": str(self.work_dir / "logs"),
            "action.destructive_requires_name": "false",
            "cluster.routing.allocation.disk.threshold_enabled": "false",
            **self._extra_settings,
            **self.settings,
        }

    def _launch(self, java: Path, classpath: str, ports: dict[str, int]) -> None:
        assert self._home is not None
        java_home = Path(os.path.realpath(java)).parent.parent
        if self._account is not None:
            grant_traverse(java_home, self._account)
        prefix = self._env_prefix
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in _DROPPED_ENV and not key.startswith(f"{prefix}_")
        }
        env.update(
            {
                f"{prefix}_JAVA_HOME": str(java_home),
                f"{prefix}_PATH_CONF": str(self.config_dir),
                f"{prefix}_TMPDIR": str(self.work_dir / "tmp"),
                f"{prefix}_JAVA_OPTS": "",
            }
        )
        settings = self._node_settings(ports)
        # "-E key=value" pairs: the launcher's command line names path.data (see _is_this_process)
        command = [
            "bash",
            str(self._home / "bin" / self.distribution),
            *(arg for key, value in settings.items() for arg in ("-E", f"{key}={value}")),
        ]
        with open(self.log_file, "wb") as out:
            self._proc = subprocess.Popen(
                command,
                cwd=self.work_dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own session and process group
                close_fds=True,
                **as_account(self._account),
            )
        self._pid = self._proc.pid
        self._server_pid = None
        self._ports = ports
        self._write_state(
            {
                "distribution": self.distribution,
                "pid": self._pid,
                "server_pid": None,
                "ports": ports,
                **self._urls(ports),
                "version": self._version,
                "home": str(self._home),
                "java": str(java_home),
                "run_as": self._account.name if self._account is not None else None,
                "started_at": time.time(),
                "log": str(self.log_file),
            }
        )

    def _urls(self, ports: Mapping[str, int]) -> dict[str, str]:
        return {"url": f"http://{_HOST}:{ports['port']}"}

    def _ready(self) -> bool:
        answer = http_status(f"{self.url}/_cluster/health?wait_for_status=yellow&timeout=1s", timeout=5.0)
        if answer is None or answer[0] != 200:
            return False
        try:
            return json.loads(answer[1]).get("status") in ("yellow", "green")
        except (ValueError, AttributeError):
            return False

    # ------------------------------------------------------------------ processes

    def _is_this_process(self, cmdline: str) -> bool:
        # The launcher (bash, then OpenSearch's server JVM or Elasticsearch's CLI JVM) has
        # "-E path.data=<work_dir>/data"; a server JVM the heap dump path of sluice.options.
        text = f" {cmdline.strip()} "
        return f" path.data={self.data_dir} " in text or self._jvm_marker() in text

    def _jvm_marker(self) -> str:
        return f" -XX:HeapDumpPath={self.data_dir} "

    def _adopt_from_state(self) -> None:
        if self._proc is not None:
            return
        super()._adopt_from_state()
        state = self._read_state() or {}
        server = state.get("server_pid")
        self._server_pid = server if isinstance(server, int) and self._pid is not None else None

    def _find_server_pid(self, launcher: int | None) -> int | None:
        """The server JVM's pid if it runs: the recorded one, else the launcher or its child."""
        if self._server_pid is not None and self._is_running(self._server_pid):
            return self._server_pid
        if launcher is None:
            return None
        for pid in (launcher, *_child_pids(launcher)):
            info = process_info(pid)
            if info is not None and not info[0].startswith("Z") and self._is_server_jvm(info[1]):
                return pid
        return None

    def _is_server_jvm(self, cmdline: str) -> bool:
        text = f" {cmdline.strip()} "
        return self._server_main in text and self._jvm_marker() in text

    def _record_server_pid(self) -> None:
        server = self._find_server_pid(self._pid)
        if server is None or server == self._server_pid:
            return
        self._server_pid = server
        state = self._read_state()
        if state is not None and state.get("pid") == self._pid:
            state["server_pid"] = server
            self._write_state(state)

    def _kill_failed_start(self) -> None:
        launcher = self._pid if self._pid is not None and self._is_running(self._pid) else None
        server = self._find_server_pid(launcher)
        if server is not None and server != launcher:
            self._signal(server, signal.SIGKILL)
            self._wait_exit(server, 15.0)
        super()._kill_failed_start()  # the launcher

    def _forget_process(self) -> None:
        super()._forget_process()
        self._server_pid = None
        state = self._read_state()
        if state is not None and state.get("server_pid") is not None:
            state["server_pid"] = None
            self._write_state(state)


def _child_pids(pid: int) -> list[int]:
    """The pids of ``pid``'s children (from /proc; ``ps`` where there is none)."""
    proc = Path("/proc")
    if (proc / "self").exists():
        children = []
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    children.append(int(entry.name))
        return children
    try:
        out = subprocess.run(["ps", "-A", "-o", "pid=", "-o", "ppid="], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return []
    found = []
    for line in out.stdout.splitlines():
        with contextlib.suppress(ValueError):
            child, parent = (int(part) for part in line.split())
            if parent == pid:
                found.append(child)
    return found


class OpenSearchServer(_SearchServer):
    """A local single-node OpenSearch 2.19 cluster (see the module doc)."""

    distribution = "opensearch"
    _label = "OpenSearch server"
    _log_name = "opensearch.out"
    _version = OPENSEARCH_VERSION
    _main_class = "org.opensearch.bootstrap.OpenSearch"
    _marker_property = "opensearch.path.conf"
    _service_user = "opensearch"
    _env_prefix = "OPENSEARCH"
    _server_main = "org.opensearch.bootstrap.OpenSearch"

    def _distribution_home(self) -> Path:
        return opensearch_home()


class ElasticsearchServer(_SearchServer):
    """A local single-node Elasticsearch 8.19 cluster, security off (see the module doc)."""

    distribution = "elasticsearch"
    _label = "Elasticsearch server"
    _log_name = "elasticsearch.out"
    _version = ELASTICSEARCH_VERSION
    _main_class = "org.elasticsearch.launcher.CliToolLauncher"
    _marker_property = "es.path.conf"
    _service_user = "elasticsearch"
    _env_prefix = "ES"
    _server_main = "org.elasticsearch.bootstrap.Elasticsearch"
    _extra_settings = {"xpack.security.enabled": "false"}

    def _distribution_home(self) -> Path:
        return elasticsearch_home()
