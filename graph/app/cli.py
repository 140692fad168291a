"""`muster`: run, resume and inspect support-ticket threads from a terminal.

Each command validates its options once (`MusterOptions.from_args`) and cheap facts about
the thread (it exists, it waits) before any server starts; then it opens the runtime, runs
the thread with signal draining (`SignalDrain`), prints through `graph.app.render` and
returns an `ExitCode` (`muster --help` lists them). `muster batch` lives in `graph.app.batch`,
`muster eval` in `graph.app.eval`.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import inspect
import json
import sys
import uuid
from typing import Any

from langgraph.errors import GraphDrained
from langgraph.runtime import RunControl
from langgraph.types import Command

from checkpoints.store import checkpoint_store
from checkpoints.threads import describe_threads, status_of, thread_config, thread_exists
from graph.app.batch import add_batch_parser, cmd_batch
from graph.app.eval import add_eval_parser, cmd_eval
from graph.app.options import ExitCode, MusterOptions, add_run_options, add_store_options
from graph.app.render import Progress, print_result, print_thread, print_threads
from graph.app.runtime import MusterRuntime, open_runtime, open_store, stream_run
from graph.app.scenarios import SCENARIOS
from graph.app.signals import SignalDrain
from graph.approvers import (
    APPROVERS_ENV,
    approvers_path,
    digest_prefix_problem,
    digest_problem,
    load_approvers,
)
from graph.trace import THREAD_ID
from workers.errors import MusterError


def emit_result(
    args: argparse.Namespace, thread_id: str, values: dict[str, Any], waiting: bool
) -> ExitCode:
    """Print the answer (text or JSON) and return the exit code."""
    print_result(
        thread_id,
        values,
        waiting=waiting,
        as_json=args.json,
        as_markdown=getattr(args, "markdown", False),
    )
    return ExitCode.for_answer(values.get("answer"), waiting=waiting)


def _run_options(args: argparse.Namespace) -> MusterOptions:
    """Validate --servers, --model, --planner and --scenario before anything starts (exit 2)."""
    scenario_name = getattr(args, "scenario", None)
    if scenario_name and scenario_name not in SCENARIOS:
        raise MusterError(
            f"unknown scenario {scenario_name!r}; known: {', '.join(sorted(SCENARIOS))}"
        )
    scripted = SCENARIOS[scenario_name].models() if scenario_name else None
    return MusterOptions.from_args(args, models=scripted)


async def _finish(
    args: argparse.Namespace,
    runtime: MusterRuntime,
    thread_id: str,
    payload: dict[str, Any] | Command | None,
    progress: Progress,
) -> int:
    control = RunControl()
    # Installed for the rest of the process: a signal after the run is a no-op drain.
    drain = SignalDrain(progress.line, in_flight="work in flight")
    drain.controls.add(control)
    drain.install()
    try:
        values = await stream_run(runtime, thread_id, payload, on_update=progress, control=control)
    except GraphDrained as drained:
        print(
            f"stopped cleanly ({drained.reason}); state is saved. "
            f"Continue with: muster resume {thread_id}",
            file=sys.stderr,
        )
        return ExitCode.DRAINED
    snapshot = await runtime.graph.aget_state(thread_config(thread_id))
    return emit_result(args, thread_id, values, waiting=bool(snapshot.interrupts))


async def cmd_run(args: argparse.Namespace) -> int:
    options = _run_options(args)
    thread_id = args.thread or f"t-{uuid.uuid4().hex[:12]}"
    if not THREAD_ID.match(thread_id):
        raise MusterError(
            f"--thread {thread_id!r}: use letters, digits, '.', '_' and '-' (at most 128)"
        )
    request = args.request or (SCENARIOS[args.scenario].request if args.scenario else None)
    if not request:
        raise MusterError('give the ticket text, e.g. muster run "Order #12345 ..."')
    store = options.store
    # The lease before the first read of the thread: two `run --thread X` start it once.
    async with store.hold_thread(thread_id):
        if args.thread and store.may_hold_threads():
            async with open_store(store) as (graph, saver):  # before any server starts
                if await thread_exists(saver, thread_id):
                    status = status_of(await graph.aget_state(thread_config(thread_id)))
                    hint = (
                        "start a new run without --thread"
                        if status == "done"
                        else f"continue it with `muster resume {thread_id}`"
                    )
                    raise MusterError(f"thread {thread_id} already exists ({status}); {hint}")
        async with open_runtime(options) as runtime:
            progress = Progress(sys.stderr if args.json else sys.stdout, runtime.services.hub)
            progress.line(f"thread: {thread_id}")
            return await _finish(args, runtime, thread_id, {"request": request}, progress)


async def cmd_resume(args: argparse.Namespace) -> int:
    options = _run_options(args)
    out = sys.stderr if args.json else sys.stdout
    store = options.store
    # The lease before the first read: a second `resume` fails here, it never redoes work.
    async with store.hold_thread(args.thread, must_exist=True):
        async with open_store(store) as (graph, saver):  # cheap checks before servers start
            if not await thread_exists(saver, args.thread):
                raise MusterError(f"unknown thread {args.thread}; `muster threads` lists them")
            snapshot = await graph.aget_state(thread_config(args.thread))
            status = status_of(snapshot)
            if status == "done":
                print(f"thread {args.thread} is already done; nothing to resume", file=out)
                return emit_result(args, args.thread, dict(snapshot.values), waiting=False)
            if status == "interrupted":
                print(
                    f"thread {args.thread} waits for a human; see `muster show {args.thread}`",
                    file=out,
                )
                return emit_result(args, args.thread, dict(snapshot.values), waiting=True)
        async with open_runtime(options, must_exist=True) as runtime:
            progress = Progress(out, runtime.services.hub)
            progress.line(f"resuming thread {args.thread} ({status})")
            return await _finish(args, runtime, args.thread, None, progress)


async def _answer_interrupt(args: argparse.Namespace, kind: str, value: Any) -> int:
    """Resume a thread's pending `kind` interrupt with `value`."""
    options = _run_options(args)
    # The lease before reading the pending interrupt: of two decisions on one thread, the
    # second fails here with a one-line error (ThreadBusyError) and runs nothing.
    store = options.store
    async with store.hold_thread(args.thread, must_exist=True):
        async with open_store(store) as (graph, saver):  # cheap checks before servers start
            if not await thread_exists(saver, args.thread):
                raise MusterError(f"unknown thread {args.thread}; `muster threads` lists them")
            if not (await graph.aget_state(thread_config(args.thread))).interrupts:
                raise MusterError(f"thread {args.thread} has no pending {kind}")
        async with open_runtime(options, must_exist=True) as runtime:
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
            if inspect.isawaitable(resume):
                resume = await resume
            progress = Progress(sys.stderr if args.json else sys.stdout, runtime.services.hub)
            progress.line(f"{kind} for thread {args.thread}: {json.dumps(resume, default=str)}")
            return await _finish(
                args, runtime, args.thread, Command(resume={target.id: resume}), progress
            )


async def cmd_approve(args: argparse.Namespace) -> int:
    # The same checks the graph's `approve` node makes (graph/approvers.py), made here first
    # so a decision that would not hold fails with one line before any server starts, and
    # the approval stays pending. The graph checks again: the CLI is not trusted alone.
    approvers = load_approvers()
    by = args.by or getpass.getuser()
    if unknown := approvers.unknown_approver(by):
        raise MusterError(
            f"--by {unknown}; name one with --by, or add it to {approvers_path()} "
            f"(${APPROVERS_ENV} names another file)"
        )
    if args.digest is not None and (problem := digest_prefix_problem(args.digest)):
        raise MusterError(f"--digest: {problem} (`muster show {args.thread}` shows it)")

    async def decision(pending: dict[str, Any]) -> dict[str, Any]:
        # The approval carries the digest the human was shown; it is checked against the
        # action again in the graph, so it cannot approve anything else. --digest lets the
        # human bind the decision to what they read in `muster show`.
        digest = pending["digest"]
        if args.digest is not None and (problem := digest_problem(args.digest, digest)):
            raise MusterError(f"{problem}; run `muster show {args.thread}` again")
        if not args.reject and (
            problem := approvers.role_problem(by, pending["tool"], pending["args"])
        ):
            raise MusterError(f"{problem}; the approval stays pending")
        wanted = "rejected" if args.reject else "approved"
        async with await checkpoint_store(args.db).open_audit() as audit:
            standing = await audit.decision(args.thread, digest)
        if standing is not None:
            stood = json.loads(standing.result).get("decision")
            if (stood, standing.actor) != (wanted, by):
                raise MusterError(
                    f"this action was already {stood} by {standing.actor} ({standing.role}); "
                    "the first decision stands"
                )
        return {
            "approved": not args.reject,
            "digest": digest,
            "by": by,
            "note": args.note or "",
        }

    return await _answer_interrupt(args, "approval", decision)


async def cmd_clarify(args: argparse.Namespace) -> int:
    return await _answer_interrupt(args, "clarification", args.answer)


async def cmd_threads(args: argparse.Namespace) -> int:
    async with open_store(args.db) as (graph, saver):
        infos = await describe_threads(graph, saver)
    print_threads(infos, as_json=args.json)
    return ExitCode.OK


async def cmd_show(args: argparse.Namespace) -> int:
    async with open_store(args.db) as (graph, saver):
        if not await thread_exists(saver, args.thread):
            raise MusterError(f"unknown thread {args.thread}; `muster threads` lists them")
        config = thread_config(args.thread)
        history = [s async for s in graph.aget_state_history(config)]
        snapshot = await graph.aget_state(config)
        async with await checkpoint_store(args.db).open_audit() as audit:
            audit_rows = await audit.rows(args.thread)
    print_thread(args.thread, snapshot, history, audit_rows)
    return ExitCode.OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="muster",
        description="Muster: a supervisor that plans a support ticket, dispatches specialists "
        "in parallel over MCP tools, recovers from failures and answers honestly.",
        epilog=ExitCode.help_table(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_store_options(parser, top_level=True)
    common = argparse.ArgumentParser(add_help=False)
    add_store_options(common)
    running = argparse.ArgumentParser(add_help=False)
    add_run_options(running)
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
    approve.add_argument(
        "--by",
        help="who decides: a name in the approvers file (graph/approvers.json, or "
        f"${APPROVERS_ENV}); default: the current user, who must be listed there",
    )
    approve.add_argument(
        "--digest",
        help="the digest shown by `muster show`, or its first 8+ hex characters; "
        "refuse if different",
    )
    clarify = commands.add_parser(
        "clarify", parents=[common, running], help="answer a worker's clarifying question"
    )
    clarify.add_argument("thread")
    clarify.add_argument("answer")
    add_batch_parser(commands, [common, running])
    add_eval_parser(commands)
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
    "eval": cmd_eval,
}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `muster` console script."""
    args = build_parser().parse_args(argv)
    try:
        return asyncio.run(COMMANDS[args.command](args))
    except MusterError as error:
        print(f"muster: error: {error}", file=sys.stderr)
        return ExitCode.BAD_INPUT
    except KeyboardInterrupt:
        print("muster: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
