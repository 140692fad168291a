"""Resolutions for the intents no tool acts on: answered from their knowledge-base article,
or handed to a human under the policy that applies.

These are the topics the policies and the KB cover without an orders tool behind them
(LABELS.md, the intents added second): an address change, a missing part, an invoice,
loyalty points, a declined card and a subscription are answered from their article; a
goodwill credit (POL-BIL-007's limits are an agent's to apply), keeping an order and an order
the customer did not place go to a person, with the policy or article named
(`Intent.to_human`: the answer always needs a human).
"""

from __future__ import annotations

from typing import Protocol

from .facts_read import Cited, TicketFacts, money
from .intents import BY_NAME

GOODWILL_SHARE = 0.10
"""POL-BIL-007: a goodwill credit of up to 10% of the order value..."""
GOODWILL_CAP_CENTS = 1500
"""...and at most $15."""
HANDOFF = {
    "goodwill_credit": "An agent may offer store credit for the trouble, within POL-BIL-007",
    "keep_order": "Make sure the order is not cancelled and tell the customer it stays",
    "unauthorized_order": "Lock the account, reset the password and pass the case to the "
    "fraud team (KB-208); share no order details before verifying identity",
}
"""What the person taking a routed intent must do."""
ARTICLE_REPLY_SENTENCES = 3
"""How many customer-facing sentences of an article go into the reply."""


class _Resolving(Protocol):
    facts: TicketFacts

    def policy(self, intent: str) -> Cited | None: ...
    def step(self, intent: str, text: str, *cites: str, kind: str = "instruction") -> None: ...
    def say(self, text: str) -> None: ...
    def article_sentence(self, article_id: str, sentences: int) -> str: ...


def _article_cite(resolver: _Resolving, article_id: str) -> str:
    cited = resolver.facts.articles.get(article_id)
    return cited.cite if cited else ""


class RoutedResolutions:
    """The `resolve_<intent>` methods for the intents above, mixed into `Resolver`."""

    def _from_article(self: _Resolving, intent: str, order: Cited | None) -> None:
        article = BY_NAME[intent].kb_articles[0]
        about = f" on order {order.data.get('order_id')}" if order else ""
        self.step(
            intent,
            f"Answer the {BY_NAME[intent].label}{about} from {article}.",
            order.cite if order else "",
            _article_cite(self, article),
        )
        self.say(self.article_sentence(article, ARTICLE_REPLY_SENTENCES))

    def _to_human(self: _Resolving, intent: str, order: Cited | None, extra: str = "") -> None:
        spec = BY_NAME[intent]
        policy = self.policy(intent)
        named = policy.data.get("policy_id") if policy else spec.kb_articles[0]
        about = f" (order {order.data.get('order_id')})" if order else ""
        self.step(
            intent,
            f"Hand to a human{about}: {HANDOFF[intent]} ({named}).{extra}",
            order.cite if order else "",
            policy.cite if policy else _article_cite(self, spec.kb_articles[0]),
        )

    def resolve_missing_item(self, intent: str, order: Cited | None) -> None:
        RoutedResolutions._from_article(self, intent, order)  # type: ignore[arg-type]

    def resolve_address_change(self, intent: str, order: Cited | None) -> None:
        RoutedResolutions._from_article(self, intent, order)  # type: ignore[arg-type]

    def resolve_invoice(self, intent: str, order: Cited | None) -> None:
        RoutedResolutions._from_article(self, intent, order)  # type: ignore[arg-type]

    def resolve_loyalty_points(self, intent: str, order: Cited | None) -> None:
        RoutedResolutions._from_article(self, intent, order)  # type: ignore[arg-type]

    def resolve_payment_declined(self, intent: str, order: Cited | None) -> None:
        RoutedResolutions._from_article(self, intent, order)  # type: ignore[arg-type]

    def resolve_subscription(self, intent: str, order: Cited | None) -> None:
        RoutedResolutions._from_article(self, intent, order)  # type: ignore[arg-type]

    def resolve_goodwill_credit(self, intent: str, order: Cited | None) -> None:
        extra = ""
        if order is not None and "amount_cents" in order.data:
            cap = min(int(int(order.data["amount_cents"]) * GOODWILL_SHARE), GOODWILL_CAP_CENTS)
            extra = f" At most {money(cap)} on this order, once in 12 months, as store credit."
        RoutedResolutions._to_human(self, intent, order, extra)  # type: ignore[arg-type]
        self.say(  # type: ignore[attr-defined]
            "We are sorry for the trouble. A member of our team will look at a goodwill "
            "gesture for you."
        )

    def resolve_keep_order(self, intent: str, order: Cited | None) -> None:
        RoutedResolutions._to_human(self, intent, order)  # type: ignore[arg-type]
        self.say("Noted: we will not cancel your order.")  # type: ignore[attr-defined]

    def resolve_unauthorized_order(self, intent: str, order: Cited | None) -> None:
        RoutedResolutions._to_human(self, intent, order)  # type: ignore[arg-type]
        self.say(  # type: ignore[attr-defined]
            "Thank you for telling us. Our security team will contact you to secure your "
            "account; please do not share your password with anyone."
        )
