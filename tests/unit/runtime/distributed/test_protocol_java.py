"""Cross-check of the group protocol bytes against Apache Kafka Connect 4.3.1 itself.

A small Java program, compiled at test time against Kafka Connect's jars, encodes
metadata and assignments with ``ConnectProtocol``/``IncrementalCooperativeConnectProtocol``
and decodes ours. Skipped when there is no JDK or when the jars are not in the local cache
(``./dev setup`` fetches them; this test never downloads).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from sluice.runtime.distributed.protocol import (
    Assignment,
    WorkerState,
    decode_assignment_with_version,
    decode_metadata,
    encode_assignment,
    encode_metadata,
)

JAVA_SOURCE = r"""
import java.nio.ByteBuffer;
import java.util.*;
import org.apache.kafka.connect.runtime.distributed.*;
import org.apache.kafka.connect.util.ConnectorTaskId;

public class ProtocolProbe {
    static String hex(ByteBuffer buffer) {
        StringBuilder out = new StringBuilder();
        ByteBuffer copy = buffer.duplicate();
        while (copy.hasRemaining()) out.append(String.format("%02x", copy.get()));
        return out.toString();
    }
    static ByteBuffer bytes(String hex) {
        byte[] data = new byte[hex.length() / 2];
        for (int i = 0; i < data.length; i++) data[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        return ByteBuffer.wrap(data);
    }
    static String names(Collection<String> names) {
        List<String> sorted = new ArrayList<>(names); Collections.sort(sorted); return String.join(",", sorted);
    }
    static String ids(Collection<ConnectorTaskId> ids) {
        List<String> sorted = new ArrayList<>();
        for (ConnectorTaskId id : ids) sorted.add(id.connector() + ":" + id.task());
        Collections.sort(sorted); return String.join(",", sorted);
    }
    static String show(ExtendedAssignment a) {
        if (a == null) return "null";
        return a.version() + "|" + a.error() + "|" + a.leader() + "|" + a.leaderUrl() + "|" + a.offset() + "|"
            + names(a.connectors()) + "|" + ids(a.tasks()) + "|" + names(a.revokedConnectors()) + "|"
            + ids(a.revokedTasks()) + "|" + a.delay();
    }
    static List<ConnectorTaskId> tasks(String... specs) {
        List<ConnectorTaskId> out = new ArrayList<>();
        for (String spec : specs) {
            String[] p = spec.split(":");
            out.add(new ConnectorTaskId(p[0], Integer.parseInt(p[1])));
        }
        return out;
    }
    public static void main(String[] args) {
        ExtendedAssignment one = new ExtendedAssignment((short) 1, (short) 0, "connect-1-abc", "http://w1:8083/", 42L,
            List.of("src"), tasks("src:0", "src:1"), List.of(), tasks("src:7"), 1500);
        ExtendedAssignment many = new ExtendedAssignment((short) 2, (short) 1, "L", "http://l/", 7L,
            List.of("c1", "c2"), tasks("c1:0", "c3:5", "c2:1"), List.of("c4"), tasks("c5:0", "c4:2"), 0);
        System.out.println("assignment_v1=" + hex(
            IncrementalCooperativeConnectProtocol.serializeAssignment(one, false)));
        System.out.println("assignment_v2=" + hex(
            IncrementalCooperativeConnectProtocol.serializeAssignment(one, true)));
        System.out.println("assignment_many=" + hex(
            IncrementalCooperativeConnectProtocol.serializeAssignment(many, true)));
        System.out.println("assignment_v0=" + hex(ConnectProtocol.serializeAssignment(new ConnectProtocol.Assignment(
            (short) 0, "L", "http://l/", -1L, List.of("a"), tasks("a:0", "a:3")))));
        System.out.println("metadata_v0=" + hex(ConnectProtocol.serializeMetadata(
            new ConnectProtocol.WorkerState("http://w:8083/", 12L))));
        System.out.println("metadata_v1_null=" + hex(IncrementalCooperativeConnectProtocol.serializeMetadata(
            new ExtendedWorkerState("http://w:8083/", 12L, null), false)));
        System.out.println("metadata_v2=" + hex(IncrementalCooperativeConnectProtocol.serializeMetadata(
            new ExtendedWorkerState("http://w:8083/", 12L, one), true)));
        for (int i = 0; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            if (kv[0].startsWith("metadata")) {
                ExtendedWorkerState state = IncrementalCooperativeConnectProtocol.deserializeMetadata(bytes(kv[1]));
                ExtendedAssignment inner = state.assignment() == ExtendedAssignment.empty() ? null : state.assignment();
                System.out.println("decoded:" + kv[0] + "=" + state.url() + "|" + state.offset() + "|" + show(inner));
            } else {
                System.out.println("decoded:" + kv[0] + "=" + show(
                    IncrementalCooperativeConnectProtocol.deserializeAssignment(bytes(kv[1]))));
            }
        }
    }
}
"""

ONE = Assignment(
    error=0,
    leader="connect-1-abc",
    leader_url="http://w1:8083/",
    config_offset=42,
    connectors=["src"],
    tasks=[("src", 0), ("src", 1)],
    revoked_tasks=[("src", 7)],
    delay_ms=1500,
)
MANY = Assignment(
    error=1,
    leader="L",
    leader_url="http://l/",
    config_offset=7,
    connectors=["c1", "c2"],
    tasks=[("c1", 0), ("c3", 5), ("c2", 1)],
    revoked_connectors=["c4"],
    revoked_tasks=[("c5", 0), ("c4", 2)],
    delay_ms=0,
)
EAGER = Assignment(
    error=0, leader="L", leader_url="http://l/", config_offset=-1, connectors=["a"], tasks=[("a", 0), ("a", 3)]
)


def _show(version: int, a: Assignment | None) -> str:
    if a is None:
        return "null"
    return "|".join(
        [
            str(version),
            str(a.error),
            str(a.leader),
            str(a.leader_url),
            str(a.config_offset),
            ",".join(sorted(a.connectors)),
            ",".join(sorted(f"{c}:{t}" for c, t in a.tasks)),
            ",".join(sorted(a.revoked_connectors)),
            ",".join(sorted(f"{c}:{t}" for c, t in a.revoked_tasks)),
            str(a.delay_ms),
        ]
    )


def _connect_jars() -> Path | None:
    from sluice.jvm.cache import jvm_dir
    from sluice_devtools.jars import KAFKA_VERSION

    directory = jvm_dir(create=False) / f"kafka-connect-{KAFKA_VERSION}"
    needed = [
        f"connect-runtime-{KAFKA_VERSION}.jar",
        f"kafka-clients-{KAFKA_VERSION}.jar",
        f"connect-api-{KAFKA_VERSION}.jar",
    ]
    if all((directory / jar).is_file() for jar in needed):
        return directory
    return None


@pytest.fixture(scope="module")
def java_output(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    javac, java = shutil.which("javac"), shutil.which("java")
    jars = _connect_jars()
    if not javac or not java:
        pytest.skip("no JDK (javac) on PATH")
    if jars is None:
        pytest.skip("Kafka Connect jars are not in the local cache (./dev setup fetches them)")
    work = tmp_path_factory.mktemp("java-probe")
    (work / "ProtocolProbe.java").write_text(JAVA_SOURCE)
    classpath = f"{jars}/*"
    subprocess.run(
        [javac, "-nowarn", "-cp", classpath, "-d", str(work), str(work / "ProtocolProbe.java")],
        check=True,
        capture_output=True,
        timeout=60,
    )
    ours = {
        "assignment_v1": encode_assignment(ONE, 1).hex(),
        "assignment_many": encode_assignment(MANY, 2).hex(),
        "assignment_v0": encode_assignment(EAGER, 0).hex(),
        "metadata_v1_null": encode_metadata(WorkerState("http://w:8083/", 12), 1).hex(),
        "metadata_v2": encode_metadata(WorkerState("http://w:8083/", 12, ONE), 2).hex(),
    }
    run = subprocess.run(
        [java, "-cp", f"{work}:{classpath}", "ProtocolProbe", *(f"{k}={v}" for k, v in ours.items())],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return dict(line.split("=", 1) for line in run.stdout.splitlines() if "=" in line)


def test_single_connector_bytes_equal_kafkas(java_output: dict[str, str]) -> None:
    assert encode_assignment(ONE, 1).hex() == java_output["assignment_v1"]
    assert encode_assignment(ONE, 2).hex() == java_output["assignment_v2"]
    assert encode_assignment(EAGER, 0).hex() == java_output["assignment_v0"]
    assert encode_metadata(WorkerState("http://w:8083/", 12), 0).hex() == java_output["metadata_v0"]
    assert encode_metadata(WorkerState("http://w:8083/", 12), 1).hex() == java_output["metadata_v1_null"]
    assert encode_metadata(WorkerState("http://w:8083/", 12, ONE), 2).hex() == java_output["metadata_v2"]


def test_we_read_what_kafka_writes(java_output: dict[str, str]) -> None:
    version, many = decode_assignment_with_version(bytes.fromhex(java_output["assignment_many"]))
    assert _show(version, many) == _show(2, MANY)
    version, eager = decode_assignment_with_version(bytes.fromhex(java_output["assignment_v0"]))
    assert _show(version, eager) == _show(0, EAGER)
    state = decode_metadata(bytes.fromhex(java_output["metadata_v2"]))
    assert (state.url, state.config_offset, _show(2, state.assignment)) == ("http://w:8083/", 12, _show(2, ONE))
    assert decode_metadata(bytes.fromhex(java_output["metadata_v0"])) == WorkerState("http://w:8083/", 12)


def test_kafka_reads_what_we_write(java_output: dict[str, str]) -> None:
    assert java_output["decoded:assignment_v1"] == _show(1, ONE)
    assert java_output["decoded:assignment_many"] == _show(2, MANY)
    assert java_output["decoded:assignment_v0"] == _show(0, EAGER)
    assert java_output["decoded:metadata_v1_null"] == "http://w:8083/|12|null"
    assert java_output["decoded:metadata_v2"] == f"http://w:8083/|12|{_show(2, ONE)}"
