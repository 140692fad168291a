"""A thread's trace and checkpoints into a `Timeline` (graph/app/timeline.py).

It is built from the two records every thread already has, and records nothing new:

- the trace (`graph.trace`, one JSON line per node and per worker step): every model turn and
  tool call carries its outcome, its duration and the time it ended, so a bar runs from
  `ts - duration_ms` to `ts`; a dispatch's `node` event ends its lane with the report's
  status and reason; `recover` events say which packet was retried, reassigned, escalated
  or replaced by a cached fallback; `approve` and `act` events place the approval;
- the checkpoints: the reports (notes, findings), the recovery records (what replaced what),
  the approval records (who decided, and when), the pending interrupts, the answer, each
  superstep's checkpoint time, which is when the next supervisor node started, and the
  interrupts the history keeps, which say when the thread waited for a human
  (`timeline_waits`).

Every text it holds is redacted (workers/redaction.py: e-mails, phones, cards, the customer
names the thread's tool results give) unless `MUSTER_REDACT=off`, so the page and its picture
can be mailed.

It works the same for a thread still running (its open lanes end at the newest event), one
waiting for a human, a finished one and a batch ticket (a batch thread is an ordinary thread
with its own trace file). Without a trace file the lanes come from the checkpoints alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from langgraph.types import StateSnapshot

from checkpoints.threads import ThreadStatus, status_of
from graph.app.render import waiting_for
from graph.app.timeline import Event, Lane, Mark, Timeline, event_end
from graph.app.timeline_supervisor import SupervisorLane
from graph.app.timeline_waits import human_waits
from graph.app.timeline_workers import WorkerLanes
from graph.trace import read_trace, trace_path
from workers import redaction
from workers.contracts import Answer


def thread_timeline(
    thread_id: str, snapshot: StateSnapshot, history: Sequence[StateSnapshot]
) -> Timeline:
    """`build_timeline` on the thread's trace file (`MUSTER_TRACE_DIR`, graph/trace.py)."""
    path = trace_path(thread_id)
    return build_timeline(thread_id, snapshot, history, read_trace(path), trace_file=path)


def build_timeline(
    thread_id: str,
    snapshot: StateSnapshot,
    history: Sequence[StateSnapshot],
    events: Sequence[Event],
    *,
    trace_file: Path | None = None,
) -> Timeline:
    """The timeline of `thread_id` from its latest `snapshot`, its checkpoint `history` (any
    order) and its trace `events` (`graph.trace.read_trace`); `trace_file` names the trace in
    a note when it has no events."""
    values = snapshot.values
    status = status_of(snapshot)
    ordered = sorted(events, key=event_end)
    asks = {
        str(i.value.get("digest")): i.value
        for i in snapshot.interrupts
        if isinstance(i.value, dict) and i.value.get("kind") == "approval"
    }
    waits = human_waits(history, ordered, values)
    workers = WorkerLanes(ordered, values, status)
    workers.worker_lanes()
    supervisor = SupervisorLane(ordered, values, _checkpoint_times(history), asks, waits).build()
    workers.recoveries()
    workers.pending_packets()
    answer: Answer | None = values.get("answer")
    _ending(supervisor, workers.lanes, snapshot, answer, newest=workers.newest)
    notes = []
    if not ordered:
        where = f" ({trace_file})" if trace_file is not None else ""
        notes.append(
            f"no trace events found{where}: the lanes come from the checkpoints alone, without "
            "timings (set MUSTER_TRACE_DIR to where the run wrote its trace)"
        )
    timeline = Timeline(
        thread_id=thread_id,
        request=str(values.get("request") or ""),
        status=status,
        outcome=_outcome(status, answer, snapshot),
        answer_status=answer.status if answer is not None else None,
        degraded=bool(answer and answer.degraded),
        reasons=list(answer.degraded_reasons) if answer is not None else [],
        supervisor=supervisor,
        workers=sorted(workers.lanes, key=lambda lane: (lane.start is None, lane.start or 0.0)),
        links=workers.links,
        notes=notes,
        runs=len(workers.runs),
        waits=waits,
    )
    redactor = redaction.active()
    if redactor is None:
        return timeline
    # What the page shows is redacted (workers/redaction.py): the names come from the tool
    # results in the trace (opened by `read_trace`) and in the thread's findings.
    redactor.learn(ordered)
    redactor.learn(dict(values))
    redacted: Timeline = redactor.value(timeline)
    return redacted


def _checkpoint_times(history: Sequence[StateSnapshot]) -> dict[int, float]:
    """Superstep → when its checkpoint was written (epoch seconds)."""
    times: dict[int, float] = {}
    for state in history:
        step = (state.metadata or {}).get("step")
        if isinstance(step, int) and state.created_at:
            times[step] = datetime.fromisoformat(state.created_at).timestamp()
    return times


def _outcome(status: ThreadStatus, answer: Answer | None, snapshot: StateSnapshot) -> str:
    """The thread's state in one line, as the picture's last word."""
    if snapshot.interrupts:
        return "; ".join(waiting_for(i.value) for i in snapshot.interrupts)
    if status == "in progress":
        return "still running (or stopped before it finished: `muster resume` continues it)"
    if status == "failed":
        return "a step raised; `muster resume` retries it"
    if answer is None:
        return "no answer yet"
    degraded = " (degraded)" if answer.degraded else ""
    human = ", needs a human" if answer.needs_human else ""
    return f"answer: {answer.status}{degraded}{human}"


def _ending(
    supervisor: Lane,
    lanes: Sequence[Lane],
    snapshot: StateSnapshot,
    answer: Answer | None,
    *,
    newest: float,
) -> None:
    """What the thread waits for, or its answer, as the supervisor's last mark."""
    last = max([newest, *(lane.end or 0.0 for lane in lanes)])
    last = max(last, supervisor.end or 0.0)
    for interrupt in snapshot.interrupts:
        text = waiting_for(interrupt.value)
        supervisor.marks.append(Mark(last, "waiting", "waiting for a human", text))
    if answer is not None and not snapshot.interrupts:
        status = answer.status + (" (degraded)" if answer.degraded else "")
        reasons = "; ".join(answer.degraded_reasons)
        supervisor.marks.append(
            Mark(
                last,
                "answer",
                f"answer: {status}",
                f"answer: {status}" + (f": {reasons}" if reasons else ""),
                failed=answer.status != "complete",
            )
        )
    supervisor.spans.sort(key=lambda s: s.start)
    supervisor.marks.sort(key=lambda m: m.at)
