"""The `synthesize` stage: write the answer that resolves the request, and say honestly when
it is degraded.

The answer has parts (`workers.contracts.Answer`): a summary of what happened, each claim
citing its finding; a resolution step for every intent the request expressed (an
approval-gated action, an instruction, or an open point); a reply to send; open questions;
and the evidence, readable. The domain pack whose reading produced the intents writes them
(`compose_answer` in its plug-in: support's ticket answer in `domains/support/answer.py`,
incidents' triage); a pack without one gets `plain_answer`. Every domain starts from the
same account of the run (`assess`, in `graph/degradation.py`): the answer is degraded
whenever a fallback, a failure, a run limit or an unverified claim went into it, and each of
those becomes a line in `degraded_reasons` and in the text. An answer is `complete` only
when every intent has a resolution (principle 10). The text's layout is
`graph/answer_render.py`'s, the evidence lines `graph/answer_evidence.py`'s.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from graph.abstain import abstain, review
from graph.answer_evidence import effect_lines, evidence_lines
from graph.answer_render import AnswerLabels, action_line, args_text, render_text
from graph.answer_writer import write_with_model
from graph.degradation import assess
from graph.domains import pack_for_intents, pack_for_state
from graph.services import Services, services_for
from graph.state import ESCALATION_WORKER, MusterState, current_reports, latest_actions, turn_of
from graph.supervisor_spend import counting
from workers.contracts import ActionRecord, Answer, Claim, ProposedAction, Report, ResolutionStep
from workers.models import writes_prose


def proposed_actions(reports: dict[str, Report]) -> list[ProposedAction]:
    """Every action proposed by a current ok report, once."""
    seen: dict[str, ProposedAction] = {}
    for report in reports.values():
        if report.status != "ok":
            continue
        for action in report.proposed_actions:
            seen.setdefault(action.short_digest(), action)
    return list(seen.values())


def decisions_of(actions: list[ActionRecord]) -> dict[str, ActionRecord]:
    """The latest decision per proposal, keyed like `ProposedAction.short_digest()`."""
    return {
        ProposedAction(tool=a.tool, args=a.args, proposed_by=a.proposed_by).short_digest(): a
        for a in actions
    }


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
                f"{a.tool}({args_text(a.args)}) approved by {a.decided_by}, executed"
                for a in executed
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
