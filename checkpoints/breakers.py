"""The circuit breakers' board: a server's open circuit, seen by every process on the store.

A hub keeps a circuit breaker per server (workers/hub/backpressure.py), shared by every
ticket of its process. Without this board, each `muster worker` of a fleet (and each CLI
run on the same store) learnt on its own that a server is down, each sending it its own
`threshold` failed calls and its own probes. Here, when a process's breaker opens, it
writes one row in the store, table `muster_breakers`:

    server (key), opened_at, cooldown_s, reopened, last_failure, probe_at, probe_by

and every process reads it before calling that server (cached for `BOARD_TTL_S`): while
`opened_at + cooldown_s` is ahead, the server is skipped as if its own breaker were open.
Once the cool-down is over, the half-open probe is claimed in the row (`claim_probe`: one
`UPDATE ... WHERE probe_at IS NULL`, atomic in SQLite and PostgreSQL alike), so one call in
the whole fleet goes to the server per cool-down; the prober's success deletes the row
(closed everywhere), its failure writes it again with the doubled cool-down. A claim whose
prober died is free again after one cool-down. A provider model's breaker
(`workers.model_health`) shares the board the same way, its row keyed `model:<label>`.

Times are the database's clock in PostgreSQL (`clock_timestamp()`, so hosts' clocks do
not matter) and the machine's in SQLite (one machine). The table is created by the first
process that opens a circuit; a store where none ever opened has none. The board never
fails a call: a database error makes it silent for `QUIET_AFTER_ERROR_S` (each process's
own breaker still works), logged once.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workers.hub.backpressure import BreakerBoard as BreakerBoard  # the hub's own shape

logger = logging.getLogger("muster.breakers")

BOARD_TTL_S = 1.0
"""How long a process trusts what it read of a server's row: another process's open
circuit is seen within this (a claim for the probe is always read fresh)."""
QUIET_AFTER_ERROR_S = 5.0
"""After a database error, the board is left alone this long."""
OP_TIMEOUT_S = 2.0
"""The longest one board statement may take before it is given up."""

_COLUMNS = "server, opened_at, cooldown_s, reopened, last_failure, probe_at, probe_by"


@dataclass(frozen=True)
class SharedOpen:
    """A server's row on the board: its circuit is open (or its probe is due)."""

    server: str
    opened_at: float
    cooldown_s: float
    reopened: int
    last_failure: str
    probe_at: float | None
    now: float
    """The board's clock when the row was read."""

    @property
    def remaining_s(self) -> float:
        """Seconds of cool-down left (<= 0: the probe is due)."""
        return self.opened_at + self.cooldown_s - self.now


def _row(row: Any) -> SharedOpen:
    return SharedOpen(
        server=str(row[0]),
        opened_at=float(row[1]),
        cooldown_s=float(row[2]),
        reopened=int(row[3]),
        last_failure=str(row[4]),
        probe_at=None if row[5] is None else float(row[5]),
        now=float(row[7]),
    )


class _Quiet:
    """The board's own back-off: an error silences it for a while (never fails a call)."""

    def __init__(self) -> None:
        self.until = 0.0
        self.logged = False

    def active(self) -> bool:
        return time.monotonic() < self.until

    def failed(self, error: BaseException) -> None:
        self.until = time.monotonic() + QUIET_AFTER_ERROR_S
        if not self.logged:
            logger.warning("circuit breaker board unavailable: %s", " ".join(str(error).split()))
            self.logged = True


class SqliteBoard:
    """The board in the store's SQLite file (its own connection, used on a worker thread)."""

    SCHEMA = (
        "CREATE TABLE IF NOT EXISTS muster_breakers (server TEXT PRIMARY KEY, "
        "opened_at REAL NOT NULL, cooldown_s REAL NOT NULL, reopened INTEGER NOT NULL, "
        "last_failure TEXT NOT NULL, probe_at REAL, probe_by TEXT)"
    )

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._quiet = _Quiet()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = sqlite3.connect(
                self.path, timeout=OP_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
        return self._conn

    def _run(self, sql: str, params: tuple[Any, ...], *, create: bool) -> list[Any] | int:
        with self._lock:
            conn = self._connection()
            try:
                cursor = conn.execute(sql, params)
            except sqlite3.OperationalError as error:
                if "no such table" not in str(error):
                    raise
                if not create:
                    return []
                conn.execute(self.SCHEMA)
                cursor = conn.execute(sql, params)
            rows = cursor.fetchall()
            return rows if cursor.description else cursor.rowcount

    async def _do(self, sql: str, params: tuple[Any, ...], *, create: bool = False) -> Any:
        if self._quiet.active():
            return None
        try:
            async with asyncio.timeout(OP_TIMEOUT_S * 2):
                return await asyncio.to_thread(self._run, sql, params, create=create)
        except (sqlite3.Error, TimeoutError, OSError) as error:
            self._quiet.failed(error)
            return None

    def available(self) -> bool:
        return not self._quiet.active()

    async def read(self, server: str) -> SharedOpen | None:
        rows = await self._do(
            f"SELECT {_COLUMNS}, ? FROM muster_breakers WHERE server = ?", (time.time(), server)
        )
        return _row(rows[0]) if rows else None

    async def publish(
        self, server: str, *, cooldown_s: float, reopened: int, last_failure: str
    ) -> None:
        await self._do(
            "INSERT INTO muster_breakers (server, opened_at, cooldown_s, reopened, last_failure)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (server) DO UPDATE SET"
            " opened_at = excluded.opened_at, cooldown_s = excluded.cooldown_s,"
            " reopened = max(muster_breakers.reopened, excluded.reopened),"
            " last_failure = excluded.last_failure, probe_at = NULL, probe_by = NULL",
            (server, time.time(), cooldown_s, reopened, last_failure[:500]),
            create=True,
        )

    async def claim_probe(self, server: str, holder: str) -> bool:
        now = time.time()
        changed = await self._do(
            "UPDATE muster_breakers SET probe_at = ?, probe_by = ? WHERE server = ?"
            " AND opened_at + cooldown_s <= ? AND (probe_at IS NULL OR probe_at + cooldown_s <= ?)",
            (now, holder, server, now, now),
        )
        return changed is None or changed == 1  # the board away: the process's own breaker

    async def release_probe(self, server: str, holder: str) -> None:
        await self._do(
            "UPDATE muster_breakers SET probe_at = NULL, probe_by = NULL"
            " WHERE server = ? AND probe_by = ?",
            (server, holder),
        )

    async def close_circuit(self, server: str) -> None:
        await self._do("DELETE FROM muster_breakers WHERE server = ?", (server,))

    async def aclose(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


_PG_NOW = "EXTRACT(EPOCH FROM clock_timestamp())"


class PostgresBoard:
    """The board in the store's PostgreSQL database (one connection of its own, opened when
    first needed and opened again after the database ended it)."""

    SCHEMA = (
        "CREATE TABLE IF NOT EXISTS muster_breakers (server text PRIMARY KEY, "
        "opened_at double precision NOT NULL, cooldown_s double precision NOT NULL, "
        "reopened integer NOT NULL, last_failure text NOT NULL, "
        "probe_at double precision, probe_by text)"
    )

    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: Any = None
        self._lock = asyncio.Lock()
        self._quiet = _Quiet()
        self._created = False

    async def _do(self, sql: str, params: tuple[Any, ...], *, create: bool = False) -> Any:
        import psycopg

        from checkpoints.postgres_connect import connect
        from checkpoints.postgres_schema import schema_lock

        if self._quiet.active():
            return None
        try:
            async with self._lock, asyncio.timeout(OP_TIMEOUT_S * 2):
                if self._conn is None or self._conn.closed or self._conn.broken:
                    self._conn = await connect(self.url, application_name="muster-breakers")
                conn = self._conn
                try:
                    cursor = await conn.execute(sql, params)
                except psycopg.errors.UndefinedTable:
                    if not create:
                        return []
                    async with schema_lock(conn):
                        await conn.execute(self.SCHEMA)
                    cursor = await conn.execute(sql, params)
                if cursor.description:
                    return [tuple(row.values()) for row in await cursor.fetchall()]
                return cursor.rowcount
        except Exception as error:  # a database blip, a timeout: the board is quiet a while
            self._quiet.failed(error)
            if self._conn is not None and (self._conn.closed or self._conn.broken):
                self._conn = None
            return None

    def available(self) -> bool:
        return not self._quiet.active()

    async def read(self, server: str) -> SharedOpen | None:
        rows = await self._do(
            f"SELECT {_COLUMNS}, {_PG_NOW} FROM muster_breakers WHERE server = %s", (server,)
        )
        return _row(rows[0]) if rows else None

    async def publish(
        self, server: str, *, cooldown_s: float, reopened: int, last_failure: str
    ) -> None:
        await self._do(
            "INSERT INTO muster_breakers (server, opened_at, cooldown_s, reopened, last_failure)"
            f" VALUES (%s, {_PG_NOW}, %s, %s, %s) ON CONFLICT (server) DO UPDATE SET"
            " opened_at = EXCLUDED.opened_at, cooldown_s = EXCLUDED.cooldown_s,"
            " reopened = GREATEST(muster_breakers.reopened, EXCLUDED.reopened),"
            " last_failure = EXCLUDED.last_failure, probe_at = NULL, probe_by = NULL",
            (server, cooldown_s, reopened, last_failure[:500]),
            create=True,
        )

    async def claim_probe(self, server: str, holder: str) -> bool:
        changed = await self._do(
            f"UPDATE muster_breakers SET probe_at = {_PG_NOW}, probe_by = %s WHERE server = %s"
            f" AND opened_at + cooldown_s <= {_PG_NOW}"
            f" AND (probe_at IS NULL OR probe_at + cooldown_s <= {_PG_NOW})",
            (holder, server),
        )
        return changed is None or changed == 1

    async def release_probe(self, server: str, holder: str) -> None:
        await self._do(
            "UPDATE muster_breakers SET probe_at = NULL, probe_by = NULL"
            " WHERE server = %s AND probe_by = %s",
            (server, holder),
        )

    async def close_circuit(self, server: str) -> None:
        await self._do("DELETE FROM muster_breakers WHERE server = %s", (server,))

    async def aclose(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None


def breaker_board(location: Path | str) -> BreakerBoard:
    """The board in the store at `location` (a SQLite file, a PostgreSQL URL); opens
    nothing until it is first used."""
    if isinstance(location, str):
        return PostgresBoard(location)
    return SqliteBoard(location)
