"""The servers' stdio transport on the loop's own pipes (servers/stdio_pipes.py).

A real kb server behind the hub takes a message line far past asyncio's 64 KiB default and
answers concurrent calls; started with its stdout on a regular file (no pipe to watch),
it still serves, on the SDK's own transport.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from servers.call_log import read_calls
from tests.conftest import MusterEnv
from workers.hub import ToolHub
from workers.hub.servers_config import DEFAULT_SERVERS_FILE, load_servers_config

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.integration


async def test_a_long_line_and_concurrent_calls(muster_env: MusterEnv) -> None:
    config = load_servers_config(DEFAULT_SERVERS_FILE)
    only_kb = config.model_copy(update={"mcp_servers": {"kb": config.mcp_servers["kb"]}})
    async with await ToolHub.connect(only_kb, call_timeout_s=20.0) as hub:
        query = "refund " * 30_000  # a 210 KB request line
        long = await hub.call("kb.search_kb", {"query": query}, ("kb.",))
        assert long.ok, long.text  # the reply echoes the query: the hub caps its text
        results = await asyncio.gather(
            *(hub.call("kb.search_kb", {"query": f"refund case {i}"}, ("kb.",)) for i in range(50))
        )
        assert all(r.ok for r in results), [r.text for r in results if not r.ok][:1]
        echoed = {json.loads(r.text)["query"] for r in results}
        assert echoed == {f"refund case {i}" for i in range(50)}
    calls = read_calls(muster_env.call_log)
    assert sum(1 for c in calls if c["tool"] == "search_kb") == 51
    assert any(len(c["args"]["query"]) == len(query) for c in calls)


def _messages(*messages: dict[str, object]) -> str:
    return "".join(json.dumps(m) + "\n" for m in messages)


def test_a_regular_file_falls_back_to_the_sdk_transport(tmp_path: Path) -> None:
    """stdout on a regular file: asyncio cannot watch it, so the SDK's transport serves."""
    replies = tmp_path / "out.jsonl"
    with replies.open("wb") as stdout:
        server = subprocess.Popen(
            [sys.executable, "-m", "servers.kb"],
            stdin=subprocess.PIPE,
            stdout=stdout,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
        )
    try:
        assert server.stdin is not None
        server.stdin.write(_messages(*REQUESTS).encode())
        server.stdin.flush()
        deadline = time.monotonic() + 60
        by_id: dict[int, dict[str, Any]] = {}
        while 2 not in by_id:  # polls a file: there is no event to wait on
            assert time.monotonic() < deadline, replies.read_text()[-2000:]
            time.sleep(0.02)
            lines = replies.read_text().splitlines()
            by_id = {m["id"]: m for m in map(json.loads, lines) if "id" in m}
        server.stdin.close()
        assert server.wait(timeout=60) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert by_id[1]["result"]["serverInfo"]["name"]
    assert "search_kb" in {t["name"] for t in by_id[2]["result"]["tools"]}


REQUESTS: tuple[dict[str, object], ...] = (
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
)
