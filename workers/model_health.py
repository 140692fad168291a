"""What Muster has learnt about its models' providers during a runtime: the faults no retry
heals, so nothing asks again.

A wrong API key, an exhausted quota or a model name the provider does not serve fails
every call the same way. Without this, each worker, each retry and each escalation asked the
provider again (and waited out the client's retries), and the cause drowned in a list of
failed packets. The first such failure is recorded here, keyed by the model's label; every
later turn on that model ends at once with the same reason and note, without a request.
One `ModelHealth` lives in the runtime's services, so a batch's later tickets learn from
its first (the same memory the hub keeps of a server that is down).
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field

from workers.contracts import FailureReason
from workers.hub.backpressure import SharedBreakers
from workers.hub.outcomes import CallOutcome
from workers.model_errors import PERMANENT_PROVIDER_REASONS

TRANSIENT_PROVIDER_REASONS: tuple[FailureReason, ...] = (
    "unavailable",
    "provider_unreachable",
    "model_timeout",
)
"""Failed calls that may heal: counted by the model's circuit breaker."""
FALLBACK_REASONS: tuple[FailureReason, ...] = (
    *TRANSIENT_PROVIDER_REASONS,
    *PERMANENT_PROVIDER_REASONS,
)
"""A model that failed so is unavailable: the next of its fallbacks is asked. (A refusal,
or a tool call the provider could not parse, is the model's answer: no fallback.)"""
DEFAULT_MODEL_IN_FLIGHT = 8
"""Calls to one provider model at once unless `MUSTER_MODEL_MAX_IN_FLIGHT` says otherwise."""


@dataclass(frozen=True)
class ModelFault:
    """A provider fault that will not heal by asking again."""

    model: str
    reason: FailureReason
    note: str
    """The first failure's one line: the kind, what to do, the provider's words."""


@dataclass
class ModelHealth(SharedBreakers):
    """Permanent provider faults, by model label (see the module docstring), and per provider
    model the same circuit breaker the hub keeps per server (`SharedBreakers`): after failed
    calls in a row that may heal (down, unreachable, timed out), the model is not asked for
    a cooldown, then probed once. With the store's board set (`open_services` does), an
    open model is seen by every process on the store (its key `model:<label>`), and one
    probe per cool-down goes out for all of them; without one, this process's alone."""

    prefix: str = "model:"
    faults: dict[str, ModelFault] = field(default_factory=dict)
    _gates: dict[str, asyncio.Semaphore] = field(default_factory=dict)

    def gate(self, model: str) -> asyncio.Semaphore:
        """`model`'s in-flight cap (`MUSTER_MODEL_MAX_IN_FLIGHT`, else 8)."""
        if model not in self._gates:
            raw = os.environ.get("MUSTER_MODEL_MAX_IN_FLIGHT", "")
            limit = int(raw) if raw.isdigit() and int(raw) > 0 else DEFAULT_MODEL_IN_FLIGHT
            self._gates[model] = asyncio.Semaphore(limit)
        return self._gates[model]

    def count(self, model: str, reason: FailureReason | None, note: str) -> None:
        """Count one call's outcome on `model`'s breaker (None: it answered)."""
        if reason is None:
            self.breaker(model).record(CallOutcome.OK, "")
        elif reason in TRANSIENT_PROVIDER_REASONS:
            self.breaker(model).record(CallOutcome.UNAVAILABLE, note)

    async def settle_call(self, model: str, reason: FailureReason | None, note: str) -> None:
        """`count`, and tell the board (`SharedBreakers.settle`): an answer closes the
        model's open circuit for every process, a circuit that opened here opens it for
        them. A failure that is not the provider's health leaves the breaker as it is."""
        if reason is None:
            await self.settle(model, CallOutcome.OK, "")
        elif reason in TRANSIENT_PROVIDER_REASONS:
            await self.settle(model, CallOutcome.UNAVAILABLE, note)

    def fault(self, model: str) -> ModelFault | None:
        """The fault recorded for `model`, if any."""
        return self.faults.get(model)

    def record(self, model: str, reason: FailureReason, note: str) -> None:
        """Remember a failed call's reason if it is one no retry heals (the first wins)."""
        if reason in PERMANENT_PROVIDER_REASONS and model not in self.faults:
            self.faults[model] = ModelFault(model, reason, note)


class ModelUnavailable(Exception):
    """One model of a fallback chain could not answer (`FALLBACK_REASONS`), or was not asked
    (its breaker open, a fault remembered): LangChain's `with_fallbacks` asks the next."""

    def __init__(self, model: str, reason: FailureReason, note: str, *, asked: bool) -> None:
        super().__init__(f"{model}: {note}")
        self.model, self.reason, self.note, self.asked = model, reason, note, asked


class TransientModelFailure(Exception):
    """Every model a worker may use failed in a way that may heal, at least one of them
    after being asked: raised out of the worker so that the one retry layer, LangGraph's
    `RetryPolicy` on `dispatch` (`graph.retries`), runs it again after a backoff. Raised
    only on attempts before the last; the last ends the worker with a report instead."""

    def __init__(self, reason: FailureReason, note: str) -> None:
        super().__init__(note)
        self.reason, self.note = reason, note


PREFLIGHT_ENV = "MUSTER_MODEL_PREFLIGHT"
"""`0` turns the provider preflight off (`preflight`)."""


async def preflight(model: object, *, timeout_s: float = 10.0) -> None:
    """Ask a provider model for one token before a command runs anything, so a refused key,
    an exhausted quota or an unknown model reaches the terminal in one line within a second
    or two, instead of after servers start and every worker has failed (`ProviderError`,
    exit 7 to 10); an endpoint that cannot be reached too. A failure that may heal (a
    timeout, a 5xx, a rate limit) is left to the run. Muster's own
    models, and `MUSTER_MODEL_PREFLIGHT=0`, skip it. It costs one token of output."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import HumanMessage

    from workers.errors import ProviderError
    from workers.model_errors import describe, model_failure
    from workers.models import fallbacks_of, writes_prose

    if os.environ.get(PREFLIGHT_ENV, "1") == "0" or not isinstance(model, BaseChatModel):
        return
    if not writes_prose(model):
        return
    first: ProviderError | None = None
    # A model with fallbacks passes if any of them answers: the run falls back to it.
    for candidate in (model, *fallbacks_of(model)):
        try:
            await asyncio.wait_for(
                candidate.bind(max_tokens=1).ainvoke([HumanMessage("ping")]), timeout=timeout_s
            )
            return
        except Exception as error:  # named below; anything that may heal is the run's
            reason = model_failure(error)
            # Unreachable counts here: at a command's start it is a wrong URL or a server
            # not started, and the run would only wait out every worker's retries to say so.
            if reason not in (*PERMANENT_PROVIDER_REASONS, "provider_unreachable"):
                return
            first = first or ProviderError(describe(reason, error), reason=reason)
    if first is not None:
        raise first from None
