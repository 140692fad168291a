"""Benchmark: what the hub's persistent sessions cost and buy (a script, never a test).

    python bench/hub_latency.py [--calls 200] [--adapter-calls 10] [--starts 3]

In one run, against the same server and tool (orders.find_order):

- median per-call latency through ToolHub.call, through a raw mcp.ClientSession over stdio,
  and through tools from langchain_mcp_adapters' MultiServerMCPClient.get_tools() (each of
  whose calls spawns a fresh server process, hence fewer calls);
- time to start the three real servers concurrently (ToolHub.connect) and one after another
  (ToolHub.connect(sequential=True)).

Targets: hub/raw <= 1.3, adapters/hub >= 100, concurrent/sequential start <= 0.7.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

import harness  # bench/, beside this script: puts the project first on sys.path
from langchain_mcp_adapters.client import MultiServerMCPClient
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = harness.ROOT

from workers.hub import (  # noqa: E402
    DEFAULT_SERVERS_FILE,
    ToolHub,  # noqa: E402
    load_servers_config,
)

ARGS = {"order_id": "12345"}
WARMUP = 20


async def median_ms(call: Callable[[], Awaitable[Any]], n: int, warmup: int = WARMUP) -> float:
    for _ in range(warmup):
        await call()
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1000.0)
    return statistics.median(samples)


def open_devnull() -> TextIO:
    return open(os.devnull, "w")  # closed by the caller's `with`


async def bench_hub_and_raw(n: int) -> tuple[float, float, float]:
    """Median ms per call: through the hub, through a raw ClientSession on its own server
    process, and through the hub's own ClientSession directly (same server process as the
    hub, so the difference to the hub is exactly what the hub adds). Calls are interleaved
    one by one so background load on the machine hits all three alike."""
    config = load_servers_config(DEFAULT_SERVERS_FILE)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "servers.orders"], env=dict(os.environ), cwd=str(ROOT)
    )
    with open_devnull() as devnull:
        async with (
            await ToolHub.connect(config) as hub,
            stdio_client(params, errlog=devnull) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            hub_session = hub._pool.conns["orders"].session  # noqa: SLF001 - measuring the hub itself
            assert hub_session is not None

            async def via_hub() -> None:
                result = await hub.call("orders.find_order", ARGS, ["orders.find_order"])
                assert result.ok, result.text

            async def via_raw() -> None:
                result = await session.call_tool("find_order", ARGS)
                assert not result.isError

            async def via_hub_session() -> None:
                assert hub_session is not None
                result = await hub_session.call_tool("find_order", ARGS)
                assert not result.isError

            calls = [via_hub, via_raw, via_hub_session]
            samples: list[list[float]] = [[], [], []]
            for i in range(WARMUP + n):
                order = list(range(3)) if i % 2 == 0 else [2, 1, 0]
                for k in order:
                    started = time.perf_counter()
                    await calls[k]()
                    if i >= WARMUP:
                        samples[k].append((time.perf_counter() - started) * 1000.0)
            hub_ms, raw_ms, same_ms = (statistics.median(x) for x in samples)
            return hub_ms, raw_ms, same_ms


async def bench_adapters(n: int) -> float:
    client = MultiServerMCPClient(
        {
            "orders": {
                "transport": "stdio",
                "command": sys.executable,
                "args": ["-m", "servers.orders"],
                "env": dict(os.environ),
                "cwd": str(ROOT),
            }
        }
    )
    tools = {tool.name: tool for tool in await client.get_tools()}
    find_order = tools["find_order"]

    async def call() -> None:
        await find_order.ainvoke(ARGS)

    return await median_ms(call, n, warmup=1)


async def bench_start(reps: int) -> tuple[float, float]:
    full = load_servers_config(DEFAULT_SERVERS_FILE)
    # Muster's own three servers; third-party ones in the file are not part of this figure.
    config = full.model_copy(
        update={
            "mcp_servers": {
                k: v for k, v in full.mcp_servers.items() if k in ("orders", "kb", "policy")
            }
        }
    )
    concurrent: list[float] = []
    sequential: list[float] = []
    for rep in range(reps):
        # Alternate the order so neither mode always runs on a warmer page cache.
        for mode in (False, True) if rep % 2 == 0 else (True, False):
            started = time.perf_counter()
            hub = await ToolHub.connect(config, sequential=mode)
            elapsed = (time.perf_counter() - started) * 1000.0
            assert all(state.up for state in hub.health().values()), hub.health()
            await hub.aclose()
            (sequential if mode else concurrent).append(elapsed)
    return statistics.median(concurrent), statistics.median(sequential)


def verdict(ok: bool) -> str:
    return harness.verdict(ok, "ok")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--adapter-calls", type=int, default=10)
    parser.add_argument("--starts", type=int, default=3)
    opts = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="muster-bench-") as tmp:
        # Servers inherit this env: a throwaway orders DB, and no call log to write.
        os.environ["MUSTER_ORDERS_DB"] = str(Path(tmp) / "orders.sqlite")
        os.environ.pop("MUSTER_CALL_LOG", None)
        os.chdir(ROOT)

        print(f"orders.find_order, median of {opts.calls} calls after {WARMUP} warm-up calls")
        hub_ms, raw_ms, same_ms = await bench_hub_and_raw(opts.calls)
        adapters_ms = await bench_adapters(opts.adapter_calls)
        print(f"  hub (ToolHub.call, persistent session)   {hub_ms:9.3f} ms")
        print(f"  raw mcp.ClientSession over stdio         {raw_ms:9.3f} ms  (its own server)")
        print(f"  raw: the hub's ClientSession directly    {same_ms:9.3f} ms  (the hub's server)")
        print(
            f"  adapters get_tools() tool ({opts.adapter_calls} calls)    "
            f"{adapters_ms:9.3f} ms  (spawns a server per call)"
        )

        concurrent_ms, sequential_ms = await bench_start(opts.starts)
        print(f"starting orders, kb, policy (median of {opts.starts})")
        print(f"  concurrently (ToolHub.connect)           {concurrent_ms:9.1f} ms")
        print(f"  one after another (sequential=True)      {sequential_ms:9.1f} ms")

        hub_raw = hub_ms / raw_ms
        hub_same = hub_ms / same_ms
        adapters_hub = adapters_ms / hub_ms
        start_ratio = concurrent_ms / sequential_ms
        print("ratios")
        print(
            f"  hub/raw                  {hub_raw:8.2f}  (target <= 1.3)  {verdict(hub_raw <= 1.3)}"
        )
        print(
            f"  hub/raw, same process    {hub_same:8.2f}  (target <= 1.3)  "
            f"{verdict(hub_same <= 1.3)}  (isolates the hub's own overhead)"
        )
        print(
            f"  adapters/hub             {adapters_hub:8.1f}  (target >= 100)  "
            f"{verdict(adapters_hub >= 100)}"
        )
        print(
            f"  concurrent/sequential    {start_ratio:8.2f}  (target <= 0.7)  "
            f"{verdict(start_ratio <= 0.7)}"
        )


if __name__ == "__main__":
    asyncio.run(main())
