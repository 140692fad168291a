"""The steps `recover` chooses among: retry, cached fallback, reassign, escalate, clarify."""

from __future__ import annotations

from typing import Any

from graph.domains import pack_of
from graph.fallbacks import FALLBACKS
from graph.state import ESCALATION_WORKER, MusterState, unrecovered_failures
from workers.contracts import (
    FailureReason,
    Finding,
    Handoff,
    RecoveryRecord,
    Report,
    Strategy,
)
from workers.hub import COUNTED_FAILURES
from workers.roster import Roster


def step_record(
    report: Report, strategy: Strategy, detail: str, reason: FailureReason | None = None
) -> RecoveryRecord:
    """The record of one recovery step taken for `report`."""
    return RecoveryRecord(
        packet_id=report.packet_id,
        worker=report.worker,
        attempt=report.attempt,
        reason=reason or report.reason or "tool_error",
        strategy=strategy,
        detail=detail,
    )


def retry_step(report: Report, packet: Handoff) -> tuple[RecoveryRecord, Handoff]:
    budget = packet.max_steps * 2 if report.reason == "budget" else packet.max_steps
    retry = packet.model_copy(update={"attempt": packet.attempt + 1, "max_steps": budget})
    record = step_record(
        report,
        "retry",
        reason=report.reason or "budget",
        detail=(
            f"retried {report.worker} once with double the budget ({retry.max_steps} steps)"
            if report.reason == "budget"
            else f"retried {report.worker} once after it {report.reason}"
        ),
    )
    return record, retry


MODEL_FAILURES = (
    "model_timeout",
    "model_refused",
    "provider_auth",
    "provider_quota",
    "unknown_model",
    "provider_unreachable",
)
"""A failed model call (`workers.model_errors`): a cached fallback costs no model, but every
other worker would call the same model, so these are never reassigned."""
FALLBACK_REASONS = (
    "budget",
    "tool_error",
    "unavailable",
    "crashed",
    "timeout",
    "no_tool_call",
    "unknown_tool",
    "bad_arguments",
    *MODEL_FAILURES,
)
"""Failures a cached fallback may stand in for (the table in `graph/recover.py`)."""


def fallbacks_due(state: MusterState) -> list[Report]:
    """Unrecovered failures a cached fallback can replace (it has an entry for the packet)."""
    by_key = {(p.id, p.attempt): p for p in state.get("packets") or []}
    due = []
    for report in unrecovered_failures(state):
        packet = by_key.get((report.packet_id, report.attempt))
        snapshot = FALLBACKS.get(report.worker)
        if packet is None or snapshot is None or report.reason not in FALLBACK_REASONS:
            continue
        if snapshot.lookup(packet.inputs) is not None:
            due.append(report)
    return due


def fallback_step(
    report: Report, packet: Handoff, why: str
) -> tuple[RecoveryRecord, Report] | None:
    snapshot = FALLBACKS.get(report.worker)
    text = snapshot.lookup(packet.inputs) if snapshot else None
    if snapshot is None or text is None:
        return None
    substitute = Report(
        packet_id=report.packet_id,
        worker=report.worker,
        objective=report.objective,
        status="ok",
        fallback=True,
        attempt=report.attempt,
        findings=[
            Finding(
                id="F1",
                tool=f"cache.{report.worker}",
                call_id="fallback",
                args=dict(packet.inputs),
                observation=text,
                source="fallback",
            )
        ],
        note=f"FALLBACK: {snapshot.name} taken on {snapshot.taken_on}: {text}",
    )
    record = step_record(
        report,
        "fallback",
        detail=f"{report.worker} failed ({why}); replaced by the {snapshot.name} "
        f"taken on {snapshot.taken_on}",
    )
    return record, substitute


def _server(entry: str) -> str:
    """The server of a qualified tool name or allowlist entry (`policy.check_policy`,
    `policy.`): its first segment."""
    return entry.split(".", 1)[0]


def failed_servers(report: Report, packet: Handoff) -> set[str]:
    """The servers `report` failed on, from its typed fields: those of its tool calls that
    ended tool_error, timeout or unavailable and never ok; for a run that made no call and
    failed `unavailable` or `timeout` (skipped on an open circuit, a server down before its
    first turn), every server its packet allowed."""
    outcomes: dict[str, set[str]] = {}
    for call in report.tool_calls:
        outcomes.setdefault(_server(call.tool), set()).add(call.outcome)
    failed = {s for s, seen in outcomes.items() if seen and seen <= COUNTED_FAILURES}
    if not report.tool_calls and report.reason in ("unavailable", "timeout"):
        failed |= {_server(entry) for entry in packet.tool_allow}
    return failed


def reassign_step(
    report: Report,
    packet: Handoff,
    roster: Roster,
    why: str,
    tried: set[str],
    avoid: set[str],
) -> tuple[RecoveryRecord, Handoff] | None:
    """A packet for another worker with the failed one's capability, one that has not failed
    this planned packet yet (`tried`) and reaches none of the servers it failed on (`avoid`:
    a stand-in on the same failing server would be a retry of that server, and retries
    happen at one layer, graph/retries.py), or None."""
    failed = roster.get(report.worker)
    if failed is None or not failed.capabilities:
        return None
    capability = failed.capabilities[0]
    for spec in roster.workers.values():
        if (
            spec.name in (report.worker, ESCALATION_WORKER)
            or spec.name in tried
            or capability not in spec.capabilities
            or {_server(entry) for entry in spec.privileges} & avoid
        ):
            continue
        inputs = {**packet.inputs, "query": " ".join(packet.inputs.values())}
        stand_in = Handoff(
            id=f"{packet.id}-via-{spec.name}",
            recipient=spec.name,
            objective=packet.objective,
            inputs=inputs,
            tool_allow=spec.privileges,
            max_steps=spec.max_steps,
            timeout_s=packet.timeout_s,
        )
        record = step_record(
            report,
            "reassign",
            detail=f"{report.worker} failed ({why}); reassigned to {spec.name} "
            f"(packet {stand_in.id})",
        )
        return record, stand_in
    return None


def escalation_packet(report: Report, packet: Handoff, roster: Roster) -> Handoff | None:
    """A hand-off packet for the escalation worker describing a failure, if one exists."""
    spec = roster.get(ESCALATION_WORKER)
    if spec is None or report.worker == ESCALATION_WORKER:
        return None
    return Handoff(
        id=f"{packet.id}-escalated",
        recipient=ESCALATION_WORKER,
        objective=f"Write a hand-off so a human can finish: {packet.objective}",
        inputs={
            **packet.inputs,
            "failed_worker": report.worker,
            "failure": f"{report.reason}: {report.note[:300]}",
            # A warm hand-off: what was already tried and found, so nobody starts over.
            "tried": "; ".join(
                f"{c.tool}({', '.join(f'{k}={v}' for k, v in c.args.items())}) -> {c.outcome}"
                for c in report.tool_calls
            )[:600]
            or "nothing",
            "found": "; ".join(f"{f.tool}: {f.observation[:160]}" for f in report.findings)[:600]
            or "nothing",
        },
        tool_allow=(),
        max_steps=spec.max_steps,
        timeout_s=packet.timeout_s,
    )


def clarified(packet: Handoff, answer: Any, *, roster: Roster) -> Handoff:
    """The packet again, with the human's answer and the facts read from it in its inputs:
    the first subject id the roster's pack reads in a text answer fills its subject input
    (support: an order id, `order_id`)."""
    inputs = dict(packet.inputs)
    if isinstance(answer, dict):
        inputs.update({str(k): str(v) for k, v in answer.items()})
    else:
        text = str(answer)
        inputs["clarification"] = text
        pack = pack_of(roster)
        key = pack.subject_input
        subject_ids = pack.subject_ids(text) if key is not None else ()
        if key is not None and subject_ids:
            inputs[key] = subject_ids[0]
    return packet.model_copy(update={"inputs": inputs, "attempt": packet.attempt + 1})
