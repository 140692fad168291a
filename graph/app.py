"""The graph LangGraph Studio loads (`langgraph.json` points here).

It is compiled *without* a checkpointer: the LangGraph server brings its own, and a graph
compiled with one is a hard load error there. Importing this module starts nothing.

Runs started by the server carry no `Services`: the server passes its own context, a plain
dict mirroring the run's `configurable`. So this graph declares no context schema, which
would have the dict coerced into `Services` (and fail on the missing hub); the nodes then
fall back to the default services. Those are installed, and the MCP servers started once
per server process, by the lifespan of the custom HTTP app in `graph/studio.py`, which
`langgraph.json` mounts.
"""

from __future__ import annotations

from graph.build import build_graph

graph = build_graph().copy(update={"context_schema": None})
