"""Database dialects of the JDBC connectors: PostgreSQL, MariaDB/MySQL and SQLite.

A :class:`Dialect` knows how to reach one database from a JDBC URL, how to read its
catalog and how to write SQL for it. It is chosen from the URL::

    dialect = Dialect.for_url("jdbc:postgresql://127.0.0.1:5432/sluice", "sluice", "secret")
    conn = dialect.connect()            # a DB-API 2 connection, autocommit off
    dialect.list_tables(conn)           # ["orders", "audit.events", ...]
    dialect.describe_columns(conn, "orders")   # [Column(name="id", type_name="bigint", ...), ...]

Import dialects from here: this module gathers :mod:`.dialect_base` (:class:`Column`, URL
parsing, :func:`timezone`, the :class:`Dialect` base with the SQL the databases share)
and one module per database (:mod:`.dialect_postgresql`, :mod:`.dialect_mysql`,
:mod:`.dialect_sqlite`); importing it registers the three with :meth:`Dialect.for_url`.

URLs
    ``jdbc:postgresql://HOST[:PORT]/DB[?k=v&...]`` (also ``jdbc:postgresql:DB``; port 5432)
    → :class:`PostgreSqlDialect` (psycopg 3). ``jdbc:mariadb://…`` and ``jdbc:mysql://…``
    (port 3306) → :class:`MySqlDialect` (PyMySQL), named ``MariaDB`` or ``MySQL``.
    ``jdbc:sqlite:/path/to.db``, ``jdbc:sqlite:relative.db`` or ``jdbc:sqlite::memory:``
    → :class:`SqliteDialect` (the standard library's ``sqlite3``; every connection to
    ``:memory:`` is a database of its own). Query parameters ``user`` and ``password`` are
    used when the ``user``/``password`` arguments are ``None``; PostgreSQL also takes
    ``currentSchema``, ``sslmode``, ``connectTimeout`` (seconds) and ``ApplicationName``,
    MySQL ``connectTimeout`` (milliseconds, as Connector/J). Anything else raises
    :class:`~sluice.api.errors.ConfigError`.

Attributes
    ``name`` (``"PostgreSQL"``, ``"MariaDB"``, ``"MySQL"``, ``"SQLite"``), ``kind``
    (``"postgresql"``, ``"mysql"``, ``"sqlite"``), ``url``, ``host``, ``port``,
    ``database`` (the file path for SQLite), ``user``, ``quote_identifiers`` (``True``;
    when ``False`` identifiers are written as given, Confluent's
    ``quote.sql.identifiers=never``), ``paramstyle`` (``"format"``: ``%s`` placeholders,
    or ``"qmark"``: ``?``), ``placeholder`` and ``stats`` (a :class:`collections.Counter`
    of the write paths used: ``copy_batches``, ``copy_rows``, ``multi_row_statements``,
    ``executemany_batches``, ``rows_written``, ``rows_deleted``).

Catalog
    ``connect()``: a new DB-API connection with autocommit off (PostgreSQL sessions get
    ``TimeZone`` = the ``timezone`` argument when given). ``quote(identifier)``: the
    identifier quoted for this database (``"x"`` or ```x```, embedded quotes doubled).
    ``table_ref(name)``: a possibly qualified name (``schema.table``, for MySQL
    ``database.table``) split on dots and each part quoted. ``split_table(name)`` →
    ``(schema or None, table)``. ``list_tables(conn, schema_pattern=None,
    table_types=("TABLE",))``: the tables (``"VIEW"`` adds views) as names that
    :meth:`~Dialect.table_ref` accepts — unqualified for tables of the connection's current
    schema/database, ``schema.table`` otherwise; ``schema_pattern`` is a SQL ``LIKE``
    pattern on the schema (database for MySQL; ignored by SQLite), as JDBC's
    ``getTables``. ``describe_columns(conn, table)``: a :class:`Column` per column in table
    order, ``[]`` when the table does not exist. ``table_exists(conn, table)``.
    ``current_timestamp(conn)``: the database's clock (a naive UTC ``datetime``).

SQL for the sink (``fields`` are ``(name, Schema)`` pairs of Connect schemas)
    ``sql_type(schema, key=False)``: the column type for a Connect schema (Confluent's
    mapping; raises :class:`~sluice.api.errors.DataError` for types the database cannot
    hold). ``create_table(table, fields, pk_fields)``, ``alter_add_columns(table, fields)``
    (a list of statements). ``insert(table, key_cols, value_cols)``, ``upsert(...)``
    (PostgreSQL ``INSERT … ON CONFLICT (…) DO UPDATE``, MySQL ``INSERT … ON DUPLICATE KEY
    UPDATE``, SQLite ``INSERT … ON CONFLICT (…) DO UPDATE``), ``update(...)`` (parameters:
    value columns then key columns) and ``delete(table, key_cols)``: single-row
    statements with this dialect's placeholders; the insert parameters are the key
    columns then the value columns. ``to_db_value(schema, value, tz)``: a Connect value
    as the driver takes it (timestamps as naive date-times in ``tz``).

Batched writes (each dialect's fastest path; nothing is committed here)
    ``write_rows(conn, table, mode, key_cols, value_cols, rows)`` with ``mode`` one of
    ``insert``/``upsert``/``update`` and ``rows`` tuples in ``key_cols + value_cols``
    order: PostgreSQL writes upserts and updates with ``COPY`` into a temporary staging
    table and one ``INSERT … SELECT … ON CONFLICT … DO UPDATE`` or ``UPDATE … FROM``, and
    plain inserts with ``COPY`` straight into the table. MySQL sends multi-row
    ``INSERT … VALUES (…),(…) [ON DUPLICATE KEY UPDATE …]``
    statements (updates: into a temporary staging table, then one ``UPDATE … JOIN``);
    SQLite uses ``executemany``. Upsert and update
    batches must not hold a key twice (the sink keeps the last record per key).
    ``delete_rows(conn, table, key_cols, keys)`` deletes by key. Both return the number of
    rows given.
"""

from sluice.connectors.jdbc.dialect_base import Column, Dialect, timezone
from sluice.connectors.jdbc.dialect_mysql import MySqlDialect
from sluice.connectors.jdbc.dialect_postgresql import PostgreSqlDialect
from sluice.connectors.jdbc.dialect_sqlite import SqliteDialect

__all__ = ["Column", "Dialect", "MySqlDialect", "PostgreSqlDialect", "SqliteDialect", "timezone"]
