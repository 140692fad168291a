"""LangGraph Studio (`langgraph dev`): the graph it serves and the MCP servers it runs on.

`langgraph.json` serves `graph` below (compiled without a checkpointer: the server brings its
own) and mounts `app` below as its custom HTTP app::

    "graphs": {"muster": "./graph/app/studio.py:graph"},
    "http": {"app": "./graph/app/studio.py:app"}

The LangGraph server enters `app`'s lifespan inside its own, after the graphs are loaded and
before it answers any request (`/ok` included). The lifespan starts the hub (every server in
the servers config, as stdio subprocesses, concurrently) and opens the audit log, then
installs them with `set_default_services`, so every run Studio starts (such runs carry no
`Services`) uses the real servers, all sharing the one hub. On shutdown (Ctrl-C, SIGTERM) it
closes the hub, which stops every server it started, then the audit log. Importing this
module starts nothing.

Settings, all optional: `MUSTER_STUDIO_DIR` (run data; default `var/studio`, gitignored;
`make studio` runs with `--no-reload` because files written in the project would trigger the
reloader), `MUSTER_SERVERS` (the servers config; default `domains/support/servers.json`) and
`MUSTER_MODEL` (`offline`, the default, or `provider:model`), read where every entry point
reads them (`MusterOptions.resolve`). The servers read their usual variables
(`MUSTER_ORDERS_DB`, `MUSTER_CALL_LOG`, ...) from the environment they inherit. The services
are built by the same runtime builder as the CLI's (`open_services`), without a checkpointer.

`GET /muster/servers` reports each server's health and PID.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any, Self

from langgraph.graph.state import CompiledStateGraph
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

# The hub loads here, with Studio's graph: elsewhere it loads when a run opens its services
# (graph/app/runtime.py), here on the server's event loop, where `langgraph dev` fails the
# file checks its import makes (BlockingError).
import workers.hub.hub  # noqa: F401
from graph.app.options import MusterOptions
from graph.app.run_services import open_services
from graph.build import build_graph
from graph.services import Services, set_default_services

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_STUDIO_DIR = PROJECT_ROOT / "var" / "studio"
"""Where Studio's run data (the audit log) goes unless `MUSTER_STUDIO_DIR` says otherwise."""

AUDIT_FILE = "audit.sqlite"


def studio_dir() -> Path:
    """The run-data directory for this server process."""
    return Path(os.environ.get("MUSTER_STUDIO_DIR") or DEFAULT_STUDIO_DIR).expanduser()


def _load_options(directory: Path, servers: Path | None, model: str | None) -> MusterOptions:
    """The blocking part of start-up (directories, config files), run off the event loop:
    `langgraph dev` fails file I/O on its loop with BlockingError."""
    directory.mkdir(parents=True, exist_ok=True)
    return MusterOptions.resolve(servers=servers, model=model)  # no store: the server has one


@asynccontextmanager
async def studio_services(
    *, directory: Path | None = None, servers: Path | None = None, model: str | None = None
) -> AsyncIterator[Services]:
    """Start the servers and open the audit log, and install them for runs without a
    context. On exit, uninstall them and stop every server: nothing the hub started
    outlives this block."""
    directory = directory or studio_dir()
    options = await asyncio.to_thread(_load_options, directory, servers, model)
    async with open_services(
        options, audit_db=directory / AUDIT_FILE, servers_on_demand=False, sqlite_on_loop=False
    ) as services:

        async def provide() -> Services:
            return services

        set_default_services(provide)
        try:
            yield services
        finally:
            set_default_services(None)


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    """Servers up for the life of the LangGraph server process."""
    async with studio_services() as services:
        app.state.muster_services = services
        try:
            yield
        finally:
            del app.state.muster_services


async def servers_status(request: Request) -> JSONResponse:
    """Each server's health: up, pid, last_error, restarts."""
    services: Services | None = getattr(request.app.state, "muster_services", None)
    if services is None:
        return JSONResponse({"servers": {}}, status_code=503)
    health = services.hub.health()
    return JSONResponse({"servers": {name: asdict(state) for name, state in health.items()}})


app = Starlette(routes=[Route("/muster/servers", servers_status)], lifespan=lifespan)
"""The custom HTTP app `langgraph.json` mounts: only its lifespan and one status route."""


# --- The graph Studio loads -------------------------------------------------------------
# The graph LangGraph Studio loads (`langgraph.json` points here).
#
# It is compiled *without* a checkpointer: the LangGraph server brings its own, and a graph
# compiled with one is a hard load error there. Importing this module starts nothing.
#
# Two adjustments for the server, neither of which changes the graph's shape:
#
# - **No context schema.** The server passes every run a context of its own, a plain dict
#   mirroring the run's `configurable`. Declared as `Services`, that dict would be coerced into
#   `Services(**dict)` and the run would fail on the missing hub. Without a schema the dict
#   passes through, and the nodes fall back to the default services, which the lifespan of
#   the lifespan below installs after starting the MCP servers
#   once for the server process.
# - **The strict-msgpack allowlist survives `copy()`.** Under `LANGGRAPH_STRICT_MSGPACK=true`,
#   `compile()` records the state's own types (`Report`, `Handoff`, ...) as allowed to load from
#   a checkpoint. The server copies the graph for every run and every state read, and
#   `Pregel.copy()` drops that allowlist, so a run resumed from a checkpoint would get its
#   reports back as dicts. `StudioGraph.copy()` carries it over.


class StudioGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """The compiled supervisor graph, with an allowlist that survives `copy()`."""

    def copy(self, update: dict[str, Any] | None = None) -> Self:
        copied = super().copy(update)
        # Private, pinned: tests/test_pinned_internals.py.
        copied._serde_allowlist = self._serde_allowlist
        return copied


def studio_graph() -> StudioGraph:
    """`build_graph()` without a checkpointer or a context schema, as a `StudioGraph`."""
    compiled = build_graph()
    # What Pregel.copy() does, into our class (a copy, checked by tests/test_pinned_internals.py).
    attrs = {k: v for k, v in compiled.__dict__.items() if k != "__orig_class__"}
    graph = StudioGraph(**{**attrs, "context_schema": None})
    graph._serde_allowlist = compiled._serde_allowlist
    return graph


graph = studio_graph()
"""The graph `langgraph.json` serves: importing this module builds it and starts nothing."""
