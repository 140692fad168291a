"""Recovery routed on reasons, run budgets and the deadline, verification, waves, conflicts,
the sick day and draining on signals. Failures come from the policy server's real failure
modes or from scripted models; nothing is faked inside the graph."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import replace
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.types import Command

from checkpoints.threads import thread_config
from domains.support.rules import plan_ticket
from graph.app.runtime import open_runtime, stream_run
from graph.limits import RunLimits
from graph.synthesize import compose_answer
from graph.verify import find_conflicts, unsupported_claims
from servers.call_log import count_calls
from tests.conftest import (
    DEMO_TICKET,
    HANG_TIMEOUT_S,
    PROJECT_ROOT,
    MusterEnv,
    by_worker,
    calls_so_far,
    run_ticket,
    wait_until,
)
from workers.contracts import Finding, Handoff, Report
from workers.models import scripted_factory
from workers.roster import Roster


def strategies(values: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(r.worker, r.reason, r.strategy) for r in values["recoveries"]]


@pytest.mark.integration
async def test_budget_is_retried_once_with_double_budget(muster_env: MusterEnv) -> None:
    """A worker that ran out of steps while its server answered gets one bigger retry."""

    def one_step(request: str, roster: Roster) -> list[Handoff]:
        # One step: the policy call answers, and no step is left to write the answer.
        return [
            p.model_copy(update={"max_steps": 1}) if p.recipient == "policy" else p
            for p in plan_ticket(request, roster)
        ]

    values, _ = await run_ticket(muster_env, planner=one_step)
    assert strategies(values) == [("policy", "budget", "retry")]
    retry = [p for p in values["packets"] if p.recipient == "policy" and p.attempt == 2][0]
    assert retry.max_steps == 2  # double the packet's 1
    policy = by_worker(values["reports"])["policy"]
    assert [(r.attempt, r.status, r.reason) for r in policy] == [
        (1, "failed", "budget"), (2, "ok", None)
    ]  # fmt: skip
    assert [c.outcome for c in policy[0].tool_calls] == ["ok"]
    assert "retried policy once with double the budget" in values["answer"].text


@pytest.mark.integration
async def test_a_broken_server_is_retried_at_one_layer_and_never_by_recovery(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The policy server fails every call ("policy-db connection refused"), its breaker out
    of the way so every ticket reaches it: per ticket the server's own log shows the call
    and the worker's one re-call (the offline model's), and nothing from recovery, which
    goes straight to the cached snapshot. Before, the worker's spent steps were reported
    `budget` and recovery retried the packet with double the steps: 4 calls a ticket."""
    monkeypatch.setenv("MUSTER_POLICY_MODE", "broken")
    monkeypatch.setenv("MUSTER_BREAKER_FAILURES", "1000000")
    tickets = 3
    for done in range(1, tickets + 1):
        values, _ = await run_ticket(muster_env)
        assert strategies(values) == [("policy", "tool_error", "fallback")]
        assert [p.attempt for p in values["packets"] if p.recipient == "policy"] == [1]
        (failed, substitute) = by_worker(values["reports"])["policy"]
        assert (failed.reason, [c.outcome for c in failed.tool_calls]) == (
            "tool_error", ["tool_error", "tool_error"]
        )  # fmt: skip
        assert substitute.fallback
        assert count_calls(muster_env.call_log, server="policy") == 2 * done


@pytest.mark.integration
async def test_tool_error_without_fallback_is_reassigned_to_a_capable_worker(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSTER_POLICY_MODE", "broken")

    def warranty(request: str, roster: Roster) -> list[Handoff]:
        # No cached snapshot covers "warranty", so recovery must find another worker.
        return [
            p.model_copy(update={"inputs": {"topic": "warranty"}, "max_steps": 3})
            for p in plan_ticket(request, roster)
            if p.recipient == "policy"
        ]

    values, _ = await run_ticket(muster_env, "What is the refund policy?", planner=warranty)
    assert strategies(values) == [("policy", "tool_error", "reassign")]
    stand_in = by_worker(values["reports"])["comms"][0]
    assert stand_in.packet_id.endswith("-via-comms") and stand_in.status == "ok"
    assert count_calls(muster_env.call_log, server="kb", tool="search_kb") == 1
    assert values["answer"].degraded and "reassigned to comms" in values["answer"].text


@pytest.mark.integration
async def test_timeout_without_fallback_escalates(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSTER_POLICY_MODE", "hang")

    def warranty(request: str, roster: Roster) -> list[Handoff]:
        return [
            p.model_copy(update={"inputs": {"topic": "warranty"}, "timeout_s": 0.8})
            for p in plan_ticket(request, roster)
            if p.recipient == "policy"
        ]

    values, _ = await run_ticket(muster_env, "What is the refund policy?", planner=warranty)
    assert strategies(values) == [("policy", "timeout", "escalate")]
    escalation = by_worker(values["reports"])["escalation"][0]
    assert "failed_worker=policy" in escalation.note and "timeout" in escalation.note
    assert values["answer"].needs_human


@pytest.mark.integration
async def test_refused_task_escalates_with_a_hand_off(muster_env: MusterEnv) -> None:
    decline = AIMessage(
        content="",
        tool_calls=[{"name": "decline_task", "args": {"reason": "needs legal"}, "id": "d"}],
    )
    values, _ = await run_ticket(muster_env, models=scripted_factory({"comms": [decline]}))
    comms = by_worker(values["reports"])["comms"][0]
    assert (comms.status, comms.reason, comms.note) == ("failed", "refused", "needs legal")
    assert ("comms", "refused", "escalate") in strategies(values)
    assert values["answer"].needs_human and values["answer"].status == "partial"


@pytest.mark.integration
async def test_ambiguous_ticket_asks_a_human_and_resumes_the_same_thread(
    muster_env: MusterEnv,
) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        await stream_run(runtime, thread, {"request": "I was charged twice for my order"})
        snapshot = await runtime.graph.aget_state(thread_config(thread))
        [pending] = snapshot.interrupts
        assert pending.value["kind"] == "clarification"
        assert "order_id" in pending.value["question"]
        values = await stream_run(
            runtime, thread, Command(resume={pending.id: "It is order #12333"})
        )
    billing = by_worker(values["reports"])["billing"]
    assert [(r.status, r.reason) for r in billing] == [("failed", "ambiguous"), ("ok", None)]
    assert [f.tool for f in billing[1].findings] == ["orders.find_order", "orders.refund_status"]
    assert ("billing", "ambiguous", "clarify") in strategies(values)
    assert "It is order #12333" in values["answer"].text


@pytest.mark.integration
async def test_step_budget_stops_new_work_and_the_answer_is_partial(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSTER_POLICY_MODE", "broken")
    values, _ = await run_ticket(muster_env, limits=RunLimits(max_steps=5))
    assert values["stop_reason"].startswith("step budget")
    # The budget retry (more worker steps) never starts; the cached policy, which costs no
    # step, still stands in for the failed worker.
    assert strategies(values) == [("policy", "tool_error", "fallback")]
    assert [p.attempt for p in values["packets"]] == [1, 1, 1]
    policy = by_worker(values["reports"])["policy"]
    assert [(r.status, r.fallback) for r in policy] == [("failed", False), ("ok", True)]
    answer = values["answer"]
    assert answer.status == "partial" and answer.stop_reason == values["stop_reason"]
    assert answer.degraded
    assert "DEGRADED: policy failed (tool_error); replaced by the cached policy snapshot" in (
        answer.text
    )


@pytest.mark.integration
async def test_token_budget_stops_new_work(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSTER_POLICY_MODE", "broken")
    values, _ = await run_ticket(muster_env, limits=RunLimits(max_tokens=50))
    assert values["stop_reason"].startswith("token budget")
    assert values["answer"].status == "partial"
    assert sum(r.tokens for r in values["reports"]) >= 50


@pytest.mark.integration
async def test_a_budget_that_fires_after_all_work_ran_leaves_the_answer_whole(
    muster_env: MusterEnv,
) -> None:
    # One wave of three packets uses far more than one token: the budget fires at the
    # barrier after the last packet ran, so nothing was cut short.
    values, _ = await run_ticket(muster_env, limits=RunLimits(max_tokens=1))
    assert values["stop_reason"].startswith("token budget")
    answer = values["answer"]
    assert (answer.status, answer.degraded) == ("complete", False), answer.text
    assert "stopped early" not in answer.text


@pytest.mark.integration
async def test_deadline_cancels_work_in_flight_and_stops(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSTER_POLICY_MODE", "slow")
    monkeypatch.setenv("MUSTER_POLICY_SLOW_S", "600")  # never answers within the test
    thread = f"t-{uuid.uuid4().hex[:8]}"
    # Every server started up front, and the deadline starts once they are up, so starting
    # them cannot use it up (on demand, a loaded machine could spend it starting orders).
    async with open_runtime(db=muster_env.checkpoint_db, servers_on_demand=False) as runtime:
        limits = RunLimits(deadline_at=time.time() + 3.0)
        services = replace(runtime.for_thread(thread), limits=limits)
        started = time.monotonic()
        values = await stream_run(runtime, thread, {"request": DEMO_TICKET}, services=services)
        elapsed = time.monotonic() - started
    policy = by_worker(values["reports"])["policy"][0]
    assert (policy.status, policy.reason) == ("failed", "timeout")
    assert policy.note is not None and policy.note.endswith(": the run's deadline passed first")
    assert re.fullmatch(r"stopped after \d+\.\ds: .*", policy.note), policy.note  # rounded
    assert values["stop_reason"].startswith("deadline")
    assert values["answer"].status == "partial"
    assert elapsed < 8, "the slow call must be cut at the deadline, not awaited"


@pytest.mark.integration
async def test_waves_release_dependents_after_prerequisites_with_their_findings(
    muster_env: MusterEnv,
) -> None:
    def waves(request: str, roster: Roster) -> list[Handoff]:
        packets = plan_ticket(request, roster)
        billing = next(p for p in packets if p.recipient == "billing")
        return [
            p.model_copy(update={"depends_on": (billing.id,)}) if p.recipient == "comms" else p
            for p in reversed(packets)
        ]

    read = AIMessage(  # a worker given tools must use one (workers/loop.py)
        content="",
        tool_calls=[{"name": "kb.get_article", "args": {"article_id": "KB-201"}, "id": "c1"}],
    )
    models = scripted_factory({"comms": [read, "KB-201 applies."]})
    values, _ = await run_ticket(muster_env, planner=waves, models=models)
    trace = [
        json.loads(line)
        for path in muster_env.trace_dir.glob("*.jsonl")
        for line in path.read_text().splitlines()
    ]
    step = {
        e["worker"]: e["superstep"]
        for e in trace
        if e["event"] == "node" and e.get("node") == "dispatch"
    }
    assert step["comms"] > step["billing"]
    order = [p.id for p in values["packets"]]
    assert order.index("billing-1") < order.index("comms-3")
    # The dependent received its prerequisite's findings in its inputs, and nothing else:
    # not the request, not its siblings' reports.
    seen = "\n".join(models("comms").seen)  # type: ignore[attr-defined]
    assert '"billing-1.F1": "orders.find_order:' in seen
    assert "billing-1.F2" in seen and "POL-BIL" not in seen  # no sibling's findings
    assert DEMO_TICKET not in seen
    assert values["answer"].status == "complete"


def report(worker: str, note: str, findings: list[Finding], fallback: bool = False) -> Report:
    return Report(
        packet_id=f"{worker}-1",
        worker=worker,
        objective="Check the order.",
        status="ok",
        findings=findings,
        note=note,
        fallback=fallback,
        tool_calls=[]
        if fallback
        else [
            {"id": f.call_id, "tool": f.tool, "args": f.args, "outcome": "ok", "duration_ms": 1}
            for f in findings
        ],
    )


ORDER = Finding(
    id="F1",
    tool="orders.find_order",
    call_id="c1",
    args={"order_id": "12345"},
    observation=json.dumps(
        {
            "order_id": "12345",
            "amount": "$129.00",
            "amount_cents": 12900,
            "placed_at": "2025-03-14",
            "status": "delivered",
        }
    ),
)


def test_verify_flags_numbers_that_no_cited_observation_supports() -> None:
    honest = report("billing", "Order 12345 cost $129.00, placed 2025-03-14 [F1].", [ORDER])
    assert unsupported_claims(honest) == []
    invented = report("billing", "Order 12345 was refunded $500.00 on 2026-01-01 [F1].", [ORDER])
    [problem] = unsupported_claims(invented)
    assert (
        "$500.00" in problem and "2026-01-01" in problem and "12345" not in problem.split(" in ")[0]
    )
    uncited = report("billing", "Order 99999 is fine.", [ORDER])
    assert "cites no finding" in unsupported_claims(uncited)[0]
    # Parts of a true number are not support: 1234 is not 12345, $29.00 is not $129.00.
    for claim in ("Order 1234 [F1].", "Order 2345 [F1].", "We refunded $29.00 [F1].", "$1.29 [F1]"):
        assert unsupported_claims(report("billing", claim, [ORDER])), claim
    assert unsupported_claims(report("billing", "Refund of $129.00 [F1].", [ORDER])) == []
    # Facts stated without using any tool are checked too (unless the packet had no tools).
    blind = report("billing", "Order 12345 was refunded on 2026-01-01.", [])
    assert unsupported_claims(blind) and unsupported_claims(blind, had_tools=False) == []


@pytest.mark.integration
async def test_unsupported_claim_reaches_the_answer_as_unverified(muster_env: MusterEnv) -> None:
    lookup = AIMessage(
        content="",
        tool_calls=[{"name": "orders.find_order", "args": {"order_id": "12345"}, "id": "c1"}],
    )
    models = scripted_factory(
        {"billing": [lookup, "Order 12345 was refunded $500.00 on 2026-01-01 [F1]."]}
    )
    values, _ = await run_ticket(muster_env, models=models)
    assert any("$500.00" in line for line in values["unverified"])
    answer = values["answer"]
    assert answer.degraded and any(
        r.startswith("unverified claim") for r in answer.degraded_reasons
    )


def test_conflicting_facts_are_ruled_on_and_recorded() -> None:
    live = report("billing", "", [ORDER])
    stale = Finding(
        id="F1",
        tool="cache.billing",
        call_id="fallback",
        args={},
        observation=json.dumps({"order_id": "12345", "status": "shipped"}),
        source="fallback",
    )
    cached = report("escalation", "", [stale], fallback=True)
    # Two tools' `status` fields are different facts, not a conflict.
    refund = Finding(
        id="F2",
        tool="orders.refund_status",
        call_id="c2",
        args={"order_id": "12345"},
        observation=json.dumps({"order_id": "12345", "status": "no refund"}),
    )
    assert find_conflicts([live, report("comms", "", [refund])]) == []
    [conflict] = find_conflicts([cached, live])
    assert "billing says 'delivered'" in conflict and "escalation says 'shipped'" in conflict
    assert "ruled 'delivered' (live observation over fallback)" in conflict
    state: dict[str, Any] = {
        "request": "r",
        "packets": [],
        "reports": [live, cached],
        "conflicts": [conflict],
    }
    answer = compose_answer(state)  # type: ignore[arg-type]
    assert answer.degraded and any("conflicting facts" in r for r in answer.degraded_reasons)


@pytest.mark.slow
@pytest.mark.integration
def test_sick_day_scenario_loops_escalates_and_keeps_the_rest(muster_env: MusterEnv) -> None:
    result = muster_env.cli("run", "--scenario", "sick-day", "--json")
    assert result.returncode == 3, result.stderr
    payload = json.loads(result.stdout)
    reports = {(r["worker"], r["status"], r["reason"]) for r in payload["reports"]}
    assert ("billing", "failed", "loop") in reports
    assert ("policy", "ok", None) in reports and ("comms", "ok", None) in reports
    assert any(
        r["strategy"] == "escalate" and r["worker"] == "billing" for r in payload["recoveries"]
    )
    hand_off = [r for r in payload["reports"] if r["packet_id"] == "billing-1-escalated"][0]
    assert "loop guard" in hand_off["note"] and "order_id=12345" in hand_off["note"]
    assert payload["answer"]["needs_human"] is True
    assert "KB-201" in payload["answer"]["text"]  # the other workers' results still arrive


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.slow
@pytest.mark.integration
def test_signal_drains_checkpoints_and_resume_completes(
    muster_env: MusterEnv, signum: signal.Signals
) -> None:
    thread = f"drain-{signum.name.lower()}"
    env = {**os.environ, "MUSTER_POLICY_MODE": "slow", "MUSTER_POLICY_SLOW_S": "2"}
    process = subprocess.Popen(
        [sys.executable, "-m", "graph.app.cli", "run", DEMO_TICKET, "--thread", thread],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    trace = muster_env.trace_dir / f"{thread}.jsonl"
    try:
        # Signal while the workers run and policy's slow call is in flight.
        wait_until(
            lambda: (
                trace.exists()
                and '"worker": "billing"' in trace.read_text()
                and calls_so_far(muster_env.call_log, server="policy") > 0
            ),
            "the workers running and the policy call in flight",
            proc=process,
        )
        process.send_signal(signum)
        out, err = process.communicate(timeout=HANG_TIMEOUT_S)
    finally:
        if process.poll() is None:  # the test failed before the drain: do not leave it behind
            process.kill()
            process.communicate()
    assert process.returncode == 6, err
    assert f"muster resume {thread}" in err
    # The in-flight superstep finished (policy's slow call included) and nothing new started.
    assert count_calls(muster_env.call_log, server="policy") == 1

    resumed = muster_env.cli("resume", thread, "--json")
    assert resumed.returncode == 0, resumed.stderr
    payload = json.loads(resumed.stdout)
    assert payload["answer"]["status"] == "complete"
    assert sorted(r["worker"] for r in payload["reports"]) == ["billing", "comms", "policy"]
    assert count_calls(muster_env.call_log, server="orders", tool="find_order") == 1


@pytest.mark.integration
async def test_shared_order_record_is_resolved_once_in_plan_for_every_packet_needing_it(
    muster_env: MusterEnv,
) -> None:
    values, _ = await run_ticket(muster_env)
    packets = {p.recipient: p for p in values["packets"]}
    facts = {worker: [f.call_id for f in p.facts] for worker, p in packets.items()}
    # Billing and policy need the order record (roster `needs`); comms does not.
    assert facts == {"billing": ["shared-12333"], "policy": ["shared-12333"], "comms": []}
    assert packets["billing"].facts == packets["policy"].facts
    assert any("resolved order_record 12333 once" in note for note in values["plan_notes"])
    # Fetched once, by the plan; billing did not fetch it again but cites it as evidence.
    assert count_calls(muster_env.call_log, server="orders", tool="find_order") == 1
    billing = by_worker(values["reports"])["billing"][0]
    assert [c.tool for c in billing.tool_calls] == ["orders.refund_status"]
    assert [f.tool for f in billing.findings] == ["orders.find_order", "orders.refund_status"]
    assert values["unverified"] == [] and values["answer"].status == "complete"


@pytest.mark.slow
@pytest.mark.integration
def test_cli_run_limits_stop_new_work(muster_env: MusterEnv) -> None:
    result = muster_env.cli(
        "run", DEMO_TICKET, "--max-steps", "5", "--json", extra_env={"MUSTER_POLICY_MODE": "broken"}
    )
    assert result.returncode == 3, result.stderr
    answer = json.loads(result.stdout)["answer"]
    assert answer["status"] == "partial"
    assert answer["stop_reason"].startswith("step budget: 6 of 5")
    bad = muster_env.cli("run", DEMO_TICKET, "--max-steps", "0")
    assert bad.returncode == 2 and "must be at least 1" in bad.stderr
