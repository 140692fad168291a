"""Batch benchmark: the 40-ticket Black Friday queue at concurrency 16 and at concurrency 1.

Run: `.venv/bin/python bench/batch.py [--pairs N] [--sweep] [--what-if] [--profile]` (a
benchmark, never a test).

The speed-up is measured as interleaved pairs (`--pairs`, default 3): a concurrency-1 run, then
a concurrency-16 run, N times (c1 c16 c1 c16 ...); each pair's ratio, c1 wall / c16 wall, is
printed, and their median is the speed-up compared with the 10x target. The two runs of a
pair follow each other, so a change in the shared machine's load touches both sides of its
ratio more alike than dividing one c1 run by the best of several c16 runs (how this bench
measured it before) did: that took the luckiest c16 run and whatever c1 run it got.

Every run happens in this one process, each on a fresh temporary checkpoint database and its own
`open_runtime` (real stdio MCP servers, `AsyncSqliteSaver` on a file), with the offline model at
100 ms a turn (`offline:100`). The clock covers the queue only: `run_batch` from the first
ticket to the last, after the servers are up (starting them costs the same in every run and is
printed apart). A ticket that stops at an approval or a clarification interrupt counts as
finished: `stream_run` returns when the thread pauses.

Each line also shows what bounds the run:
  CPU      this process's CPU time over the queue (`getrusage`). The graph, the hub's MCP
           client and the checkpointer share one event loop (under the GIL), so the queue can
           never be shorter than this; `c1 wall / c16 CPU` (the CPU ceiling, per pair, and the
           median) is the best speed-up possible at this CPU cost per ticket.
  commits  checkpoint commits and the time spent inside them (the fsync cost of the disk).
  lock     AsyncSqliteSaver has one connection and holds one asyncio lock across every
           execute + commit, so all tickets' checkpoint reads and writes go one at a time:
           the share of wall time the lock is held, and how long each acquisition waited.
           With durability "sync" each superstep waits for its write, so this wait lands on
           every ticket's critical path.
  lag      event-loop lag: how late a 10 ms sleep wakes up while the queue runs (mean / p95).
           A saturated loop delays every ticket's next step, so ticket latency stretches.
  ticket   each ticket's own latency (mean / max), from `stream_run` start to return (timed
           by the `run_ticket` hook `run_batch` takes; no module is patched).
  floor    the same queue as pure sleeps (2 model turns per ticket, no graph): what zero
           overhead would give.

The commit and lock columns wrap two attributes of objects each run opens for itself (the
first lane's connection's `commit`, and that saver's `lock`), never a module or a class.
`--sweep` adds concurrency 4, 8 and 32 (is the loop saturated before 16?). `--what-if` repeats
the pairs with checkpoint durability "async" and "exit" instead of the shipped "sync", to show
what the checkpoint traffic costs (measurements only: "async" lets a step start before the
previous one is on disk, "exit" writes one checkpoint per run, so a crash would lose a
ticket's progress; neither is what crash-resume needs). `--profile` runs the concurrency-16
queue once more under cProfile and prints the top functions.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import itertools
import os
import pstats
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import harness  # bench/, beside this script: puts the project first on sys.path
from harness import ROOT, load_average, process_cpu

# Every server and store this script starts points inside WORK; set before any server starts.
WORK = harness.sandbox("muster-bench-batch-")

from freezing import add_freeze_flag, freeze_note  # noqa: E402 - bench/, beside this script

from checkpoints.threads import thread_config  # noqa: E402 - after the environment is set
from graph.app.batch_queue import MAX_LANES, BatchPlan, run_batch  # noqa: E402
from graph.app.batch_report import BatchProgress  # noqa: E402
from graph.app.batch_tickets import load_tickets  # noqa: E402
from graph.app.runtime import (  # noqa: E402
    MusterRuntime,
    open_runtime,
    stream_run,
    stream_run_snapshot,
)
from workers.models import load_model_factory  # noqa: E402

TICKETS = ROOT / "examples" / "black_friday.jsonl"
MODEL = "offline:100"
TURN_S = 0.1
TARGET = 10.0

RUN_IDS = itertools.count(1)


class TimedLock(asyncio.Lock):
    """The checkpointer's lock, timed: how long it is held and how long callers wait."""

    def __init__(self) -> None:
        super().__init__()
        self.count, self.held_s, self.wait_s = 0, 0.0, 0.0
        self._since = 0.0

    async def acquire(self) -> Literal[True]:
        asked = time.perf_counter()
        await super().acquire()
        self._since = time.perf_counter()
        self.count += 1
        self.wait_s += self._since - asked
        return True

    def release(self) -> None:
        self.held_s += time.perf_counter() - self._since
        super().release()


Tweak = Callable[[MusterRuntime], Awaitable[None]]


async def no_tweak(runtime: MusterRuntime) -> None:
    return None


def stream_with_durability(
    durability: Literal["sync", "async", "exit"],
) -> Callable[..., Awaitable[dict[str, Any]]]:
    """What-if: `stream_run` with another checkpoint durability (the shipped one is "sync":
    every superstep is on disk before the next starts, which crash-resume relies on)."""

    async def run(
        runtime: MusterRuntime,
        thread_id: str,
        payload: Any,
        *,
        services: Any = None,
        control: Any = None,
        **_: Any,
    ) -> dict[str, Any]:
        services = services or runtime.for_thread(thread_id)
        try:
            async for _chunk in runtime.graph.astream(
                payload,
                thread_config(thread_id),
                context=services,
                stream_mode="updates",
                durability=durability,
                control=control,
            ):
                pass
        finally:
            services.trace.close()
        return dict((await runtime.graph.aget_state(thread_config(thread_id))).values)

    return run


async def one_run(
    concurrency: int,
    label: str,
    tweak: Tweak = no_tweak,
    profile: cProfile.Profile | None = None,
    stream: Callable[..., Awaitable[dict[str, Any]]] = stream_run,
) -> dict[str, Any]:
    tickets = load_tickets(TICKETS)
    db = WORK / f"run-{next(RUN_IDS)}-c{concurrency}.sqlite"  # a fresh store for every run
    progress = BatchProgress(io.StringIO(), len(tickets))
    opened = time.perf_counter()
    async with open_runtime(
        db=db, models=load_model_factory(MODEL), servers_on_demand=False
    ) as runtime:
        startup = time.perf_counter() - opened
        await tweak(runtime)
        conn: Any = runtime.saver.conn
        commits = {"n": 0, "s": 0.0}
        original_commit = conn.commit

        async def timed_commit() -> None:
            started = time.perf_counter()
            await original_commit()
            commits["n"] += 1
            commits["s"] += time.perf_counter() - started

        conn.commit = timed_commit
        lock = TimedLock()
        runtime.saver.lock = lock  # AsyncSqliteSaver: one lock around every execute + commit
        latencies: list[float] = []

        async def timed_stream_run(*args: Any, **kwargs: Any) -> Any:
            """What `run_batch` calls (`stream_run_snapshot`), timed; a what-if `stream`
            returns values, so its snapshot is read back as `run_batch` needs it."""
            started = time.perf_counter()
            try:
                if stream is stream_run:
                    return await stream_run_snapshot(*args, **kwargs)
                await stream(*args, **kwargs)
                graph_ = kwargs.get("graph") or args[0].graph
                return await graph_.aget_state(thread_config(args[1]))
            finally:
                latencies.append(time.perf_counter() - started)

        lags: list[float] = []
        stop = asyncio.Event()

        async def watch_loop() -> None:
            while not stop.is_set():
                started = time.perf_counter()
                await asyncio.sleep(0.01)
                lags.append(time.perf_counter() - started - 0.01)

        watcher = asyncio.create_task(watch_loop())
        if profile is not None:
            profile.enable()
        # As `muster batch` does: one checkpoint connection ("lane") per ticket in flight.
        # The lock and commit columns cover the first lane's connection only.
        async with runtime.lanes(min(concurrency, MAX_LANES)) as lanes:
            cpu0, wall0 = process_cpu(), time.perf_counter()
            results, drained = await run_batch(
                runtime,
                TICKETS,
                BatchPlan(run=list(tickets)),
                concurrency=concurrency,
                progress=progress,
                lanes=lanes,
                run_ticket=timed_stream_run,
            )
            wall = time.perf_counter() - wall0
        cpu = (process_cpu() - cpu0).own
        if profile is not None:
            profile.disable()
        stop.set()
        await watcher
        conn.commit = original_commit
    not_finished = [r.ticket.id for r in results if r.outcome in ("unfinished", "failed")]
    if drained or len(results) != len(tickets) or not_finished:
        raise SystemExit(f"{label}: not every ticket finished: {not_finished}")
    outcomes: dict[str, int] = {}
    for r in results:
        outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
    return {
        "concurrency": concurrency,
        "wall": wall,
        "cpu": cpu,
        "startup": startup,
        "commits": commits["n"],
        "commit_s": commits["s"],
        "outcomes": outcomes,
        "lag_mean": statistics.fmean(lags) if lags else 0.0,
        "lag_p95": sorted(lags)[int(0.95 * (len(lags) - 1))] if lags else 0.0,
        "lock_n": lock.count,
        "lock_held": lock.held_s,
        "lock_wait": lock.wait_s / max(lock.count, 1),
        "ticket_mean": statistics.fmean(latencies),
        "ticket_max": max(latencies),
    }


async def sleep_floor(concurrency: int, n: int = 40, turns: int = 2) -> float:
    semaphore = asyncio.Semaphore(concurrency)

    async def ticket() -> None:
        async with semaphore:
            for _ in range(turns):
                await asyncio.sleep(TURN_S)

    started = time.perf_counter()
    await asyncio.gather(*(ticket() for _ in range(n)))
    return time.perf_counter() - started


def show(run: dict[str, Any], note: str = "") -> None:
    print(
        f"  c{run['concurrency']:<2} {run['wall']:5.2f} s wall{note} | CPU {run['cpu']:4.2f} s "
        f"({100 * run['cpu'] / run['wall']:3.0f}%) | {run['commits']} commits "
        f"{run['commit_s']:4.2f} s ({run['commit_s'] / max(run['commits'], 1) * 1000:.1f} ms) | "
        f"saver lock held {100 * run['lock_held'] / run['wall']:3.0f}%, "
        f"wait {run['lock_wait'] * 1000:4.1f} ms x{run['lock_n']} | "
        f"lag {run['lag_mean'] * 1000:4.1f}/{run['lag_p95'] * 1000:4.1f} ms | "
        f"ticket {run['ticket_mean'] * 1000:4.0f}/{run['ticket_max'] * 1000:4.0f} ms | "
        f"servers up {run['startup']:.2f} s"
    )


async def pair(
    label: str,
    n: int,
    tweak: Tweak = no_tweak,
    stream: Callable[..., Awaitable[dict[str, Any]]] = stream_run,
) -> float:
    """`n` interleaved pairs, c1 then c16: each pair's speed-up (c1 wall / c16 wall) and CPU
    ceiling (c1 wall / c16 CPU), and the median of each; returns the median speed-up."""
    print(f"{label}:")

    def each(index: int, slow: dict[str, Any], fast: dict[str, Any], ratio: float) -> None:
        show(slow)
        show(fast)
        print(
            f"  pair {index + 1}: speed-up {ratio:.2f}x, CPU ceiling "
            f"{slow['wall'] / fast['cpu']:.2f}x"
        )

    found = await harness.apairs(
        lambda: one_run(1, label, tweak, stream=stream),
        lambda: one_run(16, label, tweak, stream=stream),
        n,
        ratio=lambda slow, fast: slow["wall"] / fast["wall"],
        each=each,
    )
    ceiling = statistics.median(
        slow["wall"] / fast["cpu"] for slow, fast in zip(found.a, found.b, strict=True)
    )
    speedup = found.median
    print(
        f"  speed-up (c1 wall / c16 wall) {found.summary()} "
        f"({'meets' if speedup >= TARGET else 'misses'} the {TARGET:.0f}x target); "
        f"CPU ceiling c1 wall / c16 CPU = {ceiling:.1f}x (median of the pairs'); "
        f"outcomes {found.b[-1]['outcomes']}; load average now {os.getloadavg()[0]:.2f}"
    )
    return speedup


async def main(args: argparse.Namespace) -> None:
    print(
        f"batch bench: {TICKETS.name}, 40 tickets, model {MODEL}, {os.cpu_count()} CPUs, "
        f"load average {load_average()}"
    )
    print(
        "columns: wall | process CPU | checkpoint commits | checkpointer lock: % of wall held, "
        "mean wait x acquisitions | loop lag mean/p95 | ticket latency mean/max"
    )
    floor16, floor1 = await sleep_floor(16), await sleep_floor(1)
    print(
        f"floor (pure sleeps, 2 turns a ticket): c16 {floor16:.2f} s, c1 {floor1:.2f} s, "
        f"{floor1 / floor16:.1f}x"
    )
    await pair("as shipped", args.pairs)
    if args.sweep:
        print("sweep:")
        for concurrency in (4, 8, 32):
            show(await one_run(concurrency, "sweep"))
    if args.what_if:
        durabilities: tuple[Literal["async", "exit"], ...] = ("async", "exit")
        for durability in durabilities:
            await pair(
                f"what-if: durability={durability!r} (NOT crash-safe as shipped)",
                args.pairs,
                stream=stream_with_durability(durability),
            )
    if args.profile:
        profile = cProfile.Profile()
        await one_run(16, "profiled", profile=profile)
        for key in ("tottime", "cumulative"):
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats(key).print_stats(20)
            print(f"\n--- cProfile of the concurrency-16 queue, by {key} ---")
            print(out.getvalue())
    print(f"run data: {WORK}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The 40-ticket batch at concurrency 16 vs 1.")
    parser.add_argument(
        "--pairs", type=int, default=3, help="interleaved (c1, c16) pairs (default 3)"
    )
    parser.add_argument("--sweep", action="store_true", help="also run concurrency 4, 8, 32")
    parser.add_argument("--what-if", action="store_true", help="also with durability async, exit")
    parser.add_argument("--profile", action="store_true", help="cProfile the c16 queue")
    add_freeze_flag(parser)
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    print(freeze_note(args.no_freeze))
    asyncio.run(main(args))
