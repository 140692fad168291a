"""The worker loop: model turn → tool calls through the hub → observations → repeat.

It returns a `Report` and never raises for anything a tool or a model can do (principle 2):
a budget run out, a dead backend, a refused tool or a loop each becomes a typed `reason`.
The packet's wall-clock `timeout_s` is not enforced here but by the `Send` timeout in the
graph, so a stuck worker is cancelled by LangGraph itself.

`run_worker` only sequences small steps. They share one `WorkerRun` (the run's mutable
state, `workers.worker_run`), and each step that can end the run says so by returning a
`RunEnd` value, which `report_for` (`workers.run_report`) turns into the `Report`. What the
model is offered (the tool belt, bound once per model and tool set) is `workers.tool_belt`'s.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.messages.tool import ToolCall

from workers.contracts import (
    FailureReason,
    Finding,
    Handoff,
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
from workers.hub import ToolCallResult
from workers.model_chain import ModelChain, ModelFailed
from workers.model_errors import describe, model_failure
from workers.model_health import ModelHealth, TransientModelFailure
from workers.models import model_label, recorded_reply, request_digest
from workers.roster import WorkerSpec
from workers.run_report import failure_reason, out_of_budget, report_for, report_without_tools
from workers.text_tool_calls import tool_calls_in_text
from workers.tool_belt import RunEnd, ToolBelt, offer_tools
from workers.worker_run import StepListener, WorkerRun

if TYPE_CHECKING:  # the hub loads the MCP SDK, only once a hub runs
    from workers.hub import ToolHub

LOOP_REPEATS = 3
"""The same call with the same arguments this many times is a loop."""


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
        return report_without_tools(packet, belt)
    run = WorkerRun.start(packet, spec=spec, on_step=on_step, started=started)
    run.model, run.health = model_label(model), health
    run.retry_transient = retry_transient
    end: RunEnd | None = None
    while end is None:
        end = await _step(run, belt, hub)
    return report_for(run, end)


async def _step(run: WorkerRun, belt: ToolBelt, hub: ToolHub) -> RunEnd | None:
    """One model turn and what it asked for; a `RunEnd` once the run is over."""
    # The corrective turn (`NO_TOOL_CORRECTION`) is the loop's, not the worker's: one more.
    if run.steps >= run.packet.max_steps + int(run.corrected):
        return out_of_budget(run)
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
        return RunEnd(failure_reason(run.outcomes()), note)
    tools = sorted({name for name in belt.aliases.values() if name not in CONTROL_TOOL_NAMES})
    if not tools:
        return RunEnd(None, note)
    if not run.corrected:
        run.corrected = True
        run.messages.append(HumanMessage(NO_TOOL_CORRECTION.format(tools=", ".join(tools))))
        return None
    return RunEnd("no_tool_call", f"answered without calling any of {tools}: {note[:200]}")
