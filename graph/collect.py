"""The `collect` stage: the barrier after each wave, and its `needs_recovery` edge.

`collect` checks the run's own limits, which do not depend on any model behaving: total
worker steps, total tokens (from the models' usage metadata) and a wall-clock deadline. When
one is hit, `collect` records which, no new work starts, and the answer is `partial`.

`route_needs_recovery` is the conditional edge out of the barrier, plain code over typed
fields: the next wave of ready packets (later waves, retries, reassigned and clarified
packets) goes to `dispatch`; unrecovered failures go to `recover` (`needs_recovery`);
otherwise the run goes on towards synthesis (`verify` first). Once a limit has stopped the
run, only failures a cached fallback can replace go to `recover`.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Send

from graph.dispatch import send_packets
from graph.limits import limit_hit
from graph.recovery_steps import fallbacks_due
from graph.services import Services, passed_services, services_for
from graph.state import MusterState, ready_packets, unrecovered_failures


async def collect(state: MusterState, runtime: Runtime[Services]) -> dict[str, Any]:
    """Check the run's limits before any new work is released."""
    services = await services_for(runtime)
    reason = limit_hit(state, services.limits)
    services.trace_node(
        "collect",
        outcome="stop" if reason else "continue",
        reason=reason,
        reports=len(state.get("reports") or []),
    )
    return {"stop_reason": reason} if reason and not state.get("stop_reason") else {}


NEEDS_RECOVERY: Literal["needs_recovery"] = "needs_recovery"
"""The label of the edge from the barrier to `recover`."""
DONE: Literal["done"] = "done"
"""The label of the edge from the barrier on towards synthesis."""
ROUTES: dict[Hashable, str] = {NEEDS_RECOVERY: "recover", DONE: "verify", "next_wave": "dispatch"}
"""Edge label → node, for `add_conditional_edges` (labels show in Studio's drawing)."""


def route_needs_recovery(
    state: MusterState, runtime: Runtime[Services]
) -> list[Send] | Literal["needs_recovery", "done"]:
    """The `needs_recovery` edge: the next wave, recovery, or on towards synthesis.

    After a run limit stopped the run, only a cached fallback (it costs no step) still goes
    to recovery; nothing new is dispatched."""
    if state.get("stop_reason"):
        return NEEDS_RECOVERY if fallbacks_due(state) else DONE
    ready = ready_packets(state)
    if ready:
        return send_packets(ready, state, passed_services(runtime))
    if unrecovered_failures(state):
        return NEEDS_RECOVERY
    return DONE
