"""Run limits: hard caps on steps, tokens and wall-clock time, independent of any model.

The deadline is absolute (epoch seconds). `--deadline` fixes it when the command starts, so
starting the servers counts against it (`open_services` cuts their start-up time to it).
`plan` stores it with the thread (`MusterState.deadline_at`), and `deadline_for` reads it
back: a resume keeps the thread's deadline unless it is given a `--deadline` of its own, so a
crash-and-resume loop never grants a run more time.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from graph.state import MusterState
from workers.errors import ConfigError


@dataclass(frozen=True)
class RunLimits:
    """Hard limits for one run, checked at every barrier."""

    max_steps: int = 60
    """Total model turns across all workers."""
    max_tokens: int = 200_000
    """Total tokens across all workers."""
    max_cost_usd: float | None = None
    """Total money the workers' priced model calls may cost (`--max-cost`, US dollars; None:
    no money budget). Checked at the barrier like tokens (`workers.cost` prices each call)."""
    deadline_at: float | None = None
    """Epoch seconds after which no new work starts (None: this invocation sets none; the
    thread's stored deadline, if any, still holds)."""
    max_packet_recoveries: int = 3
    """The handoff budget of one planned packet: recovery steps that start new work for it (a
    retry, a reassignment, a clarified re-run), counted over it and everything recovery put
    in its place. Past it the packet is given up and escalated (`graph.recover`)."""
    max_recoveries: int = 12
    """The handoff budget of the whole run: the same steps over every packet. Recovery steps
    cost no worker step when the work fails at once (a server that is down), so without this
    a failing pack could hand work around until the deadline."""

    def __post_init__(self) -> None:
        if self.max_packet_recoveries < 0 or self.max_recoveries < 0:
            raise ConfigError(
                "recovery budgets must be 0 or more, not "
                f"{self.max_packet_recoveries} per packet and {self.max_recoveries} per run"
            )
        if self.deadline_at is not None and not math.isfinite(self.deadline_at):
            raise ConfigError(f"deadline_at must be a finite time, not {self.deadline_at}")

    @classmethod
    def from_options(
        cls,
        *,
        max_steps: int | None,
        max_tokens: int | None,
        deadline_s: float | None,
        max_cost_usd: float | None = None,
    ) -> RunLimits:
        """Limits from command-line options; an option left unset keeps its default, and the
        deadline counts from now. A deadline that is not a finite number of seconds above 0
        (nan, inf, 0, -1) is a `ConfigError`."""
        if deadline_s is not None and not (math.isfinite(deadline_s) and deadline_s > 0):
            raise ConfigError(
                f"--deadline must be a finite number of seconds above 0, not {deadline_s}"
            )
        defaults = cls()
        return cls(
            max_steps=max_steps or defaults.max_steps,
            max_tokens=max_tokens or defaults.max_tokens,
            max_cost_usd=max_cost_usd,
            deadline_at=time.time() + deadline_s if deadline_s is not None else None,
        )

    def remaining_s(self, state: MusterState | None = None) -> float | None:
        """Seconds until the deadline in force (`deadline_for`), or None when there is none."""
        deadline = deadline_for(state, self) if state is not None else self.deadline_at
        return None if deadline is None else deadline - time.time()

    def cut(self, seconds: float, *, floor_s: float = 0.1) -> float:
        """`seconds`, cut to what this invocation's deadline leaves (never below `floor_s`, so
        a wait past the deadline still ends at once rather than not starting). A cut is
        rounded down to the hundredth: it shows in messages ("did not start in 0.28s")."""
        remaining = self.remaining_s()
        if remaining is None or remaining >= seconds:
            return seconds
        return max(floor_s, math.floor(remaining * 100) / 100)


def deadline_for(state: MusterState, limits: RunLimits) -> float | None:
    """The deadline in force for a thread: this invocation's own (`--deadline`), else the one
    stored with the thread when it started, else none."""
    if limits.deadline_at is not None:
        return limits.deadline_at
    stored = state.get("deadline_at")
    return stored if isinstance(stored, int | float) and math.isfinite(stored) else None


def limit_hit(state: MusterState, limits: RunLimits) -> str | None:
    """Which limit the run has reached, in words, or None."""
    reports = state.get("reports") or []
    steps = sum(r.steps_used for r in reports)
    tokens = sum(r.tokens for r in reports)
    if steps >= limits.max_steps:
        return f"step budget: {steps} of {limits.max_steps} worker steps used"
    if tokens >= limits.max_tokens:
        return f"token budget: {tokens} of {limits.max_tokens} tokens used"
    if limits.max_cost_usd is not None:
        cost = sum(r.cost_usd for r in reports)
        if cost >= limits.max_cost_usd:
            return f"cost budget: ${cost:.4f} of ${limits.max_cost_usd:.4f} spent"
    remaining = limits.remaining_s(state)
    if remaining is not None and remaining <= 0:
        return "deadline: the run's wall-clock deadline passed"
    return None
