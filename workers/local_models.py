"""Muster's own chat models: the offline one that runs everything here, a scripted one for tests.

Both local models are real LangChain `BaseChatModel`s with `bind_tools`, so the worker loop
cannot tell them from a provider (principle 8): swapping in `openai:gpt-4o-mini` is a
configuration change, not a code change (`workers.models` builds providers by name).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import ToolCall
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from workers.contracts import canonical_json
from workers.control_tools import ASK_CLARIFICATION, CONTROL_TOOL_NAMES
from workers.packet_prompt import read_facts, read_packet


def estimate_tokens(text: str) -> int:
    """About four characters a token: what the offline models report as usage."""
    return max(1, len(text) // 4)


def _usage(messages: Sequence[BaseMessage], reply: AIMessage) -> UsageMetadata:
    prompt = sum(estimate_tokens(str(m.content)) for m in messages)
    completion = estimate_tokens(str(reply.content) + canonical_json(reply.tool_calls))
    return UsageMetadata(
        input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion
    )


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _signature_kept(method: _Method) -> _Method:
    """`method` carrying its own signature. LangChain asks on every model call whether
    `_agenerate` takes `run_manager` (`inspect.signature`, ~70 us a call, about 0.5 ms of a
    ticket's CPU); `inspect.signature` returns a `__signature__` it finds as is."""
    method.__signature__ = inspect.signature(method)  # type: ignore[attr-defined]
    return method


class ToolBindingModel(BaseChatModel):
    """Shared plumbing: OpenAI-format tool binding and async turns with an optional delay."""

    turn_delay_s: float = 0.0
    """Seconds each turn sleeps, to stand in for a real model's latency in benchmarks."""

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools the way providers do: as OpenAI-format function schemas."""
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _reply(self, messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
        raise NotImplementedError

    def _result(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> ChatResult:
        reply = self._reply(messages, list(kwargs.get("tools") or []))
        reply.usage_metadata = _usage(messages, reply)
        return ChatResult(generations=[ChatGeneration(message=reply)])

    @_signature_kept
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.turn_delay_s:
            time.sleep(self.turn_delay_s)
        return self._result(messages, kwargs)

    @_signature_kept
    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.turn_delay_s:
            await asyncio.sleep(self.turn_delay_s)
        return self._result(messages, kwargs)


def _fill_arguments(tool: dict[str, Any], inputs: dict[str, str]) -> dict[str, Any] | None:
    """Arguments for `tool` taken from the packet inputs by parameter name, or None when a
    required parameter has no matching input."""
    parameters = tool.get("parameters") or {}
    properties: dict[str, Any] = parameters.get("properties") or {}
    required = set(parameters.get("required") or [])
    args: dict[str, Any] = {}
    for name, schema in properties.items():
        if name not in inputs:
            continue
        value: Any = inputs[name]
        if isinstance(schema, dict) and schema.get("type") == "integer":
            try:
                value = int(value)
            except ValueError:
                continue
        args[name] = value
    if not required <= set(args):
        return None
    return args


def _missing_arguments(tool: dict[str, Any], inputs: dict[str, str]) -> list[str]:
    """Required parameters of `tool` that no packet input provides."""
    required = (tool.get("parameters") or {}).get("required") or []
    return [name for name in required if name not in inputs]


class OfflineChatModel(ToolBindingModel):
    """A deterministic model that works any ticket from its packet and its tools.

    Each turn it reads the packet prompt (objective and inputs) and the history. It calls,
    in one parallel turn, every offered tool whose required arguments it can fill from the
    inputs and that has not yet succeeded; a failed call is tried once more
    (`attempts_per_call`). When nothing is left to call it finishes with a note built only
    from what the tools returned. Instructions inside tool results are data, never orders.
    """

    attempts_per_call: int = 2
    """How many times one call may be tried before the model gives up on it."""

    @property
    def _llm_type(self) -> str:
        return "muster-offline"

    def _reply(self, messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
        objective, inputs = read_packet(messages)
        calls: dict[str, tuple[str, dict[str, Any]]] = {}
        for message in messages:
            if isinstance(message, AIMessage):
                for call in message.tool_calls:
                    calls[call["id"] or ""] = (call["name"], call["args"])
        attempts: dict[str, int] = {}
        succeeded: set[str] = set()
        observed: list[tuple[str, dict[str, Any], str, bool]] = []
        for name, args, result in read_facts(messages):  # given, so never fetched again
            succeeded.add(name + canonical_json(args))
            observed.append((name, args, result, True))
        for message in messages:
            if isinstance(message, ToolMessage) and message.tool_call_id in calls:
                name, args = calls[message.tool_call_id]
                key = name + canonical_json(args)
                attempts[key] = attempts.get(key, 0) + 1
                ok = not str(message.content).startswith("ERROR")
                if ok:
                    succeeded.add(key)
                observed.append((name, args, str(message.content), ok))

        turn = sum(isinstance(m, AIMessage) for m in messages)
        wanted: list[ToolCall] = []
        unfillable: list[str] = []
        for tool in tools:
            function = tool.get("function", tool)
            filled = _fill_arguments(function, inputs)
            if filled is None:
                if function["name"] not in CONTROL_TOOL_NAMES:  # a hub tool (under its alias)
                    unfillable += _missing_arguments(function, inputs)
                continue
            key = function["name"] + canonical_json(filled)
            if key in succeeded or attempts.get(key, 0) >= self.attempts_per_call:
                continue
            wanted.append(
                ToolCall(name=function["name"], args=filled, id=f"call_{turn}_{len(wanted)}")
            )
        if wanted:
            return AIMessage(content="", tool_calls=wanted)
        offered = {t.get("function", t)["name"] for t in tools}
        if not observed and unfillable and ASK_CLARIFICATION in offered:
            missing = ", ".join(dict.fromkeys(unfillable))
            question = f"To {objective.rstrip('.').lower()}, I need the {missing}. Which is it?"
            call = ToolCall(
                name=ASK_CLARIFICATION, args={"question": question}, id=f"call_{turn}_q"
            )
            return AIMessage(content="", tool_calls=[call])
        return AIMessage(content=_note(objective, inputs, observed))


def _note(
    objective: str, inputs: dict[str, str], observed: list[tuple[str, dict[str, Any], str, bool]]
) -> str:
    """A final note built only from what was observed, so every fact in it has a source."""
    lines = [f"Objective: {objective}"]
    successes = [o for o in observed if o[3]]
    failures = [o for o in observed if not o[3]]
    for name, args, text, _ in successes:
        lines.append(f"- {name}({canonical_json(args)}) returned: {_squash(text)}")
    failed_tools = sorted(
        {name for name, _, _, ok in failures if not ok} - {s[0] for s in successes}
    )
    for name in failed_tools:
        last = [text for n, _, text, _ in failures if n == name][-1]
        lines.append(f"- {name} failed: {_squash(last)}")
    if not observed:
        facts = ", ".join(f"{k}={v}" for k, v in sorted(inputs.items())) or "none"
        lines.append(f"- No tools were used. Known facts: {facts}.")
    # Each sentence names the tool it rests on, so `verify` can tie it to the observation.
    concluded = [f"{c} ({name})" for name, _, text, _ in successes if (c := _conclude(name, text))]
    if concluded:
        lines.append("Conclusion: " + " ".join(dict.fromkeys(concluded)))
    return "\n".join(lines)


def _money(cents: object) -> str:
    return f"${int(str(cents)) / 100:,.2f}" if str(cents).lstrip("-").isdigit() else "?"


def _conclude(tool: str, text: str) -> str:
    """One sentence concluded from one observation, stating only what it says."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return ""
    if not isinstance(data, dict):
        return ""
    name = tool.replace("__", ".").split(".")[-1]
    if name == "find_order":
        count = data.get("charge_count", 0)
        times = {0: "no charges", 1: "one charge", 2: "two charges"}.get(count, f"{count} charges")
        return (
            f"Order {data.get('order_id')} ({data.get('item')}) is {data.get('status')}, with "
            f"{times} of {_money(data.get('amount_cents'))}."
        )
    if name == "refund_status":
        refunded = data.get("refunded_cents", 0)
        return (
            f"{'No refund yet' if not refunded else _money(refunded) + ' refunded'} on order "
            f"{data.get('order_id')}; {_money(data.get('refundable_cents'))} is refundable."
        )
    if name == "check_policy":
        return f"{data.get('policy_id')} governs {str(data.get('topic')).replace('_', ' ')}."
    if name == "get_article":
        return f'{data.get("id")} "{data.get("title")}" has the customer-facing wording.'
    if name == "search_kb":
        ids = [str(r.get("id")) for r in data.get("results") or [] if isinstance(r, dict)]
        return f"The best articles are {', '.join(ids)}." if ids else "No article matched."
    return ""


_TOKEN_BOUNDARY = frozenset(' ,;:{}[]()"')


def _squash(text: str, limit: int = 400) -> str:
    """`text` on one line, cut to `limit` characters at a token boundary: a note that
    stated "1234…" of an observation's 12345 would be an unsupported claim to `verify`
    (an id or amount cut in half), which made every new pack's first answer degraded."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    end = max((i for i, c in enumerate(cut) if c in _TOKEN_BOUNDARY), default=0)
    return cut[: end + 1].rstrip() + "…"


ScriptedTurn = AIMessage | str | BaseException
"""A scripted turn: a message to return, plain text for a final answer, or an error to raise."""


class ScriptedChatModel(ToolBindingModel):
    """Plays exact turns, for tests. Turn k is chosen by how many AI messages the history
    already holds, so a restarted worker replays the same script deterministically."""

    turns: list[Any]
    """The turns, in order (`ScriptedTurn` values). Past the end it answers 'script ended'."""
    calls: int = 0
    """How many turns this model has played; tests read it."""
    seen: list[str] = []
    """Every message text it was shown, so tests can check what a worker could see."""

    @property
    def _llm_type(self) -> str:
        return "muster-scripted"

    def _reply(self, messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
        self.calls += 1
        self.seen.extend(str(m.content) for m in messages)
        turn = sum(isinstance(m, AIMessage) for m in messages)
        if turn >= len(self.turns):
            return AIMessage(content="script ended")
        scripted = self.turns[turn]
        if isinstance(scripted, BaseException):
            raise scripted
        if isinstance(scripted, str):
            return AIMessage(content=scripted)
        return scripted.model_copy(deep=True)
