"""`muster serve` in front of the fleet: the API's writes go to the fleet's queue.

Started with `MUSTER_SERVE_FLEET=1` on a PostgreSQL store, the server runs no graph itself:
a submitted ticket is queued as `muster submit` queues it (`muster:run_ticket`), a follow-up
message as `muster:follow_up`, a decision as `muster approve` queues one for a fleet thread
(`muster:resume_thread`), a cancellation is written and its thread queued to finish; a
`muster worker` takes each job. Each write answers 202 with the thread id and the job id
(`queued_on_fleet`). Without the setting, the server runs threads in its own process, and
only a decision on a thread the fleet has run goes through the queue.

Procrastinate (and its pool) is loaded only when the setting is on.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from checkpoints.store import is_postgres_url, store_location
from workers.errors import ConfigError

FLEET_ENV = "MUSTER_SERVE_FLEET"
"""Set to 1 (true, yes, on), `muster serve` queues every run for the fleet's workers."""

_ON = frozenset({"1", "true", "yes", "on"})
_OFF = frozenset({"", "0", "false", "no", "off"})

log = logging.getLogger("muster.serve")


def fleet_setting() -> bool:
    """Whether `MUSTER_SERVE_FLEET` puts the server in front of the fleet."""
    value = os.environ.get(FLEET_ENV, "").strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    raise ConfigError(f"{FLEET_ENV}={value!r}: give 1 (in front of the fleet) or 0")


def fleet_url(db: Any) -> str:
    """The store's PostgreSQL URL, or a `ConfigError`: the fleet's queue lives there."""
    location = store_location(db)
    if not is_postgres_url(location):
        raise ConfigError(
            f"{FLEET_ENV}: the fleet needs a PostgreSQL store, not the SQLite file {location}; "
            "give --db postgresql://... (or MUSTER_DB), or unset it to run tickets in this "
            "process"
        )
    return str(location)


@dataclass
class FleetFront:
    """The fleet's queue, open for the server's lifetime."""

    url: str
    app: Any
    """The Procrastinate app (graph/app/fleet_queue.py) the jobs are deferred on."""

    async def queued(self, thread_id: str) -> bool:
        """The fleet has (or had) a job for `thread_id`: it may not be in the store yet."""
        from graph.app.fleet_queue import thread_on_fleet

        return await thread_on_fleet(self.url, thread_id)


@asynccontextmanager
async def open_front(url: str) -> AsyncIterator[FleetFront]:
    """The fleet's queue on `url` (its schema set up if this is its first use)."""
    from graph.app.fleet_queue import open_fleet  # Procrastinate, only in front of the fleet

    async with open_fleet(url) as app:
        log.info("in front of the fleet: every run is queued for `muster worker`")
        yield FleetFront(url=url, app=app)
