"""The incidents domain end to end: real stdio servers (logs, metrics, deploys), the real
SQLite saver, the offline model.

The demo page names the bad deploy with its evidence and pauses for its rollback; approving
rolls back exactly once (the deploys database and the server's call log say so); the metrics
backend dying makes the answer partial and says which specialist failed; the 24 labelled
incidents meet the eval targets. The logs and metrics databases are read-only and seeded once
for the module; each test gets its own deploys database.
"""

from __future__ import annotations

import sqlite3
import uuid
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from checkpoints.threads import thread_config
from graph.app.options import MusterOptions
from graph.app.runtime import open_runtime, stream_run
from graph.domains import load_domain
from servers import logs, metrics
from tests.conftest import MusterEnv, calls_so_far

pytestmark = pytest.mark.integration

DEMO = "[2025-06-12 14:07 UTC] checkout 5xx spiking since about 14:05, customers can't pay"
DEMO_CHANGE = "dep-checkout-20250612-1402"


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One seeded copy of the read-only logs and metrics databases for the module."""
    root = tmp_path_factory.mktemp("incident-data")
    paths = {"logs": root / "logs.sqlite", "metrics": root / "metrics.sqlite"}
    logs.ensure_database(paths["logs"])
    metrics.ensure_database(paths["metrics"])
    return paths


@pytest.fixture
def incident_env(
    muster_env: MusterEnv, seeded: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> MusterEnv:
    monkeypatch.setenv("MUSTER_LOGS_DB", str(seeded["logs"]))
    monkeypatch.setenv("MUSTER_METRICS_DB", str(seeded["metrics"]))
    monkeypatch.setenv("MUSTER_DEPLOYS_DB", str(muster_env.root / "deploys.sqlite"))
    for name in ("MODE", "SLOW_S", "DIE_AFTER"):
        monkeypatch.delenv(f"MUSTER_METRICS_{name}", raising=False)
    monkeypatch.delenv("MUSTER_DOMAIN", raising=False)
    return muster_env


def options(env: MusterEnv) -> MusterOptions:
    return MusterOptions.resolve(db=env.checkpoint_db, domain="incidents")


def rollback_rows(env: MusterEnv) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(env.root / "deploys.sqlite")) as conn:
        return list(conn.execute("SELECT change_id, requested_by FROM rollbacks"))


async def test_demo_names_the_bad_deploy_and_rolls_back_exactly_once(
    incident_env: MusterEnv,
) -> None:
    thread = f"inc-{uuid.uuid4().hex[:8]}"
    async with open_runtime(options(incident_env)) as runtime:
        await stream_run(runtime, thread, {"request": DEMO})
        snapshot = await runtime.graph.aget_state(thread_config(thread))
        (pending,) = snapshot.interrupts
        ask = pending.value
        assert (ask["tool"], ask["args"]) == ("deploys.rollback", {"change_id": DEMO_CHANGE})
        # Paused: the answer so far is what `muster run` prints.
        from graph.synthesize import compose_answer

        text = compose_answer(dict(snapshot.values)).text  # type: ignore[arg-type]
        assert f"a bad deploy in checkout from 14:03: {DEMO_CHANGE}" in text
        assert "(4.12.7 -> 4.13.0) at 14:02" in text
        assert "From 14:03 checkout logged" in text and "only from version 4.13.0" in text
        assert "[pending approval]" in text and "Still unknown:" in text
        assert {p.recipient for p in snapshot.values["packets"]} == {"logs", "metrics", "deploys"}
        assert rollback_rows(incident_env) == []

        decision = {"approved": True, "digest": ask["digest"], "by": "lead"}
        values = await stream_run(runtime, thread, Command(resume={pending.id: decision}))
        answer = values["answer"]
        assert answer.status == "complete" and not answer.needs_human
        (step,) = answer.resolution
        assert step.approval == "executed (approved by lead)"
        # A replay of the thread (a resume of a finished run) writes nothing again.
        await stream_run(runtime, thread, None)
    assert rollback_rows(incident_env) == [(DEMO_CHANGE, thread)]
    assert calls_so_far(incident_env.call_log, server="deploys", tool="rollback") == 1


async def test_a_second_page_about_the_same_deploy_is_held_while_its_rollback_waits(
    incident_env: MusterEnv,
) -> None:
    """One rollback of a change waits for a human at a time, whichever page proposed it: the
    held key is the domain's subject of the action (the change), not an order id."""
    first, second = (f"inc-{uuid.uuid4().hex[:8]}" for _ in range(2))
    async with open_runtime(options(incident_env)) as runtime:
        await stream_run(runtime, first, {"request": DEMO})
        (pending,) = (await runtime.graph.aget_state(thread_config(first))).interrupts
        assert pending.value["args"] == {"change_id": DEMO_CHANGE}
        values = await stream_run(runtime, second, {"request": DEMO})
        snapshot = await runtime.graph.aget_state(thread_config(second))
        assert not snapshot.interrupts  # nothing was put to a human in the second thread
    (held,) = values["actions"]
    assert held.status == "held" and held.args == {"change_id": DEMO_CHANGE}
    assert f"on change {DEMO_CHANGE} is awaiting approval in thread {first}" in held.result
    answer = values["answer"]
    assert answer.needs_human
    (step,) = answer.resolution
    assert step.approval == f"awaiting approval in thread {first}"
    assert f"already awaiting approval in thread {first}" in answer.text
    assert rollback_rows(incident_env) == []
    with closing(sqlite3.connect(incident_env.checkpoint_db)) as audit:
        claims = audit.execute(
            "SELECT thread_id, subject, held_by FROM muster_action_claim ORDER BY id"
        ).fetchall()
    subject = f"deploys.rollback:{DEMO_CHANGE}"
    assert claims == [(first, subject, ""), (second, subject, first)]


async def test_metrics_dying_makes_the_answer_partial_and_says_which(
    incident_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graph.app.scenarios import SCENARIOS

    scenario = SCENARIOS["metrics-down"]
    for name, value in scenario.environment.items():
        monkeypatch.setenv(name, value)
    thread = f"inc-{uuid.uuid4().hex[:8]}"
    async with open_runtime(options(incident_env)) as runtime:
        values = await stream_run(runtime, thread, {"request": scenario.request})
    from graph.synthesize import compose_answer

    answer = compose_answer(values)  # type: ignore[arg-type]
    assert answer.status == "partial" and answer.needs_human and answer.degraded
    assert any(r.startswith("metrics failed (unavailable)") for r in answer.degraded_reasons)
    assert any(q.startswith("metrics: this specialist failed") for q in answer.open_questions)
    # The logs and the change history still name the cause, and its rollback waits.
    assert DEMO_CHANGE in answer.summary[0].text
    assert [s.approval for s in answer.resolution] == ["pending approval"]
    assert rollback_rows(incident_env) == []


@pytest.mark.slow
async def test_the_labelled_queue_meets_the_eval_targets(incident_env: MusterEnv) -> None:
    from graph.app.eval_domain import evaluate_domain, load_cases, targets_met

    pack = load_domain("incidents")
    cases = load_cases(pack)
    assert len(cases) == 24
    results = await evaluate_domain(pack, cases, options(incident_env), concurrency=8)
    assert not [r.error for r in results if r.error]
    share = {
        field: sum(r.fields[field][0] for r in results) / len(results)
        for field in ("cause", "actions", "no_false_alarm_rollback")
    }
    assert share["cause"] >= 0.9
    assert share["actions"] == 1.0 and share["no_false_alarm_rollback"] == 1.0
    assert targets_met(results, pack.hook("TARGETS"))


@pytest.mark.slow
def test_cli_run_pauses_on_the_rollback_and_carries_the_domain(incident_env: MusterEnv) -> None:
    done = incident_env.cli("run", "--domain", "incidents", DEMO, "--thread", "inc-cli")
    assert done.returncode == 5, done.stderr
    assert "waiting for approval of deploys.rollback" in done.stdout
    assert "--domain incidents" in done.stdout.splitlines()[-1]
    assert "Most likely cause and evidence:" in done.stdout
