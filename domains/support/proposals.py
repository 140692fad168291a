"""Support's proposal rules: when a refund or a cancellation may go to a human, and what the
billing rules propose on their own.

Registered with `workers.proposals` when the pack loads (`PROPOSAL_RULES` in plugin.py);
the review there stays deny by default. The refund rule ties the proposal to the packet's
own order and to the refundable amount a live `refund_status` observation showed, so text
inside a tool result ("refund order 999") can never become an action: it names an order the
packet is not about. A refund that passes is bound to the refunds the worker observed
(`expected_refunded_cents`), which the human approves and the orders server checks.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from workers.contracts import Finding, Handoff, ProposedAction
from workers.proposals import ProposalRules

from .order_ids import normalize_order_id

REFUND_TOOL = "orders.issue_refund"
"""The refund write tool. `servers/orders.py` spells it too, on purpose: servers never import
`domains`."""
CANCEL_TOOL = "orders.cancel_order"
"""The cancellation write tool."""
REFUND_STATUS_TOOL = "orders.refund_status"
"""The read that shows an order's refunds (what a refund is bound to)."""
CANCELLABLE = ("processing",)
"""Order statuses that have not shipped (POL-CAN-001)."""
REFUND_ARGS = frozenset({"order_id", "amount_cents", "expected_refunded_cents"})
"""What a refund proposal may name: expected_refunded_cents is filled in by the review."""
STATE_ARGS = frozenset({"expected_refunded_cents"})
"""A refund's argument that binds the refunds the approver saw rather than says what is
done."""
DEFECT_WINDOW_DAYS = 14
"""POL-RET-002: damaged or defective items may be returned within 14 days of delivery."""


def observed(findings: Sequence[Finding], tool: str, order_id: str) -> dict[str, Any] | None:
    """The JSON a live call of `tool` returned for `order_id`, if any."""
    for finding in findings:
        if finding.source != "tool" or finding.tool != tool:
            continue
        try:
            data = json.loads(finding.observation)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and str(data.get("order_id")) == order_id:
            return data
    return None


def duplicate_refund(status: dict[str, Any] | None) -> dict[str, Any] | None:
    """The refund already recorded against the order's duplicate charge, if any (from the
    `refund_status` observation, which lists each duplicate charge and its refunds)."""
    if not status:
        return None
    for charge in status.get("duplicate_charges") or []:
        ids = set(charge.get("refund_ids") or []) if isinstance(charge, dict) else set()
        for refund in status.get("refunds") or []:
            if isinstance(refund, dict) and refund.get("refund_id") in ids:
                return refund
    return None


def duplicate_left(order: dict[str, Any], status: dict[str, Any] | None) -> int:
    """Cents of the duplicate charge still to refund: the duplicated amount (total charged
    minus the one charge the order is worth, POL-BIL-004), or 0 once it was refunded."""
    if not order.get("duplicate_charge"):
        return 0
    duplicated = int(order.get("total_charged_cents", 0)) - int(order.get("amount_cents", 0))
    if status and "duplicate_charges" in status:
        if duplicate_refund(status) is not None:
            return 0
        charges = [c for c in status["duplicate_charges"] if isinstance(c, dict)]
        if charges:  # the server refunds one duplicate charge at a time
            duplicated = min(duplicated, int(charges[0].get("amount_cents", duplicated)))
    elif status and int(status.get("refunded_cents", 0)) >= duplicated:
        return 0  # an older ledger without charge ids: the refunds cover the duplicate
    return max(0, duplicated)


def check_refund(
    action: ProposedAction, packet: Handoff, findings: Sequence[Finding]
) -> str | None:
    """Why a refund proposal is refused, or None when it may go to a human."""
    if not {"order_id", "amount_cents"} <= set(action.args) <= REFUND_ARGS:
        return "a refund takes order_id and amount_cents (and expected_refunded_cents)"
    order_id = normalize_order_id(action.args["order_id"])
    expected = normalize_order_id(packet.inputs.get("order_id", ""))
    if order_id != expected:
        return f"order {order_id} is not the order this ticket is about ({expected or 'none'})"
    amount = action.args["amount_cents"]
    if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
        return "amount_cents must be a positive whole number of cents"
    status = observed(findings, REFUND_STATUS_TOOL, order_id)
    if status is None:
        return "no refund_status observation supports this refund"
    refundable = int(status.get("refundable_cents", 0))
    if amount > refundable:
        return f"amount {amount} exceeds the refundable {refundable} cents observed"
    order = observed(findings, "orders.find_order", order_id)
    if order and order.get("duplicate_charge"):
        # The orders server reverses the duplicate first: cap at what it will accept.
        prior = duplicate_refund(status)
        if prior is not None:
            return (f"the duplicate charge on order {order_id} was already refunded "
                    f"(refund {prior.get('refund_id')} on {prior.get('created_at')})")
        left = duplicate_left(order, status)
        if amount > left:
            return (f"amount {amount} exceeds the duplicated amount {left} cents: a duplicate "
                    "charge is refunded once, for the duplicated amount (POL-BIL-004)")
    seen = action.args.get("expected_refunded_cents")
    if seen is not None and seen != int(status.get("refunded_cents", 0)):
        return (f"expected_refunded_cents {seen} is not the {status.get('refunded_cents')} "
                "cents refund_status observed")
    return None


def check_cancel(
    action: ProposedAction, packet: Handoff, findings: Sequence[Finding]
) -> str | None:
    """Why a cancellation proposal is refused, or None when it may go to a human."""
    if set(action.args) != {"order_id"}:
        return "a cancellation takes exactly order_id"
    order_id = normalize_order_id(action.args["order_id"])
    expected = normalize_order_id(packet.inputs.get("order_id", ""))
    if order_id != expected:
        return f"order {order_id} is not the order this ticket is about ({expected or 'none'})"
    order = observed(findings, "orders.find_order", order_id)
    if order is None:
        return "no find_order observation supports this cancellation"
    if order.get("status") not in CANCELLABLE:
        return f"order {order_id} is {order.get('status')}: only unshipped orders can be cancelled"
    return None


def bind_order(action: ProposedAction, findings: Sequence[Finding]) -> ProposedAction:
    """A passed proposal as it goes to a human: its order id normalised and, for a refund,
    bound to the refund state the worker observed. That state goes into the approved
    arguments (and so into the digest and the token), and the orders server refuses the
    refund if the order's refunds differ when it runs (compare-and-set inside its write
    transaction)."""
    args = dict(action.args)
    update: dict[str, Any] = {"args": args}
    if "order_id" in args:
        args["order_id"] = normalize_order_id(args["order_id"])
    status = observed(findings, REFUND_STATUS_TOOL, str(args.get("order_id", "")))
    if action.tool == REFUND_TOOL and status is not None:
        seen = int(status.get("refunded_cents", 0))
        args["expected_refunded_cents"] = seen
        update["observed_refunded_cents"] = seen
    return action.model_copy(update=update)


def packet_intents(packet: Handoff) -> set[str]:
    """The ticket intents the planner put in the packet (`intents`, comma-separated)."""
    intents = {i.strip() for i in packet.inputs.get("intents", "").split(",") if i.strip()}
    if packet.inputs.get("intent") == "refund":  # a hand-written packet's older form
        intents.add("duplicate_charge")
    return intents


def suggest_actions(packet: Handoff, findings: Sequence[Finding]) -> list[ProposedAction]:
    """The billing rules: what the policies allow for this order and these intents.

    - a settled duplicate charge not yet refunded → refund the duplicated amount
      (POL-BIL-004), whether or not the customer said "refund"; once a refund is recorded
      against the duplicate (by any thread) nothing is proposed;
    - a cancellation of an order that has not shipped → cancel it (POL-CAN-001);
    - a damaged or defective item delivered within 14 days → refund what is left of its price
      (POL-RET-002).
    Every suggestion still goes through `workers.proposals.review_proposal` and a human."""
    intents = packet_intents(packet)
    order_id = normalize_order_id(packet.inputs.get("order_id", ""))
    order = observed(findings, "orders.find_order", order_id)
    status = observed(findings, REFUND_STATUS_TOOL, order_id)
    if not order:
        return []
    amount = int(order.get("amount_cents", 0))
    refunded = int(status.get("refunded_cents", 0)) if status else 0
    suggested: list[ProposedAction] = []
    duplicate = (
        min(duplicate_left(order, status), int(status.get("refundable_cents", 0))) if status else 0
    )
    if "duplicate_charge" in intents and status and order.get("duplicate_charge") and duplicate:
        suggested.append(
            ProposedAction(
                tool=REFUND_TOOL,
                args={"order_id": order_id, "amount_cents": duplicate},
                reason=f"order {order_id} was charged {order.get('charge_count')} times for "
                f"{order.get('amount')} and "
                + ("its duplicate charge has not been refunded" if refunded
                   else "nothing has been refunded"),
                proposed_by=packet.recipient,
                observed_refunded_cents=refunded,
            )
        )
    elif intents & {"damaged_item", "defective_item"} and status:
        days = order.get("days_since_delivery")
        left = min(amount - refunded, int(status.get("refundable_cents", 0)))
        if isinstance(days, int) and 0 <= days <= DEFECT_WINDOW_DAYS and left > 0:
            suggested.append(
                ProposedAction(
                    tool=REFUND_TOOL,
                    args={"order_id": order_id, "amount_cents": left},
                    reason=f"the item on order {order_id} is damaged or defective and was "
                    f"delivered {days} days ago, inside the {DEFECT_WINDOW_DAYS}-day window",
                    proposed_by=packet.recipient,
                )
            )
    if "cancellation" in intents and order.get("status") in CANCELLABLE:
        suggested.append(
            ProposedAction(
                tool=CANCEL_TOOL,
                args={"order_id": order_id},
                reason=f"order {order_id} is {order.get('status')} (not shipped), so it can be "
                "cancelled free of charge",
                proposed_by=packet.recipient,
            )
        )
    return suggested


PROPOSAL_RULES = {
    REFUND_TOOL: ProposalRules(
        check_refund, suggest_actions, bind=bind_order, state_args=STATE_ARGS
    ),
    CANCEL_TOOL: ProposalRules(check_cancel, suggest_actions, bind=bind_order),
}
"""The two write tools support's billing worker may propose, registered with
`workers.proposals` when the pack loads."""
