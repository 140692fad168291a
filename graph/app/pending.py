"""Which pending interrupt a decision answers, and with what: the one choice `muster approve`,
`clarify`, the fleet's queued decisions, `muster serve` and the lifecycle eval all make.

Its own module so that the decisions (graph/app/decisions.py) and the fleet
(graph/app/fleet.py), which both need it, import it from below instead of from each other.
"""

from __future__ import annotations

import inspect
from typing import Any

from langgraph.types import Interrupt, StateSnapshot

from checkpoints.threads import status_of
from workers.errors import MusterError


class NothingPendingError(MusterError):
    """The thread waits for no such answer (`muster serve` answers 409)."""


async def pending_answer(
    snapshot: StateSnapshot, kind: str, value: Any, *, thread: str, where: str
) -> tuple[Interrupt, Any]:
    """The thread's first pending `kind` interrupt and the resume value for it: `value`, or
    what `value(interrupt value)` returns (the approval checks). `where` ends the error for a
    thread with nothing pending, saying where to look."""
    pending = [
        i for i in snapshot.interrupts if isinstance(i.value, dict) and i.value.get("kind") == kind
    ]
    if not pending:
        raise NothingPendingError(
            f"thread {thread} has no pending {kind} ({status_of(snapshot)}); {where}"
        )
    resume = value(pending[0].value) if callable(value) else value
    if inspect.isawaitable(resume):
        resume = await resume
    return pending[0], resume
