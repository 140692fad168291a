"""Per-thread leases in PostgreSQL: one writer per thread, across processes and machines.

A lease is a session-level advisory lock (`pg_try_advisory_lock`) on a session (connection)
of its own, keyed by a 64-bit hash of the thread id, held for the whole `hold_thread` block.
The guarantee is the SQLite lease's (checkpoints/lease.py): a second process fails fast with
`ThreadBusyError`, naming the holder's pid and host (carried in the holder's
`application_name`). PostgreSQL releases the lock when the holder's session ends, so a
SIGKILLed `muster` blocks nobody: its backend sees the socket close at once (a holder on
this host whose pid is dead is waited for, briefly, while its backend notices), and TCP
keepalives end the session of a machine that vanished within about half a minute. The
heartbeat checks the lock is still held on the live connection; if the session was lost,
the run stops (`ThreadLeaseLostError`).

Sessions come from a small pool (`lease_pool`) while a saver of the same database is open
in the same event loop (`open_postgres_saver` opens one): opening a PostgreSQL session per
ticket (a backend forked, authenticated, set up, torn down) cost more server CPU than
everything else the lease does. A pooled session goes back clean: `release` unlocks
(`pg_advisory_unlock_all`) before it is returned, and a session whose lock state is unknown
(an error or a cancellation mid-statement) is closed, never returned, so the next user never
inherits a lock. Without a pool (a one-shot command taking its lease before the saver
opens) a lease opens a session of its own, as before.
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
from dataclasses import dataclass

import psycopg
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from checkpoints.lease import (
    HOST,
    LEASE_TTL_S,
    LeaseHolder,
    ThreadBusyError,
    hold_thread,
)
from checkpoints.postgres_connect import (
    CONNECT_TIMEOUT_S,
    MusterPool,
    check_pooled,
    check_url,
    connect,
)
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
LEASE_POOL_MAX = 32
"""Lease sessions a pool keeps at most (one per ticket in flight; a hold beyond this many at
once opens a session of its own, as without a pool)."""
LEASE_POOL_IDLE_S = 60.0
"""How long a pooled lease session may sit idle before the pool closes it."""
HEARTBEAT_S = 2.0
"""How often a held lease checks its session still holds the lock (`renew`: one cheap
query on the lease's own session). Sooner than the SQLite lease's beat: a database blip
ends the session and frees the lock at once, and a fleet worker's job can be retried
elsewhere once its heartbeat has been silent for `--stalled-after`; a run that lost its
lease stops within this, before another worker can take the thread up."""


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


async def _try_lock(conn: psycopg.AsyncConnection[DictRow], key: int) -> bool:
    cursor = await conn.execute("SELECT pg_try_advisory_lock(%s) AS got", (key,))
    row = await cursor.fetchone()
    return row is not None and bool(row["got"])


@dataclass
class LeasePool:
    """Lease sessions to one database, reused from one ticket to the next."""

    pool: AsyncConnectionPool[psycopg.AsyncConnection[DictRow]]
    """The sessions (none open until a lease needs one)."""
    in_use: int = 0
    """Sessions out of the pool now, each holding (or taking) one lease."""


_Session = tuple[psycopg.AsyncConnection[DictRow], LeasePool | None]
"""A lease's session and the pool it came from (None: a session of its own)."""

_pools: dict[tuple[str, asyncio.AbstractEventLoop], list[LeasePool]] = {}
"""(database URL, event loop) → the lease pools open there, newest last. A psycopg pool
belongs to the event loop that opened it, so holds on another loop get none."""


@asynccontextmanager
async def lease_pool(url: str, *, max_size: int = LEASE_POOL_MAX) -> AsyncIterator[LeasePool]:
    """A pool of lease sessions to `url`, used by every `hold_postgres_thread(url, …)` of
    this event loop while the block runs (the newest pool, if several are open)."""
    check_url(url)
    pool: AsyncConnectionPool[psycopg.AsyncConnection[DictRow]] = MusterPool(
        url,
        min_size=0,  # a process that never leases a thread opens no lease session
        max_size=max_size,
        open=False,
        timeout=CONNECT_TIMEOUT_S,
        max_idle=LEASE_POOL_IDLE_S,
        kwargs={
            "autocommit": True,
            "prepare_threshold": 0,
            "row_factory": dict_row,
            "connect_timeout": CONNECT_TIMEOUT_S,
            "application_name": APPLICATION_NAME,
            "options": SESSION_OPTIONS,
        },
        check=check_pooled,  # a session the database ended is replaced, not handed out
        name="muster-leases",
    )
    await pool.open()
    leases = LeasePool(pool)
    slot = (url, asyncio.get_running_loop())
    _pools.setdefault(slot, []).append(leases)
    try:
        yield leases
    finally:
        stack = _pools[slot]
        stack.remove(leases)
        if not stack:
            del _pools[slot]
        await pool.close()


def _current_pool(url: str) -> LeasePool | None:
    stack = _pools.get((url, asyncio.get_running_loop()))
    return stack[-1] if stack else None


class PostgresThreadLeases:
    """`ThreadLeases` as advisory locks in the PostgreSQL database at `url`, on sessions of
    `pool` (if given and not all in use) or on a session of their own per lease."""

    def __init__(self, url: str, *, pool: LeasePool | None = None) -> None:
        self.url = url
        self.pool = pool
        self._sessions: dict[str, _Session] = {}

    async def _own_session(self) -> _Session:
        conn = await connect(self.url, application_name=APPLICATION_NAME, options=SESSION_OPTIONS)
        return conn, None

    async def _session(self) -> _Session:
        """A pooled session if one is to be had, else one of its own."""
        leases = self.pool
        if leases is None or leases.pool.closed or leases.in_use >= leases.pool.max_size:
            return await self._own_session()
        try:
            conn = await leases.pool.getconn()
        except PoolTimeout:  # cannot connect: a session of its own says why, in one line
            return await self._own_session()
        leases.in_use += 1
        return conn, leases

    @staticmethod
    async def _give_back(session: _Session, *, clean: bool) -> None:
        """Return a clean session (no lock held) to its pool; close any other. A closed
        session holds no lock, so whatever state a failed one was in, nothing leaks."""
        conn, leases = session
        if leases is None or not clean:
            await conn.close()
        if leases is not None:
            leases.in_use -= 1
            await leases.pool.putconn(conn)  # a closed connection is discarded by the pool

    async def acquire(self, thread_id: str, *, ttl_s: float = LEASE_TTL_S) -> None:
        """Take the lock on a session of its own (pooled or not), or raise
        `ThreadBusyError`. `ttl_s` is unused: the lock lasts as long as the session."""
        key = lock_key(thread_id)
        deadline = time.monotonic() + DEAD_HOLDER_WAIT_S
        session = await self._session()
        got: bool | None
        try:
            got = await _try_lock(session[0], key)
        except psycopg.OperationalError:
            await self._give_back(session, clean=False)
            if session[1] is None:
                raise
            # A pooled session the server ended while it sat idle (a restart, an admin):
            # take the lock on a new session instead.
            session, got = await self._own_session(), None
        except BaseException:
            await self._give_back(session, clean=False)  # the lock may have been granted unseen
            raise
        try:
            if got is None:
                got = await _try_lock(session[0], key)
            while not got:
                holder = await _holder(session[0], key)
                waiting = holder is None or (holder.host == HOST and not pid_alive(holder.pid))
                if holder is not None and not (waiting and time.monotonic() < deadline):
                    raise ThreadBusyError(thread_id, holder)
                if time.monotonic() >= deadline:  # released and taken again, over and over
                    raise ThreadBusyError(thread_id, LeaseHolder("?", 0, "unknown", math.inf))
                # Released between the two queries, or a dead holder's session still ending.
                await asyncio.sleep(0.05)
                got = await _try_lock(session[0], key)
        except ThreadBusyError:
            await self._give_back(session, clean=True)  # every try failed: no lock taken
            raise
        except BaseException:
            # Cancelled or failed mid-statement: the lock may have been granted unseen.
            await self._give_back(session, clean=False)
            raise
        self._sessions[thread_id] = session

    async def renew(self, thread_id: str, *, ttl_s: float = LEASE_TTL_S) -> bool:
        """True while the lease's session is alive and still holds the lock (if not, the
        session is closed: the lease is lost, and `hold_thread` will not release it)."""
        session = self._sessions.get(thread_id)
        if session is None:
            return False
        classid, objid = _lock_ids(lock_key(thread_id))
        try:
            cursor = await session[0].execute(
                "SELECT count(*) AS held FROM pg_locks WHERE pid = pg_backend_pid()"
                " AND locktype = 'advisory' AND granted AND objsubid = 1"
                " AND classid = %s::bigint::oid AND objid = %s::bigint::oid",
                (classid, objid),
            )
            row = await cursor.fetchone()
        except psycopg.Error:
            row = None
        if row is not None and row["held"] == 1:
            return True
        if self._sessions.pop(thread_id, None) is session:
            await self._give_back(session, clean=False)
        return False

    async def release(self, thread_id: str) -> None:
        """Unlock (so the next holder need not wait for the session to end) and give the
        session back to its pool (or close it)."""
        session = self._sessions.pop(thread_id, None)
        if session is None:
            return
        clean = False
        try:
            # Every lock of the session, not just this key: a pooled session must go back
            # holding none, whatever happened on it.
            await session[0].execute("SELECT pg_advisory_unlock_all()")
            clean = True
        except psycopg.Error:
            pass  # the session is gone, and its lock with it
        finally:
            await self._give_back(session, clean=clean)


async def postgres_lease_holder(url: str, thread_id: str) -> LeaseHolder | None:
    """Who holds `thread_id`'s lease in the database at `url` now, if anyone (for tests)."""
    conn = await connect(url)
    try:
        return await _holder(conn, lock_key(thread_id))
    finally:
        await conn.close()


@asynccontextmanager
async def hold_postgres_thread(url: str, thread_id: str) -> AsyncIterator[None]:
    """`hold_thread` on the PostgreSQL database at `url`, on a session of this loop's lease
    pool for `url` if one is open (see `lease_pool`)."""
    leases = PostgresThreadLeases(url, pool=_current_pool(url))
    async with hold_thread(leases, thread_id, key=url, heartbeat_s=HEARTBEAT_S):
        yield
