"""Confluent's HDFS sink (``io.confluent.connect.hdfs.HdfsSinkConnector``): records into
files on HDFS, in Avro, Parquet, JSON or text, exactly once.

Committed files are named ``<topics.dir>/<topic>/<encoded partition>/<topic>+<partition>+
<start offset>+<end offset>.<ext>``. A commit of a topic partition's files

1. uploads each complete file to a temporary name under ``<topics.dir>/+tmp/``;
2. writes the write-ahead log ``<logs.dir>/<topic>/<partition>/log``: the renames to do and
   the offset the topic partition continues from;
3. renames the temporary files to their final names.

When a task gets a topic partition it recovers it: it finishes the renames of a complete
log (whose temporary files are all written), deletes the topic partition's other
temporary files, and continues from the offset in the log — or, when there is no
readable log, from the highest end offset of the committed files. Records are therefore
in exactly one committed file, whatever crashed when.

HDFS is reached over WebHDFS (:mod:`sluice.connectors.storage.webhdfs`). ``hdfs.url`` may
be ``hdfs://namenode:port`` (the NameNode's HTTP address is then ``dfs.namenode.http-address``
of ``hadoop.conf.dir``'s ``hdfs-site.xml``, else port 9870 of the same host),
``webhdfs://namenode:httpport`` or ``http(s)://namenode:httpport``.
"""

from __future__ import annotations

import getpass
import json
import logging
import posixpath
import re
import urllib.parse
import uuid
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

from sluice.api import ConfigDef, ConfigError, ConfigType, ConnectError, Importance, Task, TopicPartition
from sluice.connectors.storage.config import StorageSettings, common_config_def
from sluice.connectors.storage.formats import Format
from sluice.connectors.storage.task import StorageSinkConnector, StorageSinkTask
from sluice.connectors.storage.webhdfs import HdfsError, WebHdfs
from sluice.connectors.storage.writer import FileStore, ReadyFile

__all__ = ["CONFIG_DEF", "HdfsSinkConnector", "HdfsSinkTask", "HdfsStore", "webhdfs_url"]

log = logging.getLogger(__name__)

HDFS_URL = "hdfs.url"
HADOOP_CONF_DIR = "hadoop.conf.dir"
HADOOP_HOME = "hadoop.home"
LOGS_DIR = "logs.dir"
HDFS_USER = "hdfs.user"
DEFAULT_HTTP_PORT = 9870
TEMP_DIR = "+tmp"

_HDFS = "HDFS"

CONFIG_DEF: ConfigDef = (
    common_config_def(default_format="io.confluent.connect.hdfs.avro.AvroFormat", null_behaviors=("ignore", "fail"))
    .define(
        HDFS_URL,
        ConfigType.STRING,
        importance=Importance.HIGH,
        documentation="The HDFS to write to: hdfs://namenode:port, webhdfs://namenode:httpport or "
        "http(s)://namenode:httpport (Sluice writes over WebHDFS).",
        group=_HDFS,
        order_in_group=1,
        display_name="HDFS URL",
    )
    .define(
        HADOOP_CONF_DIR,
        ConfigType.STRING,
        "",
        importance=Importance.HIGH,
        documentation="A Hadoop configuration directory; its hdfs-site.xml gives the NameNode's HTTP address.",
        group=_HDFS,
        order_in_group=2,
        display_name="Hadoop Configuration Directory",
    )
    .define(
        HADOOP_HOME,
        ConfigType.STRING,
        "",
        importance=Importance.HIGH,
        documentation="Accepted for Confluent compatibility; not used.",
        group=_HDFS,
        order_in_group=3,
        display_name="Hadoop home directory",
    )
    .define(
        LOGS_DIR,
        ConfigType.STRING,
        "logs",
        importance=Importance.HIGH,
        documentation="Top-level directory of the write-ahead logs.",
        group=_HDFS,
        order_in_group=4,
        display_name="Logs directory",
    )
    .define(
        HDFS_USER,
        ConfigType.STRING,
        "",
        importance=Importance.MEDIUM,
        documentation="The HDFS user to write as (WebHDFS's user.name; empty: the worker's OS user).",
        group=_HDFS,
        order_in_group=5,
        display_name="HDFS user",
    )
)


def webhdfs_url(hdfs_url: str, hadoop_conf_dir: str = "") -> tuple[str, str]:
    """(WebHDFS base URL, path prefix) for an ``hdfs.url``."""
    parsed = urllib.parse.urlsplit(hdfs_url.strip())
    if not parsed.hostname:
        raise ConfigError(f"Invalid value {hdfs_url} for configuration {HDFS_URL}: no NameNode host")
    prefix = parsed.path.rstrip("/")
    if parsed.scheme in ("http", "https"):
        return f"{parsed.scheme}://{parsed.netloc}", prefix
    if parsed.scheme == "webhdfs":
        return f"http://{parsed.netloc}", prefix
    if parsed.scheme == "swebhdfs":
        return f"https://{parsed.netloc}", prefix
    if parsed.scheme != "hdfs":
        raise ConfigError(f"Invalid value {hdfs_url} for configuration {HDFS_URL}: not an hdfs:// or webhdfs:// URL")
    address = _conf_http_address(hadoop_conf_dir) if hadoop_conf_dir else None
    if address is None:
        address = f"{parsed.hostname}:{DEFAULT_HTTP_PORT}"
    host, _, port = address.rpartition(":")
    if host in ("0.0.0.0", ""):  # a bind-all address in the config: the URL's host serves it
        host = parsed.hostname
    return f"http://{host}:{port}", prefix


def _conf_http_address(conf_dir: str) -> str | None:
    site = Path(conf_dir) / "hdfs-site.xml"
    if not site.is_file():
        return None
    try:
        root = ElementTree.parse(site).getroot()
    except ElementTree.ParseError as exc:
        raise ConfigError(f"Invalid value {conf_dir} for configuration {HADOOP_CONF_DIR}: {site}: {exc}") from exc
    for prop in root.iter("property"):
        if (prop.findtext("name") or "").strip() == "dfs.namenode.http-address":
            return (prop.findtext("value") or "").strip() or None
    return None


class HdfsStore(FileStore):
    """Commits files with temporary names, a write-ahead log and renames (module doc)."""

    def __init__(self, values: dict[str, Any], settings: StorageSettings, extension: str) -> None:
        base, prefix = webhdfs_url(values[HDFS_URL], values[HADOOP_CONF_DIR])
        self.client = WebHdfs(base, values[HDFS_USER] or getpass.getuser())
        self.settings = settings
        self.extension = extension
        self.topics_dir = posixpath.join(prefix or "/", settings.topics_dir.strip("/"))
        self.logs_dir = posixpath.join(prefix or "/", str(values[LOGS_DIR]).strip("/"))
        self._directories: set[str] = set()  # made by this store: a commit need not make them again
        try:
            self.client.mkdirs(self.topics_dir)
            self.client.mkdirs(self.logs_dir)
        except HdfsError as exc:
            raise ConnectError(f"HDFS at {values[HDFS_URL]} ({base}) cannot be written: {exc}") from exc

    # -- names -------------------------------------------------------------------------

    def _tp_prefix(self, tp: TopicPartition) -> str:
        d = self.settings.file_delim
        return f"{tp.topic}{d}{tp.partition}{d}"

    def committed_path(self, tp: TopicPartition, file: ReadyFile) -> str:
        width = self.settings.zero_pad_width
        name = (
            f"{self._tp_prefix(tp)}{file.start_offset:0{width}d}{self.settings.file_delim}"
            f"{file.end_offset:0{width}d}{self.extension}"
        )
        return posixpath.join(self.topics_dir, file.directory, name)

    def temp_path(self, tp: TopicPartition, file: ReadyFile) -> str:
        name = f"{self._tp_prefix(tp)}{uuid.uuid4().hex}_tmp{self.extension}"
        return posixpath.join(self.topics_dir, TEMP_DIR, file.directory, name)

    def wal_path(self, tp: TopicPartition) -> str:
        return posixpath.join(self.logs_dir, tp.topic, str(tp.partition), "log")

    # -- commit and recovery -----------------------------------------------------------

    def commit(self, tp: TopicPartition, files: list[ReadyFile], next_offset: int) -> None:
        renames = []
        for file in files:
            temp = self.temp_path(tp, file)
            self.client.create(temp, file.local_path)
            renames.append((temp, self.committed_path(tp, file)))
        log_entry = json.dumps({"version": 1, "renames": renames, "next_offset": next_offset}).encode()
        self.client.create(self.wal_path(tp), log_entry, overwrite=True)
        self._apply(renames, recovering=False)

    def _apply(self, renames: list[list[str]] | list[tuple[str, str]], *, recovering: bool = True) -> None:
        """Rename the temporary files to their final names. ``recovering``: some renames of
        the log may have been done before a crash (each is checked first)."""
        for temp, final in renames:
            if recovering and self.client.status(final) is not None:  # done before the crash
                if self.client.status(temp) is not None:
                    self.client.delete(temp)
                continue
            directory = posixpath.dirname(final)
            if directory not in self._directories:
                self.client.mkdirs(directory)
                self._directories.add(directory)
            if not self.client.rename(temp, final):
                self.client.mkdirs(directory)  # removed since it was made here?
                if not self.client.rename(temp, final):
                    raise HdfsError(f"Renaming {temp} to {final} failed")
            log.debug("Committed %s", final)

    def recover(self, tp: TopicPartition) -> int | None:
        entry = self._read_log(tp)
        if entry is not None:
            pending = [(t, f) for t, f in entry["renames"] if self.client.status(f) is None]
            if pending:
                log.info("%s: finishing %s renames of the write-ahead log", tp, len(pending))
                self._apply(pending)
        self._delete_temp_files(tp)
        if entry is not None:
            return int(entry["next_offset"])
        return self._offset_from_files(tp)

    def _read_log(self, tp: TopicPartition) -> dict[str, Any] | None:
        path = self.wal_path(tp)
        if self.client.status(path) is None:
            return None
        try:
            entry: dict[str, Any] = json.loads(self.client.read(path))
            entry["renames"] = [(str(t), str(f)) for t, f in entry["renames"]]
            int(entry["next_offset"])
        except (ValueError, KeyError, TypeError):
            log.warning("%s: the write-ahead log %s is incomplete; recovering from the committed files", tp, path)
            return None
        return entry

    def _walk(self, root: str) -> list[tuple[str, dict[str, Any]]]:
        found = []
        stack = [root]
        while stack:
            directory = stack.pop()
            for entry in self.client.list(directory):
                path = posixpath.join(directory, entry["pathSuffix"])
                if entry["type"] == "DIRECTORY":
                    stack.append(path)
                else:
                    found.append((path, entry))
        return found

    def _delete_temp_files(self, tp: TopicPartition) -> None:
        prefix = self._tp_prefix(tp)
        for path, _ in self._walk(posixpath.join(self.topics_dir, TEMP_DIR, tp.topic)):
            name = posixpath.basename(path)
            if name.startswith(prefix) and "_tmp" in name:
                self.client.delete(path)

    def _offset_from_files(self, tp: TopicPartition) -> int | None:
        d = re.escape(self.settings.file_delim)
        pattern = re.compile(rf"^{re.escape(tp.topic)}{d}{tp.partition}{d}(\d+){d}(\d+)(\..*)?$")
        ends = []
        for path, _ in self._walk(posixpath.join(self.topics_dir, tp.topic)):
            match = pattern.match(posixpath.basename(path))
            if match:
                ends.append(int(match.group(2)))
        return max(ends) + 1 if ends else None


class HdfsSinkTask(StorageSinkTask):
    store_kind = "hdfs"

    def config_def(self) -> ConfigDef:
        return CONFIG_DEF

    def make_store(self, values: dict[str, Any], fmt: Format) -> FileStore:
        return HdfsStore(values, self.settings, fmt.extension)


class HdfsSinkConnector(StorageSinkConnector):
    """Writes records to HDFS files (Confluent's ``io.confluent.connect.hdfs.HdfsSinkConnector``)."""

    store_kind = "hdfs"

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def task_class(self) -> type[Task]:
        return HdfsSinkTask
