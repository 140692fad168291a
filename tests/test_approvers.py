"""Approvals with roles and limits from policy; one decision per action.

Approvers, their roles and the policy limits are data (`graph/approvers.json`, or the file
`MUSTER_APPROVERS` names). A refund above $500 needs a team lead (POL-REF-001): an agent's
approval of one is refused and the action stays pending; a team lead's executes it once. A
resume value from an unknown approver, or with a short or wrong digest, is not a decision
either, and the first decision on an action stands.

The checks are pure functions, tested alone; the `approve` node is tested on a hand-built
state in a one-node graph (the behaviour Studio and the notebook get, since their resume
values reach the node unchecked); the whole path runs once in-process with real servers on an
order charged $649 twice, and once through the `muster` CLI (slow).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any, cast

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from checkpoints.audit import AuditLog
from checkpoints.threads import status_of, thread_config
from graph.action_seal import sealed
from graph.app.runtime import open_runtime, stream_run
from graph.approval import approve
from graph.approvers import (
    APPROVERS_ENV,
    Decision,
    Refusal,
    check_decision,
    digest_problem,
    load_approvers,
)
from graph.proposals import approval_digest, idempotency_key
from graph.services import Services
from graph.state import MusterState
from servers.orders import ensure_database
from tests.conftest import HANG_TIMEOUT_S, MusterEnv, error_lines
from workers.contracts import ActionRecord, ProposedAction, Report
from workers.errors import ConfigError

REFUND_TOOL = "orders.issue_refund"
BIG_ORDER = "12390"
BIG_CENTS = 64900
"""An order charged $649 twice: refunding the duplicate is a refund above $500."""
BIG_TICKET = f"Order #{BIG_ORDER} was charged twice, please refund the duplicate"
BIG_REFUND = {"order_id": BIG_ORDER, "amount_cents": BIG_CENTS, "expected_refunded_cents": 0}
SMALL_REFUND = {"order_id": "12345", "amount_cents": 12900, "expected_refunded_cents": 0}
EXIT_OK, EXIT_BAD_INPUT, EXIT_WAITING = 0, 2, 5
DIGEST = "ab12" * 16


# --- the checks, as values ----------------------------------------------------------------------


def decide(value: object, args: dict[str, Any] = BIG_REFUND) -> Decision | Refusal:
    return check_decision(
        value, digest=DIGEST, tool=REFUND_TOOL, args=args, config=load_approvers()
    )


def test_shipped_approvers_name_the_people_the_examples_use() -> None:
    config = load_approvers()
    assert {"lead", "alice", "bob", "notebook", "studio-test"} <= set(config.approvers)
    assert config.holders("team_lead") == ["lead"]
    (limit,) = config.limits_for(REFUND_TOOL, BIG_REFUND)
    assert (limit.policy, limit.role, limit.above) == ("POL-REF-001", "team_lead", 50000)
    assert config.limits_for(REFUND_TOOL, {**BIG_REFUND, "amount_cents": 50000}) == []
    assert config.limits_for(REFUND_TOOL, SMALL_REFUND) == []
    # What cannot be compared needs the stricter role.
    assert config.limits_for(REFUND_TOOL, {**BIG_REFUND, "amount_cents": "649"})


def test_a_refund_above_500_needs_a_team_lead() -> None:
    refused = decide({"approved": True, "digest": DIGEST, "by": "alice"})
    assert isinstance(refused, Refusal)
    assert "Refunds above $500 need a team lead" in refused.error
    assert "POL-REF-001" in refused.error and "team_lead (lead)" in refused.error
    assert decide({"approved": True, "digest": DIGEST, "by": "lead"}) == Decision(
        decision="approved", by="lead", role="team_lead", note=""
    )
    # Under the threshold an agent approves, under the agent role; anyone known may reject.
    assert decide({"approved": True, "digest": DIGEST, "by": "alice"}, SMALL_REFUND) == Decision(
        decision="approved", by="alice", role="agent", note=""
    )
    assert decide({"approved": False, "digest": DIGEST, "by": "bob", "note": "hold"}) == Decision(
        decision="rejected", by="bob", role="agent", note="hold"
    )


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (
            {"approved": True, "digest": DIGEST, "by": "mallory"},
            "'mallory' is not a known approver",
        ),
        ({"approved": True, "by": "lead"}, "carries no digest"),
        ({"approved": True, "digest": "", "by": "lead"}, "carries no digest"),
        ({"approved": True, "digest": "a", "by": "lead"}, "at least 8 hex characters"),
        ({"approved": True, "digest": DIGEST[:7], "by": "lead"}, "at least 8 hex characters"),
        ({"approved": True, "digest": "xyz12345", "by": "lead"}, "is not hex"),
        ({"approved": True, "digest": "00000000", "by": "lead"}, "digest mismatch"),
        ({"approved": False, "digest": "00000000", "by": "bob"}, "digest mismatch"),
        ({"approved": "yes", "digest": DIGEST, "by": "lead"}, "must be true or false"),
        ("approve it", "unreadable decision"),
    ],
)
def test_what_is_not_a_decision(value: object, error: str) -> None:
    refused = decide(value)
    assert isinstance(refused, Refusal) and error in refused.error, refused


def test_a_digest_prefix_of_eight_hex_characters_is_enough() -> None:
    assert digest_problem(DIGEST[:8], DIGEST) is None
    assert digest_problem(DIGEST[:8].upper(), DIGEST) is None
    assert digest_problem(DIGEST, DIGEST) is None
    assert isinstance(decide({"approved": True, "digest": DIGEST[:8], "by": "lead"}), Decision)


def test_an_unusable_approvers_file_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "approvers.json"
    monkeypatch.setenv(APPROVERS_ENV, str(path))
    with pytest.raises(ConfigError, match="does not exist"):
        load_approvers()
    path.write_text('{"approvers": {"ann": {"roles": []}}}')
    with pytest.raises(ConfigError, match="is malformed"):
        load_approvers()
    limit = {
        "policy": "POL-REF-001",
        "rule": "Refunds above $500 need a team lead.",
        "tool": REFUND_TOOL,
        "arg": "amount_cents",
        "above": 50000,
        "role": "team_lead",
    }
    path.write_text(json.dumps({"approvers": {"ann": {"roles": ["agent"]}}, "limits": [limit]}))
    with pytest.raises(ConfigError, match="no approver holds"):
        load_approvers()
    path.write_text(json.dumps({"approvers": {"ann": {"roles": ["agent", "team_lead"]}}}))
    assert load_approvers().holders("team_lead") == ["ann"]  # the env names the file


# --- the audit log: roles, and the first decision stands --------------------------------------


async def test_the_first_decision_stands_in_the_audit_log(tmp_path: Path) -> None:
    # A log written before roles were recorded gains the column.
    with sqlite3.connect(tmp_path / "audit.sqlite") as conn:
        conn.execute(
            "CREATE TABLE muster_audit (id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL,"
            " thread_id TEXT NOT NULL, event TEXT NOT NULL, actor TEXT NOT NULL,"
            " digest TEXT NOT NULL, result TEXT NOT NULL)"
        )
        conn.execute(
            "INSERT INTO muster_audit (at, thread_id, event, actor, digest, result)"
            " VALUES (1.0, 'old', 'execution', 'muster', 'd0', '{}')"
        )
    async with await AuditLog.open(tmp_path / "audit.sqlite") as audit:
        first, inserted = await audit.decide(
            thread_id="t",
            actor="lead",
            role="team_lead",
            digest="d1",
            result={"decision": "approved"},
        )
        assert inserted and (first.actor, first.role) == ("lead", "team_lead")
        later, inserted = await audit.decide(
            thread_id="t", actor="bob", role="agent", digest="d1", result={"decision": "rejected"}
        )
        assert not inserted and later == first
        other, inserted = await audit.decide(
            thread_id="t2", actor="bob", role="agent", digest="d1", result={"decision": "rejected"}
        )
        assert inserted and other.actor == "bob"
        assert [(r.thread_id, r.event, r.actor, r.role) for r in await audit.rows()] == [
            ("old", "execution", "muster", ""),
            ("t", "decision", "lead", "team_lead"),
            ("t2", "decision", "bob", "agent"),
        ]

    # Two connections (two processes' worth) deciding at once: exactly one is first.
    async with (
        await AuditLog.open(tmp_path / "audit.sqlite") as one,
        await AuditLog.open(tmp_path / "audit.sqlite") as two,
    ):
        results = await asyncio.gather(
            *(
                log.decide(
                    thread_id="race", actor=who, role="agent", digest="d2", result={"decision": d}
                )
                for log, who, d in [(one, "alice", "approved"), (two, "bob", "rejected")] * 5
            )
        )
    assert sum(inserted for _, inserted in results) == 1
    assert len({row for row, _ in results}) == 1


# --- the approve node, as Studio and the notebook reach it --------------------------------------


def one_node_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    builder = StateGraph(MusterState, context_schema=Services)
    builder.add_node("approve", approve)
    builder.add_edge(START, "approve")
    builder.add_edge("approve", END)
    return builder.compile(checkpointer=InMemorySaver())


def proposing_state(args: dict[str, Any], thread: str) -> dict[str, Any]:
    """A state whose billing report proposes a refund, sealed as dispatch seals it."""
    action = sealed(
        thread, ProposedAction(tool=REFUND_TOOL, args=args, proposed_by="billing", reason="dup")
    )
    report = Report(
        packet_id="billing-1",
        worker="billing",
        objective="refund the duplicate",
        status="ok",
        proposed_actions=[action],
    )
    return {"request": BIG_TICKET, "reports": [report]}


def digest_on(thread: str, args: dict[str, Any]) -> str:
    action = ProposedAction(tool=REFUND_TOOL, args=args)
    return approval_digest(action, idempotency_key(thread, action))


async def resume(
    graph: CompiledStateGraph[Any, Any, Any, Any], services: Services, thread: str, value: object
) -> dict[str, Any]:
    """Answer the one pending interrupt with `value`; return the next one's value, or {}."""
    config = thread_config(thread)
    (pending,) = (await graph.aget_state(config)).interrupts
    await graph.ainvoke(Command(resume={pending.id: value}), config, context=services)
    interrupts = (await graph.aget_state(config)).interrupts
    return dict(interrupts[0].value) if interrupts else {}


def audit_of(path: Path, thread: str) -> list[tuple[str, str, str, dict[str, Any]]]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT event, actor, role, result FROM muster_audit WHERE thread_id = ? ORDER BY id",
            (thread,),
        ).fetchall()
    return [(e, a, r, json.loads(res)) for e, a, r, res in rows]


async def test_the_node_keeps_an_action_pending_until_a_decision_holds(tmp_path: Path) -> None:
    thread = "node-roles"
    digest = digest_on(thread, BIG_REFUND)
    graph = one_node_graph()
    async with await AuditLog.open(tmp_path / "audit.sqlite") as audit:
        services = Services(hub=cast(Any, None), audit=audit)
        await graph.ainvoke(
            proposing_state(BIG_REFUND, thread), thread_config(thread), context=services
        )
        (first,) = (await graph.aget_state(thread_config(thread))).interrupts
        ask = first.value
        assert (ask["digest"], ask["needs_role"], "error" in ask) == (digest, "team_lead", False)
        assert ask["limits"] == ["POL-REF-001: Refunds above $500 need a team lead."]

        wrong = [
            {"approved": True, "digest": digest, "by": "alice"},
            {"approved": True, "digest": digest[:4], "by": "lead"},
            {"approved": True, "digest": "0" * 64, "by": "lead"},
            {"approved": True, "digest": digest, "by": "mallory"},
        ]
        for n, value in enumerate(wrong, start=1):
            again = await resume(graph, services, thread, value)
            assert again["digest"] == digest and len(again["errors"]) == n, again
            assert status_of(await graph.aget_state(thread_config(thread))) == "interrupted"
        assert "POL-REF-001" in again["errors"][0] and "at least 8" in again["errors"][1]
        assert "digest mismatch" in again["errors"][2] and "mallory" in again["error"]

        assert (
            await resume(
                graph, services, thread, {"approved": True, "digest": digest[:8], "by": "lead"}
            )
            == {}
        )
        values = (await graph.aget_state(thread_config(thread))).values
        (record,) = values["actions"]
        assert (record.decision, record.decided_by, record.status) == (
            "approved",
            "lead",
            "approved",
        )

    audit = audit_of(tmp_path / "audit.sqlite", thread)
    # Each refusal once, in order, with the role its sender holds; then the one decision.
    assert [(e, a, r) for e, a, r, _ in audit] == [
        ("refused", "alice", "agent"),
        ("refused", "lead", "agent"),
        ("refused", "lead", "agent"),
        ("refused", "mallory", ""),
        ("decision", "lead", "team_lead"),
    ]
    assert "POL-REF-001" in audit[0][3]["error"]
    assert audit[4][3]["decision"] == "approved" and audit[4][3]["role"] == "team_lead"


async def test_a_later_different_decision_is_refused_with_the_one_that_stands(
    tmp_path: Path,
) -> None:
    # Two processes resumed the same waiting checkpoint: bob's rejection reached the audit
    # log first, so lead's approval in the other process does not stand.
    thread = "node-race"
    digest = digest_on(thread, BIG_REFUND)
    graph = one_node_graph()
    async with await AuditLog.open(tmp_path / "audit.sqlite") as audit:
        services = Services(hub=cast(Any, None), audit=audit)
        await graph.ainvoke(
            proposing_state(BIG_REFUND, thread), thread_config(thread), context=services
        )
        await audit.decide(
            thread_id=thread,
            actor="bob",
            role="agent",
            digest=digest,
            result={"decision": "rejected", "note": "customer withdrew", "expires_at": 0},
        )
        await resume(graph, services, thread, {"approved": True, "digest": digest, "by": "lead"})
        (record,) = (await graph.aget_state(thread_config(thread))).values["actions"]
    assert isinstance(record, ActionRecord)
    assert (record.decision, record.decided_by, record.status) == ("rejected", "bob", "rejected")
    assert "later decision (approved by lead) was refused" in record.note
    assert [(e, a, r) for e, a, r, _ in audit_of(tmp_path / "audit.sqlite", thread)] == [
        ("decision", "bob", "agent"),
        ("decision-refused", "lead", "team_lead"),
    ]


# --- the whole path, with real servers ----------------------------------------------------------


def add_big_order(env: MusterEnv) -> None:
    """Seed the orders database, then add an order of $649 charged twice."""
    ensure_database(env.orders_db)
    with sqlite3.connect(env.orders_db) as conn:
        conn.execute(
            "INSERT INTO orders (order_id, customer, item, amount_cents, status, payment_method,"
            " placed_at) VALUES (?, 'J. Rivera', 'Atlas standing desk XL', ?, 'delivered', 'card',"
            " '2025-04-10')",
            (BIG_ORDER, BIG_CENTS),
        )
        for k in (1, 2):
            conn.execute(
                "INSERT INTO charges (charge_id, order_id, amount_cents, charged_at)"
                " VALUES (?, ?, ?, '2025-04-10')",
                (f"ch_{BIG_ORDER}_{k}", BIG_ORDER, BIG_CENTS),
            )


def run_refunds(env: MusterEnv) -> list[tuple[str, int]]:
    with sqlite3.connect(env.orders_db) as conn:
        rows = conn.execute(
            "SELECT order_id, amount_cents FROM refunds WHERE idempotency_key NOT LIKE 'seed-%'"
        ).fetchall()
    return [(str(r[0]), int(r[1])) for r in rows]


@pytest.mark.integration
async def test_a_refund_above_500_waits_for_a_team_lead_then_executes_once(
    muster_env: MusterEnv,
) -> None:
    add_big_order(muster_env)
    thread = "big-refund"
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        await stream_run(runtime, thread, {"request": BIG_TICKET})
        (pending,) = (await runtime.graph.aget_state(thread_config(thread))).interrupts
        ask = pending.value
        assert (ask["tool"], ask["args"], ask["needs_role"]) == (
            REFUND_TOOL,
            BIG_REFUND,
            "team_lead",
        )

        # An agent's approval, as Studio would send it: refused, still pending.
        by_agent = {"approved": True, "digest": ask["digest"], "by": "alice"}
        await stream_run(runtime, thread, Command(resume={pending.id: by_agent}))
        snapshot = await runtime.graph.aget_state(thread_config(thread))
        assert status_of(snapshot) == "interrupted"
        (still,) = snapshot.interrupts
        assert still.value["digest"] == ask["digest"]
        assert "Refunds above $500 need a team lead" in still.value["error"]
        assert not snapshot.values.get("actions")
        assert run_refunds(muster_env) == []

        by_lead = {"approved": True, "digest": ask["digest"], "by": "lead", "note": "ok"}
        values = await stream_run(runtime, thread, Command(resume={still.id: by_lead}))
        # Approving again finds nothing pending: the graph only asks about undecided actions.
        assert not (await runtime.graph.aget_state(thread_config(thread))).interrupts

    assert [(a.decided_by, a.status) for a in values["actions"]][-1] == ("lead", "executed")
    assert "approved by lead, EXECUTED" in values["answer"].text
    assert run_refunds(muster_env) == [(BIG_ORDER, BIG_CENTS)]
    assert [(e, a, r) for e, a, r, _ in audit_of(muster_env.checkpoint_db, thread)] == [
        ("refused", "alice", "agent"),
        ("decision", "lead", "team_lead"),
        ("attempt", "muster", ""),
        ("execution", "muster", ""),
    ]


@pytest.mark.slow
@pytest.mark.integration
async def test_the_cli_refuses_what_the_graph_would_refuse(muster_env: MusterEnv) -> None:
    add_big_order(muster_env)
    thread = "big-refund-cli"
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        await stream_run(runtime, thread, {"request": BIG_TICKET})
        (pending,) = (await runtime.graph.aget_state(thread_config(thread))).interrupts
    digest = pending.value["digest"]

    def refused(*args: str, extra_env: dict[str, str] | None = None) -> str:
        done = muster_env.cli("approve", thread, *args, timeout=HANG_TIMEOUT_S, extra_env=extra_env)
        assert done.returncode == EXIT_BAD_INPUT, done.stdout + done.stderr
        lines = error_lines(done.stderr)
        assert len(lines) == 1 and lines[0].startswith("muster: error:"), done.stderr
        return lines[0]

    assert "POL-REF-001" in refused("--by", "alice")
    assert "the approval stays pending" in refused("--by", "alice", "--digest", digest[:8])
    assert "known: alice, bob, lead" in refused("--by", "mallory")
    # Without --by the OS user decides, and must be listed too.
    assert "'somebody' is not a known approver" in refused(extra_env={"LOGNAME": "somebody"})
    assert "at least 8 hex" in refused("--by", "lead", "--digest", "a")
    assert "at least 8 hex" in refused("--by", "lead", "--digest", "")
    assert "does not start with" in refused("--by", "lead", "--digest", "00000000")
    shown = muster_env.cli("show", thread, timeout=HANG_TIMEOUT_S)
    assert "pending approval: orders.issue_refund" in shown.stdout, shown.stdout + shown.stderr
    assert run_refunds(muster_env) == []

    approved = muster_env.cli(
        "approve", thread, "--by", "lead", "--digest", digest[:8], timeout=HANG_TIMEOUT_S
    )
    assert approved.returncode == EXIT_OK, approved.stdout + approved.stderr
    assert "approved by lead, EXECUTED" in approved.stdout
    assert run_refunds(muster_env) == [(BIG_ORDER, BIG_CENTS)]
    assert "no pending approval" in refused("--by", "lead", "--reject")
    assert run_refunds(muster_env) == [(BIG_ORDER, BIG_CENTS)]
    decisions = [
        (a, r, res["decision"])
        for e, a, r, res in audit_of(muster_env.checkpoint_db, thread)
        if e == "decision"
    ]
    assert decisions == [("lead", "team_lead", "approved")]
