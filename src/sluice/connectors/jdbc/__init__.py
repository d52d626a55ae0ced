"""JDBC connectors (Confluent's ``io.confluent.connect.jdbc``): a sink writing records to
PostgreSQL, MariaDB/MySQL or SQLite tables, and a source reading tables into topics.
The database is chosen from ``connection.url`` (see :mod:`sluice.connectors.jdbc.dialect`)."""

from sluice.connectors.jdbc.dialect import Column, Dialect
from sluice.connectors.jdbc.sink import JdbcSinkConnector, JdbcSinkTask
from sluice.connectors.jdbc.source import JdbcSourceConnector, JdbcSourceTask

__all__ = ["Column", "Dialect", "JdbcSinkConnector", "JdbcSinkTask", "JdbcSourceConnector", "JdbcSourceTask"]
