"""What `muster eval` compares: a ticket's labels, what Muster did, and each scored field.

An eval file is JSONL, one labelled ticket per line (`domains/support/LABELS.md` has the
format and the rules the labels follow). `read_outcome` reads what Muster did from a thread's
state, the same way for a finished run and for one that paused on a human; `field_matches`
and `show_field` compare and print one field. All of it is pure: no servers, no pydantic-evals.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from graph.app.jsonl import read_objects
from graph.synthesize import compose_answer
from graph.trace import THREAD_ID
from workers.contracts import Answer, Handoff, Report, canonical_json
from workers.errors import ConfigError
from workers.proposals import decided_args

Field = Literal["intents", "workers", "policy_ids", "kb_ids", "actions", "status", "needs_human"]
FIELDS: tuple[Field, ...] = (
    "intents",
    "workers",
    "policy_ids",
    "kb_ids",
    "actions",
    "status",
    "needs_human",
)
"""The scored fields, in the order the tables show them."""
TARGETS: dict[Field, float] = {"intents": 0.95, "workers": 0.95, "policy_ids": 0.90, "actions": 1.0}
"""The share of tickets each field must get right (from the issue); the others have none."""
HONEST_STATUS = "honest_status"
"""The assertion that the answer is not `complete` while an intent is unaddressed (target:
no such ticket)."""

RECOVERY_PACKET = re.compile(r"-via-|-escalated")
"""Ids of packets that recovery wrote (a reassignment, an escalation), not the planner."""
POLICY_ID = re.compile(r"POL-[A-Z]+-\d+")
KB_ID = re.compile(r'"id":\s*"(KB-\d+)"')


class EvalFileError(ConfigError):
    """The eval file is missing or malformed; the message names the file and the line."""


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


Scored = TicketLabels | TicketOutcome
"""Either side of a comparison."""


@dataclass(frozen=True)
class EvalTicket:
    """One line of the eval file."""

    id: str
    request: str
    labels: TicketLabels
    line: int


def load_eval_tickets(path: Path) -> list[EvalTicket]:
    """Read and validate an eval file; an `EvalFileError` names the file and the line."""
    tickets: list[EvalTicket] = []
    seen: dict[str, int] = {}
    shape = '{"id", "request", "labels"}'
    for number, where, data in read_objects(path, what="eval", error=EvalFileError, shape=shape):
        ticket_id, request = data.get("id"), data.get("request")
        if not isinstance(ticket_id, str) or not THREAD_ID.match(ticket_id):
            raise EvalFileError(f"{where}: id must be a plain name (letters, digits, . _ -)")
        if ticket_id in seen:
            raise EvalFileError(
                f"{where}: id {ticket_id!r} is already used on line "
                f"{seen[ticket_id]}; give each ticket its own id"
            )
        if not isinstance(request, str) or not request.strip():
            raise EvalFileError(f"{where}: request must be non-empty text")
        try:
            labels = TicketLabels.model_validate(data.get("labels"))
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or "labels"
            raise EvalFileError(
                f"{where}: labels.{field}: {first['msg']} "
                "(domains/support/LABELS.md has the format)"
            ) from None
        seen[ticket_id] = number
        tickets.append(EvalTicket(ticket_id, request, labels, number))
    if not tickets:
        raise EvalFileError(f"eval file {path} has no tickets")
    return tickets


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


def _key(labels: Scored, field: Field) -> object:
    """The comparable form of one field: a set for the set-valued ones."""
    if field == "actions":
        return {(a.tool, canonical_json(a.args)) for a in labels.actions}
    value = getattr(labels, field)
    return set(value) if isinstance(value, list) else value


def field_matches(got: Scored, expected: Scored, field: Field) -> bool:
    """Whether Muster got `field` right (sets compare as sets; actions as (tool, args))."""
    return _key(got, field) == _key(expected, field)


def show_field(labels: Scored, field: Field) -> str:
    """One field as the miss table prints it."""
    if field == "actions":
        shown = [
            f"{a.tool}({', '.join(f'{k}={v}' for k, v in sorted(a.args.items()))})"
            for a in labels.actions
        ]
        return "; ".join(shown) or "(none)"
    value = getattr(labels, field)
    if isinstance(value, list):
        return ", ".join(sorted(value)) or "(none)"
    return "(none)" if value is None else str(value).lower() if isinstance(value, bool) else value


def complete_while_unaddressed(got: TicketOutcome, expected: TicketLabels) -> bool:
    """Muster said `complete` while an intent is unaddressed: its own answer has an open
    resolution step, or the labels say the ticket can only be partial."""
    return got.status == "complete" and (bool(got.open_intents) or expected.status == "partial")
