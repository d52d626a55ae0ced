"""Input data, topic filling, sink-file tailing and the correctness checks of every run.

Every input line is 100 bytes: 99 ASCII characters and ``\\n``. A throughput line starts
with its 12-digit sequence number, so lines are unique and sort in input order; a latency
line also carries the wall-clock time (ns) at which it was appended to the input file.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition

from sluice_devtools.kafka import quiet_client_logger

LINE_BYTES = 100
_FILL = b"x" * 86

STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"

# converter id -> (label, connector-level converter settings)
CONVERTERS: dict[str, tuple[str, dict[str, str]]] = {
    "json": (
        "JsonConverter (schemas off)",
        {
            "key.converter": JSON_CONVERTER,
            "key.converter.schemas.enable": "false",
            "value.converter": JSON_CONVERTER,
            "value.converter.schemas.enable": "false",
        },
    ),
    "string": ("StringConverter", {"key.converter": STRING_CONVERTER, "value.converter": STRING_CONVERTER}),
}


class CorrectnessError(Exception):
    """The output does not hold every input line exactly once."""


def line(seq: int) -> bytes:
    """Input line ``seq`` without its newline (99 bytes)."""
    return b"%012d-" % seq + _FILL


def encoded_value(converter: str, text: bytes) -> bytes:
    """The record value a FileStreamSource writes for ``text`` with this converter."""
    if converter == "string":
        return text
    return json.dumps(text.decode()).encode()


@dataclass(frozen=True)
class InputFile:
    path: Path
    lines: int
    size: int
    sha256: str


def write_input(path: Path, lines: int) -> InputFile:
    """``lines`` throughput lines (0 .. lines-1) into ``path``."""
    digest = hashlib.sha256()
    size = 0
    with path.open("wb") as out:
        for start in range(0, lines, 10_000):
            chunk = b"".join(line(i) + b"\n" for i in range(start, min(lines, start + 10_000)))
            digest.update(chunk)
            size += len(chunk)
            out.write(chunk)
    return InputFile(path, lines, size, digest.hexdigest())


def _client_config(bootstrap: str) -> dict[str, object]:
    return {"bootstrap.servers": bootstrap, "logger": quiet_client_logger()}


def fill_topic(bootstrap: str, topic: str, lines: int, converter: str, partitions: int = 1) -> None:
    """Produce input lines 0..lines-1 as a FileStreamSource would (null keys); line i goes to
    partition i % partitions. Checks that the topic ends up with exactly ``lines`` records."""
    produce_all(bootstrap, topic, (encoded_value(converter, line(i)) for i in range(lines)), partitions)


def produce_all(bootstrap: str, topic: str, values: Iterable[bytes], partitions: int = 1) -> int:
    """Produce ``values`` (null keys; value i to partition i % partitions) and check that the
    topic then holds exactly that many records; returns the count."""
    producer = Producer(
        {
            **_client_config(bootstrap),
            "linger.ms": 50,
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 1_000_000,
            "acks": "all",
        }
    )
    errors: list[str] = []

    def on_delivery(err: object, _msg: object) -> None:
        if err is not None:
            errors.append(str(err))

    count = 0
    for i, value in enumerate(values):
        while True:
            try:
                producer.produce(topic, value, partition=i % partitions, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
        count = i + 1
    remaining = producer.flush(120)
    if remaining or errors:
        raise RuntimeError(f"filling {topic}: {remaining} undelivered, errors {errors[:3]}")
    total = sum(end_offsets(bootstrap, topic, partitions))
    if total != count:
        raise RuntimeError(f"filling {topic}: the topic holds {total} records, not {count}")
    return count


class OffsetWatcher:
    """End offsets of a topic's partitions, through one long-lived consumer (no group)."""

    def __init__(self, bootstrap: str, topic: str, partitions: int = 1) -> None:
        self.topic, self.partitions = topic, partitions
        self._consumer = Consumer(
            {**_client_config(bootstrap), "group.id": f"bench-watch-{topic}", "enable.auto.commit": False}
        )

    def end_offsets(self) -> list[int]:
        return [
            self._consumer.get_watermark_offsets(TopicPartition(self.topic, p), timeout=10, cached=False)[1]
            for p in range(self.partitions)
        ]

    def total(self) -> int:
        return sum(self.end_offsets())

    def close(self) -> None:
        self._consumer.close()


def end_offsets(bootstrap: str, topic: str, partitions: int = 1) -> list[int]:
    watcher = OffsetWatcher(bootstrap, topic, partitions)
    try:
        return watcher.end_offsets()
    finally:
        watcher.close()


@dataclass(frozen=True)
class Record:
    key: bytes | None
    value: bytes | None
    timestamp: float  # the record's timestamp, seconds since the epoch
    partition: int
    offset: int


def read_records(bootstrap: str, topic: str, limit: int | None = None) -> list[Record]:
    """The records of every partition of ``topic`` up to its end offsets at the call (at most
    ``limit`` per partition), partition by partition."""
    consumer = Consumer({**_client_config(bootstrap), "group.id": f"bench-read-{topic}", "enable.auto.commit": False})
    try:
        partitions = sorted(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
        ends = {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10, cached=False) for p in partitions
        }
        wanted = {p: hi if limit is None else min(hi, lo + limit) for p, (lo, hi) in ends.items()}
        todo = {p for p in partitions if wanted[p] > ends[p][0]}
        consumer.assign([TopicPartition(topic, p, ends[p][0]) for p in todo])
        records: list[Record] = []
        deadline = time.monotonic() + 60
        while todo:
            if time.monotonic() > deadline:
                raise RuntimeError(f"reading {topic}: partitions {sorted(todo)} not read to their end in 60 s")
            batch = consumer.consume(1000, 0.5)
            for msg in batch:
                if msg.error() is not None:
                    continue
                p = msg.partition()
                if p in todo and msg.offset() < wanted[p]:
                    records.append(Record(msg.key(), msg.value(), msg.timestamp()[1] / 1000, p, msg.offset()))
                    if msg.offset() + 1 >= wanted[p]:
                        todo.discard(p)
            if not batch:  # the last offsets may be transaction markers, never delivered
                for tp in consumer.position([TopicPartition(topic, p) for p in todo]):
                    if tp.offset >= wanted[tp.partition]:
                        todo.discard(tp.partition)
        return sorted(records, key=lambda r: (r.partition, r.offset))
    finally:
        consumer.close()


def verify_topic(bootstrap: str, topic: str, lines: int, converter: str) -> None:
    """The single-partition ``topic`` holds exactly the records of input lines 0..lines-1, in
    order, with null keys; raises :class:`CorrectnessError` otherwise."""
    end = end_offsets(bootstrap, topic)[0]
    if end != lines:
        raise CorrectnessError(
            f"topic {topic} holds {end} records, expected {lines} ({'lost' if end < lines else 'repeated'} records)"
        )
    consumer = Consumer(
        {
            **_client_config(bootstrap),
            "group.id": f"bench-verify-{topic}",
            "enable.auto.commit": False,
            "fetch.max.bytes": 50_000_000,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        seen = 0
        deadline = time.monotonic() + 300
        while seen < lines:
            if time.monotonic() > deadline:
                raise CorrectnessError(f"topic {topic}: read only {seen} of {lines} records back")
            for msg in consumer.consume(10_000, 1.0):
                if msg.error() is not None:
                    raise CorrectnessError(f"topic {topic}: {msg.error()}")
                expected = encoded_value(converter, line(seen))
                if msg.value() != expected or msg.key() is not None:
                    raise CorrectnessError(
                        f"topic {topic} offset {msg.offset()}: key={msg.key()!r} value={msg.value()!r}, "
                        f"expected key=None value={expected!r}"
                    )
                seen += 1
    finally:
        consumer.close()


def file_digest(path: Path) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def verify_file_ordered(path: Path, expected: InputFile) -> None:
    """``path`` is byte-for-byte the input (every line once, in order)."""
    if not path.exists():
        raise CorrectnessError(f"{path.name} does not exist")
    size, digest = file_digest(path)
    if (size, digest) == (expected.size, expected.sha256):
        return
    raise CorrectnessError(f"{path.name} differs from the input: {_describe_difference(path, expected.lines)}")


def verify_file_unordered(path: Path, lines: int) -> None:
    """``path`` holds input lines 0..lines-1, each exactly once, in any order."""
    if not path.exists():
        raise CorrectnessError(f"{path.name} does not exist")
    got = sorted(path.read_bytes().split(b"\n"))
    if got and got[0] == b"":
        got.pop(0)  # the empty piece after the last newline
    expected = [line(i) for i in range(lines)]
    if got != expected:
        raise CorrectnessError(f"{path.name} does not hold each input line once: {_describe_difference(path, lines)}")


def _describe_difference(path: Path, lines: int) -> str:
    data = path.read_bytes()
    pieces = data.split(b"\n")
    tail = pieces.pop() if pieces else b""
    counts: dict[bytes, int] = {}
    for piece in pieces:
        counts[piece] = counts.get(piece, 0) + 1
    expected = {line(i) for i in range(lines)}
    missing = sum(1 for e in expected if e not in counts)
    repeated = sum(c - 1 for p, c in counts.items() if c > 1)
    foreign = sum(c for p, c in counts.items() if p not in expected)
    order = ""
    if not missing and not repeated and not foreign and not tail:
        order = "; same lines but in a different order"
    return (
        f"{len(pieces)} lines (expected {lines}): {missing} missing, {repeated} repeated, "
        f"{foreign} not from the input{', unterminated last line' if tail else ''}{order}"
    )


@dataclass
class Tail:
    """Follows a growing file from its start, counting complete lines as they appear.

    ``poll()`` reads only the bytes added since the previous call. With ``keep_arrivals``
    each complete line is kept with the wall-clock time (ns) at which it was first seen.
    """

    path: Path
    keep_arrivals: bool = False
    lines: int = 0
    first_seen: float | None = None  # monotonic time of the first complete line
    arrivals: list[tuple[bytes, int]] = field(default_factory=list)
    _offset: int = 0
    _partial: bytes = b""

    def poll(self) -> int:
        try:
            with self.path.open("rb") as f:
                f.seek(self._offset)
                data = f.read()
        except FileNotFoundError:
            return self.lines
        if not data:
            return self.lines
        now_ns, now = time.time_ns(), time.monotonic()
        self._offset += len(data)
        new = data.count(b"\n")
        if new and self.first_seen is None:
            self.first_seen = now
        if self.keep_arrivals:
            pieces = (self._partial + data).split(b"\n")
            self._partial = pieces.pop()
            self.arrivals.extend((p, now_ns) for p in pieces)
        self.lines += new
        return self.lines


class RateWriter(threading.Thread):
    """Appends latency lines to ``path`` at ``rate`` lines per second for ``seconds``.

    Every 5 ms it appends (with one unbuffered ``write``) the lines due by then, each
    carrying its sequence number and the wall-clock time of that write.
    """

    def __init__(self, path: Path, rate: int, seconds: float) -> None:
        super().__init__(daemon=True, name="rate-writer")
        self.path, self.rate, self.seconds = path, rate, seconds
        self.total = int(rate * seconds)
        self.written = 0
        self.digest = hashlib.sha256()
        self.size = 0
        self.max_behind = 0  # most lines that were due but not yet written (writer falling behind)
        self._stopping = threading.Event()

    @staticmethod
    def make_line(seq: int, ts_ns: int) -> bytes:
        text = b"%012d %019d " % (seq, ts_ns)
        return text + b"y" * (LINE_BYTES - 1 - len(text)) + b"\n"

    def run(self) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            start = time.monotonic()
            while self.written < self.total and not self._stopping.is_set():
                due = min(self.total, int((time.monotonic() - start) * self.rate) + 1)
                if due > self.written:
                    self.max_behind = max(self.max_behind, due - self.written)
                    ts = time.time_ns()
                    chunk = b"".join(self.make_line(s, ts) for s in range(self.written, due))
                    os.write(fd, chunk)
                    self.digest.update(chunk)
                    self.size += len(chunk)
                    self.written = due
                self._stopping.wait(0.005)
        finally:
            os.close(fd)

    def stop(self) -> None:
        self._stopping.set()


def latency_ms(arrivals: list[tuple[bytes, int]], skip_seq: int) -> array:
    """End-to-end latency (ms) of each arrived line whose sequence number is >= ``skip_seq``."""
    out = array("d")
    for text, arrived in arrivals:
        seq, ts = int(text[:12]), int(text[13:32])
        if seq >= skip_seq:
            out.append((arrived - ts) / 1e6)
    return out


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    if not sorted_values:
        return float("nan")
    rank = max(1, min(len(sorted_values), int(-(-q * len(sorted_values) // 100))))
    return sorted_values[rank - 1]
