"""When a fleet job that failed goes back to the queue (`FleetRetry`), and how long a worker
waits before trying the database again (`backoff_s`)."""

from __future__ import annotations

import random

import psycopg
from langgraph.errors import GraphDrained
from procrastinate.jobs import Job
from procrastinate.retry import BaseRetryStrategy, RetryDecision

from checkpoints.lease import ThreadBusyError, ThreadLeaseLostError
from checkpoints.saver import CheckpointStoreError

BUSY_RETRY_S = 2
"""How soon a job whose thread is held elsewhere (`ThreadBusyError`) is tried again."""
BUSY_ATTEMPTS = 300
"""How many times a job retries a busy thread (about 10 minutes) before it fails."""
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
