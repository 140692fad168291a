"""PostgreSQL as the checkpoint store: `--db postgresql://…` (or `MUSTER_DB`).

Checkpoints go through LangGraph's `AsyncPostgresSaver` on a psycopg `AsyncConnectionPool`,
with the same strict msgpack serializer as the SQLite saver. The audit log
(checkpoints/postgres_audit.py) and the per-thread leases (checkpoints/postgres_lease.py)
live in the same database. Connecting is checked first on one connection, so a bad or
unreachable URL is one line (`CheckpointStoreError`, exit 2), never a pool timing out. The
password of a URL never appears in a message. Connections and pools are made in
checkpoints/postgres_connect.py, tables under the lock of checkpoints/postgres_schema.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.types import _DeltaSnapshot  # private, pinned (below)
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from checkpoints.announce import AnnouncesSavedWrites
from checkpoints.audit import AuditLog
from checkpoints.postgres_audit import PostgresAuditLog
from checkpoints.postgres_connect import (
    CONNECT_TIMEOUT_S,
    MusterPool,
    check_pooled,
    check_url,
    connect,
    one_line,
    redacted,
)
from checkpoints.postgres_group import GroupCommit, Statement
from checkpoints.postgres_lease import hold_postgres_thread, lease_pool
from checkpoints.postgres_schema import schema_lock
from checkpoints.saver import CheckpointStoreError, strict_serializer

POOL_MAX = 10
"""Connections the saver's pool opens at most (one process; batch lanes share them)."""


class _GroupCommitWrites(AsyncPostgresSaver):
    """`AsyncPostgresSaver` whose writes (`aput`, `aput_writes`) go through `GroupCommit`
    (checkpoints/postgres_group.py): concurrent tickets' checkpoints and task writes share a
    round trip and a commit, and each call still returns only once its rows are committed.
    The rows are serialized on the loop, not handed to a thread and back as upstream does
    (they are small: the hop cost more CPU than the work, as for the SQLite saver). The SQL
    and the rows are upstream's; `aput` is upstream's but for where its statements go."""

    # Copies of upstream's `aput` / `aput_writes` (and `_DeltaSnapshot`), on its private
    # `_dump_blobs` / `_dump_writes`: pinned, checked against upstream's source by
    # tests/test_pinned_internals.py.
    group: GroupCommit

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        configurable = config["configurable"].copy()
        thread_id = configurable.pop("thread_id")
        checkpoint_ns = configurable.pop("checkpoint_ns")
        checkpoint_id = configurable.pop("checkpoint_id", None)
        copy = checkpoint.copy()
        copy["channel_values"] = copy["channel_values"].copy()
        # As upstream: primitive values stay inline in the checkpoint row, the rest (and
        # a delta channel's snapshot, marked True inline) go to the blobs table.
        blob_values = {}
        for key, value in checkpoint["channel_values"].items():
            if isinstance(value, _DeltaSnapshot):
                blob_values[key] = copy["channel_values"].pop(key)
                copy["channel_values"][key] = True
            elif value is None or isinstance(value, (str, int, float, bool)):
                pass
            else:
                blob_values[key] = copy["channel_values"].pop(key)
        statements = []
        if blob_versions := {k: v for k, v in new_versions.items() if k in blob_values}:
            blobs = self._dump_blobs(thread_id, checkpoint_ns, blob_values, blob_versions)
            statements.append(Statement(self.UPSERT_CHECKPOINT_BLOBS_SQL, blobs))
        row = (
            thread_id,
            checkpoint_ns,
            checkpoint["id"],
            checkpoint_id,
            Jsonb(copy),
            Jsonb(get_serializable_checkpoint_metadata(config, metadata)),
        )
        statements.append(Statement(self.UPSERT_CHECKPOINTS_SQL, [row]))
        await self.group.run(statements)
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        query = (
            self.UPSERT_CHECKPOINT_WRITES_SQL
            if all(channel in WRITES_IDX_MAP for channel, _ in writes)
            else self.INSERT_CHECKPOINT_WRITES_SQL
        )
        configurable = config["configurable"]
        params = self._dump_writes(
            configurable["thread_id"],
            configurable["checkpoint_ns"],
            configurable["checkpoint_id"],
            task_id,
            task_path,
            writes,
        )
        if params:
            await self.group.run([Statement(query, params)])


class MusterPostgresSaver(AnnouncesSavedWrites, _GroupCommitWrites):
    """`AsyncPostgresSaver` on a pool, without the instance lock serialising the pool.

    The upstream saver wraps every query in `async with self.lock` (one `asyncio.Lock` per
    instance), so a saver on a pool of 10 connections still runs one query at a time
    (langgraph issue 7259). The lock is only needed when the saver shares ONE connection;
    a pool hands every query a connection of its own. The fix the issue discusses (and PR
    7269 makes upstream): on a pool, replace the lock by a semaphore the size of the pool.
    Measured with 16 concurrent writers (bench/pg_saver_lock.py): see docs/benchmarks.md.
    """

    def __init__(self, pool: AsyncConnectionPool[Any], *, allowed_types: Sequence[type]) -> None:
        super().__init__(pool, serde=strict_serializer(allowed_types))
        self.group = GroupCommit(pool)
        # A semaphore is an async context manager like the lock `_cursor` enters (pinned:
        # tests/test_pinned_internals.py).
        self.lock = asyncio.Semaphore(pool.max_size)  # type: ignore[assignment]

    async def athread_ids(self) -> list[str]:
        """Every thread id in the store, most recently written first."""
        # Upstream's private `_cursor` and its `checkpoints` table: tests/test_pinned_internals.py.
        async with self._cursor() as cur:
            await cur.execute(
                "SELECT thread_id, MAX(checkpoint_id) AS last FROM checkpoints "
                "WHERE checkpoint_ns = '' GROUP BY thread_id ORDER BY last DESC"
            )
            return [str(row["thread_id"]) for row in await cur.fetchall()]


@asynccontextmanager
async def open_postgres_saver(
    url: str, *, allowed_types: Sequence[type] = (), max_size: int = POOL_MAX
) -> AsyncIterator[MusterPostgresSaver]:
    """A `MusterPostgresSaver` on a pool to `url`, its tables set up."""
    probe = await connect(url)  # a clear error for a bad URL, before any pool retries
    try:
        pool: AsyncConnectionPool[Any] = MusterPool(
            url,
            min_size=1,
            max_size=max_size,
            open=False,
            timeout=CONNECT_TIMEOUT_S * 3,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
            check=check_pooled,  # a connection the database ended is replaced, not used
            name="muster-checkpoints",
        )
        async with schema_lock(probe):
            await pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
            try:
                saver = MusterPostgresSaver(pool, allowed_types=allowed_types)
                await saver.setup()
            except BaseException:
                await pool.close()
                raise
    except psycopg.Error as error:
        raise CheckpointStoreError(
            f"cannot open checkpoint database {redacted(url)}: {one_line(error)}"
        ) from None
    finally:
        await probe.close()
    try:
        # The lease pool lives as long as the saver: the processes that run tickets (a
        # worker, a batch) lease each thread on a reused session, not a new one per ticket.
        async with lease_pool(url):
            yield saver
    finally:
        try:
            await saver.group.aclose()  # writes still out finish before their connections go
        finally:
            await pool.close()


@dataclass(frozen=True)
class PostgresStore:
    """Checkpoints, audit and leases in one PostgreSQL database."""

    url: str

    @property
    def location(self) -> str:
        return self.url

    @property
    def key(self) -> str:
        return self.url

    def __str__(self) -> str:
        return redacted(self.url)

    def check_location(self) -> None:
        check_url(self.url)

    def check(self, *, must_exist: bool = False) -> None:
        check_url(self.url)  # reachability is checked when the store opens

    def may_hold_threads(self) -> bool:
        return True

    def open_saver(
        self, *, must_exist: bool = False, allowed_types: Sequence[type] = ()
    ) -> AbstractAsyncContextManager[MusterPostgresSaver]:
        return open_postgres_saver(self.url, allowed_types=allowed_types)

    @asynccontextmanager
    async def open_lane_savers(
        self, saver: Any, count: int, *, allowed_types: Sequence[type] = ()
    ) -> AsyncIterator[list[Any]]:
        """Every lane shares `saver`: its pool gives each query a connection of its own
        (and `MusterPostgresSaver` lets the pool be used concurrently)."""
        yield [saver] * count

    async def open_audit(self, *, on_loop: bool = True) -> AuditLog:
        return await PostgresAuditLog.open(self.url)  # asyncio-native: no `on_loop`

    def hold_thread(
        self, thread_id: str, *, must_exist: bool = False
    ) -> AbstractAsyncContextManager[None]:
        return hold_postgres_thread(self.url, thread_id)
