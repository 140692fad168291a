"""`muster fork THREAD --checkpoint ID`: a new thread that starts where a checkpoint of
another one stood, so a human can re-run from just before a failure with a fix.

Time travel inside one thread (invoking at an old `checkpoint_id`) would move that thread's
head: the original would no longer read as it ran. A fork therefore copies instead, with
LangGraph's own API and nothing below it:

1. `aget_state_history` finds the checkpoint (by id, or a unique prefix) and its state;
2. `--rerun` and `--edit` change that state (`plan_fork`, pure): a rerun forgets a packet's
   reports and recoveries (and those of packets that depend on it) so it is dispatched
   afresh; an edit replaces a field, validated against `MusterState`'s types;
3. `aupdate_state` writes the state to the new thread *as the node the graph would have
   come from* (`ARRIVES_FROM`), so the graph's own edges and routers decide what runs next:
   from `act`, `route_actions` leads to `synthesize`; a fork before a fan-out, a recovery
   or `verify` (and any rerun) enters at the barrier, which releases the packets that have
   no report, recovers what failed, or goes on to `verify`, as in the source. A fork at the
   input (or before `plan`) starts the new thread from the request. The new thread's first
   checkpoint names its origin in its metadata;
4. the new thread runs on like any other (`stream_run`), with the fork's own servers and
   model (e.g. the policy server healthy this time).

Copying the checkpoint rows instead would have to carry every ancestor and its writes (the
`DeltaChannel` lists are rebuilt from them; `BaseCheckpointSaver.copy_thread` says so, and
neither saver implements it): a state written whole by `update_state` needs none of that.
Actions the source settled (executed, rejected) are the fork's too (`inherit_actions`), so a
fork after a refund does not ask for it again. What a fork does not copy: `deadline_at` (a
wall-clock deadline belongs to the run that set it; give the fork `--deadline`), and with
`--rerun`, the old `stop_reason` and answer (the barrier checks the limits again;
`synthesize` writes a new answer).
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_type_hints

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import StateSnapshot
from pydantic import TypeAdapter, ValidationError

from checkpoints.threads import thread_config
from graph.action_seal import seal_holds, sealed
from graph.app.history import FORKED_AT, FORKED_FROM, checkpoint_id
from graph.proposals import approval_digest, idempotency_key
from graph.state import MusterState
from graph.trace import THREAD_ID
from workers.contracts import ActionRecord, Handoff, ProposedAction, RecoveryRecord, Report
from workers.errors import MusterError

STATE_FIELDS: dict[str, Any] = get_type_hints(MusterState)
"""Every field `--edit` may set, with the type its value is validated against."""

BARRIER = "collect"
"""Where a fork before a fan-out, a recovery or `verify` enters: the barrier's router
(`route_needs_recovery`) decides from the state what runs, as it did in the source. It reads
the run's services, which only a real step has, so the state is written as `recover`, whose
plain edge leads to the barrier."""
ARRIVES_FROM = {
    "dispatch": "recover",
    "collect": "recover",
    "recover": "recover",
    "verify": "recover",
    "approve": "verify",
    "act": "approve",
    "synthesize": "act",
}
"""For the node a checkpoint runs next, the node the fork's state is written as: one whose
edges lead there from that state (graph/build.py). `route_actions` reads only the state, so
`verify` and `act` lead on exactly; the rest go through the barrier. `seed_fork` checks."""
STARTS = ("__start__", "plan")
"""Nodes next at the input: a fork there starts the new thread from the request."""
MIN_PREFIX = 8
"""The shortest checkpoint id prefix `--checkpoint` accepts."""


@dataclass(frozen=True)
class ForkPlan:
    """What `muster fork` will write, worked out before anything is written."""

    source: str
    """The thread forked from; left as it is."""
    checkpoint_id: str
    """The checkpoint forked from."""
    step: int
    """Its superstep."""
    next: tuple[str, ...]
    """What it would run next in the source thread."""
    values: dict[str, Any]
    """The new thread's state: the checkpoint's, with the reruns and edits applied."""
    as_node: str | None
    """The node the state is written as (see `ARRIVES_FROM`); None to start from input."""
    expect: tuple[str, ...] = ()
    """What the new thread must run first: the source's next, or the barrier."""
    reruns: tuple[str, ...] = ()
    """The packet ids dispatched afresh."""
    edited: tuple[str, ...] = ()
    """The fields `--edit` replaced or removed."""


def parse_edits(texts: Sequence[str]) -> dict[str, Any]:
    """`--edit` values as {field: value}; None removes a field. Each is `KEY=VALUE` (VALUE
    is JSON if it parses, else text) or a JSON object of fields; every value is validated
    against the field's type, so a bad one fails here, before anything is written."""
    edits: dict[str, Any] = {}
    for text in texts:
        pairs: Mapping[str, Any]
        if text.lstrip().startswith("{"):
            try:
                pairs = json.loads(text)
            except json.JSONDecodeError as error:
                raise MusterError(f"--edit {text!r}: not valid JSON ({error.msg})") from None
            if not isinstance(pairs, dict):
                raise MusterError(f"--edit {text!r}: a JSON edit must be an object of fields")
        else:
            key, equals, raw = text.partition("=")
            if not equals or not key.strip():
                raise MusterError(f"--edit {text!r}: give KEY=VALUE, or a JSON object")
            try:
                value = json.loads(raw)
            except json.JSONDecodeError:
                value = raw
            pairs = {key.strip(): value}
        for key, value in pairs.items():
            edits[key] = _validated(key, value)
    return edits


def _validated(key: str, value: Any) -> Any:
    if key not in STATE_FIELDS:
        raise MusterError(
            f"--edit {key}: not a state field; the fields are {', '.join(sorted(STATE_FIELDS))}"
        )
    if value is None:
        return None
    try:
        return TypeAdapter(STATE_FIELDS[key]).validate_python(value)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise MusterError(
            f"--edit {key}: {first['msg']}" + (f" at {where}" if where else "")
        ) from None


def find_checkpoint(history: Sequence[StateSnapshot], ref: str, *, listing: str) -> StateSnapshot:
    """The checkpoint `ref` names: its id, or a unique prefix of at least `MIN_PREFIX`
    characters. `listing` is the command that lists them, for the error."""
    exact = [s for s in history if checkpoint_id(s) == ref]
    if exact:
        return exact[0]
    found = (
        [s for s in history if checkpoint_id(s).startswith(ref)] if len(ref) >= MIN_PREFIX else []
    )
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise MusterError(
            f"--checkpoint {ref} matches {len(found)} checkpoints; give more of the id "
            f"(`{listing}` lists them)"
        )
    raise MusterError(f"no checkpoint {ref!r} in this thread; `{listing}` lists them")


def plan_fork(
    source: str,
    target: StateSnapshot,
    *,
    thread_id: str,
    edits: Mapping[str, Any],
    reruns: Sequence[str],
    listing: str,
) -> ForkPlan:
    """The state of the new thread `thread_id` and how it enters the graph (pure: nothing
    is written)."""
    values = dict(target.values)
    values.pop("deadline_at", None)
    if values.get("actions"):
        values["actions"] = inherit_actions(values["actions"], source=source, fork=thread_id)
    if values.get("reports"):
        values["reports"] = reseal_proposals(values["reports"], source=source, fork=thread_id)
    step = (target.metadata or {}).get("step")
    rerun_ids: tuple[str, ...] = ()
    if reruns:
        rerun_ids = rerun_packets(values, reruns)
        values = forget_packets(values, rerun_ids)
    for key, value in edits.items():
        if value is None:
            values.pop(key, None)
        else:
            values[key] = value
    following = tuple(target.next)
    as_node: str | None
    if reruns:
        as_node = ARRIVES_FROM[BARRIER]
    elif not following:
        raise MusterError(
            f"checkpoint {checkpoint_id(target)} is the end of the thread: nothing runs after "
            f"it; fork an earlier one (`{listing}`), or give --rerun PACKET"
        )
    elif set(following) <= set(STARTS):
        as_node = None
    elif set(following) <= set(ARRIVES_FROM):
        as_node = ARRIVES_FROM[following[0]]
    else:
        raise MusterError(
            f"cannot fork at checkpoint {checkpoint_id(target)}: it runs {', '.join(following)} "
            f"next; pick another (`{listing}`)"
        )
    return ForkPlan(
        source=source,
        checkpoint_id=checkpoint_id(target),
        step=step if isinstance(step, int) else -1,
        next=following,
        values=values,
        as_node=as_node,
        expect=(BARRIER,) if as_node == ARRIVES_FROM[BARRIER] else following,
        reruns=rerun_ids,
        edited=tuple(edits),
    )


def inherit_actions(
    actions: Sequence[ActionRecord], *, source: str, fork: str
) -> list[ActionRecord]:
    """The source thread's action records as the fork's: an approval is bound to a digest
    that includes the thread's idempotency key, so without this the fork would put an
    action the source already executed (or rejected) to a human again.

    A settled record (executed, rejected, refused, failed, held) is kept under the digest
    the fork computes for the same action, with its real idempotency key (the one the
    effect ran under, which the orders server remembers) and a note saying where it was
    decided. A record approved but not executed yet is dropped: its approval token is
    bound to the source's digest, so the fork asks a human again (the orders ledger still
    refunds a charge once, whichever thread asks)."""
    inherited = []
    for record in actions:
        if record.status == "approved":
            continue
        proposal = ProposedAction(tool=record.tool, args=record.args)
        digest = approval_digest(proposal, idempotency_key(fork, proposal))
        note = f"decided in thread {source} before the fork (digest {record.digest[:12]})"
        inherited.append(
            record.model_copy(
                update={"digest": digest, "note": "; ".join(p for p in (record.note, note) if p)}
            )
        )
    return inherited


def reseal_proposals(reports: Sequence[Report], *, source: str, fork: str) -> list[Report]:
    """The source's reports with each proposed action sealed for the fork's thread
    (`graph.action_seal`), if its seal held in the source: one that did not (changed in the
    store) stays as it is, and the fork's `approve` refuses it as the source's would."""
    resealed = []
    for report in reports:
        if report.proposed_actions:
            actions = [
                sealed(fork, a) if seal_holds(source, a) else a for a in report.proposed_actions
            ]
            report = report.model_copy(update={"proposed_actions": actions})
        resealed.append(report)
    return resealed


def rerun_packets(values: Mapping[str, Any], refs: Sequence[str]) -> tuple[str, ...]:
    """The packet ids `--rerun` names (a packet id, or every packet of a worker), with the
    packets that depend on them, and their stand-ins (`<id>-via-…`, `<id>-escalated`)."""
    packets: list[Handoff] = values.get("packets") or []
    chosen: set[str] = set()
    for ref in refs:
        named = {p.id for p in packets if p.id == ref or p.recipient == ref}
        if not named:
            known = ", ".join(dict.fromkeys(f"{p.id} ({p.recipient})" for p in packets))
            raise MusterError(
                f"--rerun {ref}: no packet or worker of that name at this checkpoint"
                + (f"; its packets: {known}" if known else "; it has no packets yet")
            )
        chosen |= named
    while True:  # the closure: dependents and stand-ins of what reruns
        more = {
            p.id
            for p in packets
            if p.id not in chosen
            and (
                any(d in chosen for d in p.depends_on)
                or any(p.id.startswith(f"{c}-via-") or p.id == f"{c}-escalated" for c in chosen)
            )
        }
        if not more:
            return tuple(sorted(chosen))
        chosen |= more


def forget_packets(values: Mapping[str, Any], packet_ids: Sequence[str]) -> dict[str, Any]:
    """`values` as if the packets had never run: their reports and recovery records gone,
    each packet kept once (its latest form, so a clarified packet keeps the human's answer)
    as a first attempt, and stand-ins added by recovery dropped."""
    gone = set(packet_ids)
    packets: list[Handoff] = values.get("packets") or []
    latest: dict[str, Handoff] = {}
    for packet in packets:
        latest[packet.id] = packet
    kept: list[Handoff] = []
    for packet in packets:
        if packet.id not in gone:
            kept.append(packet)
        elif latest.get(packet.id) is packet and not _stand_in(packet.id, gone):
            kept.append(packet.model_copy(update={"attempt": 1}))
    reports: list[Report] = values.get("reports") or []
    recoveries: list[RecoveryRecord] = values.get("recoveries") or []
    forgotten = {k: v for k, v in values.items() if k not in ("stop_reason", "answer")}
    return {
        **forgotten,
        "packets": kept,
        "reports": [r for r in reports if r.packet_id not in gone],
        "recoveries": [r for r in recoveries if r.packet_id not in gone],
    }


def _stand_in(packet_id: str, among: set[str]) -> bool:
    """Whether a packet was added by recovery for another one in `among`."""
    return any(
        packet_id.startswith(f"{other}-via-") or packet_id == f"{other}-escalated"
        for other in among
    )


def fork_thread_id(source: str) -> str:
    """A new thread id that names where it came from."""
    thread = f"{source[:100]}-fork-{uuid.uuid4().hex[:6]}"
    return thread if THREAD_ID.match(thread) else f"fork-{uuid.uuid4().hex[:12]}"


async def seed_fork(
    graph: Any, saver: BaseCheckpointSaver[Any], plan: ForkPlan, thread_id: str
) -> StateSnapshot:
    """Write the plan's state to the new thread with `aupdate_state`, and check it would run
    what the plan says; returns the new thread's snapshot. If the graph routes the copied
    state elsewhere than the source went (only possible with no rerun and no edit, if the
    graph changed), the new thread is deleted again and the fork refused."""
    config: RunnableConfig = {
        "configurable": {"thread_id": thread_id},
        "metadata": {FORKED_FROM: plan.source, FORKED_AT: plan.checkpoint_id},
    }
    if plan.as_node is None:
        await graph.aupdate_state(
            config, {"request": plan.values.get("request", "")}, as_node="__input__"
        )
    else:
        await graph.aupdate_state(config, plan.values, as_node=plan.as_node)
    snapshot: StateSnapshot = await graph.aget_state(thread_config(thread_id))
    unchanged = not plan.reruns and not plan.edited and plan.as_node is not None
    if not snapshot.next or (unchanged and Counter(snapshot.next) != Counter(plan.expect)):
        await saver.adelete_thread(thread_id)
        raise MusterError(
            f"the fork of checkpoint {plan.checkpoint_id} would run "
            f"{', '.join(snapshot.next) or 'nothing'} next, not {', '.join(plan.expect)}; "
            "nothing was kept"
        )
    return snapshot
