"""`muster delete THREAD` and `muster purge --older-than DAYS`: a thread's data removed.

What goes: the thread's checkpoints and pending writes (LangGraph's own
`adelete_thread`, in SQLite and PostgreSQL alike), its trace file, its lease (the command
holds and releases it, so a thread another process is running is refused, never deleted
under it), and its open action claims. What stays: its audit rows, as an audit's must, with
their results (tool arguments and outcomes, where customer data is) redacted
(`AuditLog.forget_thread`). A thread that is not in the store is one line and exit 2.
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime

from checkpoints.lease import ThreadBusyError
from checkpoints.store import CheckpointStore, checkpoint_store
from checkpoints.threads import describe_threads, thread_exists
from graph.app.command_run import unknown_thread
from graph.app.runtime import open_store
from graph.trace import trace_path


async def delete_thread(store: CheckpointStore, thread_id: str) -> int:
    """Delete `thread_id` (see the module docstring); the number of audit rows redacted."""
    async with store.hold_thread(thread_id, must_exist=True):
        async with open_store(store) as (graph, saver):
            if not await thread_exists(saver, thread_id):
                raise KeyError(thread_id)
            await saver.adelete_thread(thread_id)
        async with await store.open_audit() as audit:
            redacted = await audit.forget_thread(thread_id)
        trace_path(thread_id).unlink(missing_ok=True)
    return redacted


async def cmd_delete(args: argparse.Namespace) -> int:
    store = checkpoint_store(args.db)
    try:
        redacted = await delete_thread(store, args.thread)
    except KeyError:
        raise unknown_thread(args, args.thread) from None
    print(
        f"deleted thread {args.thread}: checkpoints, writes, trace and lease removed; "
        f"{redacted} audit row(s) kept with their results redacted"
    )
    return 0


async def purge_threads(
    store: CheckpointStore, older_than_days: float
) -> tuple[list[str], list[str], int]:
    """Delete every thread not updated in `older_than_days`: (deleted, busy and kept, all the
    store held). A thread another process is running is kept, never deleted under it."""
    cutoff = time.time() - older_than_days * 86_400
    async with open_store(store) as (graph, saver):
        infos = await describe_threads(graph, saver)
    old = [
        i.thread_id
        for i in infos
        if i.updated_at and datetime.fromisoformat(i.updated_at).timestamp() < cutoff
    ]
    deleted: list[str] = []
    busy: list[str] = []
    for thread_id in old:
        try:
            await delete_thread(store, thread_id)
        except ThreadBusyError:
            busy.append(thread_id)
        else:
            deleted.append(thread_id)
    return deleted, busy, len(infos)


async def cmd_purge(args: argparse.Namespace) -> int:
    deleted, busy, held = await purge_threads(checkpoint_store(args.db), args.older_than)
    print(
        f"purged {len(deleted)} thread(s) not updated in {args.older_than:g} day(s); "
        f"{held - len(deleted)} kept"
        + (f"; busy, left for next time: {', '.join(busy)}" if busy else "")
    )
    return 0
