"""Connect data in Avro and JSON: the mappings Confluent ships as kafka-connect-avro-data and
connect-json, shared by the converters and the storage connectors.

* :mod:`sluice.formats.avro`: Connect data ⇄ Avro (``AvroData``), the Avro schema model,
  the binary codec and schema compatibility.
* :mod:`sluice.formats.json_data`: Connect values ⇄ JSON text and nodes as Kafka's
  ``JsonConverter`` writes and reads them (``JsonData``).

A leaf below the plugins: it imports only :mod:`sluice.api` and :mod:`sluice._java`.
"""
