"""What the nodes need at run time, passed as LangGraph's runtime context.

The hub, the models and the trace are live objects, not state: they are never checkpointed,
and a resumed run gets fresh ones. Callers pass them with `graph.ainvoke(..., context=...)`;
a run started without them (LangGraph Studio) gets process-wide defaults on first use.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from langgraph.config import get_config
from langgraph.runtime import Runtime

from checkpoints.audit import AuditLog
from graph.limits import RunLimits
from graph.plan import Planner, plan_ticket
from graph.trace import TraceWriter
from workers.hub import ToolHub
from workers.models import ModelFactory, offline_factory
from workers.roster import Roster, load_roster
from workers.servers_config import DEFAULT_SERVERS_FILE, load_servers_config


@dataclass
class Services:
    """Live dependencies of one run."""

    hub: ToolHub
    """The shared MCP sessions; every tool call goes through it."""
    models: ModelFactory = field(default_factory=offline_factory)
    """The chat model for each worker."""
    roster: Roster = field(default_factory=load_roster)
    """Which workers exist and what they may touch."""
    planner: Planner = plan_ticket
    """Writes the packets; its output is always validated."""
    trace: TraceWriter | None = None
    """Where step events go, if anywhere."""
    limits: RunLimits = field(default_factory=RunLimits)
    """Hard limits for the run, checked at every barrier."""
    audit: AuditLog | None = None
    """Where approval decisions and executions are recorded."""


_default: Services | None = None
_default_lock: asyncio.Lock | None = None


async def default_services() -> Services:
    """Services for runs that were started without a context (Studio): the default servers
    file and the offline model, started once per process and shared."""
    global _default, _default_lock
    if _default_lock is None:
        _default_lock = asyncio.Lock()
    async with _default_lock:
        if _default is None:
            hub = await ToolHub.connect(load_servers_config(DEFAULT_SERVERS_FILE))
            _default = Services(hub=hub)
    return _default


def superstep() -> int | None:
    """The LangGraph superstep the calling node runs in, for the trace."""
    step = (get_config().get("metadata") or {}).get("langgraph_step")
    return int(step) if step is not None else None


async def services_for(runtime: Runtime[Services]) -> Services:
    """The run's services, or the process defaults when none were passed (Studio)."""
    return runtime.context if runtime.context is not None else await default_services()
