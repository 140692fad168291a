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

Every step is a `RecoveryRecord` in state; the answer lists them.

**A failing backend is never retried here.** Retries happen at one layer (graph/retries.py):
a worker that spent its steps on a server that kept failing reports that server's failure
(`tool_error`, `timeout`, `unavailable`; `workers.loop._out_of_budget`), not `budget`, so it
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

from dataclasses import dataclass, field
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from graph.domains import pack_of
from graph.fallbacks import FALLBACKS
from graph.limits import RunLimits
from graph.services import Services, services_for
from graph.state import ESCALATION_WORKER, MusterState, root_packet, unrecovered_failures
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


@dataclass
class HandoffBudget:
    """What is left of the handoff budget while one `recover` step spends it (the count so
    far is the state's `handoffs`; `spent` is this step's increments, its write)."""

    used: dict[str, int]
    per_packet: int
    per_run: int
    spent: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, state: MusterState, limits: RunLimits) -> HandoffBudget:
        return cls(
            used=dict(state.get("handoffs") or {}),
            per_packet=limits.max_packet_recoveries,
            per_run=limits.max_recoveries,
        )

    def refusal(self, packet_id: str) -> str | None:
        """Why no more new work may start for `packet_id`, in words, or None."""
        root = root_packet(packet_id)
        if (used := self.used.get(root, 0)) >= self.per_packet:
            return f"{used} of {self.per_packet} recovery steps for packet {root}"
        if (total := sum(self.used.values())) >= self.per_run:
            return f"{total} of {self.per_run} recovery steps for the run"
        return None

    def take(self, packet_id: str) -> bool:
        """Spend one unit for `packet_id` if the budget allows it."""
        if self.refusal(packet_id) is not None:
            return False
        root = root_packet(packet_id)
        self.used[root] = self.used.get(root, 0) + 1
        self.spent[root] = self.spent.get(root, 0) + 1
        return True


def _in_order(failures: list[Report]) -> list[Report]:
    """Failures in the order recovery spends the budget on them: ambiguous ones first (a
    human is asked before anything else spends what their answer needs), then as reported."""
    return sorted(failures, key=lambda r: r.reason != "ambiguous")


def askable(state: MusterState, limits: RunLimits) -> list[Report]:
    """Ambiguous failures the budget lets recovery ask a human about (the rest are given up):
    the same spending, in the same order, as `plan_recovery`'s."""
    budget = HandoffBudget.of(state, limits)
    return [
        report
        for report in _in_order(unrecovered_failures(state))
        if report.reason == "ambiguous" and budget.take(report.packet_id)
    ]


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
"""Failures a cached fallback may stand in for (the table above)."""


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


def _reassign(
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
    for report in fallbacks_due(state) if stopped else _in_order(unrecovered_failures(state)):
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
                _record(
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
                record, retry = _retry(report, packet)
                records.append(record)
                packets.append(retry)
                continue
            refused = budget.refusal(report.packet_id)
        if reason in FALLBACK_REASONS:
            fallback = _fallback(report, packet, why)
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
                reassigned = _reassign(report, packet, roster, why, tried, avoid)
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
            _record(
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
