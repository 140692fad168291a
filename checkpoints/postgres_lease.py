"""Per-thread leases in PostgreSQL: one writer per thread, across processes and machines.

A lease is a session-level advisory lock (`pg_try_advisory_lock`) on a connection of its
own, keyed by a 64-bit hash of the thread id, held for the whole `hold_thread` block. The
guarantee is the SQLite lease's (checkpoints/lease.py): a second process fails fast with
`ThreadBusyError`, naming the holder's pid and host (carried in the holder's
`application_name`). PostgreSQL releases the lock when the holder's session ends, so a
SIGKILLed `muster` blocks nobody: its backend sees the socket close at once (a holder on
this host whose pid is dead is waited for, briefly, while its backend notices), and TCP
keepalives end the session of a machine that vanished within about half a minute. The
heartbeat checks the lock is still held on the live connection; if the session was lost,
the run stops (`ThreadLeaseLostError`).
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import os
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
from psycopg.rows import DictRow

from checkpoints.lease import (
    HOST,
    LEASE_TTL_S,
    LeaseHolder,
    ThreadBusyError,
    hold_thread,
)
from checkpoints.postgres import connect
from workers.processes import pid_alive

APPLICATION_NAME = f"muster-lease {os.getpid()}@{HOST}"[:63]
"""How a lease's session names its holder (PostgreSQL keeps 63 bytes of it)."""
_HOLDER_NAME = re.compile(r"^muster-lease (\d+)@(.*)$")
SESSION_OPTIONS = (
    "-c idle_session_timeout=0 -c tcp_keepalives_idle=10 "
    "-c tcp_keepalives_interval=5 -c tcp_keepalives_count=3"
)
"""The lease's session is idle while the run goes: never time it out; and let the server
notice a vanished client (~25 s) so its lock does not outlive it."""
DEAD_HOLDER_WAIT_S = 10.0
"""How long to wait for the session of a holder whose process is dead on this host to end."""


def lock_key(thread_id: str) -> int:
    """The advisory lock key of `thread_id`: a signed 64-bit hash, namespaced."""
    digest = hashlib.blake2b(f"muster-thread:{thread_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _lock_ids(key: int) -> tuple[int, int]:
    """(classid, objid) under which `pg_locks` shows a bigint advisory lock."""
    unsigned = key & 0xFFFF_FFFF_FFFF_FFFF
    return unsigned >> 32, unsigned & 0xFFFF_FFFF


_HOLDER_SQL = (
    "SELECT a.application_name, a.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
    " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
    " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    " AND l.classid = %s::bigint::oid AND l.objid = %s::bigint::oid"
)


async def _holder(conn: psycopg.AsyncConnection[DictRow], key: int) -> LeaseHolder | None:
    cursor = await conn.execute(_HOLDER_SQL, _lock_ids(key))
    row = await cursor.fetchone()
    if row is None:
        return None
    name = str(row["application_name"] or "")
    if (match := _HOLDER_NAME.match(name)) is None:  # not a muster lease: say what we know
        return LeaseHolder(name, int(row["pid"]), "the PostgreSQL server (backend pid)", math.inf)
    pid, host = int(match[1]), match[2]
    if host == APPLICATION_NAME.split("@", 1)[1]:  # our host, as truncated to fit
        host = HOST
    return LeaseHolder(name, pid, host, math.inf)


class PostgresThreadLeases:
    """`ThreadLeases` as advisory locks in the PostgreSQL database at `url`."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._sessions: dict[str, psycopg.AsyncConnection[DictRow]] = {}

    async def acquire(self, thread_id: str, *, ttl_s: float = LEASE_TTL_S) -> None:
        """Take the lock on a session of its own, or raise `ThreadBusyError`. `ttl_s` is
        unused: the lock lasts as long as the session."""
        conn = await connect(self.url, application_name=APPLICATION_NAME, options=SESSION_OPTIONS)
        key = lock_key(thread_id)
        deadline = time.monotonic() + DEAD_HOLDER_WAIT_S
        try:
            while True:
                cursor = await conn.execute("SELECT pg_try_advisory_lock(%s) AS got", (key,))
                row = await cursor.fetchone()
                if row is not None and row["got"]:
                    self._sessions[thread_id] = conn
                    return
                holder = await _holder(conn, key)
                waiting = holder is None or (holder.host == HOST and not pid_alive(holder.pid))
                if holder is not None and not (waiting and time.monotonic() < deadline):
                    raise ThreadBusyError(thread_id, holder)
                if time.monotonic() >= deadline:  # released and taken again, over and over
                    raise ThreadBusyError(thread_id, LeaseHolder("?", 0, "unknown", math.inf))
                # Released between the two queries, or a dead holder's session still ending.
                await asyncio.sleep(0.05)
        except BaseException:
            await conn.close()
            raise

    async def renew(self, thread_id: str, *, ttl_s: float = LEASE_TTL_S) -> bool:
        """True while the lease's session is alive and still holds the lock."""
        conn = self._sessions.get(thread_id)
        if conn is None:
            return False
        classid, objid = _lock_ids(lock_key(thread_id))
        try:
            cursor = await conn.execute(
                "SELECT count(*) AS held FROM pg_locks WHERE pid = pg_backend_pid()"
                " AND locktype = 'advisory' AND granted AND objsubid = 1"
                " AND classid = %s::bigint::oid AND objid = %s::bigint::oid",
                (classid, objid),
            )
            row = await cursor.fetchone()
        except psycopg.Error:
            return False
        return row is not None and row["held"] == 1

    async def release(self, thread_id: str) -> None:
        """Unlock (so the next holder need not wait for the session to end) and close."""
        conn = self._sessions.pop(thread_id, None)
        if conn is None:
            return
        try:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (lock_key(thread_id),))
        except psycopg.Error:
            pass  # the session is gone, and its lock with it
        finally:
            await conn.close()


async def postgres_lease_holder(url: str, thread_id: str) -> LeaseHolder | None:
    """Who holds `thread_id`'s lease in the database at `url` now, if anyone (for tests)."""
    conn = await connect(url)
    try:
        return await _holder(conn, lock_key(thread_id))
    finally:
        await conn.close()


_leases: dict[str, PostgresThreadLeases] = {}
"""One `PostgresThreadLeases` per database URL in this process."""


@asynccontextmanager
async def hold_postgres_thread(url: str, thread_id: str) -> AsyncIterator[None]:
    """`hold_thread` on the PostgreSQL database at `url`."""
    leases = _leases.setdefault(url, PostgresThreadLeases(url))
    async with hold_thread(leases, thread_id, key=url):
        yield
