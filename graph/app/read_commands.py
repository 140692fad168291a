"""`muster threads`, `show` and `history`: the commands that read the store and run nothing."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from langgraph.types import StateSnapshot

from checkpoints.store import checkpoint_store
from checkpoints.threads import describe_threads, status_of, thread_config, thread_exists
from graph.app.command_run import unknown_thread
from graph.app.hints import Carried
from graph.app.history import checkpoint_entries, print_history
from graph.app.options import ExitCode
from graph.app.render_threads import print_thread, print_threads
from graph.app.runtime import open_store, stopped_by
from graph.app.thread_filters import select_threads
from workers.errors import MusterError


async def cmd_threads(args: argparse.Namespace) -> int:
    async with open_store(args.db) as (graph, saver):
        infos = await describe_threads(graph, saver)
    stopped = {
        i.thread_id: s for i in infos if i.status == "in progress" if (s := stopped_by(i.thread_id))
    }
    print_threads(
        select_threads(infos, status=args.status, since=args.since),
        as_json=args.json,
        filtered=bool(args.status or args.since),
        stopped=stopped,
    )
    return ExitCode.OK


async def cmd_show(args: argparse.Namespace) -> int:
    async with open_store(args.db) as (graph, saver):
        if not await thread_exists(saver, args.thread):
            raise unknown_thread(args, args.thread)
        config = thread_config(args.thread)
        history = [s async for s in graph.aget_state_history(config)]
        snapshot = await graph.aget_state(config)
        async with await checkpoint_store(args.db).open_audit() as audit:
            audit_rows = await audit.rows(args.thread)
    if getattr(args, "html", None) is not None:
        return write_timeline(args, snapshot, history)
    print_thread(args.thread, snapshot, history, audit_rows, Carried.from_args(args))
    return ExitCode.OK


def write_timeline(
    args: argparse.Namespace, snapshot: StateSnapshot, history: Sequence[StateSnapshot]
) -> int:
    """`muster show THREAD --html [FILE]`: the timeline page (graph/app/timeline_html.py)."""
    from graph.app.timeline_build import thread_timeline  # the page's modules load only here
    from graph.app.timeline_html import timeline_html

    path = Path(args.html or f"{args.thread}.timeline.html")
    timeline = thread_timeline(args.thread, snapshot, history)
    try:
        path.write_text(timeline_html(timeline), encoding="utf-8")
    except OSError as error:
        raise MusterError(f"--html {path}: cannot write it ({error.strerror or error})") from None
    print(f"timeline of thread {args.thread} ({timeline.status}): {path}")
    return ExitCode.OK


async def cmd_history(args: argparse.Namespace) -> int:
    async with open_store(args.db) as (graph, saver):
        if not await thread_exists(saver, args.thread):
            raise unknown_thread(args, args.thread)
        config = thread_config(args.thread)
        history = [s async for s in graph.aget_state_history(config)]
        status = status_of(await graph.aget_state(config))
    entries = checkpoint_entries(history)
    print_history(args.thread, status, entries, as_json=args.json, carried=Carried.from_args(args))
    return ExitCode.OK
