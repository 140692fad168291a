"""The fleet: `muster worker`, `muster submit`, `muster fleet`, and decisions through the queue.

Many `muster worker` processes, on one machine or several, share one PostgreSQL database:
the checkpoints, the audit log, the thread leases and the job queue (Procrastinate;
graph/app/fleet_queue.py). `muster submit` queues tickets and prints their thread ids; a
worker takes each job and runs it on the one runtime it keeps (graph/app/fleet_worker.py).
`muster approve` / `clarify` on a thread the fleet has run record the decision as a
`resume_thread` job, so whichever worker is free continues the thread (`answer_on_fleet`;
a thread run in-process with `muster run`, and every SQLite thread, is answered in-process
exactly as before). `muster fleet` shows the workers, and each thread queued, running (on
which worker), waiting for a human, done.

The CLI (graph/app/cli.py) loads this module only for these commands, and
graph/app/decisions.py asks `answer_on_fleet` first when it answers an interrupt: the one way
decisions take, whether a thread is the fleet's or not.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkpoints.store import checkpoint_store, is_postgres_url, store_location
from checkpoints.threads import describe_threads, thread_config, thread_exists
from graph.app.batch_tickets import batch_thread_id, load_tickets
from graph.app.fleet_flags import FLEET_COMMANDS
from graph.app.fleet_queue import (
    AlreadyQueued,
    FleetJob,
    enqueue_resume,
    enqueue_ticket,
    fleet_schema_present,
    open_fleet,
    read_fleet,
    thread_on_fleet,
)
from graph.app.options import ExitCode, MusterOptions, check_ticket
from graph.app.pending import pending_answer
from graph.app.runtime import open_store
from graph.trace import THREAD_ID
from workers.errors import ConfigError, MusterError


def fleet_url(args: argparse.Namespace) -> str:
    """The store's PostgreSQL URL, or a `ConfigError`: the fleet's queue lives there."""
    location = store_location(getattr(args, "db", None))
    if not isinstance(location, str):
        raise ConfigError(
            f"the fleet needs a PostgreSQL store, not the SQLite file {location}: give "
            "--db postgresql://... (or MUSTER_DB); `muster batch` runs a queue on one machine"
        )
    checkpoint_store(location).check_location()
    return location


# --- muster worker ---------------------------------------------------------------------------


async def cmd_worker(args: argparse.Namespace) -> int:
    """`muster worker [--concurrency N] [--stalled-after S]`: run jobs until stopped."""
    from graph.app.fleet_worker import serve  # loads the runtime only for a worker

    fleet_url(args)
    options = MusterOptions.from_args(args)
    return await serve(
        options,
        concurrency=args.concurrency,
        stalled_after=args.stalled_after,
        name=args.name,
    )


# --- muster submit ---------------------------------------------------------------------------


def tickets_of(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(thread id, ticket text) for each ticket `submit` was given: a .jsonl file's, with
    `muster batch`'s thread ids, or one ticket's text on `--thread` or a new id."""
    given = str(args.ticket)
    path = Path(given).expanduser()
    if given.endswith(".jsonl") or (len(given) < 4096 and path.is_file()):
        if args.thread:
            raise ConfigError("--thread names the thread of one ticket, not of a tickets file")
        return [(batch_thread_id(path, t.id), t.request) for t in load_tickets(path)]
    thread_id = args.thread or f"t-{uuid.uuid4().hex[:12]}"
    if not THREAD_ID.match(thread_id):
        raise ConfigError(
            f"--thread {thread_id!r}: use letters, digits, '.', '_' and '-' (at most 128)"
        )
    return [(thread_id, check_ticket(given))]


async def cmd_submit(args: argparse.Namespace) -> int:
    """`muster submit "<ticket>" | tickets.jsonl`: queue them; print one thread id a line."""
    url = fleet_url(args)
    tickets = tickets_of(args)
    queued: list[str] = []
    skipped: list[str] = []
    async with open_fleet(url) as app, open_store(url) as (_graph, saver):
        for thread_id, request in tickets:
            if await thread_exists(saver, thread_id):
                skipped.append(f"{thread_id}: the thread exists already")
                continue
            try:
                await enqueue_ticket(app, thread_id, request)
            except AlreadyQueued:
                skipped.append(f"{thread_id}: queued already")
                continue
            queued.append(thread_id)
    for line in skipped:
        print(f"skipped {line}", file=sys.stderr)
    if args.json:
        print(json.dumps({"queued": queued, "skipped": skipped}))
    else:
        for thread_id in queued:
            print(thread_id)
    print(
        f"queued {len(queued)} of {len(tickets)} tickets; `muster fleet` shows them",
        file=sys.stderr,
    )
    if tickets and not queued and len(tickets) == 1:
        return ExitCode.BAD_INPUT
    return ExitCode.OK


# --- muster fleet ----------------------------------------------------------------------------

FLEET_STATES = ("queued", "running", "waiting for a human", "done", "stalled", "other")
"""How `muster fleet` groups threads."""


def fleet_state(job: FleetJob | None, status: str) -> str:
    """Where a thread stands for the fleet, from its job and its checkpointed status."""
    if job is not None and job.status == "todo":
        return "queued"
    if job is not None and job.status == "doing":
        alive = job.worker is not None and job.silent_s is not None and not job.worker_dead
        return "running" if alive else "stalled"
    if status == "interrupted":
        return "waiting for a human"
    if status == "done":
        return "done"
    return "other"


async def cmd_fleet(args: argparse.Namespace) -> int:
    """`muster fleet [--json] [--all]`: the workers, and the threads by where they stand."""
    url = fleet_url(args)
    if not await fleet_schema_present(url):
        print("no fleet has used this database yet: start `muster worker`, then `muster submit`")
        return ExitCode.OK
    workers, jobs = await read_fleet(url)
    async with open_store(url) as (graph, saver):
        infos = {info.thread_id: info for info in await describe_threads(graph, saver)}
    rows = []
    for thread_id in sorted(set(jobs) | set(infos)):
        job, info = jobs.get(thread_id), infos.get(thread_id)
        status = info.status if info is not None else "new"
        state = fleet_state(job, status)
        detail = ""
        if state == "running" and job is not None:
            detail = f"on {job.worker}, job {job.job_id}"
        elif state == "stalled" and job is not None:
            detail = f"its worker {job.worker or ''} is dead (silent past its stall bound); "
            detail += f"job {job.job_id} is retried"
        elif state == "queued" and job is not None:
            detail = f"job {job.job_id}" + (f", attempt {job.attempts + 1}" if job.attempts else "")
        elif state == "waiting for a human" and info is not None:
            detail = ", ".join(info.waiting_on)
        elif state == "done" and info is not None:
            detail = str(info.answer_status or "")
        elif state == "other":
            detail = status + (f" (job {job.job_id} {job.status})" if job is not None else "")
        rows.append({"thread": thread_id, "state": state, "detail": detail, "on_fleet": bool(job)})
    counts = {state: sum(r["state"] == state for r in rows) for state in FLEET_STATES}
    if args.json:
        print(
            json.dumps(
                {
                    "workers": [
                        {
                            "id": w.worker_id,
                            "worker": w.label,
                            "state": "dead" if w.dead else "alive",
                            "silent_s": round(w.silent_s, 1),
                            "stalled_after_s": w.stalled_after_s,
                        }
                        for w in workers
                    ],
                    "counts": counts,
                    "threads": rows,
                },
                indent=2,
            )
        )
        return ExitCode.OK
    print(f"workers: {len(workers)} ({sum(w.dead for w in workers)} dead)")
    for w in workers:
        state = "dead" if w.dead else "alive"
        print(
            f"  {w.label}: {state}, last heartbeat {w.silent_s:.0f}s ago "
            f"(stall bound {w.stalled_after_s:g}s)"
        )
    summary = ", ".join(f"{counts[s]} {s}" for s in FLEET_STATES if counts[s])
    print(f"threads: {summary or 'none'}")
    for row in rows:
        if args.all or row["state"] != "done":
            print(f"  {row['thread']:<40} {row['state']:<20} {row['detail']}")
    return ExitCode.OK


# --- approve / clarify through the queue -----------------------------------------------------

Decision = Any
"""What answers an interrupt: a value, or a callable of the pending interrupt's value that
returns it (maybe awaitable), as `graph.app.pending.pending_answer` takes it."""


@dataclass(frozen=True)
class QueuedDecision:
    """A decision recorded for a fleet thread as a `resume_thread` job."""

    thread_id: str
    kind: str
    resume: Any
    """The resume value the pending interrupt is answered with."""
    job_id: int

    def lines(self) -> str:
        """What `muster approve` / `clarify` print once it is queued."""
        return (
            f"{self.kind} for thread {self.thread_id} recorded: "
            f"{json.dumps(self.resume, default=str)}\n"
            f"queued as job {self.job_id}: the next free worker continues the thread; "
            "`muster fleet` shows it, `muster show THREAD` the result"
        )


async def queue_decision(
    db: Any, thread_id: str, kind: str, value: Decision, *, always: bool = False
) -> QueuedDecision | None:
    """Record the decision for a fleet thread's pending `kind` interrupt as a
    `resume_thread` job and return it; None if the thread is not the fleet's (a SQLite
    store, or a thread never queued, unless `always`: `muster serve` in front of the fleet
    queues every decision), for the caller to answer in-process. Prints nothing.

    Checks as the in-process path does, under the thread's lease (so a worker advancing the
    thread right now refuses it: `ThreadBusyError`): the thread exists and waits for `kind`,
    and `value` (the approval checks of `muster approve`) accepts the pending interrupt. No
    server starts: the worker that takes the job runs the thread on its own."""
    location = store_location(db)
    if not is_postgres_url(location):
        return None
    url = str(location)
    if not always and not await thread_on_fleet(url, thread_id):
        return None
    store = checkpoint_store(url)
    async with store.hold_thread(thread_id, must_exist=True):
        async with open_store(store) as (graph, saver):
            if not await thread_exists(saver, thread_id):
                raise MusterError(f"unknown thread {thread_id}; `muster threads` lists them")
            snapshot = await graph.aget_state(thread_config(thread_id))
        target, resume = await pending_answer(
            snapshot, kind, value, thread=thread_id, where="`muster fleet` shows where it stands"
        )
        async with open_fleet(url) as app:
            try:
                job_id = await enqueue_resume(app, thread_id, {target.id: resume})
            except AlreadyQueued:
                raise MusterError(
                    f"a decision for thread {thread_id} is queued already; a worker will "
                    "take it (`muster fleet` shows it)"
                ) from None
    return QueuedDecision(thread_id=thread_id, kind=kind, resume=resume, job_id=job_id)


async def answer_on_fleet(args: argparse.Namespace, kind: str, value: Decision) -> int | None:
    """`muster approve` / `clarify` on a fleet thread: `queue_decision`, told on stdout (on
    stderr with --json); returns the exit code (0: queued), or None if the thread is not
    the fleet's, for the caller to answer in-process."""
    queued = await queue_decision(getattr(args, "db", None), args.thread, kind, value)
    if queued is None:
        return None
    print(queued.lines(), file=sys.stderr if getattr(args, "json", False) else sys.stdout)
    return ExitCode.OK


FleetCommand = Callable[[argparse.Namespace], Coroutine[Any, Any, int]]

COMMANDS: dict[str, FleetCommand] = {
    "worker": cmd_worker,
    "submit": cmd_submit,
    "fleet": cmd_fleet,
}
"""`muster worker`, `submit`, `fleet` (the names `add_fleet_commands` registers)."""
assert set(COMMANDS) == set(FLEET_COMMANDS)
