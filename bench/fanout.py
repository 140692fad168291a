"""Fan-out benchmark: how close is a graph run of N parallel workers to the ideal?

Run: `.venv/bin/python bench/fanout.py [--kb-sessions N]` (a benchmark, never a test). For
each N in (3, 40, 200) it opens a runtime (real stdio MCP servers, AsyncSqliteSaver on a fresh
SQLite file, the offline model with a 100 ms turn delay) whose planner writes N `comms`
packets with distinct queries.
Each worker then does exactly this:

    model turn 1 (sleep 100 ms) -> calls kb.search_kb(query=<its query>) once over MCP
    model turn 2 (sleep 100 ms) -> final answer from the observation (no more calls)

so a worker is two 100 ms model turns and one real MCP call between them. The graph run is
timed from `stream_run` start to its return (servers are started before the clock starts)
and compared, in the same process, with two ideals:

    sleeps       asyncio.gather of N coroutines each doing sleep(0.1) twice
    sleeps+mcp   the same, with the same kb.search_kb call through the same hub in between

To separate graph overhead from MCP cost, a second graph variant ("no-mcp") runs the same N
packets with an empty tool belt and a 200 ms model turn: one turn, no tool call, the same
200 ms of sleeping per worker, compared with the `sleeps` ideal. At N=40 one more run uses the
default `RunLimits()` to show what the default budgets do to a wide fan-out.

`--kb-sessions N` gives the kb server N sessions (`"sessions": N` in the servers file; the
shipped file has 1), so N sessions serve the fan-out's searches side by side.

`cpu s` is the CPU time this process spent during a graph run (median): on a busy machine
it shows the graph's own cost better than wall time. Checkpoint bytes are the summed blob
lengths in the `checkpoints` and `writes` tables for the run's thread (precise), and the size
of the SQLite file plus its -wal after the first run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import harness  # bench/, beside this script: puts the project first on sys.path
from harness import sqlite_file_bytes

SIZES = (3, 40, 200)
REPEATS = 3
"""Graph runs (each on a new thread) and ideal runs per N; the median is reported, and the
best graph run too (on a shared machine the best run is the least disturbed one)."""
TURN_S = 0.1
TARGETS = (
    (40, "ideal (sleeps)", "ideal", 1.5),
    (40, "ideal+mcp", "ideal_mcp", 1.2),
    (200, "ideal (sleeps)", "ideal", 2.5),
)
"""Issue 15's targets: (N, label, ideal column, the most wall may be over that ideal)."""
KB_SESSIONS = 1
"""Sessions of the kb server (`--kb-sessions`)."""
TOPICS = (
    "duplicate charge",
    "refund timing",
    "cancel order",
    "late delivery",
    "gift card balance",
    "return damaged item",
    "warranty claim",
    "price match",
)

# Every server and store this script starts points inside WORK; set before any server starts.
WORK = harness.sandbox("muster-bench-fanout-")

from freezing import add_freeze_flag, freeze_note  # noqa: E402 - bench/, beside this script

from graph.app.runtime import MusterRuntime, open_runtime, stream_run  # noqa: E402
from graph.limits import RunLimits  # noqa: E402 - after the environment is set
from graph.planners import DEFAULT_TIMEOUT_S, Planner  # noqa: E402
from servers.call_log import count_calls  # noqa: E402
from workers.contracts import Handoff  # noqa: E402
from workers.hub import ToolHub, load_servers_config  # noqa: E402
from workers.hub.servers_config import DEFAULT_SERVERS_FILE, ServersConfig  # noqa: E402
from workers.models import load_model_factory  # noqa: E402
from workers.roster import Roster  # noqa: E402

CPU_S: dict[str, float] = {}
"""CPU seconds this process spent per graph run (thread id -> s): unlike wall time, barely
moved by other processes competing for the CPUs."""


def query(i: int) -> str:
    return f"{TOPICS[i % len(TOPICS)]} case {i}"


def fanout_planner(n: int, tool_allow: tuple[str, ...] = ("kb.",)) -> Planner:
    """N comms packets, ids comms-1..N, distinct queries (so validation drops none)."""

    def plan(request: str, roster: Roster) -> list[Handoff]:
        return [
            Handoff(
                id=f"comms-{i}",
                recipient="comms",
                objective="Find the knowledge-base articles that answer the customer.",
                inputs={"query": query(i)},
                tool_allow=tool_allow,
                max_steps=3,
            )
            for i in range(1, n + 1)
        ]

    return plan


async def ideal_sleeps(n: int) -> float:
    async def one() -> None:
        await asyncio.sleep(TURN_S)
        await asyncio.sleep(TURN_S)

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    return time.perf_counter() - started


async def ideal_sleeps_mcp(n: int, hub: ToolHub) -> float:
    async def one(i: int) -> None:
        await asyncio.sleep(TURN_S)
        result = await hub.call("kb.search_kb", {"query": query(i)}, ("kb.",))
        assert result.ok, result.text
        await asyncio.sleep(TURN_S)

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(1, n + 1)))
    return time.perf_counter() - started


def checkpoint_bytes(db: Path, thread_id: str) -> tuple[int, int, int, int]:
    """(checkpoint rows, checkpoint blob bytes, write rows, write blob bytes) for a thread."""
    with sqlite3.connect(db) as conn:
        rows, blobs = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) "
            "FROM checkpoints WHERE thread_id = ?",
            (thread_id,),
        ).fetchone()
        wrows, wblobs = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(LENGTH(value)), 0) FROM writes WHERE thread_id = ?",
            (thread_id,),
        ).fetchone()
    conn.close()
    return rows, blobs, wrows, wblobs


async def timed_run(
    runtime: MusterRuntime, n: int, thread: str, *, steps: int, **overrides: Any
) -> tuple[float, dict[str, Any]]:
    """One graph run on a new thread; checks every packet reported ok in `steps` turns."""
    services = replace(runtime.for_thread(thread), **overrides)
    started, cpu_started = time.perf_counter(), time.process_time()
    values = await stream_run(runtime, thread, {"request": f"fan out {n}"}, services=services)
    wall = time.perf_counter() - started
    CPU_S[thread] = time.process_time() - cpu_started
    reports = values.get("reports") or []
    answer = values.get("answer")
    bad = [rep.packet_id for rep in reports if rep.status != "ok" or rep.steps_used != steps]
    if len(reports) != n or bad:
        raise SystemExit(
            f"N={n}: run {thread} went wrong: {len(reports)} reports; not ok or not {steps} "
            f"steps: {bad[:5]}; answer: {answer and answer.status}; "
            f"stop: {values.get('stop_reason')}"
        )
    return wall, values


def kb_servers(sessions: int) -> ServersConfig:
    """The shipped servers file, the kb server with `sessions` sessions."""
    config = load_servers_config(DEFAULT_SERVERS_FILE)
    servers = dict(config.mcp_servers)
    servers["kb"] = servers["kb"].model_copy(update={"sessions": sessions})
    return config.model_copy(update={"mcp_servers": servers})


async def bench(n: int) -> dict[str, Any]:
    db = WORK / f"fanout-{n}.sqlite"
    limits = RunLimits(max_steps=10_000, max_tokens=10**9)
    log = os.environ["MUSTER_CALL_LOG"]
    walls: list[float] = []
    threads: list[str] = []
    first_file = 0
    calls_before = count_calls(log, tool="search_kb")
    async with open_runtime(
        db=db,
        servers=kb_servers(KB_SESSIONS),
        models=load_model_factory(f"offline:{int(TURN_S * 1000)}"),
        planner=fanout_planner(n),
        limits=limits,
        servers_on_demand=False,  # up before the clock: the bench times the fan-out only
    ) as runtime:
        for r in range(REPEATS):
            thread = f"fanout-{n}-{r}"
            wall, values = await timed_run(runtime, n, thread, steps=2)
            # Every packet must have done its work. The synthetic request names no intent,
            # so the answer is honestly partial (nothing the planner understood), not failed.
            failed = [r.packet_id for r in values["reports"] if r.status != "ok"]
            if failed or values["answer"].degraded or len(values["reports"]) != n:
                raise SystemExit(f"N={n}: {thread}: packets failed {failed}")
            walls.append(wall)
            threads.append(thread)
            if r == 0:
                first_file = sqlite_file_bytes(db)
        graph_calls = count_calls(log, tool="search_kb") - calls_before
        no_mcp = [
            (
                await timed_run(
                    runtime,
                    n,
                    f"fanout-{n}-nomcp-{r}",
                    steps=1,
                    planner=fanout_planner(n, tool_allow=()),
                    models=load_model_factory(f"offline:{int(2 * TURN_S * 1000)}"),
                )
            )[0]
            for r in range(REPEATS)
        ]
        default_limits: dict[str, Any] | None = None
        if n == 40:
            wall, values = await timed_run(
                runtime, n, f"fanout-{n}-defaults", steps=2, limits=RunLimits()
            )
            answer = values["answer"]
            default_limits = {
                "wall": wall,
                "status": answer.status,
                "degraded": answer.degraded,
                "stop_reason": values.get("stop_reason"),
                "limits": RunLimits(),
            }
        ideal = [await ideal_sleeps(n) for _ in range(REPEATS)]
        ideal_mcp = [await ideal_sleeps_mcp(n, runtime.services.hub) for _ in range(REPEATS)]
    rows, blobs, wrows, wblobs = checkpoint_bytes(db, threads[0])
    return {
        "n": n,
        "wall": statistics.median(walls),
        "walls": walls,
        "cpu": statistics.median(CPU_S[t] for t in threads),
        "no_mcp": statistics.median(no_mcp),
        "ideal": statistics.median(ideal),
        "ideal_mcp": statistics.median(ideal_mcp),
        "calls_per_run": graph_calls / REPEATS,
        "ckpt_rows": rows,
        "ckpt_bytes": blobs,
        "write_rows": wrows,
        "write_bytes": wblobs,
        "file_bytes": first_file,
        "default_limits": default_limits,
    }


async def main() -> None:
    version = sys.version.split()[0]
    print(f"fan-out benchmark: {os.cpu_count()} CPUs, python {version}, data in {WORK}")
    print(
        "each worker (comms, tool_allow ('kb.',), max_steps 3): model turn 1 sleeps 100 ms and "
        "asks for kb.search_kb(query); one real MCP call; model turn 2 sleeps 100 ms and answers"
    )
    print(
        f"limits: RunLimits(max_steps=10_000, max_tokens=10**9); per-packet Send timeout "
        f"{DEFAULT_TIMEOUT_S:g} s (Handoff default); median of {REPEATS} runs, each on a new thread"
    )
    # Warm-up on a throwaway store: first-use costs (imports, pydantic, graph compile paths)
    # should not land on N=3.
    async with open_runtime(
        db=WORK / "warmup.sqlite",
        models=load_model_factory("offline:100"),
        planner=fanout_planner(3),
        limits=RunLimits(max_steps=10_000, max_tokens=10**9),
    ) as runtime:
        await stream_run(runtime, "warmup", {"request": "warm up"})

    print(
        f"{'N':>4} {'graph s':>8} {'ideal s':>8} {'wall/ideal':>10} {'ideal+mcp s':>11} "
        f"{'wall/(ideal+mcp)':>16} {'no-mcp s':>8} {'no-mcp/ideal':>12} {'calls':>5} "
        f"{'best graph s':>12} {'best/ideal':>10} {'cpu s':>6}"
    )
    results = []
    for n in SIZES:
        res = await bench(n)
        results.append(res)
        print(
            f"{n:>4} {res['wall']:>8.3f} {res['ideal']:>8.3f} {res['wall'] / res['ideal']:>10.2f} "
            f"{res['ideal_mcp']:>11.3f} {res['wall'] / res['ideal_mcp']:>16.2f} "
            f"{res['no_mcp']:>8.3f} {res['no_mcp'] / res['ideal']:>12.2f} "
            f"{res['calls_per_run']:>5.0f} {min(res['walls']):>12.3f} "
            f"{min(res['walls']) / res['ideal']:>10.2f} {res['cpu']:>6.3f}",
            flush=True,
        )
    print("\ncheckpoint bytes of one run (the first thread of each N):")
    print(
        f"{'N':>4} {'ckpt rows':>9} {'ckpt bytes':>10} {'write rows':>10} {'write bytes':>11} "
        f"{'total':>9} {'per packet':>10} {'db+wal file':>11}"
    )
    for res in results:
        total = res["ckpt_bytes"] + res["write_bytes"]
        print(
            f"{res['n']:>4} {res['ckpt_rows']:>9} {res['ckpt_bytes']:>10} {res['write_rows']:>10} "
            f"{res['write_bytes']:>11} {total:>9} {total / res['n']:>10.0f} "
            f"{res['file_bytes']:>11}"
        )
    print()
    for res in results:
        runs = ", ".join(f"{w:.3f}" for w in res["walls"])
        print(f"N={res['n']}: graph runs {runs} s")
    for res in results:
        d = res["default_limits"]
        if d:
            print(
                f"N={res['n']} with default {d['limits']}: answer {d['status']}, degraded "
                f"{d['degraded']}, stop_reason {d['stop_reason']!r} ({d['wall']:.3f} s)"
            )
    by_n = {r["n"]: r for r in results}
    for n, label, column, target in TARGETS:
        ratio = by_n[n]["wall"] / by_n[n][column]
        verdict = "meets" if ratio <= target else "MISSES"
        print(f"N={n}: wall/{label} {ratio:.2f} {verdict} the target of <= {target}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb-sessions", type=int, default=1, help="sessions of the kb server")
    add_freeze_flag(parser)
    args = parser.parse_args()
    KB_SESSIONS = args.kb_sessions
    print(f"kb server sessions: {KB_SESSIONS}; {freeze_note(args.no_freeze)}")
    asyncio.run(main())
