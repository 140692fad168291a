"""Shared facts: resolved once in `plan`, then handed to every packet that needs them.

A fact several workers need (the order record) is fetched once, by the supervisor, through
the hub with an allowlist of exactly that one read tool. It travels in `Handoff.facts` as a
`Finding`, a real tool observation: each worker whose roster entry `needs` it starts with
that evidence, cites it like its own, and does not fetch it again.
"""

from __future__ import annotations

from collections.abc import Sequence

from workers.contracts import Finding, Handoff
from workers.hub import ToolHub
from workers.roster import Roster

ORDER_RECORD = "order_record"
"""The shared fact a roster entry can list under `needs`."""
SHARED_CALL_PREFIX = "shared-"
"""Call ids of the supervisor's own lookups start with this, so they can be told apart."""
ORDER_LOOKUP = "orders.find_order"
"""The one tool the supervisor may call to resolve it."""


async def resolve_shared_facts(
    packets: Sequence[Handoff], order_ids: Sequence[str], *, hub: ToolHub, roster: Roster
) -> tuple[list[Handoff], list[str]]:
    """Packets with the order record attached where their worker needs it, and notes."""

    def needs_record(packet: Handoff) -> bool:
        spec = roster.get(packet.recipient)
        return spec is not None and ORDER_RECORD in spec.needs

    needy = [p for p in packets if needs_record(p)]
    order_ids = list(dict.fromkeys(order_ids))
    if not needy or not order_ids:
        return list(packets), []
    # A ticket is about one order in the common case; each packet gets the record of the
    # order it names, or else the ticket's first order.
    records: dict[str, Finding] = {}
    notes: list[str] = []
    for order_id in order_ids:
        result = await hub.call(ORDER_LOOKUP, {"order_id": order_id}, [ORDER_LOOKUP])
        if not result.ok:
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
    if not records:
        return list(packets), notes
    first = next(iter(records.values()))

    def with_fact(packet: Handoff) -> Handoff:
        record = records.get(packet.inputs.get("order_id", ""), first)
        return packet.model_copy(update={"facts": (record,)})

    return [with_fact(p) if needs_record(p) else p for p in packets], notes
