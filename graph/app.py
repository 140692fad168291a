"""The graph LangGraph Studio loads (`langgraph.json` points here).

It is compiled *without* a checkpointer: the LangGraph server brings its own, and a graph
compiled with one is a hard load error there. Importing this module starts nothing.

Two adjustments for the server, neither of which changes the graph's shape:

- **No context schema.** The server passes every run a context of its own, a plain dict
  mirroring the run's `configurable`. Declared as `Services`, that dict would be coerced into
  `Services(**dict)` and the run would fail on the missing hub. Without a schema the dict
  passes through, and the nodes fall back to the default services, which the lifespan of
  `graph/studio.py` (mounted by `langgraph.json`) installs after starting the MCP servers
  once for the server process.
- **The strict-msgpack allowlist survives `copy()`.** Under `LANGGRAPH_STRICT_MSGPACK=true`,
  `compile()` records the state's own types (`Report`, `Handoff`, ...) as allowed to load from
  a checkpoint. The server copies the graph for every run and every state read, and
  `Pregel.copy()` drops that allowlist, so a run resumed from a checkpoint would get its
  reports back as dicts. `StudioGraph.copy()` carries it over.
"""

from __future__ import annotations

from typing import Any, Self

from langgraph.graph.state import CompiledStateGraph

from graph.build import build_graph


class StudioGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """The compiled supervisor graph, with an allowlist that survives `copy()`."""

    def copy(self, update: dict[str, Any] | None = None) -> Self:
        copied = super().copy(update)
        copied._serde_allowlist = self._serde_allowlist
        return copied


def studio_graph() -> StudioGraph:
    """`build_graph()` without a checkpointer or a context schema, as a `StudioGraph`."""
    compiled = build_graph()
    # What Pregel.copy() does, into our class.
    attrs = {k: v for k, v in compiled.__dict__.items() if k != "__orig_class__"}
    graph = StudioGraph(**{**attrs, "context_schema": None})
    graph._serde_allowlist = compiled._serde_allowlist
    return graph


graph = studio_graph()
