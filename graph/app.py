"""The graph LangGraph Studio loads (`langgraph.json` points here).

It is compiled *without* a checkpointer: the LangGraph server brings its own, and a graph
compiled with one is a hard load error there. Runs started without a context get the
default services (the servers in servers/servers.json and the offline model) on first use.
"""

from __future__ import annotations

from graph.build import build_graph

graph = build_graph()
