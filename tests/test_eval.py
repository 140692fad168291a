"""`muster eval`: labelled tickets scored per field with pydantic-evals.

The fast tests build thread states by hand and check what is read from them (planned workers,
cited ids, proposed actions, the status of a paused run), how fields compare, and the tables.
The slow test runs the real CLI on four hand-labelled tickets, one labelled wrong on purpose,
and checks the scores, the miss table, the `--json` file and that the user's stores are
untouched; a second run checks that `--check` exits 1 when a target is missed.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from domains.support import scoring
from domains.support.scoring import LabelledAction, TicketLabels, TicketOutcome, read_outcome
from graph.app.eval_fields import EvalFileError, field_matches, load_eval_tickets, show_field
from graph.app.eval_report import ScoredTicket, print_eval, summarize_eval
from tests.conftest import MusterEnv
from workers.contracts import (
    Answer,
    Finding,
    Handoff,
    ProposedAction,
    Report,
    ResolutionStep,
)

REFUND_12345 = {"tool": "orders.issue_refund", "args": {"order_id": "12345", "amount_cents": 12900}}
DUPLICATE = {
    "intents": ["duplicate_charge"],
    "workers": ["billing", "comms", "policy"],
    "policy_ids": ["POL-BIL-004"],
    "kb_ids": ["KB-201"],
}
NOTHING: dict[str, Any] = {
    "intents": [],
    "workers": [],
    "policy_ids": [],
    "kb_ids": [],
    "actions": [],
    "status": "partial",
    "needs_human": True,
}
TICKETS: list[dict[str, Any]] = [
    {
        "id": "double-12345",
        "request": "Order #12345 was charged twice for the headphones. What happened?",
        "labels": {
            **DUPLICATE,
            "actions": [REFUND_12345],
            "status": "complete",
            "needs_human": True,
        },
    },
    {
        "id": "settled-12333",
        "request": "Order #12333 shows two charges on my card statement. "
        "Was the duplicate put right?",
        "labels": {**DUPLICATE, "actions": [], "status": "complete", "needs_human": False},
    },
    {"id": "hello", "request": "hello", "labels": NOTHING},
    {
        # Labelled wrong on purpose: the policy refunds the duplicated amount, 3299.
        "id": "wrong-12366",
        "request": "I see a double charge on order #12366, can you check it?",
        "labels": {
            **DUPLICATE,
            "actions": [
                {
                    "tool": "orders.issue_refund",
                    "args": {"order_id": "12366", "amount_cents": 99999},
                }
            ],
            "status": "complete",
            "needs_human": True,
        },
    },
]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def finding(tool: str, observation: Any, source: str = "tool") -> Finding:
    text = observation if isinstance(observation, str) else json.dumps(observation)
    return Finding(id="F1", tool=tool, call_id="c", args={}, observation=text, source=source)


def report(packet_id: str, status: str = "ok", **fields: Any) -> Report:
    worker = packet_id.split("-")[0]
    return Report(packet_id=packet_id, worker=worker, objective="o", status=status, **fields)


def test_read_outcome_counts_what_the_planner_and_reports_did() -> None:
    packets = [
        Handoff(id="billing-1", recipient="billing", objective="o"),
        Handoff(id="policy-2", recipient="policy", objective="o"),
        Handoff(id="comms-3", recipient="comms", objective="o"),
        Handoff(id="policy-2-via-escalation", recipient="escalation", objective="o"),
        Handoff(id="comms-3-escalated", recipient="escalation", objective="o"),
        Handoff(id="billing-1", recipient="billing", objective="o", attempt=2),
    ]
    refund = ProposedAction(tool="orders.issue_refund", args=REFUND_12345["args"])
    reports = [
        report("billing-1", proposed_actions=[refund, refund]),
        # A failed report's proposal is not an action Muster proposed.
        report(
            "billing-1",
            status="failed",
            reason="budget",
            proposed_actions=[
                ProposedAction(tool="orders.cancel_order", args={"order_id": "12345"})
            ],
        ),
        report(
            "policy-2",
            findings=[
                finding("policy.check_policy", {"policy_id": "POL-BIL-004", "text": "…"}),
                finding("cache.policy", "POL-REF-001 (snapshot 2025-04-01): refunds…", "fallback"),
            ],
        ),
        report(
            "comms-3",
            findings=[
                finding("kb.get_article", {"id": "KB-201", "title": "t", "body": "b"}),
                finding("kb.search_kb", {"results": [{"id": "KB-202"}, {"id": "KB-104"}]}),
                finding("kb.search_kb", '{"query": "x", "results": [{"id": "KB-109", "body": "cut'),
            ],
        ),
    ]
    answer = Answer(
        text="t",
        status="complete",
        degraded=False,
        needs_human=True,
        resolution=[
            ResolutionStep(intent="duplicate_charge", kind="action", text="refund"),
        ],
    )
    values = {
        "intents": ["duplicate_charge"],
        "packets": packets,
        "reports": reports,
        "answer": answer,
    }
    got = read_outcome(values, thread_id="t", waiting_for=[])
    assert got.workers == ["billing", "comms", "policy"]
    assert got.policy_ids == ["POL-BIL-004", "POL-REF-001"]
    assert got.kb_ids == ["KB-104", "KB-109", "KB-201", "KB-202"]
    assert got.actions == [LabelledAction(**REFUND_12345)]
    assert (got.status, got.needs_human, got.open_intents) == ("complete", True, [])


def test_a_paused_run_is_scored_on_the_answer_it_would_give_and_needs_a_human() -> None:
    packets = [Handoff(id="billing-1", recipient="billing", objective="o")]
    refund = ProposedAction(tool="orders.issue_refund", args=REFUND_12345["args"])
    values = {
        "request": "r",
        "intents": ["duplicate_charge"],
        "packets": packets,
        "reports": [report("billing-1", proposed_actions=[refund])],
    }
    got = read_outcome(values, thread_id="t", waiting_for=["approval"])
    assert got.status in ("complete", "partial")  # compose_answer's preview, not "no answer"
    assert got.needs_human is True
    crashed = read_outcome(values, thread_id="t", waiting_for=[], error="RuntimeError: boom")
    assert (crashed.status, crashed.needs_human) == ("error", None)


def test_fields_compare_as_sets_and_actions_by_tool_and_exact_args() -> None:
    expected = TicketLabels.model_validate(
        {
            **NOTHING,
            "intents": ["a", "b"],
            "actions": [
                {"tool": "orders.issue_refund", "args": {"order_id": "1", "amount_cents": 5}}
            ],
        }
    )
    same = expected.model_copy(
        update={
            "intents": ["b", "a"],
            "actions": [
                LabelledAction(
                    tool="orders.issue_refund", args={"amount_cents": 5, "order_id": "1"}
                )
            ],
        }
    )
    assert field_matches(same, expected, "intents")
    assert field_matches(same, expected, "actions")
    as_text = same.model_copy(
        update={
            "actions": [
                LabelledAction(
                    tool="orders.issue_refund", args={"amount_cents": "5", "order_id": "1"}
                )
            ]
        }
    )
    assert not field_matches(as_text, expected, "actions")
    extra = same.model_copy(
        update={
            "actions": [
                *same.actions,
                LabelledAction(tool="orders.cancel_order", args={"order_id": "1"}),
            ]
        }
    )
    assert not field_matches(extra, expected, "actions")
    assert show_field(expected, "actions") == "orders.issue_refund(amount_cents=5, order_id=1)"
    assert show_field(expected, "needs_human") == "true"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 2: not valid JSON"),
        ('{"id": "a b", "request": "x", "labels": {}}', "line 2: id must be a plain name"),
        ('{"id": "t1", "request": "x", "labels": {}}', "line 2: id 't1' is already used"),
        ('{"id": "t2", "request": "x", "labels": {"intents": []}}', "line 2: labels.workers"),
    ],
)
def test_a_bad_eval_file_names_the_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps({**TICKETS[2], "id": "t1"}) + "\n" + line + "\n")
    with pytest.raises(EvalFileError, match=message):
        load_eval_tickets(path, scoring)


def test_the_tables_count_each_field_and_list_every_miss() -> None:
    labels = TicketLabels.model_validate(NOTHING)
    fields = {**NOTHING, "thread_id": "t", "status": "complete", "needs_human": False}
    got = TicketOutcome.model_validate(fields)
    right = {f: True for f in ("intents", "workers", "policy_ids", "kb_ids", "actions")}
    results = [
        ScoredTicket("a", labels, got, {**right, "status": False, "needs_human": False}, True),
        ScoredTicket(
            "b",
            labels,
            None,
            dict.fromkeys(right, False) | {"status": False, "needs_human": False},
            False,
            "boom",
        ),
    ]
    summary = summarize_eval(results, scoring)
    assert [(s.field, s.right) for s in summary.fields][:2] == [("intents", 1), ("workers", 1)]
    assert summary.complete_while_unaddressed == ["a"] and not summary.targets_met
    out = io.StringIO()
    print_eval(summary, results, out)
    text = out.getvalue()
    assert "intents          1     2    50.0%     90%  NO" in text
    assert "complete while an intent is unaddressed: 1 (target 0: NO): a" in text
    assert "b: boom" in text
    assert "misses: 9 in 2 of 2 tickets" in text
    assert any(
        line.split()[:4] == ["a", "status", "partial", "complete"] for line in text.splitlines()
    )


@pytest.mark.slow  # the muster CLI as a subprocess, with the real servers
@pytest.mark.integration
def test_muster_eval_scores_each_field_and_names_the_misses(muster_env: MusterEnv) -> None:
    dataset = write_jsonl(muster_env.root / "four.jsonl", TICKETS)
    out = muster_env.root / "results.json"
    result = muster_env.cli("eval", str(dataset), "--concurrency", "4", "--json", str(out))
    assert result.returncode == 0, result.stderr  # a missed target fails only with --check
    table = result.stdout.split("\n\n")[1]  # the per-field table, before the measures
    rows = {line.split()[0]: line.split()[1:] for line in table.splitlines() if line}
    for field in ("intents", "workers", "policy_ids", "kb_ids", "status", "needs_human"):
        assert rows[field][:3] == ["4", "4", "100.0%"], result.stdout
    assert rows["actions"] == ["3", "4", "75.0%", "-", "-"]
    assert rows["all"] == ["fields", "3", "4", "75.0%", "-", "-"]
    # The wrong amount is an action the labels do not have: a harmful proposal.
    assert any(
        line.split()[:3] == ["harmful", "proposals", "1"] and line.endswith("NO")
        for line in result.stdout.splitlines()
    ), result.stdout
    assert "complete while an intent is unaddressed: 0 (target 0: yes)" in result.stdout
    assert "misses: 1 in 1 of 4 tickets" in result.stdout
    miss = [line for line in result.stdout.splitlines() if line.startswith("wrong-12366")]
    assert len(miss) == 1 and miss[0].split()[1] == "actions", result.stdout
    assert "amount_cents=99999, order_id=12366" in miss[0]
    assert miss[0].rstrip().endswith("orders.issue_refund(amount_cents=3299, order_id=12366)")
    assert result.stderr.count("/4] ") == 4  # a progress line per ticket
    document = json.loads(out.read_text())
    by_id = {t["id"]: t for t in document["tickets"]}
    assert [t["id"] for t in document["tickets"]] == [t["id"] for t in TICKETS]
    assert by_id["wrong-12366"]["right"]["actions"] is False
    assert by_id["double-12345"]["got"]["waiting_for"] == ["approval"]
    assert document["targets_met"] is False
    # The eval ran on stores of its own: the user's orders and checkpoints are untouched.
    assert not muster_env.orders_db.exists() and not muster_env.checkpoint_db.exists()


@pytest.mark.slow
@pytest.mark.integration
def test_muster_eval_check_exits_1_when_a_target_is_missed(muster_env: MusterEnv) -> None:
    dataset = write_jsonl(muster_env.root / "one.jsonl", [TICKETS[3]])
    result = muster_env.cli("eval", str(dataset), "--check")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "targets: NOT all met" in result.stdout
