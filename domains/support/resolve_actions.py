"""A proposed action in the answer: its approval state, one step per action, and words that
agree with what happened to it.

The resolver (`resolve.py`) names every action in the step of the intent that asked for it.
An action two intents asked for (a duplicate charge the customer also asks to be refunded)
is one proposal, so it is one `ACTION` line: the second intent's step points to it. What
the reply tells the customer follows the action's state: a pending refund is being
processed, an executed one has been made, a rejected or refused one is promised to nobody.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workers.contracts import ActionRecord, ProposedAction

Approval = str
"""How a step names its action's state: `pending approval`, `executed (approved by lead)`,
`rejected by lead`, `refused`, ..."""


@dataclass(frozen=True)
class Proposal:
    """A proposed action and its approval state."""

    action: ProposedAction
    record: ActionRecord | None

    @property
    def status(self) -> str:
        """`pending` until a human decides; then the record's status (`approved`, `executed`,
        `rejected`, `refused`, `failed`, `held`)."""
        return "pending" if self.record is None else self.record.status

    @property
    def approval(self) -> Approval:
        if self.record is None:
            return "pending approval"
        status = self.record.status
        if status == "executed":
            return f"executed (approved by {self.record.decided_by})"
        if status == "rejected":
            return f"rejected by {self.record.decided_by}"
        if status == "held":
            return self.record.result.split(" (proposed", 1)[0].split(" is ", 1)[-1]
        return status

    @property
    def goes_ahead(self) -> bool:
        """True while the action is still to happen or has happened: pending, approved or
        executed (not rejected, refused, failed or held elsewhere)."""
        return self.status in ("pending", "approved", "executed")

    @property
    def done(self) -> bool:
        return self.status == "executed"

    def outcome(self) -> str:
        """Why an action that does not go ahead did not, in one clause."""
        record = self.record
        if record is None or self.goes_ahead:
            return ""
        if record.status == "rejected":
            note = f" ({record.note})" if record.note else ""
            return f"{record.decided_by} rejected it{note}, so nothing was done"
        return f"it was not carried out ({record.status}: {record.result[:200]})"

    def executed_cents(self) -> int:
        """The amount an executed refund moved, from the orders server's result."""
        if not self.done or self.record is None:
            return 0
        try:
            data: Any = json.loads(self.record.result)
        except json.JSONDecodeError:
            data = None
        amount = data.get("amount_cents") if isinstance(data, dict) else None
        if isinstance(amount, int):
            return amount
        return int(self.action.args.get("amount_cents", 0))


def refund_promise(proposal: Proposal, what: str, *, then: str = "") -> str:
    """What the reply says of a refund of `what` ("it in full to your original payment
    method"), by its state, `then` added while it goes ahead; no promise once a human
    rejected it or it could not run."""
    if proposal.done:
        return f"we have refunded {what}{then}."
    if proposal.goes_ahead:
        return f"we are refunding {what}{then}."
    if proposal.status == "rejected":  # the person who decided has read the ticket
        return "after reviewing it we are not refunding it."
    return "a member of our team is looking into it and will contact you."


def proposals_from(
    proposed: Sequence[ProposedAction], decided: dict[str, ActionRecord], digest_of: Any
) -> list[Proposal]:
    """Each proposal with the decision taken on it, if any (`digest_of(action)` keys them)."""
    return [Proposal(action=p, record=decided.get(digest_of(p))) for p in proposed]
