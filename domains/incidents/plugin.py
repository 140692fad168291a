"""The incidents pack's plug-in: read a page, plan the three specialists, propose the rollback,
write the triage answer, score the labelled queue.

A page ("[2025-06-12 14:07 UTC] checkout 5xx spiking since about 14:05") is read for its time
and the service it names first. The plan sends `logs` (the paged service's error lines),
`metrics` (its week-over-week comparison) and `deploys` (the changes of the last four days),
in parallel; the supervisor resolves the error summary of every service once and gives it to
`logs` and `deploys` (`recent_errors` in roster.json), with the paged service's heap warnings
(`memory_pressure`). The deploys worker's proposal rule asks `triage.diagnose` for the
cause and proposes `deploys.rollback` of exactly that change; the answer is written from the
same diagnosis.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from graph.planners.base import DEFAULT_TIMEOUT_S, TicketReading
from graph.state import ESCALATION_WORKER, MusterState, current_reports, latest_actions
from graph.synthesize import assess, evidence_lines
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

from .triage import Diagnosis, diagnose, hhmm, seen_from, service_named

INTENT = "incident_triage"
"""The one thing a page asks: what broke, why, and what to do."""
INTENTS = frozenset({INTENT})
"""Every intent this pack's reading produces."""
ROLLBACK = "deploys.rollback"
"""The approval-gated write tool (servers/deploys.py)."""
PAGE_TIME = re.compile(r"(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2})")
ERRORS_LOOKBACK = timedelta(minutes=90)
METRICS_LOOKBACK = timedelta(minutes=30)
CHANGES_LOOKBACK = timedelta(days=4)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%MZ")


def page_time(request: str) -> datetime | None:
    """The time the page was sent, from its text (UTC)."""
    match = PAGE_TIME.search(request)
    if match is None:
        return None
    return datetime.fromisoformat(f"{match.group(1)}T{match.group(2)}:00+00:00").astimezone(UTC)


def paged_service(request: str) -> str | None:
    """The service the page is about: the first it names, else the first whose on-call
    words it uses ("sign-in", "basket"; `triage.service_named`)."""
    return service_named(request)


def read_request(request: str) -> TicketReading:
    """A page always asks for triage; it names no orders."""
    return TicketReading(
        intents=(INTENT,), order_ids=(), language="English", timezone=None, about_an_order=False
    )


def plan(request: str, roster: Roster) -> list[Handoff]:
    """logs, metrics and deploys in parallel, each with the window it needs."""
    service = paged_service(request)
    at = page_time(request)
    if service is None:
        return []  # the answer says which service is missing and hands it to a human
    until = _iso(at) if at else ""
    errors_since = _iso(at - ERRORS_LOOKBACK) if at else ""
    packets: list[Handoff] = []

    def add(worker: str, objective: str, inputs: dict[str, str]) -> None:
        spec = roster.get(worker)
        if spec is None:
            return
        packets.append(
            Handoff(
                id=f"{worker}-{len(packets) + 1}",
                recipient=worker,
                objective=objective,
                inputs={k: v for k, v in {**inputs, "intents": INTENT}.items() if v},
                tool_allow=spec.privileges,
                max_steps=spec.max_steps,
                timeout_s=DEFAULT_TIMEOUT_S,
            )
        )

    add(
        "logs",
        f"Establish which errors {service} and its neighbours logged before the page, and when "
        "each began.",
        {
            "service": service,
            "level": "ERROR",
            "since": errors_since,
            "until": until,
            "errors_since": errors_since,
        },
    )
    add(
        "metrics",
        f"Compare {service}'s traffic, latency, errors and saturation with the week before.",
        {"service": service, "since": _iso(at - METRICS_LOOKBACK) if at else "", "until": until},
    )
    add(
        "deploys",
        "List the deploys and config changes before the page and find the one the errors "
        "follow, if any.",
        {
            "since": _iso(at - CHANGES_LOOKBACK) if at else "",
            "until": until,
            "limit": "200",
            "errors_since": errors_since,
            "paged_service": service,
            "pressure_level": "WARN",
            "pressure_text": "heap",
            "pressure_limit": "5",
        },
    )
    return packets


# --- the deploys worker's proposal rule ----------------------------------------------------


def _diagnose_packet(packet: Handoff, findings: Sequence[Finding]) -> Diagnosis:
    until = packet.inputs.get("until")
    at = datetime.fromisoformat(until.replace("Z", ":00+00:00")) if until else None
    seen = seen_from((f"{packet.id}/{f.id}", f) for f in findings if f.source == "tool")
    return diagnose(seen, paged=packet.inputs.get("paged_service"), at=at)


def suggest_rollback(packet: Handoff, findings: Sequence[Finding]) -> list[ProposedAction]:
    """Roll back the change the diagnosis names as the cause, if there is one."""
    diag = _diagnose_packet(packet, findings)
    if not diag.rollback or diag.change is None:
        return []
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
    if action.args["change_id"] != diag.change_id:
        return f"{action.args['change_id']} is not the change the errors follow ({diag.change_id})"
    return None


EVAL_DATABASES = ("MUSTER_DEPLOYS_DB",)
"""What an eval's rollbacks write: `muster eval` gives it a fresh file (logs and metrics are
read-only)."""

PROPOSAL_RULES = {ROLLBACK: (check_rollback, suggest_rollback)}
"""Registered with workers.proposals when the pack loads."""
ACTION_SUBJECTS = {ROLLBACK: "change_id"}
"""What a rollback changes: one rollback of a change waits for a human at a time, whichever
page proposed it (graph/approval.py)."""


# --- the answer ---------------------------------------------------------------------------


def diagnose_state(values: MusterState | dict[str, Any]) -> Diagnosis:
    """The diagnosis from every usable report of a thread (what the answer names)."""
    request = str(values.get("request") or "")
    reports = current_reports(values.get("reports") or [])
    usable = [r for r in reports.values() if r.status == "ok"]
    seen = seen_from((f"{r.packet_id}/{f.id}", f) for r in usable for f in r.findings)
    return diagnose(seen, paged=paged_service(request), at=page_time(request))


def _proposed(reports: dict[str, Report]) -> list[ProposedAction]:
    seen: dict[str, ProposedAction] = {}
    for report in reports.values():
        if report.status == "ok":
            for action in report.proposed_actions:
                seen.setdefault(action.digest(), action)
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
    failed_workers = sorted({r.worker for r in run.failed})
    summary: list[Claim] = []
    if diag.category == "unknown":
        summary.append(Claim(text="The cause is not established from what could be read."))
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
        if record is not None and record.status == "held":
            # Another page's rollback of this change already waits for a human (one at a
            # time per change, graph/approval.py): this thread puts nothing new forward.
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
    if not steps:
        text = {
            "traffic_spike": f"Scale {diag.service} out and shed or rate-limit the extra load; "
            "nothing to roll back (no change of its own).",
            "dependency_outage": f"Page the team that owns {diag.service}: "
            f"{diag.paged_service} recovers when it does; nothing to roll back.",
            "false_alarm": "No action: close the page as a false alarm and review the alert's "
            "threshold.",
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

    unknown = list(diag.unknown)
    unknown += [
        f"{w}: this specialist failed, so what it would have shown is missing"
        for w in failed_workers
        if w != ESCALATION_WORKER
    ]
    if diag.change_id and diag.category in ("bad_deploy", "config_change"):
        unknown.append(f"why {diag.change_id} fails: for the owning team once it is rolled back")
    if diag.category == "dependency_outage":
        unknown.append(f"why {diag.service} is failing (its own team must say)")
    if paged_service(request) is None:
        unknown.append("which service the page is about: name it and run again")

    open_steps = [s for s in steps if s.kind == "open"]
    status = run.status(open_points=bool(open_steps) or diag.category == "unknown")
    actions = list(latest_actions(state).values())
    escalated = any(r.worker == ESCALATION_WORKER for r in run.usable)
    needs_human = (
        status != "complete"
        or any(s.kind == "action" and s.approval == "pending approval" for s in steps)
        or any(a.status in ("refused", "failed", "approved", "held") for a in actions)
        or escalated
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
    cause = [c for c in answer.summary if not c.text.startswith("Ruled out: ")]
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
    "ruled_out": None,
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
        "ruled_out": (wanted <= ruled, str(sorted(wanted)), str(sorted(ruled & wanted))),
    }
