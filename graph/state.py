"""The graph state, and the helpers that read it. Reducers are declared in the type, so
parallel writes never collide.

`reports` uses `operator.add`: every parallel `dispatch` appends its report, and every report
from every wave, retry and fallback stays visible. Because the list grows across runs on one
thread, a new job always gets a new thread id (principle 7).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Annotated, TypedDict

from workers.contracts import ActionRecord, Answer, Handoff, RecoveryRecord, Report


class InputState(TypedDict):
    """What a caller passes in: the request, nothing else."""

    request: str
    """The ticket or incident text, verbatim."""


class MusterState(InputState, total=False):
    """Everything the supervisor knows about one job."""

    packets: list[Handoff]
    """The validated plan: one packet per sub-task."""
    intents: list[str]
    """Every intent the ticket expresses (`graph.planners.intents`); each needs a resolution."""
    language: str
    """The language the ticket is written in (`English` unless the rules read another)."""
    order_ids: list[str]
    """The order ids the ticket names, as the orders server keys them."""
    unknown_orders: list[str]
    """Order ids the ticket names that the orders system does not know."""
    plan_notes: list[str]
    """What plan validation corrected (dropped duplicates, narrowed allowlists, capped budgets)."""
    reports: Annotated[list[Report], operator.add]
    """Every report, in completion order; retries and fallbacks add, never overwrite."""
    recoveries: Annotated[list[RecoveryRecord], operator.add]
    """Every recovery step taken and what came of it."""
    actions: Annotated[list[ActionRecord], operator.add]
    """Every approval decision and execution of a proposed action."""
    conflicts: list[str]
    """Facts two reports disagreed on, and how synthesis ruled."""
    unverified: list[str]
    """Claims `verify` could not tie to an observation, one line each."""
    stop_reason: str
    """Which run limit stopped new work, written by `collect`; absent while within limits."""
    deadline_at: float
    """The run's wall-clock deadline (epoch seconds), stored by `plan` from `--deadline` so a
    resume keeps it (`graph.limits.deadline_for`); absent when the run has none."""
    answer: Answer
    """The final answer, written by `synthesize`."""


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


def latest_actions(state: MusterState) -> dict[str, ActionRecord]:
    """The current record per action digest."""
    latest: dict[str, ActionRecord] = {}
    for record in state.get("actions") or []:
        latest[record.digest] = record
    return latest
