"""Confluent's S3 sink (``io.confluent.connect.s3.S3SinkConnector``): records into objects
of an S3 bucket (AWS or any S3 API server: ``store.url``), in Avro, Parquet, JSON or raw
bytes.

Objects are named ``<topics.dir>/<topic>/<encoded partition>/<topic>+<partition>+<start
offset>.<ext>``. A file is uploaded (in ``s3.part.size`` parts once larger) only when it
is committed, so an object either holds a whole file or does not exist, and its name
depends only on the records in it: records read again after a crash overwrite the
objects they were in, never duplicate them. The offsets committed to Kafka are those of
the uploaded files.
"""

from __future__ import annotations

import logging
from typing import Any

from sluice.api import ConfigDef, ConfigType, ConnectError, Importance, Range, Task, TopicPartition
from sluice.api.config import ValidString
from sluice.connectors.storage.config import StorageSettings, common_config_def
from sluice.connectors.storage.formats import Format
from sluice.connectors.storage.task import StorageSinkConnector, StorageSinkTask
from sluice.connectors.storage.writer import FileStore, ReadyFile

__all__ = ["CONFIG_DEF", "S3SinkConnector", "S3SinkTask", "S3Store", "object_key", "s3_client"]

log = logging.getLogger(__name__)

S3_BUCKET = "s3.bucket.name"
S3_REGION = "s3.region"
STORE_URL = "store.url"
PATH_STYLE = "s3.path.style.access.enabled"
ACCESS_KEY = "aws.access.key.id"
SECRET_KEY = "aws.secret.access.key"
PART_SIZE = "s3.part.size"
PART_RETRIES = "s3.part.retries"
RETRY_BACKOFF = "s3.retry.backoff.ms"
COMPRESSION_TYPE = "s3.compression.type"
COMPRESSION_LEVEL = "s3.compression.level"
PARQUET_CODEC = "parquet.codec"
STORAGE_CLASS = "storage.class"

_S3 = "S3"

CONFIG_DEF: ConfigDef = (
    common_config_def(default_format=None, null_behaviors=("fail", "ignore"))
    .define(
        S3_BUCKET,
        ConfigType.STRING,
        importance=Importance.HIGH,
        documentation="The S3 bucket the objects are written to.",
        group=_S3,
        order_in_group=1,
        display_name="S3 Bucket",
    )
    .define(
        S3_REGION,
        ConfigType.STRING,
        "us-west-2",
        importance=Importance.MEDIUM,
        documentation="The AWS region of the bucket.",
        group=_S3,
        order_in_group=2,
        display_name="AWS region",
    )
    .define(
        STORE_URL,
        ConfigType.STRING,
        None,
        importance=Importance.HIGH,
        documentation="The S3 endpoint, for S3 API servers other than AWS (http://host:port).",
        group=_S3,
        order_in_group=3,
        display_name="Store URL",
    )
    .define(
        PATH_STYLE,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Address the bucket in the path (http://host/bucket/key) rather than the host name.",
        group=_S3,
        order_in_group=4,
        display_name="Enable Path Style Access to S3",
    )
    .define(
        ACCESS_KEY,
        ConfigType.STRING,
        "",
        importance=Importance.HIGH,
        documentation="The AWS access key id (empty: boto3's default credential chain).",
        group=_S3,
        order_in_group=5,
        display_name="AWS Access Key ID",
    )
    .define(
        SECRET_KEY,
        ConfigType.PASSWORD,
        "",
        importance=Importance.HIGH,
        documentation="The AWS secret access key.",
        group=_S3,
        order_in_group=6,
        display_name="AWS Secret Access Key",
    )
    .define(
        PART_SIZE,
        ConfigType.INT,
        26_214_400,
        Range.between(5_242_880, 2_147_483_647),
        importance=Importance.HIGH,
        documentation="The part size of multipart uploads, in bytes; larger files are uploaded in parts.",
        group=_S3,
        order_in_group=7,
        display_name="S3 Part Size",
    )
    .define(
        PART_RETRIES,
        ConfigType.INT,
        3,
        Range.at_least(0),
        importance=Importance.MEDIUM,
        documentation="How often a failed S3 request is retried before the task fails.",
        group=_S3,
        order_in_group=8,
        display_name="S3 Part Upload Retries",
    )
    .define(
        RETRY_BACKOFF,
        ConfigType.LONG,
        200,
        Range.at_least(0),
        importance=Importance.LOW,
        documentation="Accepted for Confluent compatibility; retries back off as boto3's standard mode does.",
        group=_S3,
        order_in_group=9,
        display_name="S3 Retry Backoff (ms)",
    )
    .define(
        COMPRESSION_TYPE,
        ConfigType.STRING,
        "none",
        ValidString.in_("none", "gzip"),
        importance=Importance.LOW,
        documentation="Compression of JSON and ByteArray files: none or gzip.",
        group=_S3,
        order_in_group=10,
        display_name="Compression type",
    )
    .define(
        COMPRESSION_LEVEL,
        ConfigType.INT,
        -1,
        Range.between(-1, 9),
        importance=Importance.LOW,
        documentation="The gzip level (-1: zlib's default).",
        group=_S3,
        order_in_group=11,
        display_name="Compression Level",
    )
    .define(
        PARQUET_CODEC,
        ConfigType.STRING,
        "snappy",
        ValidString.in_("none", "uncompressed", "snappy", "gzip", "lz4", "zstd", "brotli"),
        importance=Importance.LOW,
        documentation="The compression codec of Parquet files.",
        group=_S3,
        order_in_group=12,
        display_name="Parquet Compression Codec",
    )
    .define(
        STORAGE_CLASS,
        ConfigType.STRING,
        "io.confluent.connect.s3.storage.S3Storage",
        importance=Importance.LOW,
        documentation="Accepted for Confluent compatibility: the storage is always S3.",
        group=_S3,
        order_in_group=13,
        display_name="Storage class",
    )
)


def s3_client(values: dict[str, Any]) -> Any:
    """A boto3 S3 client for the connector's endpoint, region and credentials."""
    import boto3
    from botocore.config import Config as BotoConfig

    secret = values[SECRET_KEY]
    secret_value = secret.value if secret is not None else ""
    config = BotoConfig(
        region_name=values[S3_REGION],
        s3={"addressing_style": "path" if values[PATH_STYLE] else "auto"},
        retries={"max_attempts": values[PART_RETRIES] + 1, "mode": "standard"},
        connect_timeout=10,
        read_timeout=60,
    )
    return boto3.session.Session().client(
        "s3",
        endpoint_url=values[STORE_URL] or None,
        aws_access_key_id=values[ACCESS_KEY] or None,
        aws_secret_access_key=secret_value or None,
        config=config,
    )


def _describe(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        error = response.get("Error", {})
        code = error.get("Code", "")
        message = error.get("Message", "")
        return f"{code}: {message}".strip(": ") or str(exc)
    return str(exc)


def object_key(settings: StorageSettings, tp: TopicPartition, file: ReadyFile, extension: str) -> str:
    """``<topics.dir>/<topic>/<encoded partition>/<topic>+<partition>+<start offset><ext>``."""
    delim = settings.directory_delim
    prefix = settings.topics_dir.rstrip(delim) if settings.topics_dir else ""
    name = (
        f"{tp.topic}{settings.file_delim}{tp.partition}{settings.file_delim}"
        f"{file.start_offset:0{settings.zero_pad_width}d}{extension}"
    )
    return delim.join(part for part in (prefix, file.directory, name) if part)


class S3Store(FileStore):
    """Uploads committed files to their final object names."""

    def __init__(self, values: dict[str, Any], settings: StorageSettings, extension: str) -> None:
        from boto3.s3.transfer import TransferConfig

        self.bucket: str = values[S3_BUCKET]
        self.endpoint = values[STORE_URL] or f"AWS S3 ({values[S3_REGION]})"
        self.settings = settings
        self.extension = extension
        self.client = s3_client(values)
        part_size = values[PART_SIZE]
        self.transfer = TransferConfig(multipart_threshold=part_size, multipart_chunksize=part_size)
        self._check_bucket()

    def _check_bucket(self) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.head_bucket(Bucket=self.bucket)
        except ClientError as exc:
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status == 404:
                raise ConnectError(f"Non-existent S3 bucket: {self.bucket} (at {self.endpoint})") from exc
            if status in (401, 403):
                raise ConnectError(
                    f"Access to S3 bucket {self.bucket} at {self.endpoint} was refused ({_describe(exc)}): "
                    f"check {ACCESS_KEY} and {SECRET_KEY}"
                ) from exc
            raise ConnectError(f"S3 bucket {self.bucket} at {self.endpoint}: {_describe(exc)}") from exc
        except BotoCoreError as exc:
            raise ConnectError(f"Could not reach S3 at {self.endpoint}: {exc}") from exc

    def commit(self, tp: TopicPartition, files: list[ReadyFile], next_offset: int) -> None:
        from boto3.exceptions import S3UploadFailedError
        from botocore.exceptions import BotoCoreError, ClientError

        for file in files:
            key = object_key(self.settings, tp, file, self.extension)
            try:
                self.client.upload_file(str(file.local_path), self.bucket, key, Config=self.transfer)
            except (S3UploadFailedError, ClientError, BotoCoreError) as exc:
                raise ConnectError(
                    f"Uploading s3://{self.bucket}/{key} ({file.records} records of {tp}) to {self.endpoint} "
                    f"failed: {_describe(exc)}"
                ) from exc
            log.debug("Committed s3://%s/%s: %s records", self.bucket, key, file.records)

    def close(self) -> None:
        self.client.close()


class S3SinkTask(StorageSinkTask):
    store_kind = "s3"

    def config_def(self) -> ConfigDef:
        return CONFIG_DEF

    def make_store(self, values: dict[str, Any], fmt: Format) -> FileStore:
        return S3Store(values, self.settings, fmt.extension)


class S3SinkConnector(StorageSinkConnector):
    """Writes records to S3 objects (Confluent's ``io.confluent.connect.s3.S3SinkConnector``)."""

    store_kind = "s3"

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def task_class(self) -> type[Task]:
        return S3SinkTask
