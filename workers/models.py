"""Chat models: the offline model that runs everything here, a scripted one for tests, and
real providers chosen by name.

Both local models are real LangChain `BaseChatModel`s with `bind_tools`, so the worker loop
cannot tell them from a provider (principle 8): swapping in `openai:gpt-4o-mini` is a
configuration change, not a code change.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
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
from langchain_core.rate_limiters import InMemoryRateLimiter
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from workers.contracts import canonical_json, sha256_hex
from workers.control_tools import ASK_CLARIFICATION, CONTROL_TOOL_NAMES
from workers.cost import call_cost
from workers.errors import ConfigError, UnknownModelError
from workers.hub.backpressure import rate_limiter_for
from workers.model_settings import (
    CallBounds,
    Role,
    bounds_for,
    fallbacks_for,
    provider_kwargs,
    role_of,
)
from workers.packet_prompt import read_facts, read_packet

ModelFactory = Callable[[str], BaseChatModel]
"""Returns the chat model for a worker, by worker name."""


def request_digest(messages: Sequence[BaseMessage], tools: Iterable[str]) -> str:
    """The digest of one model request, for recording and replay (graph/app/replay.py): each
    message's kind, text, tool calls and the call it answers, and the names of the tools
    offered. Ids and timestamps LangChain adds are left out, so one request digests the same
    on any thread."""
    return sha256_hex(
        [
            sorted(tools),
            [
                [
                    m.type,
                    m.content,
                    [[c["name"], c["args"], c["id"]] for c in getattr(m, "tool_calls", ())],
                    getattr(m, "tool_call_id", None),
                ]
                for m in messages
            ],
        ]
    )[:24]


def recorded_reply(reply: AIMessage) -> dict[str, Any]:
    """A model's reply as the trace records it (`replayed_reply` reads it back)."""
    return {
        "content": reply.content,
        "tool_calls": [
            {"name": c["name"], "args": c["args"], "id": c["id"]} for c in reply.tool_calls
        ],
        "usage": dict(reply.usage_metadata or {}),
    }


def replayed_reply(recorded: dict[str, Any]) -> AIMessage:
    """The reply `recorded_reply` recorded, as a fresh message."""
    usage = recorded.get("usage") or None
    return AIMessage(
        content=recorded.get("content") or "",
        tool_calls=[
            ToolCall(name=c["name"], args=c["args"], id=c["id"])
            for c in recorded.get("tool_calls") or []
        ],
        usage_metadata=UsageMetadata(**usage) if usage else None,  # type: ignore[typeddict-item]
    )


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


class _ToolBindingModel(BaseChatModel):
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


class OfflineChatModel(_ToolBindingModel):
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


class ScriptedChatModel(_ToolBindingModel):
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


def offline_factory(*, turn_delay_s: float = 0.0) -> ModelFactory:
    """One offline model shared by every worker (it keeps no per-worker state)."""
    model = OfflineChatModel(turn_delay_s=turn_delay_s)
    return lambda worker: model


def scripted_factory(
    scripts: dict[str, list[Any]], *, default: ModelFactory | None = None
) -> ModelFactory:
    """Scripted models per worker; workers without a script use `default` (offline)."""
    models = {worker: ScriptedChatModel(turns=turns) for worker, turns in scripts.items()}
    fallback = default or offline_factory()
    return lambda worker: models[worker] if worker in models else fallback(worker)


_FALLBACKS: dict[int, tuple[weakref.ref[BaseChatModel], tuple[BaseChatModel, ...]]] = {}
"""id(model) → (the model, its fallbacks in order); keyed by id as chat models are
unhashable, with a weak reference to tell a live model from a new one reusing a dead id."""


def with_model_fallbacks(model: BaseChatModel, fallbacks: Sequence[BaseChatModel]) -> BaseChatModel:
    """`model`, to be followed by `fallbacks` when it is unavailable (`fallbacks_of`); the
    worker loop chains them with LangChain's `with_fallbacks` (`workers.loop`)."""
    _FALLBACKS[id(model)] = (weakref.ref(model), tuple(fallbacks))
    return model


def fallbacks_of(model: BaseChatModel) -> tuple[BaseChatModel, ...]:
    """The models `model` falls back to, in order (none unless `with_model_fallbacks`)."""
    entry = _FALLBACKS.get(id(model))
    return entry[1] if entry is not None and entry[0]() is model else ()


PROVIDER_EXTRAS = ("openai", "anthropic", "ollama")
"""Providers with an extra of their own in pyproject.toml (`pip install -e '.[openai]'`)."""


def load_model_factory(name: str) -> ModelFactory:
    """The model factory for `--model NAME`.

    `offline` (the default) or `offline:<ms>` for a per-turn delay; otherwise
    `provider:model`, built by LangChain's `init_chat_model` (install the provider extra).
    """
    if name == "offline" or name.startswith("offline:"):
        delay_ms = name.partition(":")[2] or "0"
        try:
            delay_s = float(delay_ms.removesuffix("ms")) / 1000
            if not 0 <= delay_s < 60:  # also refuses nan and inf
                raise ValueError(delay_ms)
            return offline_factory(turn_delay_s=delay_s)
        except ValueError:
            raise UnknownModelError(
                f"unknown model {name!r}: use 'offline' or 'offline:<ms>', e.g. offline:100"
            ) from None
    provider, sep, model_name = name.partition(":")
    if not sep or not provider or not model_name:
        raise UnknownModelError(
            f"unknown model {name!r}: use 'offline' or 'provider:model', e.g. openai:gpt-4o-mini"
        )
    try:
        from langchain.chat_models import init_chat_model
    except ImportError:
        raise UnknownModelError(
            f"model {name!r} needs LangChain's init_chat_model: pip install 'muster[{provider}]'"
        ) from None
    built: dict[Role, BaseChatModel] = {}
    limiters: dict[tuple[str, float, int], InMemoryRateLimiter] = {}

    def rate_limiter(name: str, bounds: CallBounds) -> dict[str, Any]:
        # One limiter per model and rate, shared by the roles that ask it at that rate.
        if bounds.requests_per_s is None:
            return {}
        key = (name, bounds.requests_per_s, bounds.burst)
        if key not in limiters:
            limiters[key] = rate_limiter_for(bounds.requests_per_s, bounds.burst)
        return {"rate_limiter": limiters[key]}

    def build(role: Role) -> BaseChatModel:
        primary = build_one(name, role)
        return with_model_fallbacks(primary, [build_one(f, role) for f in fallbacks_for(role)])

    def build_one(name: str, role: Role) -> BaseChatModel:
        provider, _, model_name = name.partition(":")
        try:
            bounds = bounds_for(role)
            kwargs = {**provider_kwargs(provider, bounds), **rate_limiter(name, bounds)}
            return init_chat_model(model_name, model_provider=provider, **kwargs)
        except ConfigError:
            raise
        except ImportError:  # the provider's LangChain package: Muster's extra installs it
            install = (
                f"install it with: .venv/bin/pip install -e '.[{provider}]' (in the Muster folder)"
                if provider in PROVIDER_EXTRAS
                else "install its LangChain package in .venv"
            )
            raise UnknownModelError(
                f"cannot build model {name!r}: the {provider} provider is not installed; {install}"
            ) from None
        except Exception as error:  # a missing key, an unknown provider: all config
            detail = " ".join(str(error).split())  # one line: the CLI prints errors on one line
            raise UnknownModelError(f"cannot build model {name!r}: {detail}") from None

    def model_for(caller: str) -> BaseChatModel:
        # One model per role (planner, workers, answer writer), each with its own bounds
        # (`workers.model_settings`); every worker shares the workers' one.
        role = role_of(caller)
        if role not in built:
            built[role] = build(role)
        return built[role]

    # Built now: a bad name or a missing package fails before any run; and its price looked
    # up once, so the price table loads here, not on a run's event loop (workers/cost.py).
    worker_model = model_for("worker")
    for model in (worker_model, *fallbacks_of(worker_model)):
        call_cost(model_label(model), 0, 0)
    return model_for


def writes_prose(model: BaseChatModel) -> bool:
    """True for a real model, which may write the answer's prose (then checked by code);
    Muster's own offline and scripted models leave the answer to the deterministic composer."""
    return not isinstance(model, _ToolBindingModel)


def model_label(model: object) -> str:
    """A chat model's name for traces: the provider's model id (`model_name` or `model`
    on LangChain's provider classes), else the class's LLM type."""
    for attribute in ("model_name", "model"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    llm_type = getattr(model, "_llm_type", None)
    return llm_type if isinstance(llm_type, str) else type(model).__name__
