"""LangGraph Studio for real: `langgraph dev` as a subprocess, driven through the SDK.

The server loads the graph from `langgraph.json` and runs the lifespan of `graph/app/studio.py`,
which starts the real MCP servers once for the whole process. The test runs the demo ticket
paused before `synthesize` (as a Studio user stepping through it would), continues it, then
approves a refund through the approval interrupt and checks the orders database. Finally it
stops the server the way a terminal does (SIGTERM to its process group) and checks that the
MCP servers it started are gone: they run in sessions of their own, so only the lifespan's
shutdown could have stopped them.

Faster checks run first: `langgraph.json` mounts the lifespan, the exported graph is plain
(no checkpointer, no context schema), and `studio_services` serves a run that has the
server's kind of context (a dict) and then stops every server, in this process.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from servers.call_log import count_calls
from tests.conftest import DEMO_TICKET, HANG_TIMEOUT_S, PROJECT_ROOT, MusterEnv
from workers.errors import ConfigError
from workers.hub.servers_config import load_servers_config

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="needs /proc to find the server's children"
)

LANGGRAPH = Path(sys.executable).with_name("langgraph")
"""The CLI installed next to this Python (the dev extra installs langgraph-cli[inmem])."""
GRAPH_ID = "muster"
REFUND_TICKET = "Order #12345 was charged twice, please refund the duplicate"
SERVERS_CONFIG = load_servers_config()
SERVERS = set(SERVERS_CONFIG.mcp_servers)
"""Every server in domains/support/servers.json: Studio starts them all."""
START_TIMEOUT_S = HANG_TIMEOUT_S
"""Only a server that never comes up reaches it: tests wait for /ok to answer."""
STOP_TIMEOUT_S = HANG_TIMEOUT_S
"""Only a server that ignores the signal reaches it: tests wait for it to exit."""
HTTP_TIMEOUT_S = 60.0
"""Per request to a server that is up: a loaded machine answers late, not never."""


def free_port() -> int:
    """A port nothing listens on right now (`langgraph dev` silently moves off a busy one)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def parent_pids() -> dict[int, int]:
    """pid -> parent pid for every live process, from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # exited while we looked
        # The command name is in parentheses and may contain spaces: split after it.
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return parents


def descendants(root: int) -> set[int]:
    """Every live process below `root`."""
    children: dict[int, list[int]] = {}
    for pid, ppid in parent_pids().items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def running(pid: int) -> bool:
    """Whether `pid` is alive (a zombie has exited: it only waits to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def run_refunds(orders_db: Path, order_id: str) -> list[dict[str, Any]]:
    """Refund rows runs wrote for one order (seed rows, keyed `seed-...`, excluded)."""
    with sqlite3.connect(orders_db) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute(
            "SELECT order_id, amount_cents, idempotency_key FROM refunds"
            " WHERE order_id = ? AND idempotency_key NOT LIKE 'seed-%'",
            (order_id,),
        ).fetchall()
    return [dict(row) for row in rows]


def test_langgraph_json_serves_the_graph_and_mounts_the_studio_lifespan() -> None:
    config = json.loads((PROJECT_ROOT / "langgraph.json").read_text())
    assert config["graphs"] == {GRAPH_ID: "./graph/app/studio.py:graph"}
    assert config.get("http", {}).get("app") == "./graph/app/studio.py:app", (
        'langgraph.json needs "http": {"app": "./graph/app/studio.py:app"}: its lifespan starts '
        "the MCP servers for Studio runs"
    )


def test_studio_graph_is_plain_and_keeps_its_allowlist_across_copies() -> None:
    from graph.app.studio import StudioGraph, graph

    assert isinstance(graph, StudioGraph)
    assert graph.checkpointer is None
    assert graph.context_schema is None  # the server's dict context must not become Services
    # langgraph fills the allowlist only under LANGGRAPH_STRICT_MSGPACK; set one by hand.
    allow = {("workers.contracts", "Report")}
    graph_copy = graph.copy()
    graph_copy._serde_allowlist = allow
    copied = graph_copy.copy(update={"checkpointer": None})
    assert isinstance(copied, StudioGraph)
    assert copied._serde_allowlist == allow


@pytest.mark.integration
async def test_studio_services_serve_runs_without_context_then_stop(
    muster_env: MusterEnv,
) -> None:
    from graph.app.studio import graph, studio_services

    before = descendants(os.getpid())
    async with studio_services(directory=muster_env.root / "studio") as services:
        pids = {name: state.pid for name, state in services.hub.health().items()}
        assert set(pids) == SERVERS and all(pids.values()), pids
        # A LangGraph server passes its own dict as the context: that is not ours.
        values = await graph.ainvoke({"request": DEMO_TICKET}, context={"thread_id": "t-1"})
        assert values["answer"].text
        assert count_calls(muster_env.call_log, server="orders") > 0
    assert not [pid for pid in pids.values() if pid is not None and running(pid)]
    assert descendants(os.getpid()) <= before
    with pytest.raises(ConfigError):  # uninstalled on exit
        await graph.ainvoke({"request": DEMO_TICKET})


@dataclass
class Studio:
    """A running `langgraph dev` and where its output goes."""

    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def stop(self, sig: signal.Signals) -> int | None:
        """Signal the server's process group; its exit code, or None if it did not exit."""
        try:
            os.killpg(self.process.pid, sig)  # start_new_session: pgid == pid
        except ProcessLookupError:
            pass
        try:
            return self.process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return None


def start_studio(env: MusterEnv) -> Studio:
    port = free_port()
    log = env.root / "langgraph-dev.log"
    environ = {
        **os.environ,  # muster_env's MUSTER_* settings: the MCP servers inherit them
        "MUSTER_STUDIO_DIR": str(env.root / "studio"),  # the audit log: not in the project
        "LANGGRAPH_STRICT_MSGPACK": "true",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    }
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(LANGGRAPH), "dev", "--no-browser", "--no-reload"]
            + ["--host", "127.0.0.1", "--port", str(port)],
            cwd=PROJECT_ROOT,
            env=environ,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Studio(process=process, url=f"http://127.0.0.1:{port}", log=log)


async def wait_until_ready(studio: Studio) -> None:
    """Poll /ok; a server that cannot load the graph stays up but never answers it."""
    deadline = time.monotonic() + START_TIMEOUT_S
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT_S) as http:
        while time.monotonic() < deadline:
            if "already in use" in studio.output():
                pytest.fail(f"the port was taken; langgraph dev moved:\n{studio.output()}")
            if studio.process.poll() is not None:
                pytest.fail(
                    f"langgraph dev exited with {studio.process.returncode}:\n{studio.output()}"
                )
            try:
                if (await http.get(f"{studio.url}/ok")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.25)
    pytest.fail(f"langgraph dev did not answer /ok in {START_TIMEOUT_S}s:\n{studio.output()}")


@pytest.fixture
async def studio(muster_env: MusterEnv) -> AsyncIterator[Studio]:
    server = start_studio(muster_env)
    below: set[int] = set()
    try:
        await wait_until_ready(server)
        below = descendants(server.process.pid)
        yield server
    finally:
        # Only does anything if the test failed before its own clean stop.
        if server.process.poll() is None:
            below |= descendants(server.process.pid)
            server.stop(signal.SIGKILL)
        for pid in below:
            if running(pid):
                os.kill(pid, signal.SIGKILL)


async def mcp_servers(studio: Studio) -> dict[str, dict[str, Any]]:
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT_S) as http:
        response = await http.get(f"{studio.url}/muster/servers")
    assert response.status_code != 404, "langgraph.json does not mount graph/app/studio.py:app"
    response.raise_for_status()
    servers: dict[str, dict[str, Any]] = response.json()["servers"]
    return servers


@pytest.mark.slow
@pytest.mark.integration
async def test_studio_runs_use_real_servers_and_shutdown_stops_them(
    studio: Studio, muster_env: MusterEnv
) -> None:
    # The lifespan started every configured server, as children of the langgraph process.
    before = await mcp_servers(studio)
    assert set(before) == SERVERS
    assert all(s["up"] and s["pid"] for s in before.values()), before
    children = descendants(studio.process.pid)
    server_pids = {s["pid"] for s in before.values()}
    assert server_pids <= children, (server_pids, children)
    for name, server in before.items():  # and they are the configured commands
        assert " ".join(SERVERS_CONFIG.mcp_servers[name].args) in cmdline(server["pid"])

    async with get_client(url=studio.url, timeout=httpx.Timeout(HANG_TIMEOUT_S)) as client:
        # Step through the demo ticket: pause before synthesize, inspect, continue.
        thread = (await client.threads.create())["thread_id"]
        await client.runs.wait(
            thread,
            GRAPH_ID,
            input={"request": DEMO_TICKET},
            interrupt_before=["synthesize"],
        )
        state = await client.threads.get_state(thread)
        assert tuple(state["next"]) == ("synthesize",)
        values: Any = state["values"]
        workers = {report["worker"] for report in values["reports"]}
        assert {"billing", "policy", "comms"} <= workers, workers
        assert "answer" not in values or not values["answer"]

        final: Any = await client.runs.wait(thread, GRAPH_ID, input=None)
        assert final["answer"]["text"], final["answer"]
        history = await client.threads.get_history(thread, limit=100)
        assert len(history) >= 5, [h["next"] for h in history]
        assert not (await client.threads.get_state(thread))["next"]

        # A refund: the run stops at the approval interrupt; approve it through the SDK.
        refund_thread = (await client.threads.create())["thread_id"]
        await client.runs.wait(refund_thread, GRAPH_ID, input={"request": REFUND_TICKET})
        waiting = await client.threads.get_state(refund_thread)
        assert tuple(waiting["next"]) == ("approve",)
        interrupts = waiting["interrupts"]
        assert len(interrupts) == 1, interrupts
        ask: Any = interrupts[0]["value"]
        assert ask["kind"] == "approval" and ask["tool"] == "orders.issue_refund", ask
        assert ask["args"]["order_id"] == "12345"
        assert run_refunds(muster_env.orders_db, "12345") == []  # nothing before approval

        done: Any = await client.runs.wait(
            refund_thread,
            GRAPH_ID,
            command={
                "resume": {
                    "approved": True,
                    "digest": ask["digest"],
                    "by": "studio-test",
                    "note": "duplicate charge confirmed",
                }
            },
        )
        assert "EXECUTED" in done["answer"]["text"], done["answer"]["text"]

    refunds = run_refunds(muster_env.orders_db, "12345")
    assert len(refunds) == 1, refunds
    assert not refunds[0]["idempotency_key"].startswith("seed-")
    assert count_calls(muster_env.call_log, server="orders") > 0
    assert count_calls(muster_env.call_log, server="policy") > 0

    # One hub for the whole process: the same servers served every run, none restarted.
    after = await mcp_servers(studio)
    assert {n: s["pid"] for n, s in after.items()} == {n: s["pid"] for n, s in before.items()}
    assert all(s["restarts"] == 0 for s in after.values()), after

    # The approval and the execution were audited outside the project tree.
    audit_db = muster_env.root / "studio" / "audit.sqlite"
    with sqlite3.connect(audit_db) as conn:
        events = [row[0] for row in conn.execute("SELECT event FROM muster_audit ORDER BY id")]
    assert events[0] == "decision" and events[-1] == "execution", events

    # Stop it as a terminal would. The MCP servers run in sessions of their own, so the
    # signal does not reach them: only the lifespan's shutdown can have stopped them.
    children = descendants(studio.process.pid)
    assert server_pids <= children
    code = await asyncio.to_thread(studio.stop, signal.SIGTERM)
    assert code is not None, f"langgraph dev ignored SIGTERM:\n{studio.output()}"
    # No grace period: the hub's aclose() returns only once its servers are gone, and the
    # process exits only after the lifespan's shutdown has returned.
    left = {pid: cmdline(pid) for pid in children if running(pid)}
    assert not left, f"processes outlived the server: {left}"
    output = studio.output()
    assert "BlockingError" not in output, output
    assert "Traceback" not in output, output
    # uvicorn shuts down gracefully, then re-raises the signal it caught.
    assert code in (0, -signal.SIGTERM), f"exit code {code}:\n{output}"
