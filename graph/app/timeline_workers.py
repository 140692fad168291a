"""The dispatch lanes of a timeline, and the recovery links between them.

A dispatch is one lane: the trace's `worker_step` events of one packet in one superstep of
one run (every model turn and tool call, with its outcome and duration, stamped when it
ended), closed by that dispatch's `node` event (the report's status and reason). A retried
packet therefore gets a second lane, and a lane whose run stopped before it reported (a
crash, a drain) is shown cut off rather than merged into the run that redid it; in the
thread's newest run, while it is in progress, an open lane is running. Finished lanes are
paired with the packet's reports in the checkpoints (their notes, findings and attempts).

`recover` events (and the checkpointed recovery records, for their words) link the failed
lane to what replaced it: the packet's next dispatch (retry, clarify), the stand-in's
(`<id>-via-<worker>` for reassign, `<id>-escalated`), or a lane of its own for a cached
fallback. Packets no lane shows are listed too: not dispatched yet, or, in a fork, carried
over from the source thread with their reports.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from typing import Any

from checkpoints.threads import ThreadStatus
from graph.app.timeline import (
    Event,
    Lane,
    LaneStatus,
    Link,
    Mark,
    Span,
    event_end,
    event_start,
    event_step,
)
from workers.contracts import Handoff, RecoveryRecord, Report


class WorkerLanes:
    """Reads the events once and fills `lanes` and `links`; call `worker_lanes`, then
    `recoveries`, then `pending_packets`."""

    def __init__(
        self, events: Sequence[Event], values: Mapping[str, Any], status: ThreadStatus
    ) -> None:
        self.events = events
        self.values = values
        self.status = status
        self.runs: list[str] = list(dict.fromkeys(str(e.get("run_id")) for e in events))
        """The runs that wrote the trace, oldest first."""
        self.newest = event_end(events[-1]) if events else 0.0
        """The newest event's time: where a running lane ends for now."""
        self.forked_from = next(
            (str(e.get("source_thread")) for e in events if e.get("event") == "forked"), ""
        )
        """The thread this one was forked from (its trace says so), if any."""
        self.lanes: list[Lane] = []
        self.links: list[Link] = []
        self._dispatches: dict[str, list[Lane]] = defaultdict(list)
        """Packet id → its dispatch lanes, in start order."""

    def worker_lanes(self) -> None:
        """One lane per (run, packet, superstep): a dispatch, with its model turns and tool
        calls, ended by its `dispatch` node event."""
        steps: dict[tuple[str, str, int], list[Event]] = defaultdict(list)
        ends: dict[tuple[str, str, int], Event] = {}
        for event in self.events:
            kind, node = event.get("event"), event.get("node")
            if kind == "worker_step" or (kind == "node" and node == "dispatch"):
                key = (str(event.get("run_id")), str(event.get("packet_id")), event_step(event))
                if kind == "worker_step":
                    steps[key].append(event)
                else:
                    ends[key] = event
        keys = sorted(set(steps) | set(ends), key=lambda k: _first_time(steps[k], ends.get(k)))
        reports = self._reports_by_packet()
        for number, key in enumerate(keys, start=1):
            lane = self._dispatch_lane(f"lane-{number}", key, steps[key], ends.get(key))
            self._dispatches[lane.packet_id].append(lane)
            self.lanes.append(lane)
        for packet_id, lanes in self._dispatches.items():
            # Finished lanes pair with the packet's reports from the newest back: a forked
            # thread's trace starts mid-way, and its first lane may be attempt 2.
            finished = [lane for lane in lanes if lane.status in ("ok", "failed")]
            for lane, report in zip(
                reversed(finished), reversed(reports.get(packet_id, [])), strict=False
            ):
                lane.attempt = report.attempt
                lane.summary = _report_summary(report)
            if len(lanes) > 1 or any(lane.attempt > 1 for lane in lanes):
                for lane in lanes:
                    lane.title += f" · attempt {lane.attempt}" if lane.attempt else " · cut off"

    def _reports_by_packet(self) -> dict[str, list[Report]]:
        """The live (not fallback) reports of each packet, in attempt order."""
        grouped: dict[str, list[Report]] = defaultdict(list)
        for report in self.values.get("reports") or []:
            if not report.fallback:
                grouped[report.packet_id].append(report)
        return {k: sorted(v, key=lambda r: r.attempt) for k, v in grouped.items()}

    def _dispatch_lane(
        self, key: str, ident: tuple[str, str, int], steps: list[Event], end: Event | None
    ) -> Lane:
        run_id, packet_id, _ = ident
        worker = str((end or steps[0]).get("worker") or "")
        spans = [_step_span(event) for event in steps]
        if end is not None:
            failed = end.get("outcome") != "ok"
            status: LaneStatus = "failed" if failed else "ok"
            reason = str(end.get("reason") or "") if failed else ""
            stop = event_end(end)
            summary = f"failed ({reason})" if failed else "ok"
        elif run_id == self.runs[-1] and self.status == "in progress":
            failed, status, reason, stop = False, "running", "", self.newest
            summary = "running: no report yet"
        else:
            failed, status, reason = True, "cut", ""
            stop = max((s.end for s in spans), default=0.0)
            summary = "cut off: its run stopped before it reported (a later run redid it)"
        begin = min([s.start for s in spans] + ([event_start(end)] if end is not None else []))
        envelope = Span(
            start=begin,
            end=max(stop, begin),
            kind="dispatch",
            label=f"{worker} {summary.split(':')[0]}",
            failed=failed,
            detail=f"{packet_id} ({worker}): {summary}",
        )
        return Lane(
            key=key,
            title=f"{packet_id} · {worker}",
            status=status,
            summary=summary,
            packet_id=packet_id,
            worker=worker,
            reason=reason,
            spans=[envelope, *spans],
        )

    # --- recoveries -----------------------------------------------------------------------

    def recoveries(self) -> None:
        """A link from each failed lane to what replaced it: the packet's next dispatch
        (retry, clarify), the stand-in's (reassign, escalate), or a fallback lane."""
        records: dict[tuple[str, str], deque[RecoveryRecord]] = defaultdict(deque)
        for record in self.values.get("recoveries") or []:
            records[(record.packet_id, record.strategy)].append(record)
        for event in self.events:
            if event.get("event") != "node" or event.get("node") != "recover":
                continue
            packet_id, strategy = str(event.get("packet_id")), str(event.get("outcome"))
            queue = records.get((packet_id, strategy))
            record = queue.popleft() if queue else None
            at = event_end(event)
            source = self._failed_before(packet_id, at)
            if source is None:
                continue
            target = self._replacement(packet_id, strategy, at, record)
            self.links.append(
                Link(
                    source=source.key,
                    target=target.key if target is not None else None,
                    strategy=strategy,
                    reason=str(event.get("reason") or ""),
                    detail=record.detail if record is not None else strategy,
                    at=at,
                )
            )

    def _failed_before(self, packet_id: str, at: float) -> Lane | None:
        earlier = [
            lane
            for lane in self._dispatches.get(packet_id, [])
            if lane.status == "failed" and (lane.end or 0.0) <= at
        ]
        return earlier[-1] if earlier else None

    def _replacement(
        self, packet_id: str, strategy: str, at: float, record: RecoveryRecord | None
    ) -> Lane | None:
        if strategy == "fallback":
            return self._fallback_lane(packet_id, at, record)
        if strategy in ("retry", "clarify"):
            candidates = [packet_id]
        elif strategy == "escalate":
            candidates = [f"{packet_id}-escalated"]
        else:  # reassign: `<id>-via-<worker>`
            candidates = [p for p in self._dispatches if p.startswith(f"{packet_id}-via-")]
        later = [
            lane
            for candidate in candidates
            for lane in self._dispatches.get(candidate, [])
            if (lane.start or 0.0) >= at
        ]
        return min(later, key=lambda lane: lane.start or 0.0) if later else None

    def _fallback_lane(self, packet_id: str, at: float, record: RecoveryRecord | None) -> Lane:
        """The cached substitute recovery put in, drawn as a lane of its own."""
        worker = record.worker if record is not None else ""
        substitute = next(
            (
                r
                for r in self.values.get("reports") or []
                if r.packet_id == packet_id and r.fallback
            ),
            None,
        )
        detail = record.detail if record is not None else "a cached fallback replaced it"
        lane = Lane(
            key=f"lane-{len(self.lanes) + 1}",
            title=f"{packet_id} · {worker} · cached fallback",
            status="fallback",
            summary=f"fallback: {substitute.note if substitute is not None else detail}",
            packet_id=packet_id,
            worker=worker,
            marks=[Mark(at, "fallback", "cached fallback put in", detail)],
        )
        self.lanes.append(lane)
        return lane

    def pending_packets(self) -> None:
        """Packets (or retries) that no lane of the trace shows: not dispatched yet, or run
        before this trace began (a fork carries its source's reports), or, with no trace
        to read at all, known only from the checkpoints."""
        packets: list[Handoff] = self.values.get("packets") or []
        reports: dict[tuple[str, int], Report] = {}
        for report in self.values.get("reports") or []:
            reports[(report.packet_id, report.attempt)] = report  # the latest stands
        if not self.events:
            for (packet_id, attempt), report in reports.items():
                self._state_lane(packet_id, report.worker, attempt, report)
            for packet in packets:
                if (packet.id, packet.attempt) not in reports:
                    self._state_lane(packet.id, packet.recipient, packet.attempt, None)
            return
        for packet in packets:
            lanes = self._dispatches.get(packet.id, [])
            if any(lane.status == "running" or lane.attempt >= packet.attempt for lane in lanes):
                continue
            if any(lane.packet_id == packet.id for lane in self.lanes if not lane.spans):
                continue  # a fallback lane stands for it
            report = reports.get((packet.id, packet.attempt))
            self._state_lane(packet.id, packet.recipient, packet.attempt, report)

    def _state_lane(self, packet_id: str, worker: str, attempt: int, report: Report | None) -> None:
        """A lane without bars, from the checkpoints alone."""
        status: LaneStatus = "pending"
        summary = "not dispatched yet" if self.status == "in progress" else "never dispatched"
        if report is not None:
            status = "fallback" if report.fallback else report.status
            summary = ("fallback: " + report.note) if report.fallback else _report_summary(report)
            if self.forked_from:
                summary = f"carried over from thread {self.forked_from}: {summary}"
            elif self.events:
                summary = f"ran before this trace began: {summary}"
        self.lanes.append(
            Lane(
                key=f"lane-{len(self.lanes) + 1}",
                title=f"{packet_id} · {worker}" + (f" · attempt {attempt}" if attempt > 1 else ""),
                status=status,
                summary=summary,
                packet_id=packet_id,
                worker=worker,
                attempt=attempt,
                reason=str(report.reason or "") if report is not None else "",
            )
        )


def _first_time(steps: list[Event], end: Event | None) -> float:
    times = [event_start(e) for e in steps] + ([event_start(end)] if end is not None else [])
    return min(times) if times else 0.0


def _step_span(event: Event) -> Span:
    """A model turn or a tool call, from its `worker_step` event."""
    outcome = str(event.get("outcome") or "")
    ms = float(event.get("duration_ms") or 0.0)
    if event.get("kind") == "tool":
        tool = str(event.get("tool") or "")
        return Span(
            start=event_start(event),
            end=event_end(event),
            kind="tool",
            label=tool,
            failed=outcome != "ok",
            detail=f"{tool}: {outcome} in {ms:.0f} ms (model turn {event.get('step')})",
        )
    tokens = event.get("tokens")
    return Span(
        start=event_start(event),
        end=event_end(event),
        kind="model",
        label=f"turn {event.get('step')}",
        failed=outcome == "error",
        detail=f"model turn {event.get('step')}: {outcome} in {ms:.0f} ms"
        + (f", {tokens} tokens" if tokens is not None else ""),
    )


def _report_summary(report: Report) -> str:
    """A report in one line: status, reason and the last line of a failure's note."""
    if report.status == "ok":
        return (
            f"ok: {len(report.findings)} findings, {report.steps_used} steps, "
            f"{report.tokens} tokens, {report.duration_ms:.0f} ms"
        )
    note = report.note.strip().splitlines()[-1] if report.note.strip() else ""
    return f"failed ({report.reason})" + (f": {note}" if note else "")
