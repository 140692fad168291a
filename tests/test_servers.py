"""Tests for the MCP servers: in memory through the SDK's client, and as real stdio subprocesses."""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.server.fastmcp import FastMCP
from mcp.shared.exceptions import McpError
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import CallToolResult, TextContent

from servers import kb, orders, policy
from servers.approval import (
    action_digest,
    mint_token,
    secret_from_env,
    verify_token,
)
from servers.call_log import count_calls, read_calls, record
from tests.conftest import HANG_TIMEOUT_S

ROOT = Path(__file__).resolve().parent.parent
SECRET = "test-secret-do-not-use"
REFUND = "orders.issue_refund"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    paths = {"db": tmp_path / "orders.sqlite", "log": tmp_path / "calls.jsonl"}
    monkeypatch.setenv("MUSTER_ORDERS_DB", str(paths["db"]))
    monkeypatch.setenv("MUSTER_CALL_LOG", str(paths["log"]))
    monkeypatch.setenv("MUSTER_APPROVAL_SECRET", SECRET)
    monkeypatch.delenv("MUSTER_POLICY_MODE", raising=False)
    monkeypatch.delenv("MUSTER_POLICY_SLOW_S", raising=False)
    return paths


@asynccontextmanager
async def memory(server: FastMCP) -> AsyncIterator[ClientSession]:
    with anyio.fail_after(HANG_TIMEOUT_S):  # only a hang reaches it
        async with create_connected_server_and_client_session(server._mcp_server) as session:
            yield session


@asynccontextmanager
async def stdio(module: str, errlog: Path, **extra_env: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", f"servers.{module}"],
        env={**os.environ, **extra_env},
        cwd=ROOT,
    )
    with anyio.fail_after(HANG_TIMEOUT_S), errlog.open("w") as err:  # server start included
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.isError, text(result)
    data = json.loads(text(result))
    assert isinstance(data, dict)
    return data


def error(result: CallToolResult) -> str:
    assert result.isError, text(result)
    return text(result)


def approve(order_id: str, amount: int, key: str, *, ttl: float = 300.0) -> str:
    args = {"order_id": order_id, "amount_cents": amount, "idempotency_key": key}
    return mint_token(action_digest(REFUND, args), secret=SECRET, expires_at=time.time() + ttl)


def refund_rows(db: Path, order_id: str = "12345") -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(
            "SELECT refund_id, amount_cents, idempotency_key FROM refunds WHERE order_id = ?",
            (order_id,),
        ).fetchall()


def refund_args(amount: int, key: str, approval: str | None = None) -> dict[str, Any]:
    token = approve("12345", amount, key) if approval is None else approval
    return {"order_id": "#12345", "amount_cents": amount, "idempotency_key": key, "approval": token}


# --- approval tokens and the call log -----------------------------------------------------------


def test_approval_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    digest = action_digest(
        REFUND, {"order_id": "12345", "amount_cents": 12900, "idempotency_key": "k1"}
    )
    assert digest == action_digest(
        REFUND, {"idempotency_key": "k1", "amount_cents": 12900, "order_id": "12345"}
    )
    token = mint_token(digest, secret=SECRET, expires_at=1000.9)
    assert token.startswith("1000.")
    assert verify_token(token, digest, secret=SECRET, now=999.0) is None
    assert verify_token(token, digest, secret=SECRET, now=1000.0) == "approval expired"
    assert verify_token(token, "0" * 64, secret=SECRET, now=0) == (
        "approval does not match this action"
    )
    assert verify_token(token, digest, secret="other", now=0) == (
        "approval does not match this action"
    )
    assert verify_token("", digest, secret=SECRET, now=0) == "missing approval"
    assert verify_token("nonsense", digest, secret=SECRET, now=0) == "malformed approval"
    monkeypatch.delenv("MUSTER_APPROVAL_SECRET", raising=False)
    assert secret_from_env() is None
    monkeypatch.setenv("MUSTER_APPROVAL_SECRET", "s")
    assert secret_from_env() == "s"


def test_call_log_record_and_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "log.jsonl"
    monkeypatch.delenv("MUSTER_CALL_LOG", raising=False)
    record("kb", "search_kb", {"query": "x"})  # unset: a no-op
    assert read_calls(log) == []
    monkeypatch.setenv("MUSTER_CALL_LOG", str(log))
    for i in range(3):
        record("kb", "search_kb", {"query": str(i)})
    record("orders", "find_order", {"order_id": "1"})
    calls = read_calls(log)
    assert [c["args"] for c in calls[:3]] == [{"query": "0"}, {"query": "1"}, {"query": "2"}]
    assert set(calls[0]) == {"server", "tool", "args", "ts", "pid"}
    assert calls[0]["pid"] == os.getpid()
    assert count_calls(log) == 4
    assert count_calls(log, server="kb") == 3
    assert count_calls(log, tool="find_order") == 1
    assert count_calls(log, server="kb", tool="find_order") == 0


def test_servers_json_points_at_modules() -> None:
    config = json.loads((ROOT / "domains" / "support" / "servers.json").read_text())["mcpServers"]
    assert set(config) == {"orders", "kb", "policy", "time"}
    assert config["time"]["args"][:2] == ["-m", "mcp_server_time"]  # the third-party one
    for name, spec in ((n, s) for n, s in config.items() if n != "time"):
        assert spec["command"] == "python"
        assert spec["args"] == ["-m", f"servers.{name}"]
        assert isinstance(spec["env"], dict)
        assert importlib.util.find_spec(f"servers.{name}") is not None
    # The policy mode is left to the parent environment (the demo runs it broken).
    assert "MUSTER_POLICY_MODE" not in config["policy"]["env"]


# --- orders -----------------------------------------------------------------------------------


def test_seed_is_deterministic_and_idempotent(tmp_path: Path) -> None:
    db = tmp_path / "sub" / "orders.sqlite"
    orders.ensure_database(db)
    orders.ensure_database(db)  # a second start seeds nothing
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT COUNT(*) FROM orders").fetchone()[0] >= 50
        row = conn.execute(
            "SELECT customer, item, amount_cents FROM orders WHERE order_id = ?", ("12345",)
        ).fetchone()
        assert row == ("R. Okafor", "Solaris ANC headphones", 12900)
        charges = conn.execute(
            "SELECT amount_cents FROM charges WHERE order_id = ?", ("12345",)
        ).fetchall()
        assert charges == [(12900,), (12900,)]
        dump = list(conn.iterdump())
    other = tmp_path / "other.sqlite"
    orders.ensure_database(other)
    with closing(sqlite3.connect(other)) as conn:
        assert list(conn.iterdump()) == dump
    assert refund_rows(db) == []


async def test_find_order_inputs(env: dict[str, Path]) -> None:
    async with memory(orders.mcp) as s:
        for raw in ("12345", "#12345", " 12345 ", "\t#12345\n"):
            data = ok(await s.call_tool("find_order", {"order_id": raw}))
            assert data["order_id"] == "12345"
        assert data["customer"] == "R. Okafor"
        assert data["item"] == "Solaris ANC headphones"
        assert (data["amount_cents"], data["amount"]) == (12900, "$129.00")
        assert data["charge_count"] == 2 and data["total_charged_cents"] == 25800
        assert data["duplicate_charge"] is True
        assert [c["amount_cents"] for c in data["charges"]] == [12900, 12900]
        assert all(len(c["charged_at"]) == 10 for c in data["charges"])
        for bad in ("abc", "12a45", "##12345", "", "-1"):
            msg = error(await s.call_tool("find_order", {"order_id": bad}))
            assert "order id must be digits, e.g. 12345" in msg
        assert "no order 99999" in error(await s.call_tool("find_order", {"order_id": "99999"}))
        single = ok(await s.call_tool("find_order", {"order_id": "12320"}))
        assert single["duplicate_charge"] is False
        status = ok(await s.call_tool("refund_status", {"order_id": "12345"}))
        assert status == {
            "order_id": "12345",
            "refunds": [],
            "total_charged_cents": 25800,
            "refunded_cents": 0,
            "refundable_cents": 25800,
            "status": "no refund",
            "duplicate_charges": [
                {"charge_id": "ch_12345_2", "amount_cents": 12900, "refund_ids": []}
            ],
        }
        assert "no order 99999" in error(await s.call_tool("refund_status", {"order_id": "99999"}))
    assert count_calls(env["log"], server="orders") == 13


async def test_tool_annotations(env: dict[str, Path]) -> None:
    async with memory(orders.mcp) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
    assert set(tools) == {"find_order", "refund_status", "issue_refund", "cancel_order"}
    assert tools["find_order"].annotations and tools["find_order"].annotations.readOnlyHint
    assert tools["refund_status"].annotations and tools["refund_status"].annotations.readOnlyHint
    ann = tools["issue_refund"].annotations
    assert ann is not None and ann.destructiveHint and ann.idempotentHint
    assert ann.readOnlyHint is False
    cancel = tools["cancel_order"].annotations
    assert cancel is not None and cancel.readOnlyHint is False and cancel.idempotentHint
    assert tools["find_order"].description and "\n" not in tools["find_order"].description


def cancel_args(order_id: str, key: str, *, approved: bool = True) -> dict[str, Any]:
    digest = action_digest("orders.cancel_order", {"order_id": order_id, "idempotency_key": key})
    token = mint_token(digest, secret=SECRET, expires_at=time.time() + 300) if approved else ""
    return {"order_id": order_id, "idempotency_key": key, "approval": token}


def order_status(db: Path, order_id: str) -> str:
    with closing(sqlite3.connect(db)) as conn:
        return str(conn.execute("SELECT status FROM orders WHERE order_id = ?", (order_id,))
                   .fetchone()[0])


async def test_cancel_order_only_before_shipping_once_and_with_approval(
    env: dict[str, Path],
) -> None:
    async with memory(orders.mcp) as s:
        processing = ok(await s.call_tool("find_order", {"order_id": "12324"}))
        assert processing["status"] == "processing" and processing["delivered_at"] is None
        assert "missing approval" in error(
            await s.call_tool("cancel_order", cancel_args("12324", "c1", approved=False))
        )
        assert order_status(env["db"], "12324") == "processing"
        first = ok(await s.call_tool("cancel_order", cancel_args("12324", "c1")))
        assert first["status"] == "cancelled" and first["replayed"] is False
        again = ok(await s.call_tool("cancel_order", cancel_args("12324", "c1")))
        assert again["replayed"] is True and again["cancel_id"] == first["cancel_id"]
        assert order_status(env["db"], "12324") == "cancelled"
        shipped = error(await s.call_tool("cancel_order", cancel_args("12321", "c2")))
        assert "shipped" in shipped and order_status(env["db"], "12321") == "shipped"


async def test_delivery_dates_and_the_business_date(
    env: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with memory(orders.mcp) as s:
        order = ok(await s.call_tool("find_order", {"order_id": "12345"}))
        assert order["placed_at"] == "2025-03-14" and order["delivered_at"] == "2025-03-18"
        assert order["as_of"] == "2025-04-24" and order["days_since_delivery"] == 37
        monkeypatch.setenv("MUSTER_TODAY", "2025-03-20")
        order = ok(await s.call_tool("find_order", {"order_id": "12345"}))
        assert order["as_of"] == "2025-03-20" and order["days_since_delivery"] == 2


async def test_refund_refused_without_valid_approval(
    env: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with memory(orders.mcp) as s:
        msg = error(await s.call_tool("issue_refund", refund_args(12900, "k1", approval="")))
        assert "missing approval" in msg
        assert refund_rows(env["db"]) == []
        wrong = approve("12345", 12800, "k1")  # approved a different amount
        msg = error(await s.call_tool("issue_refund", refund_args(12900, "k1", approval=wrong)))
        assert "approval does not match this action" in msg
        assert refund_rows(env["db"]) == []
        expired = approve("12345", 12900, "k1", ttl=-5)
        msg = error(await s.call_tool("issue_refund", refund_args(12900, "k1", approval=expired)))
        assert "approval expired" in msg
        msg = error(await s.call_tool("issue_refund", refund_args(12900, "k1", approval="x.y")))
        assert "malformed approval" in msg
        monkeypatch.delenv("MUSTER_APPROVAL_SECRET")
        msg = error(await s.call_tool("issue_refund", refund_args(12900, "k1")))
        assert "refunds are disabled: the server has no MUSTER_APPROVAL_SECRET" in msg
        assert refund_rows(env["db"]) == []
    assert count_calls(env["log"], tool="issue_refund") == 5


async def test_refund_amount_limits(env: dict[str, Path]) -> None:
    async with memory(orders.mcp) as s:
        msg = error(await s.call_tool("issue_refund", refund_args(25801, "over")))
        assert "exceeds the refundable 25800" in msg
        for amount in (0, -100):
            msg = error(await s.call_tool("issue_refund", refund_args(amount, f"k{amount}")))
            assert "amount_cents must be positive" in msg
        # A refund that names no charge reverses the duplicate: at most the duplicated amount.
        msg = error(await s.call_tool("issue_refund", refund_args(25800, "all")))
        assert "exceeds the duplicated amount 12900 of charge ch_12345_2" in msg
        assert refund_rows(env["db"]) == []
        ok(await s.call_tool("issue_refund", refund_args(12900, "dup")))
        # The rest of the charges only against the charge it reverses, named and approved.
        args = {"order_id": "12345", "amount_cents": 12900, "idempotency_key": "item",
                "charge_id": "ch_12345_1"}
        token = mint_token(action_digest(REFUND, args), secret=SECRET,
                           expires_at=time.time() + 300)
        ok(await s.call_tool("issue_refund", {**args, "approval": token}))
        msg = error(await s.call_tool("issue_refund", refund_args(1, "more")))
        assert "exceeds the refundable 0" in msg
        status = ok(await s.call_tool("refund_status", {"order_id": "12345"}))
    assert status["status"] == "refunded" and status["refundable_cents"] == 0
    assert sorted(r["charge_id"] for r in status["refunds"]) == ["ch_12345_1", "ch_12345_2"]
    assert len(refund_rows(env["db"])) == 2


async def test_refund_is_idempotent(env: dict[str, Path]) -> None:
    async with memory(orders.mcp) as s:
        first = ok(await s.call_tool("issue_refund", refund_args(12900, "ticket-1")))
        assert first["replayed"] is False and first["status"] == "refunded"
        assert (first["order_id"], first["amount_cents"]) == ("12345", 12900)
        rows = refund_rows(env["db"])
        assert rows == [(first["refund_id"], 12900, "ticket-1")]
        again = ok(await s.call_tool("issue_refund", refund_args(12900, "ticket-1")))
        assert again == {**first, "replayed": True}
        assert refund_rows(env["db"]) == rows
        msg = error(await s.call_tool("issue_refund", refund_args(100, "ticket-1")))
        assert "idempotency key reused with different arguments" in msg
        assert refund_rows(env["db"]) == rows
        # A replay after the approval expired returns what already happened, not a refusal;
        # the same expired approval can never start a new refund.
        late = approve("12345", 12900, "ticket-1", ttl=-5)
        replay = ok(await s.call_tool("issue_refund", refund_args(12900, "ticket-1", late)))
        assert replay == {**first, "replayed": True}
        fresh = approve("12345", 12900, "ticket-2", ttl=-5)
        msg = error(await s.call_tool("issue_refund", refund_args(12900, "ticket-2", fresh)))
        assert "approval expired" in msg
        assert refund_rows(env["db"]) == rows
        status = ok(await s.call_tool("refund_status", {"order_id": "12345"}))
    assert status["status"] == "partially refunded"
    assert (status["refunded_cents"], status["refundable_cents"]) == (12900, 12900)
    assert count_calls(env["log"], server="orders", tool="issue_refund") == 5


@pytest.mark.integration
async def test_orders_over_stdio(env: dict[str, Path], tmp_path: Path) -> None:
    async with stdio("orders", tmp_path / "err.txt") as s:
        names = {t.name for t in (await s.list_tools()).tools}
        assert names == {"find_order", "refund_status", "issue_refund", "cancel_order"}
        assert ok(await s.call_tool("find_order", {"order_id": "#12345"}))["charge_count"] == 2
        done = ok(await s.call_tool("issue_refund", refund_args(12900, "stdio-1")))
        assert done["replayed"] is False
    assert len(refund_rows(env["db"])) == 1
    calls = read_calls(env["log"])
    assert len(calls) == 2 and {c["pid"] for c in calls} != {os.getpid()}
    assert calls[1]["args"]["approval"] == "<redacted>"


# --- kb ---------------------------------------------------------------------------------------


def test_kb_has_enough_articles() -> None:
    ids = [a[0] for a in kb.ARTICLES]
    assert len(ids) >= 20 and len(set(ids)) == len(ids)
    assert all(i.startswith("KB-") for i in ids)
    body = dict((a[0], a[2]) for a in kb.ARTICLES)["KB-201"]
    assert "5 business days" in body and "goodwill credit" in body


async def test_search_kb(env: dict[str, Path]) -> None:
    async with memory(kb.mcp) as s:
        data = ok(await s.call_tool("search_kb", {"query": "duplicate charge"}))
        assert data["results"][0]["id"] == "KB-201"
        assert 1 <= len(data["results"]) <= 3  # default limit
        assert set(data["results"][0]) == {"id", "title", "snippet", "body", "score"}
        scores = [r["score"] for r in data["results"]]
        assert scores == sorted(scores, reverse=True)
        messy = 'charged twice, duplicate charge?! "pending" AND (OR) NOT* -x ^y: {z}'
        data = ok(await s.call_tool("search_kb", {"query": messy, "limit": 5}))
        assert data["results"][0]["id"] == "KB-201"
        for query in ("zzzqqq", "?!,.", ""):
            assert ok(await s.call_tool("search_kb", {"query": query}))["results"] == []
        gift = ok(await s.call_tool("search_kb", {"query": "gift card refund", "limit": 1}))
        assert [r["id"] for r in gift["results"]] == ["KB-203"]
        many = ok(await s.call_tool("search_kb", {"query": "gift card refund", "limit": 5}))
        assert len(many["results"]) == 5
        assert "limit must be between" in error(
            await s.call_tool("search_kb", {"query": "x", "limit": 0})
        )
    assert count_calls(env["log"], server="kb", tool="search_kb") == 8


@pytest.mark.integration
async def test_kb_over_stdio(env: dict[str, Path], tmp_path: Path) -> None:
    async with stdio("kb", tmp_path / "err.txt") as s:
        assert [t.name for t in (await s.list_tools()).tools] == ["search_kb", "get_article"]
        data = ok(await s.call_tool("search_kb", {"query": "pending double charge"}))
    assert data["results"][0]["id"] == "KB-201"
    assert count_calls(env["log"], server="kb") == 1


# --- policy -----------------------------------------------------------------------------------


async def test_check_policy_in_memory(env: dict[str, Path]) -> None:
    async with memory(policy.mcp) as s:
        data = ok(await s.call_tool("check_policy", {"topic": "Duplicate-Charge"}))
        assert data["topic"] == "duplicate_charge" and data["policy_id"].startswith("POL-")
        assert "5 business days" in data["text"] and data["effective_date"]
        for topic in (
            "refunds",
            "goodwill credit",
            "returns",
            "shipping",
            "gift cards",
            "escalation",
            "cancellation",
        ):
            assert ok(await s.call_tool("check_policy", {"topic": topic}))["text"]
        msg = error(await s.call_tool("check_policy", {"topic": "teleportation"}))
        assert "known topics" in msg and "refunds" in msg
    assert count_calls(env["log"], server="policy") == 9


@pytest.mark.integration
async def test_policy_healthy_over_stdio(env: dict[str, Path], tmp_path: Path) -> None:
    async with stdio("policy", tmp_path / "err.txt") as s:
        assert [t.name for t in (await s.list_tools()).tools] == ["check_policy"]
        assert ok(await s.call_tool("check_policy", {"topic": "refunds"}))["topic"] == "refunds"
    assert (tmp_path / "err.txt").read_text() == ""  # WARNING level: nothing logged


@pytest.mark.integration
async def test_policy_broken(env: dict[str, Path], tmp_path: Path) -> None:
    async with stdio("policy", tmp_path / "err.txt", MUSTER_POLICY_MODE="broken") as s:
        assert [t.name for t in (await s.list_tools()).tools] == ["check_policy"]
        for _ in range(2):
            msg = error(await s.call_tool("check_policy", {"topic": "refunds"}))
            assert "policy-db connection refused" in msg
    assert count_calls(env["log"], server="policy") == 2


@pytest.mark.integration
async def test_policy_slow(env: dict[str, Path], tmp_path: Path) -> None:
    async with stdio(
        "policy", tmp_path / "err.txt", MUSTER_POLICY_MODE="slow", MUSTER_POLICY_SLOW_S="0.3"
    ) as s:
        start = time.monotonic()
        data = ok(await s.call_tool("check_policy", {"topic": "refunds"}))
        assert time.monotonic() - start >= 0.3
    assert data["topic"] == "refunds"


@pytest.mark.integration
async def test_policy_hang_times_out(env: dict[str, Path], tmp_path: Path) -> None:
    async with stdio("policy", tmp_path / "err.txt", MUSTER_POLICY_MODE="hang") as s:
        start = time.monotonic()
        with pytest.raises(McpError):
            await s.call_tool(
                "check_policy", {"topic": "refunds"}, read_timeout_seconds=timedelta(seconds=1)
            )
        assert 0.9 <= time.monotonic() - start < 2.5
    assert count_calls(env["log"], server="policy") == 1


def _has_exited(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")  # zombie: exited, not yet reaped


@pytest.mark.integration
async def test_policy_crash(env: dict[str, Path], tmp_path: Path) -> None:
    async with stdio("policy", tmp_path / "err.txt", MUSTER_POLICY_MODE="crash") as s:
        with pytest.raises(McpError, match="Connection closed"):
            await s.call_tool("check_policy", {"topic": "refunds"})
        pid = read_calls(env["log"])[0]["pid"]
        with anyio.fail_after(HANG_TIMEOUT_S):  # the server process exits: wait for that
            while True:
                if _has_exited(pid):
                    break
                await anyio.sleep(0.02)
    assert "crash mode" in (tmp_path / "err.txt").read_text()


@pytest.mark.integration
async def test_policy_garbage_on_stdout(env: dict[str, Path], tmp_path: Path) -> None:
    async with stdio("policy", tmp_path / "err.txt", MUSTER_POLICY_MODE="garbage") as s:
        for _ in range(2):  # the client is not wedged by the stray line
            with anyio.fail_after(HANG_TIMEOUT_S):  # a wedged client would never answer
                data = ok(await s.call_tool("check_policy", {"topic": "shipping"}))
            assert data["topic"] == "shipping"
    assert count_calls(env["log"], server="policy") == 2


@pytest.mark.integration
def test_policy_unknown_mode_exits(env: dict[str, Path]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "servers.policy"],
        env={**os.environ, "MUSTER_POLICY_MODE": "sideways"},
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT_S,
    )
    assert proc.returncode == 2
    assert "unknown MUSTER_POLICY_MODE='sideways'" in proc.stderr
    assert "healthy" in proc.stderr and proc.stdout == ""
