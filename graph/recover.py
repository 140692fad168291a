"""The `recover` stage: a strategy for every failure the barrier routed here. Plain code over
typed fields: `recover` chooses a strategy from each failure's reason:

| reason                              | strategy                                              |
|-------------------------------------|-------------------------------------------------------|
| budget                              | retry once with double the budget, then as below      |
| crashed (the worker raised)         | retry once (re-runs only that branch), then as below  |
| tool_error, unavailable, crashed    | cached fallback, else reassign, else escalate         |
| no_tool_call (answered, no tool)    | cached fallback, else reassign, else escalate         |
| unknown_tool, bad_arguments         | cached fallback, else reassign, else escalate         |
| timeout                             | cached fallback, else escalate                        |
| a failed model call (model_timeout, | cached fallback, else escalate (another worker runs   |
| provider_*, unknown_model, refused) | on the same model: reassigning would meet it again)   |
| refused, loop                       | escalate with a hand-off summary                      |
| ambiguous                           | ask the human (`interrupt()`), then re-dispatch       |

Every step is a `RecoveryRecord` in state; the answer lists them. The steps themselves are
built in `graph/recovery_steps.py`, the handoff budget below is kept in `graph/recovery_budget.py`.

**A failing backend is never retried here.** Retries happen at one layer (graph/retries.py):
a worker that spent its steps on a server that kept failing reports that server's failure
(`tool_error`, `timeout`, `unavailable`; `workers.run_report.out_of_budget`), not `budget`, so it
gets no bigger-budget retry, and a reassignment never goes to a worker that reaches a server
the packet failed on (`failed_servers`, read from the reports' typed tool-call outcomes):
the packet goes to its cached fallback, a worker on other servers, or a human.

Once a run limit has stopped the run (`stop_reason`), no new work starts, but a cached
fallback costs no worker step, model call or wait: recovery still applies those
(`fallbacks_due`, which the `needs_recovery` edge asks too) and nothing else.

**The handoff budget.** A failure that costs no worker step (a server that is down fails a
packet before its first model turn) escapes the step budget, so recovery bounds itself: a
step that starts new work (a retry, a reassignment, a clarified re-run) spends one unit of
the planned packet's budget (`RunLimits.max_packet_recoveries`, counted over the packet and
everything recovery put in its place, `graph.state.root_packet`) and of the run's
(`RunLimits.max_recoveries`). The count lives in the state (`handoffs`, an adding reducer),
so it is checkpointed with the step and a resume, a retried job or another fleet worker
carries on from it. Past either budget the failure is given up: escalated (with a hand-off
packet, whose own failure ends the chain), and the record, so the answer, says the budget
was spent. A reassignment never goes back to a worker that already failed the same packet.
Each failure starts at most one new packet, so a planned packet's chain is at most its
budget of re-runs, one hand-off and the hand-off's end: a thread ends in a bounded number of
supersteps whatever its servers do.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from graph.domains import pack_of
from graph.limits import RunLimits
from graph.recovery_budget import HandoffBudget, askable, in_order
from graph.recovery_steps import (
    FALLBACK_REASONS,
    MODEL_FAILURES,
    clarified,
    escalation_packet,
    failed_servers,
    fallback_step,
    fallbacks_due,
    reassign_step,
    retry_step,
    step_record,
)
from graph.services import Services, services_for
from graph.state import MusterState, root_packet, unrecovered_failures
from workers.contracts import RecoveryRecord, Report
from workers.roster import Roster


def plan_recovery(
    state: MusterState,
    roster: Roster,
    clarifications: dict[str, Any] | None = None,
    limits: RunLimits | None = None,
) -> dict[str, Any]:
    """The state update for one `recover` step: records, substitute reports, new packets and
    the handoff budget spent. `clarifications` holds the human's answers to ambiguous
    packets, by packet id."""
    pack_of(roster)  # its fallbacks are registered when it loads (Services load it too)
    budget = HandoffBudget.of(state, limits or RunLimits())
    packets = list(state.get("packets") or [])
    by_key = {(p.id, p.attempt): p for p in packets}
    reports = state.get("reports") or []
    records: list[RecoveryRecord] = []
    substitutes: list[Report] = []
    stopped = bool(state.get("stop_reason"))
    for report in fallbacks_due(state) if stopped else in_order(unrecovered_failures(state)):
        packet = by_key.get((report.packet_id, report.attempt))
        if packet is None:
            continue
        reason = report.reason
        root = root_packet(report.packet_id)
        # Every reason this packet failed with so far, e.g. "budget, then tool_error".
        why = ", then ".join(
            str(r.reason)
            for r in reports
            if r.packet_id == report.packet_id and r.status == "failed"
        )
        refused: str | None = None
        if reason == "ambiguous" and clarifications and report.packet_id in clarifications:
            answer = clarifications[report.packet_id]
            budget.take(report.packet_id)  # `askable` let it ask: the budget allowed it
            packets.append(clarified(packet, answer, roster=roster))
            records.append(
                step_record(
                    report,
                    "clarify",
                    reason="ambiguous",
                    detail=f"{report.worker} asked {report.note!r}; a human answered "
                    f"{answer!r} and it ran again",
                )
            )
            continue
        if reason == "ambiguous" and clarifications is not None:
            refused = budget.refusal(report.packet_id)
        if reason in ("budget", "crashed") and packet.attempt == 1 and not stopped:
            if budget.take(report.packet_id):
                record, retry = retry_step(report, packet)
                records.append(record)
                packets.append(retry)
                continue
            refused = budget.refusal(report.packet_id)
        if reason in FALLBACK_REASONS:
            fallback = fallback_step(report, packet, why)
            if fallback is not None:
                records.append(fallback[0])
                substitutes.append(fallback[1])
                continue
            if reason != "timeout" and reason not in MODEL_FAILURES and refused is None:
                chain = [
                    r for r in reports if r.status == "failed" and root_packet(r.packet_id) == root
                ]
                tried = {r.worker for r in chain}
                # Every server this planned packet's chain failed on so far.
                avoid = {
                    server
                    for r in chain
                    if (p := by_key.get((r.packet_id, r.attempt))) is not None
                    for server in failed_servers(r, p)
                }
                reassigned = reassign_step(report, packet, roster, why, tried, avoid)
                if reassigned is not None:
                    refused = budget.refusal(report.packet_id)
                    if budget.take(report.packet_id):
                        records.append(reassigned[0])
                        packets.append(reassigned[1])
                        continue
        escalation = escalation_packet(report, packet, roster)
        given_up = (
            f"; the recovery budget is spent ({refused}), so it was given up" if refused else ""
        )
        records.append(
            step_record(
                report,
                "escalate",
                detail=(
                    f"{report.worker} failed ({why}){given_up}; escalated to a human"
                    + (f" with a hand-off summary (packet {escalation.id})" if escalation else "")
                ),
            )
        )
        if escalation is not None:
            packets.append(escalation)
    update: dict[str, Any] = {"packets": packets, "reports": substitutes, "recoveries": records}
    if budget.spent:
        update["handoffs"] = budget.spent
    return update


async def recover(state: MusterState, runtime: Runtime[Services]) -> dict[str, Any]:
    """Apply a recovery strategy to every unrecovered failure (see the table above).

    An ambiguous packet first asks the human through `interrupt()`; the node re-runs from
    the top on resume, so everything before the interrupts only computes."""
    services = await services_for(runtime)
    # Only the ambiguous failures the handoff budget still allows go to a human; the rest
    # are given up in `plan_recovery`.
    clarifications = {
        report.packet_id: interrupt(
            {
                "kind": "clarification",
                "worker": report.worker,
                "packet_id": report.packet_id,
                "question": report.note,
            }
        )
        for report in askable(state, services.limits)
    }
    update = plan_recovery(state, services.roster, clarifications, services.limits)
    for record in update["recoveries"]:
        services.trace_node(
            "recover",
            worker=record.worker,
            packet_id=record.packet_id,
            outcome=record.strategy,
            reason=record.reason,
        )
    return update
