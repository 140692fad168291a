"""A thread as a timeline: what the picture shows, as data.

`muster show THREAD --html` draws a `Timeline`: the supervisor's lane (plan, each barrier,
recovery, verify, approval, act, synthesis) above one `Lane` per worker dispatch, each with
its bars (`Span`: a model turn, a tool call, a node, the dispatch itself) and instants
(`Mark`: an approval asked or decided, a fallback, a stop, the answer), `Link`s from a
failed dispatch to what recovery put in its place, and the `Wait`s: the stretches when the
thread was paused for a human (a clarification, an approval), which are no one's work.

The modules, one concept each: this one (the data), `timeline_workers` (the dispatch lanes
and the recovery links), `timeline_supervisor` (the supervisor's lane), `timeline_waits`
(the human waits, from the checkpoints' interrupts), `timeline_build` (a thread's trace and
checkpoints into a `Timeline`), `timeline_axis` (time to x), `timeline_labels` (where a
label may go), `timeline_svg` (the picture) and `timeline_html` (the self-contained page
around it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from checkpoints.threads import ThreadStatus

Event = Mapping[str, Any]
"""One trace line (graph/trace.py): JSON, so its shape is known by convention only."""

LaneStatus = Literal["ok", "failed", "running", "cut", "fallback", "pending", "supervisor"]
"""How a lane ended: its report's status, still running, cut off by the end of its run, a
cached fallback recovery put in, not dispatched yet, or the supervisor's own lane."""


def event_end(event: Event) -> float:
    """When the work an event reports ended: its timestamp (epoch seconds)."""
    return float(event.get("ts") or 0.0)


def event_start(event: Event) -> float:
    """When the work an event reports began: its end less its duration."""
    return event_end(event) - float(event.get("duration_ms") or 0.0) / 1000


def event_step(event: Event) -> int:
    """The superstep an event belongs to (-1 if it has none)."""
    step = event.get("superstep")
    return step if isinstance(step, int) else -1


@dataclass(frozen=True)
class Span:
    """One bar: a model turn, a tool call, a supervisor node or a whole dispatch."""

    start: float
    """Epoch seconds."""
    end: float
    """Epoch seconds (equal to `start` for an instant)."""
    kind: Literal["model", "tool", "node", "dispatch"]
    """What the bar is; the drawing colours by it."""
    label: str
    """Short text for the bar."""
    failed: bool = False
    """A failed tool call, model call or dispatch: drawn in red."""
    detail: str = ""
    """The longer text shown on hover or click."""

    @property
    def duration_ms(self) -> float:
        """The bar's length in milliseconds."""
        return max(0.0, (self.end - self.start) * 1000)


@dataclass(frozen=True)
class Mark:
    """One instant: an approval asked or decided, a fallback put in, a stop, the answer."""

    at: float
    """Epoch seconds."""
    kind: Literal["approval", "decision", "fallback", "stop", "answer", "waiting", "run", "fork"]
    """What happened; the drawing shapes and colours by it."""
    label: str
    """Short text beside the mark."""
    detail: str = ""
    """The longer text shown on hover or click."""
    failed: bool = False
    """A refusal, a rejection, a stop: drawn in red."""


@dataclass
class Lane:
    """One row of the picture: the supervisor, or one dispatch of one packet."""

    key: str
    """Unique within the timeline; recovery links name lanes by it."""
    title: str
    """e.g. `policy-2 · policy · attempt 2`."""
    status: LaneStatus
    """How it ended (see `LaneStatus`)."""
    summary: str = ""
    """One line: the report's status, reason and note, or what replaced it."""
    packet_id: str = ""
    """The packet it ran (empty for the supervisor)."""
    worker: str = ""
    """The worker that ran it."""
    attempt: int = 0
    """Which dispatch of the packet this is (0: not known, e.g. cut off)."""
    reason: str = ""
    """The failure reason for a failed lane (`budget`, `tool_error`...)."""
    spans: list[Span] = field(default_factory=list)
    """Its bars, in time order."""
    marks: list[Mark] = field(default_factory=list)
    """Its instants, in time order."""

    @property
    def start(self) -> float | None:
        """When its first bar or mark starts, if it has any."""
        times = [s.start for s in self.spans] + [m.at for m in self.marks]
        return min(times) if times else None

    @property
    def end(self) -> float | None:
        """When its last bar or mark ends, if it has any."""
        times = [s.end for s in self.spans] + [m.at for m in self.marks]
        return max(times) if times else None


@dataclass(frozen=True)
class Link:
    """A recovery: the failed lane, and the lane of what replaced it."""

    source: str
    """The failed lane's key."""
    target: str | None
    """The replacement's lane key; None while the replacement has not started."""
    strategy: str
    """retry, reassign, fallback, escalate or clarify."""
    reason: str
    """The failure reason recovery acted on."""
    detail: str
    """The recovery record's words, e.g. `retried policy once with double the budget`."""
    at: float
    """When recovery decided it."""


@dataclass(frozen=True)
class Wait:
    """A stretch when the thread was paused for a human: from when it stopped (its last
    event before the interrupt) to when the human answered or decided."""

    start: float
    """Epoch seconds."""
    end: float
    """Epoch seconds."""
    kind: str
    """What was asked: `clarification` or `approval` (the interrupt's kind)."""
    detail: str
    """What the thread waited for, in words (`render.waiting_for`)."""

    @property
    def seconds(self) -> float:
        """How long the human took."""
        return max(0.0, self.end - self.start)


@dataclass
class Timeline:
    """Everything the picture shows about one thread."""

    thread_id: str
    """The thread."""
    request: str
    """The ticket text."""
    status: ThreadStatus
    """done, interrupted, failed, in progress or new (`checkpoints.threads.status_of`)."""
    outcome: str
    """One line: the answer's status, or what the thread waits for, or that it still runs."""
    answer_status: str | None
    """complete, partial or failed; None before `synthesize`."""
    degraded: bool
    """Whether the answer says it is degraded."""
    reasons: list[str]
    """Why it is degraded, as the answer says."""
    supervisor: Lane
    """plan, each barrier, recovery, verify, approval, act, synthesis."""
    workers: list[Lane]
    """One lane per dispatch (and per cached fallback), in start order."""
    links: list[Link]
    """Recoveries, from the failed lane to what replaced it."""
    notes: list[str] = field(default_factory=list)
    """What the picture could not show, e.g. a missing trace file."""
    runs: int = 0
    """How many runs (a start, a resume, an approval) wrote the trace."""
    waits: list[Wait] = field(default_factory=list)
    """When the thread was paused for a human, in time order: drawn as breaks, not bars."""

    @property
    def lanes(self) -> list[Lane]:
        """The supervisor lane, then the worker lanes."""
        return [self.supervisor, *self.workers]
