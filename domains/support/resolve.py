"""Resolving each intent: what happened, what we will do, and what to tell the customer.

Deterministic rules over the facts the reports observed (`facts_read.py`) and the actions
proposed and decided (`state.actions`). For every intent the ticket expressed there is one
`ResolutionStep`: an approval-gated action, an instruction for the agent that follows from
the policy and the order, or an `open` point that keeps the answer from being complete. A
policy the specialists could not read is never guessed (POL-ESC-001): the intent stays open.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from graph.reply_guard import unfit
from workers.contracts import Claim, ResolutionStep

from .facts_read import Cited, TicketFacts, money
from .intents import BY_NAME
from .resolve_actions import Proposal, proposals_from, refund_promise
from .resolve_routed import RoutedResolutions

__all__ = ["Proposal", "Resolution", "Resolver", "proposals_from"]

AGENT_INSTRUCTION = re.compile(
    r"^(?:Offer|Open|Escalate|Log|Refund|Send|Check|Ask|Confirm|Issue|Agents?|After \d+|"
    r"If not, send|Beyond that)\b"
)
"""A KB sentence addressed to the agent, not the customer."""
DEFECT_WINDOW_DAYS = 14
"""POL-RET-002: damaged or defective items may be returned within 14 days of delivery."""
RETURN_WINDOW_DAYS = 30
"""POL-RET-002: unused items may be returned within 30 days of delivery."""
ANSWERABLE_WITHOUT_ORDER = frozenset(
    {"cancellation", "return_request", "price_error", "missing_item", "address_change",
     "invoice", "keep_order", "goodwill_credit"}
)
"""Intents a general question about is answered from the policy or article alone; asked
about the customer's own order with no id, billing asks which order instead."""
NEEDS_THE_RECORD = frozenset(
    {"duplicate_charge", "late_delivery", "damaged_item", "defective_item", "wrong_item"}
)
"""Intents decided from the order's record: without it they stay open (never a crash)."""
GENERAL_ANSWERS = {
    "refund_request": "KB-202",
    "defective_item": "KB-107",
    "damaged_item": "KB-106",
    "duplicate_charge": "KB-201",
    "late_delivery": "KB-101",
    "wrong_item": "KB-103",
    "gift_card": "KB-203",
}
"""A general question on these intents is answered from this article (and the policy): there
is no order of the customer's to look at."""
INTENT_TOPIC = {
    "duplicate_charge": "duplicate_charge",
    "refund_request": "refunds",
    "cancellation": "cancellation",
    "late_delivery": "shipping",
    "damaged_item": "returns",
    "defective_item": "returns",
    "wrong_item": "returns",
    "return_request": "returns",
    "price_error": "price_match",
    "gift_card": "gift_cards",
    "complaint": "escalation",
    "goodwill_credit": "goodwill_credit",
    "keep_order": "cancellation",
}
"""The policy topic whose rule decides each intent."""


@dataclass
class Resolution:
    """The answer's parts, before rendering."""

    summary: list[Claim] = field(default_factory=list)
    steps: list[ResolutionStep] = field(default_factory=list)
    reply: list[str] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)
    flagged_articles: list[str] = field(default_factory=list)
    """Articles whose text was kept out of the reply (`graph.reply_guard.unfit`: instructions,
    links, markup): a person checks."""
    kept_out: list[str] = field(default_factory=list)
    """Each sentence kept out of the reply, with where it came from (`KB-201: «…»`)."""


def _duplicate_refund(status: dict[str, Any]) -> dict[str, Any] | None:
    """The refund recorded against the order's duplicate charge, from `refund_status`."""
    ids = {
        refund_id
        for charge in status.get("duplicate_charges") or []
        if isinstance(charge, dict)
        for refund_id in charge.get("refund_ids") or []
    }
    for refund in status.get("refunds") or []:
        if isinstance(refund, dict) and refund.get("refund_id") in ids:
            return refund
    return None


def _first_name(customer: str) -> str:
    return customer.strip() or "there"


def _policy_line(policy: Cited) -> str:
    snapshot = " (cached snapshot)" if policy.fallback else ""
    return f"{policy.data.get('policy_id', '?')}{snapshot}: {policy.data.get('text', '')}"


class Resolver(RoutedResolutions):
    """Builds the resolution of one ticket from its facts; one method per intent."""

    def __init__(
        self,
        *,
        intents: Sequence[str],
        order_ids: Sequence[str],
        unknown_orders: Sequence[str],
        facts: TicketFacts,
        proposals: Sequence[Proposal],
        escalation_note: str | None,
        general_question: bool = False,
    ) -> None:
        self.intents = list(intents)
        self.order_ids = [o for o in order_ids if o not in unknown_orders]
        self.unknown_orders = list(unknown_orders)
        self.facts = facts
        self.proposals = list(proposals)
        self.escalation_note = escalation_note
        self.general_question = general_question
        self.out = Resolution()
        self.shown: dict[str, str] = {}
        """Proposal digest → the intent whose step shows it: one ACTION line per action."""

    # --- helpers -------------------------------------------------------------------------

    def order(self) -> Cited | None:
        for order_id in self.order_ids:
            if order_id in self.facts.orders:
                return self.facts.orders[order_id]
        return None

    def refunds(self, order_id: str) -> Cited | None:
        return self.facts.refunds.get(order_id)

    def policy(self, intent: str) -> Cited | None:
        topic = INTENT_TOPIC.get(intent)
        return self.facts.policies.get(topic) if topic else None

    def proposal(self, tool: str, order_id: str) -> Proposal | None:
        for proposal in self.proposals:
            args = proposal.action.args
            if proposal.action.tool == tool and str(args.get("order_id")) == order_id:
                return proposal
        return None

    def step(self, intent: str, text: str, *cites: str, kind: str = "instruction") -> None:
        self.out.steps.append(
            ResolutionStep(
                intent=intent,
                kind="open" if kind == "open" else "instruction",
                text=text,
                cites=[c for c in cites if c],
            )
        )

    def action_step(
        self, intent: str, proposal: Proposal, text: str, *cites: str, explained: bool = False
    ) -> None:
        """The step that shows `proposal`; an action another intent's step already shows
        is one action, not two: this intent's step points to it. A rejected, refused or
        failed action's step says what came of it (unless `explained` already does)."""
        if not proposal.goes_ahead and proposal.status != "held" and not explained:
            text = f"{text.rstrip('.')}: {proposal.outcome()}."
        key = proposal.action.short_digest()
        if key in self.shown:
            args = proposal.action.args
            self.step(
                intent,
                f"The same {proposal.action.tool} on order {args.get('order_id')} as for "
                f"{self.shown[key]} above covers this too ({proposal.approval}).",
                *cites,
            )
            return
        self.shown[key] = intent
        self.out.steps.append(
            ResolutionStep(
                intent=intent,
                kind="action",
                text=text,
                tool=proposal.action.tool,
                args=dict(proposal.action.args),
                approval=proposal.approval,
                cites=[c for c in cites if c],
            )
        )

    def open(self, intent: str, text: str, question: str) -> None:
        self.step(intent, text, kind="open")
        if question not in self.out.open_questions:
            self.out.open_questions.append(question)

    def claim(self, text: str, *cites: str) -> None:
        if all(c.text != text for c in self.out.summary):
            self.out.summary.append(Claim(text=text, cites=[c for c in cites if c]))

    def say(self, text: str) -> None:
        text = text.strip()  # a KB sentence this ticket did not fetch leaves nothing behind
        if text and text not in self.out.reply:
            self.out.reply.append(text)

    def article(self, article_id: str) -> str:
        cited = self.facts.articles.get(article_id)
        return str(cited.data.get("body", "")) if cited else ""

    # --- the whole ticket ----------------------------------------------------------------

    def resolve(self) -> Resolution:
        order = self.order()
        if order is not None:
            self.describe_order(order)
        for order_id in self.unknown_orders:
            self.claim(f"There is no order {order_id} in our records.")

        if not self.intents:
            self.open(
                "unknown",
                "The ticket could not be understood (no request the rules recognise); a human "
                "should read it and reply.",
                "What is the customer asking for? A human should read the ticket.",
            )
            self.say(
                "Thank you for your message. Could you tell us a little more about what "
                "you need help with, and the order number if it is about an order?"
            )
        for intent in self.intents:
            self.resolve_intent(intent, order)
        self.resolve_other_orders(order)
        if self.unknown_orders and self.intents and not any(
            s.kind == "open" for s in self.out.steps
        ):
            # No intent needed that order to be decided, but the customer named it: ask.
            numbers = ", ".join(f"#{o}" for o in self.unknown_orders)
            self.open(
                "unknown_order",
                f"Order {numbers} does not exist: ask the customer to check the number.",
                f"Which order did the customer mean by {numbers}?",
            )
            self.say(f"We could not find an order with the number {numbers}. Could you check it?")
        return self.out

    def resolve_other_orders(self, first: Cited | None) -> None:
        """A ticket about several orders ("cancel 12364 and 12374") has a proposal on each:
        every other order with a proposal no step shows yet is resolved too, so the answer
        names each action once, with its own state and its own line in the reply. What an
        intent says about an order with no action of its own is left to the first order's
        steps (it would repeat them)."""
        shown_orders = {str(first.data.get("order_id"))} if first is not None else set()
        for proposal in self.proposals:
            oid = str(proposal.action.args.get("order_id") or "")
            other = self.facts.orders.get(oid)
            if other is None or oid in shown_orders or proposal.action.short_digest() in self.shown:
                continue
            shown_orders.add(oid)
            marks = (len(self.out.steps), len(self.out.reply), len(self.out.summary))
            questions = list(self.out.open_questions)
            self.describe_order(other)
            for intent in self.intents:
                self.resolve_intent(intent, other)
            added = self.out.steps[marks[0]:]
            if not any(s.kind == "action" for s in added):  # nothing of its own: as before
                del self.out.steps[marks[0]:], self.out.reply[marks[1]:]
                del self.out.summary[marks[2]:]
                self.out.open_questions[:] = questions

    def resolve_intent(self, intent: str, order: Cited | None) -> None:
        spec = BY_NAME.get(intent)
        if spec is None:
            self.open(intent, f"No rule resolves {intent}.", f"How should {intent} be handled?")
            return
        if spec.needs_order and order is None and intent not in ("refund_request",):
            if self.ask_for_order(intent):
                return
        if order is None and intent in NEEDS_THE_RECORD:
            # An order is named but its record could not be read (billing failed, the orders
            # server is missing or down): say so rather than decide without it.
            self.open(
                intent,
                f"The record of order {', '.join(self.order_ids) or '(none named)'} could "
                f"not be read, so the {spec.label} is not decided.",
                "The order record could not be read: a human should check the order.",
            )
            return
        topic = INTENT_TOPIC.get(intent)
        if topic and self.policy(intent) is None:
            self.open(
                intent,
                f"The {topic.replace('_', ' ')} policy could not be read, so the "
                f"{spec.label} is not decided (policy is never guessed).",
                f"Which {topic.replace('_', ' ')} policy applies? A human should check it.",
            )
            return
        getattr(self, f"resolve_{intent}")(intent, order)

    def ask_for_order(self, intent: str) -> bool:
        """An order-bound intent without a known order: open. True when handled."""
        label = BY_NAME[intent].label
        if self.unknown_orders:
            numbers = ", ".join(f"#{o}" for o in self.unknown_orders)
            self.open(
                intent,
                f"Order {numbers} does not exist, so the {label} cannot be checked: ask the "
                "customer to check the order number.",
                f"Which order is it? {numbers} is not an order number we know.",
            )
            self.say(
                f"We could not find an order with the number {numbers}. Could you check "
                "the order number on your confirmation email and send it to us?"
            )
            return True
        if self.order_ids:
            return False  # an order is named but its record is missing: handled per intent
        if intent in ANSWERABLE_WITHOUT_ORDER:
            return False  # a question about the policy itself, answerable without an order
        if self.general_question and intent in GENERAL_ANSWERS:
            self.answer_generally(intent)
            return True
        self.open(
            intent,
            f"The ticket names no order, so the {label} cannot be checked: ask the customer "
            "for the order number.",
            "Which order is it about? The customer did not give an order number.",
        )
        self.say(
            "Could you send us your order number (it is in your confirmation email), "
            "so we can look into this for you?"
        )
        return True

    def describe_order(self, order: Cited) -> None:
        data = order.data
        charges = data.get("charges") or []
        dates = sorted({str(c.get("charged_at")) for c in charges if isinstance(c, dict)})
        count = int(data.get("charge_count", len(charges)))
        amount = money(int(data.get("amount_cents", 0)))
        times = {0: "not yet charged", 1: "charged once", 2: "charged twice"}.get(
            count, f"charged {count} times"
        )
        when = f" on {' and '.join(dates)}" if dates and count else ""
        self.claim(
            f"{data.get('customer', 'The customer')} ordered the {data.get('item', 'item')} "
            f"(order {data.get('order_id')}, {amount}) on {data.get('placed_at')}; it was "
            f"{times}{' for ' + amount if count else ''}{when}.",
            order.cite,
        )
        status = str(data.get("status", "unknown"))
        delivered = data.get("delivered_at")
        self.claim(
            f"Order {data.get('order_id')} was delivered on {delivered}."
            if delivered and status == "delivered"
            else f"Order {data.get('order_id')} is {status}.",
            order.cite,
        )
        refunds = self.refunds(str(data.get("order_id")))
        if refunds is not None:
            refunded = int(refunds.data.get("refunded_cents", 0))
            if not refunds.cite.startswith("act/"):  # not read again since an action ran
                refunded += sum(
                    p.executed_cents()
                    for p in self.proposals
                    if p.action.tool == "orders.issue_refund"
                    and str(p.action.args.get("order_id")) == str(data.get("order_id"))
                )
            self.claim(
                f"{money(refunded)} has been refunded on order {data.get('order_id')}."
                if refunded
                else f"Nothing has been refunded on order {data.get('order_id')}.",
                refunds.cite,
            )

    # --- one method per intent -----------------------------------------------------------

    def resolve_duplicate_charge(self, intent: str, order: Cited | None) -> None:
        assert order is not None
        data, policy = order.data, self.policy(intent)
        assert policy is not None
        oid = str(data.get("order_id"))
        count = int(data.get("charge_count", 0))
        amount = int(data.get("amount_cents", 0))
        refunds = self.refunds(oid)
        refunded = int(refunds.data.get("refunded_cents", 0)) if refunds else 0
        proposal = self.proposal("orders.issue_refund", oid)
        cites = (order.cite, refunds.cite if refunds else "", policy.cite)
        record = proposal.record if proposal is not None else None
        prior = _duplicate_refund(refunds.data) if refunds else None
        if count >= 2 and record is not None and record.status == "refused" and (
            "already refunded" in record.result
        ):
            # Another thread refunded the duplicate after this one proposed it: the ledger
            # refused this refund, and the answer says who did it instead.
            assert proposal is not None
            self.action_step(
                intent,
                proposal,
                f"The duplicate charge on order {oid} was already refunded, so this refund was "
                f"not sent ({record.result.removeprefix('refund refused: ')}).",
                *cites,
                explained=True,
            )
            self.say(
                f"The duplicate charge on order {oid} has already been refunded. "
                + self.article_sentence("KB-202", 1)
            )
        elif count >= 2 and record is not None and record.status == "held":
            # Another ticket's refund of this duplicate already waits for a human: one
            # approval at a time per order, so this thread puts nothing new forward.
            assert proposal is not None
            self.claim(f"The second charge of {money(amount)} is a duplicate.", order.cite)
            self.action_step(
                intent,
                proposal,
                f"A refund of the duplicate charge on order {oid} is already "
                f"{proposal.approval}: approve or reject it there; nothing new was proposed.",
                *cites,
            )
            self.say(
                f"You were charged twice for order {oid}: the second charge of {money(amount)} "
                "is a duplicate, and its refund to your original payment method is already "
                "being processed."
            )
            self.say(self.kb_quote("KB-201"))
        elif count >= 2 and proposal is not None:
            self.claim(f"The second charge of {money(amount)} is a duplicate.", order.cite)
            self.action_step(
                intent,
                proposal,
                f"Refund the duplicate charge of {money(amount)} on order {oid} to the "
                f"original payment method ({policy.data.get('policy_id')}).",
                *cites,
            )
            self.say(
                f"You were charged twice for order {oid}: the second charge of {money(amount)} "
                "is a duplicate, and "
                + refund_promise(proposal, "it in full to your original payment method")
            )
            self.say(self.kb_quote("KB-201"))
        elif count >= 2 and (prior is not None or refunded >= amount):
            when = (
                f" on {prior.get('refunded_at') or prior.get('created_at')}"
                + (f" by thread {prior['requested_by']}"
                   if prior.get("requested_by") not in (None, "", "seed") else "")
                if prior is not None
                else ""
            )
            self.step(
                intent,
                f"The duplicate charge on order {oid} was already refunded{when} "
                f"({money(refunded)}); tell the customer when to expect it.",
                *cites,
            )
            self.say(
                f"The duplicate charge on order {oid} has already been refunded "
                f"({money(refunded)}). " + self.article_sentence("KB-202", 1)
            )
        elif count >= 2:
            self.open(
                intent,
                f"Order {oid} shows a duplicate charge but no refund was proposed; a human "
                "should check it.",
                f"Should the duplicate charge on order {oid} be refunded?",
            )
        else:
            self.step(
                intent,
                f"Only one charge of {money(amount)} is recorded for order {oid}: a second "
                "entry on the statement is a pending authorisation that clears within 5 "
                f"business days ({policy.data.get('policy_id')}); no refund is due.",
                *cites,
            )
            self.say(
                f"We can see only one completed charge for order {oid}. "
                + self.article_sentence("KB-201", 2)
            )

    def answer_generally(self, intent: str) -> None:
        """A general question (no order of the customer's): the policy and the article."""
        policy = self.policy(intent)
        article = GENERAL_ANSWERS[intent]
        cited = self.facts.articles.get(article)
        text = f"Answer the general question from {article}"
        if policy is not None:
            text += f" and {policy.data.get('policy_id')}: {policy.data.get('text')}"
        self.step(intent, text + ".", policy.cite if policy else "", cited.cite if cited else "")
        self.say(self.article_sentence(article, 3))

    def resolve_refund_request(self, intent: str, order: Cited | None) -> None:
        policy = self.policy(intent)
        assert policy is not None
        if order is None and self.general_question:
            self.answer_generally(intent)
            return
        if order is None:
            if self.unknown_orders or not self.order_ids:
                self.ask_for_order_or_open(intent)
                return
        assert order is not None
        oid = str(order.data.get("order_id"))
        refunds = self.refunds(oid)
        proposal = self.proposal("orders.issue_refund", oid)
        if proposal is not None:
            amount = int(proposal.action.args.get("amount_cents", 0))
            self.action_step(
                intent,
                proposal,
                f"Refund {money(amount)} on order {oid} to the original payment method "
                f"({policy.data.get('policy_id')}).",
                order.cite,
                policy.cite,
            )
            return
        refunded = int(refunds.data.get("refunded_cents", 0)) if refunds else 0
        status = str(order.data.get("status"))
        if refunded:
            self.step(
                intent,
                f"{money(refunded)} was already refunded on order {oid}; tell the customer "
                "when it reaches them (refund timing).",
                order.cite,
                refunds.cite if refunds else "",
            )
            self.say(
                f"A refund of {money(refunded)} has been issued for order {oid}. "
                + self.article_sentence("KB-202", 2)
            )
        elif status in ("cancelled", "returned"):
            self.step(
                intent,
                f"Order {oid} is {status}; its refund is due: check with billing.",
                order.cite,
            )
        else:
            self.step(
                intent,
                f"No refund is due on order {oid} ({status}) under the policies: explain the "
                f"options the policy gives ({policy.data.get('policy_id')}) and offer a return "
                "if the item is unused.",
                order.cite,
                policy.cite,
            )
            self.say(f"Your order {oid} is {status}. " + self.article_sentence("KB-202", 1))

    def ask_for_order_or_open(self, intent: str) -> None:
        if not self.ask_for_order(intent):
            self.open(
                intent,
                "The order record could not be read.",
                "Which order is it? Its record could not be read.",
            )

    def resolve_cancellation(self, intent: str, order: Cited | None) -> None:
        policy = self.policy(intent)
        assert policy is not None
        if order is None:
            self.step(
                intent, f"Explain the cancellation policy: {policy.data.get('text')}", policy.cite
            )
            self.say(self.article_sentence("KB-104", 3))
            return
        oid, status = str(order.data.get("order_id")), str(order.data.get("status"))
        proposal = self.proposal("orders.cancel_order", oid)
        if proposal is not None:
            # After the action the order is read again: it is cancelled now, by this action.
            why = "it had not shipped" if proposal.done else f"it has not shipped ({status})"
            self.action_step(
                intent,
                proposal,
                f"Cancel order {oid}: {why}, so it is cancelled free of charge and the "
                f"authorisation is released ({policy.data.get('policy_id')}).",
                order.cite,
                policy.cite,
            )
            if proposal.done:
                self.say(
                    f"Order {oid} had not shipped, so we have cancelled it free of charge; "
                    "the payment authorisation is released in full."
                )
            elif proposal.goes_ahead:
                self.say(
                    f"Order {oid} has not shipped yet, so we are cancelling it free of charge; "
                    "the payment authorisation is released in full."
                )
            elif proposal.status == "rejected":  # the person who decided has read the ticket
                self.say(f"After reviewing it, we are not cancelling order {oid}.")
            else:
                self.say(
                    f"About cancelling order {oid}: a member of our team is looking into it "
                    "and will contact you."
                )
        elif status == "cancelled":
            self.step(intent, f"Order {oid} is already cancelled; nothing more to do.", order.cite)
            self.say(f"Order {oid} is already cancelled.")
        else:
            self.step(
                intent,
                f"Order {oid} is {status}, so it can no longer be cancelled "
                f"({policy.data.get('policy_id')}); offer a return under the returns policy "
                "instead.",
                order.cite,
                policy.cite,
            )
            self.say(
                f"Order {oid} has already left our warehouse ({status}), so it can no "
                "longer be cancelled, but you can return it once it arrives. "
                + self.article_sentence("KB-103", 2)
            )

    def resolve_late_delivery(self, intent: str, order: Cited | None) -> None:
        policy = self.policy(intent)
        assert policy is not None and order is not None
        oid, status = str(order.data.get("order_id")), str(order.data.get("status"))
        if status == "delivered":
            text = (
                f"Order {oid} shows as delivered on {order.data.get('delivered_at')}: ask "
                "the customer to check with neighbours and the carrier, then treat it as "
                "missing if it cannot be found."
            )
            self.say(
                f"Our records show order {oid} as delivered on "
                f"{order.data.get('delivered_at')}. " + self.article_sentence("KB-110", 2)
            )
        elif status in ("shipped", "delayed", "processing"):
            text = (
                f"Order {oid} is {status}: share the tracking status; if it is more than 10 "
                "business days past its estimate, offer a refund or a replacement at the "
                f"customer's choice ({policy.data.get('policy_id')})."
            )
            self.say(f"Your order {oid} is {status}. " + self.article_sentence("KB-102", 3))
        else:
            text = f"Order {oid} is {status}; explain its status to the customer."
            self.say(f"Your order {oid} is {status}.")
        self.step(intent, text, order.cite, policy.cite)

    def resolve_damaged_item(self, intent: str, order: Cited | None) -> None:
        self.defect(intent, order, "damaged")

    def resolve_defective_item(self, intent: str, order: Cited | None) -> None:
        self.defect(intent, order, "defective")

    def defect(self, intent: str, order: Cited | None, kind: str) -> None:
        policy = self.policy(intent)
        assert policy is not None and order is not None
        oid = str(order.data.get("order_id"))
        days = order.data.get("days_since_delivery")
        proposal = self.proposal("orders.issue_refund", oid)
        if proposal is not None:
            amount = int(proposal.action.args.get("amount_cents", 0))
            self.action_step(
                intent,
                proposal,
                f"Refund {money(amount)} for the {kind} {order.data.get('item')}: delivered "
                f"{days} days ago, inside the {DEFECT_WINDOW_DAYS}-day window "
                f"({policy.data.get('policy_id')}); send a free return label.",
                order.cite,
                policy.cite,
            )
            promise = refund_promise(
                proposal, money(amount), then=" and will send you a free return label"
            )
            self.say(
                f"We are sorry the {order.data.get('item')} arrived {kind}. "
                + promise[0].upper()
                + promise[1:]
            )
            return
        warranty = self.facts.policies.get("warranty")
        if days is None:
            text = (
                f"Order {oid} has no delivery on record ({order.data.get('status')}); "
                "check with the carrier before any return."
            )
        elif kind == "defective" and warranty is not None:
            text = (
                f"Delivered {days} days ago, outside the {DEFECT_WINDOW_DAYS}-day return "
                f"window: open a warranty claim ({warranty.data.get('policy_id')}: "
                f"{warranty.data.get('text')})"
            )
        else:
            text = (
                f"Delivered {days} days ago, outside the {DEFECT_WINDOW_DAYS}-day window "
                f"for {kind} items ({policy.data.get('policy_id')}): no refund is due; "
                "offer a warranty claim or escalate for goodwill."
            )
        self.step(intent, text, order.cite, policy.cite, warranty.cite if warranty else "")
        self.say(
            f"We are sorry the {order.data.get('item')} is {kind}. "
            + self.article_sentence("KB-107" if kind == "defective" else "KB-106", 2)
        )

    def resolve_wrong_item(self, intent: str, order: Cited | None) -> None:
        policy = self.policy(intent)
        assert policy is not None and order is not None
        oid = str(order.data.get("order_id"))
        self.step(
            intent,
            f"Send a free return label for the wrong item on order {oid} and ship the "
            f"{order.data.get('item')} as a replacement, or refund it if the customer prefers "
            f"({policy.data.get('policy_id')}).",
            order.cite,
            policy.cite,
        )
        self.say(
            f"We are sorry you received the wrong item for order {oid}. We will send you "
            f"a free return label and the {order.data.get('item')} you ordered."
        )

    def resolve_return_request(self, intent: str, order: Cited | None) -> None:
        policy = self.policy(intent)
        assert policy is not None
        if order is None:
            self.step(intent, f"Explain the returns policy: {policy.data.get('text')}", policy.cite)
            self.say(self.article_sentence("KB-103", 3))
            return
        days = order.data.get("days_since_delivery")
        oid = str(order.data.get("order_id"))
        if days is None:
            text = (
                f"Order {oid} is {order.data.get('status')} (not delivered): it can be "
                "returned within 30 days once delivered."
            )
        elif int(days) <= RETURN_WINDOW_DAYS:
            text = (
                f"Order {oid} was delivered {days} days ago, inside the {RETURN_WINDOW_DAYS}"
                f"-day window: accept the return if the item is unused and in its original "
                f"packaging ({policy.data.get('policy_id')})."
            )
        else:
            text = (
                f"Order {oid} was delivered {days} days ago, outside the "
                f"{RETURN_WINDOW_DAYS}-day return window ({policy.data.get('policy_id')}): "
                "a return cannot be accepted."
            )
        self.step(intent, text, order.cite, policy.cite)
        self.say(self.article_sentence("KB-103", 3))

    def resolve_price_error(self, intent: str, order: Cited | None) -> None:
        policy = self.policy(intent)
        assert policy is not None
        self.step(
            intent,
            f"Check the price against the advertised price: {policy.data.get('text')} "
            f"({policy.data.get('policy_id')}).",
            order.cite if order else "",
            policy.cite,
        )
        self.say(self.article_sentence("KB-109", 3))

    def resolve_gift_card(self, intent: str, order: Cited | None) -> None:
        policy = self.policy(intent)
        assert policy is not None
        self.step(
            intent,
            f"Answer from the gift card policy ({policy.data.get('policy_id')}): "
            f"{policy.data.get('text')}",
            policy.cite,
        )
        self.say(self.article_sentence("KB-203", 3))

    def resolve_callback(self, intent: str, order: Cited | None) -> None:
        if self.facts.local_times:
            zone, cited = next(iter(self.facts.local_times.items()))
            self.step(
                intent,
                f"Schedule the callback: it is now "
                f"{str(cited.data.get('datetime'))[11:16]} in {zone}.",
                cited.cite,
            )
        else:
            self.step(
                intent,
                "Schedule a callback at a time the customer chooses (ask for their time zone).",
            )
        self.say("We will call you back at a time that suits you.")

    def resolve_complaint(self, intent: str, order: Cited | None) -> None:
        policy = self.policy(intent)
        assert policy is not None
        note = f" Hand-off: {self.escalation_note}" if self.escalation_note else ""
        self.step(
            intent,
            "Escalate to a team lead now: the customer is upset or asks for a "
            f"manager ({policy.data.get('policy_id')}).{note}",
            policy.cite,
        )
        self.say(
            "We are sorry for the trouble. A team lead is taking over your case and will "
            "contact you."
        )

    def resolve_acknowledgement(self, intent: str, order: Cited | None) -> None:
        self.step(intent, "Nothing to do: the customer confirms it is resolved; close the ticket.")
        self.say("Thank you for letting us know. We are glad it is sorted.")

    def kb_quote(self, article_id: str) -> str:
        """The article's customer-facing wording, quoted with its id and title."""
        cited = self.facts.articles.get(article_id)
        if cited is None:
            return ""
        wording = self.article_wording(article_id, 10)
        if not wording:
            return ""
        return f'From our help article {article_id}, "{cited.data.get("title")}": “{wording}”'

    def article_sentence(self, article_id: str, sentences: int) -> str:
        """Up to `sentences` of the article's customer-facing sentences, as quoted text
        (`From our help article KB-202: “…”`): what a tool said is marked as the tool's
        words in the reply, never passed off as ours."""
        wording = self.article_wording(article_id, sentences)
        return f"From our help article {article_id}: “{wording}”" if wording else ""

    def article_wording(self, article_id: str, sentences: int) -> str:
        """Up to `sentences` of the article's customer-facing sentences: the ones that tell
        an agent what to do ("Offer a replacement", "Escalate to …") stay out of a reply, and
        so does any sentence unfit for a customer (`graph.reply_guard`: instructions to
        whoever reads it, links, markup), which is named for a person to check."""
        body = self.article(article_id)
        if not body:
            return ""
        parts = [p.strip().rstrip(".") for p in re.split(r"(?<=\.)\s+", body) if p.strip()]
        facing = [p for p in parts if not AGENT_INSTRUCTION.match(p)]
        fit = [p for p in facing if not unfit(p)]
        for sentence in (p for p in facing if unfit(p)):
            self.keep_out(article_id, sentence)
        return " ".join(f"{p}." for p in fit[:sentences])

    def keep_out(self, source: str, sentence: str) -> None:
        """Name a sentence of tool text kept out of the reply; the article (or source) is
        flagged once, with an open question a person answers."""
        shown = f"{source}: «{sentence.strip()[:160]}»"
        if shown not in self.out.kept_out:
            self.out.kept_out.append(shown)
        if source not in self.out.flagged_articles:
            self.out.flagged_articles.append(source)
            self.out.open_questions.append(
                f"{source} carries text unfit for a customer reply (instructions, links or "
                "markup): it was left out of the draft; a human should check it."
            )
