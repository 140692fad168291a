"""The server's runs: each thread it starts or resumes runs as a background task of its own.

A task takes the thread's lease (checkpoints/lease.py) first and holds it until its run is
saved, as a `muster` command does: what it checks before running (the thread is new, or
waits for this answer, and the answer's checks) is read under the lease, so two decisions
on one thread, from two browsers or a browser and a terminal, run once; the second is told
the thread is busy. The request that starts a run waits only for those checks
(`ThreadRuns.start` returns what they accepted, or raises what refused it); the run goes on
after the response. Progress is published to the thread's subscribers (`subscribe`) from
the run's own streamed updates (`stream_run`'s `on_update`). On shutdown every run is asked
to drain (the work in flight finishes and is checkpointed, `muster resume` continues it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from langgraph.errors import GraphDrained
from langgraph.runtime import RunControl
from langgraph.types import Command

from graph.app.render import describe_report, waiting_for
from graph.app.runtime import MusterRuntime, stream_run
from graph.app.serve.front import FleetFront
from graph.app.serve.thread_index import ThreadIndex

log = logging.getLogger("muster.serve")

Payload = dict[str, Any] | Command | None
"""What a run starts from: a new thread's input, an answer, or None (continue)."""
Prepare = Callable[[], Awaitable[tuple[Payload, Any]]]
"""The checks a run makes under its lease: the payload to run, and what to tell the caller."""


class ThreadRuns:
    """The runs in flight in this server, and the subscribers to each thread's progress."""

    def __init__(self, runtime: MusterRuntime, fleet: FleetFront | None = None) -> None:
        self.runtime = runtime
        self.fleet = fleet
        """The fleet's queue when the server is in front of the fleet: then nothing runs
        here, every write queues a job for `muster worker` (graph/app/serve/front.py)."""
        self.index = ThreadIndex(runtime)
        """The store's threads, for the lists (kept current from the store itself)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._controls: dict[str, RunControl] = {}
        """thread → the control of its run in flight (accepted and running here)."""
        self._subscribers: dict[str, set[asyncio.Queue[dict[str, Any]]]] = {}

    def running(self, thread_id: str) -> bool:
        """This server runs `thread_id` now."""
        return thread_id in self._controls

    async def start(self, thread_id: str, prepare: Prepare, *, must_exist: bool) -> Any:
        """Run `thread_id` in the background: take its lease, make `prepare`'s checks, and
        return what they accepted once they have, while the run goes on; an error of the
        lease or the checks is raised here, and nothing runs. `must_exist`: the thread is
        not new (see `CheckpointStore.hold_thread`)."""
        accepted: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(
            self._run(thread_id, prepare, accepted, must_exist=must_exist),
            name=f"serve-run-{thread_id}",
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        # Shielded: a client that goes away after asking must not cancel what was accepted.
        return await asyncio.shield(accepted)

    async def _run(
        self,
        thread_id: str,
        prepare: Prepare,
        accepted: asyncio.Future[Any],
        *,
        must_exist: bool,
    ) -> None:
        control = RunControl()
        try:
            async with self.runtime.store.hold_thread(thread_id, must_exist=must_exist):
                payload, told = await prepare()
                self._controls[thread_id] = control
                accepted.set_result(told)
                self.publish(thread_id, {"event": "started"})
                await stream_run(
                    self.runtime,
                    thread_id,
                    payload,
                    on_update=lambda node, update: self._progress(thread_id, node, update),
                    control=control,
                )
        except GraphDrained as drained:
            log.info("thread %s stopped cleanly (%s); state is saved", thread_id, drained.reason)
        except BaseException as error:
            if not accepted.done():  # refused before anything ran: the caller's to tell
                if isinstance(error, asyncio.CancelledError):
                    accepted.cancel()
                else:
                    accepted.set_exception(error)
            elif isinstance(error, Exception):
                log.exception("thread %s: the run failed", thread_id)
                self.publish(thread_id, {"event": "failed", "error": str(error)})
            if not isinstance(error, Exception):
                raise
        finally:
            if self._controls.get(thread_id) is control:
                del self._controls[thread_id]
            self.publish(thread_id, {"event": "ended"})

    def _progress(self, thread_id: str, node: str, update: dict[str, Any]) -> None:
        """One node's update, told as the CLI's progress lines tell it."""
        lines: list[str] = []
        if node == "plan":
            lines.append(f"plan: {len(update.get('packets') or [])} packet(s)")
        elif node in ("dispatch", "__error_handler__dispatch"):
            lines += [describe_report(report) for report in update.get("reports") or []]
        elif node == "__interrupt__":
            for interrupt in update.get("value") or update.get("__interrupt__") or ():
                lines.append(f"paused: {waiting_for(getattr(interrupt, 'value', interrupt))}")
        self.publish(thread_id, {"event": "progress", "node": node, "lines": lines})

    def publish(self, thread_id: str, event: dict[str, Any]) -> None:
        """Tell every subscriber of `thread_id` (it never blocks: the queues are unbounded,
        and a subscriber drains its own)."""
        for queue in self._subscribers.get(thread_id, ()):
            queue.put_nowait(event)

    @contextlib.asynccontextmanager
    async def subscribe(self, thread_id: str) -> AsyncIterator[asyncio.Queue[dict[str, Any]]]:
        """A queue of `thread_id`'s events from this server's runs, for the block."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._subscribers.setdefault(thread_id, set()).add(queue)
        try:
            yield queue
        finally:
            subscribers = self._subscribers.get(thread_id, set())
            subscribers.discard(queue)
            if not subscribers:
                self._subscribers.pop(thread_id, None)

    async def drain(self) -> None:
        """Ask every run in flight to stop cleanly, and wait for them to."""
        for control in list(self._controls.values()):
            control.request_drain("shutdown")
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
