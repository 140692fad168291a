"""A thread's progress as server-sent events (`GET /threads/{id}/events`).

The stream opens with a `status` event (the thread's status, what it waits on, whether this
server runs it) and sends another each time that changes; `progress` events carry the
CLI's progress lines of a run this server started (from the run's own streamed updates);
when the thread is done, an `answer` event carries the thread as `GET /threads/{id}` shows
it, and the stream ends. A run in another process (a terminal's `muster approve` on the
same store) is seen by reading the checkpoint again: at once after each event of a run
here, else every `POLL_S`. A comment line every `KEEPALIVE_S` of silence keeps proxies from
closing the stream.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from checkpoints.threads import status_of, thread_config, waiting_on
from graph.app.serve.runs import ThreadRuns
from graph.app.serve.views import thread_detail

POLL_S = 0.5
"""How often the checkpoint is read again when no run of this server tells first."""
KEEPALIVE_S = 15.0
"""A comment line after this much silence."""


def sse(event: str, data: dict[str, Any]) -> str:
    """One server-sent event: its name and a JSON payload on one `data:` line."""
    return f"event: {event}\ndata: {json.dumps(data, default=str)}\n\n"


async def thread_events(runs: ThreadRuns, thread_id: str) -> AsyncIterator[str]:
    """The thread's events, until it is done (or the client goes away)."""
    runtime = runs.runtime
    config = thread_config(thread_id)
    async with runs.subscribe(thread_id) as queue:
        last: tuple[Any, ...] | None = None
        quiet_since = time.monotonic()
        while True:
            snapshot = await runtime.graph.aget_state(config)
            status, waits, running = (
                status_of(snapshot),
                waiting_on(snapshot),
                runs.running(thread_id),
            )
            if (status, waits, running) != last:
                last = (status, waits, running)
                quiet_since = time.monotonic()
                yield sse(
                    "status",
                    {
                        "thread_id": thread_id,
                        "status": status,
                        "waiting_on": waits,
                        "running_here": running,
                    },
                )
            if status == "done" and not running:
                detail = await thread_detail(runtime, thread_id, running=False)
                yield sse("answer", detail)
                return
            try:
                event = await asyncio.wait_for(queue.get(), POLL_S)
            except TimeoutError:
                if time.monotonic() - quiet_since > KEEPALIVE_S:
                    quiet_since = time.monotonic()
                    yield ": keep-alive\n\n"
                continue
            if event.get("event") in ("progress", "failed"):
                quiet_since = time.monotonic()
                fields = {k: v for k, v in event.items() if k != "event"}
                yield sse(event["event"], {"thread_id": thread_id, **fields})
