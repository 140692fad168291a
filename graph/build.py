"""`build_graph()`: every node and edge of the supervisor, in one place; wiring only.

```
START → plan ─Send(Handoff)×N─► dispatch ──► collect ─needs_recovery─► recover ──► collect
                                   ▲            │  └─done─► verify ─┬─ approve → act ─┐
                                   └─next_wave──┘                   └─ synthesize → END
                                                     (act ─route_actions→ approve | synthesize)
```

Each stage's node and router live in one module: `graph.plan` (emits the first wave's
`Send` packets), `graph.dispatch`, `graph.collect` (the barrier and `route_needs_recovery`,
which also releases later waves, retries and clarified packets), `graph.recover`,
`graph.verify`, `graph.approval` (`approve`, `act`, `route_actions`) and `graph.synthesize`.
The builder is kept apart from persistence: callers pass a checkpointer (the CLI, the
notebook) or none (Studio).
"""

from __future__ import annotations

from typing import Any, cast

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graph.approval import act, approve, route_actions
from graph.collect import ROUTES, collect, route_needs_recovery
from graph.dispatch import dispatch, dispatch_failed
from graph.plan import plan
from graph.recover import recover
from graph.retries import DISPATCH_RETRY
from graph.services import Services, timed
from graph.state import InputState, MusterState
from graph.synthesize import synthesize
from graph.verify import verify
from workers.contracts import Handoff


def build_graph(
    *, checkpointer: BaseCheckpointSaver | None = None
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The compiled supervisor graph. Pass a checkpointer to make runs resumable."""
    builder = StateGraph(MusterState, input_schema=InputState, context_schema=Services)
    # `plan` returns a `Command` whose goto is the first wave's `Send`s (or the barrier when
    # nothing is ready); `destinations` lets the drawing show those edges.
    # The supervisor's nodes are `timed`: their trace events carry how long they ran.
    builder.add_node(
        "plan", timed(plan), destinations={"dispatch": "Send(Handoff)", "collect": "no packets"}
    )
    # `dispatch` takes a `Handoff` (a Send packet), not the state, and its handler takes an
    # injected `NodeError`; neither shape is covered by the typed `add_node` overloads.
    builder.add_node(
        "dispatch",
        cast(Any, dispatch),
        input_schema=Handoff,
        error_handler=cast(Any, dispatch_failed),
        retry_policy=DISPATCH_RETRY,  # the one retry layer (graph/retries.py)
    )
    builder.add_node("collect", timed(collect))
    builder.add_node("recover", timed(recover))
    builder.add_node("verify", timed(verify))
    builder.add_node("approve", timed(approve))
    builder.add_node("act", timed(act))
    builder.add_node("synthesize", timed(synthesize))

    builder.add_edge(START, "plan")
    builder.add_edge("dispatch", "collect")
    builder.add_conditional_edges("collect", route_needs_recovery, ROUTES)
    builder.add_edge("recover", "collect")
    builder.add_conditional_edges("verify", route_actions, ["approve", "synthesize"])
    builder.add_edge("approve", "act")
    builder.add_conditional_edges("act", route_actions, ["approve", "synthesize"])
    builder.add_edge("synthesize", END)
    return builder.compile(checkpointer=checkpointer, name="muster")
