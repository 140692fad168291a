"""Bounds on every provider model call: output tokens, temperature, wall-clock time, retries.

Without them a weak local model kept generating thousands of tokens for a packet Muster had
already cancelled, and one ticket took 406 s. Each role (the planner, the workers, the
answer writer) gets its own `CallBounds`, sensible by default and overridden from the
environment in one place: `MUSTER_MODEL_<FIELD>` for every role, `MUSTER_<ROLE>_<FIELD>`
for one (fields `MAX_TOKENS`, `TEMPERATURE`, `TIMEOUT_S`, `MAX_RETRIES`, `REQUESTS_PER_S`,
`BURST`; roles `PLANNER`, `WORKER`, `WRITER`). The bounds go to the provider's own client
through LangChain's `init_chat_model` keyword arguments, so the HTTP request itself is cut at
the timeout (its connection closed, which also stops a local server's generation); the
offline models need none.

**Rate limits.** `MUSTER_MODEL_REQUESTS_PER_S` (or `MUSTER_<ROLE>_REQUESTS_PER_S`) caps the
requests a provider model is sent per second, through LangChain's own `InMemoryRateLimiter`
(the chat model's `rate_limiter`); `BURST` (default 1) is how many may go at once after a
quiet spell. Unset, a model is not rate-limited (its calls in flight are still capped,
`workers.model_health`; a call waiting for its turn holds its in-flight slot, since the
limiter is the model's own). Roles with the same model and the same rate share one limiter, so
`MUSTER_MODEL_REQUESTS_PER_S=2` holds a model to 2 requests a second whoever asks it.

**Fallbacks.** `MUSTER_MODEL_FALLBACKS` (every role) or `MUSTER_<ROLE>_FALLBACKS` (one role)
names, comma-separated, the `provider:model`s to ask in order when the model before them is
unavailable: its provider down or unreachable, its circuit breaker open, its quota spent, its
key refused, the model unknown (`fallbacks_for`; used by the worker loop, `workers.loop`).

**Retries happen at one layer.** A provider client's own `max_retries` defaults to 0 here:
a client that retries inside one call hides each failure from the model's circuit breaker
(`workers.model_health`) and from the fallbacks, and multiplies every retry above it (the
client's 3 tries under the supervisor's retry were 6 calls a packet to a failing provider).
The one retry layer is LangGraph's `RetryPolicy` on the `dispatch` node
(`graph.retries`), which runs a worker again, with exponential backoff and jitter, when
every model it may use failed in a way that may heal. `MUSTER_MODEL_MAX_RETRIES` still
turns the client's on for a provider that needs it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from workers.errors import ConfigError

Role = Literal["planner", "worker", "writer"]


@dataclass(frozen=True)
class CallBounds:
    """What one model call may cost."""

    max_tokens: int
    """Output tokens per call: a plan, a tool call or an answer all fit well inside."""
    temperature: float
    """0 by default: the same request should get the same plan and the same calls."""
    timeout_s: float
    """Seconds one HTTP request may take before the client gives up on it."""
    max_retries: int
    """Retries of the provider client on errors that may heal (429, 5xx, a dropped link):
    0 by default, since Muster retries at one layer (the module docstring)."""
    requests_per_s: float | None = None
    """Requests per second the model is sent at most (None: no rate limit)."""
    burst: int = 1
    """Requests that may go at once after a quiet spell, under `requests_per_s`."""


DEFAULT_BOUNDS: dict[Role, CallBounds] = {
    "planner": CallBounds(max_tokens=2048, temperature=0.0, timeout_s=60.0, max_retries=0),
    "worker": CallBounds(max_tokens=1024, temperature=0.0, timeout_s=60.0, max_retries=0),
    "writer": CallBounds(max_tokens=1024, temperature=0.0, timeout_s=60.0, max_retries=0),
}


def role_of(caller: str) -> Role:
    """The role a model factory's caller plays: `planner`, `synthesizer` (the answer
    writer) or a worker's name."""
    return "planner" if caller == "planner" else "writer" if caller == "synthesizer" else "worker"


def _parsed(name: str, raw: str, kind: type) -> Any:
    try:
        value = kind(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a {kind.__name__}") from None
    if isinstance(value, float) and not math.isfinite(value) or value < 0:
        raise ConfigError(f"{name}={raw!r} must be a finite number >= 0")
    return value


def bounds_for(role: Role, environ: Mapping[str, str] | None = None) -> CallBounds:
    """The bounds for `role`: its defaults, then `MUSTER_MODEL_*`, then `MUSTER_<ROLE>_*`."""
    env = os.environ if environ is None else environ
    bounds = DEFAULT_BOUNDS[role]
    for prefix in ("MUSTER_MODEL_", f"MUSTER_{role.upper()}_"):
        for field in fields(CallBounds):
            name = prefix + field.name.upper()
            if env.get(name):
                kind = int if field.type in ("int", int) else float  # `float | None`: float
                bounds = replace(bounds, **{field.name: _parsed(name, env[name], kind)})
    if bounds.max_tokens < 1 or bounds.timeout_s <= 0:
        raise ConfigError(f"{role} model bounds need max_tokens >= 1 and timeout_s > 0")
    names = f"MUSTER_MODEL_{{}} or MUSTER_{role.upper()}_{{}}"
    if bounds.requests_per_s is not None and bounds.requests_per_s <= 0:
        where = names.format("REQUESTS_PER_S", "REQUESTS_PER_S")
        raise ConfigError(f"{where} must be > 0 (leave it unset for no rate limit)")
    if bounds.burst < 1:
        raise ConfigError(f"{names.format('BURST', 'BURST')} must be a whole number >= 1")
    return bounds


def fallbacks_for(role: Role, environ: Mapping[str, str] | None = None) -> list[str]:
    """The models `role` falls back to, in order: `MUSTER_<ROLE>_FALLBACKS`, else
    `MUSTER_MODEL_FALLBACKS` (comma-separated `provider:model` names; empty: none)."""
    env = os.environ if environ is None else environ
    raw = env.get(f"MUSTER_{role.upper()}_FALLBACKS") or env.get("MUSTER_MODEL_FALLBACKS") or ""
    names = [name.strip() for name in raw.split(",") if name.strip()]
    for name in names:
        provider, sep, model = name.partition(":")
        if not sep or not provider or not model:
            raise ConfigError(f"model fallback {name!r}: use provider:model, e.g. openai:gpt-4o")
    return list(dict.fromkeys(names))


def provider_kwargs(provider: str, bounds: CallBounds) -> dict[str, Any]:
    """`bounds` as the keyword arguments of the provider's LangChain chat model class."""
    if provider == "ollama":  # ChatOllama: num_predict, and the httpx client's timeout
        return {
            "temperature": bounds.temperature,
            "num_predict": bounds.max_tokens,
            "client_kwargs": {"timeout": bounds.timeout_s},
        }
    common = {"temperature": bounds.temperature, "max_tokens": bounds.max_tokens}
    if provider in ("openai", "anthropic", "azure_openai", "groq", "mistralai", "deepseek"):
        return {**common, "timeout": bounds.timeout_s, "max_retries": bounds.max_retries}
    return common
