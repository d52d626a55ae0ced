"""The web console: connectors' pages and actions over any Kafka Connect REST API.

A worker serves it at ``/ui/`` (``sluice.console.enable``); ``sluice console --url`` serves
it in front of any Kafka Connect–compatible cluster, Apache Kafka Connect's included. It
only makes REST calls (:mod:`sluice.console.api`), so it needs nothing of the worker.
"""
