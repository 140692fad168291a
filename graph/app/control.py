"""`muster pause`, `muster resume-all` and `muster cancel THREAD`: an operator's stops.

`pause` flips the store's kill switch (`graph/kill_switch.py`): from then on no process on
that store executes an approved action; threads that reach one wait (interrupt kind
`paused`) until `resume-all` and `muster resume THREAD`. `cancel` ends one thread cleanly:
it takes the thread's lease (a thread another process is running is refused, with who runs
it), records the cancellation in the audit log, and writes `stop_reason` into the thread as
if its `act` step had just run, so the graph's own routing goes straight to `synthesize`: no
approval is asked, no action runs, no new work starts, and the answer says it was cancelled.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from checkpoints.store import CheckpointStore, checkpoint_store
from checkpoints.threads import status_of, thread_config, thread_exists
from graph.app.command_run import emit_result, finish_run, run_options, unknown_thread
from graph.app.progress import Progress
from graph.app.runtime import open_runtime, open_store
from graph.approvers import APPROVERS_ENV, approvers_path, load_approvers
from graph.kill_switch import flip, paused
from workers.errors import MusterError

CANCELLED = "cancellation"
"""How a cancelled thread's `stop_reason` begins: "stopped early by the cancellation by …"."""


async def write_cancellation(
    graph: Any, store: CheckpointStore, thread_id: str, *, by: str, why: str | None
) -> str:
    """Audit the cancellation and write its `stop_reason` into the thread as if `act` had
    just run (the graph then routes to the answer); returns the stop reason. The caller
    holds the thread's lease. Shared by `muster cancel` and `muster serve`."""
    reason = f"{CANCELLED} by {by}" + (f": {why}" if why else "")
    async with await store.open_audit() as audit:
        await audit.record(thread_id=thread_id, event="cancel", actor=by, digest="", result=reason)
    await graph.aupdate_state(thread_config(thread_id), {"stop_reason": reason}, as_node="act")
    return reason


def _operator(args: argparse.Namespace) -> str:
    """Who acts: `--by`, else the OS user (with $MUSTER_ACCOUNTS: $MUSTER_TOKEN's account);
    either must be listed in the approvers file."""
    from graph.app.serve.accounts import cli_identity  # standard library only

    by, _roles = cli_identity(args.by)
    approvers = load_approvers()
    if unknown := approvers.unknown_approver(by):
        raise MusterError(
            f"--by {unknown}; name one with --by, or add it to {approvers_path()} "
            f"(${APPROVERS_ENV} names another file)"
        )
    return by


async def cmd_pause(args: argparse.Namespace) -> int:
    by = _operator(args)
    async with await checkpoint_store(args.db).open_audit() as audit:
        await flip(audit, pause=True, by=by, reason=args.reason or "")
        state = await paused(audit)
    assert state is not None
    print(f"{state.line()}; no approved action runs until `muster resume-all`")
    return 0


async def cmd_resume_all(args: argparse.Namespace) -> int:
    by = _operator(args)
    async with await checkpoint_store(args.db).open_audit() as audit:
        was = await paused(audit)
        await flip(audit, pause=False, by=by, reason=args.reason or "")
    if was is None:
        print("side effects were not paused; nothing changed")
    else:
        print(
            f"side effects resumed by {by} (paused by {was.by}); threads waiting on the pause "
            "continue with `muster resume THREAD`"
        )
    return 0


async def cmd_cancel(args: argparse.Namespace) -> int:
    by = _operator(args)
    options = run_options(args)
    store = options.store
    async with store.hold_thread(args.thread, must_exist=True):
        async with open_store(store) as (graph, saver):
            if not await thread_exists(saver, args.thread):
                raise unknown_thread(args, args.thread)
            snapshot = await graph.aget_state(thread_config(args.thread))
            if status_of(snapshot) == "done":
                print(f"thread {args.thread} is already done; nothing to cancel")
                return emit_result(args, args.thread, dict(snapshot.values), waiting=False)
        async with open_runtime(options, must_exist=True) as runtime:
            reason = await write_cancellation(
                runtime.graph, store, args.thread, by=by, why=args.reason
            )
            progress = Progress(sys.stderr if args.json else sys.stdout, runtime.services.hub)
            progress.line(f"thread {args.thread}: {reason}; writing its answer")
            return await finish_run(args, runtime, args.thread, None, progress)
