"""The sweep every fleet worker runs for the others: the jobs of dead workers back in the queue,
its own heartbeat kept, and the jobs it dropped put back.

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

import datetime
from collections.abc import Callable, Collection

from procrastinate import App
from procrastinate.exceptions import ConnectorException, UniqueViolation
from procrastinate.jobs import Status

from graph.app.fleet_queue import QUEUE

PRUNE_AFTER_BOUNDS = 10
"""A silent worker's row is deleted after this many `stalled_after` (its jobs are retried
after one)."""

# Procrastinate's own tables (pinned; their columns checked by tests/test_pinned_internals.py).
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
