"""The advisory lock under which one session at a time creates Muster's PostgreSQL tables."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg

from checkpoints.saver import CheckpointStoreError

SCHEMA_LOCK = 0x4D5553_5445_52
"""The advisory lock key that serialises creating Muster's tables: PostgreSQL's
`CREATE TABLE IF NOT EXISTS` (and the saver's migrations) can fail when two sessions run it
at once on a fresh database."""
SCHEMA_WAIT_S = 60.0
"""How long to wait for another process setting up the tables (first use of a database)."""


@asynccontextmanager
async def schema_lock(conn: psycopg.AsyncConnection[Any]) -> AsyncIterator[None]:
    """Hold `SCHEMA_LOCK` on `conn` for the block: one session creates tables at a time.

    Polled with `pg_try_advisory_lock`, never waited for inside a statement: the saver's
    migrations run `CREATE INDEX CONCURRENTLY`, which waits for every transaction in the
    database, and a session blocked in `pg_advisory_lock` is one: it would wait for the
    holder, the holder's migration for it, and PostgreSQL would not see the cycle (it runs
    through the holder's process, on two connections)."""
    deadline = time.monotonic() + SCHEMA_WAIT_S
    while True:
        cursor = await conn.execute("SELECT pg_try_advisory_lock(%s) AS got", (SCHEMA_LOCK,))
        row = await cursor.fetchone()
        if row is not None and row["got"]:
            break
        if time.monotonic() > deadline:
            raise CheckpointStoreError(
                f"another process has been setting up the checkpoint tables for over "
                f"{SCHEMA_WAIT_S:g}s; try again"
            )
        await asyncio.sleep(0.05)
    try:
        yield
    finally:
        await conn.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK,))
