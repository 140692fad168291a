"""What `muster replay` compares: a run reduced to the fields a change can move, and the
differences between the original and its replay, scored with pydantic-evals.

A `RunView` is plain JSON-able data read from a thread's state: the plan, each packet's
trajectory (its tool calls and their outcomes, attempt by attempt), each packet's report, the
proposed and decided actions, the answer's status and text, and the tokens. Times and
durations are left out (they move on every run), and the replay's thread id is written as
the original's, so an unchanged run compares equal field by field.

Each field is one `SameAs` evaluator returning a bool (the same library `muster eval` scores
with), so a replayed batch reads as "how many tickets kept each field".
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pydantic import BaseModel
from pydantic_evals.evaluators import Evaluator, EvaluatorContext

from graph.state import current_reports
from graph.synthesize import compose_answer
from workers.contracts import Answer, Handoff, Report

Field = Literal[
    "plan", "trajectory", "reports", "actions", "answer_status", "answer_text", "tokens"
]
"""The fields a replay compares, in the order differences are printed."""
FIELDS: tuple[Field, ...] = get_args(Field)
CLAIM_TIME = re.compile(r"\(proposed \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\)")
"""The clock time in a held action's line (graph/approval_settled.py), masked before comparing."""
MAX_LINES = 12
"""The most changed lines of an answer's text a difference shows."""


class RunView(BaseModel):
    """One run as a replay compares it (see the module docstring)."""

    plan: list[dict[str, Any]] = []
    """Each packet: id, worker, objective, tools, budget, dependencies, inputs, shared facts."""
    trajectory: dict[str, list[str]] = {}
    """Packet id → each attempt's steps and tool calls, `tool(args) -> outcome`."""
    reports: dict[str, dict[str, Any]] = {}
    """Packet id → the current report: status, reason, conclusion, note, findings."""
    actions: list[str] = []
    """Each proposed action (`packet: tool(args)`) and each decided one (`tool(args): status`)."""
    answer_status: str = ""
    """`complete`, `partial` or `failed`, with degraded / needs-human marks; `none` without one."""
    answer_text: str = ""
    """The answer's text (the answer so far for a thread waiting on a human)."""
    tokens: dict[str, int] = {}
    """Tokens per packet attempt, the supervisor's own model calls (`supervisor:<node>`,
    `with_supervisor_tokens`), and the run's `total`."""
    waiting: bool = False
    """The thread stopped for a human (compared through the answer and actions)."""
    error: str | None = None
    """Why the replay itself could not run, if it could not."""
    model_misses: list[str] = []
    """Model requests the recording did not hold (not compared: reported)."""
    unrecorded_calls: list[str] = []
    """Tool calls the recording did not hold (not compared: reported)."""


def _call(tool: str, args: dict[str, Any]) -> str:
    return f"{tool}({json.dumps(args, sort_keys=True)})"


def _packet(packet: Handoff) -> dict[str, Any]:
    return {
        "id": packet.id,
        "worker": packet.recipient,
        "objective": packet.objective,
        "tools": sorted(packet.tool_allow),
        "max_steps": packet.max_steps,
        "depends_on": list(packet.depends_on),
        "inputs": dict(packet.inputs),
        "facts": [_call(f.tool, f.args) for f in packet.facts],
    }


def _attempt(report: Report) -> str:
    calls = ", ".join(f"{_call(c.tool, c.args)} -> {c.outcome}" for c in report.tool_calls)
    return f"attempt {report.attempt}: {report.steps_used} steps; {calls or 'no tool calls'}"


def _report(report: Report) -> dict[str, Any]:
    return {
        "worker": report.worker,
        "status": report.status,
        "reason": report.reason,
        "fallback": bool(report.fallback),
        "conclusion": report.conclusion,
        "note": report.note,
        "findings": [f"{_call(f.tool, f.args)}: {f.observation}" for f in report.findings],
    }


def _answer_status(answer: Answer | None) -> str:
    if answer is None:
        return "none"
    marks = [
        m for m, on in (("degraded", answer.degraded), ("needs human", answer.needs_human)) if on
    ]
    return " ".join([answer.status, *marks])


def run_view(
    values: dict[str, Any], *, waiting: bool, renames: dict[str, str] | None = None
) -> RunView:
    """`values` (a thread's state) as a `RunView`; each thread id in `renames` is written as
    the one it maps to (a replay's threads as the originals they replay: an answer names
    its own thread, or another that holds a claim on the same order)."""
    reports: list[Report] = list(values.get("reports") or [])
    answer: Answer | None = values.get("answer")
    if answer is None and values.get("request"):
        answer = compose_answer(values)  # type: ignore[arg-type]  # the answer so far
    trajectory: dict[str, list[str]] = {}
    tokens: dict[str, int] = {}
    for report in reports:
        trajectory.setdefault(report.packet_id, []).append(_attempt(report))
        tokens[f"{report.packet_id}#{report.attempt}"] = report.tokens
    tokens["total"] = sum(r.tokens for r in reports)
    actions = [
        f"{r.packet_id}: {_call(a.tool, a.args)}" for r in reports for a in r.proposed_actions
    ]
    actions += [f"{_call(a.tool, a.args)}: {a.status}" for a in values.get("actions") or []]
    view = RunView(
        plan=[_packet(p) for p in values.get("packets") or []],
        trajectory=trajectory,
        reports={pid: _report(r) for pid, r in current_reports(reports).items()},
        actions=actions,
        answer_status=_answer_status(answer),
        answer_text=answer.text if answer is not None else "",
        tokens=tokens,
        waiting=waiting,
    )
    # When a run happened is no part of what it did: a held action's answer says since when
    # the other thread's claim stands, and a replay that starts in another minute than its
    # original must not differ for that.
    view.answer_text = CLAIM_TIME.sub("(proposed <time>)", view.answer_text)
    if not renames:
        return view
    text = view.model_dump_json()
    for old in sorted(renames, key=len, reverse=True):  # a longer id first: no partial match
        text = text.replace(old, renames[old])
    return RunView.model_validate_json(text)


@dataclass(repr=False)
class SameAs(Evaluator[str, RunView, str]):
    """Did the replay keep one field of the original run?"""

    field: Field
    """The field it compares; also the assertion's name in the report."""

    def get_default_evaluation_name(self) -> str:
        return self.field

    def evaluate(self, ctx: EvaluatorContext[str, RunView, str]) -> bool:
        got, expected = ctx.output, ctx.expected_output
        if not isinstance(got, RunView) or not isinstance(expected, RunView) or got.error:
            return False
        return bool(getattr(got, self.field) == getattr(expected, self.field))


@dataclass
class Difference:
    """One field that differs, with the parts of it that do, as lines."""

    name: Field
    """The field."""
    lines: list[str] = field(default_factory=list)
    """What changed in it, one line each."""


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _keyed(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    lines = []
    for key in dict.fromkeys([*before, *after]):
        if key not in after:
            lines.append(f"{key}: only in the original: {_short(before[key])}")
        elif key not in before:
            lines.append(f"{key}: only in the replay: {_short(after[key])}")
        elif before[key] != after[key]:
            lines.append(f"{key}: {_short(before[key])}  ->  {_short(after[key])}")
    return lines


def _listed(before: list[Any], after: list[Any]) -> list[str]:
    shown = [json.dumps(x, sort_keys=True) for x in before]
    got = [json.dumps(x, sort_keys=True) for x in after]
    lines = [f"- {_short(x)}" for x in shown if x not in got]
    return lines + [f"+ {_short(x)}" for x in got if x not in shown]


def differences(original: RunView, replay: RunView) -> list[Difference]:
    """Each compared field that differs, in `FIELDS` order, with what changed."""
    found = []
    for name in FIELDS:
        before, after = getattr(original, name), getattr(replay, name)
        if before == after:
            continue
        if isinstance(before, dict):
            lines = _keyed(before, after)
        elif isinstance(before, list):
            lines = _listed(before, after) or ["the same items, in another order"]
        elif "\n" in before + after:  # the answer's text: the lines that changed
            lines = [
                _short(line)
                for line in difflib.unified_diff(
                    before.splitlines(), after.splitlines(), lineterm="", n=0
                )
                if not line.startswith(("---", "+++", "@@"))
            ][:MAX_LINES]
        else:
            lines = [f"{_short(before)}  ->  {_short(after)}"]
        found.append(Difference(name, lines))
    return found


def with_supervisor_tokens(view: RunView, tokens: dict[str, int]) -> RunView:
    """`view` with the tokens of the supervisor's model calls (the LLM planner's, the answer
    writer's; from the run's trace, by node) beside the workers' and in the total."""
    if not tokens:
        return view
    merged = {k: v for k, v in view.tokens.items() if k != "total"}
    merged.update({f"supervisor:{node}": n for node, n in sorted(tokens.items())})
    merged["total"] = view.tokens.get("total", 0) + sum(tokens.values())
    return view.model_copy(update={"tokens": merged})
