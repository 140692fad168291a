"""Connecting to PostgreSQL: one checked connection (`connect`) or a pool (`MusterPool`).

Every Muster connection to PostgreSQL (the saver's pool, the audit log's connection, the
lease sessions, the breakers' connection, the fleet's queue) is made here. A URL libpq cannot
parse is refused before connecting, and a failure is one line (`CheckpointStoreError`); the
password of a URL never appears in a message (`redacted`).
"""

from __future__ import annotations

import asyncio
import random
import select
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit
from weakref import WeakKeyDictionary

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool
from psycopg_pool.base import AttemptWithBackoff  # pinned: tests/test_pinned_internals.py

from checkpoints.saver import CheckpointStoreError

CONNECT_TIMEOUT_S = 10
"""How long connecting may take before the store is reported unreachable."""
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
    when a pool first fails to connect, and passed on to each later try.)

    A connection that fails its `check` (`check_pooled`) also has the pool check all its idle
    connections at once (`AsyncConnectionPool.check`, which replaces the broken ones): after
    a database blip every idle connection of the pool is dead, and the pool's next try then
    gets a live one instead of the next dead one a second later."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        check = kwargs.get("check")
        if check is not None:

            async def checked(conn: psycopg.AsyncConnection[Any]) -> None:
                try:
                    await check(conn)
                except Exception:
                    if not self.closed:
                        _purge(self)
                    raise

            kwargs["check"] = checked
        super().__init__(*args, **kwargs)

    # psycopg_pool's private `_add_connection`: pinned (tests/test_pinned_internals.py).
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
    next try (psycopg_pool's backoff, doubled each time); a `MusterPool` also checks all its
    idle connections at once on the first failure (see its docstring)."""
    now = time.monotonic()
    last = _handed_out_at.get(conn)
    _handed_out_at[conn] = now
    if last is not None and now - last <= IDLE_CHECK_S and not server_spoke(conn):
        return
    if conn.closed or conn.broken:
        raise psycopg.OperationalError("the connection is closed")
    await AsyncConnectionPool.check_connection(conn)


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
