"""`MusterWorker`: Procrastinate's `Worker` made to ride out a database blip and to take no job
while the kill switch is on."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
from procrastinate.exceptions import ConnectorException
from procrastinate.jobs import Job
from procrastinate.worker import Worker

from graph.app.fleet_retry import backoff_s, database_lost
from graph.kill_switch import Paused

PERSIST_ATTEMPTS = 40
"""How many times a job's outcome is written before the worker leaves it to the orphan
sweep (about 2 minutes)."""


logger = logging.getLogger("muster.fleet")


class MusterWorker(Worker):
    """Procrastinate's `Worker`, made to ride out a database blip (graph/app/fleet_worker.py's
    docstring): where Procrastinate's stops on the first error of a fetch, a heartbeat or its
    listener, and leaves a job "doing" when its outcome cannot be written, this one tries
    again.

    Built on Procrastinate's private `Worker` methods and state (`_fetch_and_process_jobs`,
    `_update_heartbeat`, `_persist_job_status`, `_start_side_tasks`, `_running_jobs`,
    `_stop_event`, `_new_job_event`, ...): pinned, checked by tests/test_pinned_internals.py."""

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
                self._say(f"database error fetching jobs ({error_line(error)}); trying again")
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
                logger.warning("heartbeat failed: %s", error_line(error))

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
                logger.warning("listener failed: %s", error_line(error))
                await asyncio.sleep(backoff_s(failures))
                failures += 1
                self._new_job_event.set()

    def _start_side_tasks(self) -> list[asyncio.Task[Any]]:
        # Procrastinate's side tasks, with the listener above (a copy, checked by
        # tests/test_pinned_internals.py).
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
                    self._say(f"job {job.id}: outcome not written ({error_line(error)})")
                    return
                if attempt == 0:
                    self._say(f"job {job.id}: its outcome could not be written; trying again")
                await asyncio.sleep(backoff_s(attempt))
        self._say(f"job {job.id}: outcome not written; the sweep puts it back in the queue")


def error_line(error: BaseException) -> str:
    """The error under Procrastinate's `ConnectorException` ("Database error."), one line."""
    inner = error.__cause__ or error
    text = " ".join(str(inner).split()).split(" CONTEXT: ")[0]  # not the SQL it was in
    return text[:200] or type(inner).__name__
