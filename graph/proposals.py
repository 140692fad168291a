"""Proposals as the approval stage names them: once per subject, by key, digest and claim."""

from __future__ import annotations

import hashlib

from graph.domains import pack_for_state
from graph.state import MusterState, current_reports, latest_actions
from servers.digests import action_digest, action_digests
from workers.contracts import ActionRecord, ProposedAction

# The orders server verifies tokens over its *own* argument names and tool name, which is the
# server's published token format (servers/approval.py) over the action digest
# (servers/digests.py); of the servers, the graph imports only those two.


def idempotency_key(thread: str, action: ProposedAction) -> str:
    """Stable per thread and action: the same action on the same thread is the same effect."""
    return "mst-" + hashlib.sha256(f"{thread}:{action.short_digest()}".encode()).hexdigest()[:32]


def approval_digest(action: ProposedAction, key: str) -> str:
    """The digest a human approves: exact tool name, arguments and idempotency key."""
    return action_digest(action.tool, {**action.args, "idempotency_key": key})


def approval_digests(action: ProposedAction, key: str) -> tuple[str, ...]:
    """The approval digests a record or decision on this action may carry: the current one,
    then, for arguments with non-ASCII text, the one minted before the one JSON encoding
    (`servers.digests.action_digests`), so an action decided then is still decided."""
    return action_digests(action.tool, {**action.args, "idempotency_key": key})


def claim_subject(action: ProposedAction, argument: str | None) -> str | None:
    """What an action claims while it waits for a human: its tool on its subject, the value
    of `argument` (the argument its domain names for the tool, `DomainPack.subject_argument`:
    `orders.issue_refund:12345`, `deploys.rollback:chg-…`); None when it has none."""
    value = action.args.get(argument) if argument else None
    return f"{action.tool}:{value}" if value not in (None, "") else None


def proposals_once(state: MusterState) -> list[ProposedAction]:
    """Every action proposed by a current live ok report, once per tool and subject (the
    pack's `ACTION_SUBJECTS`: an order, a change), whichever intents or workers asked for
    it: two intents of one ticket that both want order 12345 refunded put one refund to a
    human, not two. The first proposal stands; an action with no subject is kept by its
    exact arguments."""
    pack = pack_for_state(state)
    kept: dict[str, ProposedAction] = {}
    for report in current_reports(state.get("reports") or []).values():
        if report.status != "ok" or report.fallback:
            continue
        for action in report.proposed_actions:
            subject = claim_subject(action, pack.subject_argument(action.tool))
            kept.setdefault(subject or action.short_digest(), action)
    return list(kept.values())


def pending_proposals(state: MusterState, thread: str) -> list[ProposedAction]:
    """Proposals (once per tool and subject, `proposals_once`) no human has decided yet."""
    decided = latest_actions(state)
    return [
        action
        for action in proposals_once(state)
        if decided.keys().isdisjoint(approval_digests(action, idempotency_key(thread, action)))
    ]


def proposal_for(state: MusterState, thread: str, record: ActionRecord) -> ProposedAction | None:
    """The proposal an action record was approved for (latest report first): what a
    domain's check before execution compares with the state it re-reads."""
    for report in reversed(state.get("reports") or []):
        for action in report.proposed_actions:
            if action.tool == record.tool and (
                record.digest in approval_digests(action, idempotency_key(thread, action))
            ):
                return action
    return None
