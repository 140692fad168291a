"""Group commit for the PostgreSQL saver (checkpoints/postgres_group.py), on the machine's
PostgreSQL: concurrent callers share round trips and every caller returns only after its
rows are committed; a bad statement fails its own caller only; a cancelled caller does not
take the others' statements down with it; and graph runs through the saver see every row."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import psycopg
import pytest_asyncio
from psycopg_pool import AsyncConnectionPool

from checkpoints.postgres_group import GroupCommit, Statement
from tests.conftest import HANG_TIMEOUT_S


@pytest_asyncio.fixture
async def table(postgres_url: str) -> AsyncIterator[tuple[AsyncConnectionPool, str]]:
    name = f"group_{uuid.uuid4().hex[:10]}"
    pool: AsyncConnectionPool = AsyncConnectionPool(
        postgres_url, min_size=1, max_size=4, open=False, kwargs={"autocommit": True}
    )
    await pool.open(wait=True)
    async with pool.connection() as conn:
        await conn.execute(f"CREATE TABLE {name} (k int PRIMARY KEY, caller int NOT NULL)")
    try:
        yield pool, name
    finally:
        async with pool.connection() as conn:
            await conn.execute(f"DROP TABLE {name}")
        await pool.close()


async def rows(pool: AsyncConnectionPool, name: str) -> dict[int, int]:
    async with pool.connection() as conn:
        cursor = await conn.execute(f"SELECT k, caller FROM {name}")
        return {k: caller for k, caller in await cursor.fetchall()}


def insert(name: str, caller: int, keys: list[int]) -> list[Statement]:
    sql = f"INSERT INTO {name} (k, caller) VALUES (%s, %s)"
    return [
        Statement(sql, [(k, caller) for k in keys[:1]]),
        Statement(sql, [(k, caller) for k in keys[1:]]),
    ]


async def test_concurrent_callers_share_round_trips_and_return_committed(
    table: tuple[AsyncConnectionPool, str],
) -> None:
    pool, name = table
    group = GroupCommit(pool)

    async def caller(i: int) -> dict[int, int]:
        await group.run(insert(name, i, [3 * i, 3 * i + 1, 3 * i + 2]))
        return await rows(pool, name)  # returned: its rows are there for anyone to read

    seen = await asyncio.wait_for(asyncio.gather(*(caller(i) for i in range(40))), HANG_TIMEOUT_S)
    for i, after in enumerate(seen):
        assert all(after.get(k) == i for k in (3 * i, 3 * i + 1, 3 * i + 2))
    assert await rows(pool, name) == {k: k // 3 for k in range(120)}
    assert group.jobs == 40
    assert group.flushes < 40  # statements that queued during a flush went together


async def test_a_bad_statement_fails_its_own_caller_only(
    table: tuple[AsyncConnectionPool, str],
) -> None:
    pool, name = table
    group = GroupCommit(pool)
    await group.run(insert(name, 0, [0]))

    async def caller(i: int) -> None:
        keys = [0, 1000 + i] if i == 5 else [10 * i + 1, 10 * i + 2]  # caller 5 repeats key 0
        await group.run(insert(name, i, keys))

    results = await asyncio.gather(*(caller(i) for i in range(1, 12)), return_exceptions=True)
    failed = {i for i, r in zip(range(1, 12), results, strict=True) if r is not None}
    assert failed == {5}
    assert isinstance(results[4], psycopg.errors.UniqueViolation)
    stored = await rows(pool, name)
    assert 1005 not in stored  # caller 5's statements are all or nothing
    assert {k for k, c in stored.items() if c != 0} == {
        10 * i + j for i in range(1, 12) if i != 5 for j in (1, 2)
    }


async def test_a_cancelled_caller_leaves_the_flush_to_finish(
    table: tuple[AsyncConnectionPool, str],
) -> None:
    pool, name = table
    group = GroupCommit(pool)
    callers = [
        asyncio.create_task(group.run(insert(name, i, [2 * i, 2 * i + 1]))) for i in range(8)
    ]
    await asyncio.sleep(0)  # every caller has queued its statements
    callers[0].cancel()
    outcomes = await asyncio.gather(*callers, return_exceptions=True)
    assert isinstance(outcomes[0], asyncio.CancelledError)
    assert all(o is None for o in outcomes[1:])
    await group.aclose()
    assert set(await rows(pool, name)) >= set(range(2, 16))
