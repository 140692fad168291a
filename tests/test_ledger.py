"""A duplicate charge is refunded once, whichever thread asks (principle 11).

Two tickets about the same duplicate charge each propose its refund while nothing is refunded.
Approving both, one after the other or racing, leaves exactly one refund row: `act` re-reads
the refunds before it writes and refuses when they moved, and the orders server refuses a
second refund of a duplicate charge whatever its idempotency key. A ticket that arrives after
the refund proposes nothing and says when and by which thread it was refunded.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from langgraph.types import Command, Interrupt
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import TextContent

from checkpoints.threads import thread_config
from domains.support.proposals import suggest_actions
from graph.app.runtime import MusterRuntime, open_runtime, stream_run
from graph.domains import load_domain
from servers import orders
from servers.approval import action_digest, mint_token
from tests.conftest import HANG_TIMEOUT_S, MusterEnv
from workers.contracts import ActionRecord, Finding, Handoff, ProposedAction
from workers.proposals import review_proposal

TICKET = "Order #12345 was charged twice, please refund the duplicate"
REFUND_TOOL = "orders.issue_refund"
DUPLICATE = {"order_id": "12345", "amount_cents": 12900, "expected_refunded_cents": 0}


def ledger(db: Path, order_id: str = "12345") -> list[dict[str, Any]]:
    """The refunds runs wrote for an order (seed rows excluded)."""
    conn = sqlite3.connect(db)
    try:
        conn.row_factory = sqlite3.Row
        rows = conn.execute(
            "SELECT amount_cents, charge_id, requested_by, idempotency_key FROM refunds"
            " WHERE order_id = ? AND idempotency_key NOT LIKE 'seed-%'",
            (order_id,),
        ).fetchall()
    finally:
        conn.close()
    return [dict(row) for row in rows]


async def waiting(runtime: MusterRuntime, thread: str) -> Interrupt:
    """Run the ticket on a new thread to its one approval interrupt."""
    await stream_run(runtime, thread, {"request": TICKET})
    snapshot = await runtime.graph.aget_state(thread_config(thread))
    (pending,) = snapshot.interrupts
    assert pending.value["kind"] == "approval" and pending.value["args"] == DUPLICATE
    return pending


async def approve(runtime: MusterRuntime, thread: str, pending: Interrupt) -> dict[str, Any]:
    decision = {"approved": True, "digest": pending.value["digest"], "by": "alice"}
    return await stream_run(runtime, thread, Command(resume={pending.id: decision}))


def last_action(values: dict[str, Any]) -> ActionRecord:
    actions: list[ActionRecord] = values.get("actions") or []
    assert actions
    return actions[-1]


@pytest.mark.slow
@pytest.mark.integration
async def test_two_threads_approved_one_after_the_other_refund_once(
    muster_env: MusterEnv,
) -> None:
    # Two stores (two audit logs), one orders database: nothing but the orders server's
    # ledger stands between the two approvals and a second refund.
    other_store = muster_env.checkpoint_db.with_name("other.sqlite")
    async with (
        open_runtime(db=muster_env.checkpoint_db) as runtime,
        open_runtime(db=other_store) as other,
    ):
        first = await waiting(runtime, "dup-a")
        second = await waiting(other, "dup-b")  # both saw nothing refunded
        a = await approve(runtime, "dup-a", first)
        assert last_action(a).status == "executed"
        b = await approve(other, "dup-b", second)
        record_b = last_action(b)
        assert record_b.status == "refused"
        assert "refused before execution" in record_b.result
        assert "already refunded" in record_b.result and "by thread dup-a" in record_b.result
        answer_b = b["answer"]
        assert answer_b.needs_human
        assert "The duplicate charge on order 12345 was already refunded" in answer_b.text

        # A third ticket after the refund proposes nothing and says who refunded it.
        c = await stream_run(runtime, "dup-c", {"request": TICKET})
        snapshot = await runtime.graph.aget_state(thread_config("dup-c"))
        assert not snapshot.interrupts
        assert not [a for r in c["reports"] for a in r.proposed_actions]
        assert "was already refunded on" in c["answer"].text
        assert "by thread dup-a" in c["answer"].text

    rows = ledger(muster_env.orders_db)
    assert [(r["amount_cents"], r["charge_id"], r["requested_by"]) for r in rows] == [
        (12900, "ch_12345_2", "dup-a")
    ]


@pytest.mark.slow
@pytest.mark.integration
async def test_two_threads_approved_racing_refund_once(muster_env: MusterEnv) -> None:
    other_store = muster_env.checkpoint_db.with_name("other.sqlite")
    async with (
        open_runtime(db=muster_env.checkpoint_db) as runtime,
        open_runtime(db=other_store) as other,
    ):
        first = await waiting(runtime, "race-a")
        second = await waiting(other, "race-b")
        a, b = await asyncio.gather(
            approve(runtime, "race-a", first), approve(other, "race-b", second)
        )
    records = sorted([last_action(a), last_action(b)], key=lambda r: r.status)
    assert [r.status for r in records] == ["executed", "refused"]
    loser = records[1]
    # Refused by `act` (it re-read the refund) or by the server (the ledger), both say why.
    assert "already refunded" in loser.result and "by thread race-" in loser.result
    rows = ledger(muster_env.orders_db)
    assert [(r["amount_cents"], r["charge_id"]) for r in rows] == [(12900, "ch_12345_2")]
    losing_answer = a["answer"] if last_action(a).status == "refused" else b["answer"]
    assert losing_answer.needs_human
    assert "was already refunded" in losing_answer.text


@pytest.mark.slow
@pytest.mark.integration
async def test_a_second_ticket_says_the_refund_awaits_approval_in_the_first_thread(
    muster_env: MusterEnv,
) -> None:
    """On one store, one refund of an order waits for a human at a time: a second ticket
    about the same duplicate charge puts nothing new to a human and names the thread where
    the refund waits. Once that refund is settled (rejected here), the next ticket may
    propose it again."""
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        first = await waiting(runtime, "held-a")
        b = await stream_run(runtime, "held-b", {"request": TICKET})
        snapshot = await runtime.graph.aget_state(thread_config("held-b"))
        assert not snapshot.interrupts  # nothing was put to a human in held-b
        held = last_action(b)
        assert held.status == "held" and "awaiting approval in thread held-a" in held.result
        answer = b["answer"]
        assert answer.status == "complete" and answer.needs_human
        (step,) = [s for s in answer.resolution if s.intent == "duplicate_charge"]
        assert step.approval == "awaiting approval in thread held-a"
        assert "already awaiting approval in thread held-a" in answer.text
        assert "already being processed" in answer.customer_reply

        rejection = {"approved": False, "digest": first.value["digest"], "by": "alice"}
        await stream_run(runtime, "held-a", Command(resume={first.id: rejection}))
        await waiting(runtime, "held-c")  # the claim was released: a new approval waits

    audit = sqlite3.connect(muster_env.checkpoint_db)
    try:
        claims = audit.execute(
            "SELECT thread_id, subject, held_by FROM muster_action_claim ORDER BY id"
        ).fetchall()
    finally:
        audit.close()
    assert claims == [
        ("held-a", "orders.issue_refund:12345", ""),
        ("held-b", "orders.issue_refund:12345", "held-a"),
        ("held-c", "orders.issue_refund:12345", ""),
    ]
    assert ledger(muster_env.orders_db) == []


# --- the orders server: the ledger itself ----------------------------------------------------


@asynccontextmanager
async def orders_session() -> AsyncIterator[ClientSession]:
    with anyio.fail_after(HANG_TIMEOUT_S):
        async with create_connected_server_and_client_session(orders.mcp._mcp_server) as s:
            yield s


async def refund(
    s: ClientSession,
    amount: int,
    key: str,
    thread: str,
    *,
    order_id: str = "12345",
    expected_refunded: int | None = None,
) -> tuple[bool, str]:
    args: dict[str, Any] = {"order_id": order_id, "amount_cents": amount, "idempotency_key": key}
    if expected_refunded is not None:
        args["expected_refunded_cents"] = expected_refunded
    secret = "test-secret-ledger"
    token = mint_token(action_digest(REFUND_TOOL, args), secret=secret, expires_at=time.time() + 60)
    result = await s.call_tool("issue_refund", {**args, "approval": token, "requested_by": thread})
    block = result.content[0]
    assert isinstance(block, TextContent)
    return not result.isError, block.text


async def test_server_refunds_a_duplicate_once_whatever_the_key(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSTER_APPROVAL_SECRET", "test-secret-ledger")
    async with orders_session() as s:
        done, text = await refund(s, 12900, "key-a", "thread-a")
        assert done, text
        assert json.loads(text)["charge_id"] == "ch_12345_2"
        again, text = await refund(s, 12900, "key-a", "thread-a")  # its own replay
        assert again and json.loads(text)["replayed"] is True
        refused, text = await refund(s, 12900, "key-b", "thread-b")
        assert not refused
        assert "the duplicate charge ch_12345_2 on order 12345 was already refunded" in text
        assert "by thread thread-a" in text and "idempotency key key-a" in text
        status = await s.call_tool("refund_status", {"order_id": "12345"})
    block = status.content[0]
    assert isinstance(block, TextContent)
    data = json.loads(block.text)
    assert data["refunded_cents"] == 12900
    assert [(r["charge_id"], r["requested_by"]) for r in data["refunds"]] == [
        ("ch_12345_2", "thread-a")
    ]
    assert data["duplicate_charges"][0]["refund_ids"] == [data["refunds"][0]["refund_id"]]
    assert [r["idempotency_key"] for r in ledger(muster_env.orders_db)] == ["key-a"]


async def test_an_approval_binds_the_refund_state_the_human_saw(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The approved arguments carry the refunded total the approver saw; the server compares
    it inside its write transaction, so a refund approved against a state that has since
    moved is refused, whichever check ran before it. The token binds the value: a caller
    cannot change it without a new approval."""
    monkeypatch.setenv("MUSTER_APPROVAL_SECRET", "test-secret-ledger")
    async with orders_session() as s:
        first, text = await refund(s, 1000, "cas-a", "t-a", order_id="12370", expected_refunded=0)
        assert first, text
        stale, text = await refund(s, 1000, "cas-b", "t-b", order_id="12370", expected_refunded=0)
        assert not stale
        assert "changed since this refund was approved (0 cents refunded then, 1000 now)" in text
        fresh, text = await refund(
            s, 1000, "cas-c", "t-c", order_id="12370", expected_refunded=1000
        )
        assert fresh, text
        args = {"order_id": "12370", "amount_cents": 1000, "idempotency_key": "cas-d"}
        token = mint_token(
            action_digest(REFUND_TOOL, {**args, "expected_refunded_cents": 2000}),
            secret="test-secret-ledger",
            expires_at=time.time() + 60,
        )
        forged = await s.call_tool(
            "issue_refund", {**args, "expected_refunded_cents": 0, "approval": token}
        )
        assert forged.isError  # the token was minted for another refund state
    assert [r["idempotency_key"] for r in ledger(muster_env.orders_db, "12370")] == [
        "cas-a",
        "cas-c",
    ]


# --- the proposal review ----------------------------------------------------------------------


def findings(refunds: list[dict[str, Any]]) -> list[Finding]:
    order = {
        "order_id": "12345",
        "amount_cents": 12900,
        "amount": "$129.00",
        "status": "delivered",
        "charge_count": 2,
        "total_charged_cents": 25800,
        "duplicate_charge": True,
    }
    refunded = sum(r["amount_cents"] for r in refunds)
    status = {
        "order_id": "12345",
        "refunds": refunds,
        "total_charged_cents": 25800,
        "refunded_cents": refunded,
        "refundable_cents": 25800 - refunded,
        "duplicate_charges": [
            {
                "charge_id": "ch_12345_2",
                "amount_cents": 12900,
                "refund_ids": [r["refund_id"] for r in refunds if r["charge_id"] == "ch_12345_2"],
            }
        ],
    }
    return [
        Finding(
            id="F1", tool="orders.find_order", call_id="c1", args={}, observation=json.dumps(order)
        ),
        Finding(
            id="F2",
            tool="orders.refund_status",
            call_id="c2",
            args={},
            observation=json.dumps(status),
        ),
    ]


PACKET = Handoff(
    id="billing-1",
    recipient="billing",
    objective="Check the duplicate charge.",
    inputs={"order_id": "12345", "intents": "duplicate_charge"},
)


@pytest.fixture
def support_rules() -> None:
    """Support's proposal rules, registered with the review as a run's services do."""
    load_domain("support")


@pytest.mark.usefixtures("support_rules")
def test_review_caps_a_duplicate_refund_at_the_duplicated_amount() -> None:
    seen = findings([])
    whole = ProposedAction(tool=REFUND_TOOL, args={"order_id": "12345", "amount_cents": 25800})
    problem = review_proposal(whole, PACKET, seen, [REFUND_TOOL])
    assert isinstance(problem, str) and "exceeds the duplicated amount 12900" in problem
    accepted = review_proposal(
        ProposedAction(tool=REFUND_TOOL, args=DUPLICATE), PACKET, seen, [REFUND_TOOL]
    )
    assert isinstance(accepted, ProposedAction)
    assert accepted.observed_refunded_cents == 0
    assert accepted.args == DUPLICATE  # the refund state the approver sees is bound in
    (suggested,) = suggest_actions(PACKET, seen)
    assert suggested.args == {"order_id": "12345", "amount_cents": 12900}


@pytest.mark.usefixtures("support_rules")
def test_nothing_is_proposed_once_the_duplicate_is_refunded() -> None:
    seen = findings(
        [
            {
                "refund_id": "re_1",
                "amount_cents": 12900,
                "charge_id": "ch_12345_2",
                "requested_by": "dup-a",
                "created_at": "2025-04-24",
                "idempotency_key": "k",
            }
        ]
    )
    assert suggest_actions(PACKET, seen) == []
    problem = review_proposal(
        ProposedAction(tool=REFUND_TOOL, args=DUPLICATE), PACKET, seen, [REFUND_TOOL]
    )
    assert isinstance(problem, str) and "already refunded" in problem
