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
"""

from __future__ import annotations

import asyncio
import hashlib
import json
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
from graph.agent_inbox import as_decision_value, inbox_fields, is_inbox_response
from graph.approvers import ApproverConfig, Decision, Refusal, check_decision, load_approvers
from graph.domains import pack_for_state, pack_of
from graph.kill_switch import paused
from graph.services import Services, services_for
from graph.state import MusterState, current_reports, latest_actions
from graph.synthesize import compose_answer
from graph.trace import record_call
from servers.approval import action_digest, mint_token, secret_from_env
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


def idempotency_key(thread: str, action: ProposedAction) -> str:
    """Stable per thread and action: the same action on the same thread is the same effect."""
    return "mst-" + hashlib.sha256(f"{thread}:{action.digest()}".encode()).hexdigest()[:32]


def approval_digest(action: ProposedAction, key: str) -> str:
    """The digest a human approves: exact tool name, arguments and idempotency key."""
    return action_digest(action.tool, {**action.args, "idempotency_key": key})


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
            kept.setdefault(subject or action.digest(), action)
    return list(kept.values())


def pending_proposals(state: MusterState, thread: str) -> list[ProposedAction]:
    """Proposals (once per tool and subject, `proposals_once`) no human has decided yet."""
    decided = latest_actions(state)
    return [
        action
        for action in proposals_once(state)
        if approval_digest(action, idempotency_key(thread, action)) not in decided
    ]


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


def _decision(
    value: Any, *, digest: str, action: ProposedAction, config: ApproverConfig
) -> Decision | Refusal:
    """The human's resume value checked against the pending action: a `Decision`, or a
    `Refusal` that leaves the action pending (unknown approver, wrong or short digest, a
    role a policy limit needs). An Agent Inbox `HumanResponse` is first turned into Muster's
    own value (`graph.agent_inbox.as_decision_value`), then held to the same checks."""
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
    return check_decision(value, digest=digest, tool=action.tool, args=action.args, config=config)


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


async def _standing(
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
    digest = approval_digest(action, key)
    config = await asyncio.to_thread(load_approvers)  # a file read; Studio forbids blocking
    services = await services_for(runtime)
    if not seal_holds(thread, action, await seal_key_off_loop()):
        return {"actions": [_unsealed(services, action, digest, key)]}
    done = await _done_already(services, action, digest, key)
    if done is not None:
        return {"actions": [done]}
    held = await _held_elsewhere(services, thread, action, digest, key)
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
                await _record_refusal(services, thread, digest, action, config, refusals[-1])
            services.trace_node("approve", outcome="waiting", tool=action.tool, digest=digest)
            raise
        checked = _decision(value, digest=digest, action=action, config=config)
        if isinstance(checked, Decision):
            break
        refusals.append(checked)
    now = time.time()
    decision, decided_at, expires_at, extra = await _standing(
        services, thread, action, digest, checked, decided_at=now, expires_at=now + approval_ttl_s()
    )
    edited = _edited(action.args, decision.args)
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


def _edited(proposed: dict[str, Any], approved: dict[str, Any] | None) -> str:
    """What an approval with edited arguments changed (`amount_cents 64900 -> 30000`)."""
    if approved is None:
        return ""
    changes = [f"{k} {proposed[k]} -> {v}" for k, v in approved.items() if proposed.get(k) != v]
    return "approved with edits: " + ", ".join(changes) if changes else ""


HELD = "awaiting approval in thread"
"""Marks an action withheld because the same action on the same subject waits elsewhere."""


def claim_subject(action: ProposedAction, argument: str | None) -> str | None:
    """What an action claims while it waits for a human: its tool on its subject, the value
    of `argument` (the argument its domain names for the tool, `DomainPack.subject_argument`:
    `orders.issue_refund:12345`, `deploys.rollback:chg-…`); None when it has none."""
    value = action.args.get(argument) if argument else None
    return f"{action.tool}:{value}" if value not in (None, "") else None


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


async def _held_elsewhere(
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


def _unsealed(
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


async def _done_already(
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


async def _record_refusal(
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


def _inject_fault(point: str) -> None:
    if os.environ.get(FAULT_ENV) == point:
        os.kill(os.getpid(), signal.SIGKILL)


def proposal_for(state: MusterState, thread: str, record: ActionRecord) -> ProposedAction | None:
    """The proposal an action record was approved for (latest report first): what a
    domain's check before execution compares with the state it re-reads."""
    for report in reversed(state.get("reports") or []):
        for action in report.proposed_actions:
            if action.tool == record.tool and (
                approval_digest(action, idempotency_key(thread, action)) == record.digest
            ):
                return action
    return None


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
        result = await services.hub.call_action(
            record.tool, {**args, "approval": token, **extra}
        )
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
