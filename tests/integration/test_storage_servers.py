"""The storage servers of the project's tooling: S3 (s3proxy) and HDFS (Hadoop's minicluster)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import boto3
import httpx2
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from sluice_devtools.processes import has_exited
from sluice_devtools.storage_servers import HdfsCluster, S3Server
from tests import http_client

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("storage")]

MIB = 1024 * 1024


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sluice_devtools.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _bucket(unique_name: str) -> str:
    """A valid bucket name (lowercase, 3-63 characters) from a test's unique name."""
    return re.sub(r"[^a-z0-9-]+", "-", unique_name.lower())[-63:].strip("-")


# ----------------------------------------------------------------------------- S3


def test_s3_multipart_upload_round_trip(s3_server: S3Server, unique_name: str) -> None:
    bucket = _bucket(unique_name)
    s3_server.create_bucket(bucket)
    s3_server.create_bucket(bucket)  # already there: a no-op
    client = s3_server.client()
    parts = [os.urandom(5 * MIB), os.urandom(MIB + 123)]  # every part but the last >= 5 MiB

    upload = client.create_multipart_upload(Bucket=bucket, Key="dir/big.bin")
    etags = [
        client.upload_part(Bucket=bucket, Key="dir/big.bin", UploadId=upload["UploadId"], PartNumber=n, Body=part)[
            "ETag"
        ]
        for n, part in enumerate(parts, start=1)
    ]
    client.complete_multipart_upload(
        Bucket=bucket,
        Key="dir/big.bin",
        UploadId=upload["UploadId"],
        MultipartUpload={"Parts": [{"ETag": etag, "PartNumber": n} for n, etag in enumerate(etags, start=1)]},
    )

    assert client.get_object(Bucket=bucket, Key="dir/big.bin")["Body"].read() == b"".join(parts)
    head = client.head_object(Bucket=bucket, Key="dir/big.bin")
    assert head["ContentLength"] == sum(len(p) for p in parts)
    assert head["ETag"].endswith('-2"')  # a multipart object's ETag counts its parts
    listed = client.list_objects_v2(Bucket=bucket, Prefix="dir/")
    assert [o["Key"] for o in listed["Contents"]] == ["dir/big.bin"]


def test_s3_refuses_a_wrong_secret_key(s3_server: S3Server) -> None:
    client = boto3.client(
        "s3",
        endpoint_url=s3_server.endpoint_url,
        aws_access_key_id=s3_server.access_key,
        aws_secret_access_key="not-" + s3_server.secret_key,
        region_name=s3_server.region,
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
    )
    with pytest.raises(ClientError) as refused:
        client.list_buckets()
    error: dict[str, Any] = refused.value.response
    assert error["Error"]["Code"] == "SignatureDoesNotMatch"
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 403


def test_s3_objects_survive_a_restart_and_the_cli_runs_the_server(tmp_path: Path) -> None:
    work_dir = str(tmp_path / "s3")
    try:
        started = _cli("s3", "start", "--dir", work_dir)
        assert started.returncode == 0, started.stderr
        endpoint, *details = started.stdout.splitlines()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", endpoint), started.stdout
        assert details == ["bucket: sluice", "access key: sluice", "secret key: sluice-secret", "region: us-east-1"]
        server = S3Server.from_state(work_dir)
        assert [b["Name"] for b in server.client().list_buckets()["Buckets"]] == ["sluice"]  # etc/'s s3-sink
        pid = server.pid
        assert pid is not None and server.endpoint_url == endpoint

        server.create_bucket("kept")
        server.client().put_object(Bucket="kept", Key="a/b.txt", Body=b"still here")

        status = _cli("s3", "status", "--dir", work_dir)
        assert status.returncode == 0, status.stderr
        assert f"pid={pid}" in status.stdout and endpoint in status.stdout

        stopped = _cli("s3", "stop", "--dir", work_dir)
        assert (stopped.returncode, stopped.stdout.strip()) == (0, "stopped"), stopped.stderr
        assert has_exited(pid)
        status = _cli("s3", "status", "--dir", work_dir)
        assert status.returncode == 1 and status.stdout.startswith("stopped")
        assert not server.status().running

        assert server.start() == endpoint  # the same port when still free
        assert server.pid not in (None, pid)
        assert server.client().get_object(Bucket="kept", Key="a/b.txt")["Body"].read() == b"still here"
    finally:
        S3Server(work_dir).stop()


# ----------------------------------------------------------------------------- HDFS


def _webhdfs(cluster: HdfsCluster, method: str, path: str, op: str, **params: str) -> httpx2.Response:
    url = f"{cluster.webhdfs_url}/webhdfs/v1{urllib.parse.quote(path)}"
    return http_client.request(method, url, params={"op": op, **params}, timeout=30)


def test_webhdfs_file_operations(hdfs_cluster: HdfsCluster, unique_name: str) -> None:
    base = f"/{unique_name}"
    made = _webhdfs(hdfs_cluster, "PUT", f"{base}/in", "MKDIRS")
    assert made.status_code == 200 and made.json() == {"boolean": True}

    # CREATE: the NameNode redirects to a DataNode, which takes the data.
    redirect = _webhdfs(hdfs_cluster, "PUT", f"{base}/in/a.txt", "CREATE", overwrite="false")
    assert redirect.status_code == 307
    location = redirect.headers["Location"]
    assert urllib.parse.urlsplit(location).hostname == "127.0.0.1", location
    data = os.urandom(300_000)
    created = http_client.put(location, content=data, timeout=30)
    assert created.status_code == 201, created.text

    opened = _webhdfs(hdfs_cluster, "GET", f"{base}/in/a.txt", "OPEN")
    assert opened.status_code == 307  # reads are redirected too
    assert http_client.get(opened.headers["Location"], timeout=30).content == data

    renamed = _webhdfs(hdfs_cluster, "PUT", f"{base}/in/a.txt", "RENAME", destination=f"{base}/in/b.txt")
    assert renamed.json() == {"boolean": True}
    listed = _webhdfs(hdfs_cluster, "GET", f"{base}/in", "LISTSTATUS").json()["FileStatuses"]["FileStatus"]
    assert [(s["pathSuffix"], s["type"], s["length"]) for s in listed] == [("b.txt", "FILE", len(data))]

    deleted = _webhdfs(hdfs_cluster, "DELETE", base, "DELETE", recursive="true")
    assert deleted.json() == {"boolean": True}
    assert _webhdfs(hdfs_cluster, "GET", base, "GETFILESTATUS").status_code == 404


def test_hdfs_status_before_and_after_stop_and_the_cli(tmp_path: Path) -> None:
    work_dir = tmp_path / "hdfs"
    try:
        started = _cli("hdfs", "start", "--dir", str(work_dir))
        assert started.returncode == 0, started.stderr
        hdfs_url, webhdfs_line = started.stdout.splitlines()
        assert re.fullmatch(r"hdfs://127\.0\.0\.1:\d+", hdfs_url), started.stdout
        assert re.fullmatch(r"webhdfs: http://127\.0\.0\.1:\d+", webhdfs_line), started.stdout

        cluster = HdfsCluster.from_state(work_dir)  # as another process sees it
        status = cluster.status()
        assert status.running and status.pid is not None
        assert (status.address("hdfs"), f"webhdfs: {status.address('webhdfs')}") == (hdfs_url, webhdfs_line)
        assert cluster.live_datanodes() == 1
        port = hdfs_url.rsplit(":", 1)[1]
        default_fs = re.search(r"<name>fs.defaultFS</name><value>([^<]*)</value>", cluster.config_file.read_text())
        assert default_fs is not None
        # Hadoop leaves out its default port (8020, which `start` takes when free)
        assert default_fs.group(1) in (f"hdfs://localhost:{port}", "hdfs://localhost" if port == "8020" else None)
        cli_status = _cli("hdfs", "status", "--dir", str(work_dir))
        assert cli_status.returncode == 0 and f"pid={status.pid}" in cli_status.stdout

        assert cluster.stop() is True
        assert has_exited(status.pid)
        after = cluster.status()
        assert (after.running, after.pid, after.address("hdfs"), after.address("webhdfs")) == (False, None, None, None)
        assert HdfsCluster(work_dir).status().running is False
        assert cluster.stop() is False  # idempotent
        cli_status = _cli("hdfs", "status", "--dir", str(work_dir))
        assert cli_status.returncode == 1 and cli_status.stdout.startswith("stopped")
    finally:
        HdfsCluster(work_dir).stop()
