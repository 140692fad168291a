"""The audit log: one row per approval decision and per action execution.

It lives in its own table of the checkpoint database, written by its own connection as
soon as the event happens, so it survives a crash that loses the checkpoint after it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

SCHEMA = """CREATE TABLE IF NOT EXISTS muster_audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL, thread_id TEXT NOT NULL, event TEXT NOT NULL,
    actor TEXT NOT NULL, digest TEXT NOT NULL, result TEXT NOT NULL)"""


@dataclass(frozen=True)
class AuditRow:
    """One audited event."""

    at: float
    thread_id: str
    event: str
    """decision, execution"""
    actor: str
    digest: str
    result: str


class AuditLog:
    """Append-only audit rows in a SQLite file."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    @classmethod
    async def open(cls, path: str | Path) -> AuditLog:
        """Open (and create) the audit table in `path`."""
        conn = await aiosqlite.connect(str(path))
        await conn.execute(SCHEMA)
        await conn.commit()
        return cls(conn)

    async def close(self) -> None:
        """Close the connection."""
        await self._conn.close()

    async def record(
        self, *, thread_id: str, event: str, actor: str, digest: str, result: Any
    ) -> None:
        """Write one row and commit it at once."""
        text = result if isinstance(result, str) else json.dumps(result, default=str)
        await self._conn.execute(
            "INSERT INTO muster_audit (at, thread_id, event, actor, digest, result)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (time.time(), thread_id, event, actor, digest, text),
        )
        await self._conn.commit()

    async def __aenter__(self) -> AuditLog:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def rows(self, thread_id: str | None = None) -> list[AuditRow]:
        """All rows, or one thread's, oldest first."""
        query = "SELECT at, thread_id, event, actor, digest, result FROM muster_audit"
        params: tuple[str, ...] = ()
        if thread_id is not None:
            query += " WHERE thread_id = ?"
            params = (thread_id,)
        async with self._conn.execute(query + " ORDER BY id", params) as cursor:
            return [AuditRow(*row) async for row in cursor]
