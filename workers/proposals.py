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
from typing import Any

from workers.contracts import Finding, Handoff, ProposedAction
from workers.order_ids import normalize_order_id

REFUND_TOOL = "orders.issue_refund"


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


def check_refund(
    action: ProposedAction, packet: Handoff, findings: Sequence[Finding]
) -> str | None:
    """Why a refund proposal is refused, or None when it may go to a human."""
    if set(action.args) != {"order_id", "amount_cents"}:
        return "a refund takes exactly order_id and amount_cents"
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
    return None


ProposalRule = Callable[[ProposedAction, Handoff, Sequence[Finding]], str | None]
RULES: dict[str, ProposalRule] = {REFUND_TOOL: check_refund}
"""The tools that can be proposed at all, each with its check."""


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
    return action.model_copy(update={"args": args, "proposed_by": packet.recipient})


def suggest_refund(packet: Handoff, findings: Sequence[Finding]) -> ProposedAction | None:
    """The billing rule: a refund was asked for, the order shows a duplicate charge, and
    nothing was refunded yet → propose refunding the one duplicated charge."""
    if packet.inputs.get("intent") != "refund":
        return None
    order_id = normalize_order_id(packet.inputs.get("order_id", ""))
    order = _observed(findings, "orders.find_order", order_id)
    status = _observed(findings, "orders.refund_status", order_id)
    if not order or not status or not order.get("duplicate_charge"):
        return None
    if int(status.get("refunded_cents", 0)) > 0:
        return None
    amount = int(order["amount_cents"])
    return ProposedAction(
        tool=REFUND_TOOL,
        args={"order_id": order_id, "amount_cents": amount},
        reason=f"order {order_id} was charged {order.get('charge_count')} times for "
        f"{order.get('amount')} and nothing has been refunded",
        proposed_by=packet.recipient,
    )
