"""The supervisor's own models fall back as the workers' do: the LLM planner and the answer
writer ask their model's fallbacks (`MUSTER_PLANNER_FALLBACKS`, `MUSTER_WRITER_FALLBACKS`,
or `MUSTER_MODEL_FALLBACKS` for every role) through the same `ModelChain` as the worker loop
(`workers.model_chain`), behind the run's per-model breakers, and the thread's
`supervisor_calls` say which model answered for which.

Against the real `ChatOpenAI` and the loopback OpenAI-compatible server
(tests/fixtures/openai_server.py), whose record of every request, with the model it named
and the status it got, is what the counts below read; the workers' tools are the real MCP
servers.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from graph.app.runtime import open_runtime, stream_run
from graph.planners.llm import make_llm_planner
from tests.conftest import MusterEnv, by_worker
from tests.fixtures.openai_server import RunningServer
from tests.test_model_fallbacks import DOWN
from tests.test_provider import PLAN, PROVIDER_TICKET, WORKERS
from workers.errors import PlannerCallError
from workers.models import ModelFactory, load_model_factory, with_model_fallbacks
from workers.roster import load_roster

REPLY = "Thanks for your patience: a colleague is looking into your order now."
"""The writer's scripted reply: no number and no state claim, so the checks keep it."""


@pytest.fixture
def provider(openai_server: RunningServer, monkeypatch: pytest.MonkeyPatch) -> RunningServer:
    """The loopback server as the `openai` provider, scripted with the reference plan, the
    workers' turns and a reply for the writer."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    script = openai_server.script
    script.plan, script.workers = PLAN, WORKERS
    script.answer = {"summary": [], "customer_reply": REPLY}
    return openai_server


def _chat(server: RunningServer, model: str) -> ChatOpenAI:
    return ChatOpenAI(
        model=model, base_url=server.base_url, api_key=SecretStr("test"), max_retries=0
    )


def _asked(server: RunningServer, kind: str) -> list[tuple[str, int]]:
    """Each request of `kind` the server saw, in order, as (model named, status answered)."""
    return [(e.model, e.status) for e in server.script.of_kind(kind)]


async def _run(env: MusterEnv, models: ModelFactory, **parts: Any) -> dict[str, Any]:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    async with open_runtime(db=env.checkpoint_db, models=models, **parts) as runtime:
        values = await stream_run(runtime, thread, {"request": PROVIDER_TICKET})
        values["_health"] = runtime.services.model_health
        return values


def _calls(values: dict[str, Any], node: str) -> list[dict[str, Any]]:
    return [c for c in values["supervisor_calls"] if c["node"] == node]


@pytest.mark.integration
async def test_the_planner_and_the_writer_fall_back_and_say_which_model_answered(
    muster_env: MusterEnv, provider: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model every role is given is down (503); its fallback, named in the model
    settings, plans, works and writes. The breaker is kept out of the way, so each call asks
    the down model first: the counts are exact."""
    monkeypatch.setenv("MUSTER_MODEL_FALLBACKS", "openai:gpt-up")
    monkeypatch.setenv("MUSTER_BREAKER_FAILURES", "1000")
    provider.script.fail_models["gpt-down"] = DOWN
    factory = load_model_factory("openai:gpt-down")

    values = await _run(muster_env, factory, planner=make_llm_planner(factory("planner")))

    # One request each: the down model (refused), then its fallback (answered).
    assert _asked(provider, "planner") == [("gpt-down", 503), ("gpt-up", 200)]
    assert _asked(provider, "writer") == [("gpt-down", 503), ("gpt-up", 200)]
    # The fallback's plan is the plan that ran, and its prose the answer's.
    assert [p.id for p in values["packets"]] == ["billing-1", "policy-3", "comms-4"]
    answer = values["answer"]
    assert (answer.written_by, answer.customer_reply) == ("model", REPLY)
    # The thread records which model planned and wrote, and for which.
    for node in ("plan", "synthesize"):
        (call,) = _calls(values, node)
        assert (call["model"], call["fallback_for"]) == ("gpt-up", "gpt-down"), call
        assert call["output_tokens"] > 0  # priced from the fallback's own usage
    for worker, reports in by_worker(values["reports"]).items():
        assert [(r.model, r.fallback_for) for r in reports] == [("gpt-up", "gpt-down")], worker


@pytest.mark.integration
async def test_the_planners_failure_opens_the_breaker_the_workers_and_writer_obey(
    muster_env: MusterEnv, provider: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The planner asks through the run's model health, shared with the workers and the
    writer: with one failure enough to open a circuit, the planner's 503 opens gpt-down's,
    and no later call of the ticket asks gpt-down again; its fallback answers them all."""
    monkeypatch.setenv("MUSTER_MODEL_FALLBACKS", "openai:gpt-up")
    monkeypatch.setenv("MUSTER_BREAKER_FAILURES", "1")
    monkeypatch.setenv("MUSTER_BREAKER_COOLDOWN_S", "600")
    provider.script.fail_models["gpt-down"] = DOWN
    factory = load_model_factory("openai:gpt-down")

    values = await _run(muster_env, factory, planner=make_llm_planner(factory("planner")))

    down = [(e.kind, e.status) for e in provider.script.exchanges if e.model == "gpt-down"]
    assert down == [("planner", 503)]  # the planner's one request, then never again
    assert values["_health"].breaker("gpt-down").is_open
    assert _asked(provider, "writer") == [("gpt-up", 200)]
    assert values["answer"].customer_reply == REPLY
    (write,) = _calls(values, "synthesize")
    assert (write["model"], write["fallback_for"]) == ("gpt-up", "gpt-down")


async def test_a_planner_whose_every_model_fails_says_so_for_each(
    provider: RunningServer,
) -> None:
    """Every model of the planner's chain down: the call fails as it does for one model (a
    `PlannerCallError`: nothing was planned, so the ticket fails with the cause), naming each
    model and how it failed; each was asked once."""
    provider.script.fail_models.update({"gpt-down": DOWN, "gpt-also-down": DOWN})
    model = with_model_fallbacks(_chat(provider, "gpt-down"), [_chat(provider, "gpt-also-down")])

    with pytest.raises(PlannerCallError) as failed:
        await make_llm_planner(model)(PROVIDER_TICKET, load_roster())

    message = str(failed.value)
    assert message.startswith("the LLM planner could not produce a plan: every model failed:")
    assert "gpt-down: model call failed (unavailable)" in message
    assert "gpt-also-down: model call failed (unavailable)" in message
    assert _asked(provider, "planner") == [("gpt-down", 503), ("gpt-also-down", 503)]


@pytest.mark.integration
async def test_a_writer_whose_every_model_fails_leaves_the_composed_answer_naming_each(
    muster_env: MusterEnv, provider: RunningServer
) -> None:
    """The workers' model answers; the writer's and its fallback are both down: each is asked
    once, the composed answer stands, and its degraded reason names both models."""
    provider.script.fail_models.update({"gpt-w1": DOWN, "gpt-w2": DOWN})
    workers = _chat(provider, "gpt-test")
    writer = with_model_fallbacks(_chat(provider, "gpt-w1"), [_chat(provider, "gpt-w2")])

    values = await _run(muster_env, lambda caller: writer if caller == "synthesizer" else workers)

    assert _asked(provider, "writer") == [("gpt-w1", 503), ("gpt-w2", 503)]
    answer = values["answer"]
    assert answer.written_by == "rules" and answer.customer_reply != REPLY
    (why,) = [r for r in answer.degraded_reasons if "could not write the answer" in r]
    assert "every model failed: gpt-w1: model call failed (unavailable)" in why, why
    assert "gpt-w2: model call failed (unavailable)" in why, why
    assert _calls(values, "synthesize") == []  # no model wrote: nothing to price
