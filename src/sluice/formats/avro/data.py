"""Confluent's ``io.confluent.connect.avro.AvroData``: Connect data ⇄ Avro, both directions."""

from __future__ import annotations

from sluice.formats.avro.from_connect import ConnectToAvro
from sluice.formats.avro.to_connect import AvroToConnect

__all__ = ["AvroData"]


class AvroData(ConnectToAvro, AvroToConnect):
    """Confluent's ``AvroData`` (``AvroDataConfig`` options as keyword arguments):
    Connect schema ⇄ Avro schema and Connect value ⇄ raw Avro datum.

    Connect → Avro: :meth:`from_connect_schema`, :meth:`from_connect_data`
    (:class:`~sluice.formats.avro.from_connect.ConnectToAvro`). Avro → Connect:
    :meth:`to_connect_schema`, :meth:`to_connect_data`
    (:class:`~sluice.formats.avro.to_connect.AvroToConnect`).
    """
