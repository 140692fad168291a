"""A human's decision on a pending action: checked, recorded once (the first stands), audited."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langgraph.config import get_config

from graph.agent_inbox import as_decision_value, is_inbox_response
from graph.approvers import ApproverConfig, Decision, Refusal, check_decision
from graph.services import Services
from workers.contracts import ProposedAction


def checked_decision(
    value: Any,
    *,
    digest: str,
    action: ProposedAction,
    config: ApproverConfig,
    earlier: Sequence[str] = (),
) -> Decision | Refusal:
    """The human's resume value checked against the pending action: a `Decision`, or a
    `Refusal` that leaves the action pending (unknown approver, wrong or short digest, a
    role a policy limit needs). An Agent Inbox `HumanResponse` is first turned into Muster's
    own value (`graph.agent_inbox.as_decision_value`), then held to the same checks.
    `earlier`: the action's legacy digests (`graph.proposals.approval_digests`)."""
    if is_inbox_response(value):
        value = as_decision_value(
            value,
            digest=digest,
            tool=action.tool,
            args=action.args,
            configurable=get_config().get("configurable", {}),
        )
        if isinstance(value, Refusal):
            return value
    return check_decision(
        value, digest=digest, tool=action.tool, args=action.args, config=config, earlier=earlier
    )


async def standing_decision(
    services: Services,
    thread: str,
    action: ProposedAction,
    digest: str,
    decision: Decision,
    *,
    decided_at: float,
    expires_at: float,
) -> tuple[Decision, float, float, str]:
    """Record `decision` unless the action already has one; return the decision that stands
    with its time, expiry and an extra note. The first decision wins: a later, different one
    is refused (audited as `decision-refused`) and the standing one is carried out instead."""
    if services.audit is None:
        return decision, decided_at, expires_at, ""
    result = {
        "decision": decision.decision,
        "role": decision.role,
        "note": decision.note,
        "tool": action.tool,
        "args": decision.args or action.args,
        "expires_at": expires_at,
    }
    if decision.args is not None:
        result["proposed_args"] = action.args
    row, first = await services.audit.decide(
        thread_id=thread, actor=decision.by, role=decision.role, digest=digest, result=result
    )
    if first:
        return decision, decided_at, expires_at, ""
    stored = json.loads(row.result)
    standing = Decision(
        decision=stored["decision"],
        by=row.actor,
        role=row.role,
        note=stored.get("note", ""),
        args=stored.get("args") if "proposed_args" in stored else None,
    )
    extra = ""
    if (standing.decision, standing.by) != (decision.decision, decision.by):
        extra = (
            f"a later decision ({decision.decision} by {decision.by}) was refused: "
            f"this action was already {standing.decision} by {standing.by}"
        )
        await services.audit.record(
            thread_id=thread,
            event="decision-refused",
            actor=decision.by,
            role=decision.role,
            digest=digest,
            result={"decision": decision.decision, "stands": standing.decision, "error": extra},
        )
    return standing, row.at, float(stored.get("expires_at", expires_at)), extra


def edits_note(proposed: dict[str, Any], approved: dict[str, Any] | None) -> str:
    """What an approval with edited arguments changed (`amount_cents 64900 -> 30000`)."""
    if approved is None:
        return ""
    changes = [f"{k} {proposed[k]} -> {v}" for k, v in approved.items() if proposed.get(k) != v]
    return "approved with edits: " + ", ".join(changes) if changes else ""


async def record_refusal(
    services: Services,
    thread: str,
    digest: str,
    action: ProposedAction,
    config: ApproverConfig,
    refusal: Refusal,
) -> None:
    """Audit and trace a resume value that was not a decision."""
    role = config.approvers[refusal.by].roles[0] if refusal.by in config.approvers else ""
    if services.audit is not None:
        await services.audit.record(
            thread_id=thread,
            event="refused",
            actor=refusal.by,
            role=role,
            digest=digest,
            result={"approved": refusal.approved, "error": refusal.error, "tool": action.tool},
        )
    services.trace_node("approve", outcome="refused", tool=action.tool, digest=digest)
