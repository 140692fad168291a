"""The support pack's plug-in: the ticket rules Muster was first written for.

Its parts, beside this file: the rules planner (`rules.py`, intents as data in
`intents.py`, order ids read by `order_ids.py`: the request's subject ids, in the packet
input `order_id`, which recovery also fills from a human's clarification); the order record
shared fact (`order_record.py`); the billing proposal rules (`proposals.py`: refund and
cancellation, registered with `workers.proposals` when the pack loads) and the refund's
re-read right before it runs (`execution.py`); the policy fallback (`fallbacks.py`,
`policy_snapshot.json`); the answer (`answer.py`: its assembly, and its layout in support's
wording over the plain one, with its sections from `resolve.py` over the facts
`facts_read.py` reads from the reports); and the eval set (`tickets.jsonl`, labelled by the
rules in `LABELS.md`, its fields read and targeted in `scoring.py`, run and tabled by the
shell's generic harness, `graph/app/eval*.py`, in the environment `scoring.py` declares:
a fresh orders database, the date the labels assume); the roster (`roster.json`) and the
servers (`servers.json`), named by `domain.json`. For the bundled default, `MUSTER_ROSTER` and
`MUSTER_SERVERS` still replace them (graph/app/options.py).

Still outside the pack: the names of the state's `order_ids`/`unknown_orders` fields and of
`TicketReading.order_ids` and `SharedFacts.unknown_orders` (they hold any pack's subject
ids; the names are kept so existing checkpoints read the same).
"""

from __future__ import annotations

from collections.abc import Sequence

from graph.planners.base import DEFAULT_TIMEOUT_S
from graph.state import ESCALATION_WORKER, Contact, unresolved_in_a_row
from workers.contracts import Handoff
from workers.roster import Roster

from . import answer, execution, order_record, scoring
from .fallbacks import load_policy_snapshot
from .intents import INTENTS as _TABLE
from .proposals import CANCEL_TOOL, REFUND_TOOL
from .proposals import PROPOSAL_RULES as _PROPOSAL_RULES
from .rules import plan_ticket, read_ticket

plan = plan_ticket
"""The rules planner."""

ESCALATE_AFTER_UNRESOLVED = 2
"""POL-ESC-001: "escalate to a team lead ... after two unresolved contacts"."""


def plan_follow_up(request: str, roster: Roster, earlier: Sequence[Contact]) -> list[Handoff]:
    """A follow-up message's packets: the rules planner's for the message, read alone as
    any ticket (the engine gives the billing packet the order named earlier when the message
    names none, `graph.plan.with_subjects`), and, when the customer's last two contacts
    (`ESCALATE_AFTER_UNRESOLVED`) both ended unresolved, POL-ESC-001's escalation: the
    policy is read and the escalation worker writes the hand-off, told the contact count
    (its packet's `contacts` and `unresolved_contacts` inputs)."""
    packets = plan_ticket(request, roster)
    unresolved = unresolved_in_a_row(earlier)
    if unresolved < ESCALATE_AFTER_UNRESOLVED:
        return packets
    contacts = len(earlier) + 1
    counts = {"contacts": str(contacts), "unresolved_contacts": str(unresolved)}
    if not any(p.recipient == "policy" and p.inputs.get("topic") == "escalation" for p in packets):
        spec = roster.get("policy")
        if spec is not None:
            packets.append(
                Handoff(
                    id=f"policy-{len(packets) + 1}",
                    recipient="policy",
                    objective="Find the policy on escalation that applies.",
                    inputs={"topic": "escalation"},
                    tool_allow=spec.privileges,
                    max_steps=spec.max_steps,
                    timeout_s=DEFAULT_TIMEOUT_S,
                )
            )
    escalating = [p for p in packets if p.recipient == ESCALATION_WORKER]
    if escalating:  # a complaint already asked for the hand-off: it carries the count too
        return [
            p.model_copy(update={"inputs": {**p.inputs, **counts}}) if p in escalating else p
            for p in packets
        ]
    spec = roster.get(ESCALATION_WORKER)
    if spec is None:
        return packets
    history = " / ".join(" ".join(str(c.get("text") or "").split())[:120] for c in earlier)
    packets.append(
        Handoff(
            id=f"{ESCALATION_WORKER}-{len(packets) + 1}",
            recipient=ESCALATION_WORKER,
            objective=f"Write a hand-off summary so a team lead can take the ticket now: "
            f"this is contact {contacts} from the customer and the last {unresolved} were "
            "not resolved (POL-ESC-001).",
            inputs={
                "request_summary": f"Contact {contacts}: {' '.join(request.split())[:200]} "
                f"(earlier: {history})"[:300],
                **counts,
            },
            tool_allow=spec.privileges,
            max_steps=spec.max_steps,
            timeout_s=DEFAULT_TIMEOUT_S,
        )
    )
    return packets


read_request = read_ticket
"""The ticket reading (intents in seven languages, order ids, language, time zone)."""
INTENTS = frozenset(intent.name for intent in _TABLE)
"""Every intent the reading can produce."""
FALLBACKS = {"policy": load_policy_snapshot()}
"""The policy worker's cached snapshot, put in by recovery when the live policy server fails."""
compose_answer = answer.compose_answer
"""The ticket answer: every intent resolved, a draft reply, the evidence (answer.py)."""
render_answer = answer.render_answer
"""Its terminal layout, with the policies that apply."""
resolve_facts = order_record.resolve_order_record
"""The order record, looked up once for every packet that needs it; a packet about an order
that does not exist is answered by the lookup (order_record.py)."""
PROPOSAL_RULES = _PROPOSAL_RULES
"""The refund and cancellation rules (proposals.py), registered with `workers.proposals` when
the pack loads."""
ACTION_SUBJECTS = {REFUND_TOOL: "order_id", CANCEL_TOOL: "order_id"}
"""The argument naming what each write tool changes: one such action per order waits for a
human at a time, across threads (graph/approval_settled.py)."""
ACTION_NAMES = {REFUND_TOOL: "a refund"}
"""How messages name the write tools ("a refund on order 12345 is awaiting approval ...")."""
BEFORE_EXECUTE = {REFUND_TOOL: execution.refund_state_changed}
"""Right before an approved refund runs, the order's refunds are re-read (execution.py)."""
AFTER_EXECUTE = {REFUND_TOOL: execution.refunds_after, CANCEL_TOOL: execution.order_after}
"""Right after a refund or a cancellation ran, what it changed is read again (execution.py),
so the answer written afterwards says what is true now."""
SUBJECT_INPUT = "order_id"
"""The packet input naming the order a ticket is about: the plan gathers the request's order
ids (its reading's, and the packets') for the order record; recovery fills it from a human's
clarification."""
REQUESTER_TOOLS = frozenset({REFUND_TOOL})
"""The refund records the thread that asked (`requested_by`) in the orders ledger."""
EVAL_FIELDS = scoring
"""The eval's labelled fields, their targets and how a thread's outcome is read (scoring.py),
for the shell's `muster eval DATASET` harness."""
