"""Support's shared fact: the order record, looked up once by the supervisor for every packet
whose worker `needs` it (`order_record` in domains/support/roster.json).

A ticket is about one order in the common case; each packet gets the record of the order it
names, or else the ticket's first order. A packet about an order that does not exist is
answered by the lookup itself: the answer asks the customer to check the number instead of
sending a worker to fail on it. `graph.facts.resolve_shared_facts` calls `resolve_facts`
(plugin.py) after the roster's declared facts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from graph.facts import SHARED_CALL_PREFIX, SharedFacts, record_lookup
from workers.contracts import Finding, Handoff, Report
from workers.hub import CallOutcome
from workers.roster import Roster

if TYPE_CHECKING:  # the hub loads the MCP SDK, only once a hub runs
    from workers.hub import ToolHub

ORDER_RECORD = "order_record"
"""The shared fact a roster entry can list under `needs`."""
ORDER_LOOKUP = "orders.find_order"
"""The one tool the supervisor may call to resolve it."""
UNKNOWN_ORDER = re.compile(r"\bno order (\S+);")
"""How the orders server says an order does not exist (its error text is its contract)."""


async def resolve_order_record(
    declared: SharedFacts,
    order_ids: Sequence[str],
    *,
    hub: ToolHub,
    roster: Roster,
    received_at: datetime | None = None,
) -> SharedFacts:
    """The declared facts' packets with the order record attached where their worker needs
    it, the notes of each lookup, the orders that do not exist and the packets about them,
    answered. (`received_at` is unused: an order's facts do not depend on when the ticket
    came; the orders server has its own "today".)"""

    def needs_record(packet: Handoff) -> bool:
        spec = roster.get(packet.recipient)
        return spec is not None and ORDER_RECORD in spec.needs

    packets = declared.packets
    needy = [p for p in packets if needs_record(p)]
    order_ids = list(dict.fromkeys(order_ids))
    if not needy or not order_ids:
        return declared
    records: dict[str, Finding] = {}
    notes: list[str] = []
    unknown: list[str] = []
    errors: dict[str, str] = {}
    for order_id in order_ids:
        result = await hub.call(ORDER_LOOKUP, {"order_id": order_id}, [ORDER_LOOKUP])
        record_lookup(ORDER_LOOKUP, {"order_id": order_id}, result)
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
        no_such_order(p, errors[p.inputs["order_id"]])
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


def no_such_order(packet: Handoff, error: str) -> Report:
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
        note=f"{conclusion} (F1)",  # cites the lookup, so verify holds the claim to it
        conclusion=conclusion,
        attempt=packet.attempt,
    )
