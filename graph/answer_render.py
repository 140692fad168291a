"""How an answer reads as text: the plain layout in a pack's wording, and one-line summaries."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from workers.contracts import ActionRecord, Answer


def summarize_text(text: str, *, limit: int = 320) -> str:
    """A one-line summary of a tool result: scalar fields of a JSON object, result titles
    of a search, or the text itself."""
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        results = data.get("results")
        if isinstance(results, list) and results:
            items = [
                f'{r.get("id", "?")} "{r.get("title", "")}"'
                for r in results[:3]
                if isinstance(r, dict)
            ]
            summary = "; ".join(items)
        else:
            scalars = [
                f"{k}={v}" for k, v in data.items() if isinstance(v, str | int | float | bool)
            ]
            summary = ", ".join(scalars)
    else:
        summary = " ".join(text.split())
    return summary if len(summary) <= limit else summary[: limit - 1] + "…"


def args_text(args: dict[str, Any]) -> str:
    """A call's arguments as `k=v, k=v`."""
    return ", ".join(f"{k}={v}" for k, v in args.items())


def action_line(action: ActionRecord) -> str:
    """One line per action record: who proposed it, who decided, what came of it."""
    head = f"- {action.tool}({args_text(action.args)}) proposed by {action.proposed_by}: "
    if action.status == "held":
        return head + f"HELD: {action.result}"
    if action.status == "rejected":
        return (
            head + f"REJECTED by {action.decided_by}" + (f" ({action.note})" if action.note else "")
        )
    if action.status == "executed":
        return head + f"approved by {action.decided_by}, EXECUTED: {summarize_text(action.result)}"
    return head + f"approved by {action.decided_by}, {action.status.upper()}: {action.result[:200]}"


@dataclass(frozen=True, kw_only=True)
class AnswerLabels:
    """The domain wording of `render_text`'s layout; a pack gives its own (`ANSWER_LABELS`
    in its plug-in, or passed by its `render_answer`), else these neutral ones."""

    reply: str = "Draft reply"
    """The heading over the answer's reply (support: "Draft reply to the customer")."""
    review: str = "a person should review this request."
    """What the NEEDS HUMAN line asks (support: "... review this ticket.")."""


def render_text(
    answer: Answer,
    *,
    request: str,
    labels: AnswerLabels,
    policies: list[str],
    action_lines: list[str],
    recovery_lines: list[str],
) -> str:
    """The answer for a terminal (and, being plain Markdown, for a Markdown viewer), in the
    pack's wording (`labels`)."""
    lines = [f"Request: {' '.join(request.split())}"]
    if answer.intents:
        lines.append("Intents: " + ", ".join(answer.intents))
    if answer.summary:
        lines += ["", "What happened:"]
        lines += [
            f"- {c.text}" + (f" [{', '.join(c.cites)}]" if c.cites else "") for c in answer.summary
        ]
    if answer.resolution:
        lines += ["", "What we will do:"]
        for step in answer.resolution:
            head = f"- ({step.intent}) "
            if step.kind == "action":
                call = f"{step.tool}({args_text(step.args)})"
                head += f"ACTION {call} [{step.approval}]: "
            elif step.kind == "open":
                head += "OPEN: "
            lines.append(head + step.text + (f" [{', '.join(step.cites)}]" if step.cites else ""))
    if answer.customer_reply:
        lines += ["", f"{labels.reply}:"]
        lines += ["  " + line if line else "" for line in answer.customer_reply.splitlines()]
    if answer.open_questions:
        lines += ["", "Open questions:"]
        lines += [f"- {q}" for q in answer.open_questions]
    if policies:
        lines += ["", "Policy that applies:"]
        lines += [f"- {p}" for p in policies]
    if answer.evidence:
        lines += ["", "Evidence:"]
        lines += [f"- {e}" for e in answer.evidence]
    if action_lines:
        lines += ["", "Actions:"]
        lines += action_lines
    if recovery_lines:
        lines += ["", "Recovery:"]
        lines += recovery_lines
    if answer.degraded:
        lines += [
            "",
            "DEGRADED: " + "; ".join(answer.degraded_reasons or [f"status is {answer.status}"]),
        ]
    if answer.needs_human:
        lines += ["", f"NEEDS HUMAN: {labels.review}"]
    return "\n".join(lines)
