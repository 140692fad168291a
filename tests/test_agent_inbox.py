"""Agent Inbox's schema on the approval interrupt, and its answers held to Muster's checks.

Fast checks first: how each `HumanResponse` type maps to Muster's decision (accept, edit,
response, ignore), with the same approver, role and edit checks as `check_decision`, and who
decides. Then the real thing: `langgraph dev` as a subprocess (the helpers of
tests/test_studio.py), driven through the SDK as Agent Inbox drives it: the reference refund's
interrupt carries `action_request`, `config` and `description` beside Muster's own keys; a
one-element list `[{"type": "accept", "args": <the action request, values as strings>}]`
executes it once; on a second order a bad edit is refused and the thread keeps waiting, then an
edit to a smaller `amount_cents` executes the edited amount once.
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from typing import Any

import pytest
from langgraph_sdk import get_client

from graph.agent_inbox import INBOX_APPROVER_ENV, as_decision_value, is_inbox_response
from graph.approvers import Decision, Refusal, check_decision, load_approvers
from servers.call_log import count_calls
from tests.conftest import HANG_TIMEOUT_S, MusterEnv
from tests.test_studio import (
    GRAPH_ID,
    REFUND_TICKET,
    Studio,
    descendants,
    run_refunds,
    running,
    start_studio,
    wait_until_ready,
)

TOOL = "orders.issue_refund"
PROPOSED = {"order_id": "12345", "amount_cents": 12900, "expected_refunded_cents": 0}
DIGEST = "ab" * 32
SECOND_TICKET = "Order #12366 was charged twice, please refund the duplicate"


def as_strings(args: dict[str, Any]) -> dict[str, str]:
    """Arguments as Agent Inbox sends them back: every value a string."""
    return {key: str(value) for key, value in args.items()}


def resume(value: Any) -> Any:
    """A resume command for the SDK (its `Command` type does not admit a list)."""
    return {"resume": value}


def decide(value: object, *, configurable: dict[str, Any] | None = None) -> Decision | Refusal:
    """An Agent Inbox answer through the mapping and then Muster's own checks."""
    mapped = as_decision_value(
        value, digest=DIGEST, tool=TOOL, args=PROPOSED, configurable=configurable or {}
    )
    if isinstance(mapped, Refusal):
        return mapped
    return check_decision(mapped, digest=DIGEST, tool=TOOL, args=PROPOSED, config=load_approvers())


def test_muster_decisions_are_not_taken_for_inbox_responses() -> None:
    assert not is_inbox_response({"approved": True, "digest": DIGEST, "by": "lead"})
    assert is_inbox_response({"type": "accept", "args": None})
    assert is_inbox_response([{"type": "ignore", "args": None}])


def test_accept_edit_response_ignore_map_to_decisions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MUSTER_ACCOUNTS", raising=False)
    monkeypatch.setenv(INBOX_APPROVER_ENV, "alice")
    request: dict[str, Any] = {"action": TOOL, "args": as_strings(PROPOSED)}

    accepted = decide([{"type": "accept", "args": request}])
    assert isinstance(accepted, Decision), accepted
    assert (accepted.decision, accepted.by, accepted.args) == ("approved", "alice", None)

    edited = decide(
        [
            {
                "type": "edit",
                "args": {"action": TOOL, "args": {**request["args"], "amount_cents": "5000"}},
            }
        ]
    )
    assert isinstance(edited, Decision), edited
    assert edited.decision == "approved" and edited.args == {**PROPOSED, "amount_cents": 5000}

    answered = decide({"type": "response", "args": "Ask the customer for the bank statement."})
    assert isinstance(answered, Decision)
    assert answered.decision == "rejected"
    assert answered.note == "response: Ask the customer for the bank statement."

    ignored = decide([{"type": "ignore", "args": None}])
    assert isinstance(ignored, Decision) and ignored.decision == "rejected"


def test_bad_inbox_responses_are_refusals_with_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MUSTER_ACCOUNTS", raising=False)
    monkeypatch.setenv(INBOX_APPROVER_ENV, "alice")
    request: dict[str, Any] = {"action": TOOL, "args": as_strings(PROPOSED)}
    cases: dict[str, object] = {
        "above the proposed amount": {
            "type": "edit",
            "args": {"action": TOOL, "args": {**request["args"], "amount_cents": "99999"}},
        },
        "not a whole number": {
            "type": "edit",
            "args": {"action": TOOL, "args": {**request["args"], "amount_cents": "12.50"}},
        },
        "another tool": {"type": "accept", "args": {"action": "orders.cancel", "args": {}}},
        "other arguments accepted": {
            "type": "accept",
            "args": {"action": TOOL, "args": {**request["args"], "amount_cents": "100"}},
        },
        "an unknown type": {"type": "approve", "args": None},
        "two responses": [{"type": "ignore", "args": None}] * 2,
        "an empty response": {"type": "response", "args": "  "},
        "an accept with nothing to bind it": {"type": "accept", "args": None},
    }
    for what, value in cases.items():
        refused = decide(value)
        assert isinstance(refused, Refusal), (what, refused)
        assert refused.error, what
    # The role a limit needs is checked on what will run: alice (agent) may not approve a
    # refund above $500, whatever shape the answer has.
    big = {**PROPOSED, "amount_cents": 64900}
    mapped = as_decision_value(
        {"type": "accept", "args": {"action": TOOL, "args": as_strings(big)}},
        digest=DIGEST,
        tool=TOOL,
        args=big,
        configurable={},
    )
    assert isinstance(mapped, dict)
    refused = check_decision(mapped, digest=DIGEST, tool=TOOL, args=big, config=load_approvers())
    assert isinstance(refused, Refusal) and "team_lead" in refused.error


def test_who_decides_an_inbox_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MUSTER_ACCOUNTS", raising=False)
    monkeypatch.delenv(INBOX_APPROVER_ENV, raising=False)
    ignore = {"type": "ignore", "args": None}
    nobody = decide(ignore)
    assert isinstance(nobody, Refusal) and INBOX_APPROVER_ENV in nobody.error
    stranger = decide({**ignore, "by": "mallory"})
    assert isinstance(stranger, Refusal) and "not a known approver" in stranger.error
    # The deployment's authenticated user decides, and a claim of another name is refused.
    authed = decide(ignore, configurable={"langgraph_auth_user_id": "lead"})
    assert isinstance(authed, Decision) and authed.by == "lead"
    claimed = decide({**ignore, "by": "alice"}, configurable={"langgraph_auth_user_id": "lead"})
    assert isinstance(claimed, Refusal) and "authenticated lead" in claimed.error
    # Authentication on: a claimed name alone is refused, as the CLI refuses --by alone.
    monkeypatch.setenv("MUSTER_ACCOUNTS", "/nonexistent/accounts.sqlite")
    monkeypatch.setenv(INBOX_APPROVER_ENV, "lead")
    refused = decide({**ignore, "by": "lead"})
    assert isinstance(refused, Refusal) and "authentication is on" in refused.error
    assert isinstance(decide(ignore, configurable={"langgraph_auth_user_id": "lead"}), Decision)


# --- through `langgraph dev` ---------------------------------------------------------------


@pytest.fixture
async def inbox_studio(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Studio]:
    """`langgraph dev` whose Agent Inbox answers decide as `studio-test` (an agent), the
    way a local deployment without LangGraph auth is run."""
    monkeypatch.setenv(INBOX_APPROVER_ENV, "studio-test")
    monkeypatch.delenv("MUSTER_ACCOUNTS", raising=False)
    server = start_studio(muster_env)
    below: set[int] = set()
    try:
        await wait_until_ready(server)
        below = descendants(server.process.pid)
        yield server
    finally:
        if server.process.poll() is None:
            below |= descendants(server.process.pid)
            server.stop(signal.SIGTERM)
        if server.process.poll() is None:
            server.stop(signal.SIGKILL)
        for pid in below:
            if running(pid):
                os.kill(pid, signal.SIGKILL)


async def waiting_ask(client: Any, thread: str) -> dict[str, Any]:
    """The one approval interrupt the thread waits on."""
    state = await client.threads.get_state(thread)
    assert tuple(state["next"]) == ("approve",), state["next"]
    interrupts = state["interrupts"]
    assert len(interrupts) == 1, interrupts
    ask: dict[str, Any] = interrupts[0]["value"]
    return ask


@pytest.mark.slow
@pytest.mark.integration
async def test_agent_inbox_accepts_and_edits_through_langgraph_dev(
    inbox_studio: Studio, muster_env: MusterEnv
) -> None:
    async with get_client(url=inbox_studio.url, timeout=HANG_TIMEOUT_S) as client:
        # Both tickets stop at their refund's approval.
        first = (await client.threads.create())["thread_id"]
        second = (await client.threads.create())["thread_id"]
        await client.runs.wait(first, GRAPH_ID, input={"request": REFUND_TICKET})
        await client.runs.wait(second, GRAPH_ID, input={"request": SECOND_TICKET})

        # The reference refund's interrupt: Agent Inbox's HumanInterrupt beside Muster's keys.
        ask = await waiting_ask(client, first)
        assert ask["kind"] == "approval" and ask["tool"] == TOOL, ask
        assert ask["args"]["order_id"] == "12345" and len(ask["digest"]) == 64
        assert ask["action_request"] == {"action": TOOL, "args": ask["args"]}
        assert ask["config"] == {
            "allow_accept": True,
            "allow_edit": True,
            "allow_respond": True,
            "allow_ignore": True,
        }
        description = ask["description"]
        assert ask["digest"] in description
        assert "**Evidence:**" in description and "**Draft reply to the customer:**" in description
        assert "amount_cents" in description
        assert run_refunds(muster_env.orders_db, "12345") == []

        # Accept, as Agent Inbox sends it: a list of one response, the arguments as strings.
        done: Any = await client.runs.wait(
            first,
            GRAPH_ID,
            command=resume(
                [{"type": "accept", "args": {"action": TOOL, "args": as_strings(ask["args"])}}]
            ),
        )
        assert "EXECUTED" in done["answer"]["text"], done["answer"]["text"]
        refunds = run_refunds(muster_env.orders_db, "12345")
        assert [r["amount_cents"] for r in refunds] == [ask["args"]["amount_cents"]], refunds
        assert not (await client.threads.get_state(first))["next"]

        # The second order: an edit above what was proposed is refused, and it keeps waiting.
        other = await waiting_ask(client, second)
        proposed = int(other["args"]["amount_cents"])
        edit: dict[str, Any] = {"action": TOOL, "args": as_strings(other["args"])}
        await client.runs.wait(
            second,
            GRAPH_ID,
            command=resume(
                [
                    {
                        "type": "edit",
                        "args": {
                            **edit,
                            "args": {**edit["args"], "amount_cents": str(proposed + 1)},
                        },
                    }
                ]
            ),
        )
        again = await waiting_ask(client, second)
        assert again["digest"] == other["digest"]
        assert "outside" in again["error"] and "amount_cents" in again["error"], again
        assert "action_request" in again  # the next interrupt is still Agent Inbox's shape
        assert run_refunds(muster_env.orders_db, "12366") == []

        # A smaller amount: approved with the edit, executed once for that amount.
        smaller = proposed // 2
        edited: Any = await client.runs.wait(
            second,
            GRAPH_ID,
            command=resume(
                [
                    {
                        "type": "edit",
                        "args": {**edit, "args": {**edit["args"], "amount_cents": str(smaller)}},
                    }
                ]
            ),
        )
        assert "EXECUTED" in edited["answer"]["text"], edited["answer"]["text"]
        assert [r["amount_cents"] for r in run_refunds(muster_env.orders_db, "12366")] == [smaller]
        final: Any = await client.threads.get_state(second)
        actions = final["values"]["actions"]
        notes = [a["note"] for a in actions if a["status"] == "executed"]
        assert any(f"amount_cents {proposed} -> {smaller}" in n for n in notes), actions

    # The orders server saw one refund call per thread: no retry refunded twice.
    assert count_calls(muster_env.call_log, server="orders", tool="issue_refund") == 2
