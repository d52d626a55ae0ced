"""Real storage servers for local use: an S3 API server and an HDFS cluster.

Both are Java programs run from jar sets of Maven Central (see :mod:`sluice_devtools.jars`,
fetched once into the cache), as a child process in its own session on free loopback
ports, with pid and URLs recorded in ``work_dir/state.json``. Another process can stop
them or ask for their status with ``S3Server(work_dir)`` / ``HdfsCluster(work_dir)``
(or ``from_state``); ``start()`` on a work dir whose server already runs adopts it.
Stopping sends SIGTERM to the recorded pid (checked to still be this work dir's server)
and SIGKILL only after the timeout.

**S3** (:class:`S3Server`): `s3proxy <https://github.com/gaul/s3proxy>`_ with its
``filesystem`` storage backend in ``work_dir/data`` (objects survive a restart of the
server), AWS signature V2 and V4 authentication with the access key ``sluice`` and the
secret key ``sluice-secret``, region ``us-east-1``. Clients address buckets path-style
(``http://127.0.0.1:PORT/<bucket>/<key>``). :meth:`S3Server.client` is a boto3 client for
it.

**HDFS** (:class:`HdfsCluster`): Hadoop's ``MiniHadoopClusterManager`` (what
``mapred minicluster`` runs) without MapReduce: a real NameNode and one DataNode in one
JVM (Hadoop's MiniDFSCluster), the Hadoop version PySpark ships. :attr:`HdfsCluster.hdfs_url`
is ``fs.defaultFS`` (``hdfs://127.0.0.1:PORT``), :attr:`HdfsCluster.webhdfs_url` the
NameNode's HTTP address, whose ``/webhdfs/v1`` REST API redirects reads and writes to the
DataNode (also on loopback). Permission checks are off (``dfs.permissions.enabled=false``):
any user may write anywhere. The file system is formatted at every start: a restart
starts empty. ``work_dir/core-site.xml`` is the cluster's whole configuration, written
by Hadoop once the cluster is up (it names the NameNode ``localhost:PORT``; a Hadoop
client with ``work_dir`` on its classpath reads it).

Files in ``work_dir``: ``state.json``, ``logs/<server>.out`` (the JVM's output), ``tmp/``,
``data/`` and the server's configuration files.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Self

from sluice.jvm.java import java_executable
from sluice_devtools import DevToolsError
from sluice_devtools.jars import HADOOP_VERSION, S3PROXY_VERSION, hdfs_minicluster_classpath, s3proxy_classpath
from sluice_devtools.processes import (
    LOOPBACK,
    STATE_FILE,
    LocalService,
    ServiceStatus,
    free_port,
    port_if_free,
    tail,
)

__all__ = ["HdfsCluster", "S3Server"]

log = logging.getLogger(__name__)

_HOST = LOOPBACK
_PORT_ATTEMPTS = 3
_BIND_ERRORS = ("Address already in use", "BindException")


class JavaServer(LocalService):
    """One JVM server of ``work_dir``: ports, launch, readiness, stop, the state file.

    Subclasses name their ports (``_port_names``; the first is the one clients need), the
    main class, the classpath, the program's arguments and its readiness check. (The
    search servers of :mod:`sluice_devtools.search_servers` build on it too.)
    """

    _label: ClassVar[str]  # for messages: "S3 server"
    _main_class: ClassVar[str]
    _marker_property: ClassVar[str]  # -D<marker>=<work dir>: recognises the process
    _port_names: ClassVar[tuple[str, ...]]
    _log_name: ClassVar[str]
    _version: ClassVar[str]

    def __init__(self, work_dir: Path | str, *, heap: str = "512m") -> None:
        self.work_dir = Path(work_dir).expanduser().absolute()
        self.heap = heap
        self._fixed_ports: dict[str, int | None] = {}
        self._proc: subprocess.Popen[bytes] | None = None
        self._pid: int | None = None
        self._ports: dict[str, int] | None = None  # of the running server

    @classmethod
    def from_state(cls, work_dir: Path | str) -> Self:
        """The server recorded in ``work_dir/state.json`` by an earlier ``start()``."""
        server = cls(work_dir)
        if server._read_state() is None:
            raise DevToolsError(f"No {cls._label} was started in {server.work_dir} (no {STATE_FILE}).")
        server._adopt_from_state()
        return server

    @property
    def log_file(self) -> Path:
        return self.work_dir / "logs" / self._log_name

    @property
    def data_dir(self) -> Path:
        return self.work_dir / "data"

    # ------------------------------------------------------------------ lifecycle

    def start(self, timeout: float = 60.0) -> str:
        """Start the server (a no-op if it already runs) and return its main URL.

        ``timeout`` bounds the wait for the started JVM to answer; fetching the jars on
        first use comes before it.
        """
        self._adopt_from_state()
        if self._pid is not None and self._is_running(self._pid):
            self._wait_ready(time.monotonic() + timeout)
            return self._url()
        java = java_executable()
        classpath = os.pathsep.join(str(p) for p in self._classpath())
        (self.work_dir / "logs").mkdir(parents=True, exist_ok=True)
        (self.work_dir / "tmp").mkdir(exist_ok=True)
        self.data_dir.mkdir(exist_ok=True)
        previous = (self._read_state() or {}).get("ports") or {}
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            ports = self._choose_ports(previous)
            self._prepare(ports)
            self._launch(java, classpath, ports)
            started = time.monotonic()
            try:
                self._wait_ready(started + timeout)
            except DevToolsError:
                output = self._log_tail()
                self._kill_failed_start()
                if any(error in output for error in _BIND_ERRORS) and attempt < _PORT_ATTEMPTS:
                    previous = {}  # lost a race for a free port: pick new ones
                    continue
                raise
            log.info("%s up at %s (pid %s) in %.1fs", self._label, self._url(), self._pid, time.monotonic() - started)
            return self._url()
        raise AssertionError("unreachable")

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop the server: SIGTERM, then SIGKILL after ``timeout``. True if it was running."""
        self._adopt_from_state()
        pid = self._pid
        if pid is None or not self._is_running(pid):
            self._forget_process()
            return False
        self._signal(pid, signal.SIGTERM)
        if not self._wait_exit(pid, timeout):
            log.warning("%s pid %s did not stop within %ss; killing it", self._label, pid, timeout)
            self._signal(pid, signal.SIGKILL)
            if not self._wait_exit(pid, 15.0):
                raise DevToolsError(f"{self._label} pid {pid} did not exit after SIGKILL.")
        self._forget_process()
        return True

    def _running(self) -> bool:
        self._adopt_from_state()
        return self._pid is not None and self._is_running(self._pid)

    # ------------------------------------------------------------------ for subclasses

    def _classpath(self) -> list[Path]:
        raise NotImplementedError

    def _prepare(self, ports: Mapping[str, int]) -> None:
        """Write the configuration files for a start on ``ports``."""

    def _jvm_options(self) -> list[str]:
        return []

    def _arguments(self, ports: Mapping[str, int]) -> list[str]:
        raise NotImplementedError

    def _urls(self, ports: Mapping[str, int]) -> dict[str, str]:
        """The URLs recorded in the state file; the first is what ``start()`` returns."""
        raise NotImplementedError

    def _ready(self) -> bool:
        """Whether the started server answers (called repeatedly; must return quickly)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ internals

    def _port(self, name: str) -> int:
        if self._ports is None:
            raise DevToolsError(f"The {self._label} in {self.work_dir} has not been started.")
        return self._ports[name]

    def _url(self) -> str:
        if self._ports is None:
            raise DevToolsError(f"The {self._label} in {self.work_dir} has not been started.")
        return next(iter(self._urls(self._ports).values()))

    def _adopt_from_state(self) -> None:
        if self._proc is not None:
            return
        state = self._read_state()
        if state is None:
            return
        self._pid = state.get("pid")
        ports = state.get("ports")
        self._ports = dict(ports) if self._pid is not None and isinstance(ports, dict) else None

    def _choose_ports(self, previous: Mapping[str, Any]) -> dict[str, int]:
        """The fixed ports, else the previous ones when still free, else free ones."""
        chosen: dict[str, int] = {}
        for name in self._port_names:
            taken = set(chosen.values())
            fixed = self._fixed_ports.get(name)
            if fixed is not None:
                if fixed in taken or port_if_free(fixed) is None:
                    raise DevToolsError(f"Port {fixed} on {_HOST} is in use; choose another or omit the port.")
                chosen[name] = fixed
                continue
            before = previous.get(name)
            if isinstance(before, int) and before not in taken and _reusable(before):
                chosen[name] = before
            else:
                chosen[name] = free_port(avoid=taken)
        return chosen

    def _launch(self, java: Path, classpath: str, ports: dict[str, int]) -> None:
        command = [
            str(java),
            f"-Xmx{self.heap}",
            "-XX:+ExitOnOutOfMemoryError",
            "-Djava.awt.headless=true",
            f"-Djava.io.tmpdir={self.work_dir / 'tmp'}",
            f"-D{self._marker_property}={self.work_dir}",
            *self._jvm_options(),
            "-cp",
            classpath,
            self._main_class,
            *self._arguments(ports),
        ]
        with open(self.log_file, "wb") as out:
            self._proc = subprocess.Popen(
                command,
                cwd=self.work_dir,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own session and process group
                close_fds=True,
            )
        self._pid = self._proc.pid
        self._ports = ports
        self._write_state(
            {
                "pid": self._pid,
                "ports": ports,
                **self._urls(ports),
                "version": self._version,
                "java": str(java),
                "started_at": time.time(),
                "log": str(self.log_file),
            }
        )

    def _wait_ready(self, deadline: float) -> None:
        while True:
            self._check_alive_while_starting()
            if self._ready():
                return
            if time.monotonic() > deadline:
                raise self._start_failure("did not answer in time")
            time.sleep(0.1)

    def _start_failure(self, what: str) -> DevToolsError:
        return DevToolsError(f"The {self._label} in {self.work_dir} {what}. Last log lines:\n{self._log_tail()}")

    def _log_tail(self) -> str:
        if self.log_file.is_file() and self.log_file.stat().st_size:
            return f"--- {self.log_file}\n{tail(self.log_file.read_text(errors='replace'))}"
        return "(no log output)"

    def _is_this_process(self, cmdline: str) -> bool:
        # /proc's command line ends every argument with a space: the marker matches whole
        return self._main_class in cmdline and f"-D{self._marker_property}={self.work_dir} " in cmdline + " "

    def _forget_process(self) -> None:
        self._proc = None
        self._pid = None
        self._ports = None
        state = self._read_state()
        if state is not None and state.get("pid") is not None:
            state["pid"] = None
            for key in self._urls(state.get("ports") or dict.fromkeys(self._port_names, 0)):
                state[key] = None
            self._write_state(state)


def _reusable(port: int) -> bool:
    """Whether a server can listen on ``port`` now, as these servers do (SO_REUSEADDR):
    connections of a stopped server in TIME_WAIT do not hold its port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((_HOST, port))
        except OSError:
            return False
    return True


def http_status(url: str, timeout: float = 2.0) -> tuple[int, bytes] | None:
    """(status, body) of a GET request (error statuses too), None when unreachable."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except (OSError, ValueError):
        return None


# ----------------------------------------------------------------------------- S3


class S3Server(JavaServer):
    """One local S3 API server (s3proxy) whose objects live in ``work_dir/data``.

    ``port`` fixes the HTTP port (default: a free loopback port, the previous one when
    restarting if it is still free). Credentials: :attr:`access_key` / :attr:`secret_key`;
    :attr:`region` is what clients sign for.
    """

    _label = "S3 server"
    _main_class = "org.gaul.s3proxy.Main"
    _marker_property = "sluice.s3.dir"
    _port_names = ("port",)
    _log_name = "s3proxy.out"
    _version = S3PROXY_VERSION

    access_key = "sluice"
    secret_key = "sluice-secret"
    region = "us-east-1"

    def __init__(self, work_dir: Path | str, port: int | None = None, *, heap: str = "256m") -> None:
        super().__init__(work_dir, heap=heap)
        self._fixed_ports = {"port": port}

    @property
    def endpoint_url(self) -> str:
        """``http://127.0.0.1:PORT`` of the running server (boto3's ``endpoint_url``)."""
        return self._url()

    @property
    def properties_file(self) -> Path:
        return self.work_dir / "s3proxy.properties"

    def start(self, timeout: float = 60.0) -> str:
        """Start the server (a no-op if it already runs) and return :attr:`endpoint_url`."""
        return super().start(timeout)

    def status(self) -> ServiceStatus:
        running = self._running()
        endpoint = self.endpoint_url if running and self._ports else None
        return ServiceStatus(running, self._pid if running else None, self.work_dir, (("endpoint", endpoint),))

    def client(self) -> Any:
        """A boto3 S3 client for this server (path-style addressing, its keys and region)."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name=self.region,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3, "mode": "standard"}),
        )

    def create_bucket(self, name: str) -> None:
        """Create bucket ``name`` (a no-op when it exists)."""
        from botocore.exceptions import ClientError

        try:
            self.client().create_bucket(Bucket=name)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                raise

    # ------------------------------------------------------------------ internals

    def _classpath(self) -> list[Path]:
        return s3proxy_classpath()

    def _prepare(self, ports: Mapping[str, int]) -> None:
        properties = {
            "s3proxy.endpoint": f"http://{_HOST}:{ports['port']}",
            "s3proxy.authorization": "aws-v2-or-v4",
            "s3proxy.identity": self.access_key,
            "s3proxy.credential": self.secret_key,
            "jclouds.provider": "filesystem",
            "jclouds.identity": self.access_key,
            "jclouds.credential": self.secret_key,
            "jclouds.filesystem.basedir": str(self.data_dir),
            "jclouds.region": self.region,
        }
        self.properties_file.write_text(
            "".join(f"{key}={_escape_property(value)}\n" for key, value in properties.items())
        )
        # s3proxy's jar has no logging configuration: logback would log everything (DEBUG)
        (self.work_dir / "logback.xml").write_text(
            "<configuration>\n"
            '  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">\n'
            "    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{36} - %msg%n</pattern></encoder>\n"
            "  </appender>\n"
            '  <logger name="org.gaul.s3proxy.Main" level="INFO"/>\n'
            '  <root level="WARN"><appender-ref ref="OUT"/></root>\n'
            "</configuration>\n"
        )

    def _jvm_options(self) -> list[str]:
        return [f"-Dlogback.configurationFile={self.work_dir / 'logback.xml'}"]

    def _arguments(self, ports: Mapping[str, int]) -> list[str]:
        return ["--properties", str(self.properties_file)]

    def _urls(self, ports: Mapping[str, int]) -> dict[str, str]:
        return {"endpoint_url": f"http://{_HOST}:{ports['port']}"}

    def _ready(self) -> bool:
        # An anonymous request: s3proxy's S3 handler refuses it with an S3 error document.
        answer = http_status(self.endpoint_url + "/")
        return answer is not None and (answer[0] == 200 or b"<Error>" in answer[1])


def _escape_property(value: str) -> str:
    """A value of a Java properties file (backslashes and leading blanks escaped)."""
    escaped = value.replace("\\", "\\\\").replace("\n", "\\n")
    return "\\" + escaped if escaped[:1] in (" ", "\t") else escaped


# ----------------------------------------------------------------------------- HDFS


class HdfsCluster(JavaServer):
    """One local HDFS cluster (a NameNode and one DataNode in one JVM) in ``work_dir``.

    ``port`` fixes the NameNode's RPC port and ``http_port`` its HTTP (WebHDFS) port
    (default: free loopback ports, the previous ones when restarting if still free).
    ``conf`` adds or overrides Hadoop configuration (``{"dfs.replication": "1"}``).
    The DataNode's ports are chosen by Hadoop (free loopback ports).
    """

    _label = "HDFS cluster"
    _main_class = "org.apache.hadoop.mapreduce.MiniHadoopClusterManager"
    _marker_property = "sluice.hdfs.dir"
    _port_names = ("port", "http_port")
    _log_name = "hdfs.out"
    _version = HADOOP_VERSION

    def __init__(
        self,
        work_dir: Path | str,
        port: int | None = None,
        http_port: int | None = None,
        *,
        heap: str = "512m",
        conf: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(work_dir, heap=heap)
        self._fixed_ports = {"port": port, "http_port": http_port}
        self.conf = dict(conf or {})

    @property
    def hdfs_url(self) -> str:
        """``hdfs://127.0.0.1:PORT``: the NameNode (``fs.defaultFS``)."""
        return f"hdfs://{_HOST}:{self._port('port')}"

    @property
    def webhdfs_url(self) -> str:
        """``http://127.0.0.1:PORT``: the NameNode's HTTP server (``/webhdfs/v1/...``)."""
        return f"http://{_HOST}:{self._port('http_port')}"

    @property
    def config_file(self) -> Path:
        """The cluster's whole configuration (``core-site.xml``), written by Hadoop once it is up."""
        return self.work_dir / "core-site.xml"

    def start(self, timeout: float = 120.0) -> str:
        """Start the cluster (a no-op if it already runs) and return :attr:`hdfs_url`.

        Returns once the NameNode has left safe mode, a DataNode is live and WebHDFS answers.
        """
        return super().start(timeout)

    def status(self) -> ServiceStatus:
        running = self._running()
        up = running and self._ports is not None
        addresses = (("hdfs", self.hdfs_url if up else None), ("webhdfs", self.webhdfs_url if up else None))
        return ServiceStatus(running, self._pid if running else None, self.work_dir, addresses)

    def live_datanodes(self) -> int | None:
        """The NameNode's count of live DataNodes (from its JMX servlet), None if it does not answer."""
        beans = self._jmx("Hadoop:service=NameNode,name=FSNamesystemState")
        if not beans:
            return None
        live = beans[0].get("NumLiveDataNodes")
        return live if isinstance(live, int) else None

    # ------------------------------------------------------------------ internals

    def _classpath(self) -> list[Path]:
        return hdfs_minicluster_classpath()

    def _prepare(self, ports: Mapping[str, int]) -> None:
        self.config_file.unlink(missing_ok=True)  # written again by the started cluster once up
        (self.work_dir / "log4j.properties").write_text(
            "# Hadoop's logging (log4j 1.x API): warnings, plus the cluster's start line\n"
            "log4j.rootLogger=WARN,out\n"
            "log4j.appender.out=org.apache.log4j.ConsoleAppender\n"
            "log4j.appender.out.layout=org.apache.log4j.PatternLayout\n"
            "log4j.appender.out.layout.ConversionPattern=%d{HH:mm:ss,SSS} %-5p %c{2} - %m%n\n"
            f"log4j.logger.{self._main_class}=INFO\n"
            "# expected here: no native library, no HTTP signature secret file (random secrets)\n"
            "log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR\n"
            "log4j.logger.org.apache.hadoop.security.authentication.server.AuthenticationFilter=ERROR\n"
        )

    def _jvm_options(self) -> list[str]:
        return [f"-Dlog4j.configuration=file:{self.work_dir / 'log4j.properties'}"]

    def _hadoop_conf(self) -> dict[str, str]:
        return {
            "hdfs.minidfs.basedir": str(self.data_dir),
            "dfs.permissions.enabled": "false",
            "dfs.datanode.hostname": _HOST,
            "dfs.replication": "1",
            **self.conf,
        }

    def _arguments(self, ports: Mapping[str, int]) -> list[str]:
        options = [f"{key}={value}" for key, value in self._hadoop_conf().items()]
        return [
            "-nomr",
            "-format",
            "-datanodes",
            "1",
            "-nnport",
            str(ports["port"]),
            "-nnhttpport",
            str(ports["http_port"]),
            "-writeConfig",
            str(self.config_file),
            *(arg for option in options for arg in ("-D", option)),
        ]

    def _urls(self, ports: Mapping[str, int]) -> dict[str, str]:
        return {
            "hdfs_url": f"hdfs://{_HOST}:{ports['port']}",
            "webhdfs_url": f"http://{_HOST}:{ports['http_port']}",
        }

    def _jmx(self, query: str) -> list[dict[str, Any]] | None:
        answer = http_status(f"{self.webhdfs_url}/jmx?qry={urllib.parse.quote(query)}")
        if answer is None or answer[0] != 200:
            return None
        try:
            beans = json.loads(answer[1]).get("beans")
        except (ValueError, AttributeError):
            return None
        return beans if isinstance(beans, list) else None

    def _ready(self) -> bool:
        if not self.config_file.is_file():  # written after the cluster has come up
            return False
        info = self._jmx("Hadoop:service=NameNode,name=NameNodeInfo")
        if not info or info[0].get("Safemode"):
            return False
        if not self.live_datanodes():
            return False
        answer = http_status(f"{self.webhdfs_url}/webhdfs/v1/?op=GETFILESTATUS")
        return answer is not None and answer[0] == 200
