"""Actions Muster settles without asking a human: held elsewhere, already done, or unsealed."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Literal

from graph.domains import pack_of
from graph.proposals import claim_subject
from graph.services import Services
from workers.contracts import ActionRecord, ProposedAction

HELD = "awaiting approval in thread"
"""Marks an action withheld because the same action on the same subject waits elsewhere."""


def _settled_by_muster(
    action: ProposedAction,
    digest: str,
    key: str,
    *,
    status: Literal["held", "refused"],
    note: str,
    result: str,
) -> ActionRecord:
    """The record of an action Muster settles without putting it to a human (held
    elsewhere, already done, or refused for a broken seal): `decision` is "rejected" only
    because it must be one; `status`, `note` and `result` say what happened."""
    now = time.time()
    return ActionRecord(
        digest=digest,
        tool=action.tool,
        args=action.args,
        idempotency_key=key,
        proposed_by=action.proposed_by,
        decision="rejected",
        decided_by="muster",
        decided_at=now,
        expires_at=now,
        note=note,
        status=status,
        result=result,
    )


async def held_elsewhere(
    services: Services, thread: str, action: ProposedAction, digest: str, key: str
) -> ActionRecord | None:
    """The record that withholds `action` when the same action on the same subject (an
    order, a change) is already waiting for a human (or approved, not yet run) in another
    thread, else None.

    Across threads, one such action waits at a time: two tickets about one duplicate charge
    must not put two refunds to two humans, two pages about one bad deploy not two rollbacks.
    The audit log arbitrates (`AuditLog.claim`); the system of record still refuses a second
    refund if two were approved anyway."""
    argument = pack_of(services.roster).subject_argument(action.tool)
    subject = claim_subject(action, argument)
    if services.audit is None or subject is None or argument is None:
        return None
    standing = await services.audit.claim(thread_id=thread, digest=digest, subject=subject)
    if standing is None or standing.thread_id == thread:
        return None
    since = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(standing.at))
    what = pack_of(services.roster).action_name(action.tool)  # "a refund"
    on = f"{argument.removesuffix('_id')} {action.args.get(argument)}"  # "order 12345"
    services.trace_node("approve", outcome="held", tool=action.tool, digest=digest)
    return _settled_by_muster(
        action,
        digest,
        key,
        status="held",
        note=f"not put to a human: the same action waits in thread {standing.thread_id}",
        result=f"{what} on {on} is {HELD} "
        f"{standing.thread_id} (proposed {since}); nothing new was put to a human",
    )


UNSEALED = "changed after it was proposed"
"""Marks an action refused because its seal does not hold (`graph.action_seal`)."""


def refused_unsealed(
    services: Services, action: ProposedAction, digest: str, key: str
) -> ActionRecord:
    """The record that refuses an action whose seal does not hold: what the checkpoint
    holds is not what the worker proposed, so nobody is asked and nothing runs."""
    services.trace_node("approve", outcome="unsealed", tool=action.tool, digest=digest)
    return _settled_by_muster(
        action,
        digest,
        key,
        status="refused",
        note=f"refused: the pending action was {UNSEALED} (its seal does not hold)",
        result=f"refused: the pending action was {UNSEALED}; it was not put to a human and "
        "did not run: check who can write to the checkpoint store",
    )


AlreadyDone = Callable[[Services, ProposedAction], Awaitable[str | None]]
"""A domain's check before an action is put to a human (`BEFORE_ASK` in its plug-in, by
tool): given the services and the proposal, why nobody need decide it because what it would
do is already done (incidents: another thread already ran this rollback), or None. It reads
the system of record again: a proposal observed before another thread acted is stale."""

DONE_ALREADY = "already done"
"""Marks an action not put to a human because what it would do has been done already."""


async def done_before_ask(
    services: Services, action: ProposedAction, digest: str, key: str
) -> ActionRecord | None:
    """The record that settles `action` without a human when the pack's `BEFORE_ASK`
    check finds it already done (another thread ran the same rollback), else None. A
    check that cannot read decides nothing: the human is asked as before."""
    checks: dict[str, AlreadyDone] = pack_of(services.roster).hook("BEFORE_ASK") or {}
    check = checks.get(action.tool)
    if check is None:
        return None
    try:
        why = await check(services, action)
    except Exception as error:  # a failed read is no reason to skip the human
        services.trace_node(
            "approve", outcome="check_failed", tool=action.tool, error=f"{error!r}"[:200]
        )
        return None
    if not why:
        return None
    services.trace_node("approve", outcome="already_done", tool=action.tool, digest=digest)
    return _settled_by_muster(
        action,
        digest,
        key,
        status="held",
        note=f"not put to a human: {DONE_ALREADY}",
        result=f"{DONE_ALREADY}: {why}; nothing was put to a human",
    )
