"""The standalone offset file: Java serialization of HashMap<byte[], byte[]> and the store."""

from __future__ import annotations

import json
import logging
import os
import struct
import threading
from pathlib import Path

import pytest

from sluice.api.errors import ConnectError, IllegalWorkerStateError
from sluice.kafka.offset_format import encode_offset_key, encode_offset_value
from sluice.storage import FileOffsetBackingStore
from sluice.storage.java_serialization import (
    JavaSerializationError,
    TruncatedStreamError,
    dump_hashmap,
    hashmap_capacity_and_threshold,
    load_hashmap,
)
from sluice.storage.offset_codec import connector_offsets

from . import compile_java, kafka_classpath, requires_javac, requires_kafka_jars, run_java

# What OpenJDK 17 writes for new HashMap<byte[], byte[]>() after put("k0","v0"), put("k1",null).
JAVA_EMPTY = bytes.fromhex(
    "aced0005737200116a6176612e7574696c2e486173684d61700507dac1c31660d10300024600"
    "0a6c6f6164466163746f724900097468726573686f6c6478703f40000000000000770800000010"
    "0000000078"
)
JAVA_TWO = bytes.fromhex(
    "aced0005737200116a6176612e7574696c2e486173684d61700507dac1c31660d10300024600"
    "0a6c6f6164466163746f724900097468726573686f6c6478703f4000000000000c770800000010"
    "00000002757200025b42acf317f8060854e00200007870000000026b307571007e00020000000276"
    "307571007e0002000000026b317078"
)
# everything before the field values: magic, HashMap class descriptor, TC_OBJECT
HEADER_LEN = len(JAVA_EMPTY) - 8 - 2 - 8 - 1  # fields, 77 08, capacity+size, 78


def entries(n: int) -> dict[bytes, bytes | None]:
    result: dict[bytes, bytes | None] = {}
    for i in range(n):
        key = encode_offset_key("conn-ü", {"file": f"/data/{i}.txt"})
        result[key] = None if i % 5 == 4 else encode_offset_value({"position": i * 1000})
    return result


# --------------------------------------------------------------------------- serialization


def test_golden_bytes_match_openjdk() -> None:
    assert dump_hashmap({}) == JAVA_EMPTY
    assert dump_hashmap({b"k0": b"v0", b"k1": None}) == JAVA_TWO
    assert load_hashmap(JAVA_TWO) == {b"k0": b"v0", b"k1": None}
    assert load_hashmap(JAVA_EMPTY) == {}


@pytest.mark.parametrize(
    ("size", "capacity", "threshold"),
    [(0, 16, 0), (1, 16, 12), (12, 16, 12), (13, 32, 24), (24, 32, 24), (25, 64, 48), (100, 256, 192)],
)
def test_capacity_and_threshold_follow_java_hashmap(size: int, capacity: int, threshold: int) -> None:
    assert hashmap_capacity_and_threshold(size) == (capacity, threshold)
    data = dump_hashmap(entries(size))
    load_factor, written_threshold = struct.unpack(">fi", data[HEADER_LEN : HEADER_LEN + 8])
    assert (load_factor, written_threshold) == (0.75, threshold)
    assert data[HEADER_LEN + 8 : HEADER_LEN + 10] == b"\x77\x08"
    assert struct.unpack(">ii", data[HEADER_LEN + 10 : HEADER_LEN + 18]) == (capacity, size)


@pytest.mark.parametrize("size", [0, 1, 13, 100])
def test_round_trip(size: int) -> None:
    original = entries(size)
    data = dump_hashmap(original)
    loaded = load_hashmap(data)
    assert loaded == original
    assert list(loaded) == list(original)  # stream order is kept
    assert data.endswith(b"\x78")


def test_round_trip_edge_values() -> None:
    original = {b"": b"", b"\x00\xff" * 3: bytes(range(256)) * 40, b"big": b"x" * 70_000, b"n": None}
    assert load_hashmap(dump_hashmap(original)) == original


def test_byte_array_descriptor_is_written_once_then_referenced() -> None:
    data = dump_hashmap({b"a": b"1", b"b": b"2", b"c": None})
    assert data.count(b"\x75\x72\x00\x02[B") == 1
    # every later array refers to handle 0x7E0002 (the [B class descriptor)
    assert data.count(b"\x75\x71\x00\x7e\x00\x02") == 4


def _build_stream(body: bytes, size: int, capacity: int = 16) -> bytes:
    """A HashMap stream header + ``body`` as the entries, for hand-made variants."""
    return (
        JAVA_EMPTY[:HEADER_LEN]
        + struct.pack(">fi", 0.75, 12)
        + b"\x77\x08"
        + struct.pack(">ii", capacity, size)
        + body
        + b"\x78"
    )


BYTE_ARRAY_DESC = b"\x72\x00\x02[B" + bytes.fromhex("acf317f8060854e0") + b"\x02\x00\x00\x78\x70"


def test_reads_a_reference_to_an_earlier_array_object() -> None:
    # key: new [B desc (0x7E0002), array 0x7E0003; value: TC_REFERENCE to 0x7E0003 (the
    # same byte[] instance, as Java writes when one array is both key and value).
    body = b"\x75" + BYTE_ARRAY_DESC + b"\x00\x00\x00\x03abc" + b"\x71\x00\x7e\x00\x03"
    body += b"\x75\x71\x00\x7e\x00\x02\x00\x00\x00\x01d" + b"\x71\x00\x7e\x00\x04"
    assert load_hashmap(_build_stream(body, 2)) == {b"abc": b"abc", b"d": b"d"}


def test_reads_block_data_split_or_long_and_resets() -> None:
    one = b"\x75" + BYTE_ARRAY_DESC + b"\x00\x00\x00\x01k\x70"
    split = JAVA_EMPTY[:HEADER_LEN] + struct.pack(">fi", 0.75, 12)
    split += b"\x77\x04" + struct.pack(">i", 16) + b"\x7a" + struct.pack(">i", 4) + struct.pack(">i", 1)
    split += one + b"\x78"
    assert load_hashmap(split) == {b"k": None}
    # a TC_RESET before the top-level object is allowed
    assert load_hashmap(JAVA_TWO[:4] + b"\x79" + JAVA_TWO[4:]) == {b"k0": b"v0", b"k1": None}


def test_every_truncation_is_reported_as_truncated() -> None:
    data = dump_hashmap({b"k0": b"v0", b"k1": None, b"k2": b"v2"})
    for end in range(len(data)):
        with pytest.raises(TruncatedStreamError):
            load_hashmap(data[:end])


@pytest.mark.parametrize(
    "data",
    [
        b"\x00\x01\x02\x03\x04",  # not a stream
        b"\xac\xed\x00\x04" + JAVA_EMPTY[4:],  # wrong version
        b"\xac\xed\x00\x05\x74\x00\x03abc",  # a String, not a HashMap
        b"\xac\xed\x00\x05\x70",  # null
        JAVA_EMPTY.replace(b"java.util.HashMap", b"java.util.HashMop"),  # another class
    ],
)
def test_rejects_other_streams(data: bytes) -> None:
    with pytest.raises(JavaSerializationError):
        load_hashmap(data)


def test_rejects_non_byte_array_entries() -> None:
    body = b"\x74\x00\x01k" + b"\x70"  # a String key
    with pytest.raises(JavaSerializationError, match="not byte"):
        load_hashmap(_build_stream(body, 1))


def test_dump_rejects_bad_types() -> None:
    with pytest.raises(TypeError):
        dump_hashmap({"text": b"v"})  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        dump_hashmap({b"k": "text"})  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        dump_hashmap({None: b"v"})  # type: ignore[dict-item]


# --------------------------------------------------------------------------- against Java

JAVA_PROGRAM = r"""
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

public class OffsetFileInterop {
    static String hex(byte[] b) {
        if (b == null) return "null";
        StringBuilder s = new StringBuilder("x");
        for (byte x : b) s.append(String.format("%02x", x));
        return s.toString();
    }

    static byte[] entryValue(int i) {
        if (i % 5 == 4) return null;
        if (i == 1) { byte[] big = new byte[5000]; for (int j = 0; j < big.length; j++) big[j] = (byte) j; return big; }
        return ("{\"position\":" + i + ",\"note\":\"\u00fc\"}").getBytes(StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        Path file = Paths.get(args[1]);
        if (mode.equals("read")) {
            Object obj;
            try (ObjectInputStream in = new ObjectInputStream(Files.newInputStream(file))) {
                obj = in.readObject();
            }
            System.out.println(obj.getClass().getName());
            for (Map.Entry<?, ?> e : ((Map<?, ?>) obj).entrySet())
                System.out.println(hex((byte[]) e.getKey()) + " " + hex((byte[]) e.getValue()));
            return;
        }
        int n = Integer.parseInt(args[2]);
        Map<byte[], byte[]> map = mode.equals("write-linked") ? new LinkedHashMap<>() : new HashMap<>();
        for (int i = 0; i < n; i++) {
            byte[] key = ("[\"java-conn\",{\"file\":\"/data/" + i + ".txt\"}]").getBytes(StandardCharsets.UTF_8);
            map.put(key, mode.equals("write-shared") && i % 2 == 0 ? key : entryValue(i));
        }
        try (ObjectOutputStream out = new ObjectOutputStream(Files.newOutputStream(file))) {
            out.writeObject(map);
        }
        for (Map.Entry<byte[], byte[]> e : map.entrySet())
            System.out.println(hex(e.getKey()) + " " + hex(e.getValue()));
    }
}
"""


def _parse_entries(lines: list[str]) -> dict[bytes, bytes | None]:
    result: dict[bytes, bytes | None] = {}
    for line in lines:
        key, value = line.split(" ")
        result[bytes.fromhex(key[1:])] = None if value == "null" else bytes.fromhex(value[1:])
    return result


@pytest.fixture(scope="module")
def java_interop(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("java-interop")
    classpath = compile_java(workdir, "OffsetFileInterop", JAVA_PROGRAM)
    return lambda *args: run_java(classpath, "OffsetFileInterop", *args).splitlines()


@requires_javac
@pytest.mark.parametrize("size", [0, 1, 13, 100])
def test_java_reads_what_we_write(java_interop, tmp_path: Path, size: int) -> None:
    expected = entries(size)
    expected[b"large"] = bytes(range(256)) * 50
    path = tmp_path / "offsets"
    path.write_bytes(dump_hashmap(expected))
    lines = java_interop("read", str(path))
    assert lines[0] == "java.util.HashMap"
    assert _parse_entries(lines[1:]) == expected


@requires_javac
@pytest.mark.parametrize("size", [0, 1, 13, 100])
def test_we_read_what_java_writes_byte_for_byte(java_interop, tmp_path: Path, size: int) -> None:
    path = tmp_path / "offsets"
    expected = _parse_entries(java_interop("write", str(path), str(size)))
    data = path.read_bytes()
    loaded = load_hashmap(data)
    assert loaded == expected
    # Writing Java's entries back in Java's iteration order reproduces Java's exact bytes.
    assert dump_hashmap(loaded) == data


@requires_javac
@pytest.mark.parametrize("mode", ["write-shared", "write-linked"])
def test_we_read_java_references_and_subclasses(java_interop, tmp_path: Path, mode: str) -> None:
    path = tmp_path / "offsets"
    expected = _parse_entries(java_interop(mode, str(path), "20"))
    assert load_hashmap(path.read_bytes()) == expected
    if mode == "write-shared":
        assert b"\x71\x00\x7e\x00\x03" in path.read_bytes()  # value = the key's array object


KAFKA_PROGRAM = r"""
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.runtime.standalone.StandaloneConfig;
import org.apache.kafka.connect.storage.FileOffsetBackingStore;

/** Drives Kafka Connect's own FileOffsetBackingStore with its internal JsonConverter. */
public class KafkaOffsetFile {
    public static void main(String[] args) throws Exception {
        String mode = args[0], file = args[1];
        ObjectMapper mapper = new ObjectMapper();
        JsonConverter keyConverter = new JsonConverter();
        keyConverter.configure(Map.of("schemas.enable", "false"), true);
        JsonConverter valueConverter = new JsonConverter();
        valueConverter.configure(Map.of("schemas.enable", "false"), false);
        Map<String, String> props = new HashMap<>();
        props.put("bootstrap.servers", "localhost:9092");
        props.put("key.converter", "org.apache.kafka.connect.json.JsonConverter");
        props.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        props.put("offset.storage.file.filename", file);
        FileOffsetBackingStore store = new FileOffsetBackingStore(keyConverter);
        store.configure(new StandaloneConfig(props));
        store.start();
        try {
            if (mode.equals("write")) {  // args[2]: JSON lines [connector, partition, offset|null]
                Map<ByteBuffer, ByteBuffer> values = new LinkedHashMap<>();
                for (String line : Files.readAllLines(Paths.get(args[2]), StandardCharsets.UTF_8)) {
                    List<?> spec = mapper.readValue(line, List.class);
                    byte[] key = keyConverter.fromConnectData("", null, Arrays.asList(spec.get(0), spec.get(1)));
                    byte[] value = spec.get(2) == null ? null : valueConverter.fromConnectData("", null, spec.get(2));
                    values.put(ByteBuffer.wrap(key), value == null ? null : ByteBuffer.wrap(value));
                }
                store.set(values, null).get();
            } else {  // print [connector, partition, offset] of every partition of args[2..]
                for (int i = 2; i < args.length; i++) {
                    for (Map<String, Object> partition : store.connectorPartitions(args[i])) {
                        byte[] key = keyConverter.fromConnectData("", null, Arrays.asList(args[i], partition));
                        ByteBuffer raw = store.get(List.of(ByteBuffer.wrap(key))).get().get(ByteBuffer.wrap(key));
                        Object offset = raw == null ? null : valueConverter.toConnectData("", raw.array()).value();
                        System.out.println(mapper.writeValueAsString(Arrays.asList(args[i], partition, offset)));
                    }
                }
            }
        } finally {
            store.stop();
        }
    }
}
"""

# Single-key partitions: Kafka looks offsets up by re-serialising a HashMap partition.
KAFKA_CASES = [
    ("local-file-source", {"filename": "/mnt/connect.input"}, {"position": 12}),
    ("local-file-source", {"filename": "/mnt/other.input"}, {"position": 7}),
    ("c-ü", {"file": 'ü😀"\\/\x01\x1f'}, {"pos": 1.5, "big": 10_000_000_000, "s": "x", "t": True}),
    ("c-ü", {"n": 5}, {"offset": -3, "f": 1e10, "z": None}),
]


@pytest.fixture(scope="module")
def kafka_store_program(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("kafka-interop")
    classpath = compile_java(workdir, "KafkaOffsetFile", KAFKA_PROGRAM, kafka_classpath())
    return lambda *args: run_java(classpath, "KafkaOffsetFile", *args).splitlines()


@requires_kafka_jars()
def test_kafka_file_offset_backing_store_reads_our_file(kafka_store_program, tmp_path: Path) -> None:
    path = tmp_path / "connect.offsets"
    store = FileOffsetBackingStore(path)
    store.start()
    store.set({encode_offset_key(c, p): encode_offset_value(o) for c, p, o in KAFKA_CASES})
    store.set({encode_offset_key("local-file-source", {"filename": "/mnt/other.input"}): None})
    store.stop()
    lines = kafka_store_program("read", str(path), "local-file-source", "c-ü")
    got = sorted((json.loads(line) for line in lines), key=json.dumps)
    expected = sorted((list(case) for case in KAFKA_CASES if case != KAFKA_CASES[1]), key=json.dumps)
    assert got == expected


@requires_kafka_jars()
def test_we_read_kafka_file_offset_backing_store_files(kafka_store_program, tmp_path: Path) -> None:
    path = tmp_path / "connect.offsets"
    spec = tmp_path / "spec.jsonl"
    cases = [*KAFKA_CASES, ("c-ü", {"gone": 1}, None)]  # Kafka keeps tombstones as null values
    spec.write_text("".join(json.dumps(list(c), ensure_ascii=False) + "\n" for c in cases), "utf-8")
    kafka_store_program("write", str(path), str(spec))
    raw = load_hashmap(path.read_bytes())
    for connector, partition, offset in cases:  # byte-identical keys and values
        assert raw[encode_offset_key(connector, partition)] == encode_offset_value(offset)
    store = FileOffsetBackingStore(path)
    store.start()
    assert sorted(connector_offsets(store, "c-ü"), key=json.dumps) == sorted(
        ((p, o) for c, p, o in KAFKA_CASES if c == "c-ü"), key=json.dumps
    )
    assert store.get([encode_offset_key("c-ü", {"gone": 1})]) == {encode_offset_key("c-ü", {"gone": 1}): None}
    assert encode_offset_key("c-ü", {"gone": 1}) not in store.all()


# --------------------------------------------------------------------------- the file store


def _started(path: Path) -> FileOffsetBackingStore:
    store = FileOffsetBackingStore(path)
    store.start()
    return store


def test_missing_and_empty_files_mean_no_offsets(tmp_path: Path) -> None:
    assert _started(tmp_path / "missing").all() == {}
    (tmp_path / "empty").write_bytes(b"")
    assert _started(tmp_path / "empty").all() == {}
    assert not (tmp_path / "missing").exists()  # starting does not create the file


def test_truncated_file_is_ignored_like_kafka(tmp_path: Path, caplog) -> None:
    path = tmp_path / "offsets"
    path.write_bytes(dump_hashmap(entries(3))[:-7])
    with caplog.at_level(logging.WARNING, logger="sluice.storage.file"):
        assert _started(path).all() == {}
    assert "truncated" in caplog.text


def test_unreadable_file_fails_start(tmp_path: Path) -> None:
    path = tmp_path / "offsets"
    path.write_bytes(b"this is not an offset file")
    with pytest.raises(ConnectError, match="offsets"):
        _started(path)


def test_set_get_all_and_reload(tmp_path: Path) -> None:
    path = tmp_path / "offsets"
    store = _started(path)
    k1, k2, k3 = (encode_offset_key("c", {"f": str(i)}) for i in range(3))
    store.set({k1: b'{"position":1}', k2: b'{"position":2}'})
    assert store.get([k1, k3]) == {k1: b'{"position":1}', k3: None}
    store.set({k2: b'{"position":22}', k3: b'{"position":3}'})
    assert store.all() == {k1: b'{"position":1}', k2: b'{"position":22}', k3: b'{"position":3}'}
    assert load_hashmap(path.read_bytes()) == store.all()
    store.stop()
    reloaded = _started(path)  # a new worker process
    assert reloaded.all() == {k1: b'{"position":1}', k2: b'{"position":22}', k3: b'{"position":3}'}


def test_tombstones_delete_and_persist(tmp_path: Path) -> None:
    path = tmp_path / "offsets"
    store = _started(path)
    k1, k2 = encode_offset_key("c", {"f": "1"}), encode_offset_key("c", {"f": "2"})
    store.set({k1: b"{}", k2: b"{}"})
    store.set({k1: None, encode_offset_key("c", {"f": "never"}): None})
    assert store.get([k1]) == {k1: None}
    assert store.all() == {k2: b"{}"}
    assert load_hashmap(path.read_bytes()) == {k2: b"{}"}
    store.stop()
    assert _started(path).all() == {k2: b"{}"}


def test_a_failed_rewrite_leaves_the_old_file_and_memory_intact(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "offsets"
    store = _started(path)
    store.set({b"k": b"old"})
    before = path.read_bytes()

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space"):
        store.set({b"k": b"new", b"k2": b"v"})
    assert path.read_bytes() == before
    assert store.all() == {b"k": b"old"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["offsets"]  # no temp file left
    monkeypatch.undo()
    store.set({b"k": b"new"})
    assert _started(path).all() == {b"k": b"new"}


def test_a_failed_fsync_leaves_the_old_file(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "offsets"
    store = _started(path)
    store.set({b"k": b"old"})
    before = path.read_bytes()
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(5, "I/O error")))
    with pytest.raises(OSError):
        store.set({b"k": b"new"})
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["offsets"]


def test_rewrite_fsyncs_file_and_directory(tmp_path: Path, monkeypatch) -> None:
    synced: list[str] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}") if os.path.exists("/proc/self/fd") else "?")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    store = _started(tmp_path / "offsets")
    store.set({b"k": b"v"})
    assert len(synced) == 2
    if synced[1] != "?":
        assert synced[1] == str(tmp_path)


def test_use_before_start_is_refused(tmp_path: Path) -> None:
    store = FileOffsetBackingStore(tmp_path / "offsets")
    with pytest.raises(IllegalWorkerStateError):
        store.set({b"k": b"v"})
    with pytest.raises(IllegalWorkerStateError):
        store.get([b"k"])
    assert not (tmp_path / "offsets").exists()


def test_creates_directories_and_keeps_mode_and_symlinks(tmp_path: Path) -> None:
    nested = tmp_path / "a" / "b" / "offsets"
    _started(nested).set({b"k": b"v"})
    assert load_hashmap(nested.read_bytes()) == {b"k": b"v"}

    nested.chmod(0o640)
    _started(nested).set({b"k": b"v2"})
    assert nested.stat().st_mode & 0o777 == 0o640

    link = tmp_path / "link"
    link.symlink_to(nested)
    _started(link).set({b"k": b"v3"})
    assert link.is_symlink()
    assert load_hashmap(nested.read_bytes()) == {b"k": b"v3"}


def test_concurrent_sets_are_all_kept(tmp_path: Path) -> None:
    path = tmp_path / "offsets"
    store = _started(path)

    def writer(t: int) -> None:
        for i in range(25):
            store.set({encode_offset_key(f"c{t}", {"i": i}): encode_offset_value({"p": i})})

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.all()) == 150
    assert _started(path).all() == store.all()
