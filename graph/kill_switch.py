"""A kill switch for side effects: `muster pause` stops every process sharing a store from
executing any approved action until `muster resume-all`.

The switch is a row in the store's own audit log (thread `*kill-switch*`, events `pause` and
`unpause`), so every process on that store (a CLI, a fleet worker, Studio's server) reads the
same flag before each side effect, in SQLite as in PostgreSQL, and the log keeps who flipped
it, when and why. While paused, `act` executes nothing: the thread waits at an interrupt
(kind `paused`) with its approved actions intact, and `muster resume THREAD` after
`resume-all` continues it (`act` reads the switch again first).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from checkpoints.audit import AuditLog

SWITCH_THREAD = "*kill-switch*"
"""The audit log's thread id for the switch's rows (no real thread id has a '*')."""
PAUSE, UNPAUSE = "pause", "unpause"


@dataclass(frozen=True)
class Paused:
    """Side effects are paused: by whom, since when, why."""

    by: str
    since: float
    reason: str

    def line(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(self.since))
        why = f": {self.reason}" if self.reason else ""
        return f"side effects are paused by {self.by} since {when}{why}"


async def paused(audit: AuditLog | None) -> Paused | None:
    """The switch's state in the store behind `audit` (None: not paused, or no audit log)."""
    if audit is None:
        return None
    rows = [r for r in await audit.rows(SWITCH_THREAD) if r.event in (PAUSE, UNPAUSE)]
    if not rows or rows[-1].event != PAUSE:
        return None
    last = rows[-1]
    return Paused(by=last.actor, since=last.at, reason=last.result)


async def flip(audit: AuditLog, *, pause: bool, by: str, reason: str) -> None:
    """Pause (or unpause) side effects for every process on the store."""
    await audit.record(
        thread_id=SWITCH_THREAD,
        event=PAUSE if pause else UNPAUSE,
        actor=by,
        digest="",
        result=reason,
    )
