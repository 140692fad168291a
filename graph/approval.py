"""Approval-gated actions: `approve` asks a human, `act` performs what was approved, once.

Workers only *propose* side effects. `approve` shows one proposed action and its digest to a
human through `interrupt()`. The digest binds the tool, its arguments and an idempotency key
derived from the thread, so an approval replayed for other arguments or another thread does
not match and counts as a rejection. `act` then calls the write tool through the hub with
that key and an approval token bound to the digest that expires a fixed time after the
decision. A resume, a replay or a retry of `act` sends the same key, and the orders server
returns its stored result instead of refunding again: exactly once, by idempotency, not by
hoping a node never re-runs. Every decision and execution writes an audit row.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
from typing import Any, Literal

from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from graph.services import Services, services_for
from graph.state import MusterState, current_reports, latest_actions
from servers.approval import action_digest, mint_token, secret_from_env
from workers.contracts import ActionRecord, ProposedAction

APPROVAL_TTL_S = 15 * 60.0
"""How long an approval stays valid after the decision (override: MUSTER_APPROVAL_TTL_S)."""

FAULT_ENV = "MUSTER_FAULT"
"""Crash injection for the exactly-once tests: `kill-before-action` or `kill-after-action`
SIGKILLs this process at that point of `act`. Unset in normal use."""

# The orders server verifies tokens over its *own* argument names and tool name, which is the
# server's published token format (servers/approval.py); the graph imports only that format.


def approval_ttl_s() -> float:
    """Seconds an approval stays valid."""
    return float(os.environ.get("MUSTER_APPROVAL_TTL_S") or APPROVAL_TTL_S)


def thread_id() -> str:
    """The thread the calling node runs on."""
    return str(get_config().get("configurable", {}).get("thread_id", ""))


def idempotency_key(thread: str, action: ProposedAction) -> str:
    """Stable per thread and action: the same action on the same thread is the same effect."""
    return "mst-" + hashlib.sha256(f"{thread}:{action.digest()}".encode()).hexdigest()[:32]


def approval_digest(action: ProposedAction, key: str) -> str:
    """The digest a human approves: exact tool name, arguments and idempotency key."""
    return action_digest(action.tool, {**action.args, "idempotency_key": key})


def pending_proposals(state: MusterState, thread: str) -> list[ProposedAction]:
    """Proposals from current ok reports that no human has decided yet."""
    decided = latest_actions(state)
    pending: dict[str, ProposedAction] = {}
    for report in current_reports(state.get("reports") or []).values():
        if report.status != "ok" or report.fallback:
            continue
        for action in report.proposed_actions:
            digest = approval_digest(action, idempotency_key(thread, action))
            if digest not in decided:
                pending.setdefault(digest, action)
    return list(pending.values())


def route_actions(state: MusterState) -> Literal["approve", "synthesize"]:
    """After verify and after each action: ask about the next proposal, or answer."""
    configurable = get_config().get("configurable", {})
    if state.get("stop_reason"):
        return "synthesize"  # a run stopped by its limits starts no side effect
    return (
        "approve"
        if pending_proposals(state, str(configurable.get("thread_id", "")))
        else "synthesize"
    )


def _decision(value: Any, digest: str) -> tuple[Literal["approved", "rejected"], str, str]:
    """(decision, by, note) from a resume value; anything but a matching approval rejects."""
    if not isinstance(value, dict):
        return "rejected", "unknown", f"unreadable decision {value!r}"
    by = str(value.get("by") or "unknown")
    note = str(value.get("note") or "")
    if value.get("approved") is not True:
        return "rejected", by, note or "rejected by a human"
    if value.get("digest") != digest:
        return "rejected", by, "approval does not match this action (digest mismatch)"
    return "approved", by, note


async def approve(state: MusterState, runtime: Runtime[Services]) -> dict[str, Any]:
    """Ask a human about the next proposed action. Everything before `interrupt()` runs
    again on resume, so it only computes."""
    thread = thread_id()
    action = pending_proposals(state, thread)[0]
    key = idempotency_key(thread, action)
    digest = approval_digest(action, key)
    value = interrupt(
        {
            "kind": "approval",
            "tool": action.tool,
            "args": action.args,
            "digest": digest,
            "reason": action.reason,
            "proposed_by": action.proposed_by,
        }
    )
    decision, by, note = _decision(value, digest)
    decided_at = time.time()
    record = ActionRecord(
        digest=digest,
        tool=action.tool,
        args=action.args,
        idempotency_key=key,
        proposed_by=action.proposed_by,
        decision=decision,
        decided_by=by,
        decided_at=decided_at,
        expires_at=decided_at + approval_ttl_s(),
        note=note,
        status=decision,
    )
    services = await services_for(runtime)
    if services.audit is not None:
        await services.audit.record(
            thread_id=thread,
            event="decision",
            actor=by,
            digest=digest,
            result={
                "decision": decision,
                "note": note,
                "tool": action.tool,
                "args": action.args,
                "expires_at": record.expires_at,
            },
        )
    services.trace_node(
        "approve",
        outcome=decision,
        tool=action.tool,
        digest=digest,
    )
    return {"actions": [record]}


def _inject_fault(point: str) -> None:
    if os.environ.get(FAULT_ENV) == point:
        os.kill(os.getpid(), signal.SIGKILL)


async def act(state: MusterState, runtime: Runtime[Services]) -> dict[str, Any]:
    """Execute every approved, not yet executed action, with its idempotency key."""
    services = await services_for(runtime)
    thread = thread_id()
    secret = secret_from_env() or ""
    done = []
    for record in latest_actions(state).values():
        if record.status != "approved":
            continue
        _inject_fault("kill-before-action")
        args = {**record.args, "idempotency_key": record.idempotency_key}
        token = mint_token(record.digest, secret=secret, expires_at=record.expires_at)
        if services.audit is not None:
            # Written before the call: if the process dies after the tool ran, the audit
            # still shows the attempt, and the resume's replay closes it.
            await services.audit.record(
                thread_id=thread,
                event="attempt",
                actor="muster",
                digest=record.digest,
                result={"tool": record.tool, "args": args},
            )
        result = await services.hub.call_action(record.tool, {**args, "approval": token})
        _inject_fault("kill-after-action")
        status: Literal["executed", "refused", "failed"] = (
            "executed" if result.ok else "refused" if result.outcome == "tool_error" else "failed"
        )
        done.append(record.model_copy(update={"status": status, "result": result.text}))
        if services.audit is not None:
            await services.audit.record(
                thread_id=thread,
                event="execution",
                actor="muster",
                digest=record.digest,
                result={"status": status, "outcome": str(result.outcome), "text": result.text},
            )
        services.trace_node(
            "act",
            outcome=status,
            tool=record.tool,
            digest=record.digest,
            duration_ms=round(result.duration_ms, 1),
        )
    return {"actions": done}
