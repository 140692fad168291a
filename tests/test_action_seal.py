"""A pending action cannot be changed unseen: each proposed action is sealed (an HMAC over
the thread, tool, arguments and proposer) as its report enters the state, and `approve`
refuses one whose seal does not hold, before any human is asked or anything runs."""

from __future__ import annotations

import pytest

from checkpoints.threads import thread_config
from graph.action_seal import seal_holds, seal_of, sealed
from graph.app.runtime import open_runtime, stream_run
from tests.conftest import MusterEnv
from tests.test_actions import (
    CLI_TIMEOUT_S,
    REFUND_TICKET,
    all_run_refunds,
    start_waiting_thread,
)
from workers.contracts import ProposedAction

REFUND = ProposedAction(
    tool="orders.issue_refund",
    args={"order_id": "12345", "amount_cents": 12900},
    proposed_by="billing",
)


def test_a_seal_binds_thread_tool_arguments_and_proposer(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MUSTER_SEAL_KEY", raising=False)
    monkeypatch.setenv("MUSTER_SEAL_KEY_FILE", f"{tmp_path}/seal.key")
    action = sealed("t-1", REFUND)
    assert seal_holds("t-1", action)
    assert not seal_holds("t-2", action)  # another thread
    assert not seal_holds("t-1", REFUND)  # never sealed
    for change in (
        {"args": {**REFUND.args, "order_id": "12340"}},
        {"args": {**REFUND.args, "amount_cents": 99900}},
        {"tool": "orders.cancel_order"},
        {"proposed_by": "comms"},
    ):
        assert not seal_holds("t-1", action.model_copy(update=change)), change
    monkeypatch.setenv("MUSTER_SEAL_KEY", "another key")
    assert seal_of("t-1", REFUND) != action.seal  # the key matters


@pytest.mark.integration
async def test_an_action_edited_in_the_store_is_refused_not_put_to_a_human(
    muster_env: MusterEnv,
) -> None:
    thread = "tamper"
    await start_waiting_thread(muster_env, thread, REFUND_TICKET)
    config = thread_config(thread)
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        state = (await runtime.graph.aget_state(config)).values
        (billing,) = [r for r in state["reports"] if r.proposed_actions]
        action = billing.proposed_actions[0]
        assert seal_holds(thread, action)
        # Someone with write access to the store points the refund at another order.
        edited = action.model_copy(
            update={"args": {**action.args, "order_id": "12340", "amount_cents": 99900}}
        )
        tampered = billing.model_copy(update={"proposed_actions": [edited]})
        await runtime.graph.aupdate_state(config, {"reports": [tampered]}, as_node="verify")
        values = await stream_run(runtime, thread, None)
        snapshot = await runtime.graph.aget_state(config)

    assert not snapshot.interrupts  # nobody was asked to approve the edited refund
    (record,) = [a for a in values["actions"] if a.args.get("order_id") == "12340"]
    assert record.status == "refused" and "changed after it was proposed" in record.result
    assert all_run_refunds(muster_env) == []
    approve = muster_env.cli("approve", thread, "--by", "alice", timeout=CLI_TIMEOUT_S)
    assert approve.returncode == 2 and "has no pending approval" in approve.stderr
    assert all_run_refunds(muster_env) == []
