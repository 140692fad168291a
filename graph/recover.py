"""Recovery: the barrier's routing and the `recover` node. Plain code over typed fields.

`route_after_collect` releases the next wave of ready packets, sends unrecovered failures to
`recover`, and otherwise finishes. `recover` chooses a strategy from each failure's reason:

| reason                              | strategy                                              |
|-------------------------------------|-------------------------------------------------------|
| budget                              | retry once with double the budget, then as below      |
| crashed (the worker raised)         | retry once (re-runs only that branch), then as below  |
| tool_error, unavailable, crashed    | cached fallback, else reassign, else escalate         |
| timeout                             | cached fallback, else escalate                        |
| refused, loop                       | escalate with a hand-off summary                      |
| ambiguous                           | ask the human (`interrupt()`), then re-dispatch       |

Every step is a `RecoveryRecord` in state; the answer lists them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Send

from graph.fallbacks import FALLBACKS
from graph.plan import find_order_ids
from graph.services import Services, passed_services
from graph.state import MusterState
from workers.contracts import (
    FailureReason,
    Finding,
    Handoff,
    RecoveryRecord,
    Report,
    Strategy,
)
from workers.roster import Roster

ESCALATION_WORKER = "escalation"
"""The worker that writes hand-off summaries for humans."""


def current_reports(reports: Sequence[Report]) -> dict[str, Report]:
    """The latest report per packet id: a retry or fallback supersedes what it replaced."""
    latest: dict[str, Report] = {}
    for report in reports:
        latest[report.packet_id] = report
    return latest


def unrecovered_failures(state: MusterState) -> list[Report]:
    """Current failed reports that no recovery step has handled yet."""
    handled = {(r.packet_id, r.attempt) for r in state.get("recoveries") or []}
    return [
        report
        for report in current_reports(state.get("reports") or []).values()
        if report.status == "failed" and (report.packet_id, report.attempt) not in handled
    ]


def pending_packets(state: MusterState) -> list[Handoff]:
    """Packets (or retries) not yet reported on."""
    done = {(r.packet_id, r.attempt) for r in state.get("reports") or []}
    return [p for p in state.get("packets") or [] if (p.id, p.attempt) not in done]


def satisfying_report(dependency: str, current: dict[str, Report]) -> Report | None:
    """The ok report that satisfies a dependency: the packet's own, or that of the worker it
    was reassigned to (`<id>-via-<worker>`)."""
    own = current.get(dependency)
    if own is not None and own.status == "ok":
        return own
    for packet_id, report in current.items():
        if packet_id.startswith(f"{dependency}-via-") and report.status == "ok":
            return report
    return None


def ready_packets(state: MusterState) -> list[Handoff]:
    """Pending packets whose prerequisites all have a usable (ok) report."""
    current = current_reports(state.get("reports") or [])
    return [
        packet
        for packet in pending_packets(state)
        if all(satisfying_report(d, current) is not None for d in packet.depends_on)
    ]


def with_dependency_findings(packet: Handoff, state: MusterState) -> Handoff:
    """A dependent packet receives its prerequisites' findings in its inputs."""
    if not packet.depends_on:
        return packet
    current = current_reports(state.get("reports") or [])
    inputs = dict(packet.inputs)
    for dependency in packet.depends_on:
        report = satisfying_report(dependency, current)
        if report is None:
            continue
        for finding in report.findings:
            inputs[f"{dependency}.{finding.id}"] = f"{finding.tool}: {finding.observation[:2000]}"
    return packet.model_copy(update={"inputs": inputs})


def route_after_collect(
    state: MusterState, runtime: Runtime[Services]
) -> list[Send] | Literal["recover", "verify"]:
    """The `needs_recovery` edge: next wave, recovery, or on to verification.

    Each packet's `Send` timeout is its own limit, shortened to the run's deadline, so work in
    flight is cancelled when the deadline passes."""
    if state.get("stop_reason"):
        return "verify"
    ready = ready_packets(state)
    if ready:
        services = passed_services(runtime)
        remaining = services.limits.remaining_s() if services is not None else None
        return [
            Send(
                "dispatch",
                with_dependency_findings(p, state),
                timeout=p.timeout_s
                if remaining is None
                else max(0.05, min(p.timeout_s, remaining)),
            )
            for p in ready
        ]
    if unrecovered_failures(state):
        return "recover"
    return "verify"


def _record(
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


def _retry(report: Report, packet: Handoff) -> tuple[RecoveryRecord, Handoff]:
    budget = packet.max_steps * 2 if report.reason == "budget" else packet.max_steps
    retry = packet.model_copy(update={"attempt": packet.attempt + 1, "max_steps": budget})
    record = _record(
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


def _fallback(report: Report, packet: Handoff, why: str) -> tuple[RecoveryRecord, Report] | None:
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
    record = _record(
        report,
        "fallback",
        detail=f"{report.worker} failed ({why}); replaced by the {snapshot.name} "
        f"taken on {snapshot.taken_on}",
    )
    return record, substitute


def _reassign(
    report: Report, packet: Handoff, roster: Roster, why: str
) -> tuple[RecoveryRecord, Handoff] | None:
    failed = roster.get(report.worker)
    if failed is None or not failed.capabilities:
        return None
    capability = failed.capabilities[0]
    for spec in roster.workers.values():
        if spec.name in (report.worker, ESCALATION_WORKER) or capability not in spec.capabilities:
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
        record = _record(
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


def clarified(packet: Handoff, answer: Any) -> Handoff:
    """The packet again, with the human's answer and the facts read from it in its inputs."""
    inputs = dict(packet.inputs)
    if isinstance(answer, dict):
        inputs.update({str(k): str(v) for k, v in answer.items()})
    else:
        text = str(answer)
        inputs["clarification"] = text
        order_ids = find_order_ids(text)
        if order_ids:
            inputs["order_id"] = order_ids[0]
    return packet.model_copy(update={"inputs": inputs, "attempt": packet.attempt + 1})


def plan_recovery(
    state: MusterState, roster: Roster, clarifications: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The state update for one `recover` step: records, substitute reports, new packets.
    `clarifications` holds the human's answers to ambiguous packets, by packet id."""
    packets = list(state.get("packets") or [])
    by_key = {(p.id, p.attempt): p for p in packets}
    records: list[RecoveryRecord] = []
    substitutes: list[Report] = []
    for report in unrecovered_failures(state):
        packet = by_key.get((report.packet_id, report.attempt))
        if packet is None:
            continue
        reason = report.reason
        # Every reason this packet failed with so far, e.g. "budget, then tool_error".
        why = ", then ".join(
            str(r.reason)
            for r in state.get("reports") or []
            if r.packet_id == report.packet_id and r.status == "failed"
        )
        if reason == "ambiguous" and clarifications and report.packet_id in clarifications:
            answer = clarifications[report.packet_id]
            packets.append(clarified(packet, answer))
            records.append(
                _record(
                    report,
                    "clarify",
                    reason="ambiguous",
                    detail=f"{report.worker} asked {report.note!r}; a human answered "
                    f"{answer!r} and it ran again",
                )
            )
            continue
        if reason in ("budget", "crashed") and packet.attempt == 1:
            record, retry = _retry(report, packet)
            records.append(record)
            packets.append(retry)
            continue
        if reason in ("budget", "tool_error", "unavailable", "crashed", "timeout"):
            fallback = _fallback(report, packet, why)
            if fallback is not None:
                records.append(fallback[0])
                substitutes.append(fallback[1])
                continue
            if reason != "timeout":
                reassigned = _reassign(report, packet, roster, why)
                if reassigned is not None:
                    records.append(reassigned[0])
                    packets.append(reassigned[1])
                    continue
        escalation = escalation_packet(report, packet, roster)
        records.append(
            _record(
                report,
                "escalate",
                detail=(
                    f"{report.worker} failed ({why}); escalated to a human"
                    + (f" with a hand-off summary (packet {escalation.id})" if escalation else "")
                ),
            )
        )
        if escalation is not None:
            packets.append(escalation)
    return {"packets": packets, "reports": substitutes, "recoveries": records}
