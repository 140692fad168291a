"""The commands of `muster`: run, resume, approve, clarify, threads, show (and COMMANDS).

Each command validates its options once (`MusterOptions.from_args`) and cheap facts about
the thread (it exists, it waits) before any server starts; then it opens the runtime, runs
the thread with signal draining (`SignalDrain`), prints through `graph.app.render` and
returns an `ExitCode` (`muster --help` lists them). Every command it suggests carries the
options in force (`graph.app.hints`). `muster batch` lives in `graph.app.batch`, `muster
eval` in `graph.app.eval`. This module loads LangGraph and the rest: `graph.app.cli` imports
it only once a command runs, so `muster --help` stays instant.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from collections.abc import Callable, Coroutine, Sequence
from importlib import import_module
from pathlib import Path
from typing import Any, Literal

from langgraph.errors import GraphDrained
from langgraph.runtime import RunControl
from langgraph.types import Command, StateSnapshot

from checkpoints.store import Saver, checkpoint_store
from checkpoints.threads import describe_threads, status_of, thread_config, thread_exists
from graph.app.fork import find_checkpoint, fork_thread_id, parse_edits, plan_fork, seed_fork
from graph.app.hints import Carried, Raw
from graph.app.history import checkpoint_entries, print_history
from graph.app.options import ExitCode, MusterOptions
from graph.app.pending import NothingPendingError, pending_answer
from graph.app.render import Progress, print_result, print_thread, print_threads
from graph.app.runtime import (
    Graph,
    MusterRuntime,
    open_runtime,
    open_store,
    stopped_by,
    stream_run,
)
from graph.app.scenarios import SCENARIOS
from graph.app.signals import SignalDrain
from graph.app.thread_filters import select_threads
from graph.approvers import (
    APPROVERS_ENV,
    Approver,
    approvers_path,
    digest_prefix_problem,
    digest_problem,
    load_approvers,
)
from graph.domains import pack_for_state
from graph.services import Services
from graph.trace import THREAD_ID
from graph.versions import changed_versions, current_versions, resume_check
from workers.errors import MusterError
from workers.model_health import preflight

COMMAND_STARTED = time.monotonic()
"""When this command began (its modules load only once a command runs): `--json`'s
`totals.duration_s` counts from here."""


def emit_result(
    args: argparse.Namespace,
    thread_id: str,
    values: dict[str, Any],
    waiting: bool,
    interrupts: Sequence[Any] = (),
) -> ExitCode:
    """Print the answer (text or JSON) and return the exit code; a waiting thread ends with
    what waits and the command that answers it (`interrupts`: its pending interrupts)."""
    print_result(
        thread_id,
        values,
        waiting=waiting,
        as_json=args.json,
        as_markdown=getattr(args, "markdown", False),
        interrupts=interrupts,
        carried=Carried.from_args(args),
        started=COMMAND_STARTED,
    )
    code = ExitCode.for_run(values, waiting=waiting)
    refused = [
        r for r in values.get("reports") or [] if ExitCode.for_provider(str(r.reason)) is code
    ]
    if refused:  # the one line that says what to fix, where errors go
        print(f"muster: provider error: {refused[0].worker}'s {refused[0].note}", file=sys.stderr)
    return code


class UnknownThreadError(MusterError):
    """The store holds no thread by that id (`muster serve` answers 404)."""


DecisionCheck = Literal["approver", "digest_format", "digest", "edit", "role", "decided"]
"""Which of `muster approve`'s checks refused a decision, in the order they are made."""


class DecisionRefused(MusterError):
    """A decision refused by one of `muster approve`'s checks before it reaches the graph;
    the approval stays pending. `check` says which (`muster serve` picks its status)."""

    def __init__(self, message: str, check: DecisionCheck) -> None:
        super().__init__(message)
        self.check: DecisionCheck = check


def unknown_thread(args: argparse.Namespace, thread_id: str) -> MusterError:
    """The error for a thread the store does not hold, naming the command that lists them."""
    listing = Carried.from_args(args).command("threads", run=False)
    return UnknownThreadError(f"unknown thread {thread_id}; `{listing}` lists them")


def servers_line(runtime: MusterRuntime, started: float) -> str:
    """Which servers are up (and which are down, why), or which start on demand."""
    health = runtime.services.hub.health()
    if not any(state.started for state in health.values()):
        return f"servers start as workers need them: {', '.join(health)}"
    up = [name for name, state in health.items() if state.up]
    down = [f"{name} ({s.last_error or 'down'})" for name, s in health.items() if not s.up]
    line = f"servers up in {time.monotonic() - started:.1f} s: {', '.join(up) or '(none)'}"
    return line + (f"; DOWN: {'; '.join(down)}" if down else "")


def _run_options(args: argparse.Namespace) -> MusterOptions:
    """Validate --servers, --model, --planner and --scenario before anything starts (exit 2)."""
    scenario_name = getattr(args, "scenario", None)
    if scenario_name and scenario_name not in SCENARIOS:
        raise MusterError(
            f"unknown scenario {scenario_name!r}; known: {', '.join(sorted(SCENARIOS))}"
        )
    if scenario_name:
        SCENARIOS[scenario_name].prepare(args)  # its --domain and backend failure modes
    scripted = SCENARIOS[scenario_name].models() if scenario_name else None
    return MusterOptions.from_args(args, models=scripted)


async def _finish(
    args: argparse.Namespace,
    runtime: MusterRuntime,
    thread_id: str,
    payload: dict[str, Any] | Command | None,
    progress: Progress,
    *,
    services: Services | None = None,
) -> int:
    # A refused key, no quota, an unknown model or an endpoint that cannot be reached is one
    # line at once (exit 7 to 10), not a run of failures.
    await preflight(runtime.services.models("worker"))
    control = RunControl()
    # Installed for the rest of the process: a signal after the run is a no-op drain.
    drain = SignalDrain(progress.line, in_flight="work in flight")
    drain.controls.add(control)
    drain.install()
    try:
        async with progress.ticking():
            values = await stream_run(
                runtime, thread_id, payload, on_update=progress, control=control, services=services
            )
    except GraphDrained as drained:
        print(
            f"stopped cleanly ({drained.reason}); state is saved. "
            f"Continue with: {Carried.from_args(args).command('resume', thread_id)}",
            file=sys.stderr,
        )
        return ExitCode.DRAINED
    snapshot = await runtime.graph.aget_state(thread_config(thread_id))
    interrupts = [i.value for i in snapshot.interrupts]
    return emit_result(args, thread_id, values, bool(interrupts), interrupts)


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
            return await _finish(args, runtime, thread_id, {"request": request}, progress)


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
    options = _run_options(args)  # checks the message as `run` checks a ticket
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
            return await _finish(args, runtime, args.thread, {"request": args.request}, progress)


async def cmd_resume(args: argparse.Namespace) -> int:
    options = _run_options(args)
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
            return await _finish(args, runtime, args.thread, payload, progress)


async def _answer_interrupt(args: argparse.Namespace, kind: str, value: Any) -> int:
    """Resume a thread's pending `kind` interrupt with `value`: on a fleet's thread, by
    queueing the resume for any worker (graph/app/fleet.py), else in this process."""
    from graph.app.fleet import answer_on_fleet  # lazy: loads Procrastinate only here

    if (queued := await answer_on_fleet(args, kind, value)) is not None:
        return queued
    options = _run_options(args)
    # The lease before reading the pending interrupt: of two decisions on one thread, the
    # second fails here with a one-line error (ThreadBusyError) and runs nothing.
    store = options.store
    async with store.hold_thread(args.thread, must_exist=True):
        async with open_store(store) as (graph, saver):  # cheap checks before servers start
            await check_waiting(
                graph, saver, args.thread, kind, unknown=unknown_thread(args, args.thread)
            )
        show = Carried.from_args(args).command("show", args.thread, run=False)
        started = time.monotonic()
        async with open_runtime(options, must_exist=True) as runtime:
            command, resume = await answer_command(
                runtime.graph, args.thread, kind, value, where=f"`{show}` shows it"
            )
            progress = Progress(sys.stderr if args.json else sys.stdout, runtime.services.hub)
            progress.line(servers_line(runtime, started))
            progress.line(f"{kind} for thread {args.thread}: {json.dumps(resume, default=str)}")
            return await _finish(args, runtime, args.thread, command, progress)


def version_check(thread: str, values: Any, out: Any) -> None:
    """Before a thread runs on: compare the versions it started on with these, for the pack
    it runs under (`graph.versions`); warn on `out`, or refuse (`MUSTER_VERSION_POLICY`)."""
    pack = pack_for_state(values)
    now = current_versions(str(pack.folder), pack.name)
    warning = resume_check(thread, changed_versions(values.get("versions"), now))
    if warning:
        print(warning, file=out)


async def check_waiting(
    graph: Graph, saver: Saver, thread: str, kind: str, *, unknown: MusterError
) -> None:
    """The cheap checks before answering a thread's `kind` interrupt, made under its lease:
    the store holds the thread (else `unknown` is raised), and it waits for something."""
    if not await thread_exists(saver, thread):
        raise unknown
    snapshot = await graph.aget_state(thread_config(thread))
    if not snapshot.interrupts:
        raise NothingPendingError(f"thread {thread} has no pending {kind}")
    version_check(thread, snapshot.values, sys.stderr)


async def answer_command(
    graph: Graph, thread: str, kind: str, value: Any, *, where: str
) -> tuple[Command, Any]:
    """The `Command` that answers the thread's pending `kind` interrupt with `value` (or what
    `value(interrupt value)` returns: the approval checks), and that resume value; made
    under the thread's lease, right before the run it starts. `muster approve`, `clarify`
    and `muster serve`'s decisions all resume through here."""
    snapshot = await graph.aget_state(thread_config(thread))
    target, resume = await pending_answer(snapshot, kind, value, thread=thread, where=where)
    return Command(resume={target.id: resume}), resume


async def cmd_approve(args: argparse.Namespace) -> int:
    # The same checks the graph's `approve` node makes (graph/approvers.py), made here first
    # so a decision that would not hold fails with one line before any server starts, and
    # the approval stays pending. The graph checks again: the CLI is not trusted alone.
    from graph.app.serve.accounts import cli_identity  # standard library only

    show = Carried.from_args(args).command("show", args.thread, run=False)
    by, roles = cli_identity(args.by)  # with $MUSTER_ACCOUNTS: $MUSTER_TOKEN's account
    decision = approval_decision(
        thread=args.thread,
        by=by,
        roles=roles,
        approved=not args.reject,
        note=args.note or "",
        digest=args.digest,
        db=args.db,
        show=f"`{show}`",
        by_source="--by",
        digest_source="--digest",
        fix_approver=f"name one with --by, or add it to {approvers_path()} "
        f"(${APPROVERS_ENV} names another file)",
    )
    return await _answer_interrupt(args, "approval", decision)


ApprovalValue = Callable[[dict[str, Any]], Coroutine[Any, Any, dict[str, Any]]]
"""Builds the resume value for a pending approval interrupt, checking it first."""


def approval_decision(
    *,
    thread: str,
    by: str,
    approved: bool,
    note: str,
    digest: str | None,
    db: str | Path | None,
    show: str,
    by_source: str,
    digest_source: str,
    fix_approver: str,
    roles: Sequence[str] | None = None,
    args: dict[str, Any] | None = None,
) -> ApprovalValue:
    """`muster approve`'s checks, shared with `muster serve`, in this order: `by` is a known
    approver and the digest given (if any) is well formed, now; then, against the pending
    approval (`pending_answer` calls what this returns, under the thread's lease): the
    digest names it, `by` holds the role its limits need (for an approval), and no other
    decision on it stands in the audit log. A refused check raises `DecisionRefused`.

    The words of the errors are the caller's: `by_source` and `digest_source` name where
    `by` and the digest came from (`--by`, a token), `fix_approver` how to fix an unknown
    approver, `show` where the digest is shown. `roles`: the roles of the authenticated
    account deciding (graph/app/serve/accounts.py), held to the limits beside the approvers
    file's; `args`: the arguments an approval edited, within the file's `edits`."""
    approvers = load_approvers()
    if unknown := approvers.unknown_approver(by):
        raise DecisionRefused(f"{by_source} {unknown}; {fix_approver}", "approver")
    if digest is not None and (problem := digest_prefix_problem(digest)):
        raise DecisionRefused(f"{digest_source}: {problem} ({show} shows it)", "digest_format")

    async def decision(pending: dict[str, Any]) -> dict[str, Any]:
        # The approval carries the digest the human was shown; it is checked against the
        # action again in the graph, so it cannot approve anything else. A digest given
        # binds the decision to what the human read (`muster show`, the API's thread).
        pending_digest = pending["digest"]
        if digest is not None and (problem := digest_problem(digest, pending_digest)):
            raise DecisionRefused(f"{problem}; run {show} again", "digest")
        tool, runs = pending["tool"], pending["args"]
        if approved and args is not None:
            if problem := approvers.edit_problem(tool, runs, args):
                raise DecisionRefused(f"{problem}; the approval stays pending", "edit")
            runs = args
        account = approvers.model_copy(
            update={"approvers": {by: Approver(roles=tuple(roles))}} if roles else {}
        )
        for held in (approvers, account) if approved else ():
            if problem := held.role_problem(by, tool, runs):
                raise DecisionRefused(f"{problem}; the approval stays pending", "role")
        wanted = "approved" if approved else "rejected"
        async with await checkpoint_store(db).open_audit() as audit:
            standing = await audit.decision(thread, pending_digest)
        if standing is not None:
            stood = json.loads(standing.result).get("decision")
            if (stood, standing.actor) != (wanted, by):
                raise DecisionRefused(
                    f"this action was already {stood} by {standing.actor} ({standing.role}); "
                    "the first decision stands",
                    "decided",
                )
        value = {"approved": approved, "digest": pending_digest, "by": by, "note": note}
        return value if args is None or not approved else {**value, "args": args}

    return decision


async def cmd_clarify(args: argparse.Namespace) -> int:
    return await _answer_interrupt(args, "clarification", args.answer)


async def cmd_threads(args: argparse.Namespace) -> int:
    async with open_store(args.db) as (graph, saver):
        infos = await describe_threads(graph, saver)
    stopped = {
        i.thread_id: s for i in infos if i.status == "in progress" if (s := stopped_by(i.thread_id))
    }
    print_threads(
        select_threads(infos, status=args.status, since=args.since),
        as_json=args.json,
        filtered=bool(args.status or args.since),
        stopped=stopped,
    )
    return ExitCode.OK


async def cmd_show(args: argparse.Namespace) -> int:
    async with open_store(args.db) as (graph, saver):
        if not await thread_exists(saver, args.thread):
            raise unknown_thread(args, args.thread)
        config = thread_config(args.thread)
        history = [s async for s in graph.aget_state_history(config)]
        snapshot = await graph.aget_state(config)
        async with await checkpoint_store(args.db).open_audit() as audit:
            audit_rows = await audit.rows(args.thread)
    if getattr(args, "html", None) is not None:
        return write_timeline(args, snapshot, history)
    print_thread(args.thread, snapshot, history, audit_rows, Carried.from_args(args))
    return ExitCode.OK


def write_timeline(
    args: argparse.Namespace, snapshot: StateSnapshot, history: Sequence[StateSnapshot]
) -> int:
    """`muster show THREAD --html [FILE]`: the timeline page (graph/app/timeline_html.py)."""
    from graph.app.timeline_build import thread_timeline  # the page's modules load only here
    from graph.app.timeline_html import timeline_html

    path = Path(args.html or f"{args.thread}.timeline.html")
    timeline = thread_timeline(args.thread, snapshot, history)
    try:
        path.write_text(timeline_html(timeline), encoding="utf-8")
    except OSError as error:
        raise MusterError(f"--html {path}: cannot write it ({error.strerror or error})") from None
    print(f"timeline of thread {args.thread} ({timeline.status}): {path}")
    return ExitCode.OK


async def cmd_history(args: argparse.Namespace) -> int:
    async with open_store(args.db) as (graph, saver):
        if not await thread_exists(saver, args.thread):
            raise unknown_thread(args, args.thread)
        config = thread_config(args.thread)
        history = [s async for s in graph.aget_state_history(config)]
        status = status_of(await graph.aget_state(config))
    entries = checkpoint_entries(history)
    print_history(args.thread, status, entries, as_json=args.json, carried=Carried.from_args(args))
    return ExitCode.OK


async def cmd_fork(args: argparse.Namespace) -> int:
    options = _run_options(args)
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
            return await _finish(args, runtime, new_thread, None, progress, services=services)


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
