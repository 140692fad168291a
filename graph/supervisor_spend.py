"""What the supervisor's own model calls cost: the LLM planner's and the answer writer's.

Workers price each model turn into their `Report` (`workers/cost.py`), but the plan and
synthesize nodes call models too, and a bill that triples may be theirs. Each such call is
priced from the same table and kept in the state's `supervisor_calls` (a list reduced with
`operator.add`, so a resume or a follow-up turn adds to it), which `run_totals` sums with the
workers' costs.

Why a context variable: the planner and the answer writer are shared by every ticket of a
process, so they cannot keep "the last call" on themselves; the node opens `counting()` around
its own await, and a call inside it (in the same task) notes itself there.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from workers.cost import call_cost

_CALLS: ContextVar[list[dict[str, Any]] | None] = ContextVar(
    "muster_supervisor_calls", default=None
)


def note_call(node: str, model: str, reply: Any, *, fallback_for: str = "") -> None:
    """Price one supervisor model call from its reply's usage, inside `counting()`; a
    fallback model that answered says which model it stood in for (`fallback_for`)."""
    calls = _CALLS.get()
    if calls is None:
        return
    usage = dict(getattr(reply, "usage_metadata", None) or {})
    read, written = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
    calls.append(
        {
            "node": node,
            "model": model,
            "input_tokens": read,
            "output_tokens": written,
            "cost_usd": call_cost(model, read, written).usd,
            **({"fallback_for": fallback_for} if fallback_for else {}),
        }
    )


@contextmanager
def counting() -> Iterator[list[dict[str, Any]]]:
    """Collect the supervisor model calls made inside the block (the node's own await)."""
    calls: list[dict[str, Any]] = []
    token = _CALLS.set(calls)
    try:
        yield calls
    finally:
        _CALLS.reset(token)


def spend(calls: list[dict[str, Any]]) -> tuple[float, int, int]:
    """The calls' cost in USD, how many the table could not price, and their tokens."""
    priced = sum(c["cost_usd"] for c in calls if c.get("cost_usd") is not None)
    unpriced = sum(1 for c in calls if c.get("cost_usd") is None)
    tokens = sum(int(c.get("input_tokens", 0)) + int(c.get("output_tokens", 0)) for c in calls)
    return priced, unpriced, tokens


def thread_cost(values: Mapping[str, Any]) -> tuple[float, int]:
    """A thread's cost in USD so far and its unpriced calls: every worker report's and every
    supervisor call's (what `show`, `--json`, batch summaries and eval reports all add up)."""
    reports = list(values.get("reports") or [])
    usd, unpriced, _ = spend(list(values.get("supervisor_calls") or []))
    return (
        sum(r.cost_usd for r in reports) + usd,
        sum(r.unpriced_calls for r in reports) + unpriced,
    )
