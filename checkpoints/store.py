"""The checkpoint store: where a thread's checkpoints, audit rows and lease live together.

`checkpoint_store(db)` turns `--db` (or `MUSTER_DB`, or the default file) into a
`CheckpointStore`: a `SqliteStore` on a file (the embedded default), or a `PostgresStore`
(checkpoints/postgres.py) for a URL starting `postgresql://` or `postgres://`. The shell
(graph/app) asks the store for what it needs — the saver, the audit log, a thread's lease,
the savers of batch lanes — and never branches on the backend itself.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from langgraph.checkpoint.base import BaseCheckpointSaver

from checkpoints.audit import AuditLog
from checkpoints.lease import hold_sqlite_thread
from checkpoints.saver import (
    DEFAULT_DB,
    CheckpointStoreError,
    check_db_location,
    check_db_path,
    open_checkpointer,
)

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
"""How a `--db` value names a PostgreSQL database rather than a SQLite file."""

Saver = BaseCheckpointSaver[str]
"""A checkpoint saver, whichever the store (`AsyncSqliteSaver`, `AsyncPostgresSaver`)."""


def is_postgres_url(db: object) -> bool:
    """True if `db` is a PostgreSQL connection URL (not a file path)."""
    return isinstance(db, str) and db.startswith(POSTGRES_SCHEMES)


def store_location(db: str | Path | None = None) -> Path | str:
    """`db`, else `MUSTER_DB`, else the default file: a PostgreSQL URL (a `str`) or the path
    of a SQLite file (a `Path`). The one place the environment fallback is read."""
    given = db if db not in (None, "") else os.environ.get("MUSTER_DB") or DEFAULT_DB
    if is_postgres_url(given):
        return str(given)
    return Path(given).expanduser()


class CheckpointStore(Protocol):
    """A database holding checkpoints, the audit log and the per-thread leases."""

    @property
    def location(self) -> Path | str:
        """The SQLite file, or the PostgreSQL URL."""
        ...

    @property
    def key(self) -> str:
        """Names the store within this process (the lease's re-entrance key)."""
        ...

    def check_location(self) -> None:
        """Refuse, cheaply and before anything starts, a location no store can have (for a
        file: one whose folder does not exist, since a run creates no folders)."""
        ...

    def check(self, *, must_exist: bool = False) -> None:
        """Refuse a location that is not (or cannot become) a store (may touch the disk)."""
        ...

    def may_hold_threads(self) -> bool:
        """False when the store certainly holds no thread yet (a SQLite file not there)."""
        ...

    def open_saver(
        self, *, must_exist: bool = False, allowed_types: Sequence[type] = ()
    ) -> AbstractAsyncContextManager[Saver]:
        """The checkpoint saver, set up, with a strict serializer for `allowed_types`."""
        ...

    def open_lane_savers(
        self, saver: Saver, count: int, *, allowed_types: Sequence[type] = ()
    ) -> AbstractAsyncContextManager[list[Saver]]:
        """`count` more savers for concurrent threads besides `saver` (batch lanes)."""
        ...

    async def open_audit(self, *, on_loop: bool = True) -> AuditLog:
        """The audit log in this store (close it, or use it as an async context manager);
        `on_loop`: see `AuditLog.open` (SQLite only)."""
        ...

    def hold_thread(
        self, thread_id: str, *, must_exist: bool = False
    ) -> AbstractAsyncContextManager[None]:
        """Hold `thread_id`'s lease for the block (`ThreadBusyError` if another has it)."""
        ...


def check_db_folder(path: Path) -> None:
    """Refuse a store whose folder does not exist. A run creates the file, never the folders
    above it: a mistyped `--db` directory fails here, as it does for `resume` and `threads`,
    instead of silently becoming a new, empty store that later commands cannot find."""
    folder = path.parent
    if not folder.exists():
        raise CheckpointStoreError(
            f"checkpoint database {path}: its folder {folder} does not exist (check --db or "
            f"MUSTER_DB; a new store needs its folder first: mkdir -p {shlex.quote(str(folder))})"
        )


@dataclass(frozen=True)
class SqliteStore:
    """The embedded default: checkpoints, audit and leases in one SQLite file."""

    path: Path

    @property
    def location(self) -> Path:
        return self.path

    @property
    def key(self) -> str:
        return str(self.path.resolve())

    def __str__(self) -> str:
        return str(self.path)

    def check_location(self) -> None:
        check_db_location(self.path)
        check_db_folder(self.path)

    def check(self, *, must_exist: bool = False) -> None:
        self.check_location()
        check_db_path(self.path, must_exist=must_exist)

    def may_hold_threads(self) -> bool:
        return self.path.exists()

    def open_saver(
        self, *, must_exist: bool = False, allowed_types: Sequence[type] = ()
    ) -> AbstractAsyncContextManager[Saver]:
        return open_checkpointer(self.path, must_exist=must_exist, allowed_types=allowed_types)

    @asynccontextmanager
    async def open_lane_savers(
        self, saver: Saver, count: int, *, allowed_types: Sequence[type] = ()
    ) -> AsyncIterator[list[Saver]]:
        """A connection of its own per lane: `AsyncSqliteSaver` serialises every read and
        write of one connection behind one lock (see `MusterRuntime.lanes`)."""
        async with AsyncExitStack() as stack:
            yield [
                await stack.enter_async_context(self.open_saver(allowed_types=allowed_types))
                for _ in range(count)
            ]

    async def open_audit(self, *, on_loop: bool = True) -> AuditLog:
        return await AuditLog.open(self.path, on_loop=on_loop)

    def hold_thread(
        self, thread_id: str, *, must_exist: bool = False
    ) -> AbstractAsyncContextManager[None]:
        return hold_sqlite_thread(self.path, thread_id, must_exist=must_exist)


def checkpoint_store(db: str | Path | CheckpointStore | None = None) -> CheckpointStore:
    """The store `db` names (see `store_location`); a store is returned as it is. Opens
    nothing: opening happens in `open_saver`, `open_audit` and `hold_thread`."""
    if db is not None and not isinstance(db, str | Path):
        return db
    location = store_location(db)
    if isinstance(location, str):
        from checkpoints.postgres import PostgresStore  # psycopg loads only when used

        return PostgresStore(location)
    return SqliteStore(location)
