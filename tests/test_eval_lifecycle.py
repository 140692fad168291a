"""`muster eval --lifecycle` (issue 24 item 6): a labelled case says how its stops are answered;
the eval drives the thread to its end through `Command(resume=...)`, as `muster approve` and
`muster clarify` do, and scores the final answer and the servers' final data.

The fast tests score hand-built table readings (an update in place, a write nobody labelled)
and check the case file's validation. The integration tests drive real cases on real stdio MCP
servers, each case over fresh databases, and read the rows back from those databases
directly; one case is labelled wrong on purpose and must score as a miss, and `muster eval
--lifecycle --check` exits 1 on a file whose only case is labelled wrong.
"""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from graph.app.eval_lifecycle import print_lifecycle, run_case
from graph.app.eval_lifecycle_cases import (
    FinalLabels,
    LifecycleCase,
    LifecycleResult,
    load_lifecycle_cases,
)
from graph.app.eval_lifecycle_score import score_data
from graph.app.options import MusterOptions
from graph.domains import load_domain
from tests.conftest import MusterEnv
from workers.errors import ConfigError

REFUND = "orders.issue_refund"
CANCEL = "orders.cancel_order"
SUPPORT_CASES = Path(__file__).resolve().parents[1] / "domains/support/lifecycle/cases.jsonl"
INCIDENT_CASES = Path(__file__).resolve().parents[1] / "domains/incidents/lifecycle/cases.jsonl"


def _case(case_id: str, path: Path = SUPPORT_CASES) -> LifecycleCase:
    return next(c for c in load_lifecycle_cases(path) if c.id == case_id)


# --- fast: scoring the data -------------------------------------------------------------------

BEFORE = {
    "DB": {
        "orders": [{"order_id": "12324", "status": "processing"}],
        "refunds": [{"order_id": "12326", "amount_cents": 2500}],
    }
}


def test_an_update_in_place_and_an_added_row_match_their_labels() -> None:
    after = {
        "DB": {
            "orders": [{"order_id": "12324", "status": "cancelled"}],
            "refunds": BEFORE["DB"]["refunds"],
            "cancellations": [{"order_id": "12324", "cancel_id": "ca_1"}],
        }
    }
    labels = {
        "orders": [{"order_id": "12324", "status": "cancelled"}],
        "cancellations": [{"order_id": "12324"}],
    }
    right, _, got = score_data(BEFORE, after, labels)
    assert right, got
    # The seed refund is no write of the thread's: it is never counted.
    assert "12326" not in got


def test_a_write_nobody_labelled_or_a_wrong_amount_is_a_miss() -> None:
    after = {
        "DB": {
            "orders": BEFORE["DB"]["orders"],
            "refunds": [*BEFORE["DB"]["refunds"], {"order_id": "12345", "amount_cents": 12900}],
        }
    }
    assert not score_data(BEFORE, after, {})[0]  # nothing labelled, a refund written
    wrong = {"refunds": [{"order_id": "12345", "amount_cents": 1290}]}
    assert not score_data(BEFORE, after, wrong)[0]
    assert score_data(BEFORE, after, {"refunds": [{"order_id": "12345", "amount_cents": 12900}]})[0]
    assert not score_data(BEFORE, BEFORE, wrong)[0]  # labelled, never written


def test_a_bad_case_line_names_the_file_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(
        json.dumps(
            {
                "id": "x",
                "request": "Order #12345 was charged twice.",
                "answers": {"approvals": [{"tool": REFUND, "decision": "maybe"}]},
                "final": {"status": "complete", "needs_human": False},
            }
        )
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"cases.jsonl line 1: answers.approvals.0.decision"):
        load_lifecycle_cases(path)


def test_both_packs_cases_cover_every_action_kind_both_ways() -> None:
    decided = {
        (d.tool, d.decision)
        for path in (SUPPORT_CASES, INCIDENT_CASES)
        for case in load_lifecycle_cases(path)
        for d in case.answers.approvals
    }
    for tool in (REFUND, CANCEL, "deploys.rollback"):
        assert {(tool, "approve"), (tool, "reject")} <= decided
    assert any(c.answers.clarifications for c in load_lifecycle_cases(SUPPORT_CASES))


# --- integration: real threads, real servers, the rows read back -----------------------------


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


async def _run(
    cases: list[LifecycleCase], root: Path, *, domain: str | None = None
) -> list[LifecycleResult]:
    pack = load_domain(domain)
    options = MusterOptions.resolve(
        db=root / "unused.sqlite",
        servers=pack.servers_file,
        roster=pack.roster,
        planner=pack.planner,
    )
    from graph.app.eval_lifecycle import eval_databases

    databases = eval_databases(pack)
    return list(
        await asyncio.gather(
            *(run_case(case, options, databases, root / case.id) for case in cases)
        )
    )


@pytest.mark.integration
async def test_support_threads_are_driven_to_their_end_and_their_rows_scored(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSTER_TODAY", "2025-04-24")
    wrong = _case("lc-dup-reject")
    # Labelled wrong on purpose: a rejected refund labelled as written.
    wrong = LifecycleCase(
        "lc-wrong",
        wrong.request,
        wrong.answers,
        FinalLabels(
            status="complete",
            needs_human=False,
            data={"refunds": [{"order_id": "12345", "amount_cents": 12900}]},
        ),
    )
    cases = [_case("lc-dup-clarify"), _case("lc-cancel-one-of-two"), wrong]
    clarify, cancel, miss = await _run(cases, muster_env.root)

    assert clarify.drive.stops == [
        "clarify 'It is order #12345'",
        f"approve {REFUND}(amount_cents=12900, expected_refunded_cents=0, order_id=12345)",
    ]
    assert all(ok for ok, _, _ in clarify.fields.values()), clarify.fields
    orders_db = muster_env.root / "lc-dup-clarify" / "muster_orders_db.sqlite"
    assert rows(
        orders_db,
        "SELECT order_id, amount_cents FROM refunds WHERE idempotency_key NOT LIKE 'seed-%'",
    ) == [("12345", 12900)]

    assert all(ok for ok, _, _ in cancel.fields.values()), cancel.fields
    orders_db = muster_env.root / "lc-cancel-one-of-two" / "muster_orders_db.sqlite"
    assert rows(orders_db, "SELECT order_id FROM cancellations") == [("12364",)]
    assert rows(
        orders_db, "SELECT order_id, status FROM orders WHERE order_id IN ('12364', '12374')"
    ) == [("12364", "cancelled"), ("12374", "processing")]
    assert cancel.answer is not None
    approvals = {s.args["order_id"]: s.approval for s in cancel.answer.resolution if s.tool}
    assert approvals == {"12364": "executed (approved by lead)", "12374": "rejected by lead"}

    # The wrongly labelled case: the thread ran as labelled (stops and answer right), but its
    # data is not what the label says, so its final state is a miss.
    assert miss.fields["stops"][0] and miss.fields["answer"][0]
    assert not miss.fields["data"][0] and not miss.fields["final_state"][0]
    assert rows(
        muster_env.root / "lc-wrong" / "muster_orders_db.sqlite",
        "SELECT COUNT(*) FROM refunds WHERE idempotency_key NOT LIKE 'seed-%'",
    ) == [(0,)]
    out = io.StringIO()
    print_lifecycle([clarify, cancel, miss], out)
    assert "final_state      2     3    66.7%     95%  NO" in out.getvalue()
    assert "lc-wrong   data" in out.getvalue()


@pytest.mark.integration
async def test_an_approved_rollback_is_one_row_in_the_deploys_data(muster_env: MusterEnv) -> None:
    (result,) = await _run(
        [_case("lc-inc24-approve", INCIDENT_CASES)], muster_env.root, domain="incidents"
    )
    assert all(ok for ok, _, _ in result.fields.values()), result.fields
    deploys = muster_env.root / "lc-inc24-approve" / "muster_deploys_db.sqlite"
    assert rows(deploys, "SELECT change_id FROM rollbacks") == [("dep-checkout-20250612-1402",)]


async def test_check_exits_1_when_the_final_state_misses_its_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI's wiring: `--lifecycle` reads the file, runs each case and, with `--check`,
    exits 1 below the target (the cases' real runs are the tests above)."""
    import graph.app.eval_lifecycle as lifecycle
    from graph.app.cli import build_parser
    from graph.app.eval import cmd_eval
    from graph.app.eval_lifecycle_cases import Drive

    ran: list[str] = []

    async def scored_wrong(case: LifecycleCase, *_: Any) -> LifecycleResult:
        ran.append(case.id)
        fields = {
            name: (name != "data" and name != "final_state", "x", "y") for name in lifecycle.FIELDS
        }
        return LifecycleResult(case.id, fields, Drive(finished=True))

    monkeypatch.setattr(lifecycle, "run_case", scored_wrong)
    path = tmp_path / "cases.jsonl"
    path.write_text(SUPPORT_CASES.read_text(encoding="utf-8").splitlines()[0] + "\n")
    args = build_parser().parse_args(["eval", "--lifecycle", str(path), "--check"])
    assert await cmd_eval(args) == 1
    assert ran == ["lc-dup-approve"]
    assert "final_state      0     1     0.0%     95%  NO" in capsys.readouterr().out
