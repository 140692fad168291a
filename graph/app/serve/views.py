"""A thread as the API shows it, and the decisions waiting across the store.

`thread_detail` is the payload `muster run --json` prints at the thread's latest stop
(`graph.app.render.result_payload`, the one builder of it), so a script reads the same fields
from the CLI and the API, plus the thread's status, its actions and its audit rows.
`pending_decisions` lists every approval waiting in the store with what a person needs to
decide it: the action, its digest, the policy and evidence it rests on, the draft reply.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from langgraph.types import StateSnapshot

from checkpoints.threads import status_of, thread_config, waiting_on
from checkpoints.threads import thread_ids as all_thread_ids
from graph.app.render import result_payload
from graph.app.runtime import MusterRuntime
from graph.approvers import ApproverConfig, load_approvers
from graph.synthesize import compose_answer
from workers.contracts import Answer, ResolutionStep

_POLICY_ID = re.compile(r"\bPOL-[A-Z]+-\d+\b")
_CITATION = re.compile(r"^\[([^\]]+)\]")


def cli_payload(
    thread_id: str, values: dict[str, Any], *, waiting: bool, interrupts: Sequence[Any]
) -> dict[str, Any]:
    """What `muster run --json` prints for this stop (`render.result_payload`), as JSON
    values; the totals' `duration_s` is null here (no command ran)."""
    payload = result_payload(thread_id, values, waiting=waiting, interrupts=interrupts)
    loaded: dict[str, Any] = json.loads(json.dumps(payload))  # tuples as lists, as printed
    return loaded


async def thread_detail(runtime: MusterRuntime, thread_id: str, *, running: bool) -> dict[str, Any]:
    """The thread at its latest checkpoint (see `ThreadDetail`); `running`: this server is
    running it now."""
    snapshot = await runtime.graph.aget_state(thread_config(thread_id))
    values = dict(snapshot.values)
    interrupts = [i.value for i in snapshot.interrupts]
    payload = cli_payload(thread_id, values, waiting=bool(interrupts), interrupts=interrupts)
    rows = await runtime.services.audit.rows(thread_id) if runtime.services.audit else []
    return {
        **payload,
        "thread_status": status_of(snapshot),
        "updated_at": str(snapshot.created_at or ""),
        "request": str(values.get("request") or ""),
        "running_here": running,
        "actions": [record.model_dump() for record in values.get("actions") or []],
        "audit": [
            {
                "at": row.at,
                "event": row.event,
                "actor": row.actor,
                "role": row.role,
                "digest": row.digest,
                "result": row.result,
            }
            for row in rows
        ],
    }


async def pending_decisions(
    runtime: MusterRuntime, thread_ids: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Every approval waiting in `thread_ids` (default: the whole store), in that order,
    most recently updated first (see `ApprovalItem`)."""
    items: list[dict[str, Any]] = []
    edits = load_approvers()
    for thread_id in thread_ids if thread_ids is not None else await all_thread_ids(runtime.saver):
        snapshot = await runtime.graph.aget_state(thread_config(thread_id))
        if "approval" in waiting_on(snapshot):
            items += approval_items(thread_id, snapshot, edits)
    return items


def editable_args(config: ApproverConfig, tool: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    """The arguments of this action an approval may lower, with their bounds."""
    return [
        {"arg": e.arg, "at_least": e.at_least, "at_most": args[e.arg], "rule": e.rule}
        for e in config.edits_for(tool)
        if isinstance(args.get(e.arg), int) and not isinstance(args.get(e.arg), bool)
    ]


def approval_items(
    thread_id: str, snapshot: StateSnapshot, config: ApproverConfig | None = None
) -> list[dict[str, Any]]:
    """The thread's pending approvals, each with the answer so far's evidence, policy and
    draft reply for it."""
    values = dict(snapshot.values)
    answer: Answer | None = values.get("answer")
    if answer is None and values.get("request"):
        answer = compose_answer(values)  # type: ignore[arg-type]
    items = []
    for interrupt in snapshot.interrupts:
        ask = interrupt.value
        if not isinstance(ask, dict) or ask.get("kind") != "approval":
            continue
        step = _step_for(answer, str(ask.get("tool")), dict(ask.get("args") or {}))
        evidence = _evidence_for(answer, step)
        policies = set(_POLICY_ID.findall(f"{ask.get('reason', '')} {step.text if step else ''}"))
        items.append(
            {
                "thread_id": thread_id,
                "request": str(values.get("request") or ""),
                "tool": str(ask.get("tool")),
                "args": dict(ask.get("args") or {}),
                "digest": str(ask.get("digest")),
                "reason": str(ask.get("reason") or ""),
                "proposed_by": str(ask.get("proposed_by") or ""),
                "needs_role": ask.get("needs_role"),
                "limits": list(ask.get("limits") or []),
                "policy": [line for line in evidence if set(_POLICY_ID.findall(line)) & policies],
                "evidence": evidence,
                "draft_reply": answer.customer_reply if answer else "",
                "refused_before": [str(e) for e in ask.get("errors") or []],
                "editable": editable_args(
                    config or load_approvers(), str(ask.get("tool")), dict(ask.get("args") or {})
                ),
                "decide_url": f"/threads/{thread_id}/decisions",
            }
        )
    return items


def _step_for(answer: Answer | None, tool: str, args: dict[str, Any]) -> ResolutionStep | None:
    """The answer's resolution step for this action, if it has one."""
    if answer is None:
        return None
    steps = [s for s in answer.resolution if s.kind == "action" and s.tool == tool]
    exact = [s for s in steps if s.args == args]
    chosen = exact or steps
    return chosen[0] if chosen else None


def _evidence_for(answer: Answer | None, step: ResolutionStep | None) -> list[str]:
    """The evidence lines the step cites (every line when it cites none)."""
    if answer is None:
        return []
    if step is None or not step.cites:
        return list(answer.evidence)
    cited = set(step.cites)
    return [
        line
        for line in answer.evidence
        if (match := _CITATION.match(line)) and set(match[1].split(", ")) & cited
    ]
