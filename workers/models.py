"""Chat models by name (Muster's own or a provider's), their fallbacks, their replay records.

Muster's own models (the offline one, the scripted one) are `workers.local_models`'. They are
real LangChain `BaseChatModel`s, so the worker loop cannot tell them from a provider
(principle 8): swapping in `openai:gpt-4o-mini` is a configuration change, not a code change.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import ToolCall
from langchain_core.rate_limiters import InMemoryRateLimiter

from servers.digests import replay_digest
from workers.cost import call_cost
from workers.errors import ConfigError, UnknownModelError
from workers.hub.backpressure import rate_limiter_for
from workers.local_models import OfflineChatModel, ScriptedChatModel, ToolBindingModel
from workers.model_settings import (
    CallBounds,
    Role,
    bounds_for,
    fallbacks_for,
    provider_kwargs,
    role_of,
)

ModelFactory = Callable[[str], BaseChatModel]
"""Returns the chat model for a worker, by worker name."""


def request_digest(messages: Sequence[BaseMessage], tools: Iterable[str]) -> str:
    """The digest of one model request, for recording and replay (graph/app/replay.py): each
    message's kind, text, tool calls and the call it answers, and the names of the tools
    offered. Ids and timestamps LangChain adds are left out, so one request digests the same
    on any thread."""
    return replay_digest(
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
    )


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
    return not isinstance(model, ToolBindingModel)


def model_label(model: object) -> str:
    """A chat model's name for traces: the provider's model id (`model_name` or `model`
    on LangChain's provider classes), else the class's LLM type."""
    for attribute in ("model_name", "model"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    # `_llm_type`: LangChain's documented hook for a custom model (tests/test_pinned_internals.py).
    llm_type = getattr(model, "_llm_type", None)
    return llm_type if isinstance(llm_type, str) else type(model).__name__
