"""An aiosqlite connection that runs each SQLite call on the calling thread (the event loop).

Why our own: `aiosqlite` runs every call on a worker thread of its own and hands the result
back through a future, `call_soon_threadsafe` and the loop's self-pipe. A ticket makes about
100 such calls (each checkpoint and task write is a cursor, an execute, a commit and a
close), and the hand-offs cost more CPU than the SQL: on the Black Friday queue the worker
thread alone used 10 ms of CPU per ticket, and the loop about as much again waking up for
it (bench/cpu_profile.py). Checkpoint statements on a WAL file with `synchronous=NORMAL`
take tens of microseconds and never fsync on commit, so running them inline blocks the loop
for less than the hand-off would.

What keeps this safe: every transaction in this project is opened and committed without a
real suspension in between (LangGraph's savers, the audit log, the claims and the lease all
execute and commit back to back), so two inline connections of one process never wait on
each other's write lock. A writer in another process can hold the lock for the length of
its own short transaction; `timeout` (SQLite's busy handler) waits that out, and the loop
waits with it, for microseconds to milliseconds.

`InlineConnection` keeps aiosqlite's interface (cursors, `async with conn.execute(...)`),
so `AsyncSqliteSaver` and the rest of the code use it unchanged.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import aiosqlite


class InlineConnection(aiosqlite.Connection):
    """`aiosqlite.Connection` without the worker thread: each call runs where it is awaited."""

    # Built on aiosqlite's private `_execute`, `_connect`, `_running`, `_connection`,
    # `_connector` and unstarted `_thread`: pinned, checked by tests/test_pinned_internals.py.

    def __init__(self, connector: Callable[[], sqlite3.Connection], iter_chunk_size: int) -> None:
        super().__init__(connector, iter_chunk_size)
        # The base class made a worker thread; it is never started. LangGraph's saver asks
        # whether it is alive and, when it is not, awaits the connection, which is a no-op
        # here once connected.

    async def _execute(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if not self._running or self._connection is None:
            raise ValueError("Connection closed")
        return fn(*args, **kwargs)

    async def _connect(self) -> InlineConnection:
        if self._connection is None:
            self._connection = self._connector()
        return self

    def __await__(self) -> Generator[Any, None, InlineConnection]:
        return self._connect().__await__()

    def stop(self) -> None:
        """Close at once: there is no worker thread to stop."""
        self._running = False
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    async def close(self) -> None:
        self.stop()


def connect_inline(path: str | Path, *, timeout: float) -> InlineConnection:
    """An `InlineConnection` to the SQLite file at `path`; await it (or `async with` it).

    `timeout` is SQLite's busy timeout: how long a write waits for another process's write
    lock before failing."""

    def connector() -> sqlite3.Connection:
        return sqlite3.connect(str(path), timeout=timeout)

    return InlineConnection(connector, iter_chunk_size=64)
