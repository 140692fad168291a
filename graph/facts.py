"""Shared facts: resolved once in `plan`, then handed to every packet that needs them.

A fact several workers need (the order record) is fetched once, by the supervisor, through
the hub with an allowlist of exactly that one read tool. It travels in `Handoff.facts` as a
`Finding`, a real tool observation: each worker whose roster entry `needs` it starts with
that evidence, cites it like its own, and does not fetch it again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from langgraph.runtime import get_runtime

from graph.trace import record_call
from workers.contracts import Finding, Handoff, Report
from workers.hub import CallOutcome, ToolCallResult
from workers.roster import Roster

if TYPE_CHECKING:  # the hub loads the MCP SDK, only once a hub runs
    from workers.hub import ToolHub

ORDER_RECORD = "order_record"
"""The shared fact a roster entry can list under `needs`."""
SHARED_CALL_PREFIX = "shared-"
"""Call ids of the supervisor's own lookups start with this, so they can be told apart."""
ORDER_LOOKUP = "orders.find_order"
"""The one tool the supervisor may call to resolve it."""


@dataclass
class SharedFacts:
    """The packets with their shared facts attached, and what resolving them found."""

    packets: list[Handoff]
    """Every packet, the order record attached where its worker `needs` it."""
    notes: list[str] = field(default_factory=list)
    """One line per lookup."""
    unknown_orders: list[str] = field(default_factory=list)
    """Order ids the orders server says do not exist."""
    answered: list[Report] = field(default_factory=list)
    """Reports for packets about an order that does not exist: the supervisor's own lookup
    already answered them, so nobody is sent to fail on it again."""


UNKNOWN_ORDER = re.compile(r"\bno order (\S+);")
"""How the orders server says an order does not exist (its error text is its contract)."""


async def resolve_shared_facts(
    packets: Sequence[Handoff], order_ids: Sequence[str], *, hub: ToolHub, roster: Roster
) -> SharedFacts:
    """Packets with the order record attached where their worker needs it, and notes.

    A packet about an order that does not exist is answered by the lookup itself: the answer
    asks the customer to check the number instead of sending a worker to fail on it."""

    def needs_record(packet: Handoff) -> bool:
        spec = roster.get(packet.recipient)
        return spec is not None and ORDER_RECORD in spec.needs

    declared = await _declared_facts(packets, hub=hub, roster=roster)
    packets = declared.packets
    needy = [p for p in packets if needs_record(p)]
    order_ids = list(dict.fromkeys(order_ids))
    if not needy or not order_ids:
        return declared
    # A ticket is about one order in the common case; each packet gets the record of the
    # order it names, or else the ticket's first order.
    records: dict[str, Finding] = {}
    notes: list[str] = []
    unknown: list[str] = []
    errors: dict[str, str] = {}
    for order_id in order_ids:
        result = await hub.call(ORDER_LOOKUP, {"order_id": order_id}, [ORDER_LOOKUP])
        _record(ORDER_LOOKUP, {"order_id": order_id}, result)
        if not result.ok:
            if result.outcome == CallOutcome.TOOL_ERROR and UNKNOWN_ORDER.search(result.text):
                unknown.append(order_id)
                errors[order_id] = result.text
                notes.append(f"order {order_id} does not exist: {result.text}")
                continue
            notes.append(f"could not resolve {ORDER_RECORD} for order {order_id}: {result.text}")
            continue
        records[order_id] = Finding(
            id="F1",
            tool=ORDER_LOOKUP,
            call_id=f"{SHARED_CALL_PREFIX}{order_id}",
            args={"order_id": order_id},
            observation=result.text,
        )
        notes.append(f"resolved {ORDER_RECORD} {order_id} once for {len(needy)} packet(s)")
    answered = [
        _no_such_order(p, errors[p.inputs["order_id"]])
        for p in packets
        if p.inputs.get("order_id") in errors
    ]
    kept = list(packets)
    if not records:
        return SharedFacts(
            packets=kept, notes=declared.notes + notes, unknown_orders=unknown, answered=answered
        )
    first = next(iter(records.values()))

    def with_fact(packet: Handoff) -> Handoff:
        record = records.get(packet.inputs.get("order_id", ""), first)
        return packet.model_copy(update={"facts": (record, *packet.facts)})

    return SharedFacts(
        packets=[with_fact(p) if needs_record(p) else p for p in kept],
        notes=declared.notes + notes,
        unknown_orders=unknown,
        answered=answered,
    )


async def _declared_facts(
    packets: Sequence[Handoff], *, hub: ToolHub, roster: Roster
) -> SharedFacts:
    """The facts a domain's roster declares (`Roster.shared_facts`): each looked up once per
    distinct arguments, through an allowlist of exactly its one read tool, and attached to
    every packet whose worker `needs` it. A lookup that fails is a note: the workers then go
    without it, and say what they could not see."""
    found: dict[str, Finding | None] = {}
    notes: list[str] = []
    kept: list[Handoff] = []
    for packet in packets:
        spec = roster.get(packet.recipient)
        facts = list(packet.facts)
        for name in spec.needs if spec is not None else ():
            fact = roster.shared_facts.get(name)
            if fact is None:
                continue
            inputs = packet.inputs
            args = {arg: inputs[source] for arg, source in fact.args.items() if source in inputs}
            key = fact.tool + json.dumps(args, sort_keys=True)
            if key not in found:
                result = await hub.call(fact.tool, args, [fact.tool])
                _record(fact.tool, args, result)
                call_id = f"{SHARED_CALL_PREFIX}{name}-{len(found) + 1}"
                found[key] = (
                    Finding(id="F1", tool=fact.tool, call_id=call_id, args=args,
                            observation=result.text)
                    if result.ok
                    else None
                )
                notes.append(
                    f"resolved {name} once ({fact.tool})"
                    if result.ok
                    else f"could not resolve {name} ({fact.tool}): {result.text}"
                )
            finding = found[key]
            if finding is not None:
                facts.append(finding)
        kept.append(packet.model_copy(update={"facts": tuple(facts)}) if facts else packet)
    return SharedFacts(packets=kept, notes=notes)


def _record(tool: str, args: dict[str, str], result: ToolCallResult) -> None:
    """The lookup, in the running node's trace for `muster replay` (no-op untraced or
    outside a graph run)."""
    try:
        context = get_runtime().context
    except RuntimeError:  # not inside a graph run
        return
    record_call(getattr(context, "trace", None), tool, dict(args), result, node="plan")


def _no_such_order(packet: Handoff, error: str) -> Report:
    """The report for a packet about an order the orders server does not know."""
    order_id = packet.inputs["order_id"]
    finding = Finding(
        id="F1",
        tool=ORDER_LOOKUP,
        call_id=f"{SHARED_CALL_PREFIX}{order_id}",
        args={"order_id": order_id},
        observation=error,
    )
    conclusion = f"There is no order {order_id}; the customer should check the number."
    return Report(
        packet_id=packet.id,
        worker=packet.recipient,
        objective=packet.objective,
        status="ok",
        findings=[finding],
        note=conclusion,
        conclusion=conclusion,
        attempt=packet.attempt,
    )
