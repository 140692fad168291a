"""The worker loop: model turn → tool calls through the hub → observations → repeat.

It returns a `Report` and never raises for anything a tool or a model can do (principle 2):
a budget run out, a dead backend, a refused tool or a loop each becomes a typed `reason`.
The packet's wall-clock `timeout_s` is not enforced here but by the `Send` timeout in the
graph, so a stuck worker is cancelled by LangGraph itself.

`run_worker` only sequences small steps. They share one `WorkerRun` (the run's mutable
state), and each step that can end the run says so by returning a `RunEnd` value, which
`_report` turns into the `Report`. What the model is offered (the tool belt, bound once per
model and tool set) is `workers.tool_belt`'s.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.tool import ToolCall

from workers.contracts import (
    FailureReason,
    Finding,
    Handoff,
    ProposedAction,
    Report,
    ToolCallRecord,
    canonical_json,
)
from workers.control_tools import (
    CONTROL_TOOL_NAMES,
    ControlStop,
    read_control_call,
)
from workers.cost import call_cost
from workers.hub import COUNTED_FAILURES, CallOutcome, ToolCallResult
from workers.model_chain import ModelChain, ModelFailed
from workers.model_errors import describe, model_failure
from workers.model_health import ModelHealth, TransientModelFailure
from workers.models import model_label, recorded_reply, request_digest
from workers.packet_prompt import render_packet
from workers.proposals import review_proposals
from workers.roster import WorkerSpec
from workers.text_tool_calls import tool_calls_in_text
from workers.tool_belt import RunEnd, ToolBelt, offer_tools

if TYPE_CHECKING:  # the hub loads the MCP SDK, only once a hub runs
    from workers.hub import ToolHub

LOOP_REPEATS = 3
"""The same call with the same arguments this many times is a loop."""

StepListener = Callable[[dict[str, Any]], Awaitable[None]]
"""Receives one event per worker step (model turn or tool call), for tracing and progress."""


@dataclass
class WorkerRun:
    """The mutable state of one worker run, shared by the steps of the loop."""

    packet: Handoff
    """The packet being worked: all the worker may see."""
    spec: WorkerSpec
    """The worker's roster entry (what it may propose)."""
    on_step: StepListener | None
    """Where step events go, if anywhere."""
    started: float
    """`time.monotonic()` when the run began."""
    messages: list[BaseMessage]
    """The model's history: the packet prompt, its turns, the observations."""
    findings: list[Finding]
    """The shared facts first (F1, F2, ...), then one per successful tool call."""
    given: int
    """How many of `findings` are shared facts the run was given."""
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    """Every hub call attempted, refused and failed ones included."""
    proposals: list[ProposedAction] = field(default_factory=list)
    """What the model proposed; reviewed only when the report is built."""
    repeats: Counter[str] = field(default_factory=Counter)
    """How often each exact call (name plus canonical arguments) was made: the loop guard."""
    steps: int = 0
    """Model turns taken."""
    tokens: int = 0
    """Tokens the model reported."""
    cost_usd: float = 0.0
    """What the priced model calls cost (`workers.cost`)."""
    unpriced_calls: int = 0
    """Model calls the price table does not know."""
    corrected: bool = False
    """Whether the model was told once to call one of its tools (it answered without)."""
    model: str = ""
    """The model's label, for `health`."""
    health: ModelHealth | None = None
    """The runtime's memory of provider faults that will not heal, if it keeps one."""
    answered_by: str = ""
    """The label of the provider model that answered the last turn (a fallback, maybe)."""
    retry_transient: bool = False
    """Raise `TransientModelFailure` when every model failed in a way that may heal, for
    the dispatch node's `RetryPolicy` to run the worker again (`graph.retries`)."""

    @classmethod
    def start(
        cls, packet: Handoff, *, spec: WorkerSpec, on_step: StepListener | None, started: float
    ) -> WorkerRun:
        """A fresh run: shared facts the supervisor resolved are evidence from the start."""
        facts = [fact.model_copy(update={"id": f"F{i}"}) for i, fact in enumerate(packet.facts, 1)]
        return cls(
            packet=packet,
            spec=spec,
            on_step=on_step,
            started=started,
            messages=render_packet(packet, spec=spec),
            findings=facts,
            given=len(facts),
        )

    @property
    def own_findings(self) -> list[Finding]:
        """Findings from this run's own calls: a success must rest on one of these."""
        return self.findings[self.given :]

    def outcomes(self) -> list[CallOutcome]:
        """How each hub call ended, in order."""
        return [CallOutcome(r.outcome) for r in self.tool_calls]

    async def emit(self, event: dict[str, Any]) -> None:
        """Send a step event to the listener, if there is one."""
        if self.on_step is not None:
            await self.on_step(event)


async def run_worker(
    packet: Handoff,
    *,
    spec: WorkerSpec,
    hub: ToolHub,
    model: BaseChatModel,
    on_step: StepListener | None = None,
    health: ModelHealth | None = None,
    retry_transient: bool = False,
) -> Report:
    """Run one worker on one packet and return its `Report`. With `health`, a model whose
    provider already refused for good (a bad key, no quota, an unknown model) is not asked
    again, nor one whose breaker is open: its fallbacks are asked instead, and with none
    left the run ends with the reason. `retry_transient`: raise `TransientModelFailure`
    instead when that reason may heal (the dispatch node's retry, `graph.retries`)."""
    started = time.monotonic()
    belt = await offer_tools(packet, spec=spec, hub=hub, model=model)
    if isinstance(belt, RunEnd):
        return _report_without_tools(packet, belt)
    run = WorkerRun.start(packet, spec=spec, on_step=on_step, started=started)
    run.model, run.health = model_label(model), health
    run.retry_transient = retry_transient
    end: RunEnd | None = None
    while end is None:
        end = await _step(run, belt, hub)
    return _report(run, end)


async def _step(run: WorkerRun, belt: ToolBelt, hub: ToolHub) -> RunEnd | None:
    """One model turn and what it asked for; a `RunEnd` once the run is over."""
    # The corrective turn (`NO_TOOL_CORRECTION`) is the loop's, not the worker's: one more.
    if run.steps >= run.packet.max_steps + int(run.corrected):
        return _out_of_budget(run)
    reply = await _model_turn(run, belt)
    if isinstance(reply, RunEnd):
        return reply
    if not reply.tool_calls:
        written = tool_calls_in_text(str(reply.content), set(belt.aliases), turn=run.steps)
        if not written:
            return _final_answer(run, str(reply.content), belt)
        # A weak model wrote its calls as text: they are its calls, run like native ones
        # (and refused like them). The history carries them as tool calls, so the results
        # that follow answer a call, as every provider's message format requires.
        reply.tool_calls = written
        await run.emit({"kind": "text_tool_calls", "step": run.steps, "calls": len(written)})
    # The history keeps the aliases the model used; everything past here (control
    # handling, loop guard, hub, records, findings, events) sees exact names. A name
    # that is no offered alias stays as sent, so the hub refuses it: never a guess.
    resolved = [_resolve(call, belt.aliases) for call in reply.tool_calls]
    end = _handle_control(run, [c for c in resolved if c["name"] in CONTROL_TOOL_NAMES])
    if end is not None:
        return end
    calls = [c for c in resolved if c["name"] not in CONTROL_TOOL_NAMES]
    return await _call_tools(run, calls, hub) if calls else None


async def _model_turn(run: WorkerRun, belt: ToolBelt) -> AIMessage | RunEnd:
    """One model call, counted against the budget; a provider error is a value at this
    boundary (principle 2), so it ends the run with its reason instead of raising (except
    `TransientModelFailure`, for the dispatch node's retry).

    A provider model is asked through a `ModelChain` (`workers.model_chain`): it and its
    fallbacks, each behind the runtime's model health. Traced runs record the call for
    `muster replay`: the request's digest and the response (or the error) go on the step
    event; an untraced run computes nothing."""
    health = run.health if belt.provider else None  # Muster's own models never fail
    if health is not None and not belt.fallbacks:  # ends before a step, as it always did
        fault = health.fault(run.model)
        if fault is not None:
            return RunEnd(fault.reason, f"{fault.note} (not asked again)")
        # Only a look: the chain below takes the probe after a cool-down (`Breaker.waiting`).
        refusal = health.breaker(run.model).waiting()
        if refusal is not None:
            return RunEnd("unavailable", f"model {run.model} not asked: {refusal}")
    run.steps += 1
    turn_started = time.monotonic()
    # Digested before the call: the reply is appended to the same list.
    request = request_digest(run.messages, belt.aliases) if run.on_step is not None else None
    chain = ModelChain(((run.model, belt.runnable), *belt.fallbacks), health=health)
    try:
        if health is None:
            reply = await belt.runnable.ainvoke(run.messages)
        else:
            reply = await chain.ainvoke(run.messages)
            run.answered_by = chain.answered_by
    except asyncio.CancelledError:
        raise
    except Exception as error:
        await run.emit(
            {
                "kind": "model",
                "step": run.steps,
                "outcome": "error",
                "request": request,
                "error": [type(error).__name__, str(error)],
            }
        )
        if isinstance(error, ModelFailed):
            return RunEnd(error.reason, error.note)
        if chain.failures:  # every model of the chain was unavailable
            return _unavailable(run, *chain.failure())
        reason = model_failure(error)
        return RunEnd(reason, describe(reason, error))
    assert isinstance(reply, AIMessage)
    usage: dict[str, Any] = dict(reply.usage_metadata or {})
    tokens = int(usage.get("total_tokens", 0))
    run.tokens += tokens
    read, written = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
    price = call_cost(run.answered_by or run.model, read, written)
    if price.usd is None:
        run.unpriced_calls += 1
    else:
        run.cost_usd += price.usd
    run.messages.append(reply)
    await run.emit(
        {
            "kind": "model",
            "step": run.steps,
            "outcome": "tool_calls" if reply.tool_calls else "final",
            "duration_ms": round((time.monotonic() - turn_started) * 1000, 1),
            "tokens": tokens,
            "input_tokens": read,
            "output_tokens": written,
            "cost_usd": price.usd,
            "request": request,
            "response": recorded_reply(reply) if request is not None else None,
        }
    )
    return reply


def _unavailable(run: WorkerRun, reason: FailureReason, note: str, healing: bool) -> RunEnd:
    """The end of a run whose every model was unavailable; raised instead, for the dispatch
    node's retry, when it may heal and the run asks for it."""
    if run.retry_transient and healing:
        raise TransientModelFailure(reason, note)
    return RunEnd(reason, note)


def _resolve(call: ToolCall, aliases: dict[str, str]) -> ToolCall:
    """`call` under the exact name its alias stands for, or unchanged if it is no alias."""
    return ToolCall(name=aliases.get(call["name"], call["name"]), args=call["args"], id=call["id"])


def _handle_control(run: WorkerRun, calls: list[ToolCall]) -> RunEnd | None:
    """Control calls never reach the hub: a question or a refusal ends the run; a proposal
    is kept for review at the end, and the model is told that a human decides."""
    for call in calls:
        decision = read_control_call(call)
        if isinstance(decision, ControlStop):
            return RunEnd(decision.reason, decision.note)
        run.proposals.append(decision)
        run.messages.append(
            ToolMessage("proposal noted; a human decides", tool_call_id=call["id"] or "")
        )
    return None


async def _call_tools(run: WorkerRun, calls: list[ToolCall], hub: ToolHub) -> RunEnd | None:
    """One turn's tool calls through the hub (which checks the allowlist), unless the loop
    guard ends the run first."""
    end = _loop_guard(run, calls)
    if end is not None:
        return end
    # Calls of one turn are independent, so they run concurrently on the shared sessions.
    results = await asyncio.gather(
        *(hub.call(call["name"], dict(call["args"]), run.packet.tool_allow) for call in calls)
    )
    for call, result in zip(calls, results, strict=True):
        await _observe(run, call, result)
    return None


def _loop_guard(run: WorkerRun, calls: list[ToolCall]) -> RunEnd | None:
    """Count each exact call; the `LOOP_REPEATS`th identical one ends the run as a `loop`,
    since a model stuck on one call would otherwise spend its whole budget on it."""
    for call in calls:
        key = call["name"] + canonical_json(call["args"])
        run.repeats[key] += 1
        if run.repeats[key] >= LOOP_REPEATS:
            return RunEnd(
                "loop",
                f"loop guard: {call['name']} called {run.repeats[key]} times with the same "
                f"arguments {canonical_json(call['args'])}",
            )
    return None


async def _observe(run: WorkerRun, call: ToolCall, result: ToolCallResult) -> None:
    """Record one hub result: a call record always, a finding only when it succeeded (so
    every finding is evidence), the text back to the model, and a step event."""
    call_id, args = call["id"] or "", dict(call["args"])
    outcome, duration_ms = str(result.outcome), round(result.duration_ms, 1)
    run.tool_calls.append(
        ToolCallRecord(
            id=call_id, tool=call["name"], args=args, outcome=outcome, duration_ms=duration_ms
        )
    )
    if result.ok:
        finding_id = f"F{len(run.findings) + 1}"
        run.findings.append(
            Finding(
                id=finding_id,
                tool=call["name"],
                call_id=call_id,
                args=args,
                observation=result.text,
            )
        )
    run.messages.append(ToolMessage(result.text, tool_call_id=call_id))
    await run.emit(
        {
            "kind": "tool",
            "step": run.steps,
            "tool": call["name"],
            "outcome": outcome,
            "duration_ms": duration_ms,
            "args": args,  # with `result`: the MCP call as `muster replay` serves it again
            "result": result.text,
        }
    )


_MODEL_MISTAKES = (CallOutcome.UNKNOWN_TOOL, CallOutcome.NOT_ALLOWED)


def _failure_reason(outcomes: list[CallOutcome]) -> FailureReason:
    """The reason when no call gave a usable result: the most specific failure. A model that
    only called tools it was not given, or only with arguments their schemas refuse, made a
    mistake of its own (`unknown_tool`, `bad_arguments`): no backend is to blame."""
    if outcomes and all(o is CallOutcome.UNAVAILABLE for o in outcomes):
        return "unavailable"
    if outcomes and all(o in (CallOutcome.TIMEOUT, CallOutcome.UNAVAILABLE) for o in outcomes):
        return "timeout"
    if outcomes and all(o in _MODEL_MISTAKES for o in outcomes):
        return "unknown_tool"
    if outcomes and all(o in (*_MODEL_MISTAKES, CallOutcome.BAD_ARGUMENTS) for o in outcomes):
        return "bad_arguments"
    return "tool_error"


def _out_of_budget(run: WorkerRun) -> RunEnd:
    """Steps ran out. If some tool never answered (each of its calls a tool error, a timeout
    or an unavailable server), the steps went on asking a failing backend: that backend is
    the cause, and the reason says so (`tool_error`, `timeout`, `unavailable`), so recovery
    does not retry it with more steps (one retry layer: graph/retries.py). Only a run whose
    tools all answered at some point reports `budget`, which recovery may retry bigger."""
    per_tool: dict[str, list[CallOutcome]] = {}
    for record in run.tool_calls:
        per_tool.setdefault(record.tool, []).append(CallOutcome(record.outcome))
    failing = [
        outcome
        for outcomes in per_tool.values()
        if all(o in COUNTED_FAILURES for o in outcomes)
        for outcome in outcomes
    ]
    return RunEnd(
        _failure_reason(failing) if failing else "budget",
        f"stopped after {run.steps} of {run.packet.max_steps} steps without an answer",
    )


NO_TOOL_CORRECTION = (
    "You answered without calling a tool. You must call one of these tools to establish the "
    "facts before you answer: {tools}. Call it now as a tool call, not as text."
)
"""The one corrective turn a worker that answered without its tools gets."""


def _final_answer(run: WorkerRun, note: str, belt: ToolBelt) -> RunEnd | None:
    """A final answer is ok if it rests on at least one observation of its own (shared facts
    do not count), or if the worker was given no tool to try; otherwise the failed calls say
    why. A worker given tools that called none has not done its job (a weak model often
    writes its tool call as text): it is told once to call one, then fails `no_tool_call`."""
    if run.own_findings:
        return RunEnd(None, note)
    if run.tool_calls:
        return RunEnd(_failure_reason(run.outcomes()), note)
    tools = sorted({name for name in belt.aliases.values() if name not in CONTROL_TOOL_NAMES})
    if not tools:
        return RunEnd(None, note)
    if not run.corrected:
        run.corrected = True
        run.messages.append(HumanMessage(NO_TOOL_CORRECTION.format(tools=", ".join(tools))))
        return None
    return RunEnd("no_tool_call", f"answered without calling any of {tools}: {note[:200]}")


CONCLUSION_PREFIX = "Conclusion: "
"""How a final message marks its conclusion; a message without one is all conclusion."""


def conclusion_of(text: str) -> str:
    """The worker's conclusion from its final message: the `Conclusion:` line if it wrote
    one (the offline model does, after the evidence), else the whole message."""
    for line in reversed(text.splitlines()):
        if line.startswith(CONCLUSION_PREFIX):
            return line[len(CONCLUSION_PREFIX) :].strip()
    return " ".join(text.split())


def _report(run: WorkerRun, end: RunEnd) -> Report:
    """The run's `Report`. Proposals are reviewed only for a success, against the run's
    findings; refused ones are listed in the note so a human sees what was asked."""
    packet, note = run.packet, end.note
    accepted: list[ProposedAction] = []
    if end.reason is None:
        accepted, rejected = review_proposals(
            run.proposals, packet, run.findings, run.spec.proposes
        )
        if rejected:
            note += "\nRejected proposals: " + "; ".join(rejected)
    return Report(
        packet_id=packet.id,
        worker=packet.recipient,
        objective=packet.objective,
        status="ok" if end.reason is None else "failed",
        reason=end.reason,
        findings=run.findings,
        tool_calls=run.tool_calls,
        note=note,
        conclusion=conclusion_of(end.note) if end.reason is None else "",
        model=run.answered_by,
        fallback_for=run.model if run.answered_by and run.answered_by != run.model else "",
        steps_used=run.steps,
        tokens=run.tokens,
        cost_usd=round(run.cost_usd, 8),
        unpriced_calls=run.unpriced_calls,
        duration_ms=round((time.monotonic() - run.started) * 1000, 1),
        attempt=packet.attempt,
        proposed_actions=accepted,
    )


def _report_without_tools(packet: Handoff, end: RunEnd) -> Report:
    """The report when no granted tool is available: the run never started, so it carries
    no findings, steps, tokens or time."""
    return Report(
        packet_id=packet.id,
        worker=packet.recipient,
        objective=packet.objective,
        status="failed",
        reason=end.reason,
        note=end.note,
        attempt=packet.attempt,
    )
