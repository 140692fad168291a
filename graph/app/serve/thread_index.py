"""The server's index of threads: what `GET /threads`, `/approvals` and the inbox list from.

Describing a thread means reading its latest state (`graph.aget_state`: the checkpoint and
its pending writes), a few milliseconds each; a store of 10,000 threads would take tens of
seconds per listing. The index describes each thread once and then only the threads written
since: on SQLite, the rows of the `checkpoints` and `writes` tables past the highest rowid
it has seen (a rowid range is a seek in the table's own b-tree), whichever process wrote
them (a terminal's `muster approve` on the same store too). Every `FULL_SCAN_S` it lists
the thread ids again, to forget deleted threads. Other stores (PostgreSQL) are described in
full on each refresh. Lists are then filtered, searched and paged in memory.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from checkpoints.threads import status_of, thread_config, thread_ids, waiting_on
from graph.app.runtime import MusterRuntime

FULL_SCAN_S = 30.0
"""How often the thread ids are listed again (deleted threads drop out)."""


@dataclass(frozen=True)
class ThreadEntry:
    """One thread as the index holds it."""

    thread_id: str
    status: str
    updated_at: str
    request: str
    """The whole ticket (searched); lists show its first 60 characters."""
    answer_status: str | None
    waiting_on: list[str]

    def updated(self) -> datetime | None:
        try:
            when = datetime.fromisoformat(self.updated_at)
        except ValueError:
            return None
        return when if when.tzinfo else when.replace(tzinfo=UTC)

    def summary(self) -> dict[str, Any]:
        return {
            "thread_id": self.thread_id,
            "status": self.status,
            "updated_at": self.updated_at,
            "request": " ".join(self.request.split())[:60],
            "answer_status": self.answer_status,
            "waiting_on": self.waiting_on,
        }


class ThreadIndex:
    """The threads of one runtime's store, kept current by `refresh`."""

    def __init__(self, runtime: MusterRuntime) -> None:
        self.runtime = runtime
        self.entries: dict[str, ThreadEntry] = {}
        self._marks: tuple[int, int] | None = None
        """The highest rowids of `checkpoints` and `writes` seen."""
        self._scanned_at = 0.0
        self._lock = asyncio.Lock()

    async def describe(self, thread_id: str) -> ThreadEntry | None:
        snapshot = await self.runtime.graph.aget_state(thread_config(thread_id))
        if snapshot.created_at is None and not snapshot.values:
            return None
        answer = snapshot.values.get("answer")
        return ThreadEntry(
            thread_id=thread_id,
            status=status_of(snapshot),
            updated_at=str(snapshot.created_at or ""),
            request=str(snapshot.values.get("request", "")),
            answer_status=getattr(answer, "status", None),
            waiting_on=waiting_on(snapshot),
        )

    async def refresh(self) -> None:
        """Describe the threads written since the last refresh (all of them, the first time
        and on stores that cannot say)."""
        async with self._lock:
            saver = self.runtime.saver
            if not isinstance(saver, AsyncSqliteSaver):
                await self._describe_all(await thread_ids(saver))
                return
            marks = await self._max_rowids(saver)
            if self._marks is None or time.monotonic() - self._scanned_at > FULL_SCAN_S:
                ids = await thread_ids(saver)
                self._scanned_at = time.monotonic()
                known = set(ids)
                for gone in [t for t in self.entries if t not in known]:
                    del self.entries[gone]
                changed = [t for t in ids if t not in self.entries]
                if self._marks is not None:
                    changed += await self._written_since(saver, self._marks)
            else:
                changed = await self._written_since(saver, self._marks)
            for thread_id in dict.fromkeys(changed):
                await self._update(thread_id)
            self._marks = marks

    async def touch(self, thread_id: str) -> None:
        """Describe `thread_id` again now (this server just ran or decided it)."""
        async with self._lock:
            await self._update(thread_id)

    async def _update(self, thread_id: str) -> None:
        entry = await self.describe(thread_id)
        if entry is None:
            self.entries.pop(thread_id, None)
        else:
            self.entries[thread_id] = entry

    async def _describe_all(self, ids: list[str]) -> None:
        self.entries = {}
        for thread_id in ids:
            await self._update(thread_id)

    @staticmethod
    async def _max_rowids(saver: AsyncSqliteSaver) -> tuple[int, int]:
        # Upstream's `checkpoints` and `writes` tables: tests/test_pinned_internals.py.
        await saver.setup()
        async with saver.conn.execute(
            "SELECT (SELECT COALESCE(MAX(rowid), 0) FROM checkpoints),"
            " (SELECT COALESCE(MAX(rowid), 0) FROM writes)"
        ) as cursor:
            row = await cursor.fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    @staticmethod
    async def _written_since(saver: AsyncSqliteSaver, marks: tuple[int, int]) -> list[str]:
        async with saver.conn.execute(
            "SELECT DISTINCT thread_id FROM checkpoints WHERE rowid > ? AND checkpoint_ns = ''"
            " UNION SELECT DISTINCT thread_id FROM writes WHERE rowid > ? AND checkpoint_ns = ''",
            marks,
        ) as cursor:
            return [str(row[0]) async for row in cursor]

    def select(
        self,
        *,
        status: list[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        subject: str | None = None,
    ) -> list[ThreadEntry]:
        """The entries that match, most recently updated first: one of `status`, updated
        in [`since`, `until`], and `subject` (case-insensitive) in the ticket or thread id."""
        words = (subject or "").casefold().split()
        chosen = []
        for entry in self.entries.values():
            if status and entry.status not in status:
                continue
            if since is not None or until is not None:
                when = entry.updated()
                if when is None or (since and when < since) or (until and when > until):
                    continue
            if words:
                text = f"{entry.thread_id} {entry.request}".casefold()
                if not all(word in text for word in words):
                    continue
            chosen.append(entry)
        chosen.sort(key=lambda e: (e.updated_at, e.thread_id), reverse=True)
        return chosen
