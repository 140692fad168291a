"""The human waits of a timeline: when the thread was paused for a clarification or an
approval, from the checkpoints' interrupts and the trace.

A checkpoint whose tasks hold interrupts is where the thread stopped for a human; LangGraph
keeps those interrupts in the history after the resume, so a finished thread still says
where it waited. The wait starts when the paused run's work stopped (its last event, or the
checkpoint if that came later) and ends when the human answered: the approval's decision
time (the checkpointed action record) if it is known, else the start of the first event of
the run that resumed it. A thread still waiting has no end yet: the picture's last mark
says what it waits for, so no wait is made for it.

Nothing in a wait is work, so the picture draws each as a break in the time axis
(`timeline_axis`), and the supervisor's lane never guesses a node's start across one
(`timeline_supervisor`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from langgraph.types import StateSnapshot

from graph.app.render import waiting_for
from graph.app.timeline import Event, Wait, event_end, event_start


def human_waits(
    history: Sequence[StateSnapshot], events: Sequence[Event], values: Mapping[str, Any]
) -> list[Wait]:
    """The waits for a human that ended, in time order, from the checkpoint `history` (any
    order), the trace `events` (in time order) and the thread's latest `values`."""
    decided = {
        str(a.digest): float(a.decided_at)
        for a in values.get("actions") or []
        if getattr(a, "decided_at", None)
    }
    waits: list[Wait] = []
    for state in history:
        asked = _interrupt_values(state)
        if not asked or not state.created_at:
            continue
        paused_at = datetime.fromisoformat(state.created_at).timestamp()
        resumed = _resuming_event(events, paused_at)
        if resumed is None:
            continue  # still waiting: the supervisor's last mark says for what
        end = event_start(resumed)
        decisions = [
            decided[str(v.get("digest"))]
            for v in asked
            if isinstance(v, dict) and str(v.get("digest")) in decided
        ]
        # A human's decision ends the wait; the run that carried it out started after.
        in_range = [t for t in decisions if paused_at <= t <= end]
        if in_range:
            end = max(in_range)
        # The paused run's last word: what it wrote before the resume, up to the answer.
        upto = next(i for i, e in enumerate(events) if e is resumed)
        before = [event_end(e) for e in events[:upto] if event_end(e) <= end]
        start = min(max([paused_at, *before[-1:]]), end)
        kinds = sorted({str(v.get("kind")) for v in asked if isinstance(v, dict)})
        waits.append(
            Wait(
                start=start,
                end=end,
                kind="/".join(kinds) or "human",
                detail="; ".join(waiting_for(v) for v in asked),
            )
        )
    waits.sort(key=lambda w: w.start)
    return waits


def _interrupt_values(state: StateSnapshot) -> list[Any]:
    """What the checkpoint's interrupts asked (those of its tasks, which stay after a resume)."""
    values = [i.value for task in state.tasks for i in task.interrupts]
    return values or [i.value for i in getattr(state, "interrupts", ()) or ()]


def _resuming_event(events: Sequence[Event], paused_at: float) -> Event | None:
    """The first event after `paused_at` of a run other than the one that paused there."""
    earlier = [e for e in events if event_end(e) <= paused_at]
    paused_run = (earlier[-1] if earlier else events[0]).get("run_id") if events else None
    return next(
        (e for e in events if event_end(e) > paused_at and e.get("run_id") != paused_run), None
    )
