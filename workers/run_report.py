"""How a worker run ends: the failure reason its calls imply, and the `Report` it returns."""

from __future__ import annotations

import time

from workers.contracts import FailureReason, Handoff, ProposedAction, Report
from workers.hub import COUNTED_FAILURES, CallOutcome
from workers.proposals import review_proposals
from workers.tool_belt import RunEnd
from workers.worker_run import WorkerRun

_MODEL_MISTAKES = (CallOutcome.UNKNOWN_TOOL, CallOutcome.NOT_ALLOWED)


def failure_reason(outcomes: list[CallOutcome]) -> FailureReason:
    """The reason when no call gave a usable result: the most specific failure. A model that
    only called tools it was not given, or only with arguments their schemas refuse, made a
    mistake of its own (`unknown_tool`, `bad_arguments`): no backend is to blame."""
    if outcomes and all(o is CallOutcome.UNAVAILABLE for o in outcomes):
        return "unavailable"
    if outcomes and all(o in (CallOutcome.TIMEOUT, CallOutcome.UNAVAILABLE) for o in outcomes):
        return "timeout"
    if outcomes and all(o in _MODEL_MISTAKES for o in outcomes):
        return "unknown_tool"
    if outcomes and all(o in (*_MODEL_MISTAKES, CallOutcome.BAD_ARGUMENTS) for o in outcomes):
        return "bad_arguments"
    return "tool_error"


def out_of_budget(run: WorkerRun) -> RunEnd:
    """Steps ran out. If some tool never answered (each of its calls a tool error, a timeout
    or an unavailable server), the steps went on asking a failing backend: that backend is
    the cause, and the reason says so (`tool_error`, `timeout`, `unavailable`), so recovery
    does not retry it with more steps (one retry layer: graph/retries.py). Only a run whose
    tools all answered at some point reports `budget`, which recovery may retry bigger."""
    per_tool: dict[str, list[CallOutcome]] = {}
    for record in run.tool_calls:
        per_tool.setdefault(record.tool, []).append(CallOutcome(record.outcome))
    failing = [
        outcome
        for outcomes in per_tool.values()
        if all(o in COUNTED_FAILURES for o in outcomes)
        for outcome in outcomes
    ]
    return RunEnd(
        failure_reason(failing) if failing else "budget",
        f"stopped after {run.steps} of {run.packet.max_steps} steps without an answer",
    )


CONCLUSION_PREFIX = "Conclusion: "
"""How a final message marks its conclusion; a message without one is all conclusion."""


def conclusion_of(text: str) -> str:
    """The worker's conclusion from its final message: the `Conclusion:` line if it wrote
    one (the offline model does, after the evidence), else the whole message."""
    for line in reversed(text.splitlines()):
        if line.startswith(CONCLUSION_PREFIX):
            return line[len(CONCLUSION_PREFIX) :].strip()
    return " ".join(text.split())


def report_for(run: WorkerRun, end: RunEnd) -> Report:
    """The run's `Report`. Proposals are reviewed only for a success, against the run's
    findings; refused ones are listed in the note so a human sees what was asked."""
    packet, note = run.packet, end.note
    accepted: list[ProposedAction] = []
    if end.reason is None:
        accepted, rejected = review_proposals(
            run.proposals, packet, run.findings, run.spec.proposes
        )
        if rejected:
            note += "\nRejected proposals: " + "; ".join(rejected)
    return Report(
        packet_id=packet.id,
        worker=packet.recipient,
        objective=packet.objective,
        status="ok" if end.reason is None else "failed",
        reason=end.reason,
        findings=run.findings,
        tool_calls=run.tool_calls,
        note=note,
        conclusion=conclusion_of(end.note) if end.reason is None else "",
        model=run.answered_by,
        fallback_for=run.model if run.answered_by and run.answered_by != run.model else "",
        steps_used=run.steps,
        tokens=run.tokens,
        cost_usd=round(run.cost_usd, 8),
        unpriced_calls=run.unpriced_calls,
        duration_ms=round((time.monotonic() - run.started) * 1000, 1),
        attempt=packet.attempt,
        proposed_actions=accepted,
    )


def report_without_tools(packet: Handoff, end: RunEnd) -> Report:
    """The report when no granted tool is available: the run never started, so it carries
    no findings, steps, tokens or time."""
    return Report(
        packet_id=packet.id,
        worker=packet.recipient,
        objective=packet.objective,
        status="failed",
        reason=end.reason,
        note=end.note,
        attempt=packet.attempt,
    )
