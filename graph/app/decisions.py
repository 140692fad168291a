"""`muster approve` and `muster clarify`: the checks on a decision and the resume that answers a
thread's pending interrupt, shared with `muster serve` (graph/app/serve/)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, Literal

from langgraph.types import Command

from checkpoints.store import Saver, checkpoint_store
from checkpoints.threads import thread_config, thread_exists
from graph.app.command_run import (
    finish_run,
    run_options,
    servers_line,
    unknown_thread,
    version_check,
)
from graph.app.hints import Carried
from graph.app.pending import NothingPendingError, pending_answer
from graph.app.progress import Progress
from graph.app.runtime import Graph, open_runtime, open_store
from graph.approvers import (
    APPROVERS_ENV,
    Approver,
    approvers_path,
    digest_prefix_problem,
    digest_problem,
    load_approvers,
)
from workers.errors import MusterError

DecisionCheck = Literal["approver", "digest_format", "digest", "edit", "role", "decided"]
"""Which of `muster approve`'s checks refused a decision, in the order they are made."""


class DecisionRefused(MusterError):
    """A decision refused by one of `muster approve`'s checks before it reaches the graph;
    the approval stays pending. `check` says which (`muster serve` picks its status)."""

    def __init__(self, message: str, check: DecisionCheck) -> None:
        super().__init__(message)
        self.check: DecisionCheck = check


async def _answer_interrupt(args: argparse.Namespace, kind: str, value: Any) -> int:
    """Resume a thread's pending `kind` interrupt with `value`: on a fleet's thread, by
    queueing the resume for any worker (graph/app/fleet.py), else in this process."""
    from graph.app.fleet import answer_on_fleet  # lazy: loads Procrastinate only here

    if (queued := await answer_on_fleet(args, kind, value)) is not None:
        return queued
    options = run_options(args)
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
            return await finish_run(args, runtime, args.thread, command, progress)


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
