"""The support answer: what a support agent reads for a ticket, and its terminal layout.

`compose_answer(state)` resolves every intent the ticket expressed (`resolve.Resolver`,
over the facts `facts_read` reads from the reports): a summary of what happened, each claim
citing its finding; a resolution step per intent (an approval-gated action, an instruction
for the agent, or an open point); a draft reply from the knowledge base's customer-facing
wording and the policy that applies; open questions; and the evidence, readable
(`describe_observation` says what an order, a refund status, a policy or an article showed).
The run's failures, fallbacks and limits come from the supervisor's `graph.degradation.assess`,
as for every domain. `render_answer` lays it out with the policies that apply, in support's
wording (`LABELS`: a draft reply to the customer, a ticket to review), over
`graph.answer_render.render_text`.
"""

from __future__ import annotations

from typing import Any

from graph.answer_evidence import effect_cite, effect_lines, evidence_lines
from graph.answer_render import AnswerLabels, action_line, render_text
from graph.degradation import assess
from graph.proposals import proposals_once
from graph.reply_guard import guard_reply
from graph.state import ESCALATION_WORKER, MusterState, current_reports, latest_actions
from graph.synthesize import decisions_of
from workers.contracts import Answer, ProposedAction

from .facts_read import Cited, TicketFacts, _json, money, read_facts
from .intents import BY_NAME
from .order_ids import normalize_order_id
from .resolve import Resolver, proposals_from

BILLING_WORKER = "billing"
"""The worker that reads an order; a ticket with no order id planned none only when it is a
general question (rules.py)."""

LABELS = AnswerLabels(
    reply="Draft reply to the customer", review="a person should review this ticket."
)
"""Support's wording in the plain layout: a reply for the customer, a ticket to review."""


def describe_observation(tool: str, data: dict[str, Any]) -> str | None:
    """What a support tool's JSON result shows, in one line (`tool` without its server), or
    None for the supervisor's generic summary."""
    if tool == "find_order":
        charges = data.get("charges") or []
        charged = "; ".join(
            f"{money(int(c.get('amount_cents', 0)))} on {c.get('charged_at')}"
            for c in charges
            if isinstance(c, dict)
        )
        return (
            f"order {data.get('order_id')} for {data.get('customer')}: "
            f"{data.get('item')}, {data.get('amount')}, {data.get('status')}"
            f"{', delivered ' + str(data['delivered_at']) if data.get('delivered_at') else ''}, "
            f"paid by {data.get('payment_method')}, placed {data.get('placed_at')}; "
            f"charges: {charged or 'none'}"
        )
    if tool == "refund_status":
        return (
            f"refunded {money(int(data.get('refunded_cents', 0)))} of "
            f"{money(int(data.get('total_charged_cents', 0)))} charged; "
            f"{money(int(data.get('refundable_cents', 0)))} still refundable ({data.get('status')})"
        )
    if tool == "check_policy":
        return f"{data.get('policy_id')} ({data.get('topic')}): {data.get('text')}"
    if tool == "get_article":
        return f'{data.get("id")} "{data.get("title")}"'
    return None


def _digest(action: ProposedAction) -> str:
    return action.short_digest()


def facts_now(state: MusterState, usable: list[Any]) -> TicketFacts:
    """The facts the reports observed, with what an executed action changed read again
    after it (`effects`: the refund status after a refund, the order after a
    cancellation) in place of the older observation: the answer tells what is true now."""
    facts = read_facts(usable)
    for finding in state.get("effects") or []:
        data = _json(finding.observation)
        if not isinstance(data, dict) or "order_id" not in data:
            continue
        cited = Cited(data, effect_cite(finding))
        tool = finding.tool.split(".", 1)[-1]
        if tool == "refund_status":
            facts.refunds[str(data["order_id"])] = cited
        elif tool == "find_order":
            old = facts.orders.get(str(data["order_id"]))
            facts.orders[str(data["order_id"])] = (
                Cited({**old.data, **data}, cited.cite) if old is not None else cited
            )
    return facts


def subject_orders(state: MusterState) -> list[str]:
    """The orders the ticket is about: those its reading found, then any a packet was
    given later (a human's clarification fills the packet's `order_id`), once each."""
    ids = [str(o) for o in state.get("order_ids") or []]
    for packet in state.get("packets") or []:
        given = normalize_order_id(str(packet.inputs.get("order_id") or ""))
        if given:
            ids.append(given)
    return list(dict.fromkeys(ids))


def compose_answer(state: MusterState) -> Answer:
    """The answer that resolves the ticket (pure). It is `complete` only when every intent
    has a resolution (principle 10), and needs a human whenever money waits for approval,
    something failed, the customer complained or wrote in another language."""
    run = assess(state)
    reports, reasons, actions = run.reports, run.reasons, run.actions
    recoveries = state.get("recoveries") or []
    intents = list(state.get("intents") or [])
    language = state.get("language") or "English"

    usable = [r for r in reports.values() if r.status == "ok"]
    escalation = next((r for r in usable if r.worker == ESCALATION_WORKER), None)
    order_ids = subject_orders(state)
    resolver = Resolver(
        intents=intents,
        order_ids=order_ids,
        unknown_orders=state.get("unknown_orders") or [],
        facts=facts_now(state, usable),
        # One proposal per order and action, whichever intents asked for it.
        proposals=proposals_from(proposals_once(state), decisions_of(actions), _digest),
        escalation_note=(escalation.conclusion or escalation.note) if escalation else None,
        # No order named and none looked for: the ticket asks about the policy in general.
        general_question=not order_ids
        and not any(p.recipient == BILLING_WORKER for p in state.get("packets") or []),
    )
    resolution = resolver.resolve()
    open_steps = [s for s in resolution.steps if s.kind == "open"]
    if language != "English":
        resolution.open_questions.append(
            f"The customer wrote in {language}: send the reply in {language}."
        )

    status = run.status(open_points=bool(open_steps))
    degraded = bool(reasons) or (status == "failed")
    unresolved_without_order = any(
        s.intent != "unknown" and "names no order" in s.text for s in open_steps
    )
    needs_human = (
        # held: the same action waits for a human in another thread
        any(a.status in ("refused", "failed", "approved", "held") for a in actions)
        or any(s.kind == "action" and s.approval == "pending approval" for s in resolution.steps)
        or any(r.strategy == "escalate" for r in recoveries)
        or escalation is not None
        or "complaint" in intents
        or any(BY_NAME[i].to_human for i in intents if i in BY_NAME)
        or bool(resolution.flagged_articles)  # tool text kept out of the reply
        or status == "failed"
        or not intents
        or unresolved_without_order
        or language != "English"
        or any("policy is never guessed" in s.text for s in open_steps)
    )
    if intents == ["acknowledgement"]:
        needs_human = bool(reasons) or language != "English"  # the reply is still a person's
    evidence = evidence_lines(usable, describe=describe_observation)
    evidence += effect_lines(state, describe=describe_observation)
    customer = next(iter(resolver.facts.orders.values()), None)
    greeting = f"Hello {customer.data.get('customer')}," if customer else "Hello,"
    reply = "\n\n".join([greeting, *resolution.reply, "Kind regards,\nCustomer Support"])
    # The whole draft passes the reply guard too: tool text that reached it another way (an
    # order's item name, a customer's name) is dropped and named like an article's.
    guarded = guard_reply(reply)
    reply = guarded.text
    kept_out = resolution.kept_out + [
        f"the draft: «{sentence[:160]}»" for sentence in guarded.dropped
    ]
    resolution.open_questions += [f"Kept out of the customer reply: {k}" for k in kept_out]
    needs_human = needs_human or bool(kept_out)
    answer = Answer(
        text="",
        status=status,
        degraded=degraded,
        degraded_reasons=reasons,
        needs_human=needs_human,
        stop_reason=state.get("stop_reason"),
        intents=intents,
        summary=resolution.summary,
        resolution=resolution.steps,
        customer_reply=reply if resolution.reply else "",
        open_questions=resolution.open_questions,
        evidence=evidence,
    )
    return answer.model_copy(update={"text": _render(answer, state, resolver.facts)})


def render_answer(answer: Answer, state: MusterState) -> str:
    """The answer for a terminal (plain Markdown): its parts, the policies that apply, the
    actions and the recovery."""
    usable = [r for r in current_reports(state.get("reports") or []).values() if r.status == "ok"]
    return _render(answer, state, facts_now(state, usable))


def _render(answer: Answer, state: MusterState, facts: TicketFacts) -> str:
    policies = [
        f"{p.data.get('policy_id')}"
        + (f" (cached snapshot {p.data.get('snapshot')})" if p.fallback else "")
        + f": {p.data.get('text')}"
        for p in facts.policies.values()
    ]
    return render_text(
        answer,
        request=state["request"],
        labels=LABELS,
        policies=policies,
        action_lines=[action_line(a) for a in latest_actions(state).values()],
        recovery_lines=[f"- {r.strategy}: {r.detail}" for r in state.get("recoveries") or []],
    )
