"""Bundled scenarios: tickets with scripted misbehaviour, to see recovery work end to end.

`sick-day`: the refund worker (billing) loops on the same call. The loop guard fires
(`loop`), recovery escalates the ticket with a hand-off summary for a human, and the other
workers' results still reach the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from langchain_core.messages import AIMessage

from workers.models import ModelFactory, scripted_factory


@dataclass(frozen=True)
class Scenario:
    """A ticket and the models that misbehave on it."""

    request: str
    """The ticket text."""
    description: str
    """What goes wrong, in one line."""

    def models(self) -> ModelFactory:
        """The model factory that plays the scenario."""
        raise NotImplementedError


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
    "sick-day": SickDay(
        request="Order #12345 was charged twice and I want the duplicate refunded today. "
        "This is unacceptable, I want to talk to a manager.",
        description="billing loops on the same call; the loop guard fires and a human gets it",
    ),
}
