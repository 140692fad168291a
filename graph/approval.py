"""Approval-gated actions: `approve` asks a human, `act` performs what was approved, once.

Workers only *propose* side effects. `approve` shows one proposed action and its digest to a
human through `interrupt()`. The digest binds the tool, its arguments and an idempotency key
derived from the thread, so an approval replayed for other arguments or another thread does
not match. Only a known approver decides (`graph/approvers.json`), with the role a policy
limit names above its threshold; a resume value that fails a check is not a decision: the
action stays pending and the next interrupt carries the error. An action is decided once:
the first decision stands (the audit log arbitrates between processes). `act` then calls the
write tool through the hub with that key and an approval token bound to the digest that
expires a fixed time after the decision. A resume, a replay or a retry of `act` sends the
same key, and the orders server returns its stored result instead of refunding again: exactly
once, by idempotency, not by hoping a node never re-runs. Every decision, refused decision
and execution writes an audit row, with the approver's role.

The keys, digests and pending proposals are `graph/proposals.py`'s; a decision's checks and
its record, `graph/approval_decisions.py`'s; the actions settled without asking anyone (held
elsewhere, already done, unsealed), `graph/approval_settled.py`'s.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from langgraph.config import get_config
from langgraph.errors import GraphInterrupt
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from checkpoints.audit import EXECUTION
from graph.action_seal import seal_holds, seal_key_off_loop
from graph.agent_inbox import inbox_fields
from graph.approval_decisions import (
    checked_decision,
    edits_note,
    record_refusal,
    standing_decision,
)
from graph.approval_settled import done_before_ask, held_elsewhere, refused_unsealed
from graph.approvers import ApproverConfig, Decision, Refusal, load_approvers
from graph.domains import pack_of
from graph.kill_switch import paused
from graph.proposals import approval_digests, idempotency_key, pending_proposals
from graph.services import Services, services_for
from graph.state import MusterState, latest_actions
from graph.synthesize import compose_answer
from graph.trace import record_call
from servers.approval import mint_token, secret_from_env
from servers.digests import action_digest
from workers.contracts import ActionRecord, Answer, Finding, ProposedAction

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


def _ask(
    action: ProposedAction, digest: str, config: ApproverConfig, answer: Answer | None = None
) -> dict[str, Any]:
    """What the interrupt shows the human, limits included, with Agent Inbox's
    `HumanInterrupt` fields beside Muster's own (`graph.agent_inbox.inbox_fields`; `answer`,
    the answer so far, gives its description the evidence and the draft reply)."""
    limits = config.limits_for(action.tool, action.args)
    ask: dict[str, Any] = {
        "kind": "approval",
        "tool": action.tool,
        "args": action.args,
        "digest": digest,
        "reason": action.reason,
        "proposed_by": action.proposed_by,
    }
    if limits:
        ask["needs_role"] = ",".join(dict.fromkeys(limit.role for limit in limits))
        ask["limits"] = [f"{limit.policy}: {limit.rule}" for limit in limits]
    ask.update(
        inbox_fields(
            action.tool,
            action.args,
            digest=digest,
            config=config,
            reason=action.reason,
            limits=ask.get("limits") or (),
            answer=answer,
        )
    )
    return ask


def _answer_so_far(state: MusterState) -> Answer | None:
    """The answer the state would give now, for the interrupt's description (its evidence and
    draft reply); None when there is none to compose. Run off the event loop: composing may
    read a pack's files."""
    if not state.get("request"):
        return None
    try:
        return compose_answer(state)
    except Exception:  # a description without a draft reply still lets a human decide
        return None


async def approve(state: MusterState, runtime: Runtime[Services]) -> dict[str, Any]:
    """Ask a human about the next proposed action. Everything before `interrupt()` runs
    again on resume, so it only computes (and reads the approvers file).

    A resume value that is not a decision (`Refusal`) leaves the action pending: the node
    asks again, with the error in the new interrupt's `error` field. On the next resume the
    node replays from its top and every earlier value comes back in order, so each refusal
    is audited once, when the interrupt after it is first raised."""
    thread = thread_id()
    action = pending_proposals(state, thread)[0]
    key = idempotency_key(thread, action)
    # A decision may carry the digest an older Muster showed for non-ASCII arguments (`earlier`).
    digest, *earlier = approval_digests(action, key)
    config = await asyncio.to_thread(load_approvers)  # a file read; Studio forbids blocking
    services = await services_for(runtime)
    if not seal_holds(thread, action, await seal_key_off_loop()):
        return {"actions": [refused_unsealed(services, action, digest, key)]}
    done = await done_before_ask(services, action, digest, key)
    if done is not None:
        return {"actions": [done]}
    held = await held_elsewhere(services, thread, action, digest, key)
    if held is not None:
        return {"actions": [held]}
    ask = _ask(action, digest, config, await asyncio.to_thread(_answer_so_far, state))
    refusals: list[Refusal] = []
    while True:
        errors = [r.error for r in refusals]
        try:
            value = interrupt({**ask, "error": errors[-1], "errors": errors} if errors else ask)
        except GraphInterrupt:
            if refusals:  # the newest refusal, seen for the first time
                await record_refusal(services, thread, digest, action, config, refusals[-1])
            services.trace_node("approve", outcome="waiting", tool=action.tool, digest=digest)
            raise
        checked = checked_decision(
            value, digest=digest, action=action, config=config, earlier=earlier
        )
        if isinstance(checked, Decision):
            break
        refusals.append(checked)
    now = time.time()
    decision, decided_at, expires_at, extra = await standing_decision(
        services, thread, action, digest, checked, decided_at=now, expires_at=now + approval_ttl_s()
    )
    edited = edits_note(action.args, decision.args)
    record = ActionRecord(
        digest=digest,
        tool=action.tool,
        args=decision.args or action.args,
        idempotency_key=key,
        proposed_by=action.proposed_by,
        decision=decision.decision,
        decided_by=decision.by,
        decided_at=decided_at,
        expires_at=expires_at,
        note="; ".join(part for part in (decision.note, edited, extra) if part),
        status=decision.decision,
    )
    services.trace_node(
        "approve",
        outcome=decision.decision,
        tool=action.tool,
        digest=digest,
        role=decision.role,
    )
    return {"actions": [record]}


def _inject_fault(point: str) -> None:
    if os.environ.get(FAULT_ENV) == point:
        os.kill(os.getpid(), signal.SIGKILL)


async def _keeps_requester(services: Services, tool: str) -> bool:
    """True when the write tool takes a `requested_by` argument (the orders server's refund,
    the deploys server's rollback): the thread that asked is recorded beside the action. A
    pack may say so for its tools (`REQUESTER_TOOLS`); otherwise the tool's schema does."""
    if pack_of(services.roster).keeps_requester(tool):
        return True
    await services.hub.ensure_servers([tool])  # a server started on demand has no tools yet
    for spec in services.hub.action_specs():
        if spec.name == tool:
            properties = (spec.input_schema or {}).get("properties") or {}
            return "requested_by" in properties
    return False


BeforeExecute = Callable[[Services, MusterState, str, ActionRecord], Awaitable[str | None]]
"""A domain's check right before an approved action runs (`BEFORE_EXECUTE` in its plug-in,
by tool): given the services, the state, the thread and the action's record, why it must
not run (it re-reads the state the action changes), or None."""


async def act(state: MusterState, runtime: Runtime[Services]) -> dict[str, Any]:
    """Execute every approved, not yet executed action, with its idempotency key, after the
    domain's check of the state it changes (support re-reads a refund's order and refuses it
    when the refunds moved)."""
    services = await services_for(runtime)
    thread = thread_id()
    secret = secret_from_env() or ""
    done = []
    effects: list[Finding] = []
    approved = [r for r in latest_actions(state).values() if r.status == "approved"]
    # The kill switch (graph/kill_switch.py), read before any side effect: while paused the
    # thread waits here with its approvals intact; on resume the node runs again from the
    # top and reads the switch again.
    while approved and (stop := await paused(services.audit)) is not None:
        services.trace_node("act", outcome="paused", by=stop.by)
        interrupt({"kind": "paused", "by": stop.by, "since": stop.since, "reason": stop.line()})
    for record in approved:
        _inject_fault("kill-before-action")
        check: BeforeExecute | None = pack_of(services.roster).before_execute(record.tool)
        stale = await check(services, state, thread, record) if check is not None else None
        if stale is not None:
            done.append(record.model_copy(update={"status": "refused", "result": stale}))
            if services.audit is not None:
                await services.audit.record(
                    thread_id=thread,
                    event=EXECUTION,
                    actor="muster",
                    digest=record.digest,
                    result={"status": "refused", "outcome": "state_changed", "text": stale},
                )
            services.trace_node("act", outcome="refused", tool=record.tool, digest=record.digest)
            continue
        args = {**record.args, "idempotency_key": record.idempotency_key}
        # Bound to the arguments that run: the proposal's (then this is `record.digest`),
        # or those an approver edited within the approvers file's `edits`.
        token = mint_token(
            action_digest(record.tool, args), secret=secret, expires_at=record.expires_at
        )
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
        # The thread that asks goes to the ledger beside the approved arguments, not in them,
        # for every write tool that keeps one (it declares a `requested_by` parameter).
        keeps = await _keeps_requester(services, record.tool)
        extra = {"requested_by": thread} if keeps else {}
        result = await services.hub.call_action(record.tool, {**args, "approval": token, **extra})
        # Recorded without the token: a trace file is no place for a credential.
        record_call(services.trace, record.tool, {**args, **extra}, result, node="act")
        _inject_fault("kill-after-action")
        status: Literal["executed", "refused", "failed"] = (
            "executed" if result.ok else "refused" if result.outcome == "tool_error" else "failed"
        )
        done.append(record.model_copy(update={"status": status, "result": result.text}))
        if services.audit is not None:
            await services.audit.record(
                thread_id=thread,
                event=EXECUTION,
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
        seen = len(state.get("effects") or []) + len(effects)
        effects += await _read_again(services, record, first=seen + 1)
    return {"actions": done, "effects": effects} if effects else {"actions": done}


AfterExecute = Callable[[Services, ActionRecord], Awaitable[list[Finding]]]
"""A domain's read of what an action changed, right after it ran (`AFTER_EXECUTE` in its
plug-in, by tool): support reads the order's refund status again after a refund, and the
order after a cancellation. The findings go to the state's `effects`."""


async def _read_again(services: Services, record: ActionRecord, *, first: int) -> list[Finding]:
    """What `record`'s action changed, read again by its pack (`AFTER_EXECUTE`), as
    findings numbered from `E{first}`; nothing when the pack reads nothing or the read
    fails (the answer then rests on the action's own result)."""
    reads: dict[str, AfterExecute] = pack_of(services.roster).hook("AFTER_EXECUTE") or {}
    read = reads.get(record.tool)
    if read is None:
        return []
    try:
        found = await read(services, record)
    except Exception as error:  # the action ran; a failed re-read loses one fact
        services.trace_node("act", outcome="reread_failed", tool=record.tool, error=repr(error))
        return []
    return [f.model_copy(update={"id": f"E{first + i}"}) for i, f in enumerate(found)]
