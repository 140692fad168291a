"""The audit log: one row per approval decision, refused decision and action execution.

It lives in its own table of the checkpoint database, written by its own connection as
soon as the event happens, so it survives a crash that loses the checkpoint after it.
An action's decision is recorded once (`decide`): the first decision for a thread and digest
stands, whichever process asks, and a later one gets that standing decision back.

A row's `result` (tool arguments, outcomes, a decision's note) is stored redacted
(workers/redaction.py: e-mails, phones, cards, known customer names), as everything a run
writes in clear is: the audit says who decided what on which action, and needs no customer's
details for it. The decision, role, tool and amounts it is read back for stay.

Beside it, `muster_action_claim` holds one row per action put to a human with what it claims
(a refund of one order): across threads, one such action waits at a time (`claim`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

from checkpoints.inline_sqlite import connect_inline
from workers.redaction import redact

SCHEMA = """CREATE TABLE IF NOT EXISTS muster_audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL, thread_id TEXT NOT NULL, event TEXT NOT NULL,
    actor TEXT NOT NULL, digest TEXT NOT NULL, result TEXT NOT NULL,
    role TEXT NOT NULL DEFAULT '')"""

CLAIMS = """CREATE TABLE IF NOT EXISTS muster_action_claim (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL, subject TEXT NOT NULL, thread_id TEXT NOT NULL, digest TEXT NOT NULL,
    held_by TEXT NOT NULL DEFAULT '', UNIQUE (thread_id, digest))"""
"""Actions put to a human, one row each, with what they claim (e.g. a refund of one order);
`held_by` names the thread whose older claim this one gave way to."""

REDACTED = '{"redacted": true}'
"""What a deleted thread's audit rows say instead of their result (`forget_thread`)."""
DECISION = "decision"
"""The event of the one decision that stands for an action."""
EXECUTION = "execution"
"""An approved action ran (or was refused before running): its claim is settled."""

_COLUMNS = "at, thread_id, event, actor, digest, result, role"


@dataclass(frozen=True)
class AuditRow:
    """One audited event."""

    at: float
    thread_id: str
    event: str
    """decision, refused (a resume value that was not a decision), decision-refused (a later,
    different decision), attempt, execution"""
    actor: str
    digest: str
    result: str
    role: str = ""
    """The role the actor acted under (decisions and refusals), else empty."""


@dataclass(frozen=True)
class ActionClaim:
    """An action put to a human, and what it claims while it waits."""

    at: float
    subject: str
    thread_id: str
    digest: str


def _text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, default=str)


class AuditLog:
    """Append-only audit rows in a SQLite file."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    @classmethod
    async def open(cls, path: str | Path, *, on_loop: bool = True) -> AuditLog:
        """Open (and create) the audit table in `path`.

        `on_loop`: run its statements inline on the event loop, like the checkpointer and the
        lease (checkpoints/inline_sqlite.py). It must, in a process that has those: a write
        on aiosqlite's thread spans two hops (the insert, then the commit), and a lease or
        checkpoint write waiting inline for that lock in between would block the very loop
        the commit needs (a 30 s stall, then "database is locked"). Off only where the loop
        refuses blocking calls and nothing else writes the file inline (Studio's server).
        30 s: wait for other processes' writers, do not fail."""
        if on_loop:
            conn: aiosqlite.Connection = await connect_inline(path, timeout=30)
        else:
            conn = await aiosqlite.connect(str(path), timeout=30)
        await conn.execute(SCHEMA)
        async with conn.execute("PRAGMA table_info(muster_audit)") as cursor:
            columns = {row[1] async for row in cursor}
        if "role" not in columns:  # a log written before roles were recorded
            await conn.execute("ALTER TABLE muster_audit ADD COLUMN role TEXT NOT NULL DEFAULT ''")
        await conn.execute(
            "CREATE INDEX IF NOT EXISTS muster_audit_by_action"
            " ON muster_audit (thread_id, digest, event)"
        )
        await conn.execute(CLAIMS)
        await conn.execute(
            "CREATE INDEX IF NOT EXISTS muster_claim_by_subject"
            " ON muster_action_claim (subject, held_by)"
        )
        await conn.commit()
        return cls(conn)

    async def close(self) -> None:
        """Close the connection."""
        await self._conn.close()

    async def record(
        self, *, thread_id: str, event: str, actor: str, digest: str, result: Any, role: str = ""
    ) -> None:
        """Write one row and commit it at once."""
        await self._conn.execute(
            f"INSERT INTO muster_audit ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (time.time(), thread_id, event, actor, digest, _text(redact(result)), role),
        )
        await self._conn.commit()

    async def claim(self, *, thread_id: str, digest: str, subject: str) -> ActionClaim | None:
        """Put the action `digest` of `thread_id` forward on `subject` (once; a node that
        runs again on resume claims again harmlessly), and return the claim that stands: the
        oldest open one on `subject`, whichever thread made it. A claim is open until its
        action is executed (or refused before running) or rejected, or it gives way. When
        the standing claim is another thread's, this one gives way at once (`held_by`), so it
        never blocks a later thread. Two threads claiming together both see the same oldest
        row (ids order them), so exactly one goes to a human."""
        await self._conn.execute(
            "INSERT OR IGNORE INTO muster_action_claim (at, subject, thread_id, digest)"
            " VALUES (?, ?, ?, ?)",
            (time.time(), subject, thread_id, digest),
        )
        await self._conn.commit()
        standing = await self.open_claim(subject)
        # None only if this claim was settled or gave way before (a step that ran again):
        # then nobody holds the subject.
        if standing is not None and standing.thread_id != thread_id:
            await self._conn.execute(
                "UPDATE muster_action_claim SET held_by = ? WHERE thread_id = ? AND digest = ?",
                (standing.thread_id, thread_id, digest),
            )
            await self._conn.commit()
        return standing

    async def open_claim(self, subject: str) -> ActionClaim | None:
        """The oldest open claim on `subject` (see `claim`), if any."""
        async with self._conn.execute(
            "SELECT c.at, c.subject, c.thread_id, c.digest FROM muster_action_claim AS c"
            " WHERE c.subject = ? AND c.held_by = '' AND NOT EXISTS (SELECT 1 FROM muster_audit"
            " AS a WHERE a.thread_id = c.thread_id AND a.digest = c.digest AND (a.event = ?"
            " OR (a.event = ? AND json_extract(a.result, '$.decision') = 'rejected')))"
            " ORDER BY c.id LIMIT 1",
            (subject, EXECUTION, DECISION),
        ) as cursor:
            row = await cursor.fetchone()
        return ActionClaim(*row) if row is not None else None

    async def decide(
        self, *, thread_id: str, actor: str, role: str, digest: str, result: Any
    ) -> tuple[AuditRow, bool]:
        """Record the decision on `digest` unless one is recorded already; return the decision
        that stands and whether it is this one. The check and the insert are one statement,
        which SQLite runs under the database's write lock, so of two processes deciding at
        once exactly one is first (and coroutines sharing this connection need no lock)."""
        cursor = await self._conn.execute(
            f"INSERT INTO muster_audit ({_COLUMNS}) SELECT ?, ?, ?, ?, ?, ?, ?"
            " WHERE NOT EXISTS (SELECT 1 FROM muster_audit"
            " WHERE thread_id = ? AND digest = ? AND event = ?)",
            (time.time(), thread_id, DECISION, actor, digest, _text(redact(result)), role)
            + (thread_id, digest, DECISION),
        )
        inserted = cursor.rowcount == 1
        await self._conn.commit()
        standing = await self.decision(thread_id, digest)
        assert standing is not None  # inserted above, or there already
        return standing, inserted

    async def decision(self, thread_id: str, digest: str) -> AuditRow | None:
        """The decision that stands on `digest` in `thread_id`, if any."""
        async with self._conn.execute(
            f"SELECT {_COLUMNS} FROM muster_audit WHERE thread_id = ? AND digest = ?"
            " AND event = ? ORDER BY id LIMIT 1",
            (thread_id, digest, DECISION),
        ) as cursor:
            row = await cursor.fetchone()
        return AuditRow(*row) if row is not None else None

    async def forget_thread(self, thread_id: str) -> int:
        """Redact what `thread_id`'s rows say (their `result`: tool arguments and outcomes
        with customer data) and drop its open claims; the rows stay, as an audit's must.
        Returns how many rows were redacted."""
        cursor = await self._conn.execute(
            "UPDATE muster_audit SET result = ? WHERE thread_id = ?", (REDACTED, thread_id)
        )
        await self._conn.execute(
            "DELETE FROM muster_action_claim WHERE thread_id = ?", (thread_id,)
        )
        await self._conn.commit()
        return int(cursor.rowcount or 0)

    async def __aenter__(self) -> AuditLog:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def rows(self, thread_id: str | None = None) -> list[AuditRow]:
        """All rows, or one thread's, oldest first."""
        query = f"SELECT {_COLUMNS} FROM muster_audit"
        params: tuple[str, ...] = ()
        if thread_id is not None:
            query += " WHERE thread_id = ?"
            params = (thread_id,)
        async with self._conn.execute(query + " ORDER BY id", params) as cursor:
            return [AuditRow(*row) async for row in cursor]
