"""An LLM planner: the request → a `Plan` through the model's structured output.

The model fills `Plan` (what a model can decide: who, what, with which facts, after what);
code fills everything else from the roster (packet ids, tool allowlists, budgets), and the
graph's plan node validates the result like any other plan (`graph.plan.validate_plan`):
an unknown worker or a dependency on an unknown packet is a `PlanError`, duplicates are
dropped. The planner itself never repairs what the model wrote.

The planner is async (a provider call must not block the event loop inside an async node),
so the plan node awaits the planner's result when it is awaitable. Its model call is recorded
in the run's trace for `muster replay` (request digest, reply, tokens), as workers' turns are.

`inputs` is a list of name/value pairs rather than a JSON object: OpenAI's strict structured
output (the default `with_structured_output` method of `ChatOpenAI`) refuses any object
schema whose `additionalProperties` is not `false`, which rules out `dict[str, str]`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field

from graph.planners.base import DEFAULT_TIMEOUT_S
from graph.trace import current_trace, record_model_call, structured_request
from workers.contracts import Handoff
from workers.errors import PlanError
from workers.models import model_label
from workers.roster import Roster

AsyncPlanner = Callable[[str, Roster], Awaitable[list[Handoff]]]
"""A planner the plan node awaits."""


class PlannedInput(BaseModel):
    """One resolved fact a worker may use, e.g. order_id = 12345."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The fact's name, e.g. order_id, topic, query.")
    value: str = Field(description="The fact's value, copied from the request.")


class PlannedPacket(BaseModel):
    """One sub-task for one worker, as the model plans it."""

    model_config = ConfigDict(extra="forbid")

    recipient: str = Field(description="The worker's name, exactly as listed.")
    objective: str = Field(description="One testable sentence: what the worker must establish.")
    inputs: list[PlannedInput] = Field(
        description="Resolved facts from the request the worker needs; nothing else."
    )
    depends_on: list[str] = Field(
        description="Ids of earlier packets whose reports this one needs; usually empty."
    )


class Plan(BaseModel):
    """The model's plan: one packet per sub-task."""

    model_config = ConfigDict(extra="forbid")

    packets: list[PlannedPacket] = Field(description="The packets, in order.")


def planner_prompt(roster: Roster) -> str:
    """The planner's instructions: the workers it may use, and the packet rules."""
    workers = "\n".join(
        f"- {spec.name}: {spec.description}"
        + (f" (tools: {', '.join(spec.privileges)})" if spec.privileges else " (no tools)")
        for spec in roster.workers.values()
    )
    return (
        "You plan customer-support work for specialist workers. Split the request into "
        "independent sub-tasks, one packet per sub-task, and give each to one of these "
        f"workers:\n{workers}\n"
        "Rules: use only the workers listed, by their exact name. The objective is one "
        "testable sentence. Inputs are facts stated in the request (order_id, topic, query, "
        "request_summary...): never invent one. A worker sees only its packet, never the "
        "request, so put every fact it needs into its inputs. Packets are numbered from 1 in "
        "the order you write them, and packet n for worker W has the id 'W-n' (e.g. "
        "billing-1); depends_on may list only ids of earlier packets, and is usually empty."
    )


def to_handoffs(plan: Plan, roster: Roster) -> list[Handoff]:
    """Packets from the model's plan, with ids, allowlists and budgets from the roster.

    A recipient that is not on the roster is kept (with no tools), so validation refuses the
    plan instead of this function hiding the model's mistake. For a repeated input name the
    first value wins.
    """
    packets: list[Handoff] = []
    for i, planned in enumerate(plan.packets, start=1):
        spec = roster.get(planned.recipient)
        inputs: dict[str, str] = {}
        for item in planned.inputs:
            inputs.setdefault(item.name, item.value)
        packets.append(
            Handoff(
                id=f"{planned.recipient}-{i}",
                recipient=planned.recipient,
                objective=planned.objective,
                inputs=inputs,
                tool_allow=spec.privileges if spec else (),
                max_steps=spec.max_steps if spec else 1,
                timeout_s=DEFAULT_TIMEOUT_S,
                depends_on=tuple(planned.depends_on),
            )
        )
    return packets


class LlmPlanner:
    """A planner that asks `model` for a `Plan` (structured output) and returns packets.

    A failed model call or an unparseable plan is a `PlanError`, raised before anything runs.
    Inside a traced run the call is recorded for `muster replay` as a worker's model turn is
    (`graph.trace.record_model_call`, node `plan`); a replay swaps the model for one that
    answers from the recording (`with_model`).
    """

    def __init__(
        self, model: BaseChatModel, *, prompt: Callable[[Roster], str] = planner_prompt
    ) -> None:
        self.model = model
        """The chat model that writes the plan."""
        self.prompt = prompt
        """The instructions for a roster (`planner_prompt`, unless a caller tries another)."""
        self._structured = model.with_structured_output(Plan, include_raw=True)

    def with_model(self, model: BaseChatModel) -> LlmPlanner:
        """The same planner (the same instructions) on another model."""
        return LlmPlanner(model, prompt=self.prompt)

    async def __call__(self, request: str, roster: Roster) -> list[Handoff]:
        messages = [SystemMessage(self.prompt(roster)), HumanMessage(request)]
        trace, digest = current_trace(), structured_request(messages, Plan)
        started, label = time.monotonic(), model_label(self.model)
        try:
            out = await self._structured.ainvoke(messages)
        except Exception as error:
            record_model_call(trace, digest, node="plan", error=error, started=started, model=label)
            raise PlanError(
                f"the LLM planner could not produce a plan: {type(error).__name__}: {error}"
            ) from error
        assert isinstance(out, dict)  # include_raw: the reply, and what was parsed from it
        record_model_call(
            trace, digest, node="plan", reply=out["raw"], started=started, model=label
        )
        failed: Exception | None = out.get("parsing_error")
        if failed is not None:
            raise PlanError(
                f"the LLM planner could not produce a plan: {type(failed).__name__}: {failed}"
            ) from failed
        result = out.get("parsed")
        if not isinstance(result, Plan):  # a dict when the provider ignored the schema class
            try:
                result = Plan.model_validate(result)
            except ValueError as error:
                raise PlanError(f"the LLM planner's plan is malformed: {error}") from error
        return to_handoffs(result, roster)


def make_llm_planner(model: BaseChatModel) -> LlmPlanner:
    """A planner that asks `model` for a `Plan` (see `LlmPlanner`)."""
    return LlmPlanner(model)
