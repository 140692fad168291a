"""Where Muster retries: one layer, LangGraph's `RetryPolicy` on the `dispatch` node.

Before, a failing backend was retried at four layers stacked on one another, each unaware
of the others: the provider client (`max_retries=2`: 3 HTTP requests a model call, with
its own backoff), the worker (its model calling a failed tool again within its steps), the
supervisor (a packet that ran out of steps retried with double the budget, which a broken
server's errors reached), and every ticket doing it all again. 4 to 6 calls a ticket went
to a dead backend, with no jitter. Now:

- **The provider client** (`workers/model_settings.py`): no retries (`max_retries` 0), so
  every failed request is seen by the model's circuit breaker and by its fallbacks.
- **Model fallbacks** (`workers/loop.py`, LangChain's `with_fallbacks`): not a retry; the
  *next* model is asked, once, when one is unavailable.
- **The hub** (`workers/hub/hub.py`, `workers/hub/pool.py`): no retries; a failed call is a
  value, counted by the server's breaker; a dead server is restarted once per use and not
  asked while its circuit is open.
- **The worker loop**: none of its own; a failed tool call goes back to the model as an
  observation, and the model may call it again as one of its steps (Muster's offline model
  does so once), bounded by the step budget and the loop guard.
- **The supervisor** (`graph/recover.py`): no retry of a model failure or of a failing
  server (those go to a fallback, a reassignment to a worker on other servers, or a
  human). Its `retry` strategy re-runs a packet once, within the handoff budget, for a
  worker that raised (a bug) or ran out of steps while its tools answered (with double
  the steps). A worker that spent its steps on a server's tool errors, timeouts or
  refusals reports that failure, not `budget` (`workers/run_report.py`, `out_of_budget`), so
  the server is not asked again by a retry (it was 2 + 2 calls a ticket for the
  reference demo's broken policy server; now 2, the offline model's one re-call).
- **`dispatch`'s `RetryPolicy` (here)**: the one retry of a failure that may heal. Every
  model a worker may use failed transiently (a 5xx, a rate limit, a dropped link, an
  unreachable endpoint, a call timeout): the worker runs again after an exponential
  backoff with jitter, up to `MAX_ATTEMPTS` runs in all.

Why this layer: LangGraph's `RetryPolicy` is the framework's own retry (exponential backoff,
`max_interval`, jitter), applied per task, so one branch's retry never re-runs or cancels
its siblings, and the retried branch's writes are only those of its last attempt. A model
whose breaker is open is not retried (its cooldown is the wait, not a backoff). The last
attempt ends the worker with an ordinary report (`run_worker(retry_transient=False)`), so
the reason, note and partial work reach recovery and the answer as before.

Calls to a failing provider for one packet are therefore at most `MAX_ATTEMPTS` per model
in its chain (fewer once its circuit opens: `MUSTER_BREAKER_FAILURES` failures in a row).
"""

from __future__ import annotations

from langgraph.types import RetryPolicy

from workers.model_health import TransientModelFailure

MAX_ATTEMPTS = 3
"""Runs of a worker whose models failed transiently: the first and two retries."""

DISPATCH_RETRY = RetryPolicy(
    initial_interval=0.5,
    backoff_factor=2.0,
    max_interval=8.0,
    max_attempts=MAX_ATTEMPTS,
    jitter=True,
    retry_on=TransientModelFailure,
)
"""The `dispatch` node's retry: 0.5 s, then 1 s (each plus up to 1 s of jitter, LangGraph's)."""


def retries_left(node_attempt: int) -> bool:
    """True if a `dispatch` run on attempt `node_attempt` (1-based) may still be retried."""
    return node_attempt < MAX_ATTEMPTS
