"""One writer per thread: a lease per thread id, taken before a process reads the thread's
state and held until the step it runs is saved.

A lease is a row in `muster_thread_lease` of the checkpoint database: the owner (a token of
one process), its pid and host, and when it expires. Acquiring it is one `BEGIN IMMEDIATE`
transaction on a connection of its own: insert the row, or take it over if it expired or its
owner's pid is dead on this host (a SIGKILLed `muster` must not block `muster resume`). A
heartbeat renews it while the run goes; leaving `hold_thread` deletes it. A second process
fails fast with `ThreadBusyError`; it never runs the work again.

`ThreadLeases` is the small protocol a store implements: SQLite here, PostgreSQL in
checkpoints/postgres_lease.py (advisory locks). `CheckpointStore.hold_thread`
(checkpoints/store.py) picks the store's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from checkpoints.saver import (
    BUSY_TIMEOUT_S,
    CheckpointStoreError,
    check_db_path,
    resolve_db_path,
)
from workers.errors import MusterError
from workers.processes import pid_alive


def _ttl_from_env(default: float = 30.0) -> float:
    raw = os.environ.get("MUSTER_LEASE_TTL_S", "")
    try:
        value = float(raw) if raw else default
    except ValueError:
        return default
    return value if 1.0 <= value < 86_400 else default


LEASE_TTL_S = _ttl_from_env()
"""How long a lease lives without a heartbeat; a stalled or frozen owner loses it after this.
30 s unless `MUSTER_LEASE_TTL_S` says otherwise (1 s to a day): a test that freezes an owner
on purpose sets a long one, so what it checks never depends on how fast a process starts."""
HEARTBEAT_S = LEASE_TTL_S / 3
"""How often the holder renews its lease."""

HOST = socket.gethostname()
PROCESS_OWNER = f"{HOST}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
"""This process's owner token: re-entrant holds in one process share the lease."""

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS muster_thread_lease ("
    "thread_id TEXT PRIMARY KEY, owner TEXT NOT NULL, pid INTEGER NOT NULL, "
    "host TEXT NOT NULL, expires_at REAL NOT NULL)"
)


class ThreadBusyError(MusterError):
    """Another process is advancing the thread; the message says who and what to do."""

    def __init__(self, thread_id: str, holder: LeaseHolder) -> None:
        where = f"pid {holder.pid}" if holder.host == HOST else f"pid {holder.pid} on {holder.host}"
        super().__init__(
            f"thread {thread_id} is being advanced by another process ({where}); "
            "try again when it finishes"
        )
        self.thread_id = thread_id
        self.holder = holder


class ThreadLeaseLostError(MusterError):
    """The lease expired and another process took the thread over mid-run (this one stalled
    for longer than `LEASE_TTL_S`); this run stops, the other's work stands."""


@dataclass(frozen=True)
class LeaseHolder:
    """Who holds a thread's lease."""

    owner: str
    """The holder's process token (`PROCESS_OWNER` of that process)."""
    pid: int
    """The holder's pid on `host`."""
    host: str
    """The holder's host name."""
    expires_at: float
    """Unix time after which anyone may take the lease over."""


class ThreadLeases(Protocol):
    """A store's per-thread leases. Each call is atomic in the store."""

    async def acquire(self, thread_id: str, *, ttl_s: float) -> None:
        """Take the thread's lease for this process, or raise `ThreadBusyError`."""
        ...

    async def renew(self, thread_id: str, *, ttl_s: float) -> bool:
        """Push the expiry on; False if this process no longer holds the lease."""
        ...

    async def release(self, thread_id: str) -> None:
        """Give the lease up (a no-op if this process does not hold it)."""
        ...


def _takeable(holder: LeaseHolder, now: float) -> bool:
    if holder.owner == PROCESS_OWNER or holder.expires_at <= now:
        return True
    return holder.host == HOST and not pid_alive(holder.pid)


KEPT_CONNECTIONS = 8
"""Lease connections a process keeps open (the files it used last, per thread)."""


@dataclass(frozen=True)
class _Kept:
    """An open lease connection and the file it was opened on (device, inode)."""

    conn: sqlite3.Connection
    file: tuple[int, int]

    def still_at(self, path: Path) -> bool:
        """Whether `path` is still the file this connection was opened on (as far as its
        device and inode numbers tell: a store deleted and made again while the process
        runs loses the saver's writes as well, which holds the file the same way)."""
        try:
            there = os.stat(path)
        except OSError:
            return False
        return (there.st_dev, there.st_ino) == self.file

    def close(self) -> None:
        self.conn.close()


_kept: OrderedDict[tuple[int, Path], _Kept] = OrderedDict()
"""(thread, database file) → its lease connection, most recently used last."""


class SqliteThreadLeases:
    """`ThreadLeases` in the SQLite checkpoint file.

    The connection is kept open between calls (per thread, for the file it was opened on):
    opening one, checking the file and setting it up cost 0.77 ms of CPU a ticket for an
    acquire and a release, more than the leasing. A file replaced or deleted since (another
    file) gets a new connection, checked as the first one was."""

    def __init__(self, db: str | Path | None = None, *, must_exist: bool = False) -> None:
        self.db = resolve_db_path(db)
        self.must_exist = must_exist

    def _connect(self) -> sqlite3.Connection:
        key = (threading.get_ident(), self.db)
        kept = _kept.get(key)
        if kept is not None:
            if kept.still_at(self.db):
                _kept.move_to_end(key)
                return kept.conn
            self._forget()
        check_db_path(self.db, must_exist=self.must_exist)
        try:
            # check_same_thread off: the connection is kept per thread already (the key),
            # and a thread id Python reuses after a thread ended (a server's request thread,
            # a test's event loop) must not turn a kept connection into a ProgrammingError.
            conn = sqlite3.connect(
                self.db, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            # Like the checkpointer's: in WAL mode, NORMAL skips the fsync on each commit.
            # A lease is worth no fsync (a power cut loses the process that held it anyway),
            # and with FULL every acquire and release stalled the event loop on the disk.
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(SCHEMA)
        except sqlite3.DatabaseError as error:
            raise CheckpointStoreError(
                f"cannot open checkpoint database {self.db}: {error}"
            ) from None
        try:
            there = os.stat(self.db)
        except OSError:  # gone already: not kept, the next call opens and checks again
            return conn
        _kept[key] = _Kept(conn, (there.st_dev, there.st_ino))
        while len(_kept) > KEPT_CONNECTIONS:
            _kept.popitem(last=False)[1].close()
        return conn

    def _forget(self) -> None:
        """Close and drop this thread's kept connection to the file (after an error, or
        when the file changed under it)."""
        kept = _kept.pop((threading.get_ident(), self.db), None)
        if kept is not None:
            kept.close()

    def _acquire(self, thread_id: str, ttl_s: float) -> None:
        conn = self._connect()
        try:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as error:  # locked for BUSY_TIMEOUT_S
                raise CheckpointStoreError(
                    f"cannot lease thread {thread_id} in {self.db}: {error}; try again"
                ) from None
            try:
                row = conn.execute(
                    "SELECT owner, pid, host, expires_at FROM muster_thread_lease "
                    "WHERE thread_id = ?",
                    (thread_id,),
                ).fetchone()
                now = time.time()
                if row is not None and not _takeable(holder := LeaseHolder(*row), now):
                    raise ThreadBusyError(thread_id, holder)
                conn.execute(
                    "INSERT OR REPLACE INTO muster_thread_lease "
                    "(thread_id, owner, pid, host, expires_at) VALUES (?, ?, ?, ?, ?)",
                    (thread_id, PROCESS_OWNER, os.getpid(), HOST, now + ttl_s),
                )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.Error:
            self._forget()  # in an unknown state: the next call opens a new one
            raise

    def _renew(self, thread_id: str, ttl_s: float) -> bool:
        conn = self._connect()
        try:
            cursor = conn.execute(
                "UPDATE muster_thread_lease SET expires_at = ? WHERE thread_id = ? AND owner = ?",
                (time.time() + ttl_s, thread_id, PROCESS_OWNER),
            )
        except sqlite3.Error:
            self._forget()
            raise
        return cursor.rowcount == 1

    def _release(self, thread_id: str) -> None:
        conn = self._connect()
        try:
            conn.execute(
                "DELETE FROM muster_thread_lease WHERE thread_id = ? AND owner = ?",
                (thread_id, PROCESS_OWNER),
            )
        except sqlite3.Error:
            self._forget()
            raise

    # Inline on the event loop, like the checkpointer (checkpoints/inline_sqlite.py): each
    # call is one short transaction, cheaper than the hop to a worker thread and back.
    async def acquire(self, thread_id: str, *, ttl_s: float = LEASE_TTL_S) -> None:
        self._acquire(thread_id, ttl_s)

    async def renew(self, thread_id: str, *, ttl_s: float = LEASE_TTL_S) -> bool:
        return self._renew(thread_id, ttl_s)

    async def release(self, thread_id: str) -> None:
        self._release(thread_id)


def lease_holder(db: str | Path, thread_id: str) -> LeaseHolder | None:
    """Who holds `thread_id`'s lease in `db` now, if anyone (for `muster show` and tests)."""
    conn = sqlite3.connect(db, timeout=BUSY_TIMEOUT_S)
    try:
        row = conn.execute(
            "SELECT owner, pid, host, expires_at FROM muster_thread_lease WHERE thread_id = ?",
            (thread_id,),
        ).fetchone()
    except sqlite3.OperationalError:  # no table yet: nobody ever leased a thread here
        return None
    finally:
        conn.close()
    return LeaseHolder(*row) if row is not None else None


@dataclass
class _Hold:
    task: asyncio.Task[object] | None
    depth: int = 1


_held: dict[tuple[str, str], _Hold] = {}
"""(store, thread) → the task of this process holding the lease, and how deep it is nested."""


@asynccontextmanager
async def hold_thread(
    leases: ThreadLeases,
    thread_id: str,
    *,
    key: str,
    ttl_s: float = LEASE_TTL_S,
    heartbeat_s: float = HEARTBEAT_S,
) -> AsyncIterator[None]:
    """Hold `thread_id`'s lease in `leases` for the block; `key` names the store (its path or
    URL). Nested blocks in one task share the outermost one's lease and heartbeat; another
    task of this process is refused like another process. If the heartbeat finds the lease
    taken over, the block is cancelled and `ThreadLeaseLostError` raised."""
    slot = (key, thread_id)
    holder = asyncio.current_task()
    if (held := _held.get(slot)) is not None:
        if held.task is not holder:
            raise ThreadBusyError(
                thread_id, LeaseHolder(PROCESS_OWNER, os.getpid(), HOST, time.time() + ttl_s)
            )
        held.depth += 1
        try:
            yield
        finally:
            held.depth -= 1
        return
    _held[slot] = _Hold(holder)  # claimed before the await: a sibling task sees it at once
    try:
        await leases.acquire(thread_id, ttl_s=ttl_s)
    except BaseException:
        del _held[slot]
        raise
    lost = False

    async def heartbeat() -> None:
        nonlocal lost
        while True:
            await asyncio.sleep(heartbeat_s)
            if not await leases.renew(thread_id, ttl_s=ttl_s):
                lost = True
                if holder is not None:
                    holder.cancel()
                return

    beat = asyncio.create_task(heartbeat(), name=f"lease-heartbeat-{thread_id}")
    try:
        yield
    except asyncio.CancelledError:
        if lost and holder is not None and holder.uncancel() == 0:
            raise ThreadLeaseLostError(
                f"thread {thread_id}: this process lost its lease (stalled over {ttl_s:g}s) "
                "and another process took the thread over; see `muster show "
                f"{thread_id}`"
            ) from None
        raise
    finally:
        del _held[slot]
        beat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beat
        if not lost:
            # Shielded: a cancelled run must still give the lease up (a SIGKILL cannot, which
            # is why a dead owner's lease may be taken over at once).
            await asyncio.shield(leases.release(thread_id))


@asynccontextmanager
async def hold_sqlite_thread(
    db: str | Path | None, thread_id: str, *, must_exist: bool = False
) -> AsyncIterator[None]:
    """`hold_thread` on the SQLite checkpoint file `db` (see `resolve_db_path`)."""
    leases = SqliteThreadLeases(db, must_exist=must_exist)
    async with hold_thread(leases, thread_id, key=str(leases.db.resolve())):
        yield
