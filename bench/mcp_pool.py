"""MCP session pool: N concurrent `kb.search_kb` calls through the hub, with the kb server given
1, 2 or 4 sessions (`"sessions": N` in the servers file).

Run: `.venv/bin/python bench/mcp_pool.py [--repeats 5]` (a benchmark, never a test). One
process opens one hub per setting (real stdio servers, started before the clock), waits until
every session is up, then times `asyncio.gather` of N distinct searches, the way a fan-out of
N comms workers reaches the server at once. Prints the median wall per setting and its ratio to
one session, measured in the same run, with the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import harness  # bench/, beside this script: puts the project first on sys.path

from workers.hub import ToolHub, load_servers_config
from workers.hub.servers_config import DEFAULT_SERVERS_FILE, ServersConfig

QUERIES = (
    "refund",
    "duplicate charge",
    "late delivery",
    "cancel order",
    "damaged item",
    "gift card",
    "tracking",
    "return label",
    "warranty",
    "address change",
)


def with_kb_sessions(config: ServersConfig, sessions: int) -> ServersConfig:
    servers = dict(config.mcp_servers)
    servers["kb"] = servers["kb"].model_copy(update={"sessions": sessions})
    return config.model_copy(update={"mcp_servers": {"kb": servers["kb"]}})


async def one_setting(config: ServersConfig, calls: int, repeats: int) -> float:
    async with await ToolHub.connect(config) as hub:
        await hub.spares_started()
        assert hub.sessions_up("kb") == config.mcp_servers["kb"].sessions
        walls = []
        for _ in range(repeats):
            started = time.perf_counter()
            results = await asyncio.gather(
                *(
                    hub.call("kb.search_kb", {"query": QUERIES[i % len(QUERIES)]}, ["kb."])
                    for i in range(calls)
                )
            )
            walls.append(time.perf_counter() - started)
            assert all(r.ok for r in results), [r.text for r in results if not r.ok][:1]
        return statistics.median(walls)


async def main(repeats: int) -> None:
    base = load_servers_config(DEFAULT_SERVERS_FILE)
    print(f"load average: {harness.load_average()}")
    print("| calls | 1 session | 2 sessions | 4 sessions | 1 ÷ 4 |")
    print("|---|---|---|---|---|")
    for calls in (40, 200):
        walls = {s: await one_setting(with_kb_sessions(base, s), calls, repeats) for s in (1, 2, 4)}
        print(
            f"| {calls} | {walls[1] * 1000:.0f} ms | {walls[2] * 1000:.0f} ms | "
            f"{walls[4] * 1000:.0f} ms | {walls[1] / walls[4]:.2f} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    asyncio.run(main(parser.parse_args().repeats))
