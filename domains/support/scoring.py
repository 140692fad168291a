"""The support eval's labelled fields: what `muster eval DATASET` compares per ticket.

An eval file is JSONL, one labelled ticket per line (`LABELS.md` beside this file has the
format and the rules the labels follow). `TicketLabels` is a line's labels; `read_outcome`
reads what Muster did from a thread's state, the same way for a finished run and for one that
paused on a human, into a `TicketOutcome` with the same fields. The shell's harness
(`graph/app/eval*.py`) runs the tickets, compares the `FIELDS` against the `TARGETS` and
prints the tables; it finds this module as the plug-in's `EVAL_FIELDS`. All of it is pure:
no servers, no pydantic-evals.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from graph.synthesize import compose_answer
from workers.contracts import Answer, Handoff, Report, canonical_json
from workers.proposals import decided_args

from . import eval_measures

EVAL_DATABASES = ("MUSTER_ORDERS_DB",)
"""The orders database: an eval gets a fresh one (refunds it approves never touch yours)."""
EVAL_ENV = {"MUSTER_TODAY": "2025-04-24"}
"""The orders system's "today" that LABELS.md computes every window from."""

FIELDS: tuple[str, ...] = (
    "intents",
    "workers",
    "policy_ids",
    "kb_ids",
    "actions",
    "status",
    "needs_human",
)
"""The scored fields, in the order the tables show them."""
TARGETS: dict[str, float] = {"intents": 0.90, "workers": 0.95, "policy_ids": 0.90}
"""The share of tickets each field must get right (from the issues); the others have none.
The actions are held to `eval_measures`' targets instead: right on 90% of the tickets that
need one, and no harmful proposal."""
MEASURES = eval_measures.MEASURES
"""The measures over the whole set (eval_measures.py)."""
LABELS_DOC = "domains/support/LABELS.md"
"""Where a malformed labels line is sent to read the format."""

RECOVERY_PACKET = re.compile(r"-via-|-escalated")
"""Ids of packets that recovery wrote (a reassignment, an escalation), not the planner."""
POLICY_ID = re.compile(r"POL-[A-Z]+-\d+")
KB_ID = re.compile(r'"id":\s*"(KB-\d+)"')


class LabelledAction(BaseModel):
    """One proposed side effect: the write tool and its arguments."""

    tool: str
    """Qualified tool name, e.g. `orders.issue_refund`."""
    args: dict[str, Any]
    """Its arguments, e.g. `{"order_id": "12345", "amount_cents": 12900}`."""


class TicketLabels(BaseModel):
    """What Muster should do with a ticket: a line's `labels`."""

    model_config = ConfigDict(frozen=True)

    intents: list[str]
    """Every intent the ticket expresses."""
    workers: list[str]
    """The workers the planner should send packets to."""
    policy_ids: list[str]
    """The policies the reports should cite."""
    kb_ids: list[str]
    """The KB articles the reports should cite."""
    actions: list[LabelledAction]
    """Every side effect that should be proposed for approval, and nothing else."""
    status: Literal["complete", "partial", "failed"]
    """The answer's status (`failed` is not used while the servers are healthy)."""
    needs_human: bool
    """Whether a person must pick the ticket up."""


Labels = TicketLabels
"""A line's labels, as the harness validates them."""


class TicketOutcome(BaseModel):
    """What Muster did with a ticket, read from its thread (`read_outcome`): the labelled
    fields, and how the run ended."""

    intents: list[str]
    """The intents the planner read (`state["intents"]`)."""
    workers: list[str]
    """The workers the planner sent packets to (recovery's packets do not count)."""
    policy_ids: list[str]
    """The policies the reports' findings cite."""
    kb_ids: list[str]
    """The KB articles the reports' findings cite."""
    actions: list[LabelledAction]
    """Every side effect the ok reports proposed."""
    status: str
    """The answer's status; for a paused run, the answer it would give now; `error` if the
    run raised, `no answer` if it stopped before synthesis."""
    needs_human: bool | None
    """The answer's `needs_human`; True while the run waits on a human; None without one."""
    thread_id: str
    """The thread it ran on (in the eval's temporary checkpoint store)."""
    waiting_for: list[str] = []
    """Pending interrupts (`approval`, `clarification`) if the run paused on a human."""
    open_intents: list[str] = []
    """Intents whose resolution step is `open` (unaddressed)."""
    error: str | None = None
    """Why the run raised, if it did."""


def planned_workers(packets: list[Handoff]) -> list[str]:
    """The workers the planner sent packets to; recovery's re-dispatches do not count."""
    return sorted(
        {p.recipient for p in packets if p.attempt == 1 and not RECOVERY_PACKET.search(p.id)}
    )


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None  # a capped observation: the regexes below still read it
    return data if isinstance(data, dict) else None


def cited_ids(reports: list[Report]) -> tuple[list[str], list[str]]:
    """(policy ids, KB ids) that the reports' findings cite: `policy.check_policy` results
    and fallback snapshots (`POL-…`), `kb.get_article` and every `kb.search_kb` result."""
    policies: set[str] = set()
    articles: set[str] = set()
    for finding in (f for report in reports for f in report.findings):
        text, data = finding.observation, _json_object(finding.observation)
        if finding.tool == "policy.check_policy":
            found = data.get("policy_id") if data else None
            policies.update([found] if isinstance(found, str) else POLICY_ID.findall(text)[:1])
        elif finding.source == "fallback" and (match := POLICY_ID.match(text)):
            policies.add(match.group(0))
        elif finding.tool == "kb.get_article":
            found = data.get("id") if data else None
            articles.update([found] if isinstance(found, str) else KB_ID.findall(text)[:1])
        elif finding.tool == "kb.search_kb":
            results = data.get("results") if data else None
            if isinstance(results, list):
                articles.update(str(r["id"]) for r in results if isinstance(r, dict) and "id" in r)
            else:
                articles.update(KB_ID.findall(text))
    return sorted(policies), sorted(articles)


def read_outcome(
    values: Mapping[str, Any],
    *,
    thread_id: str,
    waiting_for: list[str],
    error: str | None = None,
) -> TicketOutcome:
    """What Muster did, from a thread's state values. A run that paused on a human has no
    answer yet: its status is that of the answer it would give now (`compose_answer`), and it
    needs a human. A run that raised has status `error`."""
    reports: list[Report] = list(values.get("reports") or [])
    policy_ids, kb_ids = cited_ids(reports)
    proposed = {
        (a.tool, canonical_json(a.args)): a
        for report in reports
        if report.status == "ok"
        for a in report.proposed_actions
    }
    answer: Answer | None = values.get("answer")
    if answer is None and values.get("intents") is not None and error is None:
        answer = compose_answer(dict(values))  # type: ignore[arg-type]
    paused = bool(waiting_for) and values.get("answer") is None
    return TicketOutcome(
        thread_id=thread_id,
        intents=sorted(values.get("intents") or []),
        workers=planned_workers(list(values.get("packets") or [])),
        policy_ids=policy_ids,
        kb_ids=kb_ids,
        # Labels say what is done; the refund state an approval binds is not a decision.
        actions=[
            LabelledAction(tool=a.tool, args=decided_args(a.args))
            for _, a in sorted(proposed.items())
        ],
        status="error" if error else answer.status if answer else "no answer",
        needs_human=None if error or answer is None else paused or answer.needs_human,
        waiting_for=waiting_for,
        open_intents=[s.intent for s in answer.resolution if s.kind == "open"] if answer else [],
        error=error,
    )
