"""PostgreSQL leases on pooled sessions (checkpoints/postgres_lease.py, `lease_pool`).

A lease is a session-level advisory lock, so a session that goes back to the pool must hold
no lock, whatever happened to the run that held it. These tests count sessions and read
`pg_locks` on the machine's PostgreSQL (the `postgres_url` fixture, tests/conftest.py); the
one-writer guarantees themselves are in test_postgres.py and test_fleet.py.
"""

from __future__ import annotations

import asyncio
import uuid

import psycopg
import pytest
from psycopg.rows import DictRow

import checkpoints.postgres_lease as postgres_lease
from checkpoints.lease import ThreadBusyError, hold_thread
from checkpoints.postgres_lease import (
    PostgresThreadLeases,
    hold_postgres_thread,
    lease_pool,
    lock_key,
)

SETTLE_S = 10.0
"""How long a closed session's backend may take to end (and drop its locks)."""


def new_thread(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def _query(url: str, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cursor = await conn.execute(sql, params)
        return await cursor.fetchall()


async def lock_backend(url: str, thread: str) -> int | None:
    """The backend pid (session) holding `thread`'s lease lock, if any."""
    unsigned = lock_key(thread) & 0xFFFF_FFFF_FFFF_FFFF
    rows = await _query(
        url,
        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1"
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        " AND classid = %s::bigint::oid AND objid = %s::bigint::oid",
        (unsigned >> 32, unsigned & 0xFFFF_FFFF),
    )
    return int(str(rows[0][0])) if rows else None


async def advisory_locks(url: str, backend: int) -> int:
    """How many advisory locks session `backend` holds."""
    rows = await _query(
        url,
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = %s",
        (backend,),
    )
    return int(str(rows[0][0]))


async def settled(check: object, what: str) -> None:
    """Wait (up to `SETTLE_S`) until the awaitable factory `check` returns True."""
    assert callable(check)
    deadline = asyncio.get_running_loop().time() + SETTLE_S
    while not await check():
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def test_leases_taken_again_and_again_reuse_at_most_pool_size_sessions(
    postgres_url: str,
) -> None:
    url = postgres_url
    async with lease_pool(url, max_size=3) as pool:
        backends: set[int] = set()

        async def hold(thread: str) -> None:
            async with hold_postgres_thread(url, thread):
                backend = await lock_backend(url, thread)
                assert backend is not None
                backends.add(backend)
                await asyncio.sleep(0.01)

        for _ in range(4):  # three tickets in flight at a time, four times over
            await asyncio.gather(*(hold(new_thread("pooled")) for _ in range(3)))
        for _ in range(8):  # then one at a time
            await hold(new_thread("pooled"))
        assert 1 <= len(backends) <= 3
        assert pool.pool.get_stats()["connections_num"] <= 3
        assert pool.in_use == 0
        for backend in backends:  # each session back in the pool holds nothing
            assert await advisory_locks(url, backend) == 0

        # More holds at once than the pool has sessions: the extra one gets a session of
        # its own (nobody waits for a ticket to end), closed when it is released.
        extra: set[int] = set()
        entered, leave = asyncio.Event(), asyncio.Event()

        async def hold_until_left(thread: str) -> None:
            async with hold_postgres_thread(url, thread):
                backend = await lock_backend(url, thread)
                assert backend is not None
                extra.add(backend)
                if len(extra) == 4:
                    entered.set()
                await leave.wait()

        tasks = [asyncio.create_task(hold_until_left(new_thread("wide"))) for _ in range(4)]
        await asyncio.wait_for(entered.wait(), SETTLE_S)
        assert pool.in_use == 3 and len(extra) == 4
        leave.set()
        await asyncio.gather(*tasks)
        assert pool.in_use == 0
        assert pool.pool.get_stats()["connections_num"] <= 3
        [own] = extra - backends  # the pool's three, and one of its own

        async def own_session_ended() -> bool:
            rows = await _query(url, "SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (own,))
            return rows[0][0] == 0

        await settled(own_session_ended, "the extra lease's own session to end")


async def test_a_lease_released_after_an_error_or_a_cancel_leaves_no_lock(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = postgres_url
    async with lease_pool(url, max_size=2) as pool:
        seen: set[int] = set()

        async def backend_of(thread: str) -> int:
            backend = await lock_backend(url, thread)
            assert backend is not None
            seen.add(backend)
            return backend

        thread = new_thread("failed")
        with pytest.raises(RuntimeError):
            async with hold_postgres_thread(url, thread):
                failed = await backend_of(thread)
                raise RuntimeError("the run failed")
        assert await advisory_locks(url, failed) == 0  # unlocked before it went back
        assert await lock_backend(url, thread) is None

        # A run cancelled while it holds the lease.
        cancelled = new_thread("cancelled")
        entered = asyncio.Event()

        async def run() -> None:
            async with hold_postgres_thread(url, cancelled):
                entered.set()
                await asyncio.Event().wait()

        task = asyncio.create_task(run())
        await asyncio.wait_for(entered.wait(), SETTLE_S)
        cancelled_on = await backend_of(cancelled)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await advisory_locks(url, cancelled_on) == 0

        # Refused (the thread is held, as by another process): the refused lease's pooled
        # session goes back holding nothing either.
        async with hold_postgres_thread(url, thread):
            held_on = await backend_of(thread)
            elsewhere = PostgresThreadLeases(url, pool=pool)
            with pytest.raises(ThreadBusyError):
                async with hold_thread(elsewhere, thread, key=f"elsewhere:{url}"):
                    pytest.fail("took a held thread")
            assert pool.in_use == 1
            assert await lock_backend(url, thread) == held_on
        assert pool.in_use == 0
        for backend in seen:
            assert await advisory_locks(url, backend) == 0

        # The next users of the sessions hold their own lease and nothing else.
        for _ in range(3):
            nxt = new_thread("next")
            async with hold_postgres_thread(url, nxt):
                assert await advisory_locks(url, await backend_of(nxt)) == 1
        assert len(seen) <= 2
        assert pool.pool.get_stats()["connections_num"] <= 2

        # Cancelled as the lock is granted (the reply seen by nobody): the session's lock
        # state is unknown, so it is closed, never returned; the lock goes with it.
        real_try_lock = postgres_lease._try_lock

        async def granted_then_cancelled(conn: psycopg.AsyncConnection[DictRow], key: int) -> bool:
            await real_try_lock(conn, key)
            raise asyncio.CancelledError

        unseen = new_thread("unseen")
        monkeypatch.setattr(postgres_lease, "_try_lock", granted_then_cancelled)
        with pytest.raises(asyncio.CancelledError):
            async with hold_postgres_thread(url, unseen):
                pytest.fail("entered a lease whose acquire was cancelled")
        monkeypatch.undo()
        assert pool.in_use == 0

        async def unlocked() -> bool:
            return await lock_backend(url, unseen) is None

        await settled(unlocked, "the cancelled lease's session to end")
        async with hold_postgres_thread(url, unseen):  # free for anyone now
            assert await lock_backend(url, unseen) is not None
        for backend in seen:
            assert await advisory_locks(url, backend) == 0
