"""What `muster threads` and `muster show` print: the thread list, and one thread in full."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from langgraph.types import StateSnapshot

from checkpoints.audit import AuditRow
from checkpoints.threads import ThreadInfo, status_of
from graph.app.hints import ANSWER, NOTHING, Carried
from graph.app.printable import say, shorten
from graph.app.render import approver_words, describe_report, run_totals
from graph.synthesize import compose_answer


def print_threads(
    infos: Sequence[ThreadInfo],
    *,
    as_json: bool,
    filtered: bool = False,
    stopped: Mapping[str, str] | None = None,
) -> None:
    """`muster threads`: one line per thread, or a JSON list (`filtered`: by --status or
    --since, so an empty list means none matched). `stopped`: the signal that stopped each
    thread in progress that a signal stopped cleanly (not running, waiting for a resume)."""
    stopped = stopped or {}
    if as_json:
        rows = [{**info.__dict__, "stopped_by": stopped.get(info.thread_id)} for info in infos]
        print(json.dumps(rows, indent=2))
        return
    if not infos:
        print("no threads match" if filtered else "no threads yet")
        return
    width = max(len("THREAD"), *(len(info.thread_id) for info in infos))
    # `describe_threads` keeps the first REQUEST_COLUMN characters of a request: one that
    # long may have been cut, so it ends in "…" too.
    limit = REQUEST_COLUMN - 1
    say(f"{'THREAD':<{width}}  {'STATUS':<12} {'ANSWER':<9} {'UPDATED':<19}  REQUEST")
    for info in infos:
        waits = f" [waits: {', '.join(info.waiting_on)}]" if info.waiting_on else ""
        if info.thread_id in stopped:
            waits += f" [stopped by {stopped[info.thread_id]}: resume it]"
        say(
            f"{info.thread_id:<{width}}  {info.status:<12} {info.answer_status or '-':<9} "
            f"{info.updated_at[:19]:<19}  "
            f"{shorten(info.request, limit, cut=len(info.request) >= REQUEST_COLUMN)}{waits}"
        )


REQUEST_COLUMN = 60
"""How much of a request `muster threads` shows; longer ones end in "…"."""


def print_thread(
    thread_id: str,
    snapshot: StateSnapshot,
    history: Sequence[StateSnapshot],
    audit_rows: Sequence[AuditRow],
    carried: Carried = NOTHING,
) -> None:
    """`muster show`: supersteps, reports and tool calls, pending interrupts, audit, answer;
    the commands it suggests carry the store in force (`carried`)."""
    say(f"thread {thread_id}: {status_of(snapshot)}")
    if snapshot.values.get("request"):
        say(f"request: {snapshot.values['request']}")
    say("\nsupersteps:")
    for state in reversed(history):
        step = state.metadata.get("step") if state.metadata else None
        source = state.metadata.get("source") if state.metadata else None
        say(f"  step {step:>3} {source or '':<6} next: {', '.join(state.next) or '(end)'}")
    say("\nreports:")
    for report in snapshot.values.get("reports") or []:
        say(f"  {describe_report(report)}{' [fallback]' if report.fallback else ''}")
        if report.model and not report.fallback_for:
            say(f"    model: {report.model}")
        for call in report.tool_calls:
            say(
                f"    {call.tool}({json.dumps(call.args, sort_keys=True)}) → {call.outcome} "
                f"in {call.duration_ms:.0f} ms"
            )
        if report.note and report.status == "failed":
            say(f"    note: {report.note.splitlines()[-1]}")
    for record in snapshot.values.get("recoveries") or []:
        say(f"  recovery: {record.strategy} — {record.detail}")
    totals = run_totals(snapshot.values)
    unpriced = totals["unpriced_calls"]
    unpriced_note = f", {unpriced} unpriced call(s)" if unpriced else ""
    say(
        f"\ntotals: {totals['steps']} steps, {totals['tokens']} tokens, "
        f"${totals['cost_usd']:.4f}{unpriced_note}, {totals['dispatches']} dispatches"
    )
    for interrupt in snapshot.interrupts:
        value = interrupt.value if isinstance(interrupt.value, dict) else {"value": interrupt.value}
        kind = value.get("kind", "input")
        if kind == "approval":
            say(
                f"\npending approval: {value['tool']}({json.dumps(value['args'], sort_keys=True)})"
                f" proposed by {value.get('proposed_by')}\n  why: {value.get('reason')}"
                f"\n  digest: {value['digest']}"
            )
            by, who = approver_words(value)
            command = carried.command("approve", thread_id, "--digest", value["digest"][:12], *by)
            say(f"  decide: {command}{who} [--reject] [--note TEXT]")
        else:
            say(f"\npending {kind}: {value.get('question', value)}")
            say(f"  answer: {carried.command('clarify', thread_id, ANSWER)}")
    for row in audit_rows:
        say(f"audit: {row.event} by {row.actor} digest {row.digest[:16]}… {row.result[:160]}")
    answer = snapshot.values.get("answer")
    if answer is not None:
        say(f"\nanswer: {answer.status}{' DEGRADED' if answer.degraded else ''}")
        say(answer.text)
    elif snapshot.interrupts and snapshot.values.get("request"):
        # What `run` printed when it paused: the answer as it stands, before the human.
        say("\nanswer so far (waiting for a human):")
        say(compose_answer(snapshot.values).text)  # type: ignore[arg-type]
