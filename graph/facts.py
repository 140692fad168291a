"""Shared facts: resolved once in `plan`, then handed to every packet that needs them.

A fact several workers need is fetched once, by the supervisor, through the hub with an
allowlist of exactly that one read tool. It travels in `Handoff.facts` as a `Finding`, a real
tool observation: each worker whose roster entry `needs` it starts with that evidence, cites
it like its own, and does not fetch it again. A roster declares its facts as data
(`Roster.shared_facts`); a domain whose fact needs more than one lookup per packet provides
`resolve_facts` in its plug-in, which gets the declared facts and adds its own (support's
order record, which also answers a packet about an order that does not exist:
`domains/support/order_record.py`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from langgraph.runtime import get_runtime

from graph.domains import pack_of
from graph.trace import record_call
from workers.contracts import Finding, Handoff, Report
from workers.hub import ToolCallResult
from workers.roster import Roster

if TYPE_CHECKING:  # the hub loads the MCP SDK, only once a hub runs
    from workers.hub import ToolHub

SHARED_CALL_PREFIX = "shared-"
"""Call ids of the supervisor's own lookups start with this, so they can be told apart."""


@dataclass
class SharedFacts:
    """The packets with their shared facts attached, and what resolving them found."""

    packets: list[Handoff]
    """Every packet, its shared facts attached where its worker `needs` them."""
    notes: list[str] = field(default_factory=list)
    """One line per lookup."""
    unknown_orders: list[str] = field(default_factory=list)
    """Subject ids the pack's lookup found do not exist (support's order record: order ids
    the orders server does not know)."""
    answered: list[Report] = field(default_factory=list)
    """Reports for packets a lookup already answered (support: about an order that does not
    exist), so nobody is sent to fail on it again."""


FactResolver = Callable[..., Awaitable[SharedFacts]]
"""A pack's `resolve_facts(declared, order_ids, *, hub, roster, received_at)`: the declared
facts with its own added, given the request's subject ids (support: its order ids) and when
the request arrived (`InputState.received_at`, None when its caller did not say)."""


async def resolve_shared_facts(
    packets: Sequence[Handoff],
    order_ids: Sequence[str],
    *,
    hub: ToolHub,
    roster: Roster,
    received_at: datetime | None = None,
) -> SharedFacts:
    """Packets with the facts their workers need attached, and notes: the roster's declared
    facts, then whatever the roster's pack resolves itself (`resolve_facts`)."""
    declared = await _declared_facts(packets, hub=hub, roster=roster)
    resolve: FactResolver | None = pack_of(roster).hook("resolve_facts")
    if resolve is None:
        return declared
    return await resolve(declared, order_ids, hub=hub, roster=roster, received_at=received_at)


async def _declared_facts(
    packets: Sequence[Handoff], *, hub: ToolHub, roster: Roster
) -> SharedFacts:
    """The facts a domain's roster declares (`Roster.shared_facts`): each looked up once per
    distinct arguments, through an allowlist of exactly its one read tool, and attached to
    every packet whose worker `needs` it, once the packet gives every argument it names. A
    lookup that fails is a note: the workers then go without it, and say what they could not
    see."""
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
            if any(source not in inputs for source in fact.args.values()):
                # Not yet: a lookup missing an argument would be another question (an
                # incident page's window before its date is settled reads the data's end,
                # not the page's time); the pack's `resolve_facts` asks again once it has it.
                continue
            args = {arg: inputs[source] for arg, source in fact.args.items()}
            key = fact.tool + json.dumps(args, sort_keys=True)
            if key not in found:
                result = await hub.call(fact.tool, args, [fact.tool])
                record_lookup(fact.tool, args, result)
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


def record_lookup(tool: str, args: dict[str, str], result: ToolCallResult) -> None:
    """The lookup, in the running node's trace for `muster replay` (no-op untraced or
    outside a graph run)."""
    try:
        context = get_runtime().context
    except RuntimeError:  # not inside a graph run
        return
    record_call(getattr(context, "trace", None), tool, dict(args), result, node="plan")
