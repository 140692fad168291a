"""Group commit for the PostgreSQL saver: concurrent checkpoint writes share one round trip.

With `durability="sync"` every superstep writes its checkpoint (`aput`) and every task its
writes (`aput_writes`), each awaited before the run goes on: about fifteen statements a
ticket. Upstream, each takes a pool connection, enters a pipeline and syncs: one round trip
and one commit each, and psycopg's per-round-trip work in the client (about a quarter of a
fleet worker's CPU was the saver's) while the tickets beside it queue theirs.

`GroupCommit` keeps the guarantee and shares the trip. A caller hands over its statements
and waits; while one flush is out, the statements that arrive queue, and the next flush sends
them all in one pipeline. In pipeline mode PostgreSQL runs the statements between two syncs
as one implicit transaction, so a flush commits once, and a caller returns only after the
commit that holds its statements, as before: a checkpoint is in the store when `aput`
returns. Nothing waits on a timer: a lone caller goes at once, as upstream.

One bad statement aborts its whole transaction, so a failed flush is run again one caller at
a time: each caller sees its own error, never another's. PostgreSQL has no library feature
for this (psycopg's pipeline is per connection, LangGraph's saver sends per call), hence our
own, in one place.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from psycopg_pool import AsyncConnectionPool


@dataclass(frozen=True)
class Statement:
    """One statement and the rows it runs for (`executemany`)."""

    sql: str
    rows: Sequence[Sequence[Any]]


@dataclass
class _Job:
    """One caller's statements and the future it waits on."""

    statements: Sequence[Statement]
    done: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    def __post_init__(self) -> None:
        # A caller cancelled mid-flush no longer awaits its future; mark its outcome seen so
        # asyncio does not report an error nobody was left to read.
        self.done.add_done_callback(lambda done: done.cancelled() or done.exception())

    def settle(self, error: BaseException | None) -> None:
        if self.done.done():  # its caller was cancelled and stopped waiting
            return
        if error is None:
            self.done.set_result(None)
        else:
            self.done.set_exception(error)


class GroupCommit:
    """Runs the statements of concurrent callers on `pool`, as many per round trip as have
    queued while the previous one was out."""

    def __init__(self, pool: AsyncConnectionPool[Any]) -> None:
        self._pool = pool
        self._queued: list[_Job] = []
        self._flusher: asyncio.Task[None] | None = None
        self.flushes = 0
        """Round trips so far (for benchmarks and tests)."""
        self.jobs = 0
        """Callers served so far."""

    async def run(self, statements: Sequence[Statement]) -> None:
        """Run `statements` in one transaction; return once it is committed."""
        if not statements:
            return
        job = _Job(statements)
        self._queued.append(job)
        if self._flusher is None or self._flusher.done():
            # A task of its own: a caller cancelled mid-flush must not cancel the flush
            # that carries the other callers' statements.
            self._flusher = asyncio.create_task(self._flush_all(), name="muster-group-commit")
        # The flush settles the future; a cancelled caller leaves the flush to finish.
        await asyncio.shield(job.done)

    async def _flush_all(self) -> None:
        while self._queued:
            batch, self._queued = self._queued, []
            self.flushes += 1
            self.jobs += len(batch)
            try:
                await self._execute([s for job in batch for s in job.statements])
            except Exception as error:
                if len(batch) == 1:
                    batch[0].settle(error)
                    continue
                # One caller's statement aborted the shared transaction: run each caller's
                # statements alone, so only that caller sees its error.
                for job in batch:
                    try:
                        await self._execute(job.statements)
                    except Exception as own_error:
                        job.settle(own_error)
                    else:
                        job.settle(None)
            except BaseException as error:  # cancelled (the saver is closing): tell everyone
                for job in batch + self._queued:
                    job.settle(error)
                self._queued = []
                raise
            else:
                for job in batch:
                    job.settle(None)

    async def _execute(self, statements: Sequence[Statement]) -> None:
        async with self._pool.connection() as conn:
            if len(statements) == 1 and len(statements[0].rows) == 1:
                # One row: one statement, its own transaction in autocommit.
                await conn.execute(statements[0].sql, statements[0].rows[0], binary=True)
                return
            # Between the pipeline's start and its sync at exit, PostgreSQL runs every
            # statement in one implicit transaction: all of them commit, or none.
            async with conn.pipeline(), conn.cursor(binary=True) as cur:
                for statement in statements:
                    await cur.executemany(statement.sql, statement.rows)

    async def aclose(self) -> None:
        """Wait for the flush in progress (a saver closing with writes still out)."""
        if self._flusher is not None and not self._flusher.done():
            await asyncio.shield(self._flusher)
