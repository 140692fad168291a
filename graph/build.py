"""`build_graph()`: every node and edge of the supervisor, in one place.

```
START → plan → collect ─route_after_collect─┬─ Send(Handoff)×N → dispatch → collect
                  ▲                          ├─ recover → collect
                  │                          └─ verify ─route_actions─┬─ approve → act ─┐
                  │                                                   └─ synthesize → END
                                                        (act ─route_actions→ approve | synthesize)
```

`collect` is the one barrier: the first wave, later waves, retries, reassigned and clarified
packets are all released by `route_after_collect` from there. The builder is kept apart
from persistence: callers pass a checkpointer (the CLI, the notebook) or none (Studio).
"""

from __future__ import annotations

import inspect
from typing import Any, cast

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from graph.approval import act, approve, route_actions
from graph.collect import collect
from graph.dispatch import dispatch, dispatch_failed
from graph.facts import resolve_shared_facts
from graph.plan import find_order_ids, validate_plan
from graph.recover import plan_recovery, route_after_collect, unrecovered_failures
from graph.services import Services, services_for
from graph.state import InputState, MusterState
from graph.synthesize import synthesize
from graph.verify import verify
from workers.contracts import Handoff


async def plan(state: MusterState, runtime: Runtime[Services]) -> dict[str, Any]:
    """Write the packets with the configured planner, then validate them, whoever wrote them."""
    services = await services_for(runtime)
    planned = services.planner(state["request"], services.roster)
    if inspect.isawaitable(planned):  # an LLM planner must not block the event loop
        planned = await planned
    validated = validate_plan(planned, services.roster)
    order_ids = find_order_ids(state["request"]) + [
        p.inputs["order_id"] for p in validated.packets if "order_id" in p.inputs
    ]
    packets, fact_notes = await resolve_shared_facts(
        validated.packets, order_ids, hub=services.hub, roster=services.roster
    )
    notes = validated.notes + fact_notes
    services.trace_node("plan", outcome="ok", packets=[p.id for p in packets], notes=notes)
    return {"packets": packets, "plan_notes": notes}


async def recover(state: MusterState, runtime: Runtime[Services]) -> dict[str, Any]:
    """Apply a recovery strategy to every unrecovered failure (see `graph.recover`).

    An ambiguous packet first asks the human through `interrupt()`; the node re-runs from
    the top on resume, so everything before the interrupts only computes."""
    services = await services_for(runtime)
    clarifications = {
        report.packet_id: interrupt(
            {
                "kind": "clarification",
                "worker": report.worker,
                "packet_id": report.packet_id,
                "question": report.note,
            }
        )
        for report in unrecovered_failures(state)
        if report.reason == "ambiguous"
    }
    update = plan_recovery(state, services.roster, clarifications)
    for record in update["recoveries"]:
        services.trace_node(
            "recover",
            worker=record.worker,
            packet_id=record.packet_id,
            outcome=record.strategy,
            reason=record.reason,
        )
    return update


def build_graph(
    *, checkpointer: BaseCheckpointSaver | None = None
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The compiled supervisor graph. Pass a checkpointer to make runs resumable."""
    builder = StateGraph(MusterState, input_schema=InputState, context_schema=Services)
    builder.add_node("plan", plan)
    # `dispatch` takes a `Handoff` (a Send packet), not the state, and its handler takes an
    # injected `NodeError`; neither shape is covered by the typed `add_node` overloads.
    builder.add_node(
        "dispatch",
        cast(Any, dispatch),
        input_schema=Handoff,
        error_handler=cast(Any, dispatch_failed),
    )
    builder.add_node("collect", collect)
    builder.add_node("recover", recover)
    builder.add_node("verify", verify)
    builder.add_node("approve", approve)
    builder.add_node("act", act)
    builder.add_node("synthesize", synthesize)

    builder.add_edge(START, "plan")
    builder.add_edge("plan", "collect")
    builder.add_conditional_edges("collect", route_after_collect, ["dispatch", "recover", "verify"])
    builder.add_edge("dispatch", "collect")
    builder.add_edge("recover", "collect")
    builder.add_conditional_edges("verify", route_actions, ["approve", "synthesize"])
    builder.add_edge("approve", "act")
    builder.add_conditional_edges("act", route_actions, ["approve", "synthesize"])
    builder.add_edge("synthesize", END)
    return builder.compile(checkpointer=checkpointer, name="muster")
