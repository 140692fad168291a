"""One model call through a model and its fallbacks, each behind the runtime's model health.

Every caller of a provider model goes through here: the worker loop (`workers.loop`), the
LLM planner (`graph.planners.llm`) and the answer writer (`graph.answer_writer`). A model
may name fallbacks (`MUSTER_<ROLE>_FALLBACKS`, `workers.model_settings`); LangChain's
`with_fallbacks` asks them in order when the one before is unavailable. Each model sits
behind `ModelChain._guarded`, so the per-model circuit breaker and the memory of faults no
retry heals (`workers.model_health`) decide whether it is asked at all (`with_fallbacks`
alone would ask a model whose circuit is open), its calls in flight are capped, and each
outcome is counted; with the store's breaker board, a model another process opened is
skipped here too, and its one probe per cool-down is the fleet's. After the call,
`answered_by` names the model that answered and `fallback_for` the one it stood in for, so
the caller can say so.

This is the workers' layer: the graph uses it, it never imports the graph. The health of the
LangGraph run a call belongs to is read from the run's context (`run_health`), so the
supervisor's own calls share the breakers the workers' calls feed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from pydantic import ValidationError

from workers.contracts import FailureReason
from workers.model_errors import describe, model_failure
from workers.model_health import (
    FALLBACK_REASONS,
    TRANSIENT_PROVIDER_REASONS,
    ModelHealth,
    ModelUnavailable,
)
from workers.models import fallbacks_of, model_label


class ModelFailed(Exception):
    """A model's own failure that no fallback answers (a refusal, a tool call the provider
    could not parse): raised out of the chain, the provider's error as its `__cause__`."""

    def __init__(self, model: str, reason: FailureReason, note: str) -> None:
        super().__init__(note)
        self.model, self.reason, self.note = model, reason, note


def chain_of(
    model: BaseChatModel, bind: Callable[[BaseChatModel], Runnable[Any, Any]]
) -> tuple[tuple[str, Runnable[Any, Any]], ...]:
    """`model` and its fallbacks (`workers.models.fallbacks_of`), in order, each as its
    label and `bind(model)` (the model with its tools, or its structured output)."""
    return tuple((model_label(m), bind(m)) for m in (model, *fallbacks_of(model)))


@dataclass
class ModelChain:
    """One call's models, in order (the first is the model asked for), and how it went.

    Use one per call: `failures` and `answered_by` describe the last `ainvoke`."""

    models: Sequence[tuple[str, Runnable[Any, Any]]]
    """Each model's label and the runnable to ask (`chain_of`)."""
    health: ModelHealth | None = None
    """The runtime's model health; None (Muster's own models) asks each model as it is."""
    answers: Callable[[BaseException], bool] | None = None
    """An error that is the model's answer, not a failure (a plan off its schema): raised
    as it is, and the model counted as having answered (no fallback is asked)."""
    failures: list[ModelUnavailable] = field(default_factory=list)
    """The models that were unavailable or not asked, in order."""
    answered_by: str = ""
    """The label of the model that answered ("" until one has)."""

    @property
    def first(self) -> str:
        """The label of the model asked for."""
        return self.models[0][0]

    @property
    def fallback_for(self) -> str:
        """The model a fallback answered for ("" when the first answered, or none did)."""
        return self.first if self.answered_by and self.answered_by != self.first else ""

    async def ainvoke(self, value: Any, config: RunnableConfig | None = None) -> Any:
        """Ask the first model, then each fallback while the one before is unavailable.
        Raises `ModelUnavailable` when every model was (see `failure`), `ModelFailed` for a
        model's own failure, or what `answers` accepts."""
        self.failures, self.answered_by = [], ""
        first, *rest = [self._guarded(label, runnable) for label, runnable in self.models]
        if not rest:
            return await first.ainvoke(value, config)
        chain = first.with_fallbacks(rest, exceptions_to_handle=(ModelUnavailable,))
        return await chain.ainvoke(value, config)

    def failure(self) -> tuple[FailureReason, str, bool]:
        """The reason and note when every model was unavailable, and whether a retry may
        help: it may if a model that was asked failed in a way that may heal (one not asked,
        its circuit open, waits out its cooldown, not a retry's backoff). The reason is that
        model's, else the first model's; the note names each."""
        failures = self.failures
        healing = [f for f in failures if f.reason in TRANSIENT_PROVIDER_REASONS and f.asked]
        reason = (healing or failures)[0].reason
        if len(failures) == 1:
            return reason, failures[0].note, bool(healing)
        notes = "; ".join(f"{f.model}: {f.note}" for f in failures)
        return reason, f"every model failed: {notes}", bool(healing)

    def _guarded(self, label: str, runnable: Runnable[Any, Any]) -> Runnable[Any, Any]:
        """`runnable` (the model `label`) behind the health: not asked while a fault is
        remembered or its breaker is open, its calls in flight capped, each outcome counted.
        A failure that leaves it unavailable is `ModelUnavailable` (the fallbacks' cue)."""
        health, failures = self.health, self.failures

        def unavailable(reason: FailureReason, note: str, *, asked: bool) -> ModelUnavailable:
            failures.append(ModelUnavailable(label, reason, note, asked=asked))
            return failures[-1]

        async def call(value: Any, config: RunnableConfig) -> Any:
            if health is not None:
                fault = health.fault(label)
                if fault is not None:
                    note = f"{fault.note} (not asked again)"
                    raise unavailable(fault.reason, note, asked=False)
                refusal = await health.admit(label)  # with the store's board, fleet-wide
                if refusal is not None:
                    note = f"model {label} not asked: {refusal}"
                    raise unavailable("unavailable", note, asked=False)
            try:
                if health is None:
                    reply = await runnable.ainvoke(value, config)
                else:
                    async with health.gate(label):  # back-pressure: calls in flight per model
                        reply = await runnable.ainvoke(value, config)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                if self.answers is not None and self.answers(error):
                    if health is not None:
                        await health.settle_call(label, None, "")  # answered, off the mark
                    raise
                reason = model_failure(error)
                note = describe(reason, error)
                if health is not None:
                    health.record(label, reason, note)
                    await health.settle_call(label, reason, note)
                if reason not in FALLBACK_REASONS:
                    raise ModelFailed(label, reason, note) from error
                raise unavailable(reason, note, asked=True) from error
            if health is not None:
                await health.settle_call(label, None, "")
            self.answered_by = label
            return reply

        return RunnableLambda(call, name=f"model {label}")


def provider_error(error: Exception) -> Exception:
    """The provider's own error under the chain's wrapping of it (`ModelFailed`,
    `ModelUnavailable`), else `error` itself."""
    cause = error.__cause__
    wrapped = isinstance(error, (ModelFailed, ModelUnavailable))
    return cause if wrapped and isinstance(cause, Exception) else error


def off_schema(error: BaseException) -> bool:
    """True when a structured-output call worked but its reply is off the schema: the OpenAI
    client parses structured output inside the call, so a reply off the schema raises
    pydantic's `ValidationError` there, and a reply cut at `max_tokens` its
    `LengthFinishReasonError`. The model answered: its fallbacks are not asked."""
    return isinstance(error, (ValidationError, json.JSONDecodeError, OutputParserException)) or (
        type(error).__name__ in ("LengthFinishReasonError", "ContentFilterFinishReasonError")
    )


def run_health() -> ModelHealth | None:
    """The model health of the LangGraph run this call is part of: its runtime context's
    `model_health` (`graph.services.Services`), or None outside a run."""
    try:
        from langgraph.runtime import get_runtime

        context = get_runtime().context
    except Exception:  # outside a runnable context: no run, no shared health
        return None
    health = getattr(context, "model_health", None)
    return health if isinstance(health, ModelHealth) else None
