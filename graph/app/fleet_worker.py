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

A database blip (a restart, a failover, `pg_terminate_backend`). Every pool hands out only
connections that pass `checkpoints.postgres_connect.check_pooled` (a connection the server ended is
replaced), the audit log reconnects, and the worker (`MusterWorker`, Procrastinate's
`Worker` made to ride it out) keeps going where Procrastinate's would stop: a failed fetch
is tried again with a backoff (`DB_BACKOFF_S`), the heartbeat and the listener for new jobs
start again after an error, and a job's outcome that could not be written (`retry_job`,
`finish_job`) is written again until it lands (`PERSIST_ATTEMPTS`). A job whose run failed
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
import contextlib
import datetime
import logging
import os
import random
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
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

from checkpoints.lease import HOST, ThreadBusyError, ThreadLeaseLostError
from checkpoints.saver import CheckpointStoreError
from checkpoints.threads import status_of, thread_config
from graph.app.fleet_queue import (
    FOLLOW_UP,
    QUEUE,
    RESUME_THREAD,
    RUN_TICKET,
    open_fleet,
    register_worker,
)
from graph.app.options import ExitCode, MusterOptions
from graph.app.runtime import MusterRuntime, open_runtime, stream_run_outcome
from graph.app.signals import SignalDrain
from graph.kill_switch import Paused, paused

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
DB_ATTEMPTS = 200
"""How many times a job whose database session ended under it runs (about 10 minutes at
`DB_BACKOFF_S` at most apart) before it fails."""
DB_BACKOFF_S = (0.2, 1.0)
"""The first and the longest wait before trying the database again (doubled each time,
with jitter): a fetch, a job's outcome, a job whose session ended. The ceiling bounds how
long the queue stands still once the database answers again: at most this, plus
`FETCH_POLL_S`, plus the pools' own reconnect wait (`checkpoints.postgres_connect.MusterPool`, at
most 0.5 s). It was 3 s, and psycopg_pool's backoff was uncapped (1, 2, 4, 8 s...): after
one manual outage the queue moved again 5.8 s after the database did; with an 8 s outage
in tests/test_fleet_db.py, 7 s. A try is one cheap query, so trying every second while
the database is away costs nothing."""
PERSIST_ATTEMPTS = 40
"""How many times a job's outcome is written before the worker leaves it to the orphan
sweep (about 2 minutes)."""


def database_lost(error: BaseException | None) -> bool:
    """True if `error` (or one in its chain) says the database session ended: a psycopg
    connection error (a pool that could not hand one out included), the thread lease's
    session ended (`ThreadLeaseLostError`), or the store could not be reached
    (`CheckpointStoreError`, raised with its cause suppressed)."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, psycopg.OperationalError | ThreadLeaseLostError):
            return True
        if isinstance(error, CheckpointStoreError) and "cannot open" in str(error):
            return True
        error = error.__cause__ or error.__context__
    return False


def backoff_s(attempt: int) -> float:
    """The wait before try `attempt` + 1 at the database (0-based), with jitter."""
    first, most = DB_BACKOFF_S
    return min(most, first * 2**attempt) * random.uniform(0.5, 1.0)  # noqa: S311


logger = logging.getLogger("muster.fleet")


class FleetRetry(BaseRetryStrategy):
    """When a failed job goes back to the queue: a drained run at once (another worker
    continues it), a busy thread shortly, a run whose database session ended soon (with
    jitter, up to `DB_ATTEMPTS` in all), anything else twice more with a backoff."""

    def get_retry_decision(self, *, exception: BaseException, job: Job) -> RetryDecision | None:
        if isinstance(exception, GraphDrained):
            return RetryDecision(retry_in={"seconds": 0})
        if isinstance(exception, ThreadBusyError):
            if job.attempts + 1 >= BUSY_ATTEMPTS:
                return None
            return RetryDecision(retry_in={"seconds": BUSY_RETRY_S})
        if database_lost(exception):
            if job.attempts + 1 >= DB_ATTEMPTS:
                return None
            wait_ms = int(1000 * backoff_s(min(job.attempts, 3)))
            return RetryDecision(retry_in={"milliseconds": wait_ms})
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


_DOING = """
SELECT id FROM procrastinate_jobs
 WHERE queue_name = %(queue)s AND worker_id = %(worker_id)s AND status = 'doing'
"""
"""The jobs the database says a worker is doing."""


async def retry_orphans(
    app: App, worker_id: int, running: Callable[[], Collection[int]], suspects: set[int]
) -> list[int]:
    """Put back in the queue the jobs the database says worker `worker_id` is doing but it is
    not running (`running()`, read after the query, so a fetch answered meanwhile counts):
    a fetch whose answer was lost with its connection, an outcome that could not be
    written. A job seen so once is only a suspect (`suspects`, kept from sweep to sweep: a
    fetch answered by the database but not yet by the worker looks the same for a moment);
    one seen so twice in a row goes back. Returns the ids put back."""
    rows = await app.connector.execute_query_all_async(_DOING, queue=QUEUE, worker_id=worker_id)
    dropped = {int(row["id"]) for row in rows} - set(running())
    back = []
    for job_id in sorted(dropped & suspects):
        try:
            await app.job_manager.retry_job_by_id_async(
                job_id, retry_at=datetime.datetime.now(datetime.UTC)
            )
        except ConnectorException:  # no longer "doing": finished or retried meanwhile
            continue
        back.append(job_id)
    suspects.clear()
    suspects.update(dropped - set(back))
    return back


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


class MusterWorker(Worker):
    """Procrastinate's `Worker`, made to ride out a database blip (the module docstring):
    where Procrastinate's stops on the first error of a fetch, a heartbeat or its listener,
    and leaves a job "doing" when its outcome cannot be written, this one tries again."""

    def __init__(
        self,
        *args: Any,
        say: Callable[[str], None],
        paused: Callable[[], Awaitable[Paused | None]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._say = say
        self._fetch_failures = 0
        self._paused = paused
        """The store's kill switch (`graph/kill_switch.py`): while it is on, no job is taken."""
        self._was_paused = False

    def running_job_ids(self) -> set[int]:
        """The jobs this process is running now (from the moment their fetch returns)."""
        return {c.job.id for c in self._running_jobs.values() if c.job.id is not None}

    async def _fetch_and_process_jobs(self) -> None:
        stop = await self._paused() if self._paused is not None else None
        if stop is not None:  # the kill switch: take no job while it is on
            if not self._was_paused:
                self._say(f"{stop.line()}: taking no jobs until `muster resume-all`")
                self._was_paused = True
            return  # the run loop asks again after its polling interval
        if self._was_paused:
            self._say("side effects resumed: taking jobs again")
            self._was_paused = False
        try:
            await super()._fetch_and_process_jobs()
        except ConnectorException as error:
            wait = backoff_s(self._fetch_failures)
            if self._fetch_failures == 0:
                self._say(f"database error fetching jobs ({_cause(error)}); trying again")
            self._fetch_failures += 1
            # The run loop fetches again after its polling interval; wait a little more
            # while the database stays away (a stop ends the wait).
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop_event.wait(), wait)
            return
        if self._fetch_failures:
            self._say(f"database back: fetching jobs again after {self._fetch_failures} tries")
            self._fetch_failures = 0

    async def _update_heartbeat(self) -> None:
        while True:  # Procrastinate's loop, started again after an error
            try:
                await super()._update_heartbeat()
            except (ConnectorException, psycopg.Error, OSError) as error:
                logger.warning("heartbeat failed: %s", _cause(error))

    async def _listen(self) -> None:
        """Procrastinate's listener for new jobs, started again after an error (it reconnects
        by itself only when its connection dies while listening, not when reconnecting
        fails); each new start also fetches, for the notifications missed meanwhile."""
        failures = 0
        while True:
            try:
                await self.app.job_manager.listen_for_jobs(
                    on_notification=self._handle_notification, queues=self.queues
                )
                return  # it could not start listening: the polling still fetches
            except (ConnectorException, psycopg.Error, OSError) as error:
                logger.warning("listener failed: %s", _cause(error))
                await asyncio.sleep(backoff_s(failures))
                failures += 1
                self._new_job_event.set()

    def _start_side_tasks(self) -> list[asyncio.Task[Any]]:
        # Procrastinate's side tasks, with the listener above.
        side_tasks = [
            asyncio.create_task(self._update_heartbeat(), name="update_heartbeats"),
            asyncio.create_task(self._periodic_deferrer(), name="deferrer"),
            asyncio.create_task(self._poll_jobs_to_abort(), name="poll_jobs_to_abort"),
        ]
        if self.listen_notify:
            side_tasks.append(asyncio.create_task(self._listen(), name="listener"))
        return side_tasks

    async def _persist_job_status(self, job: Job, *args: Any, **kwargs: Any) -> None:
        """Write the job's outcome (`retry_job` or `finish_job`), again while the database
        is away; past `PERSIST_ATTEMPTS` the orphan sweep puts the job back in the queue."""
        for attempt in range(PERSIST_ATTEMPTS):
            try:
                await super()._persist_job_status(job, *args, **kwargs)
                return
            except ConnectorException as error:
                if not database_lost(error):
                    # The job is no longer this worker's to settle: a try before this one
                    # landed with its answer lost, or another worker's sweep retried the
                    # job while this one could not beat (its row says so). Either way its
                    # state stands; if it is still "doing" here, the orphan sweep sees it.
                    self._say(f"job {job.id}: outcome not written ({_cause(error)})")
                    return
                if attempt == 0:
                    self._say(f"job {job.id}: its outcome could not be written; trying again")
                await asyncio.sleep(backoff_s(attempt))
        self._say(f"job {job.id}: outcome not written; the sweep puts it back in the queue")


def _cause(error: BaseException) -> str:
    """The error under Procrastinate's `ConnectorException` ("Database error."), one line."""
    inner = error.__cause__ or error
    text = " ".join(str(inner).split()).split(" CONTEXT: ")[0]  # not the SQL it was in
    return text[:200] or type(inner).__name__


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
            logger.warning("stalled-job sweep failed: %s", _cause(error))
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
