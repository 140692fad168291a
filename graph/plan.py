"""The `plan` stage: write the packets, validate them, and `Send` the first wave to `dispatch`.

The configured planner (the domain pack's by default, support's rules planner unless
`--domain` names another, or an LLM with structured output, see `graph/planners/`) writes
`Handoff` packets, and `validate_plan` (`graph/plan_validation.py`) checks them, whoever
wrote them: unknown workers and dependency cycles are refused; widened allowlists are
narrowed, budgets capped and duplicates dropped, each with a note. The order record is then
resolved once (`graph.facts`), and `plan` emits one `Send("dispatch", packet)` per packet of
the first wave. Later waves, retries and clarified packets are released by the barrier
(`graph.collect`).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Sequence
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, Overwrite

from graph.abstain import disagreement
from graph.dispatch import send_packets
from graph.domains import pack_of
from graph.facts import resolve_shared_facts
from graph.plan_validation import ValidatedPlan, validate_plan
from graph.planners.base import RevisablePlanner, TicketReading
from graph.services import Services, services_for
from graph.state import (
    FOLLOW_UP_RESETS,
    Contact,
    MusterState,
    ready_packets,
    received_time,
    turn_of,
)
from graph.supervisor_spend import counting
from graph.versions import current_versions
from workers.contracts import ActionRecord, Answer, Handoff
from workers.errors import PlanError, PlannerCallError
from workers.roster import Roster


async def plan(
    state: MusterState, runtime: Runtime[Services]
) -> Command[Literal["dispatch", "collect"]]:
    """Write the packets with the configured planner, validate them, attach shared facts,
    and send the first wave to `dispatch` (or go straight to the barrier if none is ready).

    On a thread that has answered already, the request is the customer's follow-up message
    and a new turn starts (`follow_up_update`): the message is read alone, as any ticket, and
    planned with the earlier messages, answer and actions in view (`earlier_contacts`)."""
    services = await services_for(runtime)
    pack = pack_of(services.roster)
    earlier = earlier_contacts(state) if state.get("answer") is not None else None
    request = state["request"]
    with counting() as supervisor_calls:
        validated, fallback = await _written_plan(
            request, services, earlier=earlier, actions=state.get("actions") or []
        )
    reading = pack.read(request)  # the roster's domain reads it
    unaccounted = list(reading.unaccounted)
    if services.planner is not pack.planner and fallback is None:
        # Another planner (the LLM's) read the request too: where the intents it gave its
        # packets differ from the pack's reading, nobody can say which is right.
        unaccounted += disagreement(
            planned_intents(validated.packets), reading.intents, reading.action_intents
        )
    validated.packets = [with_intents(p, reading, services.roster) for p in validated.packets]
    # The request's subject ids (support: its order ids), as its pack reads them and as the
    # packets name them in the pack's subject input; the state keeps support's field name.
    key = pack.subject_input
    if earlier and key is not None and not reading.order_ids:
        # A follow-up that names no subject continues the earlier messages' subjects.
        validated.packets = with_subjects(
            validated.packets, carried_subjects(earlier), key, services.roster
        )
    order_ids = list(reading.order_ids) + [
        p.inputs[key] for p in validated.packets if key is not None and key in p.inputs
    ]
    shared = await resolve_shared_facts(
        validated.packets,
        order_ids,
        hub=services.hub,
        roster=services.roster,
        received_at=received_time(state),
    )
    packets = shared.packets
    if services.trace is not None:  # which traced run dispatched them
        packets = [p.model_copy(update={"run_id": services.trace.run_id}) for p in packets]
    notes = validated.notes + shared.notes
    services.trace_node(
        "plan",
        outcome="ok",
        packets=[p.id for p in packets],
        notes=notes,
        intents=list(reading.intents),
    )
    update: dict[str, Any] = {
        "packets": packets,
        "plan_notes": notes,
        # Whoever wrote the packets, the rules' reading of the ticket is what the answer
        # must resolve: an LLM planner cannot make an intent disappear by not planning it.
        "intents": list(reading.intents),
        # The pack the thread runs under, so its answer never comes from another pack that
        # happens to share an intent name (`graph.domains.pack_for_state`).
        "domain": services.roster.domain or pack.ref,
        "language": reading.language,
        "unaccounted": unaccounted,
        **({"plan_fallback": fallback} if fallback else {}),
        "confidence": reading.confidence,
        # The code, pack and schema the thread starts on: a resume under others is noticed.
        "versions": state.get("versions") or current_versions(str(pack.folder), pack.name),
        "order_ids": list(dict.fromkeys(order_ids)),
        "unknown_orders": shared.unknown_orders,
        "reports": shared.answered,
        "supervisor_calls": supervisor_calls,
    }
    contact = Contact(
        turn=turn_of(state) + (1 if earlier is not None else 0),
        text=request,
        subjects=list(dict.fromkeys(order_ids)),
        intents=list(reading.intents),
    )
    update["contacts"] = [*(earlier or []), contact]
    after_plan = MusterState(
        request=request, packets=packets, plan_notes=notes, reports=shared.answered
    )
    if earlier is not None:
        update.update(follow_up_update(state, update, contact["turn"], services))
    elif services.limits.deadline_at is not None and "deadline_at" not in state:
        update["deadline_at"] = services.limits.deadline_at  # a resume keeps it (graph.limits)
    first_wave = ready_packets(after_plan)
    if not first_wave:
        return Command(update=update, goto="collect")
    return Command(update=update, goto=send_packets(first_wave, after_plan, services))


def follow_up_update(
    state: MusterState, update: dict[str, Any], turn: int, services: Services
) -> dict[str, Any]:
    """What a follow-up's `plan` writes besides the plan: the turn, and the per-turn
    channels reset (`FOLLOW_UP_RESETS`, through LangGraph's `Overwrite`, which bypasses their
    reducers) so its answer reads this turn's reports only. The earlier turn's last-value
    fields that only some steps write (a stop reason, a plan fallback, conflicts, unverified
    claims, a deadline) are cleared too; `actions` stays (see `FOLLOW_UP_RESETS`)."""
    reset: dict[str, Any] = {
        "turn": turn,
        "reports": Overwrite(update["reports"]),
        "recoveries": Overwrite([]),
        "effects": Overwrite([]),
        "handoffs": Overwrite({}),
        "conflicts": [],
        "unverified": [],
    }
    assert set(FOLLOW_UP_RESETS) <= set(reset)
    if state.get("stop_reason"):
        reset["stop_reason"] = None
    if state.get("plan_fallback") and "plan_fallback" not in update:
        reset["plan_fallback"] = None
    if services.limits.deadline_at is not None or state.get("deadline_at") is not None:
        reset["deadline_at"] = services.limits.deadline_at  # this turn's own, or none
    return reset


def earlier_contacts(state: MusterState) -> list[Contact]:
    """The customer's messages before this one, the last with how its turn ended (the
    answer still in the state when a follow-up's `plan` runs). A thread from before
    `contacts` was kept (an older checkpoint) is one message: its text as its answer
    quoted it, its subjects and intents as the state holds them."""
    contacts = [Contact(**c) for c in state.get("contacts") or []]
    answer = state.get("answer")
    if not contacts:
        text = str(getattr(answer, "text", "") or "").split("\n", 1)[0]
        contacts = [
            Contact(
                turn=turn_of(state),
                text=text.removeprefix("Request: ") if text.startswith("Request: ") else "",
                subjects=[str(i) for i in state.get("order_ids") or []],
                intents=list(state.get("intents") or []),
            )
        ]
    if answer is not None:
        last = Contact(**contacts[-1])
        last["status"], last["summary"] = str(answer.status), answer_in_brief(answer)
        contacts[-1] = last
    return contacts


def answer_in_brief(answer: Answer, *, limit: int = 300) -> str:
    """An answer in one line: its summary's claims, else its resolution's steps."""
    parts = [c.text for c in answer.summary] or [
        f"({s.intent}) {s.text}" for s in answer.resolution
    ]
    text = " ".join(" ".join(parts).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def carried_subjects(earlier: Sequence[Contact]) -> list[str]:
    """The subjects a follow-up that names none continues: the latest earlier message's
    that had any."""
    for contact in reversed(earlier):
        if contact.get("subjects"):
            return list(contact.get("subjects") or [])
    return []


def with_subjects(
    packets: Sequence[Handoff], subjects: Sequence[str], key: str, roster: Roster
) -> list[Handoff]:
    """Packets of workers that may propose actions (support's billing) that name no subject
    (they would ask the customer which order), given the subjects named earlier on the
    thread instead: one packet per subject, the first keeping the packet's id."""
    if not subjects:
        return list(packets)
    given: list[Handoff] = []
    for packet in packets:
        spec = roster.get(packet.recipient)
        if spec is None or not spec.proposes or key in packet.inputs:
            given.append(packet)
            continue
        for n, subject in enumerate(subjects):
            given.append(
                packet.model_copy(
                    update={
                        "id": packet.id if n == 0 else f"{packet.id}-{subject}",
                        "objective": f"{packet.objective} ({key} {subject}, named earlier "
                        "on this thread)",
                        "inputs": {**packet.inputs, key: subject},
                    }
                )
            )
    return given


def conversation_text(
    request: str, earlier: Sequence[Contact], actions: Sequence[ActionRecord]
) -> str:
    """What a planner that reads text (an LLM's) is given for a follow-up: the earlier
    messages, how each was answered, the actions decided so far, then the new message."""
    lines = ["Earlier messages from this customer on this thread, oldest first:"]
    for c in earlier:
        about = f" (about {', '.join(c.get('subjects') or [])})" if c.get("subjects") else ""
        lines.append(f"{c.get('turn')}. «{c.get('text') or '(not kept)'}»{about}")
        if c.get("status"):
            lines.append(f"   answered {c.get('status')}: {c.get('summary') or ''}")
    decided = {a.digest: a for a in actions}.values()
    if decided:
        lines.append("Actions already decided on this thread (never propose them again):")
        lines += [
            f"- {a.tool}({', '.join(f'{k}={v}' for k, v in a.args.items())}): {a.status}"
            for a in decided
        ]
    lines += ["", "Plan only for the customer's new message:", request]
    return "\n".join(lines)


async def _written_plan(
    request: str,
    services: Services,
    *,
    earlier: Sequence[Contact] | None = None,
    actions: Sequence[ActionRecord] = (),
) -> tuple[ValidatedPlan, str | None]:
    """The configured planner's plan, validated; and why the pack's rules planned instead,
    if they did.

    A model's plan that is no plan or fails validation (a `BadPlanError`, or a `PlanError`
    from `validate_plan`) is never the end of the ticket: a planner that can `revise` is asked
    once more with the errors, then the pack's rules plan. A failed planner *call* (the
    provider is down or refuses the key) stays a `PlanError`: nothing was planned, and a
    strict replay of a request it never recorded must fail.

    A follow-up (`earlier`: the thread's earlier messages) is planned by the pack's
    `plan_follow_up` when it has one (support's applies POL-ESC-001's contact count), else
    by its planner on the message alone; a planner of another kind reads the message after
    the conversation so far (`conversation_text`)."""
    pack, roster = pack_of(services.roster), services.roster
    follow_up = pack.hook("plan_follow_up") if earlier is not None else None

    def rules(text: str, roster: Roster) -> list[Handoff] | Awaitable[list[Handoff]]:
        if follow_up is not None:
            planned: list[Handoff] = follow_up(text, roster, list(earlier or []))
            return planned
        return pack.planner(text, roster)

    if services.planner is pack.planner:
        return validate_plan(await _awaited(rules(request, roster)), roster), None
    asked = request if earlier is None else conversation_text(request, earlier, actions)
    problems: list[str] = []
    try:
        return validate_plan(await _awaited(services.planner(asked, roster)), roster), None
    except PlannerCallError:
        raise  # the planner's model call failed: see above
    except PlanError as error:  # a BadPlanError, or refused by validate_plan
        problems.append(str(error))
    if isinstance(services.planner, RevisablePlanner):
        try:
            revised = await services.planner.revise(asked, roster, problems[0])
            return validate_plan(revised, roster), None
        except PlannerCallError:
            raise
        except PlanError as error:
            problems.append(str(error))
    fallback = (
        f"the planner's plan was refused ({'; then '.join(problems)}); "
        "the pack's rules planned instead"
    )
    validated = validate_plan(await _awaited(rules(request, roster)), roster)
    validated.notes.insert(0, fallback)
    return validated, fallback


async def _awaited(planned: list[Handoff] | Awaitable[list[Handoff]]) -> list[Handoff]:
    """A planner's packets; an LLM planner returns an awaitable (it must not block the loop)."""
    return await planned if inspect.isawaitable(planned) else planned


def planned_intents(packets: Sequence[Handoff]) -> list[str]:
    """The intents a planner gave its packets (their `intents` input), in first-seen order."""
    found = [i.strip() for p in packets for i in p.inputs.get("intents", "").split(",")]
    return list(dict.fromkeys(i for i in found if i))


def with_intents(packet: Handoff, reading: TicketReading, roster: Roster) -> Handoff:
    """A packet whose worker may propose actions carries the intents the domain's reading
    names for it (`TicketReading.action_intents`; support: the order-bound ones) in
    `intents`, whoever planned it: the proposal rules decide from them, and an LLM plan that
    leaves them out must not silently lose the refund a settled duplicate is owed."""
    spec = roster.get(packet.recipient)
    if spec is None or not spec.proposes or "intents" in packet.inputs:
        return packet
    if not reading.action_intents or not reading.may_propose:
        return packet
    intents = ",".join(reading.action_intents)
    return packet.model_copy(update={"inputs": {**packet.inputs, "intents": intents}})
