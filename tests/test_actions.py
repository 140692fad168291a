"""Approval-gated actions, exactly once: the refund row in the orders database is the proof.

Every test counts the refunds the run itself wrote, reading the orders SQLite file directly
(seed rows, whose idempotency keys start with `seed-`, are excluded). An approved refund
leaves exactly one row whatever happens around it: approving twice, a SIGKILL between the
refund and its checkpoint followed by a resume, resuming a finished thread. Anything that
is not a matching, live approval leaves none: a rejection, an approval replayed onto another
thread or other arguments, an expired approval, and text injected into a tool result.

Runs use real stdio MCP servers and the real SQLite checkpointer. The `muster` CLI runs as a
subprocess wherever its exit code or a real SIGKILL matters; the approval interrupt a CLI
step answers is reached in-process (cheaper: no interpreter start), through the same
`open_runtime`/`stream_run` the CLI uses.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.types import Command, Interrupt

from checkpoints.threads import status_of, thread_config
from graph.app.runtime import MusterRuntime, open_runtime, stream_run
from graph.proposals import approval_digest, idempotency_key
from servers.approval import action_digest, mint_token, verify_token
from servers.call_log import read_calls
from tests.conftest import HANG_TIMEOUT_S, MusterEnv, error_lines
from workers.contracts import ProposedAction
from workers.models import scripted_factory

REFUND_TICKET = "Order #12345 was charged twice, please refund the duplicate"
INJECTION_TICKET = "Order #12366 was charged twice, please refund the duplicate"
REFUND_TOOL = "orders.issue_refund"
REFUND_12345 = {"order_id": "12345", "amount_cents": 12900, "expected_refunded_cents": 0}
"""What billing proposes for the demo order: one duplicated charge of $129.00."""
REFUND_12366 = {"order_id": "12366", "amount_cents": 3299, "expected_refunded_cents": 0}
"""What billing proposes for the injection order: one duplicated charge of $32.99."""
CLI_TIMEOUT_S = HANG_TIMEOUT_S
"""Only a hung CLI reaches it: interpreter and server start-up take what they take."""
EXIT_OK, EXIT_BAD_INPUT, EXIT_DEGRADED, EXIT_WAITING = 0, 2, 3, 5


# --- reading the evidence ------------------------------------------------------------------


def refund_rows(env: MusterEnv, order_id: str) -> list[dict[str, Any]]:
    """The refunds runs wrote for one order (seed rows excluded), oldest first."""
    conn = sqlite3.connect(env.orders_db)
    try:
        conn.row_factory = sqlite3.Row
        rows = conn.execute(
            "SELECT refund_id, order_id, amount_cents, idempotency_key, result_json FROM refunds"
            " WHERE order_id = ? AND idempotency_key NOT LIKE 'seed-%' ORDER BY created_at",
            (order_id,),
        ).fetchall()
    finally:
        conn.close()
    return [dict(row) for row in rows]


def all_run_refunds(env: MusterEnv) -> list[dict[str, Any]]:
    """Every refund any run wrote, whatever the order."""
    conn = sqlite3.connect(env.orders_db)
    try:
        rows = conn.execute(
            "SELECT order_id, amount_cents FROM refunds WHERE idempotency_key NOT LIKE 'seed-%'"
        ).fetchall()
    finally:
        conn.close()
    return [{"order_id": r[0], "amount_cents": r[1]} for r in rows]


def audit_rows(env: MusterEnv, thread: str, db: Path | None = None) -> list[dict[str, Any]]:
    """The thread's audit rows (table muster_audit of the checkpoint DB), oldest first."""
    conn = sqlite3.connect(db or env.checkpoint_db)
    try:
        rows = conn.execute(
            "SELECT event, actor, digest, result, at FROM muster_audit"
            " WHERE thread_id = ? ORDER BY id",
            (thread,),
        ).fetchall()
    finally:
        conn.close()
    return [
        {"event": r[0], "actor": r[1], "digest": r[2], "result": json.loads(r[3]), "at": r[4]}
        for r in rows
    ]


def refund_calls(env: MusterEnv) -> list[dict[str, Any]]:
    """Every `issue_refund` call the orders server received (its own call log)."""
    return [
        c
        for c in read_calls(env.call_log)
        if c.get("server") == "orders" and c.get("tool") == "issue_refund"
    ]


def expected_digest(thread: str, args: dict[str, Any]) -> str:
    """The digest the graph asks a human to approve for `args` on `thread`."""
    action = ProposedAction(tool=REFUND_TOOL, args=args)
    return approval_digest(action, idempotency_key(thread, action))


def one_line_error(stderr: str) -> str:
    lines = error_lines(stderr)
    assert len(lines) == 1, stderr
    return lines[0]


# --- reaching the approval interrupt in-process ------------------------------------------


async def run_to_interrupt(runtime: MusterRuntime, thread: str, request: str) -> list[Interrupt]:
    """Run a new thread until it stops; return its pending interrupts."""
    await stream_run(runtime, thread, {"request": request})
    snapshot = await runtime.graph.aget_state(thread_config(thread))
    return list(snapshot.interrupts)


async def start_waiting_thread(env: MusterEnv, thread: str, request: str) -> dict[str, Any]:
    """Run `request` on a new thread to its one approval interrupt; return the interrupt value."""
    async with open_runtime(db=env.checkpoint_db) as runtime:
        interrupts = await run_to_interrupt(runtime, thread, request)
    assert len(interrupts) == 1, interrupts
    value = interrupts[0].value
    assert value["kind"] == "approval"
    return dict(value)


# --- 1. approving twice, and rejecting -------------------------------------------------------


@pytest.mark.slow
@pytest.mark.integration
def test_approving_twice_refunds_once(muster_env: MusterEnv) -> None:
    thread = "twice"
    run = muster_env.cli("run", REFUND_TICKET, "--thread", thread, timeout=CLI_TIMEOUT_S)
    assert run.returncode == EXIT_WAITING, run.stdout + run.stderr
    assert "waiting for a human" in run.stdout
    assert refund_rows(muster_env, "12345") == []

    first = muster_env.cli(
        "approve", thread, "--note", "ok", "--by", "alice", timeout=CLI_TIMEOUT_S
    )
    assert first.returncode == EXIT_OK, first.stdout + first.stderr
    assert "approved by alice, EXECUTED" in first.stdout
    rows = refund_rows(muster_env, "12345")
    assert [(r["amount_cents"], json.loads(r["result_json"])["replayed"]) for r in rows] == [
        (12900, False)
    ]
    assert rows[0]["idempotency_key"] == idempotency_key(
        thread, ProposedAction(tool=REFUND_TOOL, args=REFUND_12345)
    )

    second = muster_env.cli(
        "approve", thread, "--note", "again", "--by", "alice", timeout=CLI_TIMEOUT_S
    )
    assert second.returncode == EXIT_BAD_INPUT
    error = one_line_error(second.stderr)
    assert error.startswith("muster: error:") and "no pending approval" in error
    assert refund_rows(muster_env, "12345") == rows
    assert len(refund_calls(muster_env)) == 1  # the second approve never reached the server
    assert [row["event"] for row in audit_rows(muster_env, thread)] == [
        "decision",
        "attempt",
        "execution",
    ]


@pytest.mark.slow
@pytest.mark.integration
async def test_reject_refunds_nothing_and_the_answer_says_rejected(
    muster_env: MusterEnv,
) -> None:
    thread = "reject"
    pending = await start_waiting_thread(muster_env, thread, REFUND_TICKET)
    assert pending["args"] == REFUND_12345

    rejected = muster_env.cli(
        "approve",
        thread,
        "--reject",
        "--note",
        "pending hold",
        "--by",
        "bob",
        timeout=CLI_TIMEOUT_S,
    )
    assert rejected.returncode == EXIT_OK, rejected.stdout + rejected.stderr
    assert "REJECTED by bob (pending hold)" in rejected.stdout
    assert "EXECUTED" not in rejected.stdout
    assert refund_rows(muster_env, "12345") == []
    assert refund_calls(muster_env) == []
    audit = audit_rows(muster_env, thread)
    assert [(r["event"], r["actor"], r["result"]["decision"]) for r in audit] == [
        ("decision", "bob", "rejected")
    ]


# --- 2 and 3. SIGKILL after the refund, resume, then resume the finished thread ------------


@pytest.mark.slow
@pytest.mark.integration
async def test_kill_after_refund_then_resume_replays_without_refunding_again(
    muster_env: MusterEnv,
) -> None:
    thread = "killed-after"
    pending = await start_waiting_thread(muster_env, thread, REFUND_TICKET)
    digest = pending["digest"]
    assert digest == expected_digest(thread, REFUND_12345)

    killed = muster_env.cli(
        "approve",
        thread,
        "--by",
        "alice",
        timeout=CLI_TIMEOUT_S,
        extra_env={"MUSTER_FAULT": "kill-after-action"},
    )
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    rows = refund_rows(muster_env, "12345")
    assert len(rows) == 1 and rows[0]["amount_cents"] == 12900  # the refund happened...
    # ...and the process died before `act` wrote its execution row or its checkpoint: the
    # audit log holds the decision and the attempt written just before the call.
    assert [(r["event"], r["digest"]) for r in audit_rows(muster_env, thread)] == [
        ("decision", digest),
        ("attempt", digest),
    ]

    resumed = muster_env.cli("resume", thread, "--json", timeout=CLI_TIMEOUT_S)
    assert resumed.returncode == EXIT_OK, resumed.stdout + resumed.stderr
    assert f"resuming thread {thread} (in progress)" in resumed.stderr
    payload = json.loads(resumed.stdout)
    assert payload["waiting_for_human"] is False
    answer = payload["answer"]
    assert (answer["status"], answer["degraded"], answer["needs_human"]) == (
        "complete",
        False,
        False,
    )
    assert "approved by alice, EXECUTED" in answer["text"]
    assert "replayed=True" in answer["text"]  # the server returned its stored result
    assert refund_rows(muster_env, "12345") == rows  # still the one row, unchanged
    calls = refund_calls(muster_env)
    assert len(calls) == 2  # the original call and the replay, with the same key
    assert {c["args"]["idempotency_key"] for c in calls} == {rows[0]["idempotency_key"]}

    # Exactly what the audit log records: the decision and the first attempt (first
    # process), then the resume's attempt and one execution row, whose result is the
    # server's replay of the stored refund.
    audit = audit_rows(muster_env, thread)
    assert [(r["event"], r["digest"]) for r in audit] == [
        ("decision", digest),
        ("attempt", digest),
        ("attempt", digest),
        ("execution", digest),
    ]
    execution = audit[3]["result"]
    assert (execution["status"], execution["outcome"]) == ("executed", "ok")
    stored = json.loads(execution["text"])
    assert stored["replayed"] is True
    assert stored["refund_id"] == rows[0]["refund_id"]

    # 3. Resuming the finished thread again does nothing.
    again = muster_env.cli("resume", thread, timeout=CLI_TIMEOUT_S)
    assert again.returncode == EXIT_OK, again.stdout + again.stderr
    assert f"thread {thread} is already done; nothing to resume" in again.stdout
    assert refund_rows(muster_env, "12345") == rows
    assert len(refund_calls(muster_env)) == 2
    assert len(audit_rows(muster_env, thread)) == 4


# --- 4. an approval replayed for another thread or other arguments -------------------------


@pytest.mark.integration
async def test_replayed_approval_for_another_thread_or_other_arguments_is_rejected(
    muster_env: MusterEnv,
) -> None:
    secret = os.environ["MUSTER_APPROVAL_SECRET"]
    # Thread B on a store of its own: on one store B's refund would not be put to a human at
    # all while A's waits (test_ledger.py), and this test is about approvals replayed.
    other_store = muster_env.checkpoint_db.with_name("other.sqlite")
    async with (
        open_runtime(db=muster_env.checkpoint_db) as runtime,
        open_runtime(db=other_store) as other,
    ):
        (interrupt_a,) = await run_to_interrupt(runtime, "replay-a", REFUND_TICKET)
        (interrupt_b,) = await run_to_interrupt(other, "replay-b", REFUND_TICKET)
        a, b = interrupt_a.value, interrupt_b.value
        # Same action, but the digest binds the thread (through the idempotency key).
        assert a["args"] == b["args"] == REFUND_12345
        assert a["digest"] == expected_digest("replay-a", REFUND_12345)
        assert b["digest"] == expected_digest("replay-b", REFUND_12345)
        assert a["digest"] != b["digest"]

        # Thread B resumed with thread A's approval: a digest mismatch, so not a decision.
        # B's action stays pending and its next interrupt says why (the same in Studio).
        stolen = {"approved": True, "digest": a["digest"], "by": "alice", "note": "lgtm"}
        values_b = await stream_run(other, "replay-b", Command(resume={interrupt_b.id: stolen}))
        assert not values_b.get("actions")
        snapshot_b = await other.graph.aget_state(thread_config("replay-b"))
        assert status_of(snapshot_b) == "interrupted"
        (again_b,) = snapshot_b.interrupts
        assert again_b.value["digest"] == b["digest"]
        assert "digest mismatch" in again_b.value["error"]

        # Thread A approved with a digest for other arguments (the full $258 charged, under
        # A's own key): refused too, and A stays pending.
        key_a = idempotency_key("replay-a", ProposedAction(tool=REFUND_TOOL, args=a["args"]))
        other_args = {**a["args"], "amount_cents": 25800, "idempotency_key": key_a}
        forged = {
            "approved": True,
            "digest": action_digest(REFUND_TOOL, other_args),
            "by": "alice",
        }
        values_a = await stream_run(runtime, "replay-a", Command(resume={interrupt_a.id: forged}))
        assert not values_a.get("actions")
        (again_a,) = (await runtime.graph.aget_state(thread_config("replay-a"))).interrupts
        assert "digest mismatch" in again_a.value["error"]

        # Server level: a token minted for A's action, sent with B's idempotency key.
        token_a = mint_token(a["digest"], secret=secret, expires_at=time.time() + 600)
        assert verify_token(token_a, a["digest"], secret=secret, now=time.time()) is None
        key_b = idempotency_key("replay-b", ProposedAction(tool=REFUND_TOOL, args=b["args"]))
        result = await runtime.services.hub.call_action(
            REFUND_TOOL, {**b["args"], "idempotency_key": key_b, "approval": token_a}
        )
        assert not result.ok
        assert str(result.outcome) == "tool_error"
        assert "approval does not match this action" in result.text

    assert refund_rows(muster_env, "12345") == []
    assert all_run_refunds(muster_env) == []
    assert len(refund_calls(muster_env)) == 1  # only the direct call; the graph sent none
    for thread, db in (("replay-a", muster_env.checkpoint_db), ("replay-b", other_store)):
        assert [(r["event"], r["actor"]) for r in audit_rows(muster_env, thread, db)] == [
            ("refused", "alice")
        ]


# --- 5. an expired approval ----------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.integration
async def test_expired_approval_is_refused_by_the_server_and_needs_a_human(
    muster_env: MusterEnv,
) -> None:
    thread = "expired"
    ttl = {"MUSTER_APPROVAL_TTL_S": "1"}
    pending = await start_waiting_thread(muster_env, thread, REFUND_TICKET)

    killed = muster_env.cli(
        "approve",
        thread,
        "--by",
        "alice",
        timeout=CLI_TIMEOUT_S,
        extra_env={**ttl, "MUSTER_FAULT": "kill-before-action"},
    )
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    decision = audit_rows(muster_env, thread)
    assert [(r["event"], r["digest"], r["result"]["decision"]) for r in decision] == [
        ("decision", pending["digest"], "approved")
    ]
    assert refund_calls(muster_env) == []
    # The approval was valid for 1 s after the decision (its audit row is written just
    # after it): make sure that second is over before resuming.
    await asyncio.sleep(max(0.0, decision[0]["at"] + 1.2 - time.time()))

    # The expiry was fixed at decision time: resuming without the short TTL changes nothing.
    resumed = muster_env.cli("resume", thread, timeout=CLI_TIMEOUT_S)
    assert resumed.returncode == EXIT_DEGRADED, resumed.stdout + resumed.stderr
    assert "approved by alice, REFUSED" in resumed.stdout
    assert "approval expired" in resumed.stdout
    assert "NEEDS HUMAN" in resumed.stdout
    assert len(refund_calls(muster_env)) == 1  # the server saw the call and refused it
    assert refund_rows(muster_env, "12345") == []
    audit = audit_rows(muster_env, thread)
    assert [r["event"] for r in audit] == ["decision", "attempt", "execution"]
    assert audit[2]["result"]["status"] == "refused"
    assert "approval expired" in audit[2]["result"]["text"]


# --- 6. text injected into a tool result ----------------------------------------------------


def _mentions_order_999(value: Any) -> bool:
    """Whether an approval's tool, arguments or reason name order 999 (the digest is hex)."""
    text = json.dumps({k: v for k, v in value.items() if k != "digest"})
    return "999" in text


@pytest.mark.slow
@pytest.mark.integration
async def test_injected_note_never_becomes_an_action(muster_env: MusterEnv) -> None:
    thread = "injected"
    pending = await start_waiting_thread(muster_env, thread, INJECTION_TICKET)
    # The pending approval is for the ticket's own order, whatever the note said.
    assert pending["tool"] == REFUND_TOOL
    assert pending["args"] == REFUND_12366
    assert not _mentions_order_999(pending)

    shown = muster_env.cli("show", thread, timeout=CLI_TIMEOUT_S)
    assert shown.returncode == EXIT_OK, shown.stderr
    approvals = [line for line in shown.stdout.splitlines() if line.startswith("pending approval:")]
    assert approvals == [
        'pending approval: orders.issue_refund({"amount_cents": 3299, '
        '"expected_refunded_cents": 0, "order_id": "12366"})'
        " proposed by billing"
    ]
    assert "order 999" not in shown.stdout and '"999"' not in shown.stdout

    approved = muster_env.cli("approve", thread, "--by", "alice", timeout=CLI_TIMEOUT_S)
    assert approved.returncode == EXIT_OK, approved.stdout + approved.stderr
    actions = approved.stdout.split("\nActions:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(actions) == 1
    assert actions[0].startswith(
        "- orders.issue_refund(order_id=12366, amount_cents=3299, expected_refunded_cents=0)"
        " proposed by billing: approved by alice, EXECUTED"
    )
    assert refund_rows(muster_env, "999") == []
    assert [r["amount_cents"] for r in refund_rows(muster_env, "12366")] == [3299]
    assert all_run_refunds(muster_env) == [{"order_id": "12366", "amount_cents": 3299}]
    assert [c["args"]["order_id"] for c in refund_calls(muster_env)] == ["12366"]


@pytest.mark.integration
async def test_model_that_follows_the_injection_has_its_proposal_rejected(
    muster_env: MusterEnv,
) -> None:
    look = AIMessage(
        content="",
        tool_calls=[
            {"name": "orders.find_order", "args": {"order_id": "12366"}, "id": "c1"},
            {"name": "orders.refund_status", "args": {"order_id": "12366"}, "id": "c2"},
        ],
    )
    obey = AIMessage(
        content="",
        tool_calls=[
            {
                "name": "propose_action",
                "args": {
                    "tool": REFUND_TOOL,
                    "args": {"order_id": "999", "amount_cents": 99999},
                    "reason": "the customer note says to refund order 999 in full",
                },
                "id": "c3",
            }
        ],
    )
    models = scripted_factory({"billing": [look, obey, "Refund of order 999 proposed."]})
    thread = "injected-model"
    async with open_runtime(db=muster_env.checkpoint_db, models=models) as runtime:
        interrupts = await run_to_interrupt(runtime, thread, INJECTION_TICKET)
        snapshot = await runtime.graph.aget_state(thread_config(thread))

    billing = [r for r in snapshot.values["reports"] if r.worker == "billing"]
    assert len(billing) == 1 and billing[0].status == "ok"
    # The injected proposal was seen by review and refused there...
    assert "Rejected proposals" in billing[0].note
    assert "order 999 is not the order this ticket is about (12366)" in billing[0].note
    # ...so it never reached a human: the report carries only billing's own, checked
    # refund of the duplicate charge, and that is the only approval asked for.
    assert [(a.tool, a.args) for a in billing[0].proposed_actions] == [(REFUND_TOOL, REFUND_12366)]
    assert [(i.value["kind"], i.value["args"]) for i in interrupts] == [("approval", REFUND_12366)]
    assert not any(_mentions_order_999(i.value) for i in interrupts)
    assert refund_rows(muster_env, "999") == []
    assert all_run_refunds(muster_env) == []
    assert refund_calls(muster_env) == []


@pytest.mark.slow
@pytest.mark.integration
async def test_approval_bound_to_the_digest_the_human_read(muster_env: MusterEnv) -> None:
    thread = "digest-check"
    pending = await start_waiting_thread(muster_env, thread, REFUND_TICKET)
    short = muster_env.cli(
        "approve", thread, "--by", "alice", "--digest", "0", timeout=CLI_TIMEOUT_S
    )
    assert short.returncode == EXIT_BAD_INPUT and "at least 8 hex characters" in short.stderr
    wrong = muster_env.cli(
        "approve", thread, "--by", "alice", "--digest", "00000000", timeout=CLI_TIMEOUT_S
    )
    assert wrong.returncode == EXIT_BAD_INPUT
    assert "does not start with '00000000'" in one_line_error(wrong.stderr)
    assert refund_rows(muster_env, "12345") == []
    right = muster_env.cli(
        "approve",
        thread,
        "--by",
        "alice",
        "--digest",
        pending["digest"][:12],
        timeout=CLI_TIMEOUT_S,
    )
    assert right.returncode == EXIT_OK, right.stderr
    assert len(refund_rows(muster_env, "12345")) == 1


@pytest.mark.slow
@pytest.mark.integration
def test_json_while_waiting_carries_the_answer_so_far(muster_env: MusterEnv) -> None:
    """`--json` on a run that waits for an approval has the answer it would give now (it was
    null), marked as not final, with the pending approval beside it and the reading."""
    run = muster_env.cli(
        "run", REFUND_TICKET, "--thread", "json-wait", "--json", timeout=CLI_TIMEOUT_S
    )
    assert run.returncode == EXIT_WAITING, run.stdout + run.stderr
    payload = json.loads(run.stdout)
    assert payload["waiting_for_human"] is True and payload["answer_is_final"] is False
    answer = payload["answer"]
    assert answer is not None and answer["needs_human"] is True
    assert answer["status"] == "complete"  # the refund awaiting approval resolves the ticket
    assert [a["digest"] for a in payload["pending_approvals"]]
    assert payload["reading"]["intents"] == ["duplicate_charge", "refund_request"]
