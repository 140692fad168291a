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

The connection does not outlive its session: before each statement the log checks it as
the pools do (`checkpoints.postgres_connect.server_spoke`: a poll of the socket, a round trip
only when the server has spoken on it, as a terminated backend does), and opens a new one
if the database ended it. A statement that fails because the session ended under it is run
once more on a new connection: every method is idempotent (`decide` and `claim` by their
conflict clauses, the reads trivially) except `record`, whose row could then be written
twice, which no reader of the log counts on (they ask whether a row exists). Before, a
database blip left a worker with a dead audit connection for good: every approval after it
failed.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import psycopg
from psycopg.rows import DictRow
from psycopg_pool import AsyncConnectionPool

from checkpoints.audit import DECISION, EXECUTION, REDACTED, ActionClaim, AuditLog, AuditRow
from checkpoints.postgres_connect import connect, server_spoke
from checkpoints.postgres_schema import schema_lock
from workers.redaction import redact

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

    def __init__(self, conn: psycopg.AsyncConnection[DictRow], url: str | None = None) -> None:
        self._pg = conn
        self._url = url
        """Where to open a new connection when the database ends this one (None: never)."""
        self._lock = asyncio.Lock()
        self.reconnects = 0
        """New connections opened since (for tests and logs)."""

    async def _live(self, *, lost: bool = False) -> psycopg.AsyncConnection[DictRow]:
        """The connection, replaced by a new one if the database ended it (`lost`: a
        statement just failed on it). Called under `_lock`."""
        if self._url is None:
            return self._pg
        if not lost and not server_spoke(self._pg):
            return self._pg
        if not (lost or self._pg.closed or self._pg.broken):
            try:
                await AsyncConnectionPool.check_connection(self._pg)  # it spoke: ask it
                return self._pg
            except psycopg.Error:
                pass
        await self._pg.close()
        self._pg = await connect(self._url)
        self.reconnects += 1
        return self._pg

    async def _run(self, work: Any) -> Any:
        """`await work(conn)` under `_lock` on a live connection, once more on a new one if
        the session ended under it."""
        async with self._lock:
            conn = await self._live()
            try:
                return await work(conn)
            except psycopg.OperationalError:
                if self._url is None or not (conn.closed or conn.broken):
                    raise
            return await work(await self._live(lost=True))

    async def _fetch(self, query: str, params: tuple[Any, ...] = ()) -> list[DictRow]:
        async def fetch(conn: psycopg.AsyncConnection[DictRow]) -> list[DictRow]:
            cursor = await conn.execute(query, params)
            return await cursor.fetchall() if cursor.description is not None else []

        rows: list[DictRow] = await self._run(fetch)
        return rows

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
        return cls(conn, str(path))

    async def close(self) -> None:
        """Close the connection."""
        await self._pg.close()

    async def record(
        self, *, thread_id: str, event: str, actor: str, digest: str, result: Any, role: str = ""
    ) -> None:
        """Write one row (committed at once)."""
        await self._fetch(
            f"INSERT INTO muster_audit ({_COLUMNS}) VALUES ({_VALUES})",
            (time.time(), thread_id, event, actor, digest, _text(redact(result)), role),
        )

    async def claim(self, *, thread_id: str, digest: str, subject: str) -> ActionClaim | None:
        """Put the action `digest` of `thread_id` forward on `subject` (once) and return the
        oldest open claim on `subject`; this one gives way (`held_by`) if that claim is
        another thread's (see `AuditLog.claim` and the module docstring)."""

        async def claim(conn: psycopg.AsyncConnection[DictRow]) -> ActionClaim | None:
            async with conn.transaction():
                await conn.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                    (f"muster-claim:{subject}",),
                )
                await conn.execute(
                    "INSERT INTO muster_action_claim (at, subject, thread_id, digest)"
                    " VALUES (%s, %s, %s, %s) ON CONFLICT (thread_id, digest) DO NOTHING",
                    (time.time(), subject, thread_id, digest),
                )
                cursor = await conn.execute(_OPEN_CLAIM, (subject, EXECUTION, DECISION))
                found = await cursor.fetchone()
                standing = _claim(found) if found is not None else None
                # None only if this claim was settled or gave way before (a step that ran
                # again): then nobody holds the subject.
                if standing is not None and standing.thread_id != thread_id:
                    await conn.execute(
                        "UPDATE muster_action_claim SET held_by = %s"
                        " WHERE thread_id = %s AND digest = %s",
                        (standing.thread_id, thread_id, digest),
                    )
            return standing

        standing: ActionClaim | None = await self._run(claim)
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
            (time.time(), thread_id, DECISION, actor, digest, _text(redact(result)), role),
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

    async def forget_thread(self, thread_id: str) -> int:
        """As `AuditLog.forget_thread`: redact the thread's rows, drop its claims."""

        async def forget(conn: psycopg.AsyncConnection[DictRow]) -> int:
            async with conn.transaction():
                cursor = await conn.execute(
                    "UPDATE muster_audit SET result = %s WHERE thread_id = %s",
                    (REDACTED, thread_id),
                )
                await conn.execute(
                    "DELETE FROM muster_action_claim WHERE thread_id = %s", (thread_id,)
                )
            return int(cursor.rowcount or 0)

        redacted: int = await self._run(forget)
        return redacted

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
