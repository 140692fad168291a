"""Cost in money: each provider model call priced from the maintained table (genai-prices),
summed per worker and per thread; a model the table does not know is unpriced, not free."""

from __future__ import annotations

import uuid

import pytest
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from graph.app.render import run_totals
from graph.app.runtime import open_runtime, stream_run
from graph.planners.llm import make_llm_planner
from tests.conftest import MusterEnv
from tests.fixtures.openai_server import RunningServer
from tests.test_provider import PLAN, PROVIDER_TICKET, WORKERS
from workers.cost import call_cost


def test_a_call_is_priced_from_the_table() -> None:
    # gpt-4o-mini: $0.15 per million input tokens, $0.60 per million output tokens.
    assert call_cost("gpt-4o-mini", 1_000_000, 0).usd == pytest.approx(0.15)
    assert call_cost("gpt-4o-mini", 0, 1_000_000).usd == pytest.approx(0.60)
    assert call_cost("muster-offline", 5_000, 5_000).usd == 0.0
    assert call_cost("a-model-nobody-prices", 10, 10).usd is None


async def _run(env: MusterEnv, server: RunningServer, model: str) -> dict:
    chat = ChatOpenAI(
        model=model, base_url=server.base_url, api_key=SecretStr("test"), max_retries=0
    )
    server.script.plan = PLAN
    server.script.workers = WORKERS
    async with open_runtime(
        db=env.checkpoint_db, models=lambda worker: chat, planner=make_llm_planner(chat)
    ) as runtime:
        return await stream_run(runtime, f"t-{uuid.uuid4().hex[:8]}", {"request": PROVIDER_TICKET})


@pytest.mark.integration
async def test_each_worker_and_the_thread_carry_their_cost(
    muster_env: MusterEnv, openai_server: RunningServer
) -> None:
    values = await _run(muster_env, openai_server, "gpt-4o-mini")
    for report in values["reports"]:
        turns = openai_server.script.of_kind(f"worker:{report.worker}")
        usage = [t.usage for t in turns]
        expected = sum(
            u["prompt_tokens"] * 0.15e-6 + u["completion_tokens"] * 0.60e-6 for u in usage
        )
        assert report.cost_usd == pytest.approx(expected, rel=1e-6), report.worker
        assert report.unpriced_calls == 0
    totals = run_totals(values)
    # The LLM planner's and the answer writer's own calls are priced too, and in the
    # thread's totals (by hand here, from the usage the provider served).
    own = [t.usage for kind in ("planner", "writer") for t in openai_server.script.of_kind(kind)]
    assert openai_server.script.of_kind("planner") and openai_server.script.of_kind("writer")
    planned = sum(u["prompt_tokens"] * 0.15e-6 + u["completion_tokens"] * 0.60e-6 for u in own)
    assert planned > 0 and totals["supervisor_cost_usd"] == pytest.approx(planned, abs=1e-6)
    workers = sum(r.cost_usd for r in values["reports"])
    assert totals["cost_usd"] == pytest.approx(workers + planned, abs=1e-6)
    assert totals["cost_usd"] > 0 and totals["unpriced_calls"] == 0


@pytest.mark.integration
async def test_a_model_the_table_does_not_know_is_unpriced_not_free(
    muster_env: MusterEnv, openai_server: RunningServer
) -> None:
    values = await _run(muster_env, openai_server, "gpt-test")
    totals = run_totals(values)
    # Every call is unpriced, the supervisor's (planner, answer writer) as the workers'.
    calls = openai_server.script.exchanges
    assert totals["cost_usd"] == 0 and totals["unpriced_calls"] == len(
        [t for t in calls if t.kind.startswith("worker:") or t.kind in ("planner", "writer")]
    )


@pytest.mark.integration
async def test_the_cost_budget_stops_new_work_at_the_barrier(
    muster_env: MusterEnv, openai_server: RunningServer
) -> None:
    """A money budget smaller than the first wave's cost: the barrier stops the run (no new
    work), and the answer says the cost budget stopped it."""
    from graph.limits import RunLimits

    chat = ChatOpenAI(
        model="gpt-4o-mini", base_url=openai_server.base_url, api_key=SecretStr("t"), max_retries=0
    )
    openai_server.script.api_key = "t"
    openai_server.script.plan = PLAN
    openai_server.script.workers = WORKERS
    async with open_runtime(
        db=muster_env.checkpoint_db,
        models=lambda worker: chat,
        planner=make_llm_planner(chat),
        limits=RunLimits(max_cost_usd=0.000001),
    ) as runtime:
        values = await stream_run(runtime, "t-cost", {"request": PROVIDER_TICKET})
    assert values["stop_reason"].startswith("cost budget: $")
    assert "cost budget" in " ".join(values["answer"].degraded_reasons)


def test_max_cost_is_a_positive_amount() -> None:
    import argparse

    from graph.app.flags import positive_dollars

    assert positive_dollars("$0.50") == 0.5
    for bad in ("free", "0", "-1", "nan"):
        with pytest.raises(argparse.ArgumentTypeError):
            positive_dollars(bad)


PRICE_IN, PRICE_OUT = 0.15e-6, 0.60e-6
"""gpt-4o-mini in the price table: $0.15 per million input tokens, $0.60 per million output."""


def _hand_cost(server: RunningServer, since: int = 0) -> float:
    """What every call the provider served since `since` costs, by hand from its usage."""
    return sum(
        e.usage["prompt_tokens"] * PRICE_IN + e.usage["completion_tokens"] * PRICE_OUT
        for e in server.script.exchanges[since:]
    )


@pytest.mark.integration
async def test_batch_and_eval_costs_match_a_hand_computation(
    muster_env: MusterEnv, openai_server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scripted provider (the loopback server) is each worker's model, the rules plan and
    the answers are composed (the totals price the workers' calls): every call the server
    served is a worker's, and the batch summary's total (and
    its cost column), the answers file's per-ticket cost and the eval report's total are each
    the hand computation from the served usage and the table's two prices."""
    import io
    import json

    from graph.app.batch_queue import plan_batch, run_batch
    from graph.app.batch_report import BatchProgress, print_summary, summarize
    from graph.app.batch_tickets import load_tickets
    from graph.app.eval_dataset import evaluate_tickets
    from graph.app.eval_fields import labelled_fields, load_eval_tickets
    from graph.app.eval_report import eval_json, print_eval, scored_tickets, summarize_eval
    from graph.app.options import MusterOptions
    from graph.domains import load_domain
    from tests.test_eval import TICKETS, write_jsonl

    EVAL_FIELDS = labelled_fields(load_domain("support"))  # noqa: N806 - the pack's name

    chat = ChatOpenAI(
        model="gpt-4o-mini", base_url=openai_server.base_url, api_key=SecretStr("test"),
        max_retries=0,
    )
    openai_server.script.workers = WORKERS
    monkeypatch.setenv("MUSTER_ANSWER_WRITER", "composed")
    options = MusterOptions.resolve(db=muster_env.checkpoint_db, models=lambda worker: chat)
    path = write_jsonl(muster_env.root / "two.jsonl", TICKETS[:2])
    tickets = load_tickets(path)
    async with open_runtime(options) as runtime, runtime.lanes(1) as lanes:
        plan = plan_batch(path, tickets, {}, resume=False)
        results, _ = await run_batch(
            runtime, path, plan, concurrency=1,
            progress=BatchProgress(io.StringIO(), len(tickets)), lanes=lanes,
        )
    served = openai_server.script.exchanges
    assert served and all(e.kind.startswith("worker:") for e in served)
    hand = _hand_cost(openai_server)
    summary = summarize(
        "two", results, ran=2, resumed=0, skipped=0, out=path, wall_s=1.0, drained=False
    )
    assert sum(r.cost_usd for r in results) == pytest.approx(hand, rel=1e-9) and hand > 0
    assert summary.cost_usd == pytest.approx(hand, abs=5e-7)  # kept to the micro-dollar
    assert sum(summary.cost_per_outcome.values()) == pytest.approx(hand, abs=1e-6)
    assert sum(r.record()["cost_usd"] for r in results) == pytest.approx(hand, abs=1e-6)
    out = io.StringIO()
    print_summary(summary, out)
    header = next(line for line in out.getvalue().splitlines() if "outcome" in line)
    assert header.split() == ["outcome", "tickets", "cost"]
    total = next(line for line in out.getvalue().splitlines() if line.split()[:1] == ["total"])
    assert total.split() == ["total", "2", f"${hand:.4f}"]

    before = len(openai_server.script.exchanges)
    eval_tickets = load_eval_tickets(path, EVAL_FIELDS)
    report = await evaluate_tickets(
        "two", eval_tickets, options, fields=EVAL_FIELDS, concurrency=1, progress=io.StringIO()
    )
    scored = scored_tickets(report, eval_tickets, EVAL_FIELDS)
    eval_summary = summarize_eval(scored, EVAL_FIELDS)
    hand = _hand_cost(openai_server, before)
    assert sum(t.cost_usd for t in scored) == pytest.approx(hand, rel=1e-9) and hand > 0
    assert eval_summary.cost_usd == pytest.approx(hand, abs=5e-7)
    assert eval_summary.unpriced_calls == 0
    text = io.StringIO()
    print_eval(eval_summary, scored, text)
    assert f"cost: ${hand:.4f} for 2 tickets" in text.getvalue()
    document = json.loads(eval_json(eval_summary, scored, {}))
    assert document["cost_usd"] == pytest.approx(hand, abs=5e-7)
    assert sum(t["cost_usd"] for t in document["tickets"]) == pytest.approx(hand, abs=1e-6)
