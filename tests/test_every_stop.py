"""One answer per stop, recomputed from the state (issue 24): after a clarification, an
approval, a rejection and an execution, every claim of the answer agrees with what happened,
and each action is one proposal, one approval and one ACTION line whichever intents asked.

Real stdio MCP servers and the real SQLite checkpointer; each thread is driven in-process
through `stream_run` with `Command(resume=...)`, as the CLI does; the orders and deploys
databases are read directly for what was written.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import uuid
from typing import Any

import pytest
from langgraph.types import Command

from checkpoints.threads import status_of, thread_config
from domains.incidents.plugin import ROLLBACK
from graph.app.render import print_result
from graph.app.runtime import MusterRuntime, open_runtime, stream_run
from graph.proposals import approval_digest, idempotency_key
from graph.synthesize import compose_answer
from servers.approval import mint_token
from servers.call_log import count_calls
from tests.conftest import MusterEnv
from workers.contracts import Answer, ProposedAction

pytestmark = pytest.mark.integration

REFUND_12345 = {"order_id": "12345", "amount_cents": 12900, "expected_refunded_cents": 0}
PAGE = "[2025-06-12 14:07 UTC] checkout 5xx spiking since about 14:05, customers can't pay"
CHANGE = "dep-checkout-20250612-1402"


def refund_rows(env: MusterEnv, order_id: str) -> list[tuple[str, int]]:
    """The refunds runs wrote for `order_id` (seed rows excluded)."""
    with sqlite3.connect(env.orders_db) as conn:
        rows = conn.execute(
            "SELECT order_id, amount_cents FROM refunds WHERE order_id = ?"
            " AND idempotency_key NOT LIKE 'seed-%'",
            (order_id,),
        ).fetchall()
    return [(str(o), int(a)) for o, a in rows]


async def stop(runtime: MusterRuntime, thread: str) -> tuple[Any, Answer]:
    """The thread's snapshot and its answer at this stop: the final one, or the answer so
    far that `muster run` prints while it waits."""
    snapshot = await runtime.graph.aget_state(thread_config(thread))
    values = dict(snapshot.values)
    answer = values.get("answer") if not snapshot.interrupts else None
    return snapshot, answer or compose_answer(values)  # type: ignore[arg-type]


def decide(snapshot: Any, *, approved: bool = True) -> Command:
    (pending,) = [i for i in snapshot.interrupts if i.value.get("kind") == "approval"]
    value = {"approved": approved, "digest": pending.value["digest"], "by": "lead", "note": ""}
    return Command(resume={pending.id: value})


def action_steps(answer: Answer) -> list[tuple[str | None, str | None]]:
    return [(s.tool, s.approval) for s in answer.resolution if s.kind == "action"]


def claims(answer: Answer) -> str:
    return " ".join(c.text for c in answer.summary)


async def test_clarify_then_approve_answers_from_the_order_the_customer_gave(
    muster_env: MusterEnv,
) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        await stream_run(runtime, thread, {"request": "I was charged twice for my order"})
        snapshot, asking = await stop(runtime, thread)
        (question,) = snapshot.interrupts
        assert question.value["kind"] == "clarification"
        assert any("names no order" in s.text for s in asking.resolution)

        await stream_run(runtime, thread, Command(resume={question.id: "It is order #12345"}))
        snapshot, waiting = await stop(runtime, thread)
        assert [i.value["kind"] for i in snapshot.interrupts] == ["approval"]
        # The answer so far is about order 12345 now, not a ticket naming no order.
        assert action_steps(waiting) == [("orders.issue_refund", "pending approval")]
        assert not any("names no order" in s.text for s in waiting.resolution)
        assert "order number" not in waiting.customer_reply
        assert "Nothing has been refunded on order 12345." in claims(waiting)

        await stream_run(runtime, thread, decide(snapshot))
        snapshot, final = await stop(runtime, thread)
    assert status_of(snapshot) == "done"
    assert refund_rows(muster_env, "12345") == [("12345", 12900)]
    assert action_steps(final) == [("orders.issue_refund", "executed (approved by lead)")]
    assert "$129.00 has been refunded on order 12345." in claims(final)
    assert "Nothing has been refunded" not in final.text
    assert "we have refunded it" in final.customer_reply


async def test_two_intents_one_refund_one_action_line_one_approval(
    muster_env: MusterEnv,
) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    ticket = "Order #12345 was charged twice, please refund the duplicate"
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        await stream_run(runtime, thread, {"request": ticket})
        snapshot, waiting = await stop(runtime, thread)
        assert set(snapshot.values["intents"]) == {"duplicate_charge", "refund_request"}
        assert len(snapshot.interrupts) == 1
        assert action_steps(waiting) == [("orders.issue_refund", "pending approval")]
        assert waiting.text.count("ACTION orders.issue_refund") == 1
        # Both intents are resolved: the second one points to the one refund.
        assert {s.intent for s in waiting.resolution} == {"duplicate_charge", "refund_request"}

        await stream_run(runtime, thread, decide(snapshot))
        snapshot, final = await stop(runtime, thread)
    assert status_of(snapshot) == "done" and not snapshot.interrupts  # asked once
    assert refund_rows(muster_env, "12345") == [("12345", 12900)]
    assert [a.status for a in snapshot.values["actions"]] == ["approved", "executed"]
    assert final.text.count("ACTION orders.issue_refund") == 1
    assert final.text.count("$129.00") >= 1 and "executed (approved by lead)" in final.text
    assert "Nothing has been refunded" not in final.text
    assert final.text.count("proposed by billing: approved by lead, EXECUTED") == 1


async def test_an_executed_refund_is_read_again_and_the_answer_says_it_is_refunded(
    muster_env: MusterEnv,
) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    ticket = "Customer says order #12345 was charged twice. What happened and what can we do?"
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        await stream_run(runtime, thread, {"request": ticket})
        snapshot, waiting = await stop(runtime, thread)
        assert "Nothing has been refunded on order 12345." in claims(waiting)
        before = count_calls(muster_env.call_log, server="orders", tool="refund_status")
        await stream_run(runtime, thread, decide(snapshot))
        snapshot, final = await stop(runtime, thread)
    # act read the refunds once before the write (the stale check) and once after it.
    after = count_calls(muster_env.call_log, server="orders", tool="refund_status")
    assert after - before == 2
    (effect,) = snapshot.values["effects"]
    assert json.loads(effect.observation)["refunded_cents"] == 12900
    assert refund_rows(muster_env, "12345") == [("12345", 12900)]
    assert "$129.00 has been refunded on order 12345." in claims(final)
    assert any(c.cites == ["act/E1"] for c in final.summary if "refunded" in c.text)
    assert "Nothing has been refunded" not in final.text
    assert any("after the action" in e for e in final.evidence)
    assert final.status == "complete" and not final.degraded


async def test_a_rejected_refund_is_promised_to_nobody(muster_env: MusterEnv) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        await stream_run(runtime, thread, {"request": "Order #12345 was charged twice."})
        snapshot, waiting = await stop(runtime, thread)
        assert "we are refunding it" in waiting.customer_reply
        await stream_run(runtime, thread, decide(snapshot, approved=False))
        snapshot, final = await stop(runtime, thread)
    assert refund_rows(muster_env, "12345") == []
    assert action_steps(final) == [("orders.issue_refund", "rejected by lead")]
    step = next(s for s in final.resolution if s.kind == "action")
    assert "lead rejected it" in step.text and "nothing was done" in step.text
    reply = final.customer_reply
    assert "we are refunding" not in reply and "we have refunded" not in reply
    assert "Nothing has been refunded on order 12345." in claims(final)  # still true
    assert "we are not refunding it" in final.customer_reply


async def test_a_rollback_another_thread_ran_is_not_put_to_a_human(
    muster_env: MusterEnv, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thread X waits on the rollback of the bad deploy; meanwhile the change is rolled back
    by another thread, straight through the deploys server. On X's resume the approval stop
    reads the change again: nothing is rolled back twice, the server is never asked, and the
    answer says it was already rolled back. A page run after that proposes nothing."""
    monkeypatch.setenv("MUSTER_DEPLOYS_DB", str(tmp_path / "deploys.sqlite"))
    monkeypatch.setenv("MUSTER_DOMAIN", "incidents")
    thread, later = f"t-{uuid.uuid4().hex[:8]}", f"t-{uuid.uuid4().hex[:8]}"
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        await stream_run(runtime, thread, {"request": PAGE})
        snapshot, waiting = await stop(runtime, thread)
        assert action_steps(waiting) == [(ROLLBACK, "pending approval")]

        other = ProposedAction(tool=ROLLBACK, args={"change_id": CHANGE}, proposed_by="deploys")
        key = idempotency_key("inc-other", other)
        token = mint_token(
            approval_digest(other, key),
            secret=os.environ["MUSTER_APPROVAL_SECRET"],
            expires_at=time.time() + 600,
        )
        ran = await runtime.services.hub.call_action(
            ROLLBACK,
            {
                "change_id": CHANGE,
                "idempotency_key": key,
                "approval": token,
                "requested_by": "inc-other",
            },
        )
        assert ran.ok, ran.text
        rollbacks_before = count_calls(muster_env.call_log, server="deploys", tool="rollback")

        await stream_run(runtime, thread, decide(snapshot))
        snapshot, final = await stop(runtime, thread)
        assert status_of(snapshot) == "done"
        assert count_calls(muster_env.call_log, server="deploys", tool="rollback") == (
            rollbacks_before
        )
        (record,) = snapshot.values["actions"]
        assert (record.status, record.decided_by) == ("held", "muster")
        assert "already done" in record.result and CHANGE in record.result
        step = next(s for s in final.resolution if s.kind == "action")
        assert step.approval == "already done" and "already rolled back" in step.text

        await stream_run(runtime, later, {"request": PAGE})
        snapshot, after = await stop(runtime, later)
    assert not snapshot.interrupts and status_of(snapshot) == "done"
    assert action_steps(after) == []
    assert any("already rolled back" in s.text for s in after.resolution)
    with sqlite3.connect(tmp_path / "deploys.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM rollbacks").fetchone()[0] == 1


async def test_json_at_every_stop_carries_the_answer_so_far_and_the_totals(
    muster_env: MusterEnv, capsys: pytest.CaptureFixture[str]
) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        await stream_run(runtime, thread, {"request": "Order #12345 was charged twice."})
        snapshot = await runtime.graph.aget_state(thread_config(thread))
        started = time.monotonic()
        print_result(
            thread,
            dict(snapshot.values),
            waiting=True,
            as_json=True,
            interrupts=[i.value for i in snapshot.interrupts],
            started=started,
        )
        waiting = json.loads(capsys.readouterr().out)
        await stream_run(runtime, thread, decide(snapshot))
        snapshot = await runtime.graph.aget_state(thread_config(thread))
        print_result(thread, dict(snapshot.values), waiting=False, as_json=True, started=started)
        done = json.loads(capsys.readouterr().out)
    assert waiting["answer_is_final"] is False and waiting["answer"]["status"] == "complete"
    assert (waiting["status"], waiting["degraded"], waiting["needs_human"]) == (
        "complete",
        False,
        True,
    )
    assert [a["args"] for a in waiting["pending_approvals"]] == [REFUND_12345]
    assert waiting["pending_questions"] == []
    totals = waiting["totals"]
    assert totals["steps"] > 0 and totals["tokens"] > 0 and totals["dispatches"] == 3
    assert totals["duration_s"] >= 0 and totals["actions_executed"] == 0
    assert done["answer_is_final"] is True and done["pending_approvals"] == []
    assert done["totals"]["actions_executed"] == 1
    assert done["totals"]["steps"] == totals["steps"]  # approving runs no worker
    assert "$129.00 has been refunded" in done["answer"]["text"]
