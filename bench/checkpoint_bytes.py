"""Checkpoint bytes per packet: where a fan-out's checkpoint store goes, by table and channel.

Run: `.venv/bin/python bench/checkpoint_bytes.py [--compress] [N ...]` (a benchmark, never a
test; default N = 3 40 200). For each N it runs one fan-out exactly as `bench/fanout.py` does
(N `comms` packets, two offline-model turns of 100 ms with one real `kb.search_kb` call between
them, AsyncSqliteSaver on a fresh file, durability `sync`), then reads the thread's rows back:

- `checkpoints`: the `checkpoint` and `metadata` blobs of every row; each checkpoint is decoded
  with the store's strict serializer and every channel value re-encoded alone, uncompressed, so
  the bytes are split by channel ("(rest)" is versions, versions_seen, ids: the checkpoint
  minus its values).
- `writes`: the `value` blobs as stored, by channel (`__pregel_tasks` are the `Send` packets).

It prints bytes per packet for each, the total, what zlib level 1 would make of every blob
(the size a compressing serializer would store), the CPU seconds of the run, and the CPU a
fresh `aget_state` of the finished thread takes (what `resume`, `show` and `threads` pay).
`--compress` is accepted and changes nothing: it used to swap a compressing serializer into
`checkpoints.saver` for this process, and `strict_serializer` compresses what it stores
itself now (`checkpoints.serde.compressed`), so the store measured is the shipped one.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import time
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fanout  # noqa: E402 - sets the environment (a temporary WORK folder) first
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer  # noqa: E402

from checkpoints.saver import strict_serializer  # noqa: E402
from checkpoints.threads import thread_config  # noqa: E402
from graph.app.runtime import open_runtime, open_store  # noqa: E402
from graph.limits import RunLimits  # noqa: E402
from workers.contracts import CHECKPOINTED_TYPES  # noqa: E402
from workers.models import load_model_factory  # noqa: E402

SIZES = (3, 40, 200)
TARGET_PER_PACKET = 4096
"""Issue 15's bound on checkpoint bytes per packet."""


def table_bytes(db: Path, thread_id: str) -> dict[str, Any]:
    """Bytes of one thread's rows, by table and by channel, raw and zlib-1."""
    serde = strict_serializer(CHECKPOINTED_TYPES)
    plain = serde.serde if isinstance(serde, EncryptedSerializer) else serde
    by_channel: dict[str, int] = defaultdict(int)
    writes_by_channel: dict[str, int] = defaultdict(int)
    ckpt = meta = zckpt = zwrites = writes = 0
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT type, checkpoint, metadata FROM checkpoints WHERE thread_id = ?",
            (thread_id,),
        ).fetchall()
        for type_tag, blob, metadata in rows:
            ckpt += len(blob)
            meta += len(metadata)
            zckpt += len(zlib.compress(blob, 1)) + len(zlib.compress(metadata, 1))
            loaded = serde.loads_typed((type_tag, blob))
            inner = 0
            for channel, value in (loaded.get("channel_values") or {}).items():
                size = len(plain.dumps_typed(value)[1])
                by_channel[channel] += size
                inner += size
            by_channel["(rest)"] += len(plain.dumps_typed(loaded)[1]) - inner
        wrows = conn.execute(
            "SELECT channel, value FROM writes WHERE thread_id = ?", (thread_id,)
        ).fetchall()
        for channel, value in wrows:
            writes += len(value)
            zwrites += len(zlib.compress(value, 1))
            writes_by_channel[channel] += len(value)  # as stored
    conn.close()
    return {
        "ckpt_rows": len(rows),
        "ckpt": ckpt,
        "meta": meta,
        "write_rows": len(wrows),
        "writes": writes,
        "total": ckpt + meta + writes,
        "ztotal": zckpt + zwrites,
        "by_channel": dict(by_channel),
        "writes_by_channel": dict(writes_by_channel),
    }


async def measure(n: int) -> dict[str, Any]:
    db = fanout.WORK / f"bytes-{n}.sqlite"
    async with open_runtime(
        db=db,
        models=load_model_factory(f"offline:{int(fanout.TURN_S * 1000)}"),
        planner=fanout.fanout_planner(n),
        limits=RunLimits(max_steps=10_000, max_tokens=10**9),
    ) as runtime:
        thread = f"bytes-{n}"
        started = time.perf_counter()
        await fanout.timed_run(runtime, n, thread, steps=2)
        wall = time.perf_counter() - started
    async with open_store(db) as (graph, _):
        read_started = time.process_time()
        state = await graph.aget_state(thread_config(thread))
        read_cpu = time.process_time() - read_started
    assert len(state.values["reports"]) == n
    return {
        "n": n,
        "wall": wall,
        "cpu": fanout.CPU_S[thread],
        "read_cpu": read_cpu,
        **table_bytes(db, thread),
    }


def show(res: dict[str, Any]) -> None:
    n = res["n"]
    per = res["total"] / n
    verdict = "meets" if per <= TARGET_PER_PACKET else "MISSES"
    print(
        f"\nN={n}: {res['ckpt_rows']} checkpoints, {res['write_rows']} writes; "
        f"wall {res['wall']:.3f} s, cpu {res['cpu']:.3f} s; reading the state back "
        f"(aget_state) {res['read_cpu'] * 1000:.1f} ms cpu"
    )
    print(
        f"  per packet: checkpoints {res['ckpt'] / n:,.0f} B + metadata {res['meta'] / n:,.0f} B "
        f"+ writes {res['writes'] / n:,.0f} B = {per:,.0f} B ({verdict} <= {TARGET_PER_PACKET}); "
        f"zlib-1 of every blob: {res['ztotal'] / n:,.0f} B"
    )
    for title, table in (("checkpoint", res["by_channel"]), ("writes", res["writes_by_channel"])):
        parts = sorted(table.items(), key=lambda kv: -kv[1])
        shown = ", ".join(f"{ch} {size / n:,.0f}" for ch, size in parts if size / n >= 1)
        print(f"  {title} bytes per packet by channel: {shown}")


async def main() -> None:
    args = sys.argv[1:]
    sizes = tuple(int(a) for a in args if a != "--compress") or SIZES
    serde = type(strict_serializer(CHECKPOINTED_TYPES)).__name__
    print(
        f"checkpoint bytes per packet (fan-out as bench/fanout.py; serializer {serde}; "
        f"data in {fanout.WORK})"
    )
    for n in sizes:
        show(await measure(n))


if __name__ == "__main__":
    asyncio.run(main())
