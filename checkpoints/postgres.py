"""PostgreSQL as the checkpoint store: `--db postgresql://…` (or `MUSTER_DB`).

Checkpoints go through LangGraph's `AsyncPostgresSaver` on a psycopg `AsyncConnectionPool`,
with the same strict msgpack serializer as the SQLite saver. The audit log
(checkpoints/postgres_audit.py) and the per-thread leases (checkpoints/postgres_lease.py)
live in the same database. Connecting is checked first on one connection, so a bad or
unreachable URL is one line (`CheckpointStoreError`, exit 2), never a pool timing out. The
password of a URL never appears in a message.
"""

from __future__ import annotations

import asyncio
import random
import select
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit
from weakref import WeakKeyDictionary

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
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import DictRow, dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool
from psycopg_pool.base import AttemptWithBackoff

from checkpoints.announce import AnnouncesSavedWrites
from checkpoints.audit import AuditLog
from checkpoints.postgres_group import GroupCommit, Statement
from checkpoints.saver import CheckpointStoreError, strict_serializer

CONNECT_TIMEOUT_S = 10
"""How long connecting may take before the store is reported unreachable."""
POOL_MAX = 10
"""Connections the saver's pool opens at most (one process; batch lanes share them)."""
SCHEMA_LOCK = 0x4D5553_5445_52
"""The advisory lock key that serialises creating Muster's tables: PostgreSQL's
`CREATE TABLE IF NOT EXISTS` (and the saver's migrations) can fail when two sessions run it
at once on a fresh database."""
SCHEMA_WAIT_S = 60.0
"""How long to wait for another process setting up the tables (first use of a database)."""


IDLE_CHECK_S = 5.0
"""A pooled connection not handed out for this long is checked with a round trip before it
is used again (`check_pooled`)."""


def redacted(url: str) -> str:
    """`url` with its password replaced by `***`, for messages."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url.split("@")[-1]
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = (parts.username or "") + ":***"
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[-1]}"))


def one_line(error: BaseException) -> str:
    """A psycopg error as one line (libpq's messages span several, with tabs)."""
    text = " ".join(str(error).split())
    return text or type(error).__name__


def check_url(url: str) -> None:
    """Refuse a URL libpq cannot parse, without connecting."""
    try:
        conninfo_to_dict(url)
    except psycopg.Error as error:
        raise CheckpointStoreError(
            f"cannot use PostgreSQL URL {redacted(url)}: {one_line(error)}"
        ) from None


async def connect(url: str, **kwargs: Any) -> psycopg.AsyncConnection[DictRow]:
    """One autocommit connection to `url`, or a one-line `CheckpointStoreError`."""
    check_url(url)
    try:
        return await psycopg.AsyncConnection.connect(
            url,
            autocommit=True,
            prepare_threshold=0,
            row_factory=dict_row,
            connect_timeout=CONNECT_TIMEOUT_S,
            **kwargs,
        )
    except psycopg.Error as error:
        raise CheckpointStoreError(
            f"cannot open checkpoint database {redacted(url)}: {one_line(error)}"
        ) from None


_handed_out_at: WeakKeyDictionary[psycopg.AsyncConnection[Any], float] = WeakKeyDictionary()
"""When a pool last handed each connection out (`time.monotonic()`), for `check_pooled`."""


def server_spoke(conn: psycopg.AsyncConnection[Any]) -> bool:
    """True if the server sent something on an idle connection, or it is known dead. An idle
    session's server says nothing unless it is ending it: `pg_terminate_backend`, a restart
    or an admin's kill leave a FATAL message and the socket's end to read. A poll of the
    socket, no round trip."""
    if conn.closed or conn.broken:
        return True
    try:
        poll = select.poll()  # not select(): no limit on the descriptor's number
        poll.register(conn.pgconn.socket, select.POLLIN | select.POLLPRI)
        return bool(poll.poll(0))
    except (OSError, ValueError, psycopg.Error):
        return True


RECONNECT_DELAY_MAX_S = 0.5
"""The longest a pool waits between two tries to reconnect to a database that went away
(`MusterPool`)."""


class CappedBackoff(AttemptWithBackoff):
    """psycopg_pool's reconnect backoff (1 s, doubled each try, with 10% jitter) with a
    ceiling of `RECONNECT_DELAY_MAX_S`. Uncapped, a pool whose database was away for 8 s
    had tried at 0, 1, 3 and 7 s and tried next at 15 s: the queue stood still for 7 s
    after the database answered again. A try is one connect to a host that refuses at once
    (or times out after `CONNECT_TIMEOUT_S`), so two a second cost nothing."""

    INITIAL_DELAY = 0.25

    def update_delay(self, now: float) -> None:
        super().update_delay(now)
        ceiling = RECONNECT_DELAY_MAX_S * random.uniform(0.8, 1.0)  # noqa: S311
        self.delay = min(self.delay, ceiling)


class MusterPool(AsyncConnectionPool[Any]):
    """Every Muster psycopg pool (saver, leases, the fleet's queue): psycopg_pool's, with
    the reconnect backoff capped (`CappedBackoff`), so connections come back within half a
    second of the database answering. (The backoff object is made in `_add_connection`
    when a pool first fails to connect, and passed on to each later try.)"""

    async def _add_connection(
        self, attempt: AttemptWithBackoff | None, growing: bool = False
    ) -> None:
        if attempt is None:
            attempt = CappedBackoff(timeout=self.reconnect_timeout)
        await super()._add_connection(attempt, growing=growing)


async def check_pooled(conn: psycopg.AsyncConnection[Any]) -> None:
    """The `check` of Muster's psycopg pools (saver, leases, audit, the fleet's queue): a
    connection the pool hands out is checked with a round trip (the pool's own
    `check_connection`) when it is new, unused for `IDLE_CHECK_S`, or when the server has
    spoken on it since (`server_spoke`: what a terminated backend leaves); otherwise the
    check costs a poll of its socket, not a round trip (checking every checkout cost
    Procrastinate's fetch and finish three round trips more a job).

    A connection that fails is discarded by the pool, which then waits a second before its
    next try (psycopg_pool's backoff, doubled each time): after a database blip every idle
    connection of the pool is dead, so the first failure also has the pool check all its
    idle connections at once (`AsyncConnectionPool.check`, which replaces the broken ones),
    and the next try gets a live one."""
    now = time.monotonic()
    last = _handed_out_at.get(conn)
    _handed_out_at[conn] = now
    if last is not None and now - last <= IDLE_CHECK_S and not server_spoke(conn):
        return
    try:
        if conn.closed or conn.broken:
            raise psycopg.OperationalError("the connection is closed")
        await AsyncConnectionPool.check_connection(conn)
    except Exception:
        pool = getattr(conn, "_pool", None)  # psycopg_pool's own back reference
        if isinstance(pool, AsyncConnectionPool) and not pool.closed:
            _purge(pool)
        raise


_purges: dict[int, asyncio.Task[None]] = {}
"""The `pool.check()` in progress per pool (by id; held here, as asyncio keeps tasks weakly)."""


def _purge(pool: AsyncConnectionPool[Any]) -> None:
    """Have `pool` check its idle connections, once at a time."""
    key = id(pool)
    if key in _purges:
        return

    async def purge() -> None:
        try:
            await pool.check()
        except Exception:  # noqa: S110 - the pool's next checks will tell
            pass
        finally:
            _purges.pop(key, None)

    _purges[key] = asyncio.get_running_loop().create_task(purge(), name="muster-pool-check")


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


class _GroupCommitWrites(AsyncPostgresSaver):
    """`AsyncPostgresSaver` whose writes (`aput`, `aput_writes`) go through `GroupCommit`
    (checkpoints/postgres_group.py): concurrent tickets' checkpoints and task writes share a
    round trip and a commit, and each call still returns only once its rows are committed.
    The rows are serialized on the loop, not handed to a thread and back as upstream does
    (they are small: the hop cost more CPU than the work, as for the SQLite saver). The SQL
    and the rows are upstream's; `aput` is upstream's but for where its statements go."""

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
        # A semaphore is an async context manager like the lock `_cursor` enters.
        self.lock = asyncio.Semaphore(pool.max_size)  # type: ignore[assignment]

    async def athread_ids(self) -> list[str]:
        """Every thread id in the store, most recently written first."""
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
        from checkpoints.postgres_lease import lease_pool  # it imports this module

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
        from checkpoints.postgres_audit import PostgresAuditLog  # asyncio-native: no `on_loop`

        return await PostgresAuditLog.open(self.url)

    def hold_thread(
        self, thread_id: str, *, must_exist: bool = False
    ) -> AbstractAsyncContextManager[None]:
        from checkpoints.postgres_lease import hold_postgres_thread

        return hold_postgres_thread(self.url, thread_id)
