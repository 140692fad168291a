"""Where a ticket's CPU goes: the Black Friday queue at concurrency 1, by phase.

Run: `.venv/bin/python bench/cpu_profile.py [--repeats N] [--top N] [--baseline DIR [--pairs N]]
[--dump FILE]` (a benchmark, never a test; not `profile.py`: in `bench/` that name would
shadow the standard library module cProfile imports, and break `bench/batch.py`).

Each run opens a fresh runtime as `muster batch` does (`open_runtime`, one lane, `run_batch`):
real stdio MCP servers, `AsyncSqliteSaver` on a fresh temporary file, a fresh orders database
(`MUSTER_ORDERS_DB`), the offline model with no delay, so the queue is pure CPU plus I/O waits.
The clock covers the queue only, after the servers are up. Nothing of Muster's is patched:
the script only calls it, and watches with the profiler.

1. `--repeats` plain runs (default 3): process CPU time over the queue ÷ tickets, the headline
   (the fastest run is the least disturbed on a shared machine). Split into the event loop's
   thread and the other threads of this process (their CPU clocks, per thread). The MCP
   servers are other processes and are not counted.
2. One run under cProfile (event loop thread only, on its CPU clock, so waiting costs
   nothing). Each function's own time goes to a phase by the module it is in
   (`harness.PHASES`, shared with bench/fleet.py); a function of no phase (a library helper,
   a builtin) passes its time up to its callers in proportion to what each caller spent in
   it, until it reaches a function that has one: the innermost phase on the call path wins
   (json.loads called from domains/support/facts_read.py is synthesis; a regular expression
   run from workers/packet_prompt.py is the worker loop). A coroutine is called by whatever
   resumed it, so a node's own time lands in its own module, and work no phase claims lands
   in "LangGraph pregel" (its tasks) or "other" (the event loop itself).
   cProfile makes Python calls about 4x dearer, so the table shows each phase's share of the
   profiled time, and ms per ticket as that share of the best plain run's event loop CPU.
   "calls" per ticket count coroutine resumptions as calls.

`--baseline DIR` measures another checkout's code (e.g. `git archive REF | tar -x -C DIR`)
against this one's: each side runs as a child process of this same script with
`MUSTER_BENCH_CODE` naming its code (the servers, the tickets and this script are this
checkout's), as `--pairs` interleaved pairs (baseline, then this checkout; default 3), each
pair's CPU ratio and the median printed; then one profiled run of each for the phase table.
Each child runs the queue once uncounted first: the first queue in a process pays one-time
costs (the support reader's model and caches) that would swamp the difference.
DIR must have the entry points this script calls (`open_runtime(servers_on_demand=...)`,
`runtime.lanes`, `run_batch(lanes=...)`). `--dump FILE` keeps the raw stats.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import itertools
import json
import os
import pstats
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import harness  # bench/, beside this script: puts the project first on sys.path
from harness import (
    BY_MODULE,
    PHASE_NAMES,
    PROJECT,
    ROOT,
    SITE,
    Attribution,
    Func,
    load_average,
    process_cpu,
    short,
    split_label,
)

WORK = harness.sandbox("muster-bench-profile-")

from freezing import add_freeze_flag, freeze_note  # noqa: E402 - bench/, beside this script

from graph.app.batch_queue import BatchPlan, run_batch  # noqa: E402 - after the environment
from graph.app.batch_report import BatchProgress  # noqa: E402
from graph.app.batch_tickets import load_tickets  # noqa: E402
from graph.app.runtime import open_runtime  # noqa: E402
from workers.models import load_model_factory  # noqa: E402

TICKETS = ROOT / "examples" / "black_friday.jsonl"
MODEL = "offline"
TARGET_MS = 20.0
RUN_IDS = itertools.count(1)
MODULE_ROWS = 6
"""Modules shown under each catch-all phase (`harness.BY_MODULE`)."""
WIDTH = 40
"""The phase table's first column."""


def thread_cpu() -> dict[int, float]:
    """CPU seconds of every live thread of this process but the current one, by ident."""
    clocks: dict[int, float] = {}
    for thread in threading.enumerate():
        if thread is threading.current_thread() or thread.ident is None:
            continue
        try:
            clocks[thread.ident] = time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
        except (OSError, ProcessLookupError):
            continue
    return clocks


async def one_run(profile: cProfile.Profile | None = None) -> dict[str, Any]:
    """The whole queue once at concurrency 1, on fresh databases."""
    run = next(RUN_IDS)
    tickets = load_tickets(TICKETS)
    os.environ["MUSTER_ORDERS_DB"] = str(WORK / f"orders-{run}.sqlite")  # before servers start
    db = WORK / f"run-{run}.sqlite"
    progress = BatchProgress(io.StringIO(), len(tickets))
    async with (
        open_runtime(db=db, models=load_model_factory(MODEL), servers_on_demand=False) as runtime,
        runtime.lanes(1) as lanes,
    ):
        threads0 = thread_cpu()
        cpu0, main0, wall0 = process_cpu(), time.thread_time(), time.perf_counter()
        if profile is not None:
            profile.enable()
        results, _ = await run_batch(
            runtime,
            TICKETS,
            BatchPlan(run=list(tickets)),
            concurrency=1,
            progress=progress,
            lanes=lanes,
        )
        if profile is not None:
            profile.disable()
        wall = time.perf_counter() - wall0
        cpu, main = (process_cpu() - cpu0).own, time.thread_time() - main0
        threads1 = thread_cpu()
    unfinished = [r.ticket.id for r in results if r.outcome in ("unfinished", "failed")]
    if len(results) != len(tickets) or unfinished:
        raise SystemExit(f"not every ticket finished: {unfinished}")
    others = sum(threads1[t] - threads0.get(t, 0.0) for t in threads1)
    return {"n": len(tickets), "wall": wall, "cpu": cpu, "main": main, "threads": others}


async def profiled_phases(dump: Path | None) -> tuple[dict[str, float], pstats.Stats]:
    """One queue under cProfile: each phase's share of the event loop thread's CPU (and, for
    the catch-all phases, each module's: "phase | module" labels)."""
    profile = cProfile.Profile(time.thread_time_ns, 1e-9)  # CPU, not time spent waiting
    await one_run(profile)
    stats = pstats.Stats(profile)
    if dump:
        stats.dump_stats(dump)  # for `pstats` / snakeviz: print_callers() and the like
    return Attribution(stats, modules=True).shares(), stats


def print_phases(columns: dict[str, tuple[dict[str, float], dict[str, Any]]]) -> None:
    """The phase table: per column, each phase's share and ms per ticket (share of the plain
    run's event loop thread CPU), then the other threads, measured directly."""
    head = "".join(f" {label + ' %':>9} {label + ' ms':>10}" for label in columns)
    print(f"  {'phase (event loop thread)':<{WIDTH}}{head}")
    first = next(iter(columns.values()))[0]
    names: list[str] = []
    for phase in PHASE_NAMES:
        names.append(phase)
        if phase in BY_MODULE:
            mine = [k for k in first if k != phase and split_label(k)[0] == phase]
            mine.sort(key=lambda k: -first[k])
            names.extend(mine[:MODULE_ROWS])
    for name in names:
        cells = ""
        for shares, run in columns.values():
            share = shares.get(name, 0.0)
            main_ms = run["main"] * 1000 / run["n"]
            cells += f" {100 * share:8.1f}% {share * main_ms:10.2f}"
        label = name if split_label(name)[1] is None else "    " + str(split_label(name)[1])
        print(f"  {label:<{WIDTH}.{WIDTH}}{cells}")
    cells = "".join(
        f" {'':>9} {run['threads'] * 1000 / run['n']:10.2f}" for _, run in columns.values()
    )
    print(f"  {'other threads':<{WIDTH}}{cells}")
    cells = "".join(f" {'':>9} {run['cpu'] * 1000 / run['n']:10.2f}" for _, run in columns.values())
    print(f"  {'CPU per ticket':<{WIDTH}}{cells}")


def per_ticket(run: dict[str, Any]) -> str:
    n = run["n"]
    return (
        f"CPU {run['cpu'] * 1000 / n:5.1f} ms/ticket (event loop thread "
        f"{run['main'] * 1000 / n:5.1f}, other threads {run['threads'] * 1000 / n:4.1f})"
    )


# --- --baseline: two checkouts' code, each in a child process of this script -----------------


def child(code: Path, kind: str, args: argparse.Namespace) -> dict[str, Any]:
    """This script as a child (`--child plain|profiled`) on `code`'s project code: the JSON
    its last output line carries."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", kind]
    if args.no_freeze:
        argv.append("--no-freeze")
    done = subprocess.run(
        argv,
        cwd=ROOT,  # the MCP servers are this checkout's (`python -m servers.X` from here)
        env={**os.environ, "MUSTER_BENCH_CODE": str(code)},
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def against_baseline(args: argparse.Namespace) -> None:
    """`--baseline DIR`: interleaved pairs (baseline, this checkout), then one profiled run
    of each."""
    baseline = args.baseline.resolve()
    if not (baseline / "graph" / "app" / "runtime.py").is_file():
        raise SystemExit(f"--baseline {baseline}: not a Muster checkout (no graph/app/runtime.py)")
    here = harness.CODE
    print(f"baseline {baseline} against this checkout {here}, {args.pairs} interleaved pairs:")

    def show_pair(index: int, before: dict[str, Any], after: dict[str, Any], ratio: float) -> None:
        print(f"  pair {index + 1}: baseline {per_ticket(before)}")
        print(f"          this     {per_ticket(after)}; this / baseline {ratio:.3f}")

    found = harness.pairs(
        lambda: child(baseline, "plain", args),
        lambda: child(here, "plain", args),
        args.pairs,
        ratio=lambda before, after: after["cpu"] / before["cpu"],
        each=show_pair,
    )
    print(f"  this / baseline, CPU per ticket: {found.summary(3)}")
    before_run = min(found.a, key=lambda r: r["cpu"])
    after_run = min(found.b, key=lambda r: r["cpu"])
    before = child(baseline, "profiled", args)
    after = child(here, "profiled", args)
    print("\nphases (one profiled run each; ms = share of each side's best plain run's CPU):")
    print_phases({"before": (before, before_run), "after": (after, after_run)})


async def child_main(kind: str) -> None:
    """`--child`: one plain or one profiled run, printed as one JSON line (the last), after
    one run not counted: the first queue in a process pays one-time costs (the support
    reader's model and caches, first imports) that a plain run among `--repeats` does not."""
    await one_run()
    if kind == "plain":
        print(json.dumps(await one_run()))
    else:
        shares, _ = await profiled_phases(None)
        print(json.dumps(shares))


async def main(args: argparse.Namespace) -> None:
    print(
        f"profile bench: {TICKETS.name} at concurrency 1, model {MODEL}, "
        f"load average {load_average()}"
    )
    plain = [await one_run() for _ in range(args.repeats)]
    best_run = min(plain, key=lambda r: r["cpu"])
    n = best_run["n"]
    for r in plain:
        print(f"  plain run: {r['wall']:5.2f} s wall, {per_ticket(r)}")
    print(
        f"CPU per ticket: {best_run['cpu'] * 1000 / n:.1f} ms (best of {len(plain)}; "
        f"target <= {TARGET_MS:.0f} ms)"
    )
    shares, stats = await profiled_phases(args.dump)
    print("\nphases (one profiled run; ms = share of the best plain run's CPU):")
    print_phases({"now": (shares, best_run)})
    table: dict[Func, Any] = stats.stats  # type: ignore[attr-defined]
    if args.top:
        _, per_function = Attribution(stats).phases()
        print(f"\ntop {args.top} functions by own time (profiled ms/ticket, phase):")
        ranked = sorted(per_function.items(), key=lambda item: -item[1][1])[: args.top]
        for func, (phase, own_s) in ranked:
            calls = table[func][1]
            line = f"  {own_s * 1000 / n:6.2f}  {calls / n:7.1f} calls  {phase:<18.18}"
            print(f"{line} {short(func)}")
    if args.cumulative:
        print(f"\ntop {args.cumulative} project functions by cumulative time (profiled):")
        project = [f for f in table if f[0].startswith(PROJECT) and SITE not in f[0]]
        project.sort(key=lambda f: -table[f][3])
        for func in project[: args.cumulative]:
            cum_s, calls = table[func][3], table[func][1]
            print(f"  {cum_s * 1000 / n:6.2f}  {calls / n:7.1f} calls  {short(func)}")
    print(f"\nload average now {os.getloadavg()[0]:.2f}; run data: {WORK}")


def _count(value: str) -> int:
    if not re.fullmatch(r"\d+", value):
        raise argparse.ArgumentTypeError("a whole number")
    return int(value)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="CPU per ticket by phase, concurrency 1.")
    parser.add_argument("--repeats", type=_count, default=3, help="plain runs (default 3)")
    parser.add_argument("--top", type=_count, default=25, help="functions to list")
    parser.add_argument(
        "--cumulative", type=_count, default=0, help="project functions by cumulative"
    )
    parser.add_argument(
        "--baseline", type=Path, help="another checkout's code to measure against this one"
    )
    parser.add_argument(
        "--pairs", type=_count, default=3, help="--baseline: interleaved pairs (default 3)"
    )
    parser.add_argument("--dump", type=Path, help="also write the raw cProfile stats here")
    parser.add_argument("--child", choices=("plain", "profiled"), help=argparse.SUPPRESS)
    add_freeze_flag(parser)
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    if args.child:
        freeze_note(args.no_freeze)
        asyncio.run(child_main(args.child))
    elif args.baseline is not None:
        frozen = "left in the collector's sight" if args.no_freeze else "frozen out of the GC"
        print(
            f"profile bench, --baseline: load average {load_average()}; children's imports {frozen}"
        )
        against_baseline(args)
        print(f"\nload average now {os.getloadavg()[0]:.2f}")
    else:
        print(freeze_note(args.no_freeze))
        asyncio.run(main(args))
