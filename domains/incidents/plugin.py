"""The incidents pack's plug-in: read a page, plan the three specialists, propose the rollback,
write the triage answer, score the labelled queue.

A page ("[2025-06-12 14:07 UTC] checkout 5xx spiking since about 14:05") is read for the
service it is about and its own time (`reading.py`, `page_time.py`): a zoned time is converted
to UTC, a clock time without a date ("5:38am ET") gets its date from the data before the
specialists run (`page_day.py`, this pack's `resolve_facts`), and a page with no time is not
triaged as of "now": the answer says the time could not be told. A page whose service or time
cannot be told is `unaccounted` in its reading, so its answer is partial and asks a human.
The plan sends `logs` (the paged service's error lines), `metrics` (its week-over-week
comparison) and `deploys` (the changes of the last four days), in parallel; the supervisor
resolves the error summary of every service once and gives it to `logs` and `deploys`
(`recent_errors` in roster.json), with the paged service's heap warnings (`memory_pressure`)
and its other warnings (`paged_warnings`: a victim that degrades without failing). The deploys
worker's proposal rule asks `triage.diagnose` for the cause and proposes `deploys.rollback` of
exactly that change; the answer is written from the same diagnosis.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from graph.answer_evidence import evidence_lines
from graph.degradation import assess
from graph.planners.base import DEFAULT_TIMEOUT_S, TicketReading
from graph.state import ESCALATION_WORKER, MusterState, current_reports, latest_actions
from workers.contracts import (
    Answer,
    Claim,
    Finding,
    Handoff,
    ProposedAction,
    Report,
    ResolutionStep,
)
from workers.roster import Roster

from .answer_time import assumed_time as assumed_time
from .answer_time import day_guessed, time_claim
from .page_day import resolve_page_day
from .page_time import iso_minute
from .reading import read_page
from .triage import SERVICES, Diagnosis, diagnose, hhmm, possessive, seen_from
from .windows import DAY_GUESS, UNDATED, page_time_of, window_inputs

INTENT = "incident_triage"
"""The one thing a page asks: what broke, why, and what to do."""
INTENTS = frozenset({INTENT})
"""Every intent this pack's reading produces."""
ROLLBACK = "deploys.rollback"
"""The approval-gated write tool (servers/deploys.py)."""

resolve_facts = resolve_page_day
"""Settles the date of a page that gives only a clock time, from the data, and resolves the
declared facts for that day's windows (page_day.py)."""


def page_time(request: str) -> datetime | None:
    """The time the page was sent, in UTC, when its text states it with its date."""
    return read_page(request).at


def paged_service(request: str) -> str | None:
    """The service the page is about: the first it names, by name, alert name or on-call
    words ("sign-in", "basket"; `triage.services_named`)."""
    return read_page(request).service


def read_request(request: str) -> TicketReading:
    """A page always asks for triage; it names no orders. What the reading cannot tell (the
    service, the time) is `unaccounted`: the answer is then partial and asks a human."""
    reading = read_page(request)
    zone = reading.time.zone if reading.time else None
    return TicketReading(
        intents=(INTENT,),
        order_ids=(),
        language="English",
        timezone=zone.written if zone else None,
        about_an_order=False,
        unaccounted=reading.unaccounted,
        confidence=reading.confidence,
    )


def plan(request: str, roster: Roster) -> list[Handoff]:
    """logs, metrics and deploys in parallel, each with the window it needs. A page whose
    service cannot be told, or whose time is in a zone nobody knows, gets no packets (the
    answer says what is missing); one with a clock time but no date, or with no time at all,
    gets packets without windows, which `resolve_page_day` fills once it has settled the
    moment (from when the page was received, else the data; a page stating no time that came
    with no received time is not triaged)."""
    reading = read_page(request)
    service = reading.service
    if service is None or reading.unknown_zone:
        return []  # the answer says what is missing and hands it to a human
    at = reading.at
    packets: list[Handoff] = []

    def add(worker: str, objective: str, inputs: dict[str, str]) -> None:
        spec = roster.get(worker)
        if spec is None:
            return
        timed = window_inputs(worker, at) if at is not None else {UNDATED: request}
        packets.append(
            Handoff(
                id=f"{worker}-{len(packets) + 1}",
                recipient=worker,
                objective=objective,
                inputs={k: v for k, v in {**inputs, **timed, "intents": INTENT}.items() if v},
                tool_allow=spec.privileges,
                max_steps=spec.max_steps,
                timeout_s=DEFAULT_TIMEOUT_S,
            )
        )

    add(
        "logs",
        f"Establish which errors {service} and its neighbours logged before the page, and when "
        "each began.",
        {"service": service, "level": "ERROR"},
    )
    add(
        "metrics",
        f"Compare {service}'s traffic, latency, errors and saturation with the week before.",
        {"service": service},
    )
    add(
        "deploys",
        "List the deploys and config changes before the page and find the one the errors "
        "follow, if any.",
        {
            "limit": "200",
            "paged_service": service,
            "pressure_level": "WARN",
            "pressure_text": "heap",
            "pressure_limit": "5",
            "warn_level": "WARN",
            "warn_limit": "40",
        },
    )
    return packets


# --- the deploys worker's proposal rule ----------------------------------------------------


def _diagnose_packet(packet: Handoff, findings: Sequence[Finding]) -> Diagnosis:
    seen = seen_from((f"{packet.id}/{f.id}", f) for f in findings if f.source == "tool")
    return diagnose(seen, paged=packet.inputs.get("paged_service"), at=page_time_of(packet.inputs))


def suggest_rollback(packet: Handoff, findings: Sequence[Finding]) -> list[ProposedAction]:
    """Roll back the change the diagnosis names as the cause, if there is one."""
    diag = _diagnose_packet(packet, findings)
    if not diag.rollback or diag.change is None or rolled_back(diag.change):
        return []  # a change another thread already rolled back is not put to a human
    if packet.inputs.get(DAY_GUESS):
        return []  # the page's day is a guess: another day's change is never rolled back
    change = diag.change
    return [
        ProposedAction(
            tool=ROLLBACK,
            args={"change_id": diag.change_id},
            reason=f"{LABEL[diag.category]} in {change.get('service')}: "
            f"{change.get('change_id')} ({change.get('from')} -> {change.get('to')}) at "
            f"{str(change.get('at'))[:16].replace('T', ' ')} UTC; rolling it back restores "
            f"{change.get('from')}",
            proposed_by=packet.recipient,
        )
    ]


def check_rollback(
    action: ProposedAction, packet: Handoff, findings: Sequence[Finding]
) -> str | None:
    """A rollback may go to a human only for the change the observations blame."""
    if set(action.args) != {"change_id"}:
        return "a rollback takes exactly change_id"
    diag = _diagnose_packet(packet, findings)
    if not diag.rollback:
        return f"the observations name no change to roll back ({diag.category})"
    if packet.inputs.get(DAY_GUESS):
        return "the page gives no date and its day is a guess: an engineer must confirm it"
    if action.args["change_id"] != diag.change_id:
        return f"{action.args['change_id']} is not the change the errors follow ({diag.change_id})"
    return None


def rolled_back(change: dict[str, Any]) -> str | None:
    """How the deploys data says `change` was already rolled back (its rollback's id), or
    None while it is not."""
    if change.get("status") != "rolled_back":
        return None
    return str(change.get("rolled_back_by") or "a rollback")


async def rollback_already_ran(services: Any, action: ProposedAction) -> str | None:
    """Right before a rollback is put to a human (`BEFORE_ASK`, graph/approval_settled.py): the
    change read again from the deploys data; why nobody need approve it when another
    thread already rolled it back, else None."""
    change_id = str(action.args.get("change_id") or "")
    tool = "deploys.get_change"
    read = await services.hub.call(tool, {"change_id": change_id}, [tool])
    try:
        data = json.loads(read.text) if read.ok else None
    except json.JSONDecodeError:
        data = None
    ran = rolled_back(data) if isinstance(data, dict) else None
    return f"{change_id} was already rolled back ({ran})" if ran else None


BEFORE_ASK = {ROLLBACK: rollback_already_ran}
"""A rollback another thread already ran is not put to a human (graph/approval_settled.py)."""

RECEIVED_FIELD = "paged_at"
"""The field a labelled page gives its delivery time in (LABELS.md), read as the run's
`received_at` (page_received.py)."""
EVAL_DATABASES = ("MUSTER_DEPLOYS_DB",)
"""What an eval's rollbacks write: `muster eval` gives it a fresh file (logs and metrics are
read-only)."""

PROPOSAL_RULES = {ROLLBACK: (check_rollback, suggest_rollback)}
"""Registered with workers.proposals when the pack loads."""
ACTION_SUBJECTS = {ROLLBACK: "change_id"}
"""What a rollback changes: one rollback of a change waits for a human at a time, whichever
page proposed it (graph/approval_settled.py)."""


# --- the answer ---------------------------------------------------------------------------


def diagnose_state(values: MusterState | dict[str, Any]) -> Diagnosis:
    """The diagnosis from every usable report of a thread (what the answer names)."""
    request = str(values.get("request") or "")
    reports = current_reports(values.get("reports") or [])
    usable = [r for r in reports.values() if r.status == "ok"]
    seen = seen_from((f"{r.packet_id}/{f.id}", f) for r in usable for f in r.findings)
    return diagnose(seen, paged=paged_service(request), at=assumed_time(values)[0])


def _proposed(reports: dict[str, Report]) -> list[ProposedAction]:
    seen: dict[str, ProposedAction] = {}
    for report in reports.values():
        if report.status == "ok":
            for action in report.proposed_actions:
                seen.setdefault(action.short_digest(), action)
    return list(seen.values())


LABEL = {
    "bad_deploy": "a bad deploy",
    "config_change": "a config change",
    "dependency_outage": "a failing dependency",
    "traffic_spike": "a traffic spike",
    "slow_leak": "a slow memory leak",
    "false_alarm": "a false alarm",
}


def compose_answer(state: MusterState) -> Answer:
    """The triage answer: the likely cause and its evidence, what is ruled out, the
    mitigation (a rollback pending approval, or what to do instead), what is still unknown."""
    run = assess(state)
    diag = diagnose_state(state)
    request = str(state.get("request") or "")
    reading = read_page(request)
    at, day_reason = assumed_time(state)
    guess = day_guessed(state)
    failed_workers = sorted({r.worker for r in run.failed})
    summary: list[Claim] = []
    if reading.service is None:
        summary.append(
            Claim(
                text="Could not tell which service the page is about: it names none of "
                f"{', '.join(SERVICES)}, by name, alert name or on-call words."
            )
        )
    if diag.category == "unknown":
        summary.append(Claim(text="The cause is not established from what could be read."))
    elif diag.category == "false_alarm":
        summary.append(
            Claim(
                text=f"Most likely cause: {LABEL[diag.category]} for {diag.paged_service}.",
                cites=sorted({c for _, cites in diag.evidence for c in cites}),
            )
        )
    else:
        where = f" in {diag.service}" if diag.service else ""
        onset = f" from {hhmm(diag.onset)}" if diag.onset and diag.category != "slow_leak" else ""
        summary.append(
            Claim(
                text=f"Most likely cause: {LABEL[diag.category]}{where}{onset}"
                + (f": {diag.change_id}." if diag.change_id else "."),
                cites=sorted({c for _, cites in diag.evidence for c in cites}),
            )
        )
    # The page time right after the cause (the first claim stays the cause).
    summary.insert(1, Claim(text=time_claim(reading, at, day_reason, guess)))
    summary += [Claim(text=text, cites=cites) for text, cites in diag.evidence]
    summary += [
        Claim(text=f"Ruled out: {cid}: {why}.", cites=cites) for cid, why, cites in diag.ruled_out
    ]

    steps: list[ResolutionStep] = []
    decisions = {a.tool + str(sorted(a.args.items())): a for a in run.actions}
    for action in _proposed(run.reports):
        record = decisions.get(action.tool + str(sorted(action.args.items())))
        approval = "pending approval"
        says = f"Roll back {action.args.get('change_id')}: {action.reason}."
        if record is not None and record.status == "held" and "already done" in record.result:
            approval = "already done"
            says = (
                f"{record.result.split(': ', 1)[-1].split(';', 1)[0]}: nothing to approve; "
                "check that the errors stop."
            )
        elif record is not None and record.status == "held":
            # Another page's rollback of this change already waits for a human (one at a
            # time per change, graph/approval_settled.py): this thread puts nothing new forward.
            approval = record.result.split(" (proposed", 1)[0].split(" is ", 1)[-1]
            says = (
                f"A rollback of {action.args.get('change_id')} is already {approval}: "
                "approve or reject it there; nothing new was proposed."
            )
        elif record is not None:
            approval = {
                "executed": f"executed (approved by {record.decided_by})",
                "rejected": f"rejected by {record.decided_by}",
            }.get(record.status, record.status)
        steps.append(
            ResolutionStep(
                intent=INTENT,
                kind="action",
                tool=action.tool,
                args=action.args,
                approval=approval,
                text=says,
                cites=[diag.change_cite] if diag.change_cite else [],
            )
        )
    if (
        not steps
        and diag.rollback
        and diag.change_id
        and diag.change is not None
        and (ran := rolled_back(diag.change))
    ):
        steps.append(
            ResolutionStep(
                intent=INTENT,
                kind="instruction",
                text=f"{diag.change_id} was already rolled back ({ran}): nothing to approve; "
                "check that the errors stop.",
                cites=[diag.change_cite] if diag.change_cite else [],
            )
        )
    if not steps and guess and diag.rollback and diag.change_id:
        steps.append(
            ResolutionStep(
                intent=INTENT,
                kind="open",
                text=f"The page gives no date and {at:%Y-%m-%d} is a guess: {diag.change_id} is "
                "not proposed for rollback until an engineer confirms the page's day "
                "(a rollback of another day's change would undo one that is not the cause).",
            )
        )
    if not steps:
        other = (
            f" {diag.other} has an incident of its own: that is for its own page and owners, "
            "and nothing of it is rolled back for this one."
            if diag.other
            else ""
        )
        victim = (
            f"{diag.paged_service} recovers when it does; "
            if diag.paged_service and diag.paged_service != diag.service
            else ""
        )
        text = {
            "traffic_spike": f"Scale {diag.service} out and shed or rate-limit the extra load; "
            "nothing to roll back (no change of its own).",
            "dependency_outage": f"Page the team that owns {possessive(diag.service)} failing "
            f"dependency (or {possessive(diag.service)} own team): {victim}nothing to roll "
            "back.",
            "false_alarm": f"No action for {diag.paged_service}: close the page as a false "
            "alarm and review the alert's threshold." + other,
        }.get(diag.category)
        if text is not None:
            steps.append(ResolutionStep(intent=INTENT, kind="instruction", text=text))
        else:
            steps.append(
                ResolutionStep(
                    intent=INTENT,
                    kind="open",
                    text="No mitigation can be chosen until the cause is known: an engineer "
                    "should look.",
                )
            )

    planned = bool(state.get("packets"))
    # Nothing planned (no service or no time to read the data for): what the diagnosis
    # could not read was never asked for, so only the reading's gaps are unknown.
    unknown = list(diag.unknown) if planned else []
    unknown += [
        f"{w}: this specialist failed, so what it would have shown is missing"
        for w in failed_workers
        if w != ESCALATION_WORKER
    ]
    if diag.change_id and diag.category in ("bad_deploy", "config_change"):
        unknown.append(f"why {diag.change_id} fails: for the owning team once it is rolled back")
    if diag.category == "dependency_outage":
        unknown.append(f"why {diag.service} is failing (its own team must say)")
    if reading.service is None:
        unknown.append("which service the page is about: name it and run again")
    if reading.time is None and at is not None:
        unknown.append(
            f"when the page was sent: its text states no time, so it was read as of when it "
            f"was received ({at:%Y-%m-%d %H:%M} UTC); give its time if it was sent earlier"
        )
    elif reading.time is None:
        unknown.append("when the page was sent: give its time (with its zone) and run again")
        if reading.service is not None:
            unknown.append(
                f"whether {reading.service} is failing, and why: nothing was read "
                "without the page's time (a quiet data end is not a false alarm)"
            )
    elif at is None:
        unknown.append(f'which day "{reading.time.written}" is: give the date and run again')
    elif reading.time.day is None and guess:
        unknown.append(
            f"the page's date: {at:%Y-%m-%d} is a guess (the page and the data "
            "do not single it out): give the date and run again"
        )
    elif reading.time.day is None:
        unknown.append(
            f"the page's date: read from the data ({at:%Y-%m-%d}); say so if it is another day"
        )

    open_steps = [s for s in steps if s.kind == "open"]
    status = run.status(open_points=bool(open_steps) or diag.category == "unknown")
    actions = list(latest_actions(state).values())
    escalated = any(r.worker == ESCALATION_WORKER for r in run.usable)
    needs_human = (
        status != "complete"
        or any(s.kind == "action" and s.approval == "pending approval" for s in steps)
        or any(a.status in ("refused", "failed", "approved", "held") for a in actions)
        or escalated
        or guess
    )
    answer = Answer(
        text="",
        status=status,
        degraded=bool(run.reasons) or status == "failed",
        degraded_reasons=run.reasons,
        needs_human=needs_human,
        stop_reason=state.get("stop_reason"),
        intents=list(state.get("intents") or [INTENT]),
        summary=summary,
        resolution=steps,
        open_questions=unknown,
        evidence=evidence_lines(run.usable),
    )
    return answer.model_copy(update={"text": render_answer(answer, state)})


def render_answer(answer: Answer, state: MusterState) -> str:
    """The answer for a terminal, in the order an on-call engineer reads it."""
    lines = [f"Incident: {' '.join(str(state.get('request') or '').split())}"]
    lines += [c.text for c in answer.summary if c.text.startswith("Page time")]
    cause = [c for c in answer.summary if not c.text.startswith(("Ruled out: ", "Page time"))]
    ruled = [c for c in answer.summary if c.text.startswith("Ruled out: ")]

    def cited(claim: Claim) -> str:
        return claim.text + (f" [{', '.join(claim.cites)}]" if claim.cites else "")

    lines += ["", "Most likely cause and evidence:"] + [f"- {cited(c)}" for c in cause]
    if ruled:
        lines += ["", "Ruled out:"]
        lines += [f"- {cited(c).removeprefix('Ruled out: ')}" for c in ruled]
    lines += ["", "Mitigation:"]
    for step in answer.resolution:
        if step.kind == "action":
            args = ", ".join(f"{k}={v}" for k, v in step.args.items())
            lines.append(f"- ACTION {step.tool}({args}) [{step.approval}]: {step.text}")
        else:
            lines.append(("- OPEN: " if step.kind == "open" else "- ") + step.text)
    if answer.open_questions:
        lines += ["", "Still unknown:"] + [f"- {q}" for q in answer.open_questions]
    if answer.evidence:
        lines += ["", "Evidence:"] + [f"- {e}" for e in answer.evidence]
    done = [a for a in latest_actions(state).values()]
    if done:
        lines += ["", "Actions:"]
        lines += [
            f"- {a.tool}({', '.join(f'{k}={v}' for k, v in a.args.items())}) proposed by "
            f"{a.proposed_by}: {a.status} (decided by {a.decided_by}): {a.result[:300]}"
            for a in done
        ]
    recoveries = state.get("recoveries") or []
    if recoveries:
        lines += ["", "Recovery:"] + [f"- {r.strategy}: {r.detail}" for r in recoveries]
    if answer.degraded:
        lines += [
            "",
            "DEGRADED: " + "; ".join(answer.degraded_reasons or [f"status is {answer.status}"]),
        ]
    if answer.needs_human:
        lines += ["", "NEEDS HUMAN: an engineer should review this incident."]
    return "\n".join(lines)


# --- muster eval --domain incidents ---------------------------------------------------------

TARGETS: dict[str, float | None] = {
    "cause": 0.90,
    "category": 0.85,
    "actions": 1.0,
    "no_false_alarm_rollback": 1.0,
    "no_wrong_rollback": 1.0,
    "ruled_out": None,
    "time": 1.0,
}
"""Share of incidents each field must get right (None: reported, no target)."""


def score(values: dict[str, Any], labels: dict[str, Any]) -> dict[str, tuple[bool, str, str]]:
    """Per field: (right, expected, got), for one incident's final (or paused) state."""
    diag = diagnose_state(values)
    reports = current_reports(values.get("reports") or [])
    proposed = sorted(
        str(a.args.get("change_id")) for a in _proposed(reports) if a.tool == ROLLBACK
    )
    expected_actions = sorted(str(a["args"]["change_id"]) for a in labels.get("actions") or [])
    cause_expected = f"{labels.get('service')} / {labels.get('change_id')}"
    cause_got = f"{diag.service if diag.category != 'false_alarm' else None} / {diag.change_id}"
    ruled = {cid for cid, _, _ in diag.ruled_out}
    wanted = set(labels.get("ruled_out_changes") or [])
    false_alarm = labels.get("category") == "false_alarm"
    return {
        "cause": (cause_got == cause_expected, cause_expected, cause_got),
        "category": (
            diag.category == labels.get("category"),
            str(labels.get("category")),
            diag.category,
        ),
        "actions": (proposed == expected_actions, str(expected_actions), str(proposed)),
        "no_false_alarm_rollback": (
            not (false_alarm and proposed),
            "no rollback" if false_alarm else "-",
            str(proposed),
        ),
        # A rollback of a change that is not the cause (issue 22's target: none at all).
        "no_wrong_rollback": (
            set(proposed) <= set(expected_actions),
            "only " + str(expected_actions),
            str(proposed),
        ),
        "ruled_out": (wanted <= ruled, str(sorted(wanted)), str(sorted(ruled & wanted))),
        "time": _time_field(values, labels),
    }


def _time_field(values: dict[str, Any], labels: dict[str, Any]) -> tuple[bool, str, str]:
    """The page time the triage assumed against the label's `assumed_time` (the UTC time the
    page text states, null when it states none); right by definition for a label without
    the key (the original queue's, whose pages all carry a UTC header)."""
    # The label is the time the text states: a page stating none scores None, whichever
    # moment (its arrival) the triage went on.
    stated = read_page(str(values.get("request") or "")).time is not None
    got = iso_minute(assumed_time(values)[0]) if stated else None
    if "assumed_time" not in labels:
        return True, "-", str(got)
    expected = labels.get("assumed_time")
    return got == expected, str(expected), str(got)
