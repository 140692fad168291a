"""Bundled scenarios: tickets with scripted misbehaviour, to see recovery work end to end.

`sick-day`: the refund worker (billing) loops on the same call. The loop guard fires
(`loop`), recovery escalates the ticket with a hand-off summary for a human, and the other
workers' results still reach the answer.

`metrics-down` (domain incidents): the demo incident while the metrics backend dies on its
first query, each time it is restarted (`MUSTER_METRICS_MODE=dies_mid_run`). The metrics
specialist fails (`unavailable`), recovery escalates it, and the answer still names the bad
deploy from the logs and the change history, proposes its rollback, and is partial with
needs_human, saying which specialist failed.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage

from workers.models import ModelFactory, offline_factory, scripted_factory


@dataclass(frozen=True)
class Scenario:
    """A ticket and the models that misbehave on it."""

    request: str
    """The ticket text."""
    description: str
    """What goes wrong, in one line."""
    domain: str | None = None
    """The domain pack it runs in (None: `--domain`, else the default)."""
    environment: dict[str, str] = field(default_factory=dict)
    """Variables the servers it starts read (a backend's failure mode)."""

    def models(self) -> ModelFactory:
        """The model factory that plays the scenario."""
        raise NotImplementedError

    def prepare(self, args: argparse.Namespace) -> None:
        """Put the scenario's domain into `args` (unless `--domain` names one) and its
        environment into this process, for the servers it starts."""
        if self.domain and not getattr(args, "domain", None):
            args.domain = self.domain
        os.environ.update(self.environment)


@dataclass(frozen=True)
class BackendDown(Scenario):
    """Every model behaves; a backend fails through `environment`."""

    def models(self) -> ModelFactory:
        return offline_factory()


@dataclass(frozen=True)
class SickDay(Scenario):
    """Billing calls `orders.refund_status` with the same arguments again and again."""

    def models(self) -> ModelFactory:
        again = AIMessage(
            content="",
            tool_calls=[
                {"name": "orders.refund_status", "args": {"order_id": "12345"}, "id": "again"}
            ],
        )
        return scripted_factory({"billing": [again] * 10})


SCENARIOS: dict[str, Scenario] = {
    "metrics-down": BackendDown(
        request="[2025-06-12 14:07 UTC] checkout 5xx spiking since about 14:05, customers "
        "can't pay",
        description="the metrics backend dies mid-run; the answer is partial and says so",
        domain="incidents",
        environment={"MUSTER_METRICS_MODE": "dies_mid_run", "MUSTER_METRICS_DIE_AFTER": "0"},
    ),
    "sick-day": SickDay(
        request="Order #12345 was charged twice and I want the duplicate refunded today. "
        "This is unacceptable, I want to talk to a manager.",
        description="billing loops on the same call; the loop guard fires and a human gets it",
    ),
}
