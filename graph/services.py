"""What the nodes need at run time, passed as LangGraph's runtime context.

The hub, the models and the trace are live objects, not state: they are never checkpointed,
and a resumed run gets fresh ones. Callers pass them with `graph.ainvoke(..., context=...)`;
a run started without them (LangGraph Studio) gets the defaults installed with
`set_default_services` (graph/app/studio.py installs them). Building them loads the roster's
domain pack, whose proposal rules and fallbacks the stages use.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from langgraph.config import get_config
from langgraph.runtime import Runtime

from checkpoints.audit import AuditLog
from graph.domains import default_planner, pack_of
from graph.limits import RunLimits
from graph.planners import Planner
from graph.trace import TraceWriter
from workers.errors import ConfigError
from workers.model_health import ModelHealth
from workers.models import ModelFactory, offline_factory
from workers.roster import Roster, load_roster

if TYPE_CHECKING:  # the hub loads the MCP SDK; reading a thread needs none of it
    from workers.hub import ToolHub


@dataclass
class Services:
    """Live dependencies of one run."""

    hub: ToolHub
    """The shared MCP sessions; every tool call goes through it."""
    models: ModelFactory = field(default_factory=offline_factory)
    """The chat model for each worker."""
    roster: Roster = field(default_factory=load_roster)
    """Which workers exist and what they may touch."""
    planner: Planner = field(default_factory=default_planner)
    """Writes the packets; its output is always validated."""
    trace: TraceWriter | None = None
    """Where step events go, if anywhere."""
    limits: RunLimits = field(default_factory=RunLimits)
    """Hard limits for the run, checked at every barrier."""
    audit: AuditLog | None = None
    """Where approval decisions and executions are recorded."""
    model_health: ModelHealth = field(default_factory=ModelHealth)
    """Provider faults no retry heals, learnt by the first call that met them."""

    def __post_init__(self) -> None:
        # The roster's pack registers its proposal rules and fallbacks when it loads: load it
        # here, where every run (fresh or resumed, CLI, fleet, Studio, replay) gets its
        # services, so no stage meets a domain's action without its rules (deny by default).
        pack_of(self.roster)

    def trace_node(self, node: str, **fields: Any) -> None:
        """One trace event for a graph node, stamped with its superstep and, unless `fields`
        give one, the time since the node started (`timed`; no-op untraced)."""
        if self.trace is not None:
            started = _node_started.get()
            if started is not None and fields.get("duration_ms") is None:
                fields["duration_ms"] = round((time.monotonic() - started) * 1000, 1)
            self.trace.emit("node", node=node, superstep=superstep(), **fields)


_node_started: ContextVar[float | None] = ContextVar("muster_node_started", default=None)
"""When the supervisor node running in this context started (`time.monotonic()`)."""

Node = TypeVar("Node", bound=Callable[..., Awaitable[Any]])


def timed(node: Node) -> Node:
    """`node` (an async graph node), noting when each of its runs starts, so its trace events
    carry a real duration (the OpenTelemetry span and the timeline bar of a supervisor step).
    `functools.wraps` keeps the signature LangGraph reads (state, runtime) and the hints."""

    @functools.wraps(node)
    async def run(*args: Any, **kwargs: Any) -> Any:
        token = _node_started.set(time.monotonic())
        try:
            return await node(*args, **kwargs)
        finally:
            _node_started.reset(token)

    return run  # type: ignore[return-value]


DefaultServices = Callable[[], Awaitable[Services]]
"""Supplies services to runs started without a context (LangGraph Studio)."""

_default_provider: DefaultServices | None = None


def set_default_services(provider: DefaultServices | None) -> None:
    """Install what runs without a context use (graph/app/studio.py does, for Studio)."""
    global _default_provider
    _default_provider = provider


def superstep() -> int | None:
    """The LangGraph superstep the calling node runs in, for the trace."""
    step = (get_config().get("metadata") or {}).get("langgraph_step")
    return int(step) if step is not None else None


def passed_services(runtime: Runtime[Services]) -> Services | None:
    """The services the caller passed, if any. A LangGraph server (Studio) passes every run a
    context of its own, a plain dict mirroring its `configurable`: that is not ours."""
    return runtime.context if isinstance(runtime.context, Services) else None


async def services_for(runtime: Runtime[Services]) -> Services:
    """The run's services, or the process defaults when none were passed (Studio)."""
    passed = passed_services(runtime)
    if passed is not None:
        return passed
    if _default_provider is None:
        raise ConfigError(
            "this run has no services: pass context=Services(...) to ainvoke/astream "
            "(graph.app.runtime.open_runtime builds them); under `langgraph dev` the app in "
            "graph/app/studio.py installs defaults"
        )
    return await _default_provider()
