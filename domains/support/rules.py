"""The rules planner: the deterministic, offline planner for support tickets.

It reads the ticket (`intents.py` beside it: every intent, the order ids as customers write
them, the language, a time zone) and writes the packets each intent needs:

- `billing`, once per order named, with the ticket's intents: it reads the order's charges
  and refunds and proposes what the policies allow (a duplicate refund, a cancellation, a
  refund for a defective item inside the window); an order-related ticket that names no order
  still gets a billing packet, and billing asks which order (a clarification) rather than guess;
- `policy`, once per policy topic the intents need;
- `comms`, once per knowledge-base article whose customer-facing wording answers an intent;
- `scheduling` for a callback in a named time zone, `escalation` for a complaint.

A ticket with no intent it can read gets no packets: the answer says it was not understood
and hands it to a human. Its output is validated like any planner's (`graph.plan`).
The support pack's plug-in gives it to the loader (`graph.domains`).
"""

from __future__ import annotations

from graph.planners.base import DEFAULT_TIMEOUT_S, TicketReading
from workers.contracts import Handoff
from workers.roster import Roster

from .intents import BY_NAME, TIMEZONE, detect_language, find_intents, is_about_an_order
from .order_ids import find_order_ids


def read_ticket(request: str) -> TicketReading:
    """Everything the rules read from a ticket."""
    intents = find_intents(request)
    timezone = TIMEZONE.search(request)
    return TicketReading(
        intents=intents,
        order_ids=tuple(find_order_ids(request)),
        language=detect_language(request),
        timezone=timezone.group(0) if timezone else None,
        about_an_order=is_about_an_order(request, intents),
        action_intents=tuple(i for i in intents if BY_NAME[i].needs_order),
    )


def plan_ticket(request: str, roster: Roster) -> list[Handoff]:
    """The deterministic support-ticket planner (see the module docstring)."""
    reading = read_ticket(request)
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

    intents = list(reading.intents)
    if not intents or intents == ["acknowledgement"]:
        return []
    labels = ", ".join(BY_NAME[i].label for i in intents)
    order_intents = ",".join(i for i in intents if BY_NAME[i].needs_order) or "order_enquiry"
    for order_id in reading.order_ids:
        add(
            "billing",
            f"Establish the charges, refunds and delivery of order {order_id} and what the "
            f"customer's {labels} allows.",
            {"order_id": order_id, "intents": order_intents},
        )
    if not reading.order_ids and reading.about_an_order:
        # About an order, but which? Billing will ask (reason `ambiguous`) rather than guess.
        add(
            "billing",
            "Establish the charges and refund status of the customer's order.",
            {"intents": order_intents},
        )
    topics = dict.fromkeys(t for i in intents for t in BY_NAME[i].policy_topics)
    for topic in topics:
        add(
            "policy",
            f"Find the policy on {topic.replace('_', ' ')} that applies.",
            {"topic": topic},
        )
    articles = dict.fromkeys(a for i in intents for a in BY_NAME[i].articles_for(request))
    if not articles:
        # Nothing in the KB is known to answer it: comms searches for the wording instead.
        add(
            "comms",
            "Find the knowledge-base wording that answers the customer.",
            {"query": " ".join(BY_NAME[i].label for i in intents)},
        )
    for article in articles:
        add(
            "comms",
            f"Read knowledge-base article {article} for the customer-facing wording.",
            {"article_id": article},
        )
    if "callback" in intents and reading.timezone:
        add(
            "scheduling",
            f"Find the current local time in {reading.timezone} for the callback.",
            {"timezone": reading.timezone},
        )
    if "complaint" in intents:
        add(
            "escalation",
            "Write a hand-off summary so a human agent can take the ticket now.",
            {"request_summary": " ".join(request.split())[:300]},
        )
    return packets
