"""LangGraph Agent Inbox's schema on Muster's approval interrupt, and its answers mapped back.

The approval interrupt's value keeps every key of Muster's own shape (`kind`, `tool`,
`args`, `digest`, ...) and also carries Agent Inbox's `HumanInterrupt` fields
(`inbox_fields`): `action_request` (`action`: the tool, `args`), `config` (`allow_accept`,
`allow_edit`, `allow_respond`, `allow_ignore`) and `description` (markdown: the evidence, the
policy, the digest and the draft reply).

A resume in Agent Inbox's `HumanResponse` shape, `{"type": "accept"|"edit"|"response"|
"ignore", "args": ...}`, alone or as the one-element list Agent Inbox sends, is turned into
Muster's own decision value (`as_decision_value`) and then checked by
`graph.approvers.check_decision` like any other: a known approver, the roles a policy limit
needs, the bounds of an edit. What does not translate is a `Refusal`, and the action stays
pending with the error in the next interrupt.

- `accept`: approve. Agent Inbox sends back the `action_request` it showed (every argument
  as a string); it must name the pending tool and its arguments, which binds the answer to
  the action as the digest does (a `digest` key is also accepted).
- `edit`: approve with the edited arguments (strings are read back as the proposed
  argument's type), held to the approvers file's `edits` and the limits on what will run.
- `response`: a person's free-text answer; recorded as the decision's note, and the action
  is rejected (it does not run).
- `ignore`: reject.

Who decides: the LangGraph deployment's authenticated user when it has custom auth
(`langgraph_auth_user_id` in the run's configurable); else the response's own `by` (a Muster
extension, believed as Studio's `by` is); else `MUSTER_INBOX_APPROVER`, the name a local
`langgraph dev` decides under. With `MUSTER_ACCOUNTS` set (authentication on), a claimed name
is refused: only the deployment's authenticated user decides, as the CLI needs a token.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from graph.approvers import ApproverConfig, Refusal
from workers.contracts import Answer

INBOX_APPROVER_ENV = "MUSTER_INBOX_APPROVER"
"""The approver an Agent Inbox answer speaks for when nothing else names one (local use)."""

ACCOUNTS_ENV = "MUSTER_ACCOUNTS"
"""Set: authentication is on, and a claimed approver name is refused."""

RESPONSE_TYPES = ("accept", "edit", "response", "ignore")

STUDIO_USER = "langgraph-studio-user"
"""The identity LangGraph gives Studio's own requests: not a person of the approvers file."""


def inbox_fields(
    tool: str,
    args: Mapping[str, Any],
    *,
    digest: str,
    config: ApproverConfig,
    reason: str = "",
    limits: Sequence[str] = (),
    answer: Answer | None = None,
) -> dict[str, Any]:
    """Agent Inbox's `HumanInterrupt` fields for one pending action."""
    editable = [
        edit.arg
        for edit in config.edits_for(tool)
        if isinstance(args.get(edit.arg), int) and not isinstance(args.get(edit.arg), bool)
    ]
    return {
        "action_request": {"action": tool, "args": dict(args)},
        "config": {
            "allow_accept": True,
            "allow_edit": bool(editable),
            "allow_respond": True,
            "allow_ignore": True,
        },
        "description": description(
            tool,
            args,
            digest=digest,
            reason=reason,
            limits=limits,
            answer=answer,
            editable=editable,
            config=config,
        ),
    }


def description(
    tool: str,
    args: Mapping[str, Any],
    *,
    digest: str,
    reason: str,
    limits: Sequence[str],
    answer: Answer | None,
    editable: Sequence[str],
    config: ApproverConfig,
) -> str:
    """The markdown Agent Inbox shows above the buttons."""
    lines = [f"**{tool}** needs a human decision.", ""]
    if reason:
        lines += [f"**Why:** {reason}", ""]
    lines += ["**Arguments:**", ""]
    lines += [f"- `{key}`: {json.dumps(value)}" for key, value in args.items()]
    lines += ["", f"**Digest:** `{digest}`", ""]
    if limits:
        lines += ["**Policy limits:**", ""] + [f"- {limit}" for limit in limits] + [""]
    evidence = _evidence(answer, tool, args)
    policy = [line for line in evidence if "POL-" in line]
    if policy:
        lines += ["**Policy:**", ""] + [f"- {line}" for line in policy] + [""]
    if evidence:
        lines += ["**Evidence:**", ""] + [f"- {line}" for line in evidence] + [""]
    if answer is not None and answer.customer_reply:
        quoted = [f"> {line}" if line else ">" for line in answer.customer_reply.splitlines()]
        lines += ["**Draft reply to the customer:**", ""] + quoted + [""]
    for edit in config.edits_for(tool):
        if edit.arg in editable:
            lines.append(
                f"**Edit:** `{edit.arg}` may be lowered to {edit.at_least}..{args[edit.arg]} "
                f"({edit.rule})"
            )
    lines += [
        "",
        "Accept approves it as proposed; Edit approves the edited arguments; "
        "Respond records your answer and rejects it; Ignore rejects it.",
    ]
    return "\n".join(lines).strip() + "\n"


def _evidence(answer: Answer | None, tool: str, args: Mapping[str, Any]) -> list[str]:
    """The evidence lines the answer's step for this action cites (all when it cites none)."""
    if answer is None:
        return []
    steps = [s for s in answer.resolution if s.kind == "action" and s.tool == tool]
    step = next((s for s in steps if s.args == dict(args)), steps[0] if steps else None)
    if step is None or not step.cites:
        return list(answer.evidence)
    cited = set(step.cites)
    kept = []
    for line in answer.evidence:
        head = line[1 : line.find("]")] if line.startswith("[") and "]" in line else ""
        if set(head.split(", ")) & cited:
            kept.append(line)
    return kept


def is_inbox_response(value: object) -> bool:
    """Whether a resume value is Agent Inbox's `HumanResponse` (or a list holding one),
    rather than Muster's own `{"approved": ...}` decision."""
    if isinstance(value, list) and value:
        value = value[0]
    return isinstance(value, dict) and "type" in value and "approved" not in value


def _as_proposed(value: Any, proposed: Any) -> Any:
    """An argument Agent Inbox sent as a string, read back as the proposed value's type."""
    if not isinstance(value, str) or isinstance(proposed, str):
        return value
    text = value.strip()
    if isinstance(proposed, bool):
        return {"true": True, "false": False}.get(text.lower(), value)
    if isinstance(proposed, int) and text.lstrip("-").isdigit():
        return int(text)
    try:
        return json.loads(text)
    except ValueError:
        return value


def _action_args(
    request: object, *, tool: str, args: Mapping[str, Any], kind: str
) -> dict[str, Any] | str:
    """The arguments an `accept` or `edit` carries (read back as the proposed types), or
    why they cannot be used."""
    if not isinstance(request, dict) or not isinstance(request.get("args"), dict):
        return (
            f'an Agent Inbox "{kind}" must carry the action request '
            '({"action": "<tool>", "args": {...}})'
        )
    if request.get("action") != tool:
        return (
            f"the response is for {request.get('action')!r}, but the pending action is "
            f"{tool}: it does not match this action"
        )
    return {key: _as_proposed(value, args.get(key)) for key, value in request["args"].items()}


def decider(value: Mapping[str, Any], configurable: Mapping[str, Any]) -> str | Refusal:
    """Who an Agent Inbox answer speaks for (see the module's docstring), or a `Refusal`."""
    claimed = str(value.get("by") or "").strip()
    user = str(configurable.get("langgraph_auth_user_id") or "").strip()
    if user and user != STUDIO_USER:
        if claimed and claimed != user:
            return Refusal(
                error=f"the response names {claimed}, but the deployment authenticated {user}: "
                'leave "by" out, or sign in as that approver',
                by=claimed,
                approved=None,
            )
        return user
    if os.environ.get(ACCOUNTS_ENV):
        return Refusal(
            error=f"authentication is on (${ACCOUNTS_ENV}): an Agent Inbox answer needs the "
            "LangGraph deployment's authenticated user (custom auth); a claimed name "
            "is refused",
            by=claimed or "unknown",
            approved=None,
        )
    by = claimed or os.environ.get(INBOX_APPROVER_ENV, "").strip()
    if not by:
        return Refusal(
            error=f'the Agent Inbox answer names no approver: add "by": "<approver>", or set '
            f"{INBOX_APPROVER_ENV} for the server",
            by="unknown",
            approved=None,
        )
    return by


def as_decision_value(
    value: object,
    *,
    digest: str,
    tool: str,
    args: Mapping[str, Any],
    configurable: Mapping[str, Any],
) -> dict[str, Any] | Refusal:
    """An Agent Inbox `HumanResponse` as Muster's decision value (for `check_decision`),
    or the `Refusal` that says why it is not one."""
    if isinstance(value, list):
        if len(value) != 1:
            return Refusal(
                error=f"Agent Inbox sends one response in a list, not {len(value)}",
                by="unknown",
                approved=None,
            )
        value = value[0]
    if not isinstance(value, dict):
        return Refusal(error=f"unreadable response {value!r}", by="unknown", approved=None)
    kind = value.get("type")
    if kind not in RESPONSE_TYPES:
        return Refusal(
            error=f'"type" must be one of {", ".join(RESPONSE_TYPES)}, not {kind!r}',
            by=str(value.get("by") or "unknown"),
            approved=None,
        )
    by = decider(value, configurable)
    if isinstance(by, Refusal):
        return Refusal(error=by.error, by=by.by, approved=kind in ("accept", "edit"))
    decision: dict[str, Any] = {"by": by, "digest": value.get("digest") or digest}
    payload = value.get("args")
    if kind in ("accept", "edit"):
        if kind == "accept" and payload is None and value.get("digest"):
            return {**decision, "approved": True, "note": "accepted in Agent Inbox"}
        sent = _action_args(payload, tool=tool, args=args, kind=str(kind))
        if isinstance(sent, str):
            return Refusal(error=sent, by=by, approved=True)
        if kind == "accept":
            if sent != dict(args):
                return Refusal(
                    error="the accepted arguments are not the pending action's: "
                    "use edit to change them",
                    by=by,
                    approved=True,
                )
            return {**decision, "approved": True, "note": "accepted in Agent Inbox"}
        return {**decision, "approved": True, "args": sent, "note": "edited in Agent Inbox"}
    if kind == "response":
        if not isinstance(payload, str) or not payload.strip():
            return Refusal(
                error='a "response" must carry the answer as a non-empty string in "args"',
                by=by,
                approved=False,
            )
        return {**decision, "approved": False, "note": f"response: {payload.strip()}"}
    return {**decision, "approved": False, "note": "ignored in Agent Inbox"}
