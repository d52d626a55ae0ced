"""Connect data ⇄ Avro, as Confluent's ``io.confluent.connect.avro.AvroData`` maps them
(kafka-connect-avro-data), for the Avro converter and the storage sinks' Avro files.

Four parts, each a module:

* :mod:`~sluice.formats.avro.schema`: the Avro schema model (:class:`AvroType`,
  :class:`AvroField`) parsed from schema JSON (:func:`parse_avro`) and written back exactly
  as Apache Avro's Java ``Schema.toString()`` writes it (:func:`avro_json`).
* :mod:`~sluice.formats.avro.codec`: :class:`AvroCodec`, Avro binary encoding and decoding
  of raw datums with ``fastavro`` (:func:`wire_schema`, the union helpers).
* :class:`AvroData` (:mod:`~sluice.formats.avro.data`): Connect schema ⇄ Avro schema and
  Connect value ⇄ raw Avro datum, with Confluent's conventions
  (:mod:`~sluice.formats.avro.conventions`), one module per direction
  (:mod:`~sluice.formats.avro.from_connect`, :mod:`~sluice.formats.avro.to_connect`).
* :mod:`~sluice.formats.avro.compatibility`: valid defaults, the registry's BACKWARD check
  and reader/writer schema resolution (:func:`project`).

The package imports only :mod:`sluice.api`, :mod:`sluice._java` and ``fastavro``.
"""

from sluice.formats.avro.codec import AvroCodec, union_branch, union_datum, wire_schema
from sluice.formats.avro.compatibility import backward_compatibility_errors, project, valid_default
from sluice.formats.avro.conventions import ANYTHING_SCHEMA
from sluice.formats.avro.data import AvroData
from sluice.formats.avro.schema import AvroField, AvroType, avro_json, parse_avro, scrub_name

__all__ = [
    "ANYTHING_SCHEMA",
    "AvroCodec",
    "AvroData",
    "AvroField",
    "AvroType",
    "avro_json",
    "backward_compatibility_errors",
    "parse_avro",
    "project",
    "scrub_name",
    "union_branch",
    "union_datum",
    "valid_default",
    "wire_schema",
]
