"""The queue of `muster batch`: which tickets need what, and running them concurrently.

Before anything runs, each ticket's thread decides what it needs (`plan_batch`): done, or
waiting on a human → skipped (and counted); in progress or failed → resumed with `None`;
absent → run. A batch whose threads already exist is refused unless `--resume`. Then
`run_batch` runs the rest over one runtime (one `ToolHub`, one session per server), at most
`--concurrency` tickets at a time, each on a lane (a checkpoint connection of its own on
SQLite; the shared pooled saver on PostgreSQL).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from langgraph.errors import GraphDrained
from langgraph.runtime import RunControl
from langgraph.types import Command, StateSnapshot

from checkpoints.store import CheckpointStore
from checkpoints.threads import status_of, thread_config
from graph.app.batch_outcomes import TicketResult, read_result, result_from_snapshot
from graph.app.batch_report import BatchProgress, append_jsonl
from graph.app.batch_tickets import Ticket, batch_name, batch_thread_id
from graph.app.hints import NOTHING, Carried
from graph.app.runtime import Graph, MusterRuntime, open_store, stream_run_snapshot
from graph.services import Services
from workers.errors import ConfigError

MAX_LANES = 16
"""Checkpoint connections a batch opens at most (see `MusterRuntime.lanes`)."""


class TicketRunner(Protocol):
    """How `run_batch` runs one ticket's thread: `stream_run_snapshot`'s call, which is the
    default. Another one must do the same (run the thread to its end or its interrupt, under
    the lease `run_batch` already holds, and return its snapshot); bench/batch.py passes a
    timed one."""

    async def __call__(
        self,
        runtime: MusterRuntime,
        thread_id: str,
        payload: dict[str, Any] | Command | None,
        *,
        services: Services | None = None,
        control: RunControl | None = None,
        graph: Graph | None = None,
    ) -> StateSnapshot: ...


@dataclass
class BatchPlan:
    """What each ticket needs: skip (finished), resume (None), or run (its request)."""

    skip: list[TicketResult] = field(default_factory=list)
    resume: list[Ticket] = field(default_factory=list)
    run: list[Ticket] = field(default_factory=list)


async def existing_threads(
    db: str | Path | CheckpointStore, db_exists: bool, path: Path, tickets: Sequence[Ticket]
) -> dict[str, StateSnapshot]:
    """The snapshots of this batch's threads that already exist (no servers start)."""
    if not db_exists:
        return {}
    found: dict[str, StateSnapshot] = {}
    async with open_store(db) as (graph, saver):
        for ticket in tickets:
            thread_id = batch_thread_id(path, ticket.id)
            if await saver.aget_tuple(thread_config(thread_id)) is not None:
                found[ticket.id] = await graph.aget_state(thread_config(thread_id))
    return found


def plan_batch(
    path: Path,
    tickets: Sequence[Ticket],
    existing: dict[str, StateSnapshot],
    resume: bool,
    carried: Carried = NOTHING,
) -> BatchPlan:
    """Sort the tickets by what their threads need (see the module docstring); refuse a batch
    that already has threads unless `resume` (the error's command carries `carried`), and a
    ticket whose text changed since."""
    plan = BatchPlan()
    if existing and not resume:
        example = batch_thread_id(path, next(iter(existing)))
        again = carried.command("batch", str(path), "--resume", batch=True)
        raise ConfigError(
            f"batch {batch_name(path)} already has {len(existing)} of {len(tickets)} threads "
            f"in this store (e.g. {example}); finish it with `{again}`, or use another --db"
        )
    for ticket in tickets:
        snapshot = existing.get(ticket.id)
        if snapshot is None:
            plan.run.append(ticket)
            continue
        stored = snapshot.values.get("request")
        if stored is not None and stored != ticket.request:
            raise ConfigError(
                f"{path} line {ticket.line}: ticket {ticket.id} differs from the request its "
                f"thread {batch_thread_id(path, ticket.id)} was started with; give the changed "
                "ticket a new id"
            )
        status = status_of(snapshot)
        if status == "new":  # a checkpoint but no state and nothing next: start it afresh
            plan.run.append(ticket)
        elif status in ("done", "interrupted"):
            plan.skip.append(
                result_from_snapshot(ticket, batch_thread_id(path, ticket.id), snapshot)
            )
        else:
            plan.resume.append(ticket)
    return plan


async def still_needs(graph: Graph, thread_id: str, *, resume: bool) -> bool:
    """Whether the planned run or resume of `thread_id` is still due, read under its lease.
    A ticket to run whose thread appeared meanwhile raises; one to resume that another
    process finished or brought to an interrupt is only read back."""
    snapshot = await graph.aget_state(thread_config(thread_id))
    status = status_of(snapshot)
    if not resume:
        if status != "new":
            raise ConfigError(
                f"thread {thread_id} was started by another process meanwhile ({status}); "
                "run the batch again with --resume"
            )
        return True
    return status in ("in progress", "failed")


async def run_batch(
    runtime: MusterRuntime,
    path: Path,
    plan: BatchPlan,
    *,
    concurrency: int,
    progress: BatchProgress,
    out: Path | None = None,
    controls: set[RunControl] | None = None,
    stop: asyncio.Event | None = None,
    lanes: asyncio.Queue[Graph] | None = None,
    run_ticket: TicketRunner = stream_run_snapshot,
) -> tuple[list[TicketResult], bool]:
    """Run and resume the planned tickets on `runtime`, at most `concurrency` at a time.

    Returns the results of the tickets it ran and whether a drain stopped it. Each finished
    ticket is appended to `out` (if given) as soon as its thread is read back. Every run's
    `RunControl` is in `controls` while it runs; once `stop` is set no new ticket starts.
    `run_ticket` runs each ticket's thread (`TicketRunner`; `stream_run_snapshot` unless a
    caller such as a benchmark passes its own).
    """
    semaphore = asyncio.Semaphore(concurrency)
    lanes = lanes or asyncio.Queue()
    if lanes.empty():
        lanes.put_nowait(runtime.graph)
    live = controls if controls is not None else set()
    drained = False
    results: list[TicketResult] = []

    async def one(ticket: Ticket, resume: bool) -> None:
        nonlocal drained
        async with semaphore:
            if drained or (stop is not None and stop.is_set()):
                return
            thread_id = batch_thread_id(path, ticket.id)
            control = RunControl()
            live.add(control)
            error: str | None = None
            snapshot: StateSnapshot | None = None  # the thread as its run left it
            graph = await lanes.get()
            try:
                # The thread's lease, then a fresh look at it: another process may have run
                # it since `plan_batch` read it, and its work must not run twice.
                async with runtime.store.hold_thread(thread_id):
                    if await still_needs(graph, thread_id, resume=resume):
                        snapshot = await run_ticket(
                            runtime,
                            thread_id,
                            None if resume else ticket.payload(),
                            services=runtime.for_thread(thread_id),
                            control=control,
                            graph=graph,
                        )
            except GraphDrained:
                drained = True
                return
            except Exception as exc:  # one ticket's crash must not stop the queue
                error = f"{type(exc).__name__}: {exc}"
            finally:
                live.discard(control)
                lanes.put_nowait(graph)
            try:
                if snapshot is not None:
                    result = result_from_snapshot(ticket, thread_id, snapshot, error)
                else:
                    result = await read_result(runtime.graph, path, ticket, error)
            except Exception as exc:  # the store failed us: say so for this ticket, go on
                reason = f"reading the thread back failed: {type(exc).__name__}: {exc}"
                result = result_from_snapshot(ticket, thread_id, None, error or reason)
            results.append(result)
            if out is not None and result.outcome != "unfinished":
                append_jsonl(out, result.record())
            progress.finish(result)

    jobs = [(t, True) for t in plan.resume] + [(t, False) for t in plan.run]
    await asyncio.gather(*(one(ticket, resume) for ticket, resume in jobs))
    return results, drained
