"""TLS material as Kafka reads it: key stores and trust stores from Kafka's ``ssl.*`` keys
(:mod:`sluice.tls.keystores`), shared by the Kafka clients' settings (:mod:`sluice.kafka`)
and the REST API's https listeners (:mod:`sluice.rest.tls`).

A leaf: it reads files and runs the JDK's ``keytool``, and imports nothing else of Sluice
besides :mod:`sluice._java`.
"""
