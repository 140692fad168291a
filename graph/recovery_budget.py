"""The handoff budget: how many recovery steps that start new work a packet and a run have left."""

from __future__ import annotations

from dataclasses import dataclass, field

from graph.limits import RunLimits
from graph.state import MusterState, root_packet, unrecovered_failures
from workers.contracts import Report


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


def in_order(failures: list[Report]) -> list[Report]:
    """Failures in the order recovery spends the budget on them: ambiguous ones first (a
    human is asked before anything else spends what their answer needs), then as reported."""
    return sorted(failures, key=lambda r: r.reason != "ambiguous")


def askable(state: MusterState, limits: RunLimits) -> list[Report]:
    """Ambiguous failures the budget lets recovery ask a human about (the rest are given up):
    the same spending, in the same order, as `plan_recovery`'s."""
    budget = HandoffBudget.of(state, limits)
    return [
        report
        for report in in_order(unrecovered_failures(state))
        if report.reason == "ambiguous" and budget.take(report.packet_id)
    ]
