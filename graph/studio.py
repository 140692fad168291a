"""LangGraph Studio (`langgraph dev`): the MCP servers, started once per server process.

`langgraph.json` serves the graph from `graph/app.py` (compiled without a checkpointer: the
server brings its own) and mounts `app` below as its custom HTTP app::

    "graphs": {"muster": "./graph/app.py:graph"},
    "http": {"app": "./graph/studio.py:app"}

The LangGraph server enters `app`'s lifespan inside its own, after the graphs are loaded and
before it answers any request (`/ok` included). The lifespan starts the hub (every server in
the servers config, as stdio subprocesses, concurrently) and opens the audit log, then
installs them with `set_default_services`, so every run Studio starts (such runs carry no
`Services`) uses the real servers, all sharing the one hub. On shutdown (Ctrl-C, SIGTERM) it
closes the hub, which stops every server it started, then the audit log. Importing this
module starts nothing.

Settings, all optional: `MUSTER_STUDIO_DIR` (run data; default `var/studio`, gitignored;
`make studio` runs with `--no-reload` because files written in the project would trigger the
reloader), `MUSTER_SERVERS` (the servers config; default `servers/servers.json`) and
`MUSTER_MODEL` (`offline`, the default, or `provider:model`). The servers read their usual
variables (`MUSTER_ORDERS_DB`, `MUSTER_CALL_LOG`, ...) from the environment they inherit.

`GET /muster/servers` reports each server's health and PID.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from checkpoints.audit import AuditLog
from graph.runner import ensure_approval_secret
from graph.services import Services, set_default_services
from workers.hub import ToolHub
from workers.models import ModelFactory, load_model_factory
from workers.roster import Roster, load_roster
from workers.servers_config import DEFAULT_SERVERS_FILE, ServersConfig, load_servers_config

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_STUDIO_DIR = PROJECT_ROOT / "var" / "studio"
"""Where Studio's run data (the audit log) goes unless `MUSTER_STUDIO_DIR` says otherwise."""

AUDIT_FILE = "audit.sqlite"


def studio_dir() -> Path:
    """The run-data directory for this server process."""
    return Path(os.environ.get("MUSTER_STUDIO_DIR") or DEFAULT_STUDIO_DIR).expanduser()


def _load_settings(
    directory: Path, servers: Path, model: str
) -> tuple[ServersConfig, ModelFactory, Roster]:
    """The blocking part of start-up (directories, config files), run off the event loop:
    `langgraph dev` fails file I/O on its loop with BlockingError."""
    directory.mkdir(parents=True, exist_ok=True)
    return load_servers_config(servers), load_model_factory(model), load_roster()


@asynccontextmanager
async def studio_services(
    *, directory: Path | None = None, servers: Path | None = None, model: str | None = None
) -> AsyncIterator[Services]:
    """Start the servers and open the audit log, and install them for runs without a
    context. On exit, uninstall them and stop every server: nothing the hub started
    outlives this block."""
    directory = directory or studio_dir()
    servers = servers or Path(os.environ.get("MUSTER_SERVERS") or DEFAULT_SERVERS_FILE)
    model = model or os.environ.get("MUSTER_MODEL") or "offline"
    ensure_approval_secret()  # the orders server started below verifies tokens we mint
    config, models, roster = await asyncio.to_thread(_load_settings, directory, servers, model)
    audit = await AuditLog.open(directory / AUDIT_FILE)
    try:
        hub = await ToolHub.connect(config)
        try:
            services = Services(hub=hub, models=models, roster=roster, audit=audit)

            async def provide() -> Services:
                return services

            set_default_services(provide)
            try:
                yield services
            finally:
                set_default_services(None)
        finally:
            await hub.aclose()
    finally:
        await audit.close()


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
