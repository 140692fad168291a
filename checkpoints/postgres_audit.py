"""The audit log in PostgreSQL: `AuditLog`'s tables and public methods, in the checkpoint
database of a `PostgresStore` (checkpoints/audit.py describes what each method means).

The guarantees the SQLite log gets from SQLite's one write lock are made explicit here:

- "First decision wins" across processes and machines: a unique partial index allows one
  `decision` row per (thread, digest), and `decide` inserts with `ON CONFLICT DO NOTHING`, so
  of two deciders exactly one row lands; the other reads the one that stands.
- `claim`: putting an action forward, reading the oldest open claim on its subject and giving
  way to it are one transaction under an advisory lock on the subject, so two threads
  claiming together see the same oldest claim (ids from a sequence are not in commit order
  otherwise).

Every other row is committed as it is written (the connection is in autocommit). Statements
on the one connection take turns (`_lock`), so no coroutine's row lands inside, or is rolled
back with, another's transaction.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import psycopg
from psycopg.rows import DictRow

from checkpoints.audit import DECISION, EXECUTION, ActionClaim, AuditLog, AuditRow
from checkpoints.postgres import connect, schema_lock

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS muster_audit (
    id BIGSERIAL PRIMARY KEY,
    at DOUBLE PRECISION NOT NULL, thread_id TEXT NOT NULL, event TEXT NOT NULL,
    actor TEXT NOT NULL, digest TEXT NOT NULL, result TEXT NOT NULL,
    role TEXT NOT NULL DEFAULT '')""",
    "CREATE UNIQUE INDEX IF NOT EXISTS muster_audit_one_decision"
    f" ON muster_audit (thread_id, digest) WHERE event = '{DECISION}'",
    "CREATE INDEX IF NOT EXISTS muster_audit_by_action ON muster_audit (thread_id, digest, event)",
    """CREATE TABLE IF NOT EXISTS muster_action_claim (
    id BIGSERIAL PRIMARY KEY,
    at DOUBLE PRECISION NOT NULL, subject TEXT NOT NULL, thread_id TEXT NOT NULL,
    digest TEXT NOT NULL, held_by TEXT NOT NULL DEFAULT '', UNIQUE (thread_id, digest))""",
    "CREATE INDEX IF NOT EXISTS muster_claim_by_subject ON muster_action_claim (subject, held_by)",
)

_FIELDS = ("at", "thread_id", "event", "actor", "digest", "result", "role")
_COLUMNS = ", ".join(_FIELDS)
_VALUES = ", ".join(["%s"] * len(_FIELDS))

_OPEN_CLAIM = (
    "SELECT c.at, c.subject, c.thread_id, c.digest FROM muster_action_claim AS c"
    " WHERE c.subject = %s AND c.held_by = '' AND NOT EXISTS (SELECT 1 FROM muster_audit AS a"
    " WHERE a.thread_id = c.thread_id AND a.digest = c.digest AND (a.event = %s"
    # CASE: the JSON cast runs on decision rows only (other rows' results may be plain text).
    " OR CASE WHEN a.event = %s AND left(ltrim(a.result), 1) = '{'"
    " THEN a.result::jsonb ->> 'decision' = 'rejected' ELSE false END))"
    " ORDER BY c.id LIMIT 1"
)


def _text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, default=str)


def _row(row: DictRow) -> AuditRow:
    return AuditRow(**{field: row[field] for field in _FIELDS})


def _claim(row: DictRow) -> ActionClaim:
    return ActionClaim(
        at=row["at"], subject=row["subject"], thread_id=row["thread_id"], digest=row["digest"]
    )


class PostgresAuditLog(AuditLog):
    """Append-only audit rows in PostgreSQL, on one connection of their own. A subclass of
    `AuditLog` so `Services.audit` takes either; every public method is overridden (a test
    checks that none is left to the SQLite implementation)."""

    def __init__(self, conn: psycopg.AsyncConnection[DictRow]) -> None:
        self._pg = conn
        self._lock = asyncio.Lock()

    async def _fetch(self, query: str, params: tuple[Any, ...] = ()) -> list[DictRow]:
        async with self._lock:
            cursor = await self._pg.execute(query, params)
            return await cursor.fetchall() if cursor.description is not None else []

    @classmethod
    async def open(cls, path: Any, *, on_loop: bool = True) -> PostgresAuditLog:
        """Open the audit table in the PostgreSQL database at URL `path` (created if new);
        psycopg is asyncio-native, so `on_loop` changes nothing."""
        conn = await connect(str(path))
        try:
            async with schema_lock(conn):
                for statement in SCHEMA:
                    await conn.execute(statement)
        except BaseException:
            await conn.close()
            raise
        return cls(conn)

    async def close(self) -> None:
        """Close the connection."""
        await self._pg.close()

    async def record(
        self, *, thread_id: str, event: str, actor: str, digest: str, result: Any, role: str = ""
    ) -> None:
        """Write one row (committed at once)."""
        await self._fetch(
            f"INSERT INTO muster_audit ({_COLUMNS}) VALUES ({_VALUES})",
            (time.time(), thread_id, event, actor, digest, _text(result), role),
        )

    async def claim(self, *, thread_id: str, digest: str, subject: str) -> ActionClaim | None:
        """Put the action `digest` of `thread_id` forward on `subject` (once) and return the
        oldest open claim on `subject`; this one gives way (`held_by`) if that claim is
        another thread's (see `AuditLog.claim` and the module docstring)."""
        async with self._lock, self._pg.transaction():
            await self._pg.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                (f"muster-claim:{subject}",),
            )
            await self._pg.execute(
                "INSERT INTO muster_action_claim (at, subject, thread_id, digest)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT (thread_id, digest) DO NOTHING",
                (time.time(), subject, thread_id, digest),
            )
            cursor = await self._pg.execute(_OPEN_CLAIM, (subject, EXECUTION, DECISION))
            found = await cursor.fetchone()
            standing = _claim(found) if found is not None else None
            # None only if this claim was settled or gave way before (a step that ran
            # again): then nobody holds the subject.
            if standing is not None and standing.thread_id != thread_id:
                await self._pg.execute(
                    "UPDATE muster_action_claim SET held_by = %s"
                    " WHERE thread_id = %s AND digest = %s",
                    (standing.thread_id, thread_id, digest),
                )
        return standing

    async def open_claim(self, subject: str) -> ActionClaim | None:
        """The oldest open claim on `subject` (see `AuditLog.claim`), if any."""
        rows = await self._fetch(_OPEN_CLAIM, (subject, EXECUTION, DECISION))
        return _claim(rows[0]) if rows else None

    async def decide(
        self, *, thread_id: str, actor: str, role: str, digest: str, result: Any
    ) -> tuple[AuditRow, bool]:
        """Record the decision on `digest` unless one is recorded already; return the decision
        that stands and whether it is this one (see the module docstring)."""
        rows = await self._fetch(
            f"INSERT INTO muster_audit ({_COLUMNS}) VALUES ({_VALUES})"
            f" ON CONFLICT (thread_id, digest) WHERE event = '{DECISION}' DO NOTHING"
            " RETURNING id",
            (time.time(), thread_id, DECISION, actor, digest, _text(result), role),
        )
        inserted = len(rows) == 1
        standing = await self.decision(thread_id, digest)
        assert standing is not None  # inserted above, or there already
        return standing, inserted

    async def decision(self, thread_id: str, digest: str) -> AuditRow | None:
        """The decision that stands on `digest` in `thread_id`, if any."""
        rows = await self._fetch(
            f"SELECT {_COLUMNS} FROM muster_audit WHERE thread_id = %s AND digest = %s"
            " AND event = %s ORDER BY id LIMIT 1",
            (thread_id, digest, DECISION),
        )
        return _row(rows[0]) if rows else None

    async def __aenter__(self) -> PostgresAuditLog:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def rows(self, thread_id: str | None = None) -> list[AuditRow]:
        """All rows, or one thread's, oldest first."""
        if thread_id is None:
            rows = await self._fetch(f"SELECT {_COLUMNS} FROM muster_audit ORDER BY id")
        else:
            rows = await self._fetch(
                f"SELECT {_COLUMNS} FROM muster_audit WHERE thread_id = %s ORDER BY id",
                (thread_id,),
            )
        return [_row(row) for row in rows]
