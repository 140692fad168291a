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

A dead worker (SIGKILL, a lost machine). Procrastinate records a heartbeat per worker
(`procrastinate_workers.last_heartbeat`, every `stalled_after / 3` seconds here). Its own
mechanism for a dead worker's jobs is `JobManager.get_stalled_jobs` (the jobs in `doing`
whose worker's heartbeat is older than a bound) plus `retry_job`; its documentation runs the
two from a periodic task. Here every worker runs them in a side task every
`stalled_after / 3` seconds instead, which leaves no job row per sweep. The bound: a dead
worker's job is back in `todo` at most `stalled_after + stalled_after / 3` seconds after its
last heartbeat, and taken by a live worker within `FETCH_POLL_S` more (a retry sends no
notification). Its thread lease goes with its PostgreSQL session: at once when the process
dies on a live machine, within ~25 s (TCP keepalives) when the machine vanished; until then
the new job meets `ThreadBusyError` and is retried every `BUSY_RETRY_S`. With the default
`--stalled-after 15`: about 21 s on a live machine.

A live worker judged dead. On a loaded machine a worker's event loop can be late with its
heartbeat by more than `stalled_after`; Procrastinate then lets any sweep (its own included)
retry its jobs and delete its row, and every later fetch of that worker fails on the jobs
table's foreign key to `procrastinate_workers`, so it silently stops taking jobs. The sweep
here (`keep_alive`) therefore first beats for its own worker, putting its row back under the
same id if another worker pruned it, never retries its own jobs, and prunes only rows silent
for `PRUNE_AFTER_BOUNDS` times the bound. A job retried while its
worker was only slow meets the thread's lease (`ThreadBusyError`) and, once that worker is
done, finds the thread done: the checkpoints keep it exactly once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

import psycopg
from langgraph.errors import GraphDrained
from langgraph.runtime import RunControl
from langgraph.types import Command
from procrastinate import App
from procrastinate.exceptions import ConnectorException, UniqueViolation
from procrastinate.job_context import JobContext
from procrastinate.jobs import Job, Status
from procrastinate.retry import BaseRetryStrategy, RetryDecision
from procrastinate.worker import Worker

from checkpoints.lease import HOST, ThreadBusyError
from checkpoints.threads import status_of, thread_config
from graph.app.fleet_queue import (
    QUEUE,
    RESUME_THREAD,
    RUN_TICKET,
    open_fleet,
    register_worker,
)
from graph.app.options import ExitCode, MusterOptions
from graph.app.runtime import MusterRuntime, open_runtime, stream_run_outcome
from graph.app.signals import SignalDrain

FETCH_POLL_S = 1.0
"""How often an idle worker looks for jobs besides the notifications of new ones (a job
retried after a drain or a dead worker comes with no notification)."""
BUSY_RETRY_S = 2
"""How soon a job whose thread is held elsewhere (`ThreadBusyError`) is tried again."""
BUSY_ATTEMPTS = 300
"""How many times a job retries a busy thread (about 10 minutes) before it fails."""
PRUNE_AFTER_BOUNDS = 10
"""A silent worker's row is deleted after this many `stalled_after` (its jobs are retried
after one)."""
ERROR_ATTEMPTS = 3
"""How many times a job that raised anything else runs in all."""

logger = logging.getLogger("muster.fleet")


class FleetRetry(BaseRetryStrategy):
    """When a failed job goes back to the queue: a drained run at once (another worker
    continues it), a busy thread shortly, anything else twice more with a backoff."""

    def get_retry_decision(self, *, exception: BaseException, job: Job) -> RetryDecision | None:
        if isinstance(exception, GraphDrained):
            return RetryDecision(retry_in={"seconds": 0})
        if isinstance(exception, ThreadBusyError):
            if job.attempts + 1 >= BUSY_ATTEMPTS:
                return None
            return RetryDecision(retry_in={"seconds": BUSY_RETRY_S})
        if isinstance(exception, Exception) and job.attempts + 1 < ERROR_ATTEMPTS:
            return RetryDecision(retry_in={"seconds": 2 ** (job.attempts + 1)})
        return None


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
) -> str:
    """Do what `thread_id` still needs, under its lease; returns what happened, in a word.

    New thread: start it with `request` (a resume job for an unknown thread does nothing).
    In progress or failed: resume it. Waiting for a human: answer the interrupt named in
    `resume` if it is still pending (a stale decision does nothing). Done: nothing."""
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
        else:
            state.line(f"{tag}: already done")
            return "done"
        state.line(f"{tag}: {'starting' if status == 'new' else f'continuing ({status})'}")
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


TASKS = {RUN_TICKET: run_ticket, RESUME_THREAD: resume_thread}
"""The task bodies a worker runs, by name."""


_KEEP_ALIVE = """
INSERT INTO procrastinate_workers (id, last_heartbeat)
OVERRIDING SYSTEM VALUE VALUES (%(worker_id)s, now())
ON CONFLICT (id) DO UPDATE SET last_heartbeat = now()
RETURNING xmax = 0 AS revived
"""
"""Procrastinate's heartbeat, which also puts back a row another worker pruned (`xmax = 0`:
the row was inserted, not updated)."""

_RELINK = """
UPDATE procrastinate_jobs SET worker_id = %(worker_id)s
 WHERE id = ANY(%(job_ids)s) AND status = 'doing' AND worker_id IS NULL
"""
"""The prune set the worker's jobs' `worker_id` to NULL; the ones it still runs are its."""


async def keep_alive(app: App, worker_id: int, in_hand: Collection[int] = ()) -> bool:
    """Beat for this worker; True if its row had been pruned and is now back, with the jobs
    `in_hand` linked to it again."""
    row = await app.connector.execute_query_one_async(_KEEP_ALIVE, worker_id=worker_id)
    revived = bool(row["revived"])
    if revived and in_hand:
        await app.connector.execute_query_async(_RELINK, worker_id=worker_id, job_ids=list(in_hand))
    return revived


async def retry_stalled_jobs(
    app: App,
    *,
    stalled_after: float,
    own_worker_id: int | None = None,
    in_hand: Collection[int] = (),
) -> list[int]:
    """Put back in the queue the jobs of workers silent for over `stalled_after` seconds
    (Procrastinate's `get_stalled_jobs` + `retry_job`); returns their ids. A job that can no
    longer be retried (another worker got it first; a newer job of the thread waits under
    the same queueing lock) is skipped or, for the latter, marked failed: the waiting job
    continues the thread anyway, and a `doing` job left behind would hold the thread's lock
    forever."""
    retried = []
    for job in await app.job_manager.get_stalled_jobs(
        queue=QUEUE, seconds_since_heartbeat=stalled_after
    ):
        if job.id in in_hand or (own_worker_id is not None and job.worker_id == own_worker_id):
            continue  # this process is running it: it is slow, not dead
        try:
            await app.job_manager.retry_job(job)
        except UniqueViolation:
            assert job.id is not None
            await app.job_manager.finish_job_by_id_async(
                job.id, status=Status.FAILED, delete_job=False
            )
        except ConnectorException:  # already retried by another worker's sweep
            continue
        if job.id is not None:
            retried.append(job.id)
    # Rows of workers silent for much longer than the bound go; a worker only late with its
    # heartbeat keeps its row (its fetches need it), and `keep_alive` restores it anyway.
    await app.job_manager.prune_stalled_workers(PRUNE_AFTER_BOUNDS * stalled_after)
    return retried


async def _sweep(app: App, worker: Worker, state: WorkerState, *, stalled_after: float) -> None:
    while True:
        await asyncio.sleep(stalled_after / 3)
        try:
            own = worker.worker_id
            if own is not None and await keep_alive(app, own, state.jobs_in_hand):
                state.line(
                    f"worker {own} was judged dead (its heartbeat came late); registered again"
                )
            retried = await retry_stalled_jobs(
                app, stalled_after=stalled_after, own_worker_id=own, in_hand=state.jobs_in_hand
            )
        except (ConnectorException, psycopg.Error) as error:  # the next sweep tries again
            logger.warning("stalled-job sweep failed: %s", error)
            continue
        if retried:
            state.line(f"retried stalled jobs of a dead worker: {', '.join(map(str, retried))}")


async def _register(url: str, worker: Worker, name: str) -> None:
    # Procrastinate sets `worker_id` once it has registered, and signals nothing.
    while worker.worker_id is None:  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    await register_worker(url, worker.worker_id, name=name, host=HOST, pid=os.getpid())


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
        worker = Worker(
            app,
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
                asyncio.create_task(_register(url, worker, name)),
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
