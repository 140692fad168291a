"""The graph state, and the helpers that read it. Reducers are declared in the type, so
parallel writes never collide.

`reports` is `operator.add` over lists: every parallel `dispatch` appends its report, and every
report from every wave, retry and fallback stays visible. Because the list grows across runs on
one thread, a new job always gets a new thread id (principle 7); a customer's follow-up
message on the thread starts a new turn, which resets them (`FOLLOW_UP_RESETS`).

The lists that grow during a run (`reports`, `recoveries`, `actions`) and the plan (`packets`)
live in LangGraph's own incremental channel, `DeltaChannel` (beta in langgraph 1.2): a
checkpoint stores only what a step wrote, and the value is rebuilt from the saved writes when a
thread is loaded, so a checkpoint grows with what changed, not with everything so far (a
200-packet fan-out stored its reports four times over, about 10 KB a packet). The reducers are
the same reductions as before, folded over a step's writes: `operator.add` for the lists, the
last write for `packets` (written whole by `plan` and `recover`, never twice in one step).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from datetime import datetime
from functools import reduce
from typing import Annotated, Any, NotRequired, TypedDict

from langgraph.channels.delta import DeltaChannel

from graph.received import parse_received_at
from workers.contracts import ActionRecord, Answer, Finding, Handoff, RecoveryRecord, Report


def concat(state: list[Any], writes: Sequence[list[Any]]) -> list[Any]:
    """`operator.add` folded over one step's writes, in the order LangGraph applies them: the
    `DeltaChannel` form of `Annotated[list, operator.add]`. A fold is batching-invariant
    (`concat(concat(s, xs), ys) == concat(s, xs + ys)`), as `DeltaChannel` requires of a reducer
    it replays from saved writes, and a write that is not a list fails as `operator.add` does."""
    return reduce(operator.add, writes, state)


def last_write(state: list[Any], writes: Sequence[list[Any]]) -> list[Any]:
    """The last write wins (batching-invariant too): `packets` is written whole."""
    return writes[-1]


def add_counts(counts: dict[str, int] | None, more: dict[str, int] | None) -> dict[str, int]:
    """Counters added key by key: the reducer of `handoffs`. Each `recover` step writes only
    its own increments, so parallel or repeated writes add up and never overwrite."""
    total = dict(counts or {})
    for key, n in (more or {}).items():
        total[key] = total.get(key, 0) + int(n)
    return total


class Contact(TypedDict, total=False):
    """One customer message on a thread, and how its turn ended (`graph.plan`)."""

    turn: int
    """The turn it started."""
    text: str
    """The message, verbatim ("" for a thread's first message when an older checkpoint
    kept no copy of it)."""
    subjects: list[str]
    """The subject ids (support: order ids) its turn was about: read in it, or carried over
    from the earlier messages when it named none."""
    intents: list[str]
    """The intents the pack read in it."""
    status: str
    """Its turn's answer status (`complete`, `partial`, `failed`); absent while it runs."""
    summary: str
    """Its turn's answer in brief (the summary's claims, or the resolution's steps)."""


class InputState(TypedDict):
    """What a caller passes in: the request and, when the caller knows it, when it arrived."""

    request: str
    """The ticket or incident text, verbatim."""
    received_at: NotRequired[str]
    """When the request reached Muster (ISO 8601 with its offset; `muster run --received-at`,
    a batch or eval line's `received_at`): a pack whose request names no time of its own
    (a page stating no time or no date) reads it, and says so in the answer."""


def received_time(state: InputState | dict[str, Any]) -> datetime | None:
    """When the request arrived, if its caller said (entry points validate the form)."""
    text = state.get("received_at")
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        return parse_received_at(text)
    except ValueError:
        return None


class MusterState(InputState, total=False):
    """Everything the supervisor knows about one job."""

    packets: Annotated[list[Handoff], DeltaChannel(last_write)]
    """The validated plan: one packet per sub-task."""
    intents: list[str]
    """Every intent the ticket expresses (the domain pack's reading); each needs a resolution."""
    language: str
    """The language the ticket is written in (`English` unless the rules read another)."""
    order_ids: list[str]
    """The request's subject ids: what it is about, as its pack reads them and as the packets
    name them in the pack's `SUBJECT_INPUT` (support: the order ids the ticket names, as the
    orders server keys them). The name is support's, kept so checkpoints stay readable."""
    unknown_orders: list[str]
    """Subject ids the pack's fact lookup found do not exist (support: order ids the orders
    system does not know)."""
    unaccounted: list[str]
    """Parts of the request the pack's reader could not attribute to an intent, a subject or
    known filler (and a disagreement between the LLM planner and the reader): the answer
    names them and cannot be `complete` (`graph.abstain`)."""
    confidence: float
    """How sure the pack's reader is of its reading, 0 to 1 (`TicketReading.confidence`)."""
    plan_fallback: str
    """Why the configured planner's plan was refused and the pack's rules planned instead
    (absent when the configured planner's plan ran)."""
    plan_notes: list[str]
    """What plan validation corrected (dropped duplicates, narrowed allowlists, capped budgets)."""
    reports: Annotated[list[Report], DeltaChannel(concat)]
    """Every report, in completion order; retries and fallbacks add, never overwrite."""
    recoveries: Annotated[list[RecoveryRecord], DeltaChannel(concat)]
    """Every recovery step taken and what came of it."""
    handoffs: Annotated[dict[str, int], add_counts]
    """Recovery steps taken per planned packet (`root_packet`): the handoff budget's count
    (`graph.recover`), checkpointed with each `recover` step, so a resumed or re-queued
    thread keeps what it has spent and a failing packet cannot be handed on forever."""
    actions: Annotated[list[ActionRecord], DeltaChannel(concat)]
    """Every approval decision and execution of a proposed action."""
    supervisor_calls: Annotated[list[dict[str, Any]], operator.add]
    """The LLM planner's and the answer writer's model calls, priced (graph/supervisor_spend.py);
    `run_totals` adds their cost to the workers'."""
    effects: Annotated[list[Finding], DeltaChannel(concat)]
    """What an action that ran changed, read again by `act` right after it (a pack's
    `AFTER_EXECUTE`: support's refund status): the answer reads these over the reports'
    older observations, so it never says what the action made untrue. Cited `act/<id>`."""
    conflicts: list[str]
    """Facts two reports disagreed on, and how synthesis ruled."""
    unverified: list[str]
    """Claims `verify` could not tie to an observation, one line each."""
    stop_reason: str
    domain: str
    versions: dict[str, Any]
    """The code, pack and state-schema versions the thread started on (`graph.versions`)."""
    """The domain pack the thread runs under (its ref: a bundled name or a folder), written
    by `plan`: the answer and the approvals use this pack, never one guessed from intents."""
    """Which run limit stopped new work, written by `collect`; absent while within limits."""
    deadline_at: float
    """The run's wall-clock deadline (epoch seconds), stored by `plan` from `--deadline` so a
    resume keeps it (`graph.limits.deadline_for`); absent when the run has none."""
    answer: Answer
    """The final answer, written by `synthesize`."""
    turn: int
    """Which turn of the conversation this is: 1 for the ticket, 2 for the customer's first
    follow-up message, and so on (`turn_of`: a thread with no `turn`, an older checkpoint,
    is on turn 1). Written by `plan` when a follow-up starts a turn."""
    contacts: list[Contact]
    """The customer's messages on this thread, oldest first, one `Contact` each (the current
    turn's last), written whole by `plan` at the start of each turn (one writer, so the
    last write is the value; an older checkpoint has none and is read as one contact)."""


FOLLOW_UP_RESETS = ("reports", "recoveries", "effects", "handoffs")
"""The channels that accumulate within a turn, reset (LangGraph's `Overwrite`) by `plan` when
a follow-up message starts a new turn, so a turn's answer is built from its own reports
only. `actions` is not reset: decisions and executions are the thread's, across turns, so
an action executed in an earlier turn is never asked about or run again (its digest is
decided, its idempotency key the same)."""


def turn_of(state: Any) -> int:
    """The thread's current turn: 1 when the state has no `turn` (an older checkpoint)."""
    return int(state.get("turn") or 1)


def unresolved_in_a_row(contacts: Sequence[Contact]) -> int:
    """How many of the customer's answered messages, counting back from the latest, ended
    without a complete answer, one after the other (the unresolved contacts POL-ESC-001
    counts); a message still without an answer is not counted."""
    count = 0
    for contact in reversed(list(contacts)):
        status = contact.get("status")
        if status is None or status == "complete":
            break
        count += 1
    return count


ESCALATION_WORKER = "escalation"
"""The worker that writes hand-off summaries for humans."""


def root_packet(packet_id: str) -> str:
    """The planned packet a recovery packet stands in for: `billing-1` for `billing-1`,
    `billing-1-via-comms`, `billing-1-via-comms-escalated` (retries and clarifications keep
    their packet's id)."""
    return packet_id.split("-via-", 1)[0].removesuffix("-escalated")


def current_reports(reports: Sequence[Report]) -> dict[str, Report]:
    """The latest report per packet id: a retry or fallback supersedes what it replaced."""
    latest: dict[str, Report] = {}
    for report in reports:
        latest[report.packet_id] = report
    return latest


def unrecovered_failures(state: MusterState) -> list[Report]:
    """Current failed reports that no recovery step has handled yet."""
    handled = {(r.packet_id, r.attempt) for r in state.get("recoveries") or []}
    return [
        report
        for report in current_reports(state.get("reports") or []).values()
        if report.status == "failed" and (report.packet_id, report.attempt) not in handled
    ]


def pending_packets(state: MusterState) -> list[Handoff]:
    """Packets (or retries) not yet reported on."""
    done = {(r.packet_id, r.attempt) for r in state.get("reports") or []}
    return [p for p in state.get("packets") or [] if (p.id, p.attempt) not in done]


def satisfying_report(dependency: str, current: dict[str, Report]) -> Report | None:
    """The ok report that satisfies a dependency: the packet's own, or that of the worker it
    was reassigned to (`<id>-via-<worker>`)."""
    own = current.get(dependency)
    if own is not None and own.status == "ok":
        return own
    for packet_id, report in current.items():
        if packet_id.startswith(f"{dependency}-via-") and report.status == "ok":
            return report
    return None


def ready_packets(state: MusterState) -> list[Handoff]:
    """Pending packets whose prerequisites all have a usable (ok) report."""
    current = current_reports(state.get("reports") or [])
    return [
        packet
        for packet in pending_packets(state)
        if all(satisfying_report(d, current) is not None for d in packet.depends_on)
    ]


def latest_actions(state: MusterState) -> dict[str, ActionRecord]:
    """The current record per action digest."""
    latest: dict[str, ActionRecord] = {}
    for record in state.get("actions") or []:
        latest[record.digest] = record
    return latest
