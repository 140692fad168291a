"""`workers.model_chain.ModelChain`, the one way a model and its fallbacks are asked (the
worker loop, the LLM planner, the answer writer), with Muster's own chat models: real
LangChain `BaseChatModel`s that count the turns they play."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import ValidationError

from workers.local_models import OfflineChatModel, ScriptedChatModel
from workers.model_chain import ModelChain, ModelFailed, chain_of, off_schema
from workers.model_health import ModelHealth, ModelUnavailable
from workers.models import with_model_fallbacks


class Overloaded(Exception):
    """What a provider client raises for a 503."""

    status_code = 503


class Refused(Exception):
    """A provider's content filter: the model's own answer, no fallback's cue."""

    code = "content_filter"


def _scripted(label: str, *turns: Any) -> ScriptedChatModel:
    model = ScriptedChatModel(turns=list(turns))
    object.__setattr__(model, "model_name", label)  # its label, as a provider's model id
    return model


def _chain(first: ScriptedChatModel, *rest: Any, health: ModelHealth | None) -> ModelChain:
    model = with_model_fallbacks(first, list(rest))
    return ModelChain(chain_of(model, lambda m: m), health=health)


async def test_the_next_model_answers_when_one_is_unavailable() -> None:
    down, up = _scripted("down", Overloaded("overloaded")), _scripted("up", "hello")
    health = ModelHealth()
    chain = _chain(down, up, health=health)

    reply = await chain.ainvoke([HumanMessage("hi")])

    assert isinstance(reply, AIMessage) and reply.content == "hello"
    assert (down.calls, up.calls) == (1, 1)
    assert (chain.answered_by, chain.fallback_for) == ("up", "down")
    assert [(f.model, f.reason, f.asked) for f in chain.failures] == [("down", "unavailable", True)]
    assert health.breaker("down").failures == 1 and health.breaker("up").failures == 0


async def test_a_model_whose_circuit_is_open_is_not_asked() -> None:
    down, up = _scripted("down", "never"), _scripted("up", "hello")
    health = ModelHealth()
    for _ in range(health.settings.threshold):
        health.count("down", "unavailable", "503")
    chain = _chain(down, up, health=health)

    assert (await chain.ainvoke([HumanMessage("hi")])).content == "hello"
    assert (down.calls, up.calls) == (0, 1)
    (skipped,) = chain.failures
    assert (skipped.asked, skipped.note.startswith("model down not asked: circuit open")) == (
        False,
        True,
    )


async def test_when_every_model_fails_the_failure_names_each() -> None:
    first, second = _scripted("a", Overloaded("overloaded")), _scripted("b", Overloaded("again"))
    chain = _chain(first, second, health=ModelHealth())

    with pytest.raises(ModelUnavailable):
        await chain.ainvoke([HumanMessage("hi")])

    reason, note, healing = chain.failure()
    assert (reason, healing) == ("unavailable", True)
    assert note.startswith("every model failed: a: model call failed (unavailable)")
    assert "; b: model call failed (unavailable)" in note
    assert (first.calls, second.calls) == (1, 1) and chain.answered_by == ""


async def test_a_models_own_failure_is_not_passed_to_its_fallbacks() -> None:
    refusing, up = _scripted("refusing", Refused("no")), _scripted("up", "hello")
    chain = _chain(refusing, up, health=ModelHealth())

    with pytest.raises(ModelFailed) as failed:
        await chain.ainvoke([HumanMessage("hi")])

    assert (failed.value.model, failed.value.reason) == ("refusing", "model_refused")
    assert isinstance(failed.value.__cause__, Refused)
    assert up.calls == 0


async def test_a_reply_off_its_schema_is_the_models_answer() -> None:
    """A structured reply that does not parse is raised as it is (the planner revises, the
    writer composes), never a fallback's cue, and not a failure on the model's breaker."""
    try:
        AIMessage.model_validate({"content": 1})
    except ValidationError as error:
        off = error
    bad, up = _scripted("bad", off), _scripted("up", "hello")
    health = ModelHealth()
    chain = ModelChain(
        chain_of(with_model_fallbacks(bad, [up]), lambda m: m), health=health, answers=off_schema
    )

    with pytest.raises(ValidationError):
        await chain.ainvoke([HumanMessage("hi")])

    assert (bad.calls, up.calls) == (1, 0) and chain.failures == []
    assert health.breaker("bad").failures == 0


async def test_without_health_each_model_is_asked_as_it_is() -> None:
    """Muster's own models (no health): the offline model answers as the fallback of one that
    failed, and nothing is counted anywhere."""
    down = _scripted("down", Overloaded("overloaded"))
    chain = _chain(down, OfflineChatModel(), health=None)

    reply = await chain.ainvoke([HumanMessage("hi")])

    assert isinstance(reply, AIMessage) and down.calls == 1
    assert (chain.answered_by, chain.fallback_for) == ("muster-offline", "down")
