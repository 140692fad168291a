"""`muster`: run, resume and inspect support-ticket threads from a terminal.

Exit codes:
  0  the answer is complete (or there was nothing to do)
  1  an unexpected internal error
  2  bad input: unknown thread, unreadable database, malformed servers file, unknown model
  3  the answer is partial or degraded, or a person must pick the ticket up
  4  the answer failed
  5  the thread waits for a human (an approval or a clarification)
  6  stopped cleanly by SIGINT/SIGTERM: state is checkpointed, `muster resume THREAD` continues
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import signal
import sys
import uuid
from pathlib import Path
from typing import Any, TextIO

from langgraph.errors import GraphDrained
from langgraph.runtime import RunControl
from langgraph.types import Command

from checkpoints.audit import AuditLog
from checkpoints.saver import resolve_db_path
from checkpoints.threads import describe_threads, status_of, thread_config, thread_exists
from graph.app.batch import add_batch_parser, cmd_batch
from graph.app.runtime import Runtime, open_runtime, open_store, stream_run
from graph.app.scenarios import SCENARIOS
from graph.facts import SHARED_CALL_PREFIX
from graph.limits import RunLimits
from graph.planners.llm import make_llm_planner
from graph.trace import THREAD_ID
from workers.contracts import Answer, Handoff, Report
from workers.errors import MusterError
from workers.hub import DEFAULT_SERVERS_FILE, load_servers_config
from workers.models import load_model_factory

EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT, EXIT_DEGRADED, EXIT_FAILED, EXIT_WAITING = 0, 1, 2, 3, 4, 5
EXIT_DRAINED = 6


class Progress:
    """Live progress lines: coloured marks on a terminal, plain text when piped."""

    def __init__(self, stream: TextIO, runtime: Runtime) -> None:
        self.stream = stream
        self.runtime = runtime
        self.tty = stream.isatty()

    def _mark(self, ok: bool) -> str:
        if not self.tty:
            return "ok " if ok else "FAIL"
        return "\033[32m✓\033[0m" if ok else "\033[31m✗\033[0m"

    def line(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def __call__(self, node: str, update: dict[str, Any]) -> None:
        if node == "plan":
            packets: list[Handoff] = update.get("packets") or []
            self.line(f"plan: {len(packets)} packets")
            for packet in packets:
                tools = [s.name for s in self.runtime.services.hub.specs(packet.tool_allow)]
                self.line(f"  {packet.recipient:<10} tools: {', '.join(tools) or '(none)'}")
            for note in update.get("plan_notes") or []:
                self.line(f"  note: {note}")
        elif node in ("dispatch", "__error_handler__dispatch"):
            for report in update.get("reports") or []:
                self.line(f"{self._mark(report.status == 'ok')} {describe_report(report)}")
        elif node == "recover":
            for record in update.get("recoveries") or []:
                self.line(f"recover: {record.strategy} — {record.detail}")
        elif node == "collect" and update.get("stop_reason"):
            self.line(f"stop: {update['stop_reason']}; no new work starts")
        elif node == "__interrupt__":
            self.line("paused: waiting for a human")


def describe_report(report: Report) -> str:
    """One line per report: worker, status, reason, evidence."""
    status = "ok" if report.status == "ok" else f"failed ({report.reason})"
    tools = ", ".join(
        f.tool + (" (shared fact)" if f.call_id.startswith(SHARED_CALL_PREFIX) else "")
        for f in report.findings
    )
    errors = sum(1 for c in report.tool_calls if c.outcome != "ok")
    extra = f", {errors} tool errors" if errors else ""
    return (
        f"{report.worker:<10} {status:<22} {len(report.findings)} findings"
        f"{' from ' + tools if tools else ''}{extra}, {report.steps_used} steps"
    )


def answer_exit_code(answer: Answer | None, waiting: bool) -> int:
    """The documented exit code for a thread's outcome."""
    if waiting:
        return EXIT_WAITING
    if answer is None:
        return EXIT_FAILED
    if answer.status == "failed":
        return EXIT_FAILED
    return EXIT_DEGRADED if answer.degraded or answer.needs_human else EXIT_OK


def emit_result(
    args: argparse.Namespace, thread_id: str, values: dict[str, Any], waiting: bool
) -> int:
    """Print the answer (text or JSON) and return the exit code."""
    answer: Answer | None = values.get("answer")
    if args.json:
        payload = {
            "thread_id": thread_id,
            "waiting_for_human": waiting,
            "answer": answer.model_dump() if answer else None,
            "reports": [r.model_dump() for r in values.get("reports") or []],
            "recoveries": [r.model_dump() for r in values.get("recoveries") or []],
        }
        print(json.dumps(payload, indent=2))
    else:
        if answer is not None:
            print()
            print(answer.text)
        print(f"\nthread: {thread_id}")
        if waiting:
            print(f"waiting for a human: `muster show {thread_id}`")
    return answer_exit_code(answer, waiting)


def _runtime_options(args: argparse.Namespace) -> dict[str, Any]:
    """Validate --servers, --model and --scenario before anything starts (exit 2 if bad)."""
    servers = (
        load_servers_config(Path(args.servers))
        if args.servers
        else load_servers_config(DEFAULT_SERVERS_FILE)
    )
    models = load_model_factory(args.model)
    scenario_name = getattr(args, "scenario", None)
    if scenario_name:
        if scenario_name not in SCENARIOS:
            raise MusterError(
                f"unknown scenario {scenario_name!r}; known: {', '.join(sorted(SCENARIOS))}"
            )
        models = SCENARIOS[scenario_name].models()
    limits = RunLimits.from_options(
        max_steps=args.max_steps, max_tokens=args.max_tokens, deadline_s=args.deadline
    )
    options: dict[str, Any] = {
        "db": args.db,
        "servers": servers,
        "models": models,
        "limits": limits,
    }
    if getattr(args, "planner", "rules") == "llm":
        if args.model.startswith("offline"):
            raise MusterError(
                "--planner llm needs a provider model, e.g. --model openai:gpt-4o-mini"
            )
        options["planner"] = make_llm_planner(models("planner"))
    return options


def _drain_on_signals(control: RunControl, progress: Progress) -> None:
    """SIGINT/SIGTERM ask LangGraph to drain: work in flight finishes, the superstep is
    checkpointed, and no new work starts. A second signal stops at once."""
    loop = asyncio.get_running_loop()

    def drain(signum: int) -> None:
        if control.drain_requested:
            loop.remove_signal_handler(signum)
            os.kill(os.getpid(), signum)
            return
        progress.line(f"{signal.Signals(signum).name}: finishing work in flight, then stopping")
        control.request_drain(signal.Signals(signum).name)

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, drain, signum)


async def _finish(
    args: argparse.Namespace,
    runtime: Runtime,
    thread_id: str,
    payload: dict[str, Any] | Command | None,
    progress: Progress,
) -> int:
    control = RunControl()
    _drain_on_signals(control, progress)
    try:
        values = await stream_run(runtime, thread_id, payload, on_update=progress, control=control)
    except GraphDrained as drained:
        print(
            f"stopped cleanly ({drained.reason}); state is saved. "
            f"Continue with: muster resume {thread_id}",
            file=sys.stderr,
        )
        return EXIT_DRAINED
    snapshot = await runtime.graph.aget_state(thread_config(thread_id))
    return emit_result(args, thread_id, values, waiting=bool(snapshot.interrupts))


async def cmd_run(args: argparse.Namespace) -> int:
    options = _runtime_options(args)
    thread_id = args.thread or f"t-{uuid.uuid4().hex[:12]}"
    if not THREAD_ID.match(thread_id):
        raise MusterError(
            f"--thread {thread_id!r}: use letters, digits, '.', '_' and '-' (at most 128)"
        )
    request = args.request or (SCENARIOS[args.scenario].request if args.scenario else None)
    if not request:
        raise MusterError('give the ticket text, e.g. muster run "Order #12345 ..."')
    if args.thread and resolve_db_path(args.db).exists():
        async with open_store(args.db) as (graph, saver):  # before any server starts
            if await thread_exists(saver, thread_id):
                status = status_of(await graph.aget_state(thread_config(thread_id)))
                hint = (
                    "start a new run without --thread"
                    if status == "done"
                    else f"continue it with `muster resume {thread_id}`"
                )
                raise MusterError(f"thread {thread_id} already exists ({status}); {hint}")
    async with open_runtime(**options) as runtime:
        progress = Progress(sys.stderr if args.json else sys.stdout, runtime)
        progress.line(f"thread: {thread_id}")
        return await _finish(args, runtime, thread_id, {"request": request}, progress)


async def cmd_resume(args: argparse.Namespace) -> int:
    options = _runtime_options(args)
    out = sys.stderr if args.json else sys.stdout
    async with open_store(args.db) as (graph, saver):  # cheap checks before servers start
        if not await thread_exists(saver, args.thread):
            raise MusterError(f"unknown thread {args.thread}; `muster threads` lists them")
        snapshot = await graph.aget_state(thread_config(args.thread))
        status = status_of(snapshot)
        if status == "done":
            print(f"thread {args.thread} is already done; nothing to resume", file=out)
            return emit_result(args, args.thread, dict(snapshot.values), waiting=False)
        if status == "interrupted":
            print(
                f"thread {args.thread} waits for a human; see `muster show {args.thread}`", file=out
            )
            return emit_result(args, args.thread, dict(snapshot.values), waiting=True)
    async with open_runtime(**options, must_exist=True) as runtime:
        progress = Progress(out, runtime)
        progress.line(f"resuming thread {args.thread} ({status})")
        return await _finish(args, runtime, args.thread, None, progress)


async def _answer_interrupt(args: argparse.Namespace, kind: str, value: Any) -> int:
    """Resume a thread's pending `kind` interrupt with `value`."""
    options = _runtime_options(args)
    async with open_store(args.db) as (graph, saver):  # cheap checks before servers start
        if not await thread_exists(saver, args.thread):
            raise MusterError(f"unknown thread {args.thread}; `muster threads` lists them")
        if not (await graph.aget_state(thread_config(args.thread))).interrupts:
            raise MusterError(f"thread {args.thread} has no pending {kind}")
    async with open_runtime(**options, must_exist=True) as runtime:
        snapshot = await runtime.graph.aget_state(thread_config(args.thread))
        pending = [
            i
            for i in snapshot.interrupts
            if isinstance(i.value, dict) and i.value.get("kind") == kind
        ]
        if not pending:
            raise MusterError(
                f"thread {args.thread} has no pending {kind} ({status_of(snapshot)}); "
                f"`muster show {args.thread}` shows it"
            )
        target = pending[0]
        resume = value(target.value) if callable(value) else value
        progress = Progress(sys.stderr if args.json else sys.stdout, runtime)
        progress.line(f"{kind} for thread {args.thread}: {json.dumps(resume, default=str)}")
        return await _finish(
            args, runtime, args.thread, Command(resume={target.id: resume}), progress
        )


async def cmd_approve(args: argparse.Namespace) -> int:
    def decision(pending: dict[str, Any]) -> dict[str, Any]:
        # The approval carries the digest the human was shown; it is checked against the
        # action again in the graph, so it cannot approve anything else. --digest lets the
        # human bind the decision to what they read in `muster show`.
        if args.digest and not pending["digest"].startswith(args.digest):
            raise MusterError(
                f"the pending action's digest {pending['digest'][:16]}… does not start with "
                f"{args.digest!r}; run `muster show {args.thread}` again"
            )
        return {
            "approved": not args.reject,
            "digest": pending["digest"],
            "by": args.by or getpass.getuser(),
            "note": args.note or "",
        }

    return await _answer_interrupt(args, "approval", decision)


async def cmd_clarify(args: argparse.Namespace) -> int:
    return await _answer_interrupt(args, "clarification", args.answer)


async def cmd_threads(args: argparse.Namespace) -> int:
    async with open_store(args.db) as (graph, saver):
        infos = await describe_threads(graph, saver)
    if args.json:
        print(json.dumps([info.__dict__ for info in infos], indent=2))
        return EXIT_OK
    if not infos:
        print("no threads yet")
    for info in infos:
        waits = f" [waits: {', '.join(info.waiting_on)}]" if info.waiting_on else ""
        print(
            f"{info.thread_id}  {info.status:<12} {info.answer_status or '-':<9} "
            f"{info.updated_at[:19]}  {info.request}{waits}"
        )
    return EXIT_OK


async def cmd_show(args: argparse.Namespace) -> int:
    async with open_store(args.db) as (graph, saver):
        if not await thread_exists(saver, args.thread):
            raise MusterError(f"unknown thread {args.thread}; `muster threads` lists them")
        config = thread_config(args.thread)
        history = [s async for s in graph.aget_state_history(config)]
        snapshot = await graph.aget_state(config)
        async with await AuditLog.open(resolve_db_path(args.db)) as audit:
            audit_rows = await audit.rows(args.thread)
    print(f"thread {args.thread}: {status_of(snapshot)}")
    print("\nsupersteps:")
    for state in reversed(history):
        step = state.metadata.get("step") if state.metadata else None
        source = state.metadata.get("source") if state.metadata else None
        print(f"  step {step:>3} {source or '':<6} next: {', '.join(state.next) or '(end)'}")
    print("\nreports:")
    for report in snapshot.values.get("reports") or []:
        print(f"  {describe_report(report)}{' [fallback]' if report.fallback else ''}")
        for call in report.tool_calls:
            print(
                f"    {call.tool}({json.dumps(call.args, sort_keys=True)}) → {call.outcome} "
                f"in {call.duration_ms:.0f} ms"
            )
        if report.note and report.status == "failed":
            print(f"    note: {report.note.splitlines()[-1]}")
    for record in snapshot.values.get("recoveries") or []:
        print(f"  recovery: {record.strategy} — {record.detail}")
    for interrupt in snapshot.interrupts:
        value = interrupt.value if isinstance(interrupt.value, dict) else {"value": interrupt.value}
        kind = value.get("kind", "input")
        if kind == "approval":
            print(
                f"\npending approval: {value['tool']}({json.dumps(value['args'], sort_keys=True)})"
                f" proposed by {value.get('proposed_by')}\n  why: {value.get('reason')}"
                f"\n  digest: {value['digest']}\n  decide: muster approve {args.thread}"
                f" [--reject] [--note TEXT]"
            )
        else:
            print(f"\npending {kind}: {value.get('question', value)}")
            print(f'  answer: muster clarify {args.thread} "<answer>"')
    for row in audit_rows:
        print(f"audit: {row.event} by {row.actor} digest {row.digest[:16]}… {row.result[:160]}")
    answer = snapshot.values.get("answer")
    if answer is not None:
        print(f"\nanswer: {answer.status}{' DEGRADED' if answer.degraded else ''}")
    return EXIT_OK


def positive_int(text: str) -> int:
    """argparse type for limits: a whole number of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="muster",
        description="Muster: a supervisor that plans a support ticket, dispatches specialists "
        "in parallel over MCP tools, recovers from failures and answers honestly.",
        epilog=__doc__.split("\n", 2)[2] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", help=f"checkpoint database (default: {resolve_db_path()})")
    running = argparse.ArgumentParser(add_help=False)
    running.add_argument("--servers", help="mcpServers config file (default: servers/servers.json)")
    running.add_argument(
        "--model",
        default="offline",
        help="offline, offline:<ms> or provider:model (default: offline)",
    )
    running.add_argument("--json", action="store_true", help="print the answer and reports as JSON")
    running.add_argument(
        "--max-steps", type=positive_int, help="total worker steps for the run (default 60)"
    )
    running.add_argument(
        "--max-tokens", type=positive_int, help="total tokens for the run (default 200000)"
    )
    running.add_argument(
        "--deadline", type=float, metavar="SECONDS", help="wall-clock limit for this invocation"
    )
    running.add_argument(
        "--planner",
        choices=["rules", "llm"],
        default="rules",
        help="rules: the deterministic ticket planner; llm: --model plans (structured output)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run", parents=[common, running], help="run a new ticket on a new thread"
    )
    run.add_argument("request", nargs="?", help="the ticket text")
    run.add_argument(
        "--scenario", help=f"a bundled scenario ({', '.join(sorted(SCENARIOS))}); sets models"
    )
    run.add_argument("--thread", help="thread id to use (must be new)")
    resume = commands.add_parser(
        "resume", parents=[common, running], help="resume an unfinished thread"
    )
    resume.add_argument("thread")
    threads = commands.add_parser("threads", parents=[common], help="list threads and their status")
    threads.add_argument("--json", action="store_true")
    approve = commands.add_parser(
        "approve", parents=[common, running], help="approve (or --reject) a pending action"
    )
    approve.add_argument("thread")
    approve.add_argument("--reject", action="store_true", help="reject instead of approving")
    approve.add_argument("--note", help="why, for the audit log")
    approve.add_argument("--by", help="who decides (default: the current user)")
    approve.add_argument(
        "--digest", help="the digest (or its start) shown by `muster show`; refuse if different"
    )
    clarify = commands.add_parser(
        "clarify", parents=[common, running], help="answer a worker's clarifying question"
    )
    clarify.add_argument("thread")
    clarify.add_argument("answer")
    add_batch_parser(commands, [common, running])
    show = commands.add_parser(
        "show", parents=[common], help="a thread's history, reports and tool calls"
    )
    show.add_argument("thread")
    return parser


COMMANDS = {
    "run": cmd_run,
    "resume": cmd_resume,
    "approve": cmd_approve,
    "clarify": cmd_clarify,
    "threads": cmd_threads,
    "show": cmd_show,
    "batch": cmd_batch,
}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `muster` console script."""
    args = build_parser().parse_args(argv)
    try:
        return asyncio.run(COMMANDS[args.command](args))
    except MusterError as error:
        print(f"muster: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("muster: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
