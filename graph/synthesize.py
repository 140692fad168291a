"""The `synthesize` stage: write the answer that resolves the request, and say honestly when
it is degraded.

The answer has parts (`workers.contracts.Answer`): a summary of what happened, each claim
citing its finding; a resolution step for every intent the request expressed (an
approval-gated action, an instruction, or an open point); a reply to send; open questions;
and the evidence, readable. The domain pack whose reading produced the intents writes them
(`compose_answer` in its plug-in: support's ticket answer in `domains/support/answer.py`,
incidents' triage); a pack without one gets `plain_answer`. Every domain starts from the
same account of the run (`assess`): the answer is degraded whenever a fallback, a failure, a
run limit or an unverified claim went into it, and each of those becomes a line in
`degraded_reasons` and in the text. An answer is `complete` only when every intent has a
resolution (principle 10).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langgraph.runtime import Runtime

from graph.abstain import abstain, review
from graph.answer_writer import write_with_model
from graph.domains import pack_for_intents, pack_for_state
from graph.facts import SHARED_CALL_PREFIX
from graph.services import Services, services_for
from graph.state import (
    ESCALATION_WORKER,
    MusterState,
    current_reports,
    latest_actions,
    pending_packets,
    turn_of,
)
from graph.supervisor_spend import counting
from workers.contracts import (
    ActionRecord,
    Answer,
    AnswerStatus,
    Claim,
    Finding,
    Handoff,
    ProposedAction,
    Report,
    ResolutionStep,
)
from workers.models import writes_prose


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


def _args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items())


def action_line(action: ActionRecord) -> str:
    """One line per action record: who proposed it, who decided, what came of it."""
    head = f"- {action.tool}({_args(action.args)}) proposed by {action.proposed_by}: "
    if action.status == "held":
        return head + f"HELD: {action.result}"
    if action.status == "rejected":
        return (
            head + f"REJECTED by {action.decided_by}" + (f" ({action.note})" if action.note else "")
        )
    if action.status == "executed":
        return head + f"approved by {action.decided_by}, EXECUTED: {summarize_text(action.result)}"
    return head + f"approved by {action.decided_by}, {action.status.upper()}: {action.result[:200]}"


def _missing_tools(report: Report) -> str | None:
    """Tools of an ok report whose every call failed at the backend, if any."""
    backend_failures = ("tool_error", "timeout", "unavailable")
    failed = {c.tool for c in report.tool_calls if c.outcome in backend_failures}
    missing = sorted(failed - {f.tool for f in report.findings})
    if not missing:
        return None
    return f"{report.worker}: {', '.join(missing)} failed, so what it would have told us is missing"


Describe = Callable[[str, dict[str, Any]], str | None]
"""A pack's reading of a tool's JSON object result (the tool named without its server): one
line of what it shows, or None for the generic summary (support's `describe_observation`)."""


def evidence_line(cite: str, finding: Finding, *, describe: Describe | None = None) -> str:
    """One readable line of evidence: what was looked up, and what it said, marked as data
    quoted from the tool (`[tool data] «…»`), on one line, so text a tool returns (an order
    note, a KB article) never reads as part of the answer or as an instruction."""
    args = ", ".join(f"{k}={v}" for k, v in finding.args.items())
    try:
        data: Any = json.loads(finding.observation)
    except json.JSONDecodeError:
        data = None
    said = None
    if isinstance(data, dict) and describe is not None:
        said = describe(finding.tool.split(".", 1)[-1], data)
    if said is None:
        said = summarize_text(finding.observation)
    source = " (cached fallback)" if finding.source == "fallback" else ""
    quoted = " ".join(said.replace("«", "‹").replace("»", "›").split())  # cannot close the quote
    return f"[{cite}] {finding.tool}({args}){source}: [tool data] «{quoted}»"


def proposed_actions(reports: dict[str, Report]) -> list[ProposedAction]:
    """Every action proposed by a current ok report, once."""
    seen: dict[str, ProposedAction] = {}
    for report in reports.values():
        if report.status != "ok":
            continue
        for action in report.proposed_actions:
            seen.setdefault(action.digest(), action)
    return list(seen.values())


def decisions_of(actions: list[ActionRecord]) -> dict[str, ActionRecord]:
    """The latest decision per proposal, keyed like `ProposedAction.digest()`."""
    return {
        ProposedAction(tool=a.tool, args=a.args, proposed_by=a.proposed_by).digest(): a
        for a in actions
    }


@dataclass
class Degradation:
    """What went wrong in a run, whatever its domain: the reasons an answer is degraded and
    the facts its status rests on."""

    reports: dict[str, Report]
    """The current report of every packet."""
    reasons: list[str]
    """One line per thing that degrades the answer."""
    live_ok: list[Report]
    """Reports from live, successful work."""
    fallbacks: list[Report]
    """Reports recovery substituted from a cache."""
    failed: list[Report]
    """Current failed reports."""
    not_run: list[Handoff]
    """Packets that never ran."""
    gaps: list[str]
    """Tools an ok report lost."""
    cut_short: bool
    """A run limit stopped work that mattered."""
    actions: list[ActionRecord]
    """The latest record of every decided action."""

    @property
    def usable(self) -> list[Report]:
        """Every ok report (live or fallback)."""
        return [r for r in self.reports.values() if r.status == "ok"]

    def status(self, *, open_points: bool) -> AnswerStatus:
        """failed when nothing usable came back; partial when anything is missing or open."""
        if self.reports and not self.live_ok and not self.fallbacks:
            return "failed"
        if (
            self.failed
            or self.fallbacks
            or self.cut_short
            or self.not_run
            or self.gaps
            or open_points
        ):
            return "partial"
        return "complete"


def assess(state: MusterState) -> Degradation:
    """The run's failures, fallbacks, limits, unverified claims and troubled actions, as the
    reasons an answer is degraded (pure; every domain's answer starts from it)."""
    reports = current_reports(state.get("reports") or [])
    recoveries = state.get("recoveries") or []
    stop_reason = state.get("stop_reason")
    live_ok = [r for r in reports.values() if r.status == "ok" and not r.fallback]
    fallbacks = [r for r in reports.values() if r.fallback]
    failed = [r for r in reports.values() if r.status == "failed"]
    not_run = pending_packets(state)

    # A retry or a clarification that then succeeded changes nothing in the answer: the
    # packet's current report is live. Fallbacks, reassignments and escalations do.
    rerun = ("retry", "clarify")
    reasons: list[str] = [r.detail for r in recoveries if r.strategy not in rerun]
    recovered = {r.packet_id for r in recoveries if r.strategy not in rerun}
    reasons += [
        f"{r.worker} failed ({r.reason}) and nothing replaced it"
        for r in failed
        if r.packet_id not in recovered
    ]
    reasons += [f"{p.recipient} ({p.id}) never ran" for p in not_run if not stop_reason]
    # An ok report can still have lost a tool: say which facts are missing.
    gaps = [gap for report in live_ok if (gap := _missing_tools(report))]
    reasons += gaps
    # A limit that fired once every packet had run, with nothing left to recover, cut
    # nothing short: the answer is whole.
    unrecovered = [r for r in failed if r.packet_id not in recovered]
    cut_short = bool(stop_reason) and bool(not_run or unrecovered)
    if cut_short:
        skipped = ", ".join(f"{p.recipient} ({p.id})" for p in not_run)
        reasons.append(
            f"stopped early by the {stop_reason}"
            + (f"; never ran: {skipped}" if skipped else "; nothing recovered the failures")
        )
    reasons += [f"unverified claim: {line}" for line in state.get("unverified") or []]
    reasons += [f"conflicting facts: {line}" for line in state.get("conflicts") or []]
    actions = list(latest_actions(state).values())
    reasons += [
        f"action {a.tool}({_args(a.args)}) was approved but {a.status}: {a.result[:200]}"
        for a in actions
        if a.status in ("refused", "failed", "approved")
    ]
    return Degradation(
        reports=reports,
        reasons=reasons,
        live_ok=live_ok,
        fallbacks=fallbacks,
        failed=failed,
        not_run=not_run,
        gaps=gaps,
        cut_short=cut_short,
        actions=actions,
    )


EFFECT_CITE = "act"
"""What a finding read again after an action is cited under: `act/E1`."""


def effect_cite(finding: Finding) -> str:
    """The citation of a finding `act` read again after an action ran."""
    return f"{EFFECT_CITE}/{finding.id}"


def effect_lines(state: MusterState, *, describe: Describe | None = None) -> list[str]:
    """What the thread's executed actions changed, as `act` read it again right after each
    (the state's `effects`), one evidence line each, marked as read after the action."""
    return [
        evidence_line(effect_cite(f), f, describe=describe).replace(
            f"{f.tool}(", f"{f.tool} after the action (", 1
        )
        for f in state.get("effects") or []
    ]


def evidence_lines(usable: list[Report], *, describe: Describe | None = None) -> list[str]:
    """The observations behind an answer, one readable line each with its citation
    (`describe`: the pack's reading of its tools' results); a shared fact (one supervisor
    call given to several workers) is shown once."""
    evidence: list[str] = []
    seen_calls: set[str] = set()
    for report in usable:
        for finding in report.findings:
            # Workers' own call ids are unique only within their packet.
            shared = finding.call_id.startswith(SHARED_CALL_PREFIX)
            key = finding.call_id if shared else f"{report.packet_id}/{finding.call_id}"
            if key in seen_calls:
                continue
            seen_calls.add(key)
            evidence.append(
                evidence_line(f"{report.packet_id}/{finding.id}", finding, describe=describe)
            )
    return evidence


def plain_answer(state: MusterState) -> Answer:
    """The answer of a pack with no answer plug-in: what each worker concluded, cited, one
    step per intent, honest about failures like any answer."""
    run = assess(state)
    intents = list(state.get("intents") or [])
    summary = [
        Claim(
            text=(r.conclusion or r.note.strip().splitlines()[-1] if r.note.strip() else ""),
            cites=[f"{r.packet_id}/{f.id}" for f in r.findings],
        )
        for r in run.usable
        if r.conclusion or r.note.strip()
    ]
    steps = [
        ResolutionStep(
            intent=intent,
            kind="instruction" if run.usable else "open",
            text="Answered from the reports above." if run.usable else "Nobody could answer it.",
        )
        for intent in intents
    ]
    status = run.status(open_points=not intents or not run.usable)
    answer = Answer(
        text="",
        status=status,
        degraded=bool(run.reasons) or status == "failed",
        degraded_reasons=run.reasons,
        needs_human=status != "complete" or not intents,
        stop_reason=state.get("stop_reason"),
        intents=intents,
        summary=summary,
        resolution=steps,
        evidence=evidence_lines(run.usable) + effect_lines(state),
    )
    return with_text(answer, state)


def compose_answer(state: MusterState) -> Answer:
    """The answer for the current state (pure; `synthesize` wraps it, and every stop shows
    it: an approval, a clarification, the end), written by the pack whose reading produced
    the state's intents (`compose_answer` in its plug-in: support's ticket answer,
    incidents' triage), else `plain_answer`.

    It never raises: a failure while composing (a fact the pack did not expect, a failed
    worker it did not plan for) becomes a `partial`, degraded answer that names it
    (`answer_despite`), and a degraded or failed answer always needs a human."""
    try:
        answer = _composed(state)
    except Exception as error:  # principle 2: the answer step never strands a thread
        answer = answer_despite(state, error)
    return needs_a_human(answer, state)


COMPOSE_FAILED = "the answer could not be composed in full"
"""How a degraded reason names a failure while composing."""


def answer_despite(state: MusterState, error: BaseException) -> Answer:
    """The answer when the pack's composer failed: the plain answer from the reports (what
    each worker concluded, cited), `partial`, degraded by a reason that names the failure,
    for a human. If even that cannot be built, a minimal answer that says so."""
    why = f"{COMPOSE_FAILED} ({type(error).__name__}: {' '.join(str(error).split())[:200]})"
    try:
        plain = plain_answer(state)
        answer = plain.model_copy(
            update={
                "status": "failed" if plain.status == "failed" else "partial",
                "degraded": True,
                "degraded_reasons": [*plain.degraded_reasons, why],
                "needs_human": True,
            }
        )
        return with_text(answer, state)
    except Exception as second:
        reasons = [why, f"the plain answer failed too ({type(second).__name__}: {second})"[:300]]
        answer = Answer(
            text="",
            status="partial",
            degraded=True,
            degraded_reasons=reasons,
            needs_human=True,
            stop_reason=state.get("stop_reason"),
            intents=list(state.get("intents") or []),
        )
        request = str(state.get("request") or "")
        text = render_text(
            answer,
            request=request,
            labels=AnswerLabels(),
            policies=[],
            action_lines=[],
            recovery_lines=[],
        )
        return answer.model_copy(update={"text": text})


def needs_a_human(answer: Answer, state: MusterState) -> Answer:
    """`answer`, flagged for a human when it is degraded or failed (whatever the pack
    said), its text rendered again to say so."""
    if answer.needs_human or not (answer.degraded or answer.status == "failed"):
        return answer
    flagged = answer.model_copy(update={"needs_human": True})
    try:
        return with_text(flagged, state)
    except Exception:
        return flagged.model_copy(update={"text": flagged.text + "\n\nNEEDS HUMAN"})


def _composed(state: MusterState) -> Answer:
    """The pack's answer, checked for what its reader could not account for."""
    composer = pack_for_state(state).hook("compose_answer")
    answer: Answer = plain_answer(state) if composer is None else composer(state)
    # Whatever the pack answered, the parts its reader could not account for were not, and a
    # reading it is not sure of is checked by a person.
    # A person who decided on one of the thread's actions has read the request already.
    decided = any(a.decided_by for a in state.get("actions") or [])
    confidence = None if decided else state.get("confidence")
    checked = review(abstain(answer, state.get("unaccounted") or []), confidence)
    if state.get("plan_fallback"):  # the answer says which planner's plan ran
        checked = checked.model_copy(
            update={"open_questions": [*checked.open_questions, f"Plan: {state['plan_fallback']}."]}
        )
    notes, escalated = conversation_notes(state)
    if notes:  # a follow-up's answer says what it follows, and a contact-count escalation
        checked = checked.model_copy(
            update={
                "open_questions": [*checked.open_questions, *notes],
                "needs_human": checked.needs_human or escalated,
            }
        )
    return answer if checked is answer else with_text(checked, state)


def conversation_notes(state: MusterState) -> tuple[list[str], bool]:
    """On a follow-up turn, the lines its answer adds: which message of the customer's this
    is and what the last one was and how it was answered, the actions executed on the
    thread so far (never proposed again), and an escalation the contact count called for
    (the escalation packet's `unresolved_contacts`, support's POL-ESC-001); and whether it
    escalated. A thread's first message adds nothing."""
    contacts = list(state.get("contacts") or [])
    if turn_of(state) < 2 or len(contacts) < 2:
        return [], False
    last = contacts[-2]
    said = " ".join(str(last.get("text") or "").split())
    quoted = f"«{said[:200]}»" if said else "the earlier message"
    about = f" about {', '.join(last.get('subjects') or [])}" if last.get("subjects") else ""
    answered = (
        f" (answered {last.get('status')}: {last.get('summary') or 'no summary'})"
        if last.get("status")
        else ""
    )
    notes = [
        f"Follow-up: message {len(contacts)} from the customer on this thread, after "
        f"{quoted}{about}{answered}."
    ]
    executed = [a for a in latest_actions(state).values() if a.status == "executed"]
    if executed:
        notes.append(
            "Already done on this thread (not proposed again): "
            + "; ".join(
                f"{a.tool}({_args(a.args)}) approved by {a.decided_by}, executed" for a in executed
            )
            + "."
        )
    current = current_reports(state.get("reports") or [])
    escalated = False
    for packet in state.get("packets") or []:
        if packet.recipient != ESCALATION_WORKER or "unresolved_contacts" not in packet.inputs:
            continue
        report = current.get(packet.id)
        handoff = (report.conclusion or report.note) if report and report.status == "ok" else ""
        escalated = True
        notes.append(
            f"Escalated to a team lead: contact {packet.inputs.get('contacts')} from the "
            f"customer, after {packet.inputs['unresolved_contacts']} unresolved contacts "
            "(POL-ESC-001)." + (f" Hand-off: {' '.join(handoff.split())[:300]}" if handoff else "")
        )
    return notes, escalated


def with_text(answer: Answer, state: MusterState) -> Answer:
    """The answer with its terminal text rendered from its parts and the state: by the
    pack's own layout (`render_answer` in its plug-in), else `render_text`'s, in the pack's
    wording (`ANSWER_LABELS` in its plug-in) or the neutral one."""
    pack = pack_for_state(state) if state.get("domain") else pack_for_intents(answer.intents)
    renderer = pack.hook("render_answer")
    if renderer is not None:
        return answer.model_copy(update={"text": str(renderer(answer, state))})
    text = render_text(
        answer,
        request=state["request"],
        labels=pack.hook("ANSWER_LABELS") or AnswerLabels(),
        policies=[],
        action_lines=[action_line(a) for a in latest_actions(state).values()],
        recovery_lines=[f"- {r.strategy}: {r.detail}" for r in state.get("recoveries") or []],
    )
    return answer.model_copy(update={"text": text})


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
                call = f"{step.tool}({_args(step.args)})"
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


async def synthesize(state: MusterState, runtime: Runtime[Services]) -> dict[str, Any]:
    """Write the answer. It never raises: the composed answer stands whatever a provider
    model writing its prose does, and a failure there is a degraded reason."""
    answer = compose_answer(state)
    services = await services_for(runtime)
    supervisor_calls: list[dict[str, Any]] = []
    try:
        model = services.models("synthesizer")
        if writes_prose(model):
            reports = list(current_reports(state.get("reports") or []).values())
            with counting() as supervisor_calls:
                written = await write_with_model(model, answer, reports, trace=services.trace)
            answer = needs_a_human(with_text(written, state), state)
    except Exception as error:  # the deterministic answer stands (principle 2)
        answer = needs_a_human(_degraded_by(answer, state, error, "writing its prose"), state)
    services.trace_node(
        "synthesize",
        outcome=answer.status,
        degraded=answer.degraded,
    )
    return {"answer": answer, "supervisor_calls": supervisor_calls}


def _degraded_by(answer: Answer, state: MusterState, error: BaseException, doing: str) -> Answer:
    """`answer` with a degraded reason naming what failed while `doing`."""
    why = f"{COMPOSE_FAILED}: {doing} failed ({type(error).__name__}: {error})"[:300]
    update = {"degraded": True, "degraded_reasons": [*answer.degraded_reasons, why]}
    if answer.status == "complete":
        update["status"] = "partial"
    flagged = answer.model_copy(update=update)
    try:
        return with_text(flagged, state)
    except Exception:
        return flagged
