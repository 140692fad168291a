"""The supervisor's lane of a timeline: plan, barriers, recovery, verify, approval, act,
synthesis, from their trace events.

A node that times itself (`act`) starts `duration_ms` before its event; the others started
when the previous superstep's checkpoint was written (the checkpoint times come from the
thread's history), unless that was in another run or long ago, or a human's wait lies
between (`timeline_waits`): then the gap was a wait (a human, a crash), not work, and the
node starts where the wait ended (an instant, if its run wrote nothing before it). An
approval is a mark when it was asked (with the action and amount from the pending
interrupt) and when it was decided (who, and when, from the checkpointed action record); a
run that starts, a drain, a fork and a stop at the barrier are marks too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from graph.app.render import waiting_for
from graph.app.timeline import Event, Lane, Mark, Span, Wait, event_end, event_start, event_step
from workers.contracts import ActionRecord

NODE_GUESS_LIMIT_S = 120.0
"""The longest a supervisor node is drawn as running from the previous checkpoint: beyond
this the gap is a wait (a human, a crash), not work, and the node is drawn where it ended."""


class SupervisorLane:
    """Builds the supervisor's `lane` from the events (`build`)."""

    def __init__(
        self,
        events: Sequence[Event],
        values: Mapping[str, Any],
        checkpoint_at: Mapping[int, float],
        asks: Mapping[str, Any],
        waits: Sequence[Wait] = (),
    ) -> None:
        self.events = events
        self.values = values
        self.checkpoint_at = checkpoint_at
        """Superstep → when its checkpoint was written."""
        self.asks = asks
        """Pending approvals by digest (the interrupts' values): the action and amount."""
        self.waits = waits
        """When the thread was paused for a human: no node's guessed start crosses one."""
        self.supervisor = Lane(key="supervisor", title="supervisor", status="supervisor")
        self.asked: set[str] = set()
        """Digests whose approval was asked: each is marked once."""

    def build(self) -> Lane:
        """plan, barriers, recovery, verify, approval, act and synthesis, from their trace
        events; run starts and signal drains as marks."""
        seen_runs: set[str] = set()
        actions = {a.digest: a for a in self.values.get("actions") or []}
        for event in self.events:
            run_id = str(event.get("run_id"))
            if run_id not in seen_runs:
                seen_runs.add(run_id)
                # A run that starts with a decision or a fork says why by itself.
                if len(seen_runs) > 1 and event.get("node") != "approve":
                    why = f"run {len(seen_runs)} starts (a resume, or an answer to a question)"
                    self._mark(event, "run", f"run {len(seen_runs)} starts", why)
            kind, node = event.get("event"), str(event.get("node") or "")
            if kind == "drained":
                why = f"stopped cleanly ({event.get('reason')}); `muster resume` continues"
                self._mark(event, "stop", why, why, failed=True)
            elif kind == "forked":
                text = (
                    f"forked from thread {event.get('source_thread')} at checkpoint "
                    f"{event.get('checkpoint_id')} (step {event.get('step')})"
                )
                self._mark(event, "fork", "forked", text)
            elif kind == "node" and node == "approve":
                self._approval(event, actions)
            elif kind == "node" and node != "dispatch":
                self.supervisor.spans.append(self._node_span(event, node))
                if node == "collect" and event.get("outcome") == "stop":
                    why = f"stop: {event.get('reason')}; no new work starts"
                    self._mark(event, "stop", "stop", why, failed=True)
        return self.supervisor

    def _node_span(self, event: Event, node: str) -> Span:
        outcome = str(event.get("outcome") or "")
        label, detail = node, f"{node}: {outcome}"
        if node == "plan":
            packets = list(event.get("packets") or [])
            label = f"plan · {len(packets)} packets"
            detail = f"plan: {', '.join(packets)}; intents: {', '.join(event.get('intents') or [])}"
            if event.get("notes"):
                detail += "; " + "; ".join(str(n) for n in event["notes"])
        elif node == "collect":
            label = "barrier"
            detail = f"collect (barrier): {event.get('reports')} reports so far, {outcome}"
        elif node == "recover":
            label = f"recover: {outcome}"
            detail = (
                f"recover: {outcome} for {event.get('packet_id')} "
                f"({event.get('worker')} failed: {event.get('reason')})"
            )
        elif node == "verify":
            detail = (
                f"verify: {event.get('unverified')} unverified claims, "
                f"{event.get('conflicts')} conflicts"
            )
        elif node == "act":
            label = f"act: {outcome}"
            detail = f"act: {event.get('tool')} {outcome}"
        elif node == "synthesize":
            label = f"answer {outcome}"
            detail = f"synthesize: answer {outcome}" + (
                " (degraded)" if event.get("degraded") else ""
            )
        failed = outcome in ("failed", "refused", "stop") or (
            node == "synthesize" and outcome != "complete"
        )
        return Span(
            start=self._node_start(event),
            end=event_end(event),
            kind="node",
            label=label,
            failed=failed,
            detail=detail,
        )

    def _node_start(self, event: Event) -> float:
        """A node that times itself starts `duration_ms` before its event. Otherwise it
        started when the previous superstep's checkpoint was written, if that was in this
        run and not long ago (else the gap is a wait, and the node is an instant); a human's
        wait in between means it started when the human answered."""
        ts = event_end(event)
        if event.get("duration_ms") is not None:
            return event_start(event)
        begin = self.checkpoint_at.get(event_step(event) - 1)
        if begin is None or not 0 <= ts - begin <= NODE_GUESS_LIMIT_S:
            return ts
        answered = [w.end for w in self.waits if begin < w.end <= ts]
        if answered:
            return max(answered)
        run_id = event.get("run_id")
        if any(begin < event_end(e) < ts and e.get("run_id") != run_id for e in self.events):
            return ts  # another run wrote in between: this one started later
        return begin

    def _approval(self, event: Event, actions: Mapping[str, ActionRecord]) -> None:
        """An approval asked (`waiting`), decided (who and when, from the action record),
        held for another thread, or refused."""
        outcome, tool = str(event.get("outcome") or ""), str(event.get("tool") or "")
        digest = str(event.get("digest") or "")
        record = actions.get(digest)
        if outcome == "waiting":
            if digest and digest in self.asked:
                return  # asked again (after a refusal, or a resume): one approval, one mark
            self.asked.add(digest)
            ask = self.asks.get(digest)
            text = waiting_for(ask) if ask else f"approval asked: {tool}{_action_words(record)}"
            self._mark(event, "approval", "approval asked", text)
            return
        if outcome in ("approved", "rejected") and record is not None:
            when = datetime.fromtimestamp(record.decided_at).astimezone()
            role = f" ({event.get('role')})" if event.get("role") else ""
            label = f"{outcome} by {record.decided_by} at {when:%H:%M:%S}"
            detail = (
                f"{tool}{_action_words(record)}: {outcome} by {record.decided_by}{role} "
                f"at {when:%Y-%m-%d %H:%M:%S %Z}"
                + (f"; note: {record.note}" if record.note else "")
            )
            self.supervisor.marks.append(
                Mark(record.decided_at, "decision", label, detail, failed=outcome == "rejected")
            )
            return
        why = {
            "held": "held: the same action waits for a human in another thread",
            "refused": "refused: the resume value was not a decision that holds",
            "already_done": "not put to a human: it was already done (another thread ran it)",
        }.get(outcome, outcome)
        self._mark(event, "decision", f"approval {outcome}", f"{tool}: {why}", failed=True)

    def _mark(
        self, event: Event, kind: Any, label: str, detail: str, *, failed: bool = False
    ) -> None:
        self.supervisor.marks.append(Mark(event_end(event), kind, label, detail or label, failed))


def _action_words(record: ActionRecord | None) -> str:
    """`(order_id=12345, amount_cents=12900)`, when the action record is known."""
    if record is None:
        return ""
    return "(" + ", ".join(f"{k}={v}" for k, v in record.args.items()) + ")"
