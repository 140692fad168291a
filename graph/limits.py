"""Run limits: hard caps on steps, tokens and wall-clock time, independent of any model."""

from __future__ import annotations

import time
from dataclasses import dataclass

from graph.state import MusterState


@dataclass(frozen=True)
class RunLimits:
    """Hard limits for one run, checked at every barrier."""

    max_steps: int = 60
    """Total model turns across all workers."""
    max_tokens: int = 200_000
    """Total tokens across all workers."""
    deadline_at: float | None = None
    """Epoch seconds after which no new work starts (None: no deadline)."""

    @classmethod
    def from_options(
        cls, *, max_steps: int | None, max_tokens: int | None, deadline_s: float | None
    ) -> RunLimits:
        """Limits from command-line options; an option left unset keeps its default, and the
        deadline counts from now."""
        defaults = cls()
        return cls(
            max_steps=max_steps or defaults.max_steps,
            max_tokens=max_tokens or defaults.max_tokens,
            deadline_at=time.time() + deadline_s if deadline_s else None,
        )

    def remaining_s(self) -> float | None:
        """Seconds until the deadline, or None when there is none."""
        return None if self.deadline_at is None else self.deadline_at - time.time()


def limit_hit(state: MusterState, limits: RunLimits) -> str | None:
    """Which limit the run has reached, in words, or None."""
    reports = state.get("reports") or []
    steps = sum(r.steps_used for r in reports)
    tokens = sum(r.tokens for r in reports)
    if steps >= limits.max_steps:
        return f"step budget: {steps} of {limits.max_steps} worker steps used"
    if tokens >= limits.max_tokens:
        return f"token budget: {tokens} of {limits.max_tokens} tokens used"
    remaining = limits.remaining_s()
    if remaining is not None and remaining <= 0:
        return "deadline: the run's wall-clock deadline passed"
    return None
