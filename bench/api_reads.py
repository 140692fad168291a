"""API reads on a store of 10,000 threads: `GET /threads` and `GET /threads/{id}`, p50 and p95.

Run: `.venv/bin/python bench/api_reads.py [--threads 10000] [--requests 200]` (a benchmark,
never a test). Target (issue 27): p50 <= 20 ms for both.

The store is seeded efficiently: two real threads are run once through the graph with the
real MCP servers (the reference refund, paused for approval, and a question about an order,
answered), then their checkpoint and write rows are copied in SQL under 10,000 thread ids
(half of each). `muster serve` then runs for real, as its own process (uvicorn on a loopback
port, accounts with an API token), and the reads go over HTTP with one keep-alive client. (A
server run in a thread of the client's process measures the GIL hand-offs instead: about
44 ms a request on this machine even for an empty route.) The first list builds
the server's thread index (graph/app/serve/thread_index.py: every thread described once),
timed apart; the lists after it describe only the threads written since.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness  # bench/, beside this script: puts the project first on sys.path

TICKET = "Order #12345 was charged twice, please refund the duplicate"
QUESTION = "Where is my order #12345? It has not arrived yet."


def set_env(root: Path) -> Path:
    db = root / "checkpoints.sqlite"
    os.environ.update(
        {
            **harness.store_env(root, db=db),
            "MUSTER_APPROVAL_SECRET": "bench-secret",
            "MUSTER_SEAL_KEY_FILE": str(root / "seal.key"),
            "MUSTER_ACCOUNTS": str(root / "accounts.sqlite"),
        }
    )
    return db


async def templates(db: Path) -> None:
    """Run two real threads: `waiting` (the reference refund, paused for approval) and
    `done` (a question Muster answers without a human)."""
    from graph.app.options import MusterOptions
    from graph.app.runtime import open_runtime, stream_run

    async with open_runtime(MusterOptions.resolve(db=db)) as runtime:
        await stream_run(runtime, "waiting", {"request": TICKET})
        await stream_run(runtime, "done", {"request": QUESTION})
        for thread in ("waiting", "done"):
            snapshot = await runtime.graph.aget_state({"configurable": {"thread_id": thread}})
            print(f"template {thread}: {'interrupted' if snapshot.interrupts else 'not waiting'}")


def seed(db: Path, count: int) -> float:
    """Copy the two templates' rows under `count` thread ids; seconds taken."""
    started = time.perf_counter()
    conn = sqlite3.connect(db)
    with conn:
        for i in range(count):
            template = "waiting" if i % 2 else "done"
            thread = f"bench-{i:05d}"
            conn.execute(
                "INSERT INTO checkpoints SELECT ?, checkpoint_ns, checkpoint_id,"
                " parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints"
                " WHERE thread_id = ?",
                (thread, template),
            )
            conn.execute(
                "INSERT INTO writes SELECT ?, checkpoint_ns, checkpoint_id, task_id, task_path,"
                " idx, channel, type, value FROM writes WHERE thread_id = ?",
                (thread, template),
            )
    conn.close()
    return time.perf_counter() - started


def percentiles(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p95 = ms[int(len(ms) * 0.95) - 1]
    return f"p50 {statistics.median(ms):6.1f} ms  p95 {p95:6.1f} ms  (n={len(ms)})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="muster-api-reads-"))
    db = set_env(root)

    import httpx

    from graph.app.serve.accounts import Accounts

    started = time.perf_counter()
    asyncio.run(templates(db))
    print(f"templates: 2 real threads in {time.perf_counter() - started:.1f} s")
    took = seed(db, args.threads)
    size = db.stat().st_size / 2**20
    print(f"seeded {args.threads:,} threads in {took:.1f} s ({size:,.0f} MiB store)")

    accounts = Accounts(root / "accounts.sqlite")
    accounts.add("lead", ("agent", "team_lead"), "bench-password-1")
    token = accounts.new_token("lead")
    accounts.close()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = root / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "graph.app.cli", "serve", "--port", str(port), "--db", str(db)],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=Path(__file__).resolve().parent.parent,
        )
    while "Uvicorn running" not in log.read_text():
        if proc.poll() is not None:
            raise SystemExit(f"muster serve exited: {log.read_text()}")
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {token}"}
    try:
        with httpx.Client(base_url=url, headers=headers, timeout=600) as client:
            first = time.perf_counter()
            listed = client.get("/threads", params={"limit": 50})
            assert listed.status_code == 200, listed.text
            print(
                f"first list (builds the index of {listed.headers['x-total-count']} threads): "
                f"{time.perf_counter() - first:.1f} s"
            )
            ids = [f"bench-{i:05d}" for i in random.Random(1).sample(range(args.threads), 50)]
            reads = {
                "GET /threads/unknown (404: the floor)": lambda i: client.get("/threads/nope"),
                "GET /threads?limit=50": lambda i: client.get("/threads", params={"limit": 50}),
                "GET /threads?status=interrupted&q=12345&offset=900": lambda i: client.get(
                    "/threads",
                    params={"status": "interrupted", "q": "12345", "limit": 50, "offset": 900},
                ),
                "GET /threads/{id}": lambda i: client.get(f"/threads/{ids[i % len(ids)]}"),
                "GET /approvals?limit=20": lambda i: client.get("/approvals", params={"limit": 20}),
            }
            for name, read in reads.items():
                samples = []
                for i in range(args.requests):
                    t0 = time.perf_counter()
                    response = read(i)
                    samples.append(time.perf_counter() - t0)
                    assert response.status_code in (200, 404), response.text
                print(f"{name:55} {percentiles(samples)}")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
