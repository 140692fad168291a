"""An LLM planner: the request → a `Plan` through the model's structured output.

The model fills `Plan` (what a model can decide: who, what, with which facts, after what);
code fills everything else from the roster (packet ids, tool allowlists, budgets: a model
never names a tool in a plan, so it cannot widen one), and the graph's plan node validates
the result like any other plan (`graph.plan_validation.validate_plan`): an unknown worker or a
dependency on an unknown packet is a `PlanError`, duplicates are dropped. The planner itself
never repairs what the model wrote.

The schema the model is given is built per roster (`plan_schema`): `recipient` is an enum of
the roster's workers and `depends_on` an enum of the packet ids a plan can have, so a
grammar-constrained server (llama.cpp, Ollama, OpenAI's strict mode) cannot write another
name at all. A plan that still fails (a parse error, a dependency on a packet the plan does
not hold, a cycle) is a `BadPlanError`, and the plan node asks once more with the errors
(`LlmPlanner.revise`) before the pack's own rules plan instead.

The planner is async (a provider call must not block the event loop inside an async node),
so the plan node awaits the planner's result when it is awaitable. Its model call is recorded
in the run's trace for `muster replay` (request digest, reply, tokens), as workers' turns are.

The model may name fallbacks (`MUSTER_PLANNER_FALLBACKS`): it and they are asked through a
`ModelChain` (`workers.model_chain`), as a worker's model is, behind the run's per-model
breakers, so a planner model that is down is not asked while its circuit is open; the
thread's `supervisor_calls` record which model planned (`fallback_for`: the one it stood in
for). When every one fails, the call fails as it does for one model, naming each.

`inputs` is a list of name/value pairs rather than a JSON object: OpenAI's strict structured
output (the default `with_structured_output` method of `ChatOpenAI`) refuses any object
schema whose `additionalProperties` is not `false`, which rules out `dict[str, str]`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from graph.planners.base import DEFAULT_TIMEOUT_S
from graph.supervisor_spend import note_call
from graph.trace import current_trace, record_model_call, structured_request
from workers.contracts import Handoff
from workers.errors import BadPlanError, PlanError, PlannerCallError, ProviderError
from workers.model_chain import ModelChain, chain_of, off_schema, provider_error, run_health
from workers.model_errors import PERMANENT_PROVIDER_REASONS, describe, model_failure
from workers.model_health import ModelHealth
from workers.models import writes_prose
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


MAX_PLANNED_PACKETS = 12
"""The packet ids `depends_on` may name run to this position: more packets than this for
one request is not a plan a model should write."""


@lru_cache(maxsize=32)
def plan_schema(workers: tuple[str, ...]) -> type[Plan]:
    """`Plan` with `recipient` and `depends_on` constrained to what a plan for these workers
    can name (enums in the JSON schema). Still named `Plan`: the structured-output request
    carries the class name, and a replay's request digest with it."""
    if not workers:
        return Plan
    # Types built at run time from the roster: Any to mypy, enums to pydantic.
    worker: Any = Literal.__getitem__(workers)
    ids = tuple(f"{w}-{n}" for n in range(1, MAX_PLANNED_PACKETS + 1) for w in workers)
    packet_id: Any = Literal.__getitem__(ids)
    fields = PlannedPacket.model_fields
    packet: Any = create_model(
        "PlannedPacket",
        __base__=PlannedPacket,
        recipient=(worker, Field(description=fields["recipient"].description)),
        depends_on=(list[packet_id], Field(description=fields["depends_on"].description)),
    )
    plan: type[Plan] = create_model(
        "Plan",
        __base__=Plan,
        packets=(list[packet], Field(description=Plan.model_fields["packets"].description)),
    )
    return plan


REVISION = (
    "That plan was refused: {problem}. Write the whole plan again. Use only the workers "
    "listed, by their exact name; packet n for worker W has the id 'W-n' (n counts every "
    "packet from 1 in the order written), and depends_on may list only ids of earlier "
    "packets of this plan, usually none."
)
"""The one correction a refused plan gets, with the validation's own words."""


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

    A failed model call is a `PlannerCallError`; a reply that is no plan is a `BadPlanError` (the
    plan node may `revise`). Inside a traced run each call is recorded for `muster replay` as
    a worker's model turn is (`graph.trace.record_model_call`, node `plan`); a replay swaps
    the model for one that answers from the recording (`with_model`).
    """

    def __init__(
        self, model: BaseChatModel, *, prompt: Callable[[Roster], str] = planner_prompt
    ) -> None:
        self.model = model
        """The chat model that writes the plan."""
        self.prompt = prompt
        """The instructions for a roster (`planner_prompt`, unless a caller tries another)."""
        self._own_health: ModelHealth | None = None
        """The model health asked outside a run (inside one, the run's, shared with its
        workers, so a model a worker found down is not asked to plan)."""

    def with_model(self, model: BaseChatModel) -> LlmPlanner:
        """The same planner (the same instructions) on another model."""
        return LlmPlanner(model, prompt=self.prompt)

    async def __call__(self, request: str, roster: Roster) -> list[Handoff]:
        return await self._plan([SystemMessage(self.prompt(roster)), HumanMessage(request)], roster)

    async def revise(self, request: str, roster: Roster, problem: str) -> list[Handoff]:
        """Ask once more, with what was wrong with the refused plan."""
        messages: list[BaseMessage] = [
            SystemMessage(self.prompt(roster)),
            HumanMessage(request),
            HumanMessage(REVISION.format(problem=problem)),
        ]
        return await self._plan(messages, roster)

    def _health(self) -> ModelHealth | None:
        """The run's model health (shared with its workers), else this planner's own; none
        for Muster's own models, which never fail (as in the worker loop)."""
        if not writes_prose(self.model):
            return None
        health = run_health()
        if health is None:
            if self._own_health is None:
                self._own_health = ModelHealth()
            health = self._own_health
        return health

    async def _plan(self, messages: list[BaseMessage], roster: Roster) -> list[Handoff]:
        schema = plan_schema(tuple(roster.workers))
        # The model, then each of its fallbacks while the one before is unavailable.
        chain = ModelChain(
            chain_of(self.model, lambda m: m.with_structured_output(schema, include_raw=True)),
            health=self._health(),
            answers=off_schema,  # a reply off the schema is the model's answer: revised
        )
        trace, digest = current_trace(), structured_request(messages, schema)
        started = time.monotonic()
        try:
            out = await chain.ainvoke(messages)
        except Exception as error:
            cause = provider_error(error)
            record_model_call(
                trace, digest, node="plan", error=cause, started=started, model=chain.first
            )
            raise _call_error(chain, cause) from cause
        assert isinstance(out, dict)  # include_raw: the reply, and what was parsed from it
        label = chain.answered_by or chain.first
        record_model_call(
            trace, digest, node="plan", reply=out["raw"], started=started, model=label
        )
        # Its cost, in the thread's totals, and which model answered if a fallback did.
        note_call("plan", label, out["raw"], fallback_for=chain.fallback_for)
        failed: Exception | None = out.get("parsing_error")
        if failed is not None:
            problem = _problem(failed)
            raise BadPlanError(f"the LLM planner's reply is not a plan: {problem}") from failed
        result = out.get("parsed")
        if not isinstance(result, Plan):  # a dict when the provider ignored the schema class
            try:
                result = schema.model_validate(result)
            except ValueError as error:
                problem = _problem(error)
                raise BadPlanError(f"the LLM planner's plan is malformed: {problem}") from error
        return to_handoffs(result, roster)


def _call_error(chain: ModelChain, error: Exception) -> PlanError:
    """What a failed planner call is: a `BadPlanError` for a reply off its schema (the plan
    node asks again), else a `PlannerCallError` (a `ProviderError` for a fault no retry
    heals, or an endpoint not reached) naming each model asked and why it failed: the
    plan node then fails the ticket as for one model, saying the fallbacks failed too."""
    if off_schema(error):
        return BadPlanError(f"the LLM planner's plan is off its schema: {_problem(error)}")
    if chain.failures:  # every model of the chain was unavailable
        reason, note, _ = chain.failure()
    else:  # a model's own failure (a refusal): no fallback answers it
        reason = model_failure(error)
        note = describe(reason, error)
    if reason in (*PERMANENT_PROVIDER_REASONS, "provider_unreachable"):
        return ProviderError(f"the planner's {note}", reason=reason)
    return PlannerCallError(f"the LLM planner could not produce a plan: {note}")


def _problem(error: BaseException) -> str:
    """What was wrong, in words a model can act on: pydantic's errors as `where: what (got
    value)`, anything else as its one-line text."""
    cause = error if isinstance(error, ValidationError) else error.__cause__
    if isinstance(cause, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']} (got {e.get('input')!r})"
            for e in cause.errors()[:5]
        )[:600]
    return " ".join(str(error).split())[:600]


def make_llm_planner(model: BaseChatModel) -> LlmPlanner:
    """A planner that asks `model` for a `Plan` (see `LlmPlanner`)."""
    return LlmPlanner(model)
