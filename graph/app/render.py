"""What `muster` prints about a thread's answer: the answer, its totals, and what it waits for.

Every line the CLI writes about a thread is formatted here, in `graph.app.progress` (the
live progress of a run) or in `graph.app.render_threads` (`muster threads` and `show`); the
commands in `graph.app.cli` decide what to print and the exit code, never how it looks.
Tickets and tool text are not ours: everything printed here goes through `printable`
(`graph.app.printable`).
"""

from __future__ import annotations

import getpass
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from graph.app.hints import ANSWER, NOTHING, Carried
from graph.app.printable import plural, printable, say
from graph.approvers import approvers_path, load_approvers
from graph.facts import SHARED_CALL_PREFIX
from graph.proposals import approval_digest, idempotency_key, pending_proposals
from graph.supervisor_spend import spend
from graph.synthesize import compose_answer
from workers.contracts import Answer, Report
from workers.errors import MusterError


def describe_report(report: Report) -> str:
    """One line per report: worker, status, reason, evidence."""
    status = "ok" if report.status == "ok" else f"failed ({report.reason})"
    tools = ", ".join(
        f.tool + (" (shared fact)" if f.call_id.startswith(SHARED_CALL_PREFIX) else "")
        for f in report.findings
    )
    errors = sum(1 for c in report.tool_calls if c.outcome != "ok")
    extra = f", {plural(errors, 'tool error')}" if errors else ""
    if report.fallback_for:  # which model answered, when it was not the worker's own
        extra += f", answered by {report.model} (fallback for {report.fallback_for})"
    return (
        f"{report.worker:<10} {status:<22} {plural(len(report.findings), 'finding')}"
        f"{' from ' + tools if tools else ''}{extra}, {plural(report.steps_used, 'step')}"
    )


def waiting_for(value: Any) -> str:
    """What an interrupt waits for, in one line: the action with its amount and digest, or
    the question."""
    if not isinstance(value, dict):
        return f"waiting for a human: {value}"
    if value.get("kind") == "approval":
        args = value.get("args") or {}
        amount = args.get("amount_cents")
        money = f" of ${int(amount) / 100:,.2f}" if isinstance(amount, int) else ""
        order = f" on order {args['order_id']}" if args.get("order_id") else ""
        role = f" (needs a {value['needs_role']})" if value.get("needs_role") else ""
        return (
            f"waiting for approval of {value.get('tool')}{money}{order}{role}, "
            f"digest {str(value.get('digest', ''))[:12]}"
        )
    return f"waiting for an answer: {value.get('question', value)}"


def answer_markdown(answer: Answer) -> str:
    """The answer as Markdown: what happened, what we will do, the reply, what is open."""
    cite = lambda cites: f" `[{', '.join(cites)}]`" if cites else ""  # noqa: E731
    lines = [f"**Status:** {answer.status}" + (" (degraded)" if answer.degraded else "")]
    if answer.needs_human:
        lines[0] += " · **needs a human**"
    if answer.intents:
        lines.append(f"**Intents:** {', '.join(answer.intents)}")
    if answer.summary:
        lines += ["", "## What happened", ""]
        lines += [f"- {c.text}{cite(c.cites)}" for c in answer.summary]
    if answer.resolution:
        lines += ["", "## What we will do", ""]
        for step in answer.resolution:
            if step.kind == "action":
                args = ", ".join(f"{k}={v}" for k, v in step.args.items())
                head = f"**Action** `{step.tool}({args})`, *{step.approval}*: "
            elif step.kind == "open":
                head = "**Open:** "
            else:
                head = ""
            lines.append(f"- ({step.intent}) {head}{step.text}{cite(step.cites)}")
    if answer.customer_reply:
        lines += ["", "## Reply to send", ""]
        lines += [f"> {line}" if line else ">" for line in answer.customer_reply.splitlines()]
    if answer.open_questions:
        lines += ["", "## Open questions", ""]
        lines += [f"- {q}" for q in answer.open_questions]
    if answer.evidence:
        lines += ["", "## Evidence", ""]
        lines += [f"- {e}" for e in answer.evidence]
    if answer.degraded_reasons:
        lines += ["", "## Why it is degraded", ""]
        lines += [f"- {r}" for r in answer.degraded_reasons]
    return printable("\n".join(lines))


def print_result(
    thread_id: str,
    values: dict[str, Any],
    *,
    waiting: bool,
    as_json: bool,
    as_markdown: bool = False,
    interrupts: Sequence[Any] = (),
    carried: Carried = NOTHING,
    started: float | None = None,
) -> None:
    """The answer as text (or Markdown), or the answer and every report as JSON (with the
    run's totals, `started` being when the command began, `time.monotonic()`). A run that
    waits for a human shows the answer so far, and ends with what waits (the action, its
    amount and digest, or the question) and the command that answers it, carrying the
    options in force (`carried`). `interrupts` are the values of the thread's pending
    interrupts (its questions come from there)."""
    if as_json:
        payload = result_payload(
            thread_id, values, waiting=waiting, interrupts=interrupts, started=started
        )
        print(json.dumps(payload, indent=2))
        return
    answer = _answer_at_stop(values, waiting=waiting)
    if answer is not None and values.get("answer") is None:
        print("\nAnswer so far (waiting for a human):")
    pending = pending_approvals(values, thread_id) if waiting else []
    questions = pending_questions(interrupts) if waiting else []
    if as_markdown and answer is not None:
        print()
        print(answer_markdown(answer))
    elif answer is not None:
        print()
        say(answer.text)
    if not waiting:
        print(f"\nthread: {thread_id}")
        return
    print(f"\nthread: {thread_id} (details: {carried.command('show', thread_id, run=False)})")
    stops = [i for i in interrupts if isinstance(i, dict) and i.get("kind") == "paused"]
    for line in waiting_lines(thread_id, pending, questions, carried, paused=stops):
        say(line)


def _answer_at_stop(values: Mapping[str, Any], *, waiting: bool) -> Answer | None:
    """The thread's answer, or while it waits the answer so far (the one it would give now)."""
    final: Answer | None = values.get("answer")
    if final is None and waiting and values.get("request"):
        return compose_answer(values)  # type: ignore[arg-type]
    return final


def result_payload(
    thread_id: str,
    values: dict[str, Any],
    *,
    waiting: bool,
    interrupts: Sequence[Any] = (),
    started: float | None = None,
) -> dict[str, Any]:
    """What `--json` prints for a thread at this stop (and `muster serve` returns): the
    answer (final or so far) with its standing, what waits, the totals, the reading, the
    reports and recoveries."""
    answer = _answer_at_stop(values, waiting=waiting)
    return {
        "thread_id": thread_id,
        "waiting_for_human": waiting,
        # The answer's standing at this stop, final or so far: a script reads these
        # without digging into the answer (a thread that waits always needs a human).
        "status": answer.status if answer else None,
        "degraded": answer.degraded if answer else None,
        "needs_human": waiting or bool(answer and answer.needs_human),
        "pending_approvals": pending_approvals(values, thread_id) if waiting else [],
        "pending_questions": pending_questions(interrupts) if waiting else [],
        # While it waits, the answer so far: the one it would give now (issue 24).
        "answer": answer.model_dump() if answer else None,
        "answer_is_final": values.get("answer") is not None,
        "totals": run_totals(values, started=started),
        "reading": {
            "intents": values.get("intents") or [],
            "unaccounted": values.get("unaccounted") or [],
            "confidence": values.get("confidence"),
        },
        "reports": [r.model_dump() for r in values.get("reports") or []],
        "recoveries": [r.model_dump() for r in values.get("recoveries") or []],
    }


def run_totals(values: Mapping[str, Any], *, started: float | None = None) -> dict[str, Any]:
    """The thread's totals so far: worker steps and tokens (what the run budgets count),
    their cost in money, dispatches, the workers' own time, actions executed, and this
    command's wall time."""
    reports: list[Report] = list(values.get("reports") or [])
    actions = {a.digest: a for a in values.get("actions") or []}
    supervisor_usd, supervisor_unpriced, supervisor_tokens = spend(
        list(values.get("supervisor_calls") or [])
    )
    return {
        "steps": sum(r.steps_used for r in reports),
        "tokens": sum(r.tokens for r in reports),
        # Money from the maintained price table (workers/cost.py), the workers' and the
        # supervisor's own calls (the LLM planner, the answer writer); calls it does not
        # know are counted apart, never priced as free.
        "cost_usd": round(sum(r.cost_usd for r in reports) + supervisor_usd, 6),
        "supervisor_cost_usd": round(supervisor_usd, 6),
        "supervisor_tokens": supervisor_tokens,
        "unpriced_calls": sum(r.unpriced_calls for r in reports) + supervisor_unpriced,
        "dispatches": len(reports),
        "workers_s": round(sum(r.duration_ms for r in reports) / 1000, 3),
        "actions_executed": sum(1 for a in actions.values() if a.status == "executed"),
        "duration_s": round(time.monotonic() - started, 3) if started is not None else None,
    }


def waiting_lines(
    thread_id: str,
    approvals: Sequence[dict[str, Any]],
    questions: Sequence[dict[str, Any]],
    carried: Carried = NOTHING,
    *,
    paused: Sequence[dict[str, Any]] = (),
) -> list[str]:
    """One line per thing a paused thread waits for: what it is, and the command that
    answers it as it can be pasted (`--digest` binds an approval to what was shown); a
    thread held by the kill switch (`paused`) says so and how it continues."""
    lines = []
    for stop in paused[:1]:
        resume = carried.command("resume", thread_id)
        lines.append(
            f"waiting: {stop.get('reason')}; approved actions run after `muster resume-all`, "
            f"then: {resume}"
        )
    for ask in approvals:
        by, who = approver_words(ask)
        command = carried.command("approve", thread_id, "--digest", str(ask["digest"])[:12], *by)
        lines.append(f"{waiting_for(ask)}; approve with: {command}{who} (--reject to refuse)")
    for ask in questions:
        command = carried.command("clarify", thread_id, ANSWER)
        lines.append(f"{waiting_for(ask)}; answer with: {command}")
    if not lines:
        lines.append(f"waiting for a human: {carried.command('show', thread_id, run=False)}")
    return lines


def approver_words(ask: dict[str, Any]) -> tuple[list[str], str]:
    """`--by` for an approval command, and a note on who may give it: nothing when the OS
    user (`approve`'s default) is an approver who may approve this action; else `--by NAME`
    with the approvers who may."""
    try:
        approvers = load_approvers()
    except MusterError:
        return ["--by", "NAME"], ""
    tool, args = str(ask.get("tool")), dict(ask.get("args") or {})
    user = getpass.getuser()
    if not approvers.unknown_approver(user) and not approvers.role_problem(user, tool, args):
        return [], ""
    roles = {limit.role for limit in approvers.limits_for(tool, args)}
    names = [n for n, a in sorted(approvers.approvers.items()) if roles <= set(a.roles)]
    who = ", ".join(names) or f"nobody; see {approvers_path()}"
    return ["--by", "NAME"], f" (NAME: {who})"


def pending_questions(interrupts: Sequence[Any]) -> list[dict[str, Any]]:
    """The clarifying questions a paused thread waits on (from its interrupts' values)."""
    return [
        {
            "kind": "clarification",
            "worker": value.get("worker"),
            "packet_id": value.get("packet_id"),
            "question": value.get("question"),
        }
        for value in (getattr(i, "value", i) for i in interrupts)
        if isinstance(value, dict) and value.get("kind") == "clarification"
    ]


def pending_approvals(values: dict[str, Any], thread_id: str) -> list[dict[str, Any]]:
    """The actions of a paused thread that wait for a decision, with the digest to approve,
    for a script that approves without parsing `muster show`."""
    return [
        {
            "kind": "approval",
            "tool": action.tool,
            "args": action.args,
            "digest": approval_digest(action, idempotency_key(thread_id, action)),
            "reason": action.reason,
            "proposed_by": action.proposed_by,
        }
        for action in pending_proposals(values, thread_id)  # type: ignore[arg-type]
    ]
