"""`muster replay`: a recorded batch replayed on unchanged code differs in nothing; a
deliberate planner change is reported ticket by ticket; a replay never executes a write.

The batch runs in-process (`run_batch`, as `muster batch` does) on real MCP servers; the
replays serve every model and tool call from the recordings in the traces."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from domains.support.rules import plan_ticket
from graph.app.batch_queue import plan_batch, run_batch
from graph.app.batch_report import BatchProgress
from graph.app.batch_tickets import batch_thread_id, load_tickets
from graph.app.options import MusterOptions
from graph.app.replay import (
    print_summary,
    read_targets,
    replay_targets,
    summarize,
)
from graph.app.replay_diff import RunView, run_view
from graph.app.replay_record import (
    REPLAYING,
    Recording,
    ReplayChatModel,
    ReplayHub,
    ThreadReplay,
    call_key,
    load_recording,
)
from graph.app.runtime import open_runtime, stream_run
from graph.planners.llm import LlmPlanner, planner_prompt
from graph.trace import read_trace, trace_path
from graph.trace_events import RECORDING_EVENT
from graph.trace_seal import opened
from tests.conftest import MusterEnv
from tests.fixtures.openai_server import RunningServer, serve_openai
from tests.test_provider import PLAN, PROVIDER_TICKET, WORKERS
from workers.contracts import Answer, Handoff
from workers.hub import CallOutcome
from workers.roster import Roster

ROOT = Path(__file__).resolve().parent.parent
BLACK_FRIDAY = ROOT / "examples" / "black_friday.jsonl"
CHANGED = 6
"""Tickets the deliberate-change replay covers (the whole 40 is the unchanged replay's)."""


async def _run_batch(path: Path, options: MusterOptions) -> None:
    tickets = load_tickets(path)
    # One ticket at a time, here and in the replays: tickets on the same order hold each
    # other's refunds (`muster approve` explains), so the order they reach approval matters.
    async with open_runtime(options) as runtime, runtime.lanes(1) as lanes:
        plan = plan_batch(path, tickets, {}, resume=False)
        await run_batch(
            runtime,
            path,
            plan,
            concurrency=1,
            progress=BatchProgress(io.StringIO(), len(tickets)),
            lanes=lanes,
        )


def _threads(path: Path, count: int | None = None) -> list[tuple[str, str]]:
    tickets = load_tickets(path)[:count]
    return [(t.id, batch_thread_id(path, t.id)) for t in tickets]


def without_comms(request: str, roster: Roster) -> list[Handoff]:
    """The deliberate change: a planner that no longer sends the comms specialist."""
    return [p for p in plan_ticket(request, roster) if p.recipient != "comms"]


@pytest.mark.integration
def test_replaying_the_batch_on_unchanged_code_differs_in_nothing_and_a_planner_change_is_reported(
    muster_env: MusterEnv,
) -> None:
    options = MusterOptions.resolve(db=muster_env.checkpoint_db)

    async def scenario() -> tuple[Any, Any, Any, Any]:
        await _run_batch(BLACK_FRIDAY, options)
        all_threads = await read_targets(options, _threads(BLACK_FRIDAY))
        same = await replay_targets(
            options, all_threads, name="unchanged", strict=True, concurrency=1
        )
        changed_options = replace(options, planner=without_comms)
        some = all_threads[:CHANGED]
        changed = await replay_targets(changed_options, some, name="changed", concurrency=1)
        return all_threads, same, some, changed

    all_threads, same, some, changed = asyncio.run(scenario())
    assert len(all_threads) == 40
    unchanged = summarize(same, all_threads)
    out = io.StringIO()
    print_summary(unchanged, out=out)
    assert unchanged.differing == [], out.getvalue()
    assert not any(unchanged.flagged.values()), out.getvalue()  # --strict: all recorded
    assert "threads with differences: 0 of 40" in out.getvalue()

    summary = summarize(changed, some)
    with_comms = [t.name for t in some if any(p["worker"] == "comms" for p in t.original.plan)]
    assert with_comms, "the first tickets plan the comms specialist"
    assert summary.differing == with_comms  # ticket by ticket, in ticket order
    for name in with_comms:
        lines = "\n".join(summary.changed[name])
        assert "plan:" in lines and "comms" in lines
        assert "reports:" in lines and "only in the original" in lines
    assert summary.kept["plan"] == CHANGED - len(with_comms)


def test_recording_is_read_back_from_the_trace(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"event": "worker_step", "run_id": "r1", "kind": "model", "request": "abc",'
        ' "response": {"content": "done", "tool_calls": [], "usage": {}}}\n'
        '{"event": "worker_step", "run_id": "r1", "kind": "tool", "tool": "orders.find_order",'
        ' "args": {"order_id": "1"}, "outcome": "ok", "result": "{}"}\n'
        '{"event": "recording", "run_id": "r2", "tool": "orders.issue_refund",'
        ' "args": {"order_id": "1", "requested_by": "t"}, "outcome": "ok", "result": "done"}\n'
        "torn line\n"
    )
    recording = load_recording(path)
    assert recording.models == {
        "abc": [{"response": {"content": "done", "tool_calls": [], "usage": {}}}]
    }
    assert recording.tools[call_key("orders.find_order", {"order_id": "1"})] == [("ok", "{}")]
    write = call_key("orders.issue_refund", {"order_id": "1", "requested_by": "other"}, writes=True)
    assert recording.tools[write] == [("ok", "done")]
    assert recording.runs == {"r1", "r2"}


async def test_the_replay_model_serves_the_recording_and_asks_its_fallback_for_the_rest() -> None:
    """A recorded request is served its recorded replies in order (the last repeats), sync and
    async; one the recording lacks is counted as a miss and answered by the fallback."""
    from langchain_core.messages import AIMessage, HumanMessage

    from workers.local_models import ScriptedChatModel
    from workers.models import request_digest

    asked = [HumanMessage(content="where is order 1?")]
    replies = [{"response": {"content": c, "tool_calls": [], "usage": {}}} for c in ("a", "b")]
    replay = ThreadReplay(Recording(models={request_digest(asked, []): replies}))
    fallback = ScriptedChatModel(turns=["from the fallback"])
    model = ReplayChatModel(replay=replay, fallback=fallback)
    assert model.invoke("where is order 1?").content == "a"
    assert (await model.ainvoke(asked)).content == "b"
    assert model.invoke(asked).content == "b"
    assert not replay.model_misses and fallback.calls == 0
    other = [HumanMessage(content="and order 2?")]
    assert model.invoke(other).content == "from the fallback"
    reply = await model.ainvoke(other)
    assert isinstance(reply, AIMessage) and reply.content == "from the fallback"
    assert reply.usage_metadata is not None  # the fallback's usage comes through
    assert replay.model_misses == [request_digest(other, [])] * 2 and fallback.calls == 2


@pytest.mark.integration
def test_the_replay_hub_never_executes_a_write(muster_env: MusterEnv) -> None:
    """An unrecorded write is refused without reaching the server; a recorded one is served."""
    options = MusterOptions.resolve(db=muster_env.checkpoint_db)
    refund = {"order_id": "12345", "amount_cents": 100, "idempotency_key": "k", "approval": "x"}

    async def scenario() -> tuple[Any, Any, Any]:
        hub = await ReplayHub.connect(options.servers, on_demand=True)
        try:
            token = REPLAYING.set(ThreadReplay(Recording(), strict=False))
            try:
                refused = await hub.call_action("orders.issue_refund", refund)
            finally:
                REPLAYING.reset(token)
            recorded = Recording(
                tools={call_key("orders.issue_refund", refund, writes=True): [("ok", "was")]}
            )
            token = REPLAYING.set(ThreadReplay(recorded))
            try:
                served = await hub.call_action("orders.issue_refund", {**refund, "approval": "y"})
            finally:
                REPLAYING.reset(token)
            outside = await hub.call_action("orders.issue_refund", refund)
            return refused, served, outside
        finally:
            await hub.aclose()

    refused, served, outside = asyncio.run(scenario())
    assert refused.outcome is CallOutcome.NOT_ALLOWED and "never executes a write" in refused.text
    assert served.outcome is CallOutcome.OK and served.text == "was"
    assert outside.outcome is CallOutcome.NOT_ALLOWED
    calls = muster_env.call_log.read_text() if muster_env.call_log.exists() else ""
    assert "issue_refund" not in calls


def test_a_missing_trace_reads_as_an_empty_recording(muster_env: MusterEnv) -> None:
    recording = load_recording(trace_path("never-ran"))
    assert not recording.models and not recording.tools


# --- the LLM planner and the answer writer: recorded and served like workers' turns ---------

WRITTEN = {
    "summary": [
        {"text": "L. Moreau was charged $89.00 twice for order 12333.", "cites": ["billing-1/F1"]}
    ],
    "customer_reply": "Hello L. Moreau, we are looking at the duplicate charge on order 12333.",
}
"""What the answer writer returns in the original run: the answer's prose is the model's."""


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[RunningServer]:
    """The scripted OpenAI-compatible server on loopback: the planner's, the workers' and the
    answer writer's model, reached through the real `ChatOpenAI`."""
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(var, "127.0.0.1,localhost")
    for var in ("OPENAI_API_BASE", "OPENAI_ORGANIZATION", "OPENAI_PROJECT"):
        monkeypatch.delenv(var, raising=False)
    with serve_openai(api_key="test") as server:
        server.script.plan = PLAN
        server.script.workers = WORKERS
        server.script.answer = WRITTEN
        yield server


def _provider_options(env: MusterEnv, server: RunningServer, **planner: Any) -> MusterOptions:
    chat = ChatOpenAI(
        model="gpt-test", base_url=server.base_url, api_key=SecretStr("test"), max_retries=0
    )
    return MusterOptions.resolve(
        db=env.checkpoint_db, models=lambda worker: chat, planner=LlmPlanner(chat, **planner)
    )


def _recorded_model_calls(thread_id: str) -> dict[str, dict[str, Any]]:
    """The supervisor's recorded model calls in a thread's trace, by node."""
    return {
        e["node"]: e
        for e in read_trace(trace_path(thread_id))
        if e["event"] == RECORDING_EVENT and e.get("kind") == "model"
    }


def _rewrite_recorded_reply(thread_id: str, node: str, content: dict[str, Any]) -> None:
    """Change what the recording says the model answered at `node` (the plan, the prose).
    A line's sealed originals (graph/trace_seal.py) are what replay reads: the line is
    opened, edited and written back whole."""
    path = trace_path(thread_id)
    lines = []
    for line in path.read_text().splitlines():
        event = opened(json.loads(line))
        model_call = event["event"] == RECORDING_EVENT and event.get("kind") == "model"
        if model_call and event["node"] == node:
            event["response"]["content"] = json.dumps(content)
        lines.append(json.dumps(event))
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.integration
async def test_a_thread_planned_and_written_by_a_model_replays_from_its_recording(
    muster_env: MusterEnv, openai_server: RunningServer
) -> None:
    """The LLM planner's and the answer writer's calls are recorded (digest, reply, tokens)
    and served from the recording: an unchanged replay differs in nothing and asks the
    provider nothing; a changed recorded plan, a changed recorded prose and a changed planner
    prompt are each reported."""
    options = _provider_options(muster_env, openai_server)
    thread_id = "llm-planned"
    async with open_runtime(options) as runtime:
        values = await stream_run(runtime, thread_id, {"request": PROVIDER_TICKET})
    assert values["answer"].written_by == "model"
    recorded = _recorded_model_calls(thread_id)
    assert set(recorded) == {"plan", "synthesize"}
    assert json.loads(recorded["plan"]["response"]["content"]) == PLAN
    assert recorded["plan"]["tokens"] > 0 and recorded["synthesize"]["tokens"] > 0
    asked = len(openai_server.script.exchanges)

    targets = await read_targets(options, [(thread_id, thread_id)])
    supervisor = {k for k in targets[0].original.tokens if k.startswith("supervisor:")}
    assert supervisor == {"supervisor:plan", "supervisor:synthesize"}  # compared too
    same = summarize(
        await replay_targets(options, targets, name="same", strict=True, concurrency=1), targets
    )
    assert same.changed == {thread_id: []} and same.flagged == {thread_id: []}
    assert len(openai_server.script.exchanges) == asked  # every model call was the recording's

    # The recorded planner reply changed: the replay plans what the recording says.
    without_comms = {"packets": [p for p in PLAN["packets"] if p["recipient"] != "comms"]}
    _rewrite_recorded_reply(thread_id, "plan", without_comms)
    targets = await read_targets(options, [(thread_id, thread_id)])
    replanned = summarize(await replay_targets(options, targets, name="replanned"), targets)
    lines = "\n".join(replanned.changed[thread_id])
    assert "plan:" in lines and "comms" in lines
    assert "reports:" in lines and "only in the original" in lines
    # Other reports are another request to the answer writer: flagged, and asked of `--model`.
    (flag,) = replanned.flagged[thread_id]
    assert flag.startswith("model request") and flag.endswith("not recorded")
    assert [e.kind for e in openai_server.script.exchanges[asked:]] == ["writer"]
    _rewrite_recorded_reply(thread_id, "plan", PLAN)

    # The recorded prose changed: the answer's text is the recording's.
    reworded = {**WRITTEN, "customer_reply": "Hello L. Moreau, order 12333 is being reviewed."}
    _rewrite_recorded_reply(thread_id, "synthesize", reworded)
    targets = await read_targets(options, [(thread_id, thread_id)])
    rewritten = summarize(await replay_targets(options, targets, name="rewritten"), targets)
    assert [line for line in rewritten.changed[thread_id] if line.endswith(":")] == ["answer_text:"]
    assert "order 12333 is being reviewed" in "\n".join(rewritten.changed[thread_id])
    assert rewritten.flagged == {thread_id: []}
    _rewrite_recorded_reply(thread_id, "synthesize", WRITTEN)

    # New code: another planner prompt is another request, which the recording lacks.
    def terser(roster: Roster) -> str:
        return planner_prompt(roster) + " Prefer fewer packets."

    asked = len(openai_server.script.exchanges)
    changed = _provider_options(muster_env, openai_server, prompt=terser)
    strict = summarize(
        await replay_targets(changed, targets, name="reprompted", strict=True), targets
    )
    (failed,) = strict.changed[thread_id]
    assert failed.startswith("replay failed: PlannerCallError") and "not in the recording" in failed
    assert len(strict.flagged[thread_id]) == 1
    assert len(openai_server.script.exchanges) == asked  # strict: the provider is never asked


def test_when_a_held_claim_was_made_is_no_difference() -> None:
    """A held action's line says since when the other thread's claim stands, to the minute;
    a replay that runs in another minute than its original does the same thing. (An
    unchanged batch replay failed once on exactly that, straddling a minute.)"""
    line = "- a refund on order {} is awaiting approval in thread t-1 (proposed {}); nothing new"

    def view(order: str, when: str) -> RunView:
        answer = Answer(text=line.format(order, when), status="partial", degraded=False)
        return run_view({"answer": answer}, waiting=False)

    assert view("12345", "2026-12-01 10:55 UTC") == view("12345", "2026-12-01 10:56 UTC")
    assert "(proposed <time>)" in view("12345", "2026-12-01 10:55 UTC").answer_text
    assert view("12345", "2026-12-01 10:55 UTC") != view("12346", "2026-12-01 10:55 UTC")
