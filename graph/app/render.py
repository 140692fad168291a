"""What `muster` prints: live progress, the answer, the thread list and `muster show`.

Every line the CLI writes about a thread is formatted here; the commands in `graph.app.cli`
decide what to print and the exit code, never how it looks. Tickets and tool text are not
ours: everything printed here goes through `printable`, so an escape sequence in a ticket or a
tool result (clear the screen, set the window title, move the cursor) reaches the terminal as
nothing. JSON output needs no such pass: `json.dumps` escapes every control character.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import re
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from langgraph.types import StateSnapshot

from checkpoints.audit import AuditRow
from checkpoints.threads import ThreadInfo, status_of
from graph.app.hints import ANSWER, NOTHING, Carried
from graph.approvers import approvers_path, load_approvers
from graph.facts import SHARED_CALL_PREFIX
from graph.proposals import approval_digest, idempotency_key, pending_proposals
from graph.supervisor_spend import spend
from graph.synthesize import compose_answer
from workers.contracts import Answer, Handoff, Report
from workers.errors import MusterError

if TYPE_CHECKING:  # the hub loads the MCP SDK; `threads` and `show` print without one
    from workers.hub import ServerState, ToolHub

_CONTROL_SEQUENCES = re.compile(
    r"\x1b\][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"  # OSC: window title, hyperlinks
    r"|\x1b[P^_X][^\x1b\x9c\n]*(?:\x1b\\|\x9c)?"  # DCS, PM, APC, SOS strings
    r"|\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI: colours, cursor moves, clear screen
    r"|\x1b[ -/]*[0-~]?"  # any other escape (ESC c resets the terminal)
    r"|\x9b[0-?]*[ -/]*[@-~]?"  # 8-bit CSI
    r"|[\x90\x98\x9d-\x9f][^\x07\x1b\x9c\n]*(?:\x07|\x9c)?"  # 8-bit OSC, DCS, PM, APC, SOS
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # C0 but newline and tab, DEL, C1 (\r overwrites)
)


def printable(text: str) -> str:
    """`text` without terminal control sequences (ANSI CSI/OSC/DCS escapes, C0 controls other
    than newline and tab, DEL, C1): safe to print to a terminal whoever wrote it."""
    return _CONTROL_SEQUENCES.sub("", text)


def _say(text: str = "") -> None:
    print(printable(text))


TICK_S = 0.5
"""How often a terminal's `running:` status line is redrawn while workers run."""


class Progress:
    """Live progress lines: coloured marks on a terminal, plain text when piped. On a
    terminal, `ticking()` also keeps one status line redrawn in place (which workers run, for
    how long) until the next progress line replaces it."""

    def __init__(self, stream: TextIO, hub: ToolHub | None) -> None:
        self.stream = stream
        self.hub = hub
        self.tty = stream.isatty()
        self.running: dict[str, tuple[str, float]] = {}
        """Packets dispatched and not reported yet: packet id → (worker, start time)."""
        self.started = time.monotonic()
        self._status_shown = False
        """A status line (no newline) is on screen: the next line first erases it."""
        if hub is not None:  # None: reading a thread back, no servers
            hub.on_server_start.append(self._server_started)  # servers start on demand

    def _server_started(self, server: str, state: ServerState) -> None:
        took = f"{time.monotonic() - self.started:.1f} s"
        if state.up:
            self.line(f"server {server} up ({took})")
        else:
            self.line(f"server {server} DOWN ({took}): {state.last_error or 'did not start'}")

    def _mark(self, ok: bool) -> str:
        if not self.tty:  # both four wide, so the worker column lines up
            return "ok  " if ok else "FAIL"
        return "\033[32m✓\033[0m" if ok else "\033[31m✗\033[0m"

    def line(self, text: str, *, ok: bool | None = None) -> None:
        """One line of progress (control sequences removed), flushed at once; `ok` prefixes
        a pass/fail mark."""
        mark = "" if ok is None else self._mark(ok) + " "
        self._erase_status()
        print(mark + printable(text), file=self.stream, flush=True)

    def _erase_status(self) -> None:
        if self._status_shown:
            self.stream.write("\r\033[2K")  # back to column 0, clear the line
            self._status_shown = False

    @contextlib.asynccontextmanager
    async def ticking(self) -> AsyncIterator[None]:
        """While the block runs, on a terminal, redraw the running workers' status line every
        `TICK_S` (elapsed times grow while a slow worker runs); piped output is unchanged."""
        if not self.tty:
            yield
            return

        async def tick() -> None:
            while True:
                await asyncio.sleep(TICK_S)
                if self.running:
                    now = time.monotonic()
                    workers = ", ".join(f"{w} {now - t:.1f} s" for w, t in self.running.values())
                    status = printable(f"  running: {workers}")
                    self.stream.write(f"\r\033[2K\033[2m{status}\033[0m")
                    self.stream.flush()
                    self._status_shown = True

        ticker = asyncio.create_task(tick(), name="progress-ticker")
        try:
            yield
        finally:
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker
            self._erase_status()
            self.stream.flush()

    def __call__(self, node: str, update: dict[str, Any]) -> None:
        if node == "plan":
            packets: list[Handoff] = update.get("packets") or []
            self.line(f"plan: {plural(len(packets), 'packet')}")
            for packet in packets:
                # Before its servers start (on demand), a packet's tools are its allowlist.
                specs = self.hub.specs(packet.tool_allow) if self.hub is not None else []
                tools = [s.name for s in specs] or [str(entry) for entry in packet.tool_allow]
                self.line(f"  {packet.recipient:<10} tools: {', '.join(tools) or '(none)'}")
            for note in update.get("plan_notes") or []:
                self.line(f"  note: {note}")
            now = time.monotonic()
            self.running = {p.id: (p.recipient, now) for p in packets if not p.depends_on}
            self._still_running()
        elif node in ("dispatch", "__error_handler__dispatch"):
            for report in update.get("reports") or []:
                self.line(describe_report(report), ok=report.status == "ok")
                self.running.pop(report.packet_id, None)
            self._still_running()
        elif node == "recover":
            for record in update.get("recoveries") or []:
                self.line(f"recover: {record.strategy} — {record.detail}")
        elif node == "collect" and update.get("stop_reason"):
            self.line(f"stop: {update['stop_reason']}; no new work starts")
        elif node == "__interrupt__":
            for interrupt in update.get("value") or update.get("__interrupt__") or ():
                self.line(f"paused: {waiting_for(getattr(interrupt, 'value', interrupt))}")

    def _still_running(self) -> None:
        """On a terminal, which workers of the first wave are still running, and for how
        long (piped output stays one line per event)."""
        if not self.tty or not self.running:
            return
        now = time.monotonic()
        workers = ", ".join(f"{w} {now - t:.1f} s" for w, t in self.running.values())
        text = printable(f"  running: {workers}")
        self._erase_status()
        print(f"\033[2m{text}\033[0m", file=self.stream, flush=True)  # dim, ours alone


def describe_report(report: Report) -> str:
    """One line per report: worker, status, reason, evidence."""
    status = "ok" if report.status == "ok" else f"failed ({report.reason})"
    tools = ", ".join(
        f.tool + (" (shared fact)" if f.call_id.startswith(SHARED_CALL_PREFIX) else "")
        for f in report.findings
    )
    errors = sum(1 for c in report.tool_calls if c.outcome != "ok")
    extra = f", {plural(errors, 'tool error')}" if errors else ""
    if report.fallback_for:  # which model answered, when it was not the worker's own
        extra += f", answered by {report.model} (fallback for {report.fallback_for})"
    return (
        f"{report.worker:<10} {status:<22} {plural(len(report.findings), 'finding')}"
        f"{' from ' + tools if tools else ''}{extra}, {plural(report.steps_used, 'step')}"
    )


def plural(count: int, noun: str) -> str:
    """`1 finding`, `2 findings`."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def waiting_for(value: Any) -> str:
    """What an interrupt waits for, in one line: the action with its amount and digest, or
    the question."""
    if not isinstance(value, dict):
        return f"waiting for a human: {value}"
    if value.get("kind") == "approval":
        args = value.get("args") or {}
        amount = args.get("amount_cents")
        money = f" of ${int(amount) / 100:,.2f}" if isinstance(amount, int) else ""
        order = f" on order {args['order_id']}" if args.get("order_id") else ""
        role = f" (needs a {value['needs_role']})" if value.get("needs_role") else ""
        return (
            f"waiting for approval of {value.get('tool')}{money}{order}{role}, "
            f"digest {str(value.get('digest', ''))[:12]}"
        )
    return f"waiting for an answer: {value.get('question', value)}"


def answer_markdown(answer: Answer) -> str:
    """The answer as Markdown: what happened, what we will do, the reply, what is open."""
    cite = lambda cites: f" `[{', '.join(cites)}]`" if cites else ""  # noqa: E731
    lines = [f"**Status:** {answer.status}" + (" (degraded)" if answer.degraded else "")]
    if answer.needs_human:
        lines[0] += " · **needs a human**"
    if answer.intents:
        lines.append(f"**Intents:** {', '.join(answer.intents)}")
    if answer.summary:
        lines += ["", "## What happened", ""]
        lines += [f"- {c.text}{cite(c.cites)}" for c in answer.summary]
    if answer.resolution:
        lines += ["", "## What we will do", ""]
        for step in answer.resolution:
            if step.kind == "action":
                args = ", ".join(f"{k}={v}" for k, v in step.args.items())
                head = f"**Action** `{step.tool}({args})`, *{step.approval}*: "
            elif step.kind == "open":
                head = "**Open:** "
            else:
                head = ""
            lines.append(f"- ({step.intent}) {head}{step.text}{cite(step.cites)}")
    if answer.customer_reply:
        lines += ["", "## Reply to send", ""]
        lines += [f"> {line}" if line else ">" for line in answer.customer_reply.splitlines()]
    if answer.open_questions:
        lines += ["", "## Open questions", ""]
        lines += [f"- {q}" for q in answer.open_questions]
    if answer.evidence:
        lines += ["", "## Evidence", ""]
        lines += [f"- {e}" for e in answer.evidence]
    if answer.degraded_reasons:
        lines += ["", "## Why it is degraded", ""]
        lines += [f"- {r}" for r in answer.degraded_reasons]
    return printable("\n".join(lines))


def print_result(
    thread_id: str,
    values: dict[str, Any],
    *,
    waiting: bool,
    as_json: bool,
    as_markdown: bool = False,
    interrupts: Sequence[Any] = (),
    carried: Carried = NOTHING,
    started: float | None = None,
) -> None:
    """The answer as text (or Markdown), or the answer and every report as JSON (with the
    run's totals, `started` being when the command began, `time.monotonic()`). A run that
    waits for a human shows the answer so far, and ends with what waits (the action, its
    amount and digest, or the question) and the command that answers it, carrying the
    options in force (`carried`). `interrupts` are the values of the thread's pending
    interrupts (its questions come from there)."""
    if as_json:
        payload = result_payload(
            thread_id, values, waiting=waiting, interrupts=interrupts, started=started
        )
        print(json.dumps(payload, indent=2))
        return
    answer = _answer_at_stop(values, waiting=waiting)
    if answer is not None and values.get("answer") is None:
        print("\nAnswer so far (waiting for a human):")
    pending = pending_approvals(values, thread_id) if waiting else []
    questions = pending_questions(interrupts) if waiting else []
    if as_markdown and answer is not None:
        print()
        print(answer_markdown(answer))
    elif answer is not None:
        print()
        _say(answer.text)
    if not waiting:
        print(f"\nthread: {thread_id}")
        return
    print(f"\nthread: {thread_id} (details: {carried.command('show', thread_id, run=False)})")
    stops = [i for i in interrupts if isinstance(i, dict) and i.get("kind") == "paused"]
    for line in waiting_lines(thread_id, pending, questions, carried, paused=stops):
        _say(line)


def _answer_at_stop(values: Mapping[str, Any], *, waiting: bool) -> Answer | None:
    """The thread's answer, or while it waits the answer so far (the one it would give now)."""
    final: Answer | None = values.get("answer")
    if final is None and waiting and values.get("request"):
        return compose_answer(values)  # type: ignore[arg-type]
    return final


def result_payload(
    thread_id: str,
    values: dict[str, Any],
    *,
    waiting: bool,
    interrupts: Sequence[Any] = (),
    started: float | None = None,
) -> dict[str, Any]:
    """What `--json` prints for a thread at this stop (and `muster serve` returns): the
    answer (final or so far) with its standing, what waits, the totals, the reading, the
    reports and recoveries."""
    answer = _answer_at_stop(values, waiting=waiting)
    return {
        "thread_id": thread_id,
        "waiting_for_human": waiting,
        # The answer's standing at this stop, final or so far: a script reads these
        # without digging into the answer (a thread that waits always needs a human).
        "status": answer.status if answer else None,
        "degraded": answer.degraded if answer else None,
        "needs_human": waiting or bool(answer and answer.needs_human),
        "pending_approvals": pending_approvals(values, thread_id) if waiting else [],
        "pending_questions": pending_questions(interrupts) if waiting else [],
        # While it waits, the answer so far: the one it would give now (issue 24).
        "answer": answer.model_dump() if answer else None,
        "answer_is_final": values.get("answer") is not None,
        "totals": run_totals(values, started=started),
        "reading": {
            "intents": values.get("intents") or [],
            "unaccounted": values.get("unaccounted") or [],
            "confidence": values.get("confidence"),
        },
        "reports": [r.model_dump() for r in values.get("reports") or []],
        "recoveries": [r.model_dump() for r in values.get("recoveries") or []],
    }


def run_totals(values: Mapping[str, Any], *, started: float | None = None) -> dict[str, Any]:
    """The thread's totals so far: worker steps and tokens (what the run budgets count),
    their cost in money, dispatches, the workers' own time, actions executed, and this
    command's wall time."""
    reports: list[Report] = list(values.get("reports") or [])
    actions = {a.digest: a for a in values.get("actions") or []}
    supervisor_usd, supervisor_unpriced, supervisor_tokens = spend(
        list(values.get("supervisor_calls") or [])
    )
    return {
        "steps": sum(r.steps_used for r in reports),
        "tokens": sum(r.tokens for r in reports),
        # Money from the maintained price table (workers/cost.py), the workers' and the
        # supervisor's own calls (the LLM planner, the answer writer); calls it does not
        # know are counted apart, never priced as free.
        "cost_usd": round(sum(r.cost_usd for r in reports) + supervisor_usd, 6),
        "supervisor_cost_usd": round(supervisor_usd, 6),
        "supervisor_tokens": supervisor_tokens,
        "unpriced_calls": sum(r.unpriced_calls for r in reports) + supervisor_unpriced,
        "dispatches": len(reports),
        "workers_s": round(sum(r.duration_ms for r in reports) / 1000, 3),
        "actions_executed": sum(1 for a in actions.values() if a.status == "executed"),
        "duration_s": round(time.monotonic() - started, 3) if started is not None else None,
    }


def waiting_lines(
    thread_id: str,
    approvals: Sequence[dict[str, Any]],
    questions: Sequence[dict[str, Any]],
    carried: Carried = NOTHING,
    *,
    paused: Sequence[dict[str, Any]] = (),
) -> list[str]:
    """One line per thing a paused thread waits for: what it is, and the command that
    answers it as it can be pasted (`--digest` binds an approval to what was shown); a
    thread held by the kill switch (`paused`) says so and how it continues."""
    lines = []
    for stop in paused[:1]:
        resume = carried.command("resume", thread_id)
        lines.append(
            f"waiting: {stop.get('reason')}; approved actions run after `muster resume-all`, "
            f"then: {resume}"
        )
    for ask in approvals:
        by, who = approver_words(ask)
        command = carried.command("approve", thread_id, "--digest", str(ask["digest"])[:12], *by)
        lines.append(f"{waiting_for(ask)}; approve with: {command}{who} (--reject to refuse)")
    for ask in questions:
        command = carried.command("clarify", thread_id, ANSWER)
        lines.append(f"{waiting_for(ask)}; answer with: {command}")
    if not lines:
        lines.append(f"waiting for a human: {carried.command('show', thread_id, run=False)}")
    return lines


def approver_words(ask: dict[str, Any]) -> tuple[list[str], str]:
    """`--by` for an approval command, and a note on who may give it: nothing when the OS
    user (`approve`'s default) is an approver who may approve this action; else `--by NAME`
    with the approvers who may."""
    try:
        approvers = load_approvers()
    except MusterError:
        return ["--by", "NAME"], ""
    tool, args = str(ask.get("tool")), dict(ask.get("args") or {})
    user = getpass.getuser()
    if not approvers.unknown_approver(user) and not approvers.role_problem(user, tool, args):
        return [], ""
    roles = {limit.role for limit in approvers.limits_for(tool, args)}
    names = [n for n, a in sorted(approvers.approvers.items()) if roles <= set(a.roles)]
    who = ", ".join(names) or f"nobody; see {approvers_path()}"
    return ["--by", "NAME"], f" (NAME: {who})"


def pending_questions(interrupts: Sequence[Any]) -> list[dict[str, Any]]:
    """The clarifying questions a paused thread waits on (from its interrupts' values)."""
    return [
        {
            "kind": "clarification",
            "worker": value.get("worker"),
            "packet_id": value.get("packet_id"),
            "question": value.get("question"),
        }
        for value in (getattr(i, "value", i) for i in interrupts)
        if isinstance(value, dict) and value.get("kind") == "clarification"
    ]


def pending_approvals(values: dict[str, Any], thread_id: str) -> list[dict[str, Any]]:
    """The actions of a paused thread that wait for a decision, with the digest to approve,
    for a script that approves without parsing `muster show`."""
    return [
        {
            "kind": "approval",
            "tool": action.tool,
            "args": action.args,
            "digest": approval_digest(action, idempotency_key(thread_id, action)),
            "reason": action.reason,
            "proposed_by": action.proposed_by,
        }
        for action in pending_proposals(values, thread_id)  # type: ignore[arg-type]
    ]


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
    _say(f"{'THREAD':<{width}}  {'STATUS':<12} {'ANSWER':<9} {'UPDATED':<19}  REQUEST")
    for info in infos:
        waits = f" [waits: {', '.join(info.waiting_on)}]" if info.waiting_on else ""
        if info.thread_id in stopped:
            waits += f" [stopped by {stopped[info.thread_id]}: resume it]"
        _say(
            f"{info.thread_id:<{width}}  {info.status:<12} {info.answer_status or '-':<9} "
            f"{info.updated_at[:19]:<19}  "
            f"{shorten(info.request, limit, cut=len(info.request) >= REQUEST_COLUMN)}{waits}"
        )


REQUEST_COLUMN = 60
"""How much of a request `muster threads` shows; longer ones end in "…"."""


def shorten(text: str, limit: int, *, cut: bool = False) -> str:
    """`text` on one line (control sequences removed), cut to `limit` characters with "…".
    `cut`: `text` was already cut by its caller, so it ends in "…" whatever its length now
    (a cut that fell on a space leaves it shorter than `limit` once spaces are joined)."""
    line = " ".join(printable(text).split())
    if len(line) <= limit and not cut:
        return line
    if len(line) < limit:
        return line + "…"
    return line[: limit - 1].rstrip() + "…"


def print_thread(
    thread_id: str,
    snapshot: StateSnapshot,
    history: Sequence[StateSnapshot],
    audit_rows: Sequence[AuditRow],
    carried: Carried = NOTHING,
) -> None:
    """`muster show`: supersteps, reports and tool calls, pending interrupts, audit, answer;
    the commands it suggests carry the store in force (`carried`)."""
    _say(f"thread {thread_id}: {status_of(snapshot)}")
    if snapshot.values.get("request"):
        _say(f"request: {snapshot.values['request']}")
    _say("\nsupersteps:")
    for state in reversed(history):
        step = state.metadata.get("step") if state.metadata else None
        source = state.metadata.get("source") if state.metadata else None
        _say(f"  step {step:>3} {source or '':<6} next: {', '.join(state.next) or '(end)'}")
    _say("\nreports:")
    for report in snapshot.values.get("reports") or []:
        _say(f"  {describe_report(report)}{' [fallback]' if report.fallback else ''}")
        if report.model and not report.fallback_for:
            _say(f"    model: {report.model}")
        for call in report.tool_calls:
            _say(
                f"    {call.tool}({json.dumps(call.args, sort_keys=True)}) → {call.outcome} "
                f"in {call.duration_ms:.0f} ms"
            )
        if report.note and report.status == "failed":
            _say(f"    note: {report.note.splitlines()[-1]}")
    for record in snapshot.values.get("recoveries") or []:
        _say(f"  recovery: {record.strategy} — {record.detail}")
    totals = run_totals(snapshot.values)
    unpriced = totals["unpriced_calls"]
    unpriced_note = f", {unpriced} unpriced call(s)" if unpriced else ""
    _say(
        f"\ntotals: {totals['steps']} steps, {totals['tokens']} tokens, "
        f"${totals['cost_usd']:.4f}{unpriced_note}, {totals['dispatches']} dispatches"
    )
    for interrupt in snapshot.interrupts:
        value = interrupt.value if isinstance(interrupt.value, dict) else {"value": interrupt.value}
        kind = value.get("kind", "input")
        if kind == "approval":
            _say(
                f"\npending approval: {value['tool']}({json.dumps(value['args'], sort_keys=True)})"
                f" proposed by {value.get('proposed_by')}\n  why: {value.get('reason')}"
                f"\n  digest: {value['digest']}"
            )
            by, who = approver_words(value)
            command = carried.command("approve", thread_id, "--digest", value["digest"][:12], *by)
            _say(f"  decide: {command}{who} [--reject] [--note TEXT]")
        else:
            _say(f"\npending {kind}: {value.get('question', value)}")
            _say(f"  answer: {carried.command('clarify', thread_id, ANSWER)}")
    for row in audit_rows:
        _say(f"audit: {row.event} by {row.actor} digest {row.digest[:16]}… {row.result[:160]}")
    answer = snapshot.values.get("answer")
    if answer is not None:
        _say(f"\nanswer: {answer.status}{' DEGRADED' if answer.degraded else ''}")
        _say(answer.text)
    elif snapshot.interrupts and snapshot.values.get("request"):
        # What `run` printed when it paused: the answer as it stands, before the human.
        _say("\nanswer so far (waiting for a human):")
        _say(compose_answer(snapshot.values).text)  # type: ignore[arg-type]
