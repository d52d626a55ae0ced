"""File and object names of the storage sinks, where their HDFS lives, and what a failed start leaves."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from sluice.api import ConfigError, ConnectError, TopicPartition
from sluice.connectors.storage import hdfs, s3
from sluice.connectors.storage.config import StorageSettings
from sluice.connectors.storage.writer import ReadyFile

TP = TopicPartition("orders", 4)
FILE = ReadyFile("orders/partition=4", "partition=4", Path("/nowhere"), 120, 199, 80)


def test_s3_object_keys_carry_the_start_offset_zero_padded():
    props = {"s3.bucket.name": "b", "format.class": "JsonFormat", "flush.size": "80"}
    settings = StorageSettings(s3.CONFIG_DEF.parse(props))
    assert s3.object_key(settings, TP, FILE, ".json") == "topics/orders/partition=4/orders+4+0000000120.json"
    custom = StorageSettings(
        s3.CONFIG_DEF.parse(
            {**props, "topics.dir": "data/raw/", "file.delim": "_", "filename.offset.zero.pad.width": "3"}
        )
    )
    assert s3.object_key(custom, TP, FILE, ".avro") == "data/raw/orders/partition=4/orders_4_120.avro"


def test_hdfs_file_names_carry_both_offsets():
    values = hdfs.CONFIG_DEF.parse({"hdfs.url": "webhdfs://nn:9870/base", "flush.size": "80"})
    store = object.__new__(hdfs.HdfsStore)  # names only: no NameNode needed
    store.settings = StorageSettings(values)
    store.extension = ".avro"
    store.topics_dir = "/base/topics"
    assert store.committed_path(TP, FILE) == "/base/topics/orders/partition=4/orders+4+0000000120+0000000199.avro"
    temp = store.temp_path(TP, FILE)
    assert temp.startswith("/base/topics/+tmp/orders/partition=4/orders+4+") and temp.endswith("_tmp.avro")
    store.logs_dir = "/base/logs"
    assert store.wal_path(TP) == "/base/logs/orders/4/log"


def test_hdfs_url_forms(tmp_path):
    assert hdfs.webhdfs_url("webhdfs://nn:50070") == ("http://nn:50070", "")
    assert hdfs.webhdfs_url("http://nn:9870/data/") == ("http://nn:9870", "/data")
    assert hdfs.webhdfs_url("hdfs://nn:8020") == ("http://nn:9870", "")
    (tmp_path / "hdfs-site.xml").write_text(
        "<configuration><property><name>dfs.namenode.http-address</name>"
        "<value>0.0.0.0:50070</value></property></configuration>"
    )
    assert hdfs.webhdfs_url("hdfs://nn:8020/x", str(tmp_path)) == ("http://nn:50070", "/x")
    with pytest.raises(ConfigError, match="hdfs.url"):
        hdfs.webhdfs_url("s3://bucket")
    (tmp_path / "hdfs-site.xml").write_text("<configuration>")
    with pytest.raises(ConfigError, match="hadoop.conf.dir"):
        hdfs.webhdfs_url("hdfs://nn:8020", str(tmp_path))


def test_connector_config_is_checked_at_start():
    connector = s3.S3SinkConnector()
    with pytest.raises(ConfigError, match="flush.size"):
        connector.start({"s3.bucket.name": "b", "format.class": "JsonFormat"})
    with pytest.raises(ConfigError, match="format.class"):
        connector.start({"s3.bucket.name": "b", "format.class": "CsvFormat", "flush.size": "1"})
    with pytest.raises(ConfigError, match="partitioner.class"):
        connector.start(
            {"s3.bucket.name": "b", "format.class": "JsonFormat", "flush.size": "1", "partitioner.class": "Nope"}
        )
    connector.start({"s3.bucket.name": "b", "format.class": "ParquetFormat", "flush.size": "1"})
    assert (
        connector.task_configs(2) == [{"s3.bucket.name": "b", "format.class": "ParquetFormat", "flush.size": "1"}] * 2
    )
    assert hdfs.HdfsSinkConnector().config().config_keys()["format.class"].default_value.endswith("AvroFormat")


@pytest.mark.parametrize(
    ("task_class", "props"),
    [
        (hdfs.HdfsSinkTask, {"hdfs.url": "webhdfs://127.0.0.1:1"}),
        (s3.S3SinkTask, {"s3.bucket.name": "b", "store.url": "http://127.0.0.1:1"}),
    ],
)
def test_a_task_whose_store_cannot_be_reached_leaves_no_local_files(
    task_class: type, props: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Port 1 on the loopback refuses connections. A start that fails leaves nothing
    # behind by itself (the runtime's stop() afterwards is best effort).
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    with pytest.raises(ConnectError, match="127.0.0.1:1"):
        task_class().start({**props, "format.class": "JsonFormat", "flush.size": "1"})
    assert list(tmp_path.iterdir()) == []
