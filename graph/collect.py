"""`collect`: the barrier after each wave, where the run's own limits are checked.

The limits do not depend on any model behaving: total worker steps, total tokens (from the
models' usage metadata) and a wall-clock deadline. When one is hit, `collect` records which,
`route_after_collect` starts no new work, and the answer is `partial`.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from graph.limits import limit_hit
from graph.services import Services, services_for
from graph.state import MusterState


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
