"""Does `AsyncPostgresSaver`'s per-instance lock limit a pooled saver? (langgraph issue 7259)

Run: `.venv/bin/python bench/pg_saver_lock.py [--url postgresql://...] [--repeats 3]`
(a benchmark, never a test). It creates a scratch database on the server (default
`MUSTER_TEST_PG`, else postgresql://postgres@127.0.0.1:5432/postgres) and drops it after.

Two measurements, each with the upstream lock (one `asyncio.Lock` around every query, as the
installed saver has) and with Muster's fix (`MusterPostgresSaver`: a semaphore the size of
the pool), both on the same pool of `POOL_MAX` connections:

  saver   16 concurrent writers, each on its own thread, doing what a superstep does: `aput`
          a checkpoint, `aput_writes` two task writes, `aget_tuple` it back. Operations/s.
  batch   the 40-ticket Black Friday queue through `run_batch` at concurrency 16 (real stdio
          MCP servers, offline model at 100 ms a turn or `--model`, the lanes sharing the pooled
          saver).
          Wall time of the queue.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402
from langgraph.checkpoint.base import empty_checkpoint  # noqa: E402

from checkpoints.postgres import POOL_MAX, MusterPostgresSaver, open_postgres_saver  # noqa: E402

WRITERS = 16
ROUNDS = 40
DEFAULT_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"


@asynccontextmanager
async def scratch_database(server: str) -> AsyncIterator[str]:
    name = f"muster_bench_{uuid.uuid4().hex[:8]}"
    async with await psycopg.AsyncConnection.connect(server, autocommit=True) as conn:
        await conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield server.rsplit("/", 1)[0] + "/" + name
    finally:
        async with await psycopg.AsyncConnection.connect(server, autocommit=True) as conn:
            await conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def upstream_lock(saver: MusterPostgresSaver, locked: bool) -> None:
    """Put back the installed saver's behaviour (one lock per instance) when `locked` (the
    saver's `lock` is pinned: tests/test_pinned_internals.py)."""
    if locked:
        saver.lock = asyncio.Lock()


async def saver_ops(url: str, *, locked: bool) -> float:
    """Operations per second of `WRITERS` concurrent superstep-like writers."""
    async with open_postgres_saver(url) as saver:
        upstream_lock(saver, locked)

        async def writer(n: int) -> int:
            config: Any = {"configurable": {"thread_id": f"w{n}-{uuid.uuid4().hex[:6]}",
                                            "checkpoint_ns": ""}}  # fmt: skip
            ops = 0
            for step in range(ROUNDS):
                checkpoint = empty_checkpoint()
                checkpoint["channel_values"] = {"step": step, "note": "x" * 200}
                checkpoint["channel_versions"] = {"step": str(step), "note": str(step)}
                config = await saver.aput(config, checkpoint, {"step": step}, {})
                await saver.aput_writes(config, [("a", step), ("b", "y" * 100)], f"task-{step}")
                await saver.aget_tuple(config)
                ops += 3
            return ops

        started = time.perf_counter()
        done = await asyncio.gather(*(writer(n) for n in range(WRITERS)))
        return sum(done) / (time.perf_counter() - started)


async def batch_wall(url: str, *, locked: bool, model: str) -> float:
    """Seconds for the 40-ticket queue at concurrency 16 on the PostgreSQL store."""
    from graph.app.batch_queue import MAX_LANES, plan_batch, run_batch
    from graph.app.batch_report import BatchProgress
    from graph.app.batch_tickets import load_tickets
    from graph.app.runtime import open_runtime
    from workers.models import load_model_factory

    path = ROOT / "examples" / "black_friday.jsonl"
    tickets = load_tickets(path)
    with tempfile.TemporaryDirectory(prefix="muster-bench-") as tmp:
        os.environ["MUSTER_ORDERS_DB"] = str(Path(tmp) / "orders.sqlite")
        os.environ["MUSTER_CALL_LOG"] = str(Path(tmp) / "calls.jsonl")
        os.environ["MUSTER_TRACE_DIR"] = str(Path(tmp) / "traces")
        async with open_runtime(db=url, models=load_model_factory(model)) as runtime:
            upstream_lock(runtime.saver, locked)  # type: ignore[arg-type]
            async with runtime.lanes(min(16, MAX_LANES)) as lanes:
                started = time.perf_counter()
                await run_batch(
                    runtime,
                    path,
                    plan_batch(path, tickets, {}, False),
                    concurrency=16,
                    progress=BatchProgress(io.StringIO(), len(tickets)),
                    lanes=lanes,
                )
                return time.perf_counter() - started


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("MUSTER_TEST_PG") or DEFAULT_SERVER)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-batch", action="store_true")
    parser.add_argument("--model", default="offline:100", help="the batch's model (offline:MS)")
    args = parser.parse_args()
    print(f"pool of {POOL_MAX} connections, {WRITERS} concurrent writers / lanes")
    for locked in (True, False):
        label = "upstream lock      " if locked else "semaphore (Muster) "
        ops = []
        for _ in range(args.repeats):
            async with scratch_database(args.url) as url:
                ops.append(await saver_ops(url, locked=locked))
        print(f"saver  {label} {statistics.median(ops):7.0f} ops/s (median of {len(ops)}: "
              f"{', '.join(f'{o:.0f}' for o in ops)})")  # fmt: skip
    if args.skip_batch:
        return
    for locked in (True, False):
        label = "upstream lock      " if locked else "semaphore (Muster) "
        walls = []
        for _ in range(args.repeats):
            async with scratch_database(args.url) as url:
                walls.append(await batch_wall(url, locked=locked, model=args.model))
        print(f"batch  {args.model} {label} {min(walls):6.2f} s best, "
              f"{statistics.median(walls):6.2f} s median "
              f"({', '.join(f'{w:.2f}' for w in walls)})")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
