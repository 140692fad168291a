"""`muster worker`: one process of the fleet, running jobs from the queue until stopped.

A worker opens ONE Muster runtime (`open_runtime`: one checkpoint saver pool, one MCP hub
with every server started once) and runs every job it takes on it, through `stream_run`,
which holds the thread's lease (a PostgreSQL advisory lock) for the whole run. A job does
what the thread still needs, read from its checkpoints under that lease (`advance`): start
it, resume it where it stopped, answer its pending interrupt with the decision the job
carries, or nothing (it is done, or waits for a human). So a job that runs twice, because a
worker died after the graph finished but before Procrastinate marked the job, does nothing
the second time; and LangGraph's checkpoints stay the only record of what has run.

Stopping. SIGINT/SIGTERM (`SignalDrain`) stop Procrastinate's worker from taking new jobs
and ask every run in hand to drain: it finishes the superstep in flight, checkpoints it and
raises `GraphDrained`, and the job goes back to the queue at once (`FleetRetry`) for any
worker to continue. A second signal stops the process at once.

A dead worker, and a live worker judged dead (its heartbeat came late): graph/app/fleet_sweep.py
says how every worker's sweep puts their jobs back in the queue, and within which bound.

A database blip (a restart, a failover, `pg_terminate_backend`). Every pool hands out only
connections that pass `checkpoints.postgres_connect.check_pooled` (a connection the server ended is
replaced), the audit log reconnects, and the worker (`MusterWorker`, Procrastinate's
`Worker` made to ride it out, graph/app/fleet_procrastinate.py) keeps going where
Procrastinate's would stop: a failed fetch is tried again with a backoff (`DB_BACKOFF_S`,
graph/app/fleet_retry.py), the heartbeat and the listener for new jobs start again after an
error, and a job's outcome that could not be written (`retry_job`, `finish_job`) is written
again until it lands (`PERSIST_ATTEMPTS`). A job whose run failed
because its database session ended (`database_lost`: a connection error anywhere in the
chain, the lease's session ended under the run) is retried soon, up to `DB_ATTEMPTS` times
rather than `ERROR_ATTEMPTS` (Procrastinate counts one attempts number for both, so a bug
met after a blip gets fewer retries). And no job stays "doing" on a live worker that
dropped it: each sweep lists the jobs the database says this worker is doing, and one it
is not running (a fetch whose answer was lost, an outcome never written) on two sweeps in
a row goes back to the queue (`retry_orphans`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

import psycopg
from langgraph.errors import GraphDrained
from langgraph.runtime import RunControl
from langgraph.types import Command
from procrastinate import App
from procrastinate.exceptions import ConnectorException
from procrastinate.job_context import JobContext
from procrastinate.worker import Worker

from checkpoints.lease import HOST
from checkpoints.threads import status_of, thread_config
from graph.app.fleet_procrastinate import MusterWorker, error_line
from graph.app.fleet_queue import (
    FOLLOW_UP,
    QUEUE,
    RESUME_THREAD,
    RUN_TICKET,
    open_fleet,
    register_worker,
)
from graph.app.fleet_retry import FleetRetry
from graph.app.fleet_sweep import keep_alive, retry_orphans, retry_stalled_jobs
from graph.app.options import ExitCode, MusterOptions
from graph.app.runtime import MusterRuntime, open_runtime, stream_run_outcome
from graph.app.signals import SignalDrain
from graph.kill_switch import Paused, paused

FETCH_POLL_S = 1.0
"""How often an idle worker looks for jobs besides the notifications of new ones (a job
retried after a drain or a dead worker comes with no notification)."""

logger = logging.getLogger("muster.fleet")


@dataclass
class WorkerState:
    """What every job of this worker process shares."""

    runtime: MusterRuntime
    """The one runtime (saver pool, MCP hub, models) all its jobs run on."""
    drain: SignalDrain
    """The runs in hand (each registers its `RunControl`) and the stop flag."""
    out: TextIO = field(default=sys.stdout)
    """Where one line per job goes."""
    jobs_in_hand: set[int] = field(default_factory=set)
    """The ids of the jobs this process is running (never retried by its own sweep)."""

    def line(self, text: str) -> None:
        print(text, file=self.out, flush=True)


def _state(context: JobContext) -> WorkerState:
    state = context.additional_context["muster"]
    assert isinstance(state, WorkerState)
    return state


async def advance(
    state: WorkerState,
    thread_id: str,
    *,
    request: str | None = None,
    resume: dict[str, Any] | None = None,
    job_id: int | None = None,
    contact: int | None = None,
) -> str:
    """Do what `thread_id` still needs, under its lease; returns what happened, in a word.

    New thread: start it with `request` (a resume job for an unknown thread does nothing).
    In progress or failed: resume it. Waiting for a human: answer the interrupt named in
    `resume` if it is still pending (a stale decision does nothing). Done: nothing, unless
    `contact` (a follow-up job) says `request` is the thread's next message: then a new
    turn starts with it, once (a thread that has that message already does not redo it)."""
    rt = state.runtime
    tag = f"job {job_id} {thread_id}"
    async with rt.store.hold_thread(thread_id):
        snapshot = await rt.graph.aget_state(thread_config(thread_id))
        status = status_of(snapshot)
        payload: dict[str, Any] | Command | None
        if status == "new":
            if request is None:
                state.line(f"{tag}: no such thread; nothing to do")
                return "unknown"
            payload = {"request": request}
        elif status in ("in progress", "failed"):
            payload = None
        elif status == "interrupted":
            pending = {i.id for i in snapshot.interrupts}
            answer = {k: v for k, v in (resume or {}).items() if k in pending}
            if not answer:
                state.line(f"{tag}: waits for a human")
                return "waiting"
            payload = Command(resume=answer)
        elif contact is not None and request is not None and _contacts(snapshot) + 1 == contact:
            payload = {"request": request}
        else:
            state.line(f"{tag}: already done")
            return "done"
        doing = "starting" if status == "new" else f"continuing ({status})"
        if status == "done":
            doing = f"follow-up: message {contact}"
        state.line(f"{tag}: {doing}")
        control = RunControl()
        state.drain.controls.add(control)
        try:
            # How it ended, from the run's own updates: only this log line needs it, and
            # reading the thread back would cost a round of checkpoint reads and the
            # replay of its incremental channels.
            finished = await stream_run_outcome(rt, thread_id, payload, control=control)
        except GraphDrained:
            state.line(f"{tag}: drained; checkpointed and back in the queue")
            raise
        finally:
            state.drain.controls.discard(control)
        after, shown = finished.status, finished.answer_status
        state.line(f"{tag}: {after}" + (f" ({shown})" if shown and after == "done" else ""))
        return after


@asynccontextmanager
async def _in_hand(state: WorkerState, job_id: int | None) -> AsyncIterator[None]:
    if job_id is None:
        yield
        return
    state.jobs_in_hand.add(job_id)
    try:
        yield
    finally:
        state.jobs_in_hand.discard(job_id)


async def run_ticket(context: JobContext, thread_id: str, request: str) -> str:
    """Task `muster:run_ticket`: start the ticket's thread, or continue it."""
    state, job_id = _state(context), context.job.id
    async with _in_hand(state, job_id):
        return await advance(state, thread_id, request=request, job_id=job_id)


async def resume_thread(
    context: JobContext, thread_id: str, resume: dict[str, Any] | None = None
) -> str:
    """Task `muster:resume_thread`: continue the thread, answering its interrupt if given."""
    state, job_id = _state(context), context.job.id
    async with _in_hand(state, job_id):
        return await advance(state, thread_id, resume=resume, job_id=job_id)


async def follow_up(context: JobContext, thread_id: str, request: str, contact: int) -> str:
    """Task `muster:follow_up`: the customer's message number `contact` on a thread that
    has answered starts a new turn (or, run again, continues or leaves that turn)."""
    state, job_id = _state(context), context.job.id
    async with _in_hand(state, job_id):
        return await advance(state, thread_id, request=request, job_id=job_id, contact=contact)


def _contacts(snapshot: Any) -> int:
    """How many messages of the customer the thread has read (`muster follow-up`'s count)."""
    return len(snapshot.values.get("contacts") or [None])


TASKS = {RUN_TICKET: run_ticket, RESUME_THREAD: resume_thread, FOLLOW_UP: follow_up}
"""The task bodies a worker runs, by name."""


async def _sweep(
    app: App, worker: MusterWorker, state: WorkerState, *, stalled_after: float
) -> None:
    suspects: set[int] = set()

    def running() -> set[int]:
        return worker.running_job_ids() | state.jobs_in_hand

    while True:
        await asyncio.sleep(stalled_after / 3)
        try:
            own = worker.worker_id
            if own is not None and await keep_alive(app, own, running()):
                state.line(
                    f"worker {own} was judged dead (its heartbeat came late); registered again"
                )
            retried = await retry_stalled_jobs(
                app, stalled_after=stalled_after, own_worker_id=own, in_hand=running()
            )
            orphans = await retry_orphans(app, own, running, suspects) if own is not None else []
        except (ConnectorException, psycopg.Error) as error:  # the next sweep tries again
            logger.warning("stalled-job sweep failed: %s", error_line(error))
            continue
        if retried:
            state.line(f"retried stalled jobs of a dead worker: {', '.join(map(str, retried))}")
        if orphans:
            state.line(
                "put back in the queue jobs this worker had dropped: "
                + ", ".join(map(str, orphans))
            )


async def _register(url: str, worker: Worker, name: str, stalled_after: float) -> None:
    # Procrastinate sets `worker_id` once it has registered, and signals nothing.
    while worker.worker_id is None:  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    await register_worker(
        url, worker.worker_id, name=name, host=HOST, pid=os.getpid(), stalled_after=stalled_after
    )


async def serve(
    options: MusterOptions,
    *,
    concurrency: int,
    stalled_after: float,
    name: str | None = None,
    out: TextIO = sys.stdout,
) -> int:
    """Run jobs until SIGINT/SIGTERM; returns `ExitCode.DRAINED` once drained."""
    url = str(options.db)
    name = name or f"{HOST}:{os.getpid()}"
    async with (
        open_runtime(options, servers_on_demand=False) as runtime,
        open_fleet(url, pool_size=concurrency + 4, tasks=dict(TASKS), retry=FleetRetry()) as app,
    ):
        drain = SignalDrain(
            lambda text: print(text, file=out, flush=True), in_flight="the jobs in hand"
        )
        state = WorkerState(runtime=runtime, drain=drain, out=out)
        audit = runtime.services.audit

        async def switch() -> Paused | None:
            try:
                return await paused(audit)
            except Exception:  # a database blip: the fetch below meets it and retries
                return None

        worker = MusterWorker(
            app,
            say=state.line,
            paused=switch,
            queues=[QUEUE],
            name=name,
            concurrency=concurrency,
            fetch_job_polling_interval=FETCH_POLL_S,
            update_heartbeat_interval=stalled_after / 3,
            stalled_worker_timeout=stalled_after,
            additional_context={"muster": state},
            install_signal_handlers=False,  # SignalDrain also drains the runs in hand
            shutdown_graceful_timeout=None,
        )
        with drain:
            run = asyncio.create_task(worker.run(), name="procrastinate worker")
            side = [
                asyncio.create_task(_sweep(app, worker, state, stalled_after=stalled_after)),
                asyncio.create_task(_register(url, worker, name, stalled_after)),
            ]

            async def stop_on_signal() -> None:
                await drain.stop.wait()
                worker.stop()

            side.append(asyncio.create_task(stop_on_signal()))
            await asyncio.sleep(0)
            state.line(
                f"worker {name}: concurrency {concurrency}, queue {QUEUE}, "
                f"stalled after {stalled_after:g}s; servers up: "
                + ", ".join(n for n, s in runtime.services.hub.health().items() if s.up)
            )
            try:
                await run
            finally:
                for task in side:
                    task.cancel()
                await asyncio.gather(*side, return_exceptions=True)
        state.line(f"worker {name}: stopped")
    return ExitCode.DRAINED
