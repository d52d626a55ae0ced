"""A task's record pipeline on the executor: converters, the transform chain and the
connector's error policy, between Arrow batches and Connect records.

Sink: Kafka rows ──headers, key, value converters──▶ SinkRecords ──transforms──▶ put().
Source: SourceRecords ──transforms──▶ key, value, header converters ──▶ Kafka rows.

The common case — no transforms, converters with a batch form, no bad record — converts
whole columns in one call per converter. When a column fails to convert, the records are
converted one at a time under the error policy (:mod:`sluice.taskhost.tolerance`): a bad record
is logged, dead-lettered and skipped (``errors.tolerance=all``) or fails the task after the
good records before it were delivered.
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sluice.api.converter import Converter, HeaderConverter
from sluice.api.records import Headers, SinkBatch, SinkRecord, SourceRecord, TimestampType
from sluice.taskhost.consumed import LazyColumns
from sluice.taskhost.tolerance import ErrorPolicy, FailedStep, Stage, ToleranceOperator, context_headers

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["DeadLetter", "RecordPipeline", "SourceRows", "header_pairs", "source_output_schema"]


@functools.cache
def source_output_schema() -> pa.Schema:
    """The rows a source batch hands to Spark's Kafka sink (a split read's). pyarrow is
    imported only where batches are made: a task host that runs tasks record by record
    never loads it (it costs each host process memory, and its allocator's threads make a
    process unsafe to fork from)."""
    import pyarrow as pa

    return pa.schema(
        [
            ("key", pa.binary()),
            ("value", pa.binary()),
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("headers", pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))),
        ]
    )


# Spark's Kafka sink has no timestamp column: a source record's timestamp travels after its
# topic name, which the producer interceptor (jvm/SourceTimestampInterceptor.java) cuts.
TIMESTAMP_SEPARATOR = "\0"
_TIMESTAMP_TYPES = {0: TimestampType.CREATE_TIME, 1: TimestampType.LOG_APPEND_TIME}


@dataclass
class DeadLetter:
    """A sink record for the dead letter queue: the raw consumed record, its headers plus
    the error context headers when enabled."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)

    def headers_json(self) -> str:
        return json.dumps(
            [{"key": k, "value": None if v is None else base64.b64encode(v).decode("ascii")} for k, v in self.headers]
        )


@dataclass
class SourceRows:
    """Polled records, transformed and converted: ``rows`` to produce (columns key, value,
    topic, partition, headers, timestamp; dead letters last), ``owners`` the polled record
    each row stands for, ``processed`` the polled records whose offsets may be committed
    once their rows are acknowledged (written, filtered out, or failed and tolerated), and
    the ``error`` that ended the conversion when the policy did not tolerate it."""

    rows: dict[str, list[Any]]
    owners: list[SourceRecord]
    processed: list[SourceRecord]
    error: BaseException | None
    dead_letters: int = 0  # the last rows: dead letters, not records of the task


class RecordPipeline:
    """One task's converters, transform chain and error policy (one per task instance)."""

    def __init__(
        self,
        connector: str,
        task: int,
        key_converter: tuple[str, Converter],
        value_converter: tuple[str, Converter],
        header_converter: tuple[str, HeaderConverter],
        chain: Any | None,
        policy: ErrorPolicy,
        columnar: bool = True,
    ) -> None:
        """``columnar``: a sink batch goes through the chain whole where every stage has a
        batch form (``Transformation.apply_batch``), else record by record."""
        self.connector = connector
        self.task = task
        self.key_class, self.key_converter = key_converter
        self.value_class, self.value_converter = value_converter
        self.header_class, self.header_converter = header_converter
        self.chain = chain if chain is not None and not chain.is_empty else None
        self.columnar = columnar
        self.policy = policy
        self.operator = ToleranceOperator(policy, f"{connector}-{task}")
        # The topics of the records of the last source batch (dead letters aside).
        self.written_topics: list[str] = []

    def close(self) -> None:
        if self.chain is not None:
            self.chain.close()

    # -- transforms ------------------------------------------------------------------

    def _transform(self, record: Any, dead_letter: Callable[[Any, FailedStep], None]) -> tuple[bool, Any]:
        """``(True, record or None when filtered)`` or ``(False, None)``: failed, tolerated.
        ``dead_letter(record, failure)`` reports a failed record."""
        chain = self.chain
        if chain is None:
            return True, record
        if self.operator.retries:
            return self.operator.execute(
                Stage.TRANSFORMATION,
                "TransformationChain",
                lambda: chain.apply(record),
                lambda failed: dead_letter(record, failed),
                lambda: repr(record),
            )
        try:  # nothing to retry: no closures on the way of a record that transforms fine
            return True, chain.apply(record)
        except Exception as exc:  # noqa: BLE001 - subject to the error policy
            return self.operator.fail(
                Stage.TRANSFORMATION,
                "TransformationChain",
                exc,
                lambda failed: dead_letter(record, failed),
                lambda: repr(record),
            )

    # -- sink ------------------------------------------------------------------------

    def sink_records(
        self,
        batch: pa.RecordBatch | None,
        dead: list[DeadLetter],
        cols: Mapping[str, list[Any]] | None = None,
        transform: bool = True,
    ) -> list[SinkRecord]:
        """:meth:`sink_batch` of an Arrow batch's rows (or of their columns), as records."""
        if cols is None:
            assert batch is not None, "sink_records needs a batch or its columns"
            cols = batch.to_pydict()
        return self.sink_batch(cols, dead, transform).records()

    def sink_batch(self, cols: Mapping[str, list[Any]], dead: list[DeadLetter], transform: bool = True) -> SinkBatch:
        """Consumed rows (the columns of :data:`~sluice.taskhost.consumed.COLUMNS`) converted
        and transformed into the batch for ``put_batch``; failed records that the policy
        tolerates are left out (and appended to ``dead`` when there is a dead letter queue).
        Raises :class:`~sluice.taskhost.tolerance.ToleranceExceeded` otherwise.

        Without a transform chain and without a bad record, the batch's columns come from
        one call per converter and no record object is made."""
        batch: SinkBatch | None
        try:
            batch = self._sink_batch_fast(cols)
        except Exception:  # noqa: BLE001 - converted again record by record under the error policy
            batch = None
        if batch is None:
            batch = SinkBatch.of(self._sink_records_one_by_one(cols, dead))
        if self.chain is None or not transform:
            return batch
        if self.columnar:
            whole = self.chain.apply_batch(batch)
            if whole is not None:
                return whole
        out: list[SinkRecord] = []
        dead_letter = self._sink_dead_letter(cols, dead)
        for record in batch.records():
            ok, result = self._transform(record, dead_letter)
            if ok and result is not None:
                out.append(result)
        return SinkBatch.of(out)

    def transform_sink_record(
        self, record: SinkRecord, cols: Mapping[str, list[Any]], dead: list[DeadLetter]
    ) -> SinkRecord | None:
        """The record after the chain, or None (filtered out, or failed and tolerated)."""
        ok, result = self._transform(record, self._sink_dead_letter(cols, dead))
        return result if ok else None

    def _sink_dead_letter(
        self, cols: Mapping[str, list[Any]], dead: list[DeadLetter]
    ) -> Callable[[SinkRecord, FailedStep], None]:
        return lambda record, failed: self._dead_sink(cols, record, failed, dead)

    def _sink_batch_fast(self, cols: Mapping[str, list[Any]]) -> SinkBatch:
        topics = cols["topic"]
        n = len(topics)
        headers_col = cols["headers_json"]
        headers: list[Headers | None]
        if headers_col.count(None) == n:  # the common case: no record has headers
            headers = [None] * n
        else:
            headers = [self._sink_headers(topics[i], raw) if raw else None for i, raw in enumerate(headers_col)]
        keys_raw = cols["key"]
        key_schemas, keys = _to_connect_column(self.key_converter, topics, keys_raw, headers, keys_raw.count(None) == n)
        value_schemas, values = _to_connect_column(self.value_converter, topics, cols["value"], headers, False)
        return SinkBatch.from_columns(
            _SinkColumns(
                cols,
                {
                    "topics": topics,
                    "key_schemas": key_schemas,
                    "keys": keys,
                    "value_schemas": value_schemas,
                    "values": values,
                    "headers": headers,
                },
            )
        )

    def _sink_records_one_by_one(self, cols: Mapping[str, list[Any]], dead: list[DeadLetter]) -> list[SinkRecord]:
        records: list[SinkRecord] = []
        topics = cols["topic"]
        execute = self.operator.execute
        for i in range(len(topics)):
            topic = topics[i]

            def failed(step: FailedStep, i: int = i) -> None:
                self._dead_row(cols, i, step, dead)

            def describe(i: int = i) -> str:
                return f"{{topic='{topics[i]}', partition={cols['partition'][i]}, offset={cols['offset'][i]}}}"

            raw_headers = cols["headers_json"][i]
            headers_outcome = execute(
                Stage.HEADER_CONVERTER,
                self.header_class,
                functools.partial(self._sink_headers, topic, raw_headers) if raw_headers else Headers,
                failed,
                describe,
            )
            if not headers_outcome[0]:
                continue
            headers = headers_outcome[1]
            key_outcome = execute(
                Stage.KEY_CONVERTER,
                self.key_class,
                functools.partial(self.key_converter.to_connect_data, topic, cols["key"][i], headers),
                failed,
                describe,
            )
            if not key_outcome[0]:
                continue
            key = key_outcome[1]
            value_outcome = execute(
                Stage.VALUE_CONVERTER,
                self.value_class,
                functools.partial(self.value_converter.to_connect_data, topic, cols["value"][i], headers),
                failed,
                describe,
            )
            if not value_outcome[0]:
                continue
            value = value_outcome[1]
            records.append(
                SinkRecord(
                    topic,
                    cols["partition"][i],
                    key.schema,
                    key.value,
                    value.schema,
                    value.value,
                    cols["offset"][i],
                    cols["ts_ms"][i],
                    _TIMESTAMP_TYPES.get(cols["ts_type"][i], TimestampType.NO_TIMESTAMP_TYPE),
                    headers if raw_headers else None,
                )
            )
        return records

    def _sink_headers(self, topic: str, raw: str | list[tuple[str, bytes | None]]) -> Headers:
        headers = Headers()
        to_connect = self.header_converter.to_connect_header
        for key, value in header_pairs(raw):
            sv = to_connect(topic, key, value)
            headers.add(key, sv.value, sv.schema)
        return headers

    def _dead_sink(
        self, cols: Mapping[str, list[Any]], record: SinkRecord, step: FailedStep, dead: list[DeadLetter]
    ) -> None:
        """A record that failed after conversion: dead-letter its raw row."""
        # Where it was consumed: a transformation may have routed it since.
        where = (record.original_topic, record.original_kafka_partition, record.original_kafka_offset)
        topics, partitions, offsets = cols["topic"], cols["partition"], cols["offset"]
        for i in range(len(offsets)):
            if (topics[i], partitions[i], offsets[i]) == where:
                self._dead_row(cols, i, step, dead)
                return

    def dead_letter_row(
        self, cols: Mapping[str, list[Any]], i: int, error: BaseException, dead: list[DeadLetter]
    ) -> None:
        """``ErrantRecordReporter.report``: raw row ``i`` of ``cols``, stage TASK_PUT."""
        self._dead_row(cols, i, FailedStep(Stage.TASK_PUT, "SinkTask", error), dead)

    def _dead_row(self, cols: Mapping[str, list[Any]], i: int, step: FailedStep, dead: list[DeadLetter]) -> None:
        if not self.policy.dead_letter_topic:
            return
        raw_headers = cols["headers_json"][i]
        headers = header_pairs(raw_headers) if raw_headers else []
        if self.policy.context_headers:
            headers.extend(
                context_headers(
                    step, self.connector, self.task, cols["topic"][i], cols["partition"][i], cols["offset"][i]
                )
            )
        dead.append(
            DeadLetter(
                cols["topic"][i],
                cols["partition"][i],
                cols["offset"][i],
                cols["ts_ms"][i],
                cols["key"][i],
                cols["value"][i],
                headers,
            )
        )

    # -- source ----------------------------------------------------------------------

    def source_batch(
        self, records: list[SourceRecord], write_timestamps: bool = False
    ) -> tuple[pa.RecordBatch | None, list[SourceRecord], BaseException | None]:
        """Transform and convert polled records: ``(batch, records processed, error)``.

        The processed records — written, filtered out, or failed and tolerated — are those
        whose offsets may be committed. When the policy does not tolerate a failure, the
        batch holds what came before the bad record and ``error`` is set.
        """
        out = self.source_rows(records, write_timestamps)
        return (_rows_batch(out.rows) if out.rows["topic"] else None), out.processed, out.error

    def source_rows(self, records: list[SourceRecord], write_timestamps: bool = False) -> SourceRows:
        """Transform and convert polled records into rows to produce (see :class:`SourceRows`).

        When the policy does not tolerate a failure, the rows hold what came before the
        bad record and ``error`` is set."""
        dead: list[dict[str, Any]] = []
        error: BaseException | None = None
        pairs: list[tuple[SourceRecord, SourceRecord | None]] = []  # (polled, to write or None)
        if self.chain is not None:

            def dead_letter(record: SourceRecord, step: FailedStep) -> None:
                self._dead_source(record, step, dead)

            for record in records:
                try:
                    ok, result = self._transform(record, dead_letter)
                except Exception as exc:  # noqa: BLE001 - not tolerated: deliver what came before
                    error = exc
                    break
                pairs.append((record, result if ok else None))
            to_convert = [t for _, t in pairs if t is not None]
            owners = [original for original, t in pairs if t is not None]
        else:
            to_convert = owners = records
        try:
            rows = self._source_rows(to_convert, True, write_timestamps)
            processed = records if self.chain is None else [original for original, _ in pairs]
        except Exception:  # noqa: BLE001 - converted again one by one under the error policy
            if self.chain is None:
                pairs = [(r, r) for r in records]
            good: list[SourceRecord] = []
            owners = []
            processed = []
            for original, candidate in pairs:
                if candidate is not None:
                    try:
                        if self._convert_one(
                            candidate, functools.partial(self._dead_source, candidate, dead=dead, owner=original)
                        ):
                            good.append(candidate)
                            owners.append(original)
                    except Exception as exc:  # noqa: BLE001 - not tolerated: stop at this record
                        error = exc
                        break
                processed.append(original)
            rows = self._source_rows(good, False, write_timestamps)
        owners = list(owners)
        if dead:
            rows = _concat_rows(rows, dead)
            owners.extend(d["owner"] for d in dead)
        return SourceRows(rows, owners, processed, error, len(dead))

    def _convert_one(self, record: SourceRecord, failed: Callable[[FailedStep], None]) -> bool:
        execute = self.operator.execute
        topic, headers = record.topic, record.headers_or_none

        def describe() -> str:
            return repr(record)

        ok, _ = execute(
            Stage.KEY_CONVERTER,
            self.key_class,
            lambda: self.key_converter.from_connect_data(topic, record.key_schema, record.key, headers),
            failed,
            describe,
        )
        if not ok:
            return False
        ok, _ = execute(
            Stage.VALUE_CONVERTER,
            self.value_class,
            lambda: self.value_converter.from_connect_data(topic, record.value_schema, record.value, headers),
            failed,
            describe,
        )
        if not ok:
            return False
        hc = self.header_converter
        ok, _ = execute(
            Stage.HEADER_CONVERTER,
            self.header_class,
            lambda: [hc.from_connect_header(topic, h.key, h.schema, h.value) for h in (headers or ())],
            failed,
            describe,
        )
        return ok

    def _source_rows(self, records: list[SourceRecord], batched: bool, write_timestamps: bool) -> dict[str, list[Any]]:
        topics = [r.topic for r in records]
        headers = [r.headers_or_none for r in records]  # None for the common header-less record
        hc = self.header_converter
        header_rows: list[list[dict[str, Any]] | None] = [
            [{"key": h.key, "value": hc.from_connect_header(t, h.key, h.schema, h.value)} for h in hs] if hs else None
            for t, hs in zip(topics, headers, strict=True)
        ]
        self.written_topics = out_topics = topics
        if write_timestamps:
            # "<topic>\0<timestamp>": a topic name never holds a NUL character.
            out_topics = [
                t if (ts := r.timestamp) is None or ts < 0 else f"{t}{TIMESTAMP_SEPARATOR}{ts}"
                for t, r in zip(topics, records, strict=True)
            ]
        return {
            "key": _from_connect_column(
                self.key_converter, topics, [r.key_schema for r in records], [r.key for r in records], headers, batched
            ),
            "value": _from_connect_column(
                self.value_converter,
                topics,
                [r.value_schema for r in records],
                [r.value for r in records],
                headers,
                batched,
            ),
            "topic": out_topics,
            "partition": [r.kafka_partition for r in records],
            "headers": header_rows,
            "timestamp": [r.timestamp for r in records],
        }

    def _dead_source(
        self, record: SourceRecord, step: FailedStep, dead: list[dict[str, Any]], owner: SourceRecord | None = None
    ) -> None:
        """Beyond Kafka Connect: a source record that failed to transform or convert goes to
        the dead letter queue as a JSON description, with the error context headers."""
        topic = self.policy.dead_letter_topic
        if not topic:
            return
        description = {
            "topic": record.topic,
            "kafka_partition": record.kafka_partition,
            "source_partition": record.source_partition,
            "source_offset": record.source_offset,
            "key": repr(record.key),
            "value": repr(record.value),
            "timestamp": record.timestamp,
        }
        headers = []
        if self.policy.context_headers:
            headers = [
                {"key": k, "value": v}
                for k, v in context_headers(
                    step,
                    self.connector,
                    self.task,
                    record.topic,
                    record.kafka_partition,
                    json.dumps(record.source_offset, default=str, sort_keys=True),
                )
            ]
        dead.append(
            {
                "key": None,
                "value": json.dumps(description, default=str).encode(),
                "topic": topic,
                "partition": None,
                "headers": headers or None,
                "timestamp": None,
                # the polled record this dead letter stands for (not a column)
                "owner": record if owner is None else owner,
            }
        )


class _SinkColumns(LazyColumns):
    """A :class:`SinkBatch`'s columns over consumed rows: the converted ones as given, the
    others (offsets, timestamps, …) made from the rows when a sink first reads them."""

    NAMES = SinkBatch.COLUMNS

    def __init__(self, rows: Mapping[str, list[Any]], converted: dict[str, list[Any]]) -> None:
        super().__init__(converted)
        self._rows = rows

    def _column(self, name: str) -> list[Any]:
        rows = self._rows
        if name in ("partitions", "original_partitions"):
            return rows["partition"]
        if name in ("offsets", "original_offsets"):
            return rows["offset"]
        if name == "original_topics":
            return self["topics"]
        if name == "timestamps":
            return rows["ts_ms"]
        if name == "timestamp_types":
            kinds = rows["ts_type"]
            if kinds.count(0) == len(kinds):  # the common case: every record has its create time
                return [TimestampType.CREATE_TIME] * len(kinds)
            return [_TIMESTAMP_TYPES.get(kind, TimestampType.NO_TIMESTAMP_TYPE) for kind in kinds]
        raise KeyError(name)


def header_pairs(raw: str | list[tuple[str, bytes | None]]) -> list[tuple[str, bytes | None]]:
    """A consumed record's headers as (key, value) pairs: from the JSON text Spark's rows
    carry (values base64) or as librdkafka gives them."""
    if not isinstance(raw, str):
        return list(raw)
    return [(h["key"], None if h.get("value") is None else base64.b64decode(h["value"])) for h in json.loads(raw)]


def _concat_rows(rows: dict[str, list[Any]], extra: list[dict[str, Any]]) -> dict[str, list[Any]]:
    out = {name: list(values) for name, values in rows.items()}
    for row in extra:
        for name in out:
            out[name].append(row[name])
    return out


def _rows_batch(rows: dict[str, list[Any]]) -> pa.RecordBatch:
    import pyarrow as pa

    s = source_output_schema()
    return pa.RecordBatch.from_arrays([pa.array(rows[f.name], f.type) for f in s], schema=s)


def _from_connect_column(
    converter: Converter,
    topics: list[str],
    schemas: list[Any],
    values: list[Any],
    headers: list[Headers | None],
    batched: bool,
) -> list[bytes | None]:
    """Serialise one column: in one call when the converter has a batch form and the
    records share a topic, else record by record with their headers."""
    n = len(values)
    if batched and n and topics.count(topics[0]) == n:
        converted = converter.from_connect_batch(topics[0], schemas, values)
        if converted is not None:
            return converted
    return [converter.from_connect_data(topics[i], schemas[i], values[i], headers[i]) for i in range(n)]


def _to_connect_column(
    converter: Converter, topics: list[str], raw: list[bytes | None], headers: list[Headers | None], all_null: bool
) -> tuple[list[Any], list[Any]]:
    """Convert one column of a batch: in one call per topic when the converter has a batch
    form (it then never looks at headers), else record by record with headers."""
    n = len(raw)
    first_topic = topics[0] if n else ""
    if n and (topics.count(first_topic) == n):
        if all_null:
            one = converter.to_connect_batch(first_topic, [None])
            if one is not None:
                return one[0] * n, one[1] * n
        else:
            both = converter.to_connect_batch(first_topic, raw)
            if both is not None:
                return both
    schemas: list[Any] = []
    values: list[Any] = []
    for i in range(n):
        sv = converter.to_connect_data(topics[i], raw[i], headers[i] if headers[i] is not None else Headers())
        schemas.append(sv.schema)
        values.append(sv.value)
    return schemas, values
