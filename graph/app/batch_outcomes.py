"""Where each ticket of a batch stands, read from its thread.

Outcomes (each ticket counts in exactly one):
  needs_human  the thread waits on an approval or a clarification, or the answer needs a person
  failed       no answer (the run raised), or the answer's status is failed
  partial      the answer is partial or degraded
  complete     everything else
A ticket whose thread has not finished (a drain stopped it) is `unfinished`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from langgraph.types import StateSnapshot

from checkpoints.threads import ThreadStatus, status_of, thread_config, waiting_on
from graph.app.batch_tickets import Ticket, batch_thread_id
from graph.app.render import pending_approvals, pending_questions
from graph.app.runtime import Graph
from graph.supervisor_spend import thread_cost
from workers.contracts import Answer, Report

Outcome = Literal["complete", "partial", "needs_human", "failed", "unfinished"]
OUTCOMES: tuple[Outcome, ...] = ("complete", "partial", "needs_human", "failed")
"""The finished outcomes, in the order the progress line and summary show them."""


@dataclass
class TicketResult:
    """Where one ticket stands, read from its thread (one line of the answers file)."""

    ticket: Ticket
    thread_id: str
    thread_status: ThreadStatus
    outcome: Outcome
    answer: Answer | None
    waiting_for: list[str]
    failures: list[tuple[str, str]] = field(default_factory=list)
    """(worker, reason) of every failed report in the thread, retries included."""
    error: str | None = None
    """Why the run raised, if it did (the thread is then `failed` or unfinished)."""
    pending_approvals: list[dict[str, Any]] = field(default_factory=list)
    """The actions waiting for a decision, each with the digest to approve."""
    pending_questions: list[dict[str, Any]] = field(default_factory=list)
    """The clarifying questions waiting for an answer."""
    cost_usd: float = 0.0
    """What the ticket's priced model calls cost so far (workers/cost.py), in US dollars."""
    unpriced_calls: int = 0
    """Its model calls the price table does not know (not priced, never counted as free)."""

    def record(self) -> dict[str, Any]:
        """The JSON object written to the answers file."""
        answer = self.answer
        if answer is not None:
            status: str = answer.status
        elif self.waiting_for:
            status = "waiting"
        elif self.outcome == "unfinished":
            status = "unfinished"
        else:
            status = "failed"
        return {
            "id": self.ticket.id,
            "thread_id": self.thread_id,
            "status": status,
            "outcome": self.outcome,
            "degraded": answer.degraded if answer is not None else self.outcome == "failed",
            "needs_human": self.outcome == "needs_human"
            or (answer is not None and answer.needs_human),
            "waiting_for": self.waiting_for,
            "pending_approvals": self.pending_approvals,
            "pending_questions": self.pending_questions,
            "answer_text": answer.text if answer is not None else None,
            "cost_usd": round(self.cost_usd, 6),
            "unpriced_calls": self.unpriced_calls,
            "error": self.error,
        }


def outcome_of(status: ThreadStatus, answer: Answer | None) -> Outcome:
    """The one bucket a ticket counts in (see the module docstring)."""
    if status == "interrupted":
        return "needs_human"
    if answer is not None and status == "done":
        if answer.status == "failed":
            return "failed"
        if answer.needs_human:
            return "needs_human"
        if answer.status == "partial" or answer.degraded:
            return "partial"
        return "complete"
    if status == "failed":
        return "failed"
    return "unfinished"


def result_from_snapshot(
    ticket: Ticket, thread_id: str, snapshot: StateSnapshot | None, error: str | None = None
) -> TicketResult:
    """A ticket's result from its latest snapshot (None: the thread does not exist)."""
    if snapshot is None or not snapshot.values and not snapshot.next and not snapshot.tasks:
        status: ThreadStatus = "new"
        values: dict[str, Any] = {}
    else:
        status = status_of(snapshot)
        values = dict(snapshot.values)
    answer = values.get("answer")
    reports: list[Report] = values.get("reports") or []
    task_errors = [str(t.error) for t in (snapshot.tasks if snapshot else ()) if t.error]
    if error is None and task_errors:
        error = task_errors[0]
    outcome = outcome_of(status, answer)
    interrupts = [i.value for i in snapshot.interrupts] if snapshot is not None else []
    if outcome == "unfinished" and error is not None:
        outcome = "failed"  # the run raised before its first checkpoint
    return TicketResult(
        ticket=ticket,
        thread_id=thread_id,
        thread_status=status,
        outcome=outcome,
        answer=answer,
        waiting_for=waiting_on(snapshot) if snapshot is not None else [],
        failures=[(r.worker, r.reason or "unknown") for r in reports if r.status == "failed"],
        error=error,
        pending_approvals=pending_approvals(values, thread_id) if interrupts else [],
        pending_questions=pending_questions(interrupts),
        cost_usd=thread_cost(values)[0],
        unpriced_calls=thread_cost(values)[1],
    )


async def read_result(
    graph: Graph, path: Path, ticket: Ticket, error: str | None = None
) -> TicketResult:
    """A ticket's result, read from its thread in `graph`'s store."""
    thread_id = batch_thread_id(path, ticket.id)
    snapshot = await graph.aget_state(thread_config(thread_id))
    return result_from_snapshot(ticket, thread_id, snapshot, error)
