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
    assert totals["cost_usd"] == pytest.approx(sum(r.cost_usd for r in values["reports"]), abs=1e-6)
    assert totals["cost_usd"] > 0 and totals["unpriced_calls"] == 0


@pytest.mark.integration
async def test_a_model_the_table_does_not_know_is_unpriced_not_free(
    muster_env: MusterEnv, openai_server: RunningServer
) -> None:
    values = await _run(muster_env, openai_server, "gpt-test")
    totals = run_totals(values)
    assert totals["cost_usd"] == 0 and totals["unpriced_calls"] == len(
        [t for t in openai_server.script.exchanges if t.kind.startswith("worker:")]
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
