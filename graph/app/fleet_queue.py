"""The fleet's queue: a Procrastinate app in the store's PostgreSQL database.

Jobs live in the same database as the checkpoints, in Procrastinate's own tables
(`procrastinate_jobs`, `procrastinate_workers`, ...), plus one small table of Muster's,
`muster_fleet_workers`, that says which host and pid each Procrastinate worker id is.
`ensure_fleet_schema` applies Procrastinate's schema on first use, under the advisory lock
Muster takes to create its own tables (`checkpoints.postgres_schema.schema_lock`), and only when
`procrastinate_jobs` is not there yet: Procrastinate's `schema.sql` is not idempotent. A
database set up by another Procrastinate version is used as it is (migrate it with
`procrastinate schema --migrate`).

Two tasks, both on queue `muster`, both with the thread id as their Procrastinate `lock`
(no two jobs of one thread run at once, and they run in the order they were queued):

- `muster:run_ticket(thread_id, request)`: start the thread, or resume it where it stopped;
  queueing lock `run:<thread>` (a ticket is queued at most once).
- `muster:resume_thread(thread_id, resume)`: continue it, answering the pending interrupt
  `resume` = `{interrupt_id: value}` (an approval, a clarification) if one is given;
  queueing lock `resume:<thread>` (one decision waits at a time).
- `muster:follow_up(thread_id, request, contact)`: the customer's next message on a thread
  that has answered (`muster serve` in front of the fleet queues it), started as message
  number `contact` only if the thread is done with `contact - 1` messages (so a job run
  twice starts one turn); queueing lock `follow-up:<thread>` (one message waits at a time).

The queue decides who runs; the checkpoints stay the only record of what has run: a job
reads the thread's state and does what it still needs (graph/app/fleet_worker.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from procrastinate import App, PsycopgConnector
from procrastinate.exceptions import AlreadyEnqueued
from procrastinate.retry import BaseRetryStrategy
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from checkpoints import postgres_connect as _postgres
from checkpoints.postgres_connect import MusterPool, check_pooled, connect, one_line, redacted
from checkpoints.postgres_schema import schema_lock
from checkpoints.saver import CheckpointStoreError

QUEUE = "muster"
"""The Procrastinate queue Muster's jobs go on."""
RUN_TICKET = "muster:run_ticket"
"""Start (or continue) a ticket's thread."""
RESUME_THREAD = "muster:resume_thread"
"""Continue a thread, with a human's decision for its pending interrupt if there is one."""
FOLLOW_UP = "muster:follow_up"
"""Start a new turn on a thread that has answered, with the customer's next message."""

WORKERS_TABLE = """
CREATE TABLE IF NOT EXISTS muster_fleet_workers (
    worker_id bigint PRIMARY KEY,
    name text NOT NULL,
    host text NOT NULL,
    pid integer NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now(),
    stalled_after_s double precision
)"""
WORKERS_BOUND_COLUMN = (
    "ALTER TABLE muster_fleet_workers ADD COLUMN IF NOT EXISTS stalled_after_s double precision"
)
"""A worker's stall bound (`--stalled-after`), for `muster fleet` to call it dead: added to a
table an older Muster made without it."""
DEFAULT_STALLED_AFTER_S = 15.0
"""The bound `muster fleet` assumes for a worker that registered none (an older Muster)."""

Task = Callable[..., Awaitable[Any]]
"""A task body: `(context, **kwargs)`."""


async def _schema_present(conn: psycopg.AsyncConnection[Any]) -> bool:
    cursor = await conn.execute("SELECT to_regclass('procrastinate_jobs') IS NOT NULL AS ok")
    row = await cursor.fetchone()
    return bool(row and row["ok"])


async def _workers_table_present(conn: psycopg.AsyncConnection[Any]) -> bool:
    """True if Muster's worker table is there with every column this version writes."""
    cursor = await conn.execute(
        "SELECT count(*) = 1 AS ok FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND table_name = 'muster_fleet_workers'"
        " AND column_name = 'stalled_after_s'"
    )
    row = await cursor.fetchone()
    return bool(row and row["ok"])


async def _autocommit(conn: psycopg.AsyncConnection[Any]) -> None:
    """Each pooled connection of the queue in autocommit. Procrastinate runs each operation
    as one statement (a stored function) and never opens a transaction of its own, so the
    BEGIN and COMMIT psycopg adds around each were two more round trips a job fetch or
    finish. (Set here, not in the connection kwargs: Procrastinate's listener connection
    passes `autocommit` itself.)"""
    await conn.set_autocommit(True)


IDLE_CHECK_S = _postgres.IDLE_CHECK_S
_handed_out_at = _postgres._handed_out_at
"""`check_pooled`'s clock: when each pooled connection was last handed out."""


def _queue_pool(**kwargs: Any) -> AsyncConnectionPool[Any]:
    """Procrastinate's pool, with `check_pooled` for its check: Procrastinate has the pool
    check every connection it hands out (one more round trip per query: a job's fetch and
    finish took three more), so that one broken while idle, by a server restart say, is
    replaced without an error. `check_pooled` makes the round trip only for a connection
    that is new, unused for `IDLE_CHECK_S`, or on which the server has spoken since (a
    terminated backend's last word); it once skipped connections used in the last 5 s
    outright, and a database blip then handed out dead ones. (Timed from the checkout, not
    the return: a `reset` callback would make the pool return every connection through a
    worker task.) A `MusterPool`: its reconnect backoff is capped at half a second.)"""
    kwargs["check"] = check_pooled
    return MusterPool(**kwargs)


async def fleet_schema_present(url: str) -> bool:
    """True if the database at `url` has the fleet's tables (a fleet has been used on it)."""
    conn = await connect(url)
    try:
        return await _schema_present(conn)
    finally:
        await conn.close()


async def ensure_fleet_schema(app: App, url: str) -> None:
    """Apply Procrastinate's schema and Muster's worker table if they are not there yet:
    once per database, under Muster's schema lock, so two workers starting together on a
    fresh database set it up once."""
    conn = await connect(url)
    try:
        if await _schema_present(conn) and await _workers_table_present(conn):
            return
        # Even `CREATE TABLE IF NOT EXISTS` fails when two sessions run it at once (on
        # PostgreSQL's catalogue: "duplicate key ... pg_type_typname_nsp_index"), so the
        # worker table is made under the lock too: seen with two workers started together.
        async with schema_lock(conn):
            if not await _schema_present(conn):
                await app.schema_manager.apply_schema_async()
            await conn.execute(WORKERS_TABLE)
            await conn.execute(WORKERS_BOUND_COLUMN)
    except psycopg.Error as error:
        raise CheckpointStoreError(
            f"cannot set up the fleet's queue in {redacted(url)}: {one_line(error)}"
        ) from None
    finally:
        await conn.close()


def build_app(
    url: str,
    *,
    pool_size: int = 4,
    tasks: dict[str, Task] | None = None,
    retry: BaseRetryStrategy | None = None,
) -> App:
    """A Procrastinate app on `url` knowing Muster's tasks by name. A worker passes the task
    bodies (`tasks`) and their `retry` strategy; a process that only queues or reads jobs
    passes none (the task names are enough to defer)."""
    app = App(
        connector=PsycopgConnector(
            conninfo=url,
            min_size=1,
            max_size=pool_size,
            kwargs={"application_name": "muster-fleet"},
            configure=_autocommit,
            pool_factory=_queue_pool,
        )
    )
    for name, body in (tasks or {}).items():
        app.task(name=name, queue=QUEUE, pass_context=True, retry=retry or False)(body)
    return app


@asynccontextmanager
async def open_fleet(url: str, **kwargs: Any) -> AsyncIterator[App]:
    """`build_app(url, **kwargs)`, opened, with the fleet's schema in place. The URL is
    tried first on one connection (`connect`), so a bad or unreachable database is one line
    at once (or within `CONNECT_TIMEOUT_S`), not Procrastinate's pool giving up after 30 s."""
    await (await connect(url)).close()
    app = build_app(url, **kwargs)
    try:
        async with app.open_async():
            await ensure_fleet_schema(app, url)
            yield app
    except psycopg.OperationalError as error:
        raise CheckpointStoreError(
            f"cannot open the fleet's queue in {redacted(url)}: {one_line(error)}"
        ) from None


class AlreadyQueued(Exception):
    """A job for this thread is waiting in the queue already (its queueing lock is taken)."""


async def enqueue_ticket(app: App, thread_id: str, request: str) -> int:
    """Queue `run_ticket` for a new thread; returns the job id (`AlreadyQueued` if queued)."""
    try:
        return await app.configure_task(
            RUN_TICKET, queue=QUEUE, lock=thread_id, queueing_lock=f"run:{thread_id}"
        ).defer_async(thread_id=thread_id, request=request)
    except AlreadyEnqueued:
        raise AlreadyQueued(thread_id) from None


async def enqueue_resume(app: App, thread_id: str, resume: dict[str, Any] | None = None) -> int:
    """Queue `resume_thread` (with `resume` = `{interrupt_id: value}` to answer one)."""
    try:
        return await app.configure_task(
            RESUME_THREAD, queue=QUEUE, lock=thread_id, queueing_lock=f"resume:{thread_id}"
        ).defer_async(thread_id=thread_id, resume=resume)
    except AlreadyEnqueued:
        raise AlreadyQueued(thread_id) from None


async def enqueue_follow_up(app: App, thread_id: str, request: str, contact: int) -> int:
    """Queue `follow_up`: message number `contact` on a thread that has answered."""
    try:
        return await app.configure_task(
            FOLLOW_UP, queue=QUEUE, lock=thread_id, queueing_lock=f"follow-up:{thread_id}"
        ).defer_async(thread_id=thread_id, request=request, contact=contact)
    except AlreadyEnqueued:
        raise AlreadyQueued(thread_id) from None


async def register_worker(
    url: str,
    worker_id: int,
    *,
    name: str,
    host: str,
    pid: int,
    stalled_after: float = DEFAULT_STALLED_AFTER_S,
) -> None:
    """Say which host and pid Procrastinate's worker `worker_id` is, and its stall bound
    (for `muster fleet`, which calls it dead once it is silent for longer)."""
    conn = await connect(url)
    try:
        await conn.execute(
            "INSERT INTO muster_fleet_workers (worker_id, name, host, pid, stalled_after_s) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (worker_id) DO UPDATE "
            "SET name = EXCLUDED.name, host = EXCLUDED.host, pid = EXCLUDED.pid, "
            "stalled_after_s = EXCLUDED.stalled_after_s",
            (worker_id, name, host, pid, stalled_after),
        )
    finally:
        await conn.close()


@dataclass(frozen=True)
class FleetJob:
    """The job that speaks for a thread: its unfinished one, else its latest."""

    thread_id: str
    job_id: int
    task: str
    status: str
    """Procrastinate's status: todo, doing, succeeded, failed, cancelled, aborted."""
    attempts: int
    worker: str | None
    """`name (host pid)` of the worker running it, for a job in `doing`."""
    silent_s: float | None
    """Seconds since that worker's last heartbeat (None: the worker is gone)."""
    worker_dead: bool = False
    """True once that worker has been silent for longer than its stall bound."""


@dataclass(frozen=True)
class FleetWorker:
    """A registered worker: `name (host pid)`, seconds since its last heartbeat, and its
    stall bound; `dead` once it has been silent for longer than the bound.

    Liveness is the heartbeat, read against the database's own clock: a worker beats every
    third of its bound (`--stalled-after`, registered with it), so a live one is never
    silent for longer than a third of it on a healthy machine, and a worker killed at any
    moment shows `dead` at most `stalled_after_s` after its last beat, so within its stall
    bound of its death. (Its jobs go back to the queue on the next sweep of a live worker,
    within a third of the bound more; its row is pruned after ten bounds.)"""

    worker_id: int
    label: str
    silent_s: float
    stalled_after_s: float = DEFAULT_STALLED_AFTER_S

    @property
    def dead(self) -> bool:
        return self.silent_s > self.stalled_after_s


# Procrastinate's own tables (pinned; their columns checked by tests/test_pinned_internals.py).
_JOBS_SQL = """
SELECT DISTINCT ON (j.lock) j.lock AS thread_id, j.id, j.task_name, j.status::text AS status,
       j.attempts, j.worker_id,
       w.name, w.host, w.pid, w.stalled_after_s,
       EXTRACT(EPOCH FROM clock_timestamp() - pw.last_heartbeat) AS silent_s
  FROM procrastinate_jobs j
  LEFT JOIN procrastinate_workers pw ON pw.id = j.worker_id
  LEFT JOIN muster_fleet_workers w ON w.worker_id = j.worker_id
 WHERE j.queue_name = %s AND j.lock IS NOT NULL
 ORDER BY j.lock, (j.status IN ('todo', 'doing')) DESC, j.id DESC
"""

_WORKERS_SQL = """
SELECT pw.id, w.name, w.host, w.pid, w.stalled_after_s,
       EXTRACT(EPOCH FROM clock_timestamp() - pw.last_heartbeat) AS silent_s
  FROM procrastinate_workers pw LEFT JOIN muster_fleet_workers w ON w.worker_id = pw.id
 ORDER BY pw.id
"""


def _bound(value: Any) -> float:
    return float(value) if value is not None else DEFAULT_STALLED_AFTER_S


def _label(name: Any, host: Any, pid: Any, worker_id: Any) -> str:
    if name is None:
        return f"worker {worker_id}"
    return f"{name} ({host} pid {pid})"


async def read_fleet(url: str) -> tuple[list[FleetWorker], dict[str, FleetJob]]:
    """The registered workers, and each thread's job (see `FleetJob`)."""
    conn = await psycopg.AsyncConnection.connect(url, autocommit=True, row_factory=dict_row)
    try:
        workers = [
            FleetWorker(
                worker_id=int(row["id"]),
                label=_label(row["name"], row["host"], row["pid"], row["id"]),
                silent_s=float(row["silent_s"] or 0.0),
                stalled_after_s=_bound(row["stalled_after_s"]),
            )
            for row in await (await conn.execute(_WORKERS_SQL)).fetchall()
        ]
        jobs = {}
        for row in await (await conn.execute(_JOBS_SQL, (QUEUE,))).fetchall():
            running = row["status"] == "doing" and row["worker_id"] is not None
            silent = float(row["silent_s"]) if row["silent_s"] is not None else None
            jobs[str(row["thread_id"])] = FleetJob(
                thread_id=str(row["thread_id"]),
                job_id=int(row["id"]),
                task=str(row["task_name"]),
                status=str(row["status"]),
                attempts=int(row["attempts"]),
                worker=_label(row["name"], row["host"], row["pid"], row["worker_id"])
                if running
                else None,
                silent_s=silent,
                worker_dead=silent is not None and silent > _bound(row["stalled_after_s"]),
            )
        return workers, jobs
    finally:
        await conn.close()


async def thread_on_fleet(url: str, thread_id: str) -> bool:
    """True if the fleet has ever had a job for `thread_id` (it was submitted, or resumed
    through the queue): such a thread's decisions go through the queue too."""
    conn = await connect(url)
    try:
        if not await _schema_present(conn):
            return False
        cursor = await conn.execute(
            "SELECT EXISTS (SELECT 1 FROM procrastinate_jobs WHERE queue_name = %s "
            "AND lock = %s) AS found",
            (QUEUE, thread_id),
        )
        row = await cursor.fetchone()
        return bool(row and row["found"])
    finally:
        await conn.close()
