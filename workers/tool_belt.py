"""What a worker's model is offered for one run: its allowed tools under provider-safe
aliases, bound once per model and tool set, and the way back from alias to exact name.

Split from the worker loop (`workers.loop`), which only sequences turns: this is the part
that talks to the hub's catalogue and to LangChain's `bind_tools`.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable

from workers.contracts import FailureReason, Handoff
from workers.control_tools import control_tool_schemas
from workers.models import fallbacks_of, model_label, writes_prose
from workers.roster import WorkerSpec
from workers.tool_names import alias_map, to_model_name

if TYPE_CHECKING:  # the hub loads the MCP SDK, only once a hub runs
    from workers.hub import ToolHub, ToolSpec

# Keyed by id(model) (chat models are unhashable pydantic objects), with a weak reference
# to tell a live model from a new one that reuses a dead one's id.
_BOUND: dict[int, tuple[weakref.ref[BaseChatModel], dict[tuple[Any, ...], Runnable[Any, Any]]]] = {}


def bound_model(
    model: BaseChatModel, specs: tuple[ToolSpec, ...], control: tuple[dict[str, Any], ...]
) -> Runnable[Any, Any]:
    """`model` bound to these tools, built once per model and tool set: `bind_tools` costs
    about half a millisecond per call, and every dispatch of a worker offers the same set."""
    entry = _BOUND.get(id(model))
    if entry is None or entry[0]() is not model:
        entry = _BOUND[id(model)] = (weakref.ref(model), {})
    per_model = entry[1]
    # Specs hold dicts (unhashable); the hub keeps one spec object per catalogued tool, and a
    # re-registered tool gets a new object, so identity marks a definition here.
    key = (tuple((s.name, id(s)) for s in specs), tuple(c["function"]["name"] for c in control))
    if key not in per_model:
        schemas = [
            {
                "type": "function",
                "function": {
                    "name": to_model_name(s.name),
                    "description": s.description,
                    "parameters": s.input_schema,
                },
            }
            for s in specs
        ]
        per_model[key] = model.bind_tools([*schemas, *control])
    return per_model[key]


@dataclass(frozen=True)
class RunEnd:
    """How a run ended, as a value: steps return it instead of building reports themselves."""

    reason: FailureReason | None
    """None for a success; otherwise the report's failure reason."""
    note: str
    """The final answer, or what went wrong."""


@dataclass(frozen=True)
class ToolBelt:
    """What the model is offered for one run, and how its calls map back to exact names."""

    runnable: Runnable[Any, Any]
    """The model bound to the allowed tools (under their aliases) and the control tools."""
    aliases: dict[str, str]
    """Provider-safe alias → exact name, for every offered tool."""
    provider: bool = False
    """True for a provider's model (not Muster's offline or scripted ones): only its calls
    go through the runtime's model health (faults, breaker, in-flight cap)."""
    fallbacks: tuple[tuple[str, Runnable[Any, Any]], ...] = ()
    """The models to ask, in order, when the one before is unavailable: each one's label
    and itself bound to the same tools (`workers.models.fallbacks_of`)."""


async def offer_tools(
    packet: Handoff, *, spec: WorkerSpec, hub: ToolHub, model: BaseChatModel
) -> ToolBelt | RunEnd:
    """The tools the model is offered, or an `unavailable` end when none granted is up.

    Only the packet's allowed tools are offered (the hub checks again at execution).
    Providers refuse dotted function names, so each tool goes under its provider-safe alias
    and calls are mapped back to the exact name. Schemas come straight from the hub's specs:
    no per-dispatch StructuredTool or pydantic conversion on this hot path.
    """
    # First: a server started on demand (or down) has no catalogued tools until it is up.
    still_down = await hub.ensure_servers(packet.tool_allow) if packet.tool_allow else []
    specs = hub.specs(packet.tool_allow)
    if packet.tool_allow and not specs:
        # Granted tools, none available: "no tool tried" must not pass for success.
        why = f"servers down: {', '.join(still_down)}" if still_down else "none is catalogued"
        allowed = list(packet.tool_allow)
        return RunEnd("unavailable", f"no tool in the allowlist {allowed} is available ({why})")
    # Back-pressure: a server whose circuit is open is skipped, not asked through the model
    # first; a worker whose every tool is on one ends at once, without a model call.
    await hub.backpressure.refresh({s.server for s in specs})  # other processes' circuits
    shut = sorted({s.server for s in specs if hub.backpressure.is_open(s.server)})
    if shut:
        specs = [s for s in specs if s.server not in shut]
        if not specs:
            refusals = "; ".join(
                f"{name} ({hub.backpressure.breaker(name).last_failure[:120]})" for name in shut
            )
            return RunEnd("unavailable", f"skipped: the circuit is open for {refusals}")
    control = control_tool_schemas(can_propose=bool(spec.proposes))
    aliases = alias_map([s.name for s in specs] + [c["function"]["name"] for c in control])
    runnable = bound_model(model, tuple(specs), control)
    fallbacks = tuple(
        (model_label(other), bound_model(other, tuple(specs), control))
        for other in fallbacks_of(model)
    )
    return ToolBelt(runnable, aliases, provider=writes_prose(model), fallbacks=fallbacks)
