"""`muster batch`: run a queue of tickets, one thread per ticket, over one set of MCP sessions.

The command validates everything first (the tickets file, `--concurrency`, `--out` and the
run options), then sorts the tickets by what their threads need, runs the rest and reports.
The whole batch shares one `open_runtime`: one checkpoint store, one `ToolHub` with one
session per server, one model factory; an `asyncio.Semaphore` bounds how many tickets run at
once (`--concurrency`, default 16). SIGINT/SIGTERM drain the tickets in flight.

The parts, one concept each: `batch_tickets` (the file and each ticket's thread id),
`batch_outcomes` (where a ticket stands), `batch_queue` (what each ticket needs, running them)
and `batch_report` (progress, summary, exit code, answers file).

Finished tickets are appended to the answers file (`--out`, default `<stem>.answers.jsonl` next
to the checkpoint store) as they finish, for visibility while the batch runs or after a crash; at
the end the file is rewritten atomically from the thread states, in ticket order.

If a batch dies mid-queue, `muster batch FILE --resume` skips the tickets that are done or
waiting on a human, resumes the ones in progress or failed, and runs the rest. Without
`--resume` a batch whose threads already exist is refused.

Exit code: 0 if every ticket is complete, 4 if any failed, otherwise 3 if any is partial,
degraded or needs a human; 6 if SIGINT/SIGTERM stopped the batch cleanly (resume it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from graph.app.batch_outcomes import read_result
from graph.app.batch_queue import MAX_LANES, existing_threads, plan_batch, run_batch
from graph.app.batch_report import (
    BatchProgress,
    default_out_path,
    print_summary,
    summarize,
    write_jsonl_atomically,
)
from graph.app.batch_tickets import Ticket, batch_name, load_tickets
from graph.app.flags import BATCH_CONCURRENCY
from graph.app.hints import Carried
from graph.app.options import ExitCode, MusterOptions
from graph.app.runtime import open_runtime, open_store
from graph.app.signals import SignalDrain
from graph.domains import load_domain
from workers.errors import ConfigError

DEFAULT_CONCURRENCY = BATCH_CONCURRENCY
"""Tickets running at once unless `--concurrency` says otherwise."""
MAX_CONCURRENCY = 1024
"""The most `--concurrency` accepts."""


def parse_concurrency(value: object) -> int:
    """--concurrency as a whole number in 1..MAX_CONCURRENCY."""
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ConfigError(f"--concurrency must be a whole number, got {value!r}") from None
    if not 1 <= number <= MAX_CONCURRENCY:
        raise ConfigError(f"--concurrency must be between 1 and {MAX_CONCURRENCY}, got {number}")
    return number


def _out_path(args: argparse.Namespace, tickets_path: Path, store: Path | str) -> Path:
    out = Path(args.out).expanduser() if getattr(args, "out", None) else None
    if out is None:
        out = default_out_path(tickets_path, store)
        if not isinstance(store, Path):  # PostgreSQL: the project's var/ may not exist yet
            out.parent.mkdir(parents=True, exist_ok=True)
    if out.resolve() == tickets_path.resolve():
        raise ConfigError(f"--out {out} is the tickets file itself; choose another path")
    if out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file path")
    if not out.parent.is_dir():
        raise ConfigError(f"--out {out}: folder {out.parent} does not exist")
    if not os.access(out.parent, os.W_OK):
        raise ConfigError(f"--out {out}: folder {out.parent} is not writable")
    return out


@dataclass(frozen=True, kw_only=True)
class BatchOptions:
    """`muster batch` arguments, validated before any server starts."""

    path: Path
    """The tickets file."""
    tickets: list[Ticket]
    """Its tickets, in file order."""
    out: Path
    """The answers file (`--out`, else `<stem>.answers.jsonl` next to the tickets file)."""
    concurrency: int
    """Tickets running at once (`--concurrency`)."""
    resume: bool
    """Finish a batch that stopped (`--resume`) rather than refuse existing threads."""
    db_exists: bool
    """Whether the checkpoint store was there before this batch (threads may exist; always
    on PostgreSQL)."""
    run: MusterOptions
    """What every ticket's run is set up with (`--db`, `--servers`, `--model`, ...)."""
    as_json: bool
    """Print the summary as JSON (`--json`); progress then goes to stderr."""
    carried: Carried
    """The options in force, for the commands the summary prints (`--db`, `--model`, ...)."""


def batch_options(args: argparse.Namespace) -> BatchOptions:
    """Validate the arguments and read the tickets file (raises `ConfigError`, exit 2)."""
    concurrency = parse_concurrency(getattr(args, "concurrency", DEFAULT_CONCURRENCY))
    path = Path(args.tickets).expanduser()
    run = MusterOptions.from_args(args)
    tickets = load_tickets(path, load_domain(run.domain).received_field)
    run.store.check()
    return BatchOptions(
        path=path,
        tickets=tickets,
        out=_out_path(args, path, run.store.location),
        concurrency=concurrency,
        resume=bool(getattr(args, "resume", False)),
        db_exists=run.store.may_hold_threads(),
        run=run,
        as_json=bool(getattr(args, "json", False)),
        carried=Carried.from_args(args),
    )


async def cmd_batch(args: argparse.Namespace) -> int:
    """`muster batch FILE [--concurrency N] [--resume] [--out PATH]`; returns the exit code."""
    started = time.monotonic()
    opts = batch_options(args)
    path, tickets, out = opts.path, opts.tickets, opts.out
    name = batch_name(path)
    stream = sys.stderr if opts.as_json else sys.stdout

    existing = await existing_threads(opts.run.store, opts.db_exists, path, tickets)
    plan = plan_batch(path, tickets, existing, opts.resume, opts.carried)
    progress = BatchProgress(stream, len(tickets))
    todo = len(plan.run) + len(plan.resume)
    progress.line(
        f"batch {name}: {len(tickets)} tickets, {len(plan.skip)} already finished, "
        f"{len(plan.resume)} to resume, {len(plan.run)} to run, concurrency {opts.concurrency}"
    )
    # The answers file shows the finished tickets at once; later ones are appended.
    by_id = {r.ticket.id: r for r in plan.skip}
    write_jsonl_atomically(out, (by_id[t.id].record() for t in tickets if t.id in by_id))
    progress.start(plan.skip)
    drained = False
    try:
        if todo:
            async with (
                open_runtime(opts.run) as rt,
                rt.lanes(min(opts.concurrency, todo, MAX_LANES)) as lanes,
            ):
                with SignalDrain(progress.line, in_flight="the tickets in flight") as drain:
                    ran, drained = await run_batch(
                        rt,
                        path,
                        plan,
                        concurrency=opts.concurrency,
                        progress=progress,
                        out=out,
                        controls=drain.controls,
                        stop=drain.stop,
                        lanes=lanes,
                    )
                drained = drained or drain.stop.is_set()
                errors = {r.ticket.id: r.error for r in ran if r.error}
                final = [await read_result(rt.graph, path, t, errors.get(t.id)) for t in tickets]
        else:
            async with open_store(opts.run.store) as (graph, _saver):
                final = [await read_result(graph, path, t) for t in tickets]
    finally:
        progress.close()
    write_jsonl_atomically(out, (r.record() for r in final))
    finished = {r.ticket.id for r in final if r.outcome != "unfinished"}
    summary = summarize(
        name,
        final,
        ran=sum(t.id in finished for t in plan.run),
        resumed=sum(t.id in finished for t in plan.resume),
        skipped=len(plan.skip),
        out=out,
        wall_s=time.monotonic() - started,
        drained=drained,
        carried=opts.carried,
    )
    if opts.as_json:
        print(json.dumps(summary.as_dict(), indent=2))
    else:
        print_summary(summary, sys.stdout)
    if summary.exit_code == ExitCode.DRAINED:
        resume = opts.carried.command("batch", str(path), "--resume", batch=True)
        print(
            f"stopped before every ticket finished ({summary.unfinished} unfinished); state "
            f"is saved. Continue with: {resume}",
            file=sys.stderr,
        )
    return summary.exit_code
