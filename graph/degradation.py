"""What degrades an answer, whatever its domain: the run's account (`assess`) and its status."""

from __future__ import annotations

from dataclasses import dataclass

from graph.answer_render import args_text
from graph.state import MusterState, current_reports, latest_actions, pending_packets
from workers.contracts import ActionRecord, AnswerStatus, Handoff, Report


def _missing_tools(report: Report) -> str | None:
    """Tools of an ok report whose every call failed at the backend, if any."""
    backend_failures = ("tool_error", "timeout", "unavailable")
    failed = {c.tool for c in report.tool_calls if c.outcome in backend_failures}
    missing = sorted(failed - {f.tool for f in report.findings})
    if not missing:
        return None
    return f"{report.worker}: {', '.join(missing)} failed, so what it would have told us is missing"


@dataclass
class Degradation:
    """What went wrong in a run, whatever its domain: the reasons an answer is degraded and
    the facts its status rests on."""

    reports: dict[str, Report]
    """The current report of every packet."""
    reasons: list[str]
    """One line per thing that degrades the answer."""
    live_ok: list[Report]
    """Reports from live, successful work."""
    fallbacks: list[Report]
    """Reports recovery substituted from a cache."""
    failed: list[Report]
    """Current failed reports."""
    not_run: list[Handoff]
    """Packets that never ran."""
    gaps: list[str]
    """Tools an ok report lost."""
    cut_short: bool
    """A run limit stopped work that mattered."""
    actions: list[ActionRecord]
    """The latest record of every decided action."""

    @property
    def usable(self) -> list[Report]:
        """Every ok report (live or fallback)."""
        return [r for r in self.reports.values() if r.status == "ok"]

    def status(self, *, open_points: bool) -> AnswerStatus:
        """failed when nothing usable came back; partial when anything is missing or open."""
        if self.reports and not self.live_ok and not self.fallbacks:
            return "failed"
        if (
            self.failed
            or self.fallbacks
            or self.cut_short
            or self.not_run
            or self.gaps
            or open_points
        ):
            return "partial"
        return "complete"


def assess(state: MusterState) -> Degradation:
    """The run's failures, fallbacks, limits, unverified claims and troubled actions, as the
    reasons an answer is degraded (pure; every domain's answer starts from it)."""
    reports = current_reports(state.get("reports") or [])
    recoveries = state.get("recoveries") or []
    stop_reason = state.get("stop_reason")
    live_ok = [r for r in reports.values() if r.status == "ok" and not r.fallback]
    fallbacks = [r for r in reports.values() if r.fallback]
    failed = [r for r in reports.values() if r.status == "failed"]
    not_run = pending_packets(state)

    # A retry or a clarification that then succeeded changes nothing in the answer: the
    # packet's current report is live. Fallbacks, reassignments and escalations do.
    rerun = ("retry", "clarify")
    reasons: list[str] = [r.detail for r in recoveries if r.strategy not in rerun]
    recovered = {r.packet_id for r in recoveries if r.strategy not in rerun}
    reasons += [
        f"{r.worker} failed ({r.reason}) and nothing replaced it"
        for r in failed
        if r.packet_id not in recovered
    ]
    reasons += [f"{p.recipient} ({p.id}) never ran" for p in not_run if not stop_reason]
    # An ok report can still have lost a tool: say which facts are missing.
    gaps = [gap for report in live_ok if (gap := _missing_tools(report))]
    reasons += gaps
    # A limit that fired once every packet had run, with nothing left to recover, cut
    # nothing short: the answer is whole.
    unrecovered = [r for r in failed if r.packet_id not in recovered]
    cut_short = bool(stop_reason) and bool(not_run or unrecovered)
    if cut_short:
        skipped = ", ".join(f"{p.recipient} ({p.id})" for p in not_run)
        reasons.append(
            f"stopped early by the {stop_reason}"
            + (f"; never ran: {skipped}" if skipped else "; nothing recovered the failures")
        )
    reasons += [f"unverified claim: {line}" for line in state.get("unverified") or []]
    reasons += [f"conflicting facts: {line}" for line in state.get("conflicts") or []]
    actions = list(latest_actions(state).values())
    reasons += [
        f"action {a.tool}({args_text(a.args)}) was approved but {a.status}: {a.result[:200]}"
        for a in actions
        if a.status in ("refused", "failed", "approved")
    ]
    return Degradation(
        reports=reports,
        reasons=reasons,
        live_ok=live_ok,
        fallbacks=fallbacks,
        failed=failed,
        not_run=not_run,
        gaps=gaps,
        cut_short=cut_short,
        actions=actions,
    )
