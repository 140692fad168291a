"""The commands of `muster` that run a thread: run, follow-up, resume and fork (and COMMANDS).

Each command validates its options once (`MusterOptions.from_args`) and cheap facts about
the thread (it exists, it waits) before any server starts; then it opens the runtime, runs
the thread with signal draining (`SignalDrain`), prints through `graph.app.render` and
returns an `ExitCode` (`muster --help` lists them). Every command it suggests carries the
options in force (`graph.app.hints`). What the commands share lives in
`graph.app.command_run`; `muster approve` and `clarify` live in `graph.app.decisions`,
`threads`, `show` and `history` in `graph.app.read_commands`, `muster batch` in
`graph.app.batch`, `muster eval` in `graph.app.eval`. This module loads LangGraph and the
rest: `graph.app.cli` imports it only once a command runs, so `muster --help` stays instant.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from collections.abc import Callable, Coroutine
from importlib import import_module
from typing import Any

from langgraph.types import Command, StateSnapshot

from checkpoints.threads import status_of, thread_config, thread_exists
from graph.app.command_run import (
    emit_result,
    finish_run,
    run_options,
    servers_line,
    unknown_thread,
    version_check,
)
from graph.app.decisions import cmd_approve, cmd_clarify
from graph.app.fork import find_checkpoint, fork_thread_id, parse_edits, plan_fork, seed_fork
from graph.app.hints import Carried, Raw
from graph.app.progress import Progress
from graph.app.read_commands import cmd_history, cmd_show, cmd_threads
from graph.app.runtime import open_runtime, open_store
from graph.app.scenarios import SCENARIOS
from graph.trace import THREAD_ID
from workers.errors import MusterError


async def cmd_run(args: argparse.Namespace) -> int:
    options = run_options(args)
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
                    resume = Carried.from_args(args).command("resume", thread_id)
                    follow = Carried.from_args(args).command(
                        "follow-up", thread_id, Raw('"<message>"')
                    )
                    hint = (
                        f"send the customer's next message with `{follow}`, or start a new "
                        "run without --thread"
                        if status == "done"
                        else f"continue it with `{resume}`"
                    )
                    raise MusterError(f"thread {thread_id} already exists ({status}); {hint}")
        started = time.monotonic()
        async with open_runtime(options) as runtime:
            progress = Progress(sys.stderr if args.json else sys.stdout, runtime.services.hub)
            progress.line(servers_line(runtime, started))
            progress.line(f"thread: {thread_id}")
            received = getattr(args, "received_at", None)
            payload = {"request": request, **({"received_at": received} if received else {})}
            return await finish_run(args, runtime, thread_id, payload, progress)


class FollowUpRefused(MusterError):
    """A follow-up message for a thread that cannot take one now (`muster serve` answers
    409): it waits for a human, or has not finished. The strategy is LangGraph's `reject`
    double-texting option: nothing runs and nothing is queued; exit 2."""


def follow_up_problem(
    thread: str, snapshot: StateSnapshot, *, show: str, resume: str
) -> str | None:
    """Why `thread` (at `snapshot`) cannot take a follow-up message now, or None when it
    can: only a thread that has answered (done) starts a new turn. A thread that waits for
    a human (an approval, a clarification) or that has not finished is refused, saying what
    to do first (`show`: where the wait is shown; `resume`: how to finish it); a thread that
    is running is refused before this, by its lease."""
    status = status_of(snapshot)
    if status == "done":
        return None
    if status == "interrupted":
        waits = ", ".join(
            str(i.value.get("kind", "input")) if isinstance(i.value, dict) else "input"
            for i in snapshot.interrupts
        )
        return (
            f"thread {thread} waits for a human ({waits}); a follow-up message is refused "
            f"until that is answered ({show} shows it), then send it again"
        )
    return (
        f"thread {thread} has not finished ({status}); a follow-up message is refused: "
        f"finish it ({resume}), then send it again"
    )


async def cmd_follow_up(args: argparse.Namespace) -> int:
    """`muster follow-up THREAD MESSAGE`: the customer's next message on a thread that has
    answered starts a new turn on it (graph/plan.py: read with the earlier messages, answer
    and actions). A thread that is running, waits for a human or has not finished refuses
    it (`FollowUpRefused`, or the lease's `ThreadBusyError`): exit 2, nothing runs."""
    options = run_options(args)  # checks the message as `run` checks a ticket
    carried = Carried.from_args(args)
    store = options.store
    async with store.hold_thread(args.thread, must_exist=True):  # a running thread: busy
        async with open_store(store) as (graph, saver):  # cheap checks before servers start
            if not await thread_exists(saver, args.thread):
                raise unknown_thread(args, args.thread)
            snapshot = await graph.aget_state(thread_config(args.thread))
            show = f"`{carried.command('show', args.thread, run=False)}`"
            resume = f"`{carried.command('resume', args.thread)}`"
            if problem := follow_up_problem(args.thread, snapshot, show=show, resume=resume):
                raise FollowUpRefused(problem)
        out = sys.stderr if args.json else sys.stdout
        version_check(args.thread, snapshot.values, out)
        message = len(snapshot.values.get("contacts") or [None]) + 1
        started = time.monotonic()
        async with open_runtime(options, must_exist=True) as runtime:
            progress = Progress(out, runtime.services.hub)
            progress.line(servers_line(runtime, started))
            progress.line(f"follow-up on thread {args.thread}: message {message}")
            return await finish_run(args, runtime, args.thread, {"request": args.request}, progress)


async def cmd_resume(args: argparse.Namespace) -> int:
    options = run_options(args)
    out = sys.stderr if args.json else sys.stdout
    store = options.store
    # The lease before the first read: a second `resume` fails here, it never redoes work.
    async with store.hold_thread(args.thread, must_exist=True):
        async with open_store(store) as (graph, saver):  # cheap checks before servers start
            if not await thread_exists(saver, args.thread):
                raise unknown_thread(args, args.thread)
            snapshot = await graph.aget_state(thread_config(args.thread))
            status = status_of(snapshot)
            if status == "done":
                print(f"thread {args.thread} is already done; nothing to resume", file=out)
                return emit_result(args, args.thread, dict(snapshot.values), waiting=False)
            only_paused = bool(snapshot.interrupts) and all(
                isinstance(i.value, dict) and i.value.get("kind") == "paused"
                for i in snapshot.interrupts
            )
            if status == "interrupted" and not only_paused:
                print(f"thread {args.thread} waits for a human", file=out)
                interrupts = [i.value for i in snapshot.interrupts]
                return emit_result(args, args.thread, dict(snapshot.values), True, interrupts)
        version_check(args.thread, snapshot.values, out)
        # A thread waiting on the kill switch resumes its `paused` interrupts: `act` then
        # reads the switch again (graph/kill_switch.py) and waits again if still paused.
        payload: Command | None = (
            Command(resume={i.id: "resume" for i in snapshot.interrupts}) if only_paused else None
        )
        started = time.monotonic()
        async with open_runtime(options, must_exist=True) as runtime:
            progress = Progress(out, runtime.services.hub)
            progress.line(servers_line(runtime, started))
            progress.line(f"resuming thread {args.thread} ({status})")
            return await finish_run(args, runtime, args.thread, payload, progress)


async def cmd_fork(args: argparse.Namespace) -> int:
    options = run_options(args)
    edits = parse_edits(args.edit)
    new_thread = args.new_thread or fork_thread_id(args.thread)
    if not THREAD_ID.match(new_thread):
        raise MusterError(
            f"--new-thread {new_thread!r}: use letters, digits, '.', '_' and '-' (at most 128)"
        )
    listing = Carried.from_args(args).command("history", args.thread, run=False)
    store = options.store
    # Everything is checked before anything is written: the thread, the checkpoint, the
    # reruns and edits; a refused fork leaves no thread behind.
    async with open_store(store) as (graph, saver):
        if not await thread_exists(saver, args.thread):
            raise unknown_thread(args, args.thread)
        history = [s async for s in graph.aget_state_history(thread_config(args.thread))]
        target = find_checkpoint(history, args.checkpoint, listing=listing)
        plan = plan_fork(
            args.thread,
            target,
            thread_id=new_thread,
            edits=edits,
            reruns=args.rerun,
            listing=listing,
        )
    async with store.hold_thread(new_thread):
        async with open_store(store) as (graph, saver):
            if await thread_exists(saver, new_thread):
                raise MusterError(f"thread {new_thread} already exists; pick another --new-thread")
        started = time.monotonic()
        async with open_runtime(options) as runtime:
            await seed_fork(runtime.graph, runtime.saver, plan, new_thread)
            progress = Progress(sys.stderr if args.json else sys.stdout, runtime.services.hub)
            progress.line(servers_line(runtime, started))
            reruns = f"; rerun: {', '.join(plan.reruns)}" if plan.reruns else ""
            edited = f"; edited: {', '.join(plan.edited)}" if plan.edited else ""
            progress.line(
                f"forked thread: {new_thread} (from {args.thread} at checkpoint "
                f"{plan.checkpoint_id}, step {plan.step}{reruns}{edited})"
            )
            services = runtime.for_thread(new_thread)
            if services.trace is not None:
                services.trace.emit(
                    "forked",
                    source_thread=args.thread,
                    checkpoint_id=plan.checkpoint_id,
                    step=plan.step,
                    rerun=list(plan.reruns),
                    edited=list(plan.edited),
                )
            return await finish_run(args, runtime, new_thread, None, progress, services=services)


RunCommand = Callable[[argparse.Namespace], Coroutine[Any, Any, int]]
"""What runs `muster NAME`: the parsed arguments in, the exit code out."""


def _loaded_when_run(module: str, name: str) -> RunCommand:
    """`module.name`, imported only when the command runs: batch, eval and replay load
    pydantic-evals, the MCP SDK and more, which `muster threads` and `show` never need."""

    async def command(args: argparse.Namespace) -> int:
        run: RunCommand = getattr(import_module(module), name)
        return await run(args)

    command.__name__ = command.__qualname__ = name
    return command


cmd_batch = _loaded_when_run("graph.app.batch", "cmd_batch")
cmd_eval = _loaded_when_run("graph.app.eval", "cmd_eval")
cmd_replay = _loaded_when_run("graph.app.replay", "cmd_replay")
cmd_pause = _loaded_when_run("graph.app.control", "cmd_pause")
cmd_resume_all = _loaded_when_run("graph.app.control", "cmd_resume_all")
cmd_cancel = _loaded_when_run("graph.app.control", "cmd_cancel")
cmd_delete = _loaded_when_run("graph.app.retention", "cmd_delete")
cmd_purge = _loaded_when_run("graph.app.retention", "cmd_purge")
cmd_serve = _loaded_when_run("graph.app.serve.command", "cmd_serve")  # FastAPI loads only here

COMMANDS = {
    "run": cmd_run,
    "resume": cmd_resume,
    "follow-up": cmd_follow_up,
    "approve": cmd_approve,
    "clarify": cmd_clarify,
    "threads": cmd_threads,
    "show": cmd_show,
    "history": cmd_history,
    "fork": cmd_fork,
    "batch": cmd_batch,
    "eval": cmd_eval,
    "replay": cmd_replay,
    "pause": cmd_pause,
    "resume-all": cmd_resume_all,
    "cancel": cmd_cancel,
    "delete": cmd_delete,
    "purge": cmd_purge,
    "serve": cmd_serve,
}
