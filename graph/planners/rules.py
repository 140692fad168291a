"""The rules planner: the deterministic, offline planner for support tickets.

It reads order ids, topics and intents and writes one packet per specialist. Its output is
validated like any other planner's (`graph.plan.validate_plan`).
"""

from __future__ import annotations

import re

from graph.planners.base import DEFAULT_TIMEOUT_S
from workers.contracts import Handoff
from workers.order_ids import find_order_ids
from workers.roster import Roster

TOPIC_KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "duplicate_charge",
        ("charged twice", "double charge", "double-charged", "duplicate", "twice"),
    ),
    ("gift_cards", ("gift card", "giftcard", "voucher")),
    ("shipping", ("shipping", "delivery", "delivered", "arrive", "late", "delayed", "tracking")),
    ("returns", ("return", "send it back", "exchange")),
    ("cancellation", ("cancel",)),
    ("refunds", ("refund", "money back", "reimburse")),
)
"""Topic → phrases that signal it, most specific first; the first match names the policy."""

REFUND_SIGNALS = ("refund", "money back", "reimburse", "credit it back", "pay me back")
"""Phrases that ask for money back: billing may then propose a refund for approval."""

ORDER_SIGNALS = ("order", "charged", "charge", "purchase", "bought", "refund", "package")
"""Phrases that mean the ticket is about some order, even when it names none."""

TIMEZONE = re.compile(r"\b(?:UTC|[A-Z][a-z]+(?:/[A-Z][A-Za-z_]+)+)\b")
"""An IANA time-zone name such as Europe/Berlin or America/New_York."""

HUMAN_SIGNALS = (
    "furious",
    "angry",
    "lawyer",
    "legal",
    "unacceptable",
    "speak to a human",
    "talk to a person",
    "manager",
    "complaint",
    "chargeback",
)
"""Phrases that mean a person should pick the ticket up."""


def find_topic(request: str) -> str | None:
    """The policy topic a request is about, if any."""
    text = request.lower()
    for topic, phrases in TOPIC_KEYWORDS:
        if any(phrase in text for phrase in phrases):
            return topic
    return None


def needs_human(request: str) -> bool:
    """True when the request itself asks for, or plainly needs, a person."""
    text = request.lower()
    return any(signal in text for signal in HUMAN_SIGNALS)


def kb_query(request: str, topic: str | None) -> str:
    """A search query: the topic's words plus the request's content words."""
    words = re.findall(r"[a-z]{4,}", request.lower())
    stop = {
        "customer",
        "says",
        "what",
        "happened",
        "that",
        "this",
        "with",
        "have",
        "from",
        "they",
        "were",
        "order",
        "about",
        "would",
        "like",
        "please",
        "still",
        "there",
        "their",
    }
    content = [w for w in dict.fromkeys(words) if w not in stop][:8]
    prefix = topic.replace("_", " ") + " " if topic else ""
    return (prefix + " ".join(content)).strip() or "help"


def plan_ticket(request: str, roster: Roster) -> list[Handoff]:
    """The deterministic support-ticket planner."""
    packets: list[Handoff] = []

    def add(recipient: str, objective: str, inputs: dict[str, str]) -> None:
        spec = roster.get(recipient)
        if spec is None:
            return
        packets.append(
            Handoff(
                id=f"{recipient}-{len(packets) + 1}",
                recipient=recipient,
                objective=objective,
                inputs=inputs,
                tool_allow=spec.privileges,
                max_steps=spec.max_steps,
                timeout_s=DEFAULT_TIMEOUT_S,
            )
        )

    topic = find_topic(request)
    text = request.lower()
    intent = {"intent": "refund"} if any(s in text for s in REFUND_SIGNALS) else {}
    order_ids = find_order_ids(request)
    for order_id in order_ids:
        add(
            "billing",
            f"Establish the charges and refund status of order {order_id}.",
            {"order_id": order_id, **intent},
        )
    if not order_ids and any(s in text for s in ORDER_SIGNALS):
        # About an order, but which? Billing will ask (reason `ambiguous`) rather than guess.
        add("billing", "Establish the charges and refund status of the customer's order.", intent)
    if topic:
        add(
            "policy",
            f"Find the policy on {topic.replace('_', ' ')} that applies.",
            {"topic": topic},
        )
    add(
        "comms",
        "Find the knowledge-base articles that answer the customer.",
        {"query": kb_query(request, topic)},
    )
    timezone = TIMEZONE.search(request)
    if timezone and any(s in text for s in ("time", "callback", "call back", "schedule")):
        add(
            "scheduling",
            f"Find the current local time in {timezone.group(0)} for the callback.",
            {"timezone": timezone.group(0)},
        )
    if needs_human(request):
        add(
            "escalation",
            "Write a hand-off summary so a human agent can take the ticket now.",
            {"request_summary": " ".join(request.split())[:300]},
        )
    return packets


