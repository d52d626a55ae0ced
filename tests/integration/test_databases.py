"""Real PostgreSQL and MariaDB servers started by the project's tooling (sluice_devtools.databases).

Each server accepts the ``sluice`` user's connections through the Python drivers the
connectors use (psycopg 3, PyMySQL), keeps the common column types intact, runs beside a
second instance, and is seen and stopped from another process by ``sluice dev``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import socket
import subprocess
import sys
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sluice_devtools import DevToolsError
from sluice_devtools.databases import DatabaseEndpoint, MariaDbServer, PostgresServer

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("databases")]

UTC = dt.UTC


def _table() -> str:
    return f"t_{uuid.uuid4().hex[:12]}"


def _process_gone(pid: int) -> bool:
    """No such process, or only a zombie left for its parent to reap."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def _dev(*args: str) -> subprocess.CompletedProcess[str]:
    """``sluice dev ...`` in another process."""
    return subprocess.run(
        [sys.executable, "-m", "sluice_devtools.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


# ---------------------------------------------------------------------------- PostgreSQL

PG_COLUMNS = """
    id integer PRIMARY KEY,
    small smallint,
    big bigint,
    real_value real,
    double_value double precision,
    amount numeric(20, 6),
    name text,
    code varchar(16),
    flag boolean,
    day date,
    clock time,
    moment timestamp,
    moment_tz timestamptz,
    payload bytea
"""

PG_ROWS: list[tuple[Any, ...]] = [
    (
        1,
        -32768,
        9223372036854775807,
        1.5,
        2.718281828459045,
        Decimal("12345678901234.123456"),
        "naïve café ✓ 🚀",
        "A-1",
        True,
        dt.date(2024, 2, 29),
        dt.time(23, 59, 58, 123456),
        dt.datetime(1999, 12, 31, 23, 59, 59, 999999),
        dt.datetime(2024, 6, 1, 12, 30, tzinfo=UTC),
        b"\x00\x01\xfe\xff",
    ),
    (
        2,
        32767,
        -9223372036854775808,
        -0.25,
        -1e300,
        Decimal("-0.000001"),
        "",
        "",
        False,
        dt.date(1, 1, 1),
        dt.time(0, 0),
        dt.datetime(1970, 1, 1),
        dt.datetime(1970, 1, 1, tzinfo=UTC),
        b"",
    ),
    (3, *([None] * 13)),
]


def test_postgres_round_trips_column_types(postgres_server: Any) -> None:
    import psycopg

    table = _table()
    assert postgres_server.url == (
        f"jdbc:postgresql://{postgres_server.host}:{postgres_server.port}/{postgres_server.database}"
    )
    with postgres_server.connect() as conn:
        assert conn.execute("SELECT current_user, current_database()").fetchone() == (
            postgres_server.user,
            postgres_server.database,
        )
        conn.execute(f"CREATE TABLE {table} ({PG_COLUMNS})")
        placeholders = ", ".join(["%s"] * len(PG_ROWS[0]))
        with conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {table} VALUES ({placeholders})", PG_ROWS)
        # COPY, the sink's bulk path, works for the non-superuser too
        with conn.cursor() as cur, cur.copy(f"COPY {table} (id, name, amount, payload) FROM STDIN") as copy:
            copy.write_row((4, "copied", Decimal("1.5"), b"\x10\x20"))
    # a new connection sees the committed rows
    with postgres_server.connect() as conn:
        rows = conn.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
        assert rows[:3] == PG_ROWS
        assert rows[3][:1] + (rows[3][6], rows[3][5], rows[3][13]) == (4, "copied", Decimal("1.500000"), b"\x10\x20")
        types = dict(
            conn.execute(
                "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = %s", (table,)
            ).fetchall()
        )
        assert (
            types["amount"] == "numeric"
            and types["payload"] == "bytea"
            and types["moment_tz"].startswith("timestamp with time zone")
        )
        conn.execute(f"DROP TABLE {table}")
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(
            host=postgres_server.host,
            port=postgres_server.port,
            dbname=postgres_server.database,
            user=postgres_server.user,
            password="wrong",
            connect_timeout=10,
        )


# ---------------------------------------------------------------------------- MariaDB

MARIADB_COLUMNS = """
    id INT PRIMARY KEY,
    small SMALLINT,
    big BIGINT,
    real_value FLOAT,
    double_value DOUBLE,
    amount DECIMAL(20, 6),
    name TEXT,
    code VARCHAR(16),
    flag BOOLEAN,
    day DATE,
    clock TIME(6),
    moment DATETIME(6),
    stamp TIMESTAMP(6) NULL,
    payload BLOB
"""

MARIADB_ROWS: list[tuple[Any, ...]] = [
    (
        1,
        -32768,
        9223372036854775807,
        1.5,
        2.718281828459045,
        Decimal("12345678901234.123456"),
        "naïve café ✓ 🚀",
        "A-1",
        True,
        dt.date(2024, 2, 29),
        dt.time(23, 59, 58, 123456),
        dt.datetime(1999, 12, 31, 23, 59, 59, 999999),
        dt.datetime(2024, 6, 1, 12, 30, 0, 500000),
        b"\x00\x01\xfe\xff",
    ),
    (
        2,
        32767,
        -9223372036854775808,
        -0.25,
        -1e300,
        Decimal("-0.000001"),
        "",
        "",
        False,
        dt.date(1000, 1, 1),
        dt.time(0, 0),
        dt.datetime(1970, 1, 1),
        dt.datetime(2001, 1, 1, 0, 0, 1),
        b"",
    ),
    (3, *([None] * 13)),
]


def _mariadb_expected(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """What PyMySQL gives back: BOOLEAN is TINYINT(1) (0/1) and TIME a timedelta."""
    values = list(row)
    if values[8] is not None:
        values[8] = int(values[8])
    clock = values[10]
    if clock is not None:
        values[10] = dt.timedelta(
            hours=clock.hour, minutes=clock.minute, seconds=clock.second, microseconds=clock.microsecond
        )
    return tuple(values)


def test_mariadb_round_trips_column_types(mariadb_server: Any) -> None:
    import pymysql

    table = _table()
    assert mariadb_server.url in (
        f"jdbc:{kind}://{mariadb_server.host}:{mariadb_server.port}/{mariadb_server.database}"
        for kind in ("mariadb", "mysql")  # mysql: an external server given as a mysql:// URL
    )
    conn = mariadb_server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT SUBSTRING_INDEX(CURRENT_USER(), '@', 1), DATABASE(), @@character_set_server")
            assert cur.fetchone() == (mariadb_server.user, mariadb_server.database, "utf8mb4")
            cur.execute(f"CREATE TABLE {table} ({MARIADB_COLUMNS}) CHARACTER SET utf8mb4")
            placeholders = ", ".join(["%s"] * len(MARIADB_ROWS[0]))
            # a multi-row INSERT, the sink's batch path
            cur.executemany(f"INSERT INTO {table} VALUES ({placeholders})", MARIADB_ROWS)
        conn.commit()
    finally:
        conn.close()
    conn = mariadb_server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT * FROM {table} ORDER BY id")
            assert list(cur.fetchall()) == [_mariadb_expected(row) for row in MARIADB_ROWS]
            cur.execute(f"DROP TABLE {table}")
    finally:
        conn.close()
    with pytest.raises(pymysql.OperationalError):
        pymysql.connect(
            host=mariadb_server.host,
            port=mariadb_server.port,
            database=mariadb_server.database,
            user=mariadb_server.user,
            password="wrong",
            connect_timeout=10,
        )


# ---------------------------------------------------------------------------- lifecycle


def _create_kept_table(server: Any) -> None:
    conn = server.connect()
    try:
        cur = conn.cursor()
        cur.execute("CREATE TABLE kept (id INT PRIMARY KEY, note VARCHAR(20))")
        cur.execute("INSERT INTO kept VALUES (1, 'survives restarts')")
        conn.commit()
    finally:
        conn.close()


def _kept_rows(server: Any) -> list[tuple[Any, ...]]:
    conn = server.connect()
    try:
        cur = conn.cursor()
        cur.execute("SELECT id, note FROM kept")
        return [tuple(row) for row in cur.fetchall()]
    finally:
        conn.close()


def _listen_address(server: Any) -> str:
    conn = server.connect()
    try:
        cur = conn.cursor()
        cur.execute("SHOW listen_addresses" if isinstance(server, PostgresServer) else "SELECT @@bind_address")
        return str(cur.fetchone()[0])
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("server_class", "command", "session_fixture"),
    [(PostgresServer, "postgres", "postgres_server"), (MariaDbServer, "mariadb", "mariadb_server")],
    ids=["postgres", "mariadb"],
)
def test_second_instance_status_stop_and_restart(
    server_class: type[Any], command: str, session_fixture: str, database_work_dir: Path, request: pytest.FixtureRequest
) -> None:
    session_server = request.getfixturevalue(session_fixture)
    server = server_class(database_work_dir)
    try:
        url = server.start()
        pid = server.pid
        assert pid is not None
        assert re.fullmatch(rf"jdbc:{server.kind}://127\.0\.0\.1:{server.port}/sluice", url)
        assert (server.host, server.user, server.password, server.database) == (
            "127.0.0.1",
            "sluice",
            "sluice",
            "sluice",
        )
        # beside the session's server, on another port
        if session_server.host == server.host:
            assert server.port != session_server.port
        session_server.connect().close()
        assert _listen_address(server) == "127.0.0.1"
        assert (database_work_dir / "data").is_dir()
        state = json.loads((database_work_dir / "state.json").read_text())
        assert (state["pid"], state["port"], state["url"]) == (pid, server.port, url)
        _create_kept_table(server)

        # another object and another process see it running
        assert server_class(database_work_dir).status().running
        status = _dev(command, "status", "--dir", str(database_work_dir))
        assert status.returncode == 0, status.stderr
        assert f"pid={pid}" in status.stdout and url in status.stdout

        # stopped from another process
        stopped = _dev(command, "stop", "--dir", str(database_work_dir))
        assert (stopped.returncode, stopped.stdout.strip()) == (0, "stopped"), stopped.stderr
        assert _process_gone(pid)
        status = _dev(command, "status", "--dir", str(database_work_dir))
        assert status.returncode == 1 and status.stdout.startswith("stopped"), status
        assert not server.status().running
        assert server.stop() is False

        # a restart keeps the data and the port
        assert server.start() == url and server.port == state["port"]
        assert server.pid != pid
        assert _kept_rows(server) == [(1, "survives restarts")]
        assert server.start() == url  # a no-op while it runs
    finally:
        server.stop()
    assert server.pid is None and not server.status().running


@pytest.mark.parametrize("server_class", [PostgresServer, MariaDbServer], ids=["postgres", "mariadb"])
def test_a_taken_port_or_no_state_is_a_clear_error(server_class: type[Any], database_work_dir: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(DevToolsError, match=f"Port {port} on 127.0.0.1 is in use"):
            server_class(database_work_dir, port=port).start()
    empty = database_work_dir / "never-started"
    assert not server_class(empty).status().running
    assert server_class(empty).stop() is False
    with pytest.raises(DevToolsError, match="No .* server was started"):
        server_class.from_state(empty)
    with pytest.raises(DevToolsError, match="has not been started"):
        _ = server_class(empty).url


def test_endpoint_urls() -> None:
    pg = DatabaseEndpoint.from_url("jdbc:postgresql://db.example:6543/app?user=u&password=p%40ss")
    assert (pg.kind, pg.host, pg.port, pg.database, pg.user, pg.password) == (
        "postgresql",
        "db.example",
        6543,
        "app",
        "u",
        "p@ss",
    )
    assert pg.url == "jdbc:postgresql://db.example:6543/app"
    native = DatabaseEndpoint.from_url("postgresql://a:b@127.0.0.1/x")
    assert (native.port, native.user, native.password, native.database) == (5432, "a", "b", "x")
    maria = DatabaseEndpoint.from_url("mysql://127.0.0.1:3307")
    assert (maria.kind, maria.port, maria.database, maria.user, maria.password) == (
        "mysql",
        3307,
        "sluice",
        "sluice",
        "sluice",
    )
    assert DatabaseEndpoint.from_url("jdbc:mariadb://h:1/d").url == "jdbc:mariadb://h:1/d"
    with pytest.raises(DevToolsError, match="Not a PostgreSQL or MariaDB"):
        DatabaseEndpoint.from_url("jdbc:sqlite:/tmp/x.db")
