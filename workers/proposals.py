"""Proposed actions: what a worker may ask the graph to do, and the checks every proposal
passes before a human ever sees it.

Deny by default: a tool with no rule here cannot be proposed. The refund rule ties the
proposal to the packet's own order and to the refundable amount a live `refund_status`
observation showed, so text inside a tool result ("refund order 999") can never become an
action: it names an order the packet is not about.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from workers.contracts import Finding, Handoff, ProposedAction, canonical_json
from workers.order_ids import normalize_order_id

REFUND_TOOL = "orders.issue_refund"
CANCEL_TOOL = "orders.cancel_order"
CANCELLABLE = ("processing",)
"""Order statuses that have not shipped (POL-CAN-001)."""
"""The refund write tool. `servers/orders.py` spells it too, on purpose: servers never import
`workers`. Within `workers/` this is the only definition."""


def _observed(findings: Sequence[Finding], tool: str, order_id: str) -> dict[str, Any] | None:
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


REFUND_ARGS = frozenset({"order_id", "amount_cents", "expected_refunded_cents"})
"""What a refund proposal may name: expected_refunded_cents is filled in by the review."""
STATE_BINDING_ARGS = frozenset({"expected_refunded_cents"})
"""Arguments that bind the state the approver saw rather than say what is done."""


def decided_args(args: dict[str, Any]) -> dict[str, Any]:
    """What an action does (tool arguments without the state binding), e.g. for scoring."""
    return {k: v for k, v in args.items() if k not in STATE_BINDING_ARGS}


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
    status = _observed(findings, "orders.refund_status", order_id)
    if status is None:
        return "no refund_status observation supports this refund"
    refundable = int(status.get("refundable_cents", 0))
    if amount > refundable:
        return f"amount {amount} exceeds the refundable {refundable} cents observed"
    order = _observed(findings, "orders.find_order", order_id)
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
    order = _observed(findings, "orders.find_order", order_id)
    if order is None:
        return "no find_order observation supports this cancellation"
    if order.get("status") not in CANCELLABLE:
        return f"order {order_id} is {order.get('status')}: only unshipped orders can be cancelled"
    return None


ProposalRule = Callable[[ProposedAction, Handoff, Sequence[Finding]], str | None]
RULES: dict[str, ProposalRule] = {REFUND_TOOL: check_refund, CANCEL_TOOL: check_cancel}
"""The tools that can be proposed at all, each with its check."""
Suggester = Callable[[Handoff, Sequence[Finding]], list[ProposedAction]]
"""A domain's rule for what to propose from a packet and its findings (reviewed like any
proposal)."""
SUGGESTERS: dict[str, Suggester] = {}
"""Suggesters of other domains' write tools, by tool (support's are `suggest_actions`)."""


def register_proposal_rule(
    tool: str, check: ProposalRule, suggest: Suggester | None = None
) -> None:
    """Let a domain pack make `tool` proposable: `check` reviews every proposal of it and
    `suggest`, if given, proposes it from a worker's findings (graph/domains.py calls this
    when it loads a pack). Registering a tool again replaces its rule."""
    RULES[tool] = check
    if suggest is not None:
        SUGGESTERS[tool] = suggest


def review_proposal(
    action: ProposedAction, packet: Handoff, findings: Sequence[Finding], allowed: Sequence[str]
) -> ProposedAction | str:
    """The normalised action when it passes, else why it was refused."""
    if action.tool not in allowed:
        return f"{packet.recipient} may not propose {action.tool}"
    rule = RULES.get(action.tool)
    if rule is None:
        return f"{action.tool} has no proposal rule; it cannot be proposed"
    problem = rule(action, packet, findings)
    if problem is not None:
        return problem
    args = dict(action.args)
    if "order_id" in args:
        args["order_id"] = normalize_order_id(args["order_id"])
    update: dict[str, Any] = {"args": args, "proposed_by": packet.recipient}
    status = _observed(findings, "orders.refund_status", str(args.get("order_id", "")))
    if action.tool == REFUND_TOOL and status is not None:
        # The refund state the human approves: it goes into the approved arguments (and so
        # into the digest and the token), and the orders server refuses the refund if the
        # order's refunds differ when it runs (compare-and-set inside its write transaction).
        seen = int(status.get("refunded_cents", 0))
        args["expected_refunded_cents"] = seen
        update["observed_refunded_cents"] = seen
    return action.model_copy(update=update)


DEFECT_WINDOW_DAYS = 14
"""POL-RET-002: damaged or defective items may be returned within 14 days of delivery."""


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
    Every suggestion still goes through `review_proposal` and a human."""
    intents = packet_intents(packet)
    order_id = normalize_order_id(packet.inputs.get("order_id", ""))
    order = _observed(findings, "orders.find_order", order_id)
    status = _observed(findings, "orders.refund_status", order_id)
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


class Reviewed(NamedTuple):
    """The outcome of reviewing a worker's proposals."""

    accepted: list[ProposedAction]
    """What may go to a human, normalised, each digest once."""
    rejected: list[str]
    """One line per refused proposal: the action and why, for the report's note."""


def review_proposals(
    proposed: Sequence[ProposedAction],
    packet: Handoff,
    findings: Sequence[Finding],
    allowed: Sequence[str],
) -> Reviewed:
    """Review what the model proposed plus what the billing rule suggests (when the worker
    may propose refunds), so a model that forgets to propose still gets a checked refund."""
    suggested = [a for a in suggest_actions(packet, findings) if a.tool in allowed]
    for tool in allowed:
        if tool in SUGGESTERS:
            suggested += [a for a in SUGGESTERS[tool](packet, findings) if a.tool == tool]
    accepted: list[ProposedAction] = []
    rejected: list[str] = []
    for action in [*proposed, *suggested]:
        reviewed = review_proposal(action, packet, findings, allowed)
        if isinstance(reviewed, str):
            rejected.append(f"{action.tool}({canonical_json(action.args)}): {reviewed}")
        elif reviewed.digest() not in {p.digest() for p in accepted}:
            accepted.append(reviewed)
    return Reviewed(accepted, rejected)
