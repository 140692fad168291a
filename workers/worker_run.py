"""The mutable state of one worker run (`WorkerRun`), shared by the steps of the loop."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage

from workers.contracts import Finding, Handoff, ProposedAction, ToolCallRecord
from workers.hub import CallOutcome
from workers.model_health import ModelHealth
from workers.packet_prompt import render_packet
from workers.roster import WorkerSpec

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
