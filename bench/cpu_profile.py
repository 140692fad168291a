"""Where a ticket's CPU goes: the Black Friday queue at concurrency 1, by phase.

Run: `.venv/bin/python bench/cpu_profile.py [--repeats N] [--top N] [--ab] [--dump FILE]` (a
benchmark, never a test; not `profile.py`: in `bench/` that name would shadow the standard
library module cProfile imports, and break `bench/batch.py`).

Each run opens a fresh runtime as `muster batch` does (`open_runtime`, one lane, `run_batch`):
real stdio MCP servers, `AsyncSqliteSaver` on a fresh temporary file, a fresh orders database
(`MUSTER_ORDERS_DB`), the offline model with no delay, so the queue is pure CPU plus I/O waits.
The clock covers the queue only, after the servers are up.

1. `--repeats` plain runs (default 3): process CPU time over the queue ÷ tickets, the headline
   (the fastest run is the least disturbed on a shared machine). Split into the event loop's
   thread and the other threads of this process (aiosqlite runs every SQLite call of the
   checkpointer, the lease and the audit log on a thread of its own per connection). The MCP
   servers are other processes and are not counted.
2. One run under cProfile (event loop thread only, on its CPU clock, so waiting costs
   nothing). Each function's own time goes to a phase by the module it is in; a function of
   no phase (a library helper, a builtin) passes its time up to its callers in proportion to
   what each caller spent in it, until it reaches a function that has one: the innermost
   phase on the call path wins (json.loads called from domains/support/facts_read.py is
   synthesis; a pydantic validation called from workers/loop.py is the worker loop). A
   coroutine is called by whatever resumed it, so a node's own time lands in its own module,
   and work no phase claims lands in "langgraph pregel" (its tasks) or "other" (the event
   loop itself).
   cProfile makes Python calls about 4x dearer, so the table shows each phase's share of the
   profiled time, and ms per ticket as that share of the best plain run's event loop CPU.
   "calls" per ticket count coroutine resumptions as calls.

`--ab` measures this round's hot-path changes (see `Baseline`) before against after in one
process, runs interleaved, then one profiled run of each. `--dump FILE` keeps the raw stats.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import itertools
import os
import pstats
import re
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

WORK = Path(tempfile.mkdtemp(prefix="muster-bench-profile-"))
os.environ["MUSTER_CALL_LOG"] = str(WORK / "calls.jsonl")
os.environ["MUSTER_TRACE_DIR"] = str(WORK / "traces")
os.environ["MUSTER_DB"] = str(WORK / "default.sqlite")
os.environ["MUSTER_POLICY_MODE"] = "healthy"

from freezing import add_freeze_flag, freeze_note  # noqa: E402 - bench/, beside this script

import graph.app.runtime  # noqa: E402
import workers.packet_prompt  # noqa: E402
from graph.app.batch_queue import BatchPlan, run_batch  # noqa: E402 - after the environment
from graph.app.batch_report import BatchProgress  # noqa: E402
from graph.app.batch_tickets import load_tickets  # noqa: E402
from graph.app.runtime import open_runtime  # noqa: E402
from graph.build import build_graph  # noqa: E402
from workers.local_models import ToolBindingModel  # noqa: E402
from workers.models import load_model_factory  # noqa: E402

TICKETS = ROOT / "examples" / "black_friday.jsonl"
MODEL = "offline"
TARGET_MS = 20.0
RUN_IDS = itertools.count(1)

Func = tuple[str, int, str]

PROJECT = str(ROOT) + os.sep
SITE = f"site-packages{os.sep}"

# (phase, patterns): a project path prefix ("graph/plan.py"), a library path part
# ("langgraph/checkpoint/"), or a builtin's name part ("sqlite3."); the first match wins, so
# the more specific patterns come first.
PHASES: list[tuple[str, tuple[str, ...]]] = [
    (
        "planning",
        (
            "@graph/plan.py",
            "@graph/plan_validation.py",
            "@graph/planners/",
            "@graph/facts.py",
            "@domains/support/order_record.py",
            "@domains/support/rules.py",
            "@domains/support/intents.py",
        ),
    ),
    (
        "dispatch and worker loop",
        (
            "@graph/dispatch.py",
            "@workers/loop.py",
            "@workers/worker_run.py",
            "@workers/run_report.py",
            "@workers/packet_prompt.py",
            "@workers/proposals.py",
            "@domains/support/proposals.py",
        ),
    ),
    (
        "model calls",
        ("@workers/models.py", "@workers/local_models.py", "langchain_core/language_models/"),
    ),
    (
        "hub and MCP",
        ("@workers/hub/", "/mcp/", "/anyio/", "langchain_mcp_adapters/", "_asyncio.Future"),
    ),
    (
        "checkpoint",
        (
            "langgraph/checkpoint/",
            "/aiosqlite/",
            "@checkpoints/",
            "sqlite3",
            "ormsgpack",
            "msgpack",
        ),
    ),
    ("verify", ("@graph/verify.py",)),
    (
        "synthesis",
        (
            "@graph/synthesize.py",
            "@graph/degradation.py",
            "@domains/support/answer.py",
            "@domains/support/resolve.py",
            "@domains/support/facts_read.py",
            "@graph/answer",
        ),
    ),
    ("trace", ("@graph/trace.py",)),
    ("langgraph pregel", ("langgraph/",)),
    ("muster, other", ("@",)),
]
OTHER = "other (event loop, root)"
MUSTER_OTHER = "  muster: "
"""Project code of no phase keeps its module in its label, for the breakdown."""
PHASE_NAMES = [name for name, _ in PHASES] + [OTHER]


def phase_of(func: Func) -> str | None:
    """The phase a function belongs to by where it lives, or None (it takes its callers')."""
    filename, _, name = func
    if SITE in filename:  # first: the virtualenv may live inside the project
        where = filename.split(SITE, 1)[1].replace(os.sep, "/")
        where = "/" + where  # "/mcp/..." must not match "langchain_mcp_adapters/..."
    elif filename.startswith(PROJECT):
        where = "@" + filename[len(PROJECT) :].replace(os.sep, "/")
    elif filename == "~":
        where = name  # a builtin: "<method 'execute' of 'sqlite3.Cursor' objects>"
    else:
        return None  # the standard library: asyncio, json, re, ...
    for phase, patterns in PHASES:
        for pattern in patterns:
            if pattern.startswith("@"):
                if where.startswith(pattern):
                    return MUSTER_OTHER + where[1:] if phase == "muster, other" else phase
            elif pattern in where:
                return phase
    return None


class Attribution:
    """Own time of every function, passed up the call graph to the innermost phase."""

    def __init__(self, stats: pstats.Stats) -> None:
        self.stats: dict[Func, Any] = stats.stats  # type: ignore[attr-defined]
        self._inclusive: dict[Func, dict[str, float]] = {}
        self._busy: set[Func] = set()

    def inclusive(self, func: Func) -> dict[str, float]:
        """Where time spent inside `func` belongs: {phase: fraction}."""
        own = phase_of(func)
        if own is not None:
            return {own: 1.0}
        if func in self._inclusive:
            return self._inclusive[func]
        if func in self._busy:  # recursion: the outer call decides
            return {}
        self._busy.add(func)
        callers = self.stats[func][4] if func in self.stats else {}
        share = self._split(callers, index=3)
        self._busy.discard(func)
        self._inclusive[func] = share
        return share

    def _split(self, callers: dict[Func, tuple[Any, ...]], *, index: int) -> dict[str, float]:
        total = sum(edge[index] for edge in callers.values())
        if total <= 0:
            return {OTHER: 1.0}
        share: dict[str, float] = defaultdict(float)
        for caller, edge in callers.items():
            weight = edge[index] / total
            for phase, fraction in self.inclusive(caller).items():
                share[phase] += weight * fraction
        spread = sum(share.values())
        if spread <= 0:
            return {OTHER: 1.0}
        return {phase: value / spread for phase, value in share.items()}

    def phases(self) -> tuple[dict[str, float], dict[Func, tuple[str, float]]]:
        """Seconds of own time per phase, and each function's own time with its main phase."""
        totals: dict[str, float] = defaultdict(float)
        per_function: dict[Func, tuple[str, float]] = {}
        for func, (_, _, own_s, _, callers) in self.stats.items():
            phase = phase_of(func)
            share = {phase: 1.0} if phase is not None else self._split(callers, index=2)
            for name, fraction in share.items():
                totals[name] += own_s * fraction
            main = max(share.items(), key=lambda item: item[1])[0]
            per_function[func] = (main, own_s)
        return dict(totals), per_function


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
        cpu0, main0, wall0 = time.process_time(), time.thread_time(), time.perf_counter()
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
        cpu, main = time.process_time() - cpu0, time.thread_time() - main0
        threads1 = thread_cpu()
    unfinished = [r.ticket.id for r in results if r.outcome in ("unfinished", "failed")]
    if len(results) != len(tickets) or unfinished:
        raise SystemExit(f"not every ticket finished: {unfinished}")
    others = sum(threads1[t] - threads0.get(t, 0.0) for t in threads1)
    return {"n": len(tickets), "wall": wall, "cpu": cpu, "main": main, "threads": others}


class Baseline:
    """`--ab`: undo this round's hot-path work in-process, to measure before against after in
    one run: a graph compiled per runtime and lane, LangChain's signature inspection of the
    offline model on every call, and the packet prompt parsed again on every turn."""

    def __init__(self) -> None:
        self.saved: list[tuple[Any, str, Any]] = []

    def _set(self, owner: Any, name: str, value: Any) -> None:
        self.saved.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, value)

    def __enter__(self) -> Baseline:
        self._set(
            graph.app.runtime,
            "with_checkpointer",
            lambda _g, saver: build_graph(checkpointer=saver),
        )
        for method in ("_generate", "_agenerate"):
            function = ToolBindingModel.__dict__[method]
            self.saved.append((function, "__signature__", function.__signature__))
            del function.__signature__
        for parser in ("_packet_in", "_facts_in"):
            self._set(
                workers.packet_prompt, parser, getattr(workers.packet_prompt, parser).__wrapped__
            )
        return self

    def __exit__(self, *_: object) -> None:
        for owner, name, value in reversed(self.saved):
            setattr(owner, name, value)
        self.saved.clear()


async def compare(repeats: int) -> dict[str, dict[str, Any]]:
    """Baseline and current runs, interleaved, in this one process; the best of each."""
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    for _ in range(repeats):
        with Baseline():
            runs["before"].append(await one_run())
        runs["after"].append(await one_run())
    best = {k: min(v, key=lambda r: r["cpu"]) for k, v in runs.items()}
    for label, run in best.items():
        n = run["n"]
        print(
            f"  {label:<6} CPU {run['cpu'] * 1000 / n:5.1f} ms/ticket (event loop thread "
            f"{run['main'] * 1000 / n:5.1f}, other threads {run['threads'] * 1000 / n:4.1f}), "
            f"best of {repeats}; all: "
            + " ".join(f"{r['cpu'] * 1000 / r['n']:.1f}" for r in runs[label])
        )
    print(f"  after / before: {best['after']['cpu'] / best['before']['cpu']:.3f}")
    return best


async def profiled_phases(args: argparse.Namespace) -> tuple[dict[str, float], pstats.Stats]:
    """One queue under cProfile: each phase's share of the event loop thread's CPU."""
    profile = cProfile.Profile(time.thread_time_ns, 1e-9)  # CPU, not time spent waiting
    await one_run(profile)
    stats = pstats.Stats(profile)
    if args.dump:
        stats.dump_stats(args.dump)  # for `pstats` / snakeviz: print_callers() and the like
    totals, _ = Attribution(stats).phases()
    profiled_s = sum(totals.values()) or 1.0
    shares = {name: seconds / profiled_s for name, seconds in totals.items()}
    shares["muster, other"] = sum(v for k, v in shares.items() if k.startswith(MUSTER_OTHER))
    return shares, stats


def print_phases(columns: dict[str, tuple[dict[str, float], dict[str, Any]]]) -> None:
    """The phase table: per column, each phase's share and ms per ticket (share of the plain
    run's event loop thread CPU), then the other threads, measured directly."""
    head = "".join(f" {label + ' %':>9} {label + ' ms':>10}" for label in columns)
    print(f"  {'phase (event loop thread)':<28}{head}")
    names = list(PHASE_NAMES)
    first = next(iter(columns.values()))[0]
    mine = sorted((k for k in first if k.startswith(MUSTER_OTHER)), key=lambda k: -first[k])
    names[names.index("muster, other") + 1 : names.index("muster, other") + 1] = mine[:6]
    for name in names:
        cells = ""
        for shares, run in columns.values():
            share = shares.get(name, 0.0)
            main_ms = run["main"] * 1000 / run["n"]
            cells += f" {100 * share:8.1f}% {share * main_ms:10.2f}"
        print(f"  {name:<28.28}{cells}")
    cells = "".join(
        f" {'':>9} {run['threads'] * 1000 / run['n']:10.2f}" for _, run in columns.values()
    )
    print(f"  {'other threads (aiosqlite)':<28}{cells}")
    cells = "".join(f" {'':>9} {run['cpu'] * 1000 / run['n']:10.2f}" for _, run in columns.values())
    print(f"  {'CPU per ticket':<28}{cells}")


def short(func: Func) -> str:
    filename, line, name = func
    if SITE in filename:
        filename = filename.split(SITE, 1)[1]
    elif filename.startswith(PROJECT):
        filename = filename[len(PROJECT) :]
    elif filename != "~":
        filename = "stdlib/" + Path(filename).name
    return name if filename == "~" else f"{filename}:{line}({name})"


async def main(args: argparse.Namespace) -> None:
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"profile bench: {TICKETS.name} at concurrency 1, model {MODEL}, load average {load}")
    if args.ab:
        print("before (this round's changes undone in-process) against after, interleaved:")
        best = await compare(args.repeats)
        with Baseline():
            before, _ = await profiled_phases(args)
        after, _ = await profiled_phases(args)
        print("\nphases (one profiled run each; ms = share of the best plain run's CPU):")
        print_phases({"before": (before, best["before"]), "after": (after, best["after"])})
        print(f"\nload average now {os.getloadavg()[0]:.2f}")
        return
    plain = [await one_run() for _ in range(args.repeats)]
    best_run = min(plain, key=lambda r: r["cpu"])
    n = best_run["n"]
    for r in plain:
        print(
            f"  plain run: {r['wall']:5.2f} s wall, CPU {r['cpu'] * 1000 / n:5.1f} ms/ticket "
            f"(event loop thread {r['main'] * 1000 / n:5.1f}, "
            f"other threads {r['threads'] * 1000 / n:4.1f})"
        )
    print(
        f"CPU per ticket: {best_run['cpu'] * 1000 / n:.1f} ms (best of {len(plain)}; "
        f"target <= {TARGET_MS:.0f} ms)"
    )
    shares, stats = await profiled_phases(args)
    print("\nphases (one profiled run; ms = share of the best plain run's CPU):")
    print_phases({"now": (shares, best_run)})
    table: dict[Func, Any] = stats.stats  # type: ignore[attr-defined]
    if args.top:
        _, per_function = Attribution(stats).phases()
        print(f"\ntop {args.top} functions by own time (profiled ms/ticket, phase):")
        ranked = sorted(per_function.items(), key=lambda item: -item[1][1])[: args.top]
        for func, (phase, own_s) in ranked:
            calls = table[func][1]
            print(f"  {own_s * 1000 / n:6.2f}  {calls / n:7.1f} calls  {phase:<18} {short(func)}")
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
    parser.add_argument("--ab", action="store_true", help="before vs after, interleaved")
    parser.add_argument("--dump", type=Path, help="also write the raw cProfile stats here")
    add_freeze_flag(parser)
    args = parser.parse_args()
    print(freeze_note(args.no_freeze))
    asyncio.run(main(args))
