"""The supervisor graph end to end: real stdio servers, a SQLite checkpoint file, and the
offline (or scripted) model. Assertions read typed statuses, reasons and the servers' own
call logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage

from domains.support.rules import plan_ticket
from servers.call_log import count_calls
from tests.conftest import DEMO_TICKET, MusterEnv, by_worker, run_ticket
from workers.contracts import Handoff
from workers.models import offline_factory, scripted_factory
from workers.roster import Roster


@pytest.mark.integration
async def test_demo_with_broken_policy_is_degraded_and_names_the_fallback(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSTER_POLICY_MODE", "broken")
    values, belts = await run_ticket(muster_env)
    reports = by_worker(values["reports"])

    billing = reports["billing"][0]
    assert billing.status == "ok"
    assert [f.tool for f in billing.findings] == ["orders.find_order", "orders.refund_status"]
    assert "L. Moreau" in billing.findings[0].observation

    policy = reports["policy"][0]
    assert (policy.status, policy.reason) == ("failed", "tool_error")
    assert [c.outcome for c in policy.tool_calls] == ["tool_error", "tool_error"]
    assert count_calls(muster_env.call_log, server="policy") >= 2

    comms = reports["comms"][0]
    assert comms.status == "ok" and [f.tool for f in comms.findings] == ["kb.get_article"]

    strategies = [(r.worker, r.strategy) for r in values["recoveries"]]
    assert ("policy", "fallback") in strategies
    substitute = reports["policy"][-1]
    assert substitute.fallback and substitute.findings[0].source == "fallback"

    answer = values["answer"]
    assert answer.degraded and answer.status == "partial"
    assert "DEGRADED" in answer.text and "policy" in answer.text
    assert any("cached policy snapshot" in reason for reason in answer.degraded_reasons)

    # Least privilege: no two workers share a tool, and nobody sees the refund write.
    all_tools = [tool for tools in belts.values() for tool in tools]
    assert len(all_tools) == len(set(all_tools))
    assert "orders.issue_refund" not in all_tools
    assert belts["billing"] == ["orders.find_order", "orders.refund_status"]


@pytest.mark.integration
async def test_demo_with_healthy_policy_is_complete(muster_env: MusterEnv) -> None:
    values, _ = await run_ticket(muster_env)
    answer = values["answer"]
    assert (answer.status, answer.degraded, answer.degraded_reasons) == ("complete", False, [])
    assert {r.worker: r.status for r in values["reports"]} == {
        "billing": "ok",
        "policy": "ok",
        "comms": "ok",
    }
    assert values["recoveries"] == []
    # Each finished worker called each of its tools exactly once.
    assert count_calls(muster_env.call_log, server="orders", tool="find_order") == 1
    assert count_calls(muster_env.call_log, server="kb", tool="get_article") == 1


@pytest.mark.integration
async def test_tool_not_offered_is_refused_before_any_mcp_call(muster_env: MusterEnv) -> None:
    sneaky = AIMessage(
        content="",
        tool_calls=[{"name": "kb.search_kb", "args": {"query": "refund"}, "id": "c1"}],
    )
    models = scripted_factory({"billing": [sneaky, "done without kb"]})

    def billing_only(request: str, roster: Roster) -> list[Handoff]:
        return [p for p in plan_ticket(request, roster) if p.recipient == "billing"]

    values, _ = await run_ticket(muster_env, models=models, planner=billing_only)
    report = values["reports"][0]
    assert [c.outcome for c in report.tool_calls] == ["not_allowed"]
    assert count_calls(muster_env.call_log, server="kb") == 0
    assert report.steps_used == 2  # the worker carried on after the refusal
    assert report.note == "done without kb"


@pytest.mark.integration
async def test_exception_in_one_branch_keeps_siblings_and_reruns_only_that_branch(
    muster_env: MusterEnv,
) -> None:
    # Building comms' model raises once (a bug outside the worker loop's own guard); its
    # siblings must not be cancelled or re-run, and only comms runs again.
    offline = offline_factory()
    crashes = {"comms": 1}

    def models(worker: str) -> BaseChatModel:
        if crashes.get(worker, 0) > 0:
            crashes[worker] -= 1
            raise RuntimeError(f"model factory bug for {worker}")
        return offline(worker)

    values, _ = await run_ticket(muster_env, models=models)
    comms = by_worker(values["reports"])["comms"]
    assert [(r.status, r.reason, r.attempt) for r in comms] == [
        ("failed", "crashed", 1),
        ("ok", None, 2),
    ]
    assert "RuntimeError" in comms[0].note
    assert {r.worker for r in values["reports"] if r.status == "ok"} >= {"billing", "policy"}
    # Siblings ran once: their server-side call counts did not double.
    assert count_calls(muster_env.call_log, server="orders", tool="find_order") == 1
    assert count_calls(muster_env.call_log, server="policy", tool="check_policy") == 1
    assert count_calls(muster_env.call_log, server="kb", tool="get_article") == 1
    assert [r.strategy for r in values["recoveries"]] == ["retry"]
    assert values["answer"].status == "complete"


@pytest.mark.integration
async def test_send_timeout_turns_a_hanging_backend_into_a_timeout_report(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSTER_POLICY_MODE", "hang")

    def quick(request: str, roster: Roster) -> list[Handoff]:
        return [
            p.model_copy(update={"timeout_s": 1.0}) if p.recipient == "policy" else p
            for p in plan_ticket(request, roster)
        ]

    values, _ = await run_ticket(muster_env, planner=quick)
    policy = by_worker(values["reports"])["policy"]
    assert (policy[0].status, policy[0].reason) == ("failed", "timeout")
    assert policy[0].note == "stopped after 1.0s: its 1s packet timeout"
    assert policy[-1].fallback  # timeout → cached fallback
    assert by_worker(values["reports"])["billing"][0].status == "ok"
    assert values["answer"].degraded


@pytest.mark.integration
async def test_crashing_backend_is_unavailable(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSTER_POLICY_MODE", "crash")
    values, _ = await run_ticket(muster_env)
    first = by_worker(values["reports"])["policy"][0]
    assert (first.status, first.reason) == ("failed", "unavailable")
    assert all(c.outcome == "unavailable" for c in first.tool_calls)
    assert by_worker(values["reports"])["comms"][0].status == "ok"


@pytest.mark.integration
async def test_same_call_a_third_time_is_a_loop(muster_env: MusterEnv) -> None:
    again = AIMessage(
        content="",
        tool_calls=[{"name": "orders.find_order", "args": {"order_id": "12345"}, "id": "x"}],
    )
    models = scripted_factory({"billing": [again] * 5})

    def generous(request: str, roster: Roster) -> list[Handoff]:
        return [p.model_copy(update={"max_steps": 6}) for p in plan_ticket(request, roster)]

    values, _ = await run_ticket(muster_env, models=models, planner=generous)
    billing = by_worker(values["reports"])["billing"][0]
    assert (billing.status, billing.reason) == ("failed", "loop")
    # The plan's shared lookup of the order, then billing's two before the guard fired.
    assert count_calls(muster_env.call_log, server="orders", tool="find_order") == 3
    assert ("billing", "escalate") in [(r.worker, r.strategy) for r in values["recoveries"]]
    assert values["answer"].needs_human


@pytest.mark.slow
@pytest.mark.integration
def test_cli_demo_run_json_strict_msgpack_and_no_unregistered_warnings(
    muster_env: MusterEnv,
) -> None:
    result = muster_env.cli(
        "run",
        DEMO_TICKET,
        "--json",
        extra_env={"MUSTER_POLICY_MODE": "broken", "LANGGRAPH_STRICT_MSGPACK": "true"},
    )
    assert result.returncode == 3, result.stderr  # 3: degraded answer
    assert "unregistered type" not in result.stderr
    payload = json.loads(result.stdout)
    assert payload["answer"]["degraded"] is True
    workers = {(r["worker"], r["status"], r["reason"]) for r in payload["reports"]}
    assert ("policy", "failed", "tool_error") in workers
    thread = payload["thread_id"]
    trace = [
        json.loads(line)
        for line in (muster_env.trace_dir / f"{thread}.jsonl").read_text().splitlines()
    ]
    step_events = [e for e in trace if e["event"] == "worker_step" and e.get("tool")]
    assert {e["tool"] for e in step_events} >= {"orders.refund_status", "kb.get_article"}
    assert all(
        {"thread_id", "run_id", "superstep", "worker", "packet", "outcome", "duration_ms"} <= set(e)
        for e in step_events
    )

    shown = muster_env.cli("show", thread, extra_env={"LANGGRAPH_STRICT_MSGPACK": "true"})
    assert shown.returncode == 0, shown.stderr
    assert "orders.find_order" in shown.stdout and "fallback" in shown.stdout
    threads = muster_env.cli("threads")
    assert thread in threads.stdout and "done" in threads.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["resume", "no-such-thread"], "does not exist"),
        (["run", "hi", "--model", "nonsense"], "unknown model"),
        (["run", "hi", "--servers", "{servers}"], "servers"),
        (["threads", "--db", "{garbage}"], "not a SQLite file"),
        (["run", "hi", "--thread", "../escaped/x"], "--thread"),
        (["run", "hi", "--model", "offline:nan"], "unknown model"),
    ],
)
@pytest.mark.slow
def test_cli_bad_input_is_one_line_and_exit_2(
    muster_env: MusterEnv, args: list[str], message: str
) -> None:
    (muster_env.root / "servers.json").write_text("{not json")
    (muster_env.root / "garbage.sqlite").write_text("definitely not sqlite")
    filled = [
        a.format(
            servers=muster_env.root / "servers.json", garbage=muster_env.root / "garbage.sqlite"
        )
        for a in args
    ]
    result = muster_env.cli(*filled)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_muster_help_lists_commands_and_exit_codes() -> None:
    from graph.app.cli import build_parser

    text = build_parser().format_help()
    for word in ("run", "resume", "threads", "show", "Exit codes"):
        assert word in text


def test_studio_graph_compiles_without_checkpointer_and_matches_snapshot() -> None:
    from graph.app.studio import graph

    assert graph.checkpointer is None
    snapshot = Path(__file__).parent / "snapshots" / "graph.mmd"
    drawing = graph.get_graph().draw_mermaid()
    assert drawing == snapshot.read_text(), "graph changed: update tests/snapshots/graph.mmd"
