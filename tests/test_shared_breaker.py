"""A circuit breaker the whole fleet sees: two hubs (two runtimes, as two processes would
have) on one store, SQLite and PostgreSQL, each with its own broken policy server and its
own call log (checkpoints/breakers.py).

Hub A's breaker opens after its failed calls; hub B, which never called the server, skips
it at once (its server's log stays empty) and its planning sees it shut. Once the
cool-down is over, ten calls from both hubs at once send exactly one probe to a server;
a success on a third hub's healthy server closes the circuit for all. Every wait is a
poll of the board (until the cool-down has passed), never a fixed sleep.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import pytest

from checkpoints.breakers import BreakerBoard, breaker_board
from servers.call_log import count_calls
from tests.conftest import HANG_TIMEOUT_S, MusterEnv
from tests.test_fleet_db import fresh_database  # noqa: F401 (a fixture: a database of its own)
from workers.hub import CallOutcome, ToolHub
from workers.hub.servers_config import DEFAULT_SERVERS_FILE, parse_servers_config

THRESHOLD = 3
COOLDOWN_S = 1.5


def _policy(tmp: Path, log: str, mode: str) -> dict[str, object]:
    base = json.loads(DEFAULT_SERVERS_FILE.read_text(encoding="utf-8"))["mcpServers"]["policy"]
    env = {**base.get("env", {}), "MUSTER_CALL_LOG": str(tmp / log), "MUSTER_POLICY_MODE": mode}
    return {"mcpServers": {"policy": {**base, "env": env}}}


@asynccontextmanager
async def _hubs(
    tmp: Path, location: Path | str, *modes: str
) -> AsyncIterator[list[ToolHub]]:
    """One hub per mode, each with its own policy server (log `<index>.jsonl`) and its own
    board on the store at `location`."""
    async with AsyncExitStack() as stack:
        hubs = []
        for index, mode in enumerate(modes):
            config = parse_servers_config(_policy(tmp, f"{index}.jsonl", mode))
            hub = await stack.enter_async_context(await ToolHub.connect(config))
            board = breaker_board(location)
            stack.push_async_callback(board.aclose)
            hub.backpressure.board = board
            hubs.append(hub)
        yield hubs


async def _due(board: BreakerBoard) -> None:
    """Until the open circuit's cool-down has passed, by the board's clock."""
    deadline = time.monotonic() + HANG_TIMEOUT_S
    while (row := await board.read("policy")) is None or row.remaining_s > 0:
        assert row is not None, "the circuit closed"
        assert time.monotonic() < deadline, "the cool-down never passed"
        await asyncio.sleep(0.05)


async def _call(hub: ToolHub) -> CallOutcome:
    result = await hub.call("policy.check_policy", {"topic": "refunds"}, ["policy."])
    return result.outcome


@pytest.fixture(params=["sqlite", "postgres"])
def store(
    request: pytest.FixtureRequest, muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> Path | str:
    monkeypatch.setenv("MUSTER_BREAKER_FAILURES", str(THRESHOLD))
    monkeypatch.setenv("MUSTER_BREAKER_COOLDOWN_S", str(COOLDOWN_S))
    if request.param == "sqlite":
        return muster_env.checkpoint_db
    return str(request.getfixturevalue("fresh_database"))


@pytest.mark.integration
async def test_an_open_circuit_is_seen_by_every_process_and_probed_once(
    store: Path | str, tmp_path: Path
) -> None:
    async with _hubs(tmp_path, store, "broken", "broken", "healthy") as (a, b, healthy):
        log = [tmp_path / f"{i}.jsonl" for i in range(3)]
        board = breaker_board(store)  # what any other process on the store reads
        assert await board.read("policy") is None  # nothing open yet
        # A opens its circuit; the board now says so.
        assert [await _call(a) for _ in range(THRESHOLD)] == [CallOutcome.TOOL_ERROR] * 3
        row = await board.read("policy")
        assert row is not None and row.remaining_s > 0 and "policy-db" in row.last_failure
        # B skips the server without ever having called it, and plans without it.
        refused = await b.call("policy.check_policy", {"topic": "refunds"}, ["policy."])
        assert refused.outcome is CallOutcome.UNAVAILABLE and "circuit open" in refused.text
        await b.backpressure.refresh(["policy"])
        assert b.backpressure.is_open("policy")
        assert count_calls(log[1], server="policy") == 0

        # The cool-down over, ten calls from both at once: one probe reaches a server.
        await _due(board)
        outcomes = await asyncio.gather(*(_call(hub) for hub in (a, b) * 5))
        probes = count_calls(log[0], server="policy") + count_calls(log[1], server="policy")
        assert probes == THRESHOLD + 1, outcomes
        assert sorted(outcomes).count(CallOutcome.TOOL_ERROR) == 1
        reopened = await board.read("policy")
        assert reopened is not None and reopened.reopened == 2  # the failed probe doubled it
        assert reopened.cooldown_s > COOLDOWN_S

        # A healthy server's success (the next cool-down's probe) closes it for everyone.
        await _due(board)
        assert await _call(healthy) is CallOutcome.OK
        assert await board.read("policy") is None
        assert await _call(b) is CallOutcome.TOOL_ERROR  # B asks its server again
        assert count_calls(log[1], server="policy") >= 1
        await board.aclose()
