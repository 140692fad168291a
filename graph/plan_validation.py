"""Plan validation, whoever wrote the plan: what is refused, narrowed, capped or dropped."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from graph.planners.base import MAX_STEPS_CAP, TIMEOUT_CAP_S
from workers.contracts import Handoff
from workers.errors import PlanError
from workers.hub import SERVER_PREFIX, is_allowed, is_valid_entry
from workers.roster import Roster


@dataclass
class ValidatedPlan:
    """Packets in dependency order, and what validation changed."""

    packets: list[Handoff]
    """Packets, topologically sorted by `depends_on`."""
    notes: list[str] = field(default_factory=list)
    """One line per correction."""


def _within(entry: str, privileges: Sequence[str]) -> bool:
    """True if allowlist `entry` grants nothing beyond `privileges`."""
    if SERVER_PREFIX.match(entry):
        return entry in privileges  # a whole-server grant needs a whole-server privilege
    return is_allowed(entry, privileges)


def validate_plan(packets: Sequence[Handoff], roster: Roster) -> ValidatedPlan:
    """Check a plan before anything runs: unknown workers, repeated packet ids and dependency
    cycles are refused (`PlanError`); widened allowlists are narrowed, budgets capped and
    duplicates dropped, each with a note (see `graph/plan.py`'s docstring)."""
    notes: list[str] = []
    kept: list[Handoff] = []
    seen: dict[str, str] = {}
    renamed: dict[str, str] = {}  # dropped duplicate's id -> the kept packet's id
    ids = [p.id for p in packets]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise PlanError(f"plan uses packet ids more than once: {repeated}; ids must be unique")
    for packet in packets:
        spec = roster.get(packet.recipient)
        if spec is None:
            raise PlanError(
                f"plan names unknown worker {packet.recipient!r} (packet {packet.id}); "
                f"known workers: {', '.join(sorted(roster.workers))}"
            )
        fingerprint = packet.fingerprint()
        if fingerprint in seen:
            notes.append(f"dropped {packet.id}: duplicate of {seen[fingerprint]}")
            renamed[packet.id] = seen[fingerprint]
            continue
        seen[fingerprint] = packet.id
        allow = tuple(
            e for e in packet.tool_allow if is_valid_entry(e) and _within(e, spec.privileges)
        )
        if allow != packet.tool_allow:
            denied = [e for e in packet.tool_allow if e not in allow]
            notes.append(f"narrowed {packet.id}: {packet.recipient} may not use {denied}")
        max_steps = min(max(packet.max_steps, 1), MAX_STEPS_CAP)
        timeout_s = min(max(packet.timeout_s, 0.1), TIMEOUT_CAP_S)
        if (max_steps, timeout_s) != (packet.max_steps, packet.timeout_s):
            notes.append(f"capped {packet.id}: max_steps {max_steps}, timeout {timeout_s:g}s")
        kept.append(
            packet.model_copy(
                update={
                    "tool_allow": allow,
                    "max_steps": max_steps,
                    "timeout_s": timeout_s,
                    "attempt": 1,  # retries are recovery's to count, never the planner's
                }
            )
        )
    # A packet that depended on a dropped duplicate depends on the one that was kept.
    kept = [
        p.model_copy(update={"depends_on": tuple(renamed.get(d, d) for d in p.depends_on)})
        if any(d in renamed for d in p.depends_on)
        else p
        for p in kept
    ]
    return ValidatedPlan(packets=topological_order(kept), notes=notes)


def topological_order(packets: Sequence[Handoff]) -> list[Handoff]:
    """Packets ordered so each comes after what it depends on; a cycle is a `PlanError`."""
    by_id = {p.id: p for p in packets}
    for packet in packets:
        missing = [d for d in packet.depends_on if d not in by_id]
        if missing:
            raise PlanError(f"packet {packet.id} depends on unknown packets {missing}")
    ordered: list[Handoff] = []
    state: dict[str, str] = {}

    def visit(packet_id: str, path: list[str]) -> None:
        if state.get(packet_id) == "done":
            return
        if state.get(packet_id) == "visiting":
            cycle = path[path.index(packet_id) :] + [packet_id]
            raise PlanError(f"plan has a dependency cycle: {' -> '.join(cycle)}")
        state[packet_id] = "visiting"
        for dependency in by_id[packet_id].depends_on:
            visit(dependency, path + [packet_id])
        state[packet_id] = "done"
        ordered.append(by_id[packet_id])

    for packet in packets:
        visit(packet.id, [])
    return ordered
