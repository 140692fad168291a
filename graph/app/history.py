"""`muster history THREAD`: a thread's checkpoints, oldest first, each in one line.

Each line is one LangGraph checkpoint from `aget_state_history`: its id (what `muster fork
--checkpoint` takes), its superstep, the nodes it would run next, when it was written, and
what the step that wrote it did, read by comparing its state with the one before (the
`reports`, `recoveries` and `actions` lists only grow, so what is new is their tail).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from langgraph.types import StateSnapshot

from checkpoints.threads import ThreadStatus
from graph.app.hints import NOTHING, Carried
from graph.app.printable import printable, shorten
from graph.app.render import waiting_for
from workers.contracts import ActionRecord, Answer, Handoff, RecoveryRecord, Report

FORKED_FROM = "forked_from"
"""Checkpoint metadata key: the thread a fork was copied from (`graph.app.fork`)."""
FORKED_AT = "forked_checkpoint"
"""Checkpoint metadata key: the checkpoint a fork was copied from."""


@dataclass(frozen=True)
class CheckpointEntry:
    """One line of `muster history`."""

    checkpoint_id: str
    """LangGraph's checkpoint id; `muster fork --checkpoint` takes it (or a unique prefix)."""
    step: int
    """The superstep (-1 is the input)."""
    source: str
    """How LangGraph wrote it: input, loop (a step ran), update (update_state), fork."""
    created_at: str
    """When it was written (ISO 8601, UTC)."""
    next: tuple[str, ...]
    """The nodes it would run next; empty at the end."""
    summary: str
    """What the step that wrote it did, in one line."""
    waiting: bool
    """Whether the thread waited for a human at this checkpoint."""


def checkpoint_entries(history: Sequence[StateSnapshot]) -> list[CheckpointEntry]:
    """One entry per checkpoint, oldest first (`history` in any order)."""
    ordered = sorted(history, key=lambda s: (_step(s), str(s.created_at or "")))
    # The input checkpoint holds the request as a pending write, not yet as a value.
    request = next((str(s.values["request"]) for s in ordered if s.values.get("request")), "")
    entries = []
    previous: StateSnapshot | None = None
    for state in ordered:
        entries.append(
            CheckpointEntry(
                checkpoint_id=checkpoint_id(state),
                step=_step(state),
                source=str((state.metadata or {}).get("source") or ""),
                created_at=str(state.created_at or ""),
                next=tuple(state.next),
                summary=describe_step(previous, state, request=request),
                waiting=bool(state.interrupts),
            )
        )
        previous = state
    return entries


def checkpoint_id(state: StateSnapshot) -> str:
    """The id of the checkpoint a snapshot was read from."""
    return str(state.config["configurable"]["checkpoint_id"])


def _step(state: StateSnapshot) -> int:
    step = (state.metadata or {}).get("step")
    return step if isinstance(step, int) else -1


def describe_step(before: StateSnapshot | None, after: StateSnapshot, *, request: str = "") -> str:
    """What changed from `before` to `after`, said by the node(s) that ran in between;
    `request` stands in for the ticket at the input checkpoint."""
    metadata: Mapping[str, Any] = after.metadata or {}
    if metadata.get(FORKED_FROM):
        return f"forked from thread {metadata[FORKED_FROM]} at checkpoint {metadata.get(FORKED_AT)}"
    values = after.values
    if before is None or metadata.get("source") == "input":
        return f"input: {shorten(str(values.get('request') or request), 70)}"
    old = before.values
    parts: list[str] = []
    packets: list[Handoff] = values.get("packets") or []
    if packets and not old.get("packets"):
        parts.append(f"{len(packets)} packets ({', '.join(p.id for p in packets)})")
    elif len(packets) > len(old.get("packets") or []):
        added = packets[len(old.get("packets") or []) :]
        parts.append("new packets: " + ", ".join(f"{p.id} (attempt {p.attempt})" for p in added))
    reports: list[Report] = _new(old, values, "reports")
    parts += [
        f"{r.packet_id} {r.status}"
        + (f" ({r.reason})" if r.reason else "")
        + (" [fallback]" if r.fallback else "")
        for r in reports
    ]
    recoveries: list[RecoveryRecord] = _new(old, values, "recoveries")
    parts += [f"{r.strategy} {r.packet_id} (after {r.reason})" for r in recoveries]
    actions: list[ActionRecord] = _new(old, values, "actions")
    parts += [f"{a.tool} {a.status} by {a.decided_by}" for a in actions]
    if values.get("stop_reason") and not old.get("stop_reason"):
        parts.append(f"stop: {values['stop_reason']}")
    if "unverified" in values and "unverified" not in old:
        unverified = len(values.get("unverified") or [])
        conflicts = len(values.get("conflicts") or [])
        parts.append(f"{unverified} unverified claims, {conflicts} conflicts")
    answer: Answer | None = values.get("answer")
    if answer is not None and old.get("answer") is None:
        parts.append(f"answer {answer.status}" + (" (degraded)" if answer.degraded else ""))
    parts += [waiting_for(i.value) for i in after.interrupts]
    writer = ", ".join(_counted(before.next)) or "update"
    if writer == "__start__":
        writer = "start"
    return f"{writer}: {'; '.join(parts)}" if parts else writer


def _new(old: Mapping[str, Any], new: Mapping[str, Any], key: str) -> list[Any]:
    """The items a step appended to a list that only grows."""
    before = old.get(key) or []
    after = new.get(key) or []
    return list(after[len(before) :])


def _counted(names: Sequence[str]) -> list[str]:
    """`dispatch ×3` for a fan-out, names in first-seen order."""
    counts = Counter(names)
    return [f"{name} ×{n}" if n > 1 else name for name, n in counts.items()]


def print_history(
    thread_id: str,
    status: ThreadStatus,
    entries: Sequence[CheckpointEntry],
    *,
    as_json: bool,
    carried: Carried = NOTHING,
) -> None:
    """`muster history`: a header, one line per checkpoint, and how to fork from one."""
    if as_json:
        print(json.dumps([asdict(e) for e in entries], indent=2))
        return
    print(printable(f"thread {thread_id}: {status}, {len(entries)} checkpoints, oldest first"))
    width = max([len("CHECKPOINT"), *(len(e.checkpoint_id) for e in entries)])
    next_width = max([len("NEXT"), *(len(", ".join(_counted(e.next))) for e in entries)])
    print(f"{'STEP':>4}  {'CHECKPOINT':<{width}}  {'TIME':<19}  {'NEXT':<{next_width}}  SUMMARY")
    for entry in entries:
        following = ", ".join(_counted(entry.next)) or "(end)"
        mark = " [waits for a human]" if entry.waiting else ""
        line = (
            f"{entry.step:>4}  {entry.checkpoint_id:<{width}}  "
            f"{entry.created_at[:19].replace('T', ' '):<19}  {following:<{next_width}}  "
            f"{entry.summary}{mark}"
        )
        print(printable(line))
    fork = carried.command("fork", thread_id, "--checkpoint", "ID")
    print(printable(f"\nstart a new thread from one: {fork} [--rerun PACKET] [--edit KEY=VALUE]"))
