"""Planning: turn a request into validated `Handoff` packets.

`plan_ticket` is the default, deterministic planner for support tickets: it reads order ids,
topics and intents and writes one packet per specialist. Any other planner (an LLM with
structured output) produces the same `Handoff` list, and `validate_plan` checks it, whoever
wrote it: unknown workers and dependency cycles are refused; widened allowlists are narrowed,
budgets capped and duplicates dropped, each with a note.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from workers.allowlist import SERVER_PREFIX, is_allowed, is_valid_entry
from workers.contracts import Handoff
from workers.errors import PlanError
from workers.roster import Roster

MAX_STEPS_CAP = 10
"""No packet may ask for more model turns than this, whoever planned it."""
TIMEOUT_CAP_S = 120.0
"""No packet may run longer than this."""
DEFAULT_TIMEOUT_S = 60.0
"""Wall-clock limit given to a packet when the planner sets none."""

Planner = Callable[[str, Roster], list[Handoff] | Awaitable[list[Handoff]]]
"""Writes packets for a request (or returns an awaitable of them, as the LLM planner does);
its output is always validated afterwards."""

ORDER_ID = re.compile(
    r"(?:#|\border(?:s)?(?:\s+(?:number|no\.?|id))?\s*#?\s*)(\d{4,8})\b(?![-/.]\d)",
    re.IGNORECASE,
)
"""An order id is introduced by '#' or the word 'order' (#12345, order 12345, order no. 12345,
orders #1 and #2): a bare number may be a date, a year, an amount or a phone number."""

TOPIC_KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "duplicate_charge",
        ("charged twice", "double charge", "double-charged", "duplicate", "twice"),
    ),
    ("gift_cards", ("gift card", "giftcard", "voucher")),
    ("shipping", ("shipping", "delivery", "delivered", "arrive", "late", "delayed", "tracking")),
    ("returns", ("return", "send it back", "exchange")),
    ("cancellation", ("cancel",)),
    ("refunds", ("refund", "money back", "reimburse")),
)
"""Topic → phrases that signal it, most specific first; the first match names the policy."""

REFUND_SIGNALS = ("refund", "money back", "reimburse", "credit it back", "pay me back")
"""Phrases that ask for money back: billing may then propose a refund for approval."""

ORDER_SIGNALS = ("order", "charged", "charge", "purchase", "bought", "refund", "package")
"""Phrases that mean the ticket is about some order, even when it names none."""

TIMEZONE = re.compile(r"\b(?:UTC|[A-Z][a-z]+(?:/[A-Z][A-Za-z_]+)+)\b")
"""An IANA time-zone name such as Europe/Berlin or America/New_York."""

HUMAN_SIGNALS = (
    "furious",
    "angry",
    "lawyer",
    "legal",
    "unacceptable",
    "speak to a human",
    "talk to a person",
    "manager",
    "complaint",
    "chargeback",
)
"""Phrases that mean a person should pick the ticket up."""


@dataclass
class ValidatedPlan:
    """Packets in dependency order, and what validation changed."""

    packets: list[Handoff]
    """Packets, topologically sorted by `depends_on`."""
    notes: list[str] = field(default_factory=list)
    """One line per correction."""


def find_order_ids(request: str) -> list[str]:
    """Order ids mentioned in the request, in order, without repeats."""
    return list(dict.fromkeys(ORDER_ID.findall(request)))


def find_topic(request: str) -> str | None:
    """The policy topic a request is about, if any."""
    text = request.lower()
    for topic, phrases in TOPIC_KEYWORDS:
        if any(phrase in text for phrase in phrases):
            return topic
    return None


def needs_human(request: str) -> bool:
    """True when the request itself asks for, or plainly needs, a person."""
    text = request.lower()
    return any(signal in text for signal in HUMAN_SIGNALS)


def kb_query(request: str, topic: str | None) -> str:
    """A search query: the topic's words plus the request's content words."""
    words = re.findall(r"[a-z]{4,}", request.lower())
    stop = {
        "customer",
        "says",
        "what",
        "happened",
        "that",
        "this",
        "with",
        "have",
        "from",
        "they",
        "were",
        "order",
        "about",
        "would",
        "like",
        "please",
        "still",
        "there",
        "their",
    }
    content = [w for w in dict.fromkeys(words) if w not in stop][:8]
    prefix = topic.replace("_", " ") + " " if topic else ""
    return (prefix + " ".join(content)).strip() or "help"


def plan_ticket(request: str, roster: Roster) -> list[Handoff]:
    """The deterministic support-ticket planner."""
    packets: list[Handoff] = []

    def add(recipient: str, objective: str, inputs: dict[str, str]) -> None:
        spec = roster.get(recipient)
        if spec is None:
            return
        packets.append(
            Handoff(
                id=f"{recipient}-{len(packets) + 1}",
                recipient=recipient,
                objective=objective,
                inputs=inputs,
                tool_allow=spec.privileges,
                max_steps=spec.max_steps,
                timeout_s=DEFAULT_TIMEOUT_S,
            )
        )

    topic = find_topic(request)
    text = request.lower()
    intent = {"intent": "refund"} if any(s in text for s in REFUND_SIGNALS) else {}
    order_ids = find_order_ids(request)
    for order_id in order_ids:
        add(
            "billing",
            f"Establish the charges and refund status of order {order_id}.",
            {"order_id": order_id, **intent},
        )
    if not order_ids and any(s in text for s in ORDER_SIGNALS):
        # About an order, but which? Billing will ask (reason `ambiguous`) rather than guess.
        add("billing", "Establish the charges and refund status of the customer's order.", intent)
    if topic:
        add(
            "policy",
            f"Find the policy on {topic.replace('_', ' ')} that applies.",
            {"topic": topic},
        )
    add(
        "comms",
        "Find the knowledge-base articles that answer the customer.",
        {"query": kb_query(request, topic)},
    )
    timezone = TIMEZONE.search(request)
    if timezone and any(s in text for s in ("time", "callback", "call back", "schedule")):
        add(
            "scheduling",
            f"Find the current local time in {timezone.group(0)} for the callback.",
            {"timezone": timezone.group(0)},
        )
    if needs_human(request):
        add(
            "escalation",
            "Write a hand-off summary so a human agent can take the ticket now.",
            {"request_summary": " ".join(request.split())[:300]},
        )
    return packets


def _within(entry: str, privileges: Sequence[str]) -> bool:
    """True if allowlist `entry` grants nothing beyond `privileges`."""
    if SERVER_PREFIX.match(entry):
        return entry in privileges  # a whole-server grant needs a whole-server privilege
    return is_allowed(entry, privileges)


def validate_plan(packets: Sequence[Handoff], roster: Roster) -> ValidatedPlan:
    """Check a plan before anything runs; see the module docstring for what is refused."""
    notes: list[str] = []
    kept: list[Handoff] = []
    seen: dict[str, str] = {}
    renamed: dict[str, str] = {}  # dropped duplicate's id -> the kept packet's id
    ids = [p.id for p in packets]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise PlanError(f"plan uses packet ids more than once: {repeated}; ids must be unique")
    for packet in packets:
        spec = roster.get(packet.recipient)
        if spec is None:
            raise PlanError(
                f"plan names unknown worker {packet.recipient!r} (packet {packet.id}); "
                f"known workers: {', '.join(sorted(roster.workers))}"
            )
        fingerprint = packet.fingerprint()
        if fingerprint in seen:
            notes.append(f"dropped {packet.id}: duplicate of {seen[fingerprint]}")
            renamed[packet.id] = seen[fingerprint]
            continue
        seen[fingerprint] = packet.id
        allow = tuple(
            e for e in packet.tool_allow if is_valid_entry(e) and _within(e, spec.privileges)
        )
        if allow != packet.tool_allow:
            denied = [e for e in packet.tool_allow if e not in allow]
            notes.append(f"narrowed {packet.id}: {packet.recipient} may not use {denied}")
        max_steps = min(max(packet.max_steps, 1), MAX_STEPS_CAP)
        timeout_s = min(max(packet.timeout_s, 0.1), TIMEOUT_CAP_S)
        if (max_steps, timeout_s) != (packet.max_steps, packet.timeout_s):
            notes.append(f"capped {packet.id}: max_steps {max_steps}, timeout {timeout_s:g}s")
        kept.append(
            packet.model_copy(
                update={
                    "tool_allow": allow,
                    "max_steps": max_steps,
                    "timeout_s": timeout_s,
                    "attempt": 1,  # retries are recovery's to count, never the planner's
                }
            )
        )
    # A packet that depended on a dropped duplicate depends on the one that was kept.
    kept = [
        p.model_copy(update={"depends_on": tuple(renamed.get(d, d) for d in p.depends_on)})
        if any(d in renamed for d in p.depends_on)
        else p
        for p in kept
    ]
    return ValidatedPlan(packets=topological_order(kept), notes=notes)


def topological_order(packets: Sequence[Handoff]) -> list[Handoff]:
    """Packets ordered so each comes after what it depends on; a cycle is a `PlanError`."""
    by_id = {p.id: p for p in packets}
    for packet in packets:
        missing = [d for d in packet.depends_on if d not in by_id]
        if missing:
            raise PlanError(f"packet {packet.id} depends on unknown packets {missing}")
    ordered: list[Handoff] = []
    state: dict[str, str] = {}

    def visit(packet_id: str, path: list[str]) -> None:
        if state.get(packet_id) == "done":
            return
        if state.get(packet_id) == "visiting":
            cycle = path[path.index(packet_id) :] + [packet_id]
            raise PlanError(f"plan has a dependency cycle: {' -> '.join(cycle)}")
        state[packet_id] = "visiting"
        for dependency in by_id[packet_id].depends_on:
            visit(dependency, path + [packet_id])
        state[packet_id] = "done"
        ordered.append(by_id[packet_id])

    for packet in packets:
        visit(packet.id, [])
    return ordered
