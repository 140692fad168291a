"""Batch benchmark: the 40-ticket Black Friday queue at concurrency 16 and at concurrency 1.

Run: `.venv/bin/python bench/batch.py [--profile]` (a benchmark, never a test).

Both runs happen in this one process, each on a fresh temporary checkpoint database and its own
`open_runtime` (real stdio MCP servers, `AsyncSqliteSaver` on a file), with the offline model at
100 ms a turn (`offline:100`). The clock covers the queue only: `run_batch` from the first
ticket to the last, after the servers are up (starting them costs the same in both runs and is
printed apart). A ticket that stops at an approval or a clarification interrupt counts as
finished: `stream_run` returns when the thread pauses.

Besides wall time it prints this process's CPU time over the queue. On this kind of machine
the concurrent run is bounded by CPU, not by the 100 ms sleeps: when CPU time is close to wall
time, the event loop is busy the whole run and more concurrency cannot help. `--profile` runs
the concurrency-16 queue once more under cProfile and prints the top functions by cumulative
and by own time, to show where that CPU goes; `--sleep-only` also times an asyncio.gather of
the same model sleeps, the floor a run at concurrency 16 could reach.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

WORK = Path(tempfile.mkdtemp(prefix="muster-bench-batch-"))
# Every server and store this script starts points inside WORK; set before any server starts.
os.environ["MUSTER_ORDERS_DB"] = str(WORK / "orders.sqlite")
os.environ["MUSTER_CALL_LOG"] = str(WORK / "calls.jsonl")
os.environ["MUSTER_TRACE_DIR"] = str(WORK / "traces")
os.environ["MUSTER_DB"] = str(WORK / "default.sqlite")
os.environ["MUSTER_POLICY_MODE"] = "healthy"

from graph.batch import (  # noqa: E402 - after the environment is set
    BatchPlan,
    BatchProgress,
    load_tickets,
    run_batch,
    summarize,
)
from graph.runner import open_runtime  # noqa: E402
from workers.models import load_model_factory  # noqa: E402

TICKETS = ROOT / "examples" / "black_friday.jsonl"
MODEL = "offline:100"
TARGET = 10.0


async def one_run(concurrency: int, label: str, profile: cProfile.Profile | None = None) -> dict:
    tickets = load_tickets(TICKETS)
    db = WORK / f"{label}.sqlite"  # fresh store for every run
    progress = BatchProgress(io.StringIO(), len(tickets))
    opened = time.perf_counter()
    async with open_runtime(db=db, models=load_model_factory(MODEL)) as runtime:
        startup = time.perf_counter() - opened
        plan = BatchPlan(run=list(tickets))
        if profile is not None:
            profile.enable()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        results, drained = await run_batch(
            runtime, TICKETS, plan, concurrency=concurrency, progress=progress
        )
        wall = time.perf_counter() - wall0
        cpu = time.process_time() - cpu0
        if profile is not None:
            profile.disable()
    summary = summarize(
        TICKETS.stem,
        results,
        ran=len(results),
        resumed=0,
        skipped=0,
        out=db,
        wall_s=wall,
        drained=drained,
    )
    unfinished = [r.ticket.id for r in results if r.outcome in ("unfinished", "failed")]
    if len(results) != len(tickets) or unfinished:
        raise SystemExit(f"{label}: not every ticket finished: {unfinished}")
    return {
        "label": label,
        "concurrency": concurrency,
        "wall": wall,
        "cpu": cpu,
        "startup": startup,
        "counts": summary.counts,
    }


async def sleep_floor(concurrency: int, turns_per_ticket: int = 2, n: int = 40) -> float:
    """The same tickets as pure sleeps: each ticket's workers run in parallel, so a ticket is
    at least `turns_per_ticket` model turns long."""
    semaphore = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with semaphore:
            for _ in range(turns_per_ticket):
                await asyncio.sleep(0.1)

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    return time.perf_counter() - started


def show(run: dict) -> None:
    print(
        f"concurrency {run['concurrency']:>2}: queue {run['wall']:6.2f} s wall, "
        f"{run['cpu']:6.2f} s CPU in this process ({100 * run['cpu'] / run['wall']:.0f}% of "
        f"wall), {run['wall'] / 40 * 1000:6.0f} ms/ticket; servers up in {run['startup']:.2f} s; "
        f"{run['counts']}"
    )


async def main(args: argparse.Namespace) -> None:
    print(f"batch bench: {TICKETS.name}, 40 tickets, model {MODEL}, {os.cpu_count()} CPUs")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    fast = await one_run(16, "c16")
    show(fast)
    slow = await one_run(1, "c1")
    show(slow)
    speedup = slow["wall"] / fast["wall"]
    verdict = "meets" if speedup >= TARGET else "misses"
    print(f"speed-up: {speedup:.1f}x ({verdict} the {TARGET:.0f}x target)")
    print(
        f"CPU-bound ceiling: c1 wall / c16 CPU = {slow['wall'] / fast['cpu']:.1f}x "
        f"(no schedule of this process can beat its own CPU time)"
    )
    if args.sleep_only:
        floor16, floor1 = await sleep_floor(16), await sleep_floor(1)
        print(
            f"sleep-only floor: c16 {floor16:.2f} s, c1 {floor1:.2f} s "
            f"({floor1 / floor16:.1f}x with zero overhead)"
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.profile:
        profile = cProfile.Profile()
        await one_run(16, "c16-profiled", profile)
        for key in ("cumulative", "tottime"):
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats(key).print_stats(25)
            print(f"\n--- cProfile of the concurrency-16 queue, by {key} ---")
            print(out.getvalue())
    print(f"run data: {WORK}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", action="store_true", help="cProfile the c16 queue")
    parser.add_argument("--sleep-only", action="store_true", help="also time the sleep floor")
    asyncio.run(main(parser.parse_args()))
