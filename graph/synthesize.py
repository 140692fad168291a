"""`synthesize`: write the answer from the reports, and say honestly when it is degraded.

The answer is built from typed fields only. It is degraded whenever a fallback, a failure, a
run limit or an unverified claim went into it, and each of those becomes a line in
`degraded_reasons` and in the text, naming the specialist and what replaced it.
"""

from __future__ import annotations

import json
from typing import Any

from langgraph.runtime import Runtime

from graph.facts import SHARED_CALL_PREFIX
from graph.services import Services, services_for
from graph.state import (
    ESCALATION_WORKER,
    MusterState,
    current_reports,
    latest_actions,
    pending_packets,
)
from workers.contracts import ActionRecord, Answer, AnswerStatus, Finding, Report


def summarize_observation(finding: Finding, *, limit: int = 320) -> str:
    """A one-line summary of a tool observation (see `summarize_text`)."""
    return summarize_text(finding.observation, limit=limit)


def summarize_text(text: str, *, limit: int = 320) -> str:
    """A one-line summary of a tool result: scalar fields of a JSON object, result titles
    of a search, or the text itself."""
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        results = data.get("results")
        if isinstance(results, list) and results:
            items = [
                f'{r.get("id", "?")} "{r.get("title", "")}"'
                for r in results[:3]
                if isinstance(r, dict)
            ]
            summary = "; ".join(items)
        else:
            scalars = [
                f"{k}={v}" for k, v in data.items() if isinstance(v, str | int | float | bool)
            ]
            summary = ", ".join(scalars)
    else:
        summary = " ".join(text.split())
    return summary if len(summary) <= limit else summary[: limit - 1] + "…"


def _report_lines(report: Report, shown: set[str]) -> list[str]:
    """The answer's lines for one report; a shared fact (one call, given to several workers)
    is shown once, under the first report that carries it."""
    if report.fallback:
        return [f"- {report.worker} (FALLBACK): {report.note}"]
    if report.status == "failed":
        last_line = report.note.splitlines()[-1] if report.note else ""
        return [f"- {report.worker} FAILED ({report.reason}): {last_line}"]
    shared = [f for f in report.findings if f.call_id.startswith(SHARED_CALL_PREFIX)]
    own = [f for f in report.findings if f not in shared]
    lines = [
        f"- shared fact: {f.tool} → {summarize_observation(f)}"
        for f in shared
        if f.call_id not in shown
    ]
    shown.update(f.call_id for f in shared)
    if not own:  # nothing observed by this worker itself: its note is what it adds
        return lines + [f"- {report.worker}: {' '.join(report.note.split())[:600]}"]
    return lines + [f"- {report.worker}: {f.tool} → {summarize_observation(f)}" for f in own]


def _args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items())


def _action_line(action: ActionRecord) -> str:
    head = f"- {action.tool}({_args(action.args)}) proposed by {action.proposed_by}: "
    if action.status == "rejected":
        return (
            head + f"REJECTED by {action.decided_by}" + (f" ({action.note})" if action.note else "")
        )
    if action.status == "executed":
        return head + f"approved by {action.decided_by}, EXECUTED: {summarize_text(action.result)}"
    return head + f"approved by {action.decided_by}, {action.status.upper()}: {action.result[:200]}"


def _missing_tools(report: Report) -> str | None:
    """Tools of an ok report whose every call failed at the backend, if any."""
    backend_failures = ("tool_error", "timeout", "unavailable")
    failed = {c.tool for c in report.tool_calls if c.outcome in backend_failures}
    missing = sorted(failed - {f.tool for f in report.findings})
    if not missing:
        return None
    return f"{report.worker}: {', '.join(missing)} failed, so what it would have told us is missing"


def compose_answer(state: MusterState) -> Answer:
    """The answer for the current state (pure; `synthesize` wraps it)."""
    reports = current_reports(state.get("reports") or [])
    recoveries = state.get("recoveries") or []
    stop_reason = state.get("stop_reason")
    live_ok = [r for r in reports.values() if r.status == "ok" and not r.fallback]
    fallbacks = [r for r in reports.values() if r.fallback]
    failed = [r for r in reports.values() if r.status == "failed"]
    not_run = pending_packets(state)

    # A retry or a clarification that then succeeded changes nothing in the answer: the
    # packet's current report is live. Fallbacks, reassignments and escalations do.
    rerun = ("retry", "clarify")
    reasons: list[str] = [r.detail for r in recoveries if r.strategy not in rerun]
    recovered = {r.packet_id for r in recoveries if r.strategy not in rerun}
    reasons += [
        f"{r.worker} failed ({r.reason}) and nothing replaced it"
        for r in failed
        if r.packet_id not in recovered
    ]
    reasons += [f"{p.recipient} ({p.id}) never ran" for p in not_run if not stop_reason]
    # An ok report can still have lost a tool: say which facts are missing.
    gaps = [gap for report in live_ok if (gap := _missing_tools(report))]
    reasons += gaps
    if stop_reason:
        reasons.append(f"stopped early by the {stop_reason}")
    reasons += [f"unverified claim: {line}" for line in state.get("unverified") or []]
    reasons += [f"conflicting facts: {line}" for line in state.get("conflicts") or []]
    actions = list(latest_actions(state).values())
    reasons += [
        f"action {a.tool}({_args(a.args)}) was approved but {a.status}: {a.result[:200]}"
        for a in actions
        if a.status in ("refused", "failed", "approved")
    ]

    status: AnswerStatus
    if not live_ok and not fallbacks:
        status = "failed"
    elif failed or fallbacks or stop_reason or not_run or gaps:
        status = "partial"
    else:
        status = "complete"
    degraded = bool(reasons) or status != "complete"
    needs_human = any(a.status in ("refused", "failed", "approved") for a in actions) or (
        any(r.strategy == "escalate" for r in recoveries)
        or any(r.worker == ESCALATION_WORKER for r in reports.values())
        or status == "failed"
    )

    lines = [f"Request: {' '.join(state['request'].split())}", "", "What the specialists found:"]
    shown: set[str] = set()
    for report in reports.values():
        lines += _report_lines(report, shown)
    if actions:
        lines += ["", "Actions:"]
        lines += [_action_line(a) for a in actions]
    if recoveries:
        lines += ["", "Recovery:"]
        lines += [f"- {r.strategy}: {r.detail}" for r in recoveries]
    if degraded:
        lines += ["", "DEGRADED: " + "; ".join(reasons or [f"status is {status}"])]
    if needs_human:
        lines += ["", "NEEDS HUMAN: a person should review this ticket."]
    return Answer(
        text="\n".join(lines),
        status=status,
        degraded=degraded,
        degraded_reasons=reasons,
        needs_human=needs_human,
        stop_reason=stop_reason,
    )


async def synthesize(state: MusterState, runtime: Runtime[Services]) -> dict[str, Any]:
    """Write the answer."""
    answer = compose_answer(state)
    services = await services_for(runtime)
    services.trace_node(
        "synthesize",
        outcome=answer.status,
        degraded=answer.degraded,
    )
    return {"answer": answer}
