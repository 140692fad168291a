"""OpenTelemetry: a ticket's run becomes a tree of GenAI spans (workflow → agents → chat and
tool calls), with approval pause and resume as events; with no OTEL_* environment, nothing is
kept or exported."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langgraph.types import Command
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from checkpoints.threads import thread_config
from graph import telemetry
from graph.app.runtime import open_runtime, stream_run
from graph.trace import TraceWriter
from tests.conftest import MusterEnv
from tests.fixtures.openai_server import RunningServer
from tests.test_actions import REFUND_TICKET
from tests.test_provider import PROVIDER_TICKET
from tests.test_replay import _provider_options, openai_server  # noqa: F401 - a fixture


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.use_provider(provider)
    try:
        yield exporter
    finally:
        telemetry.use_provider(None)


def test_off_by_default(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    for name in (
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_TRACES_EXPORTER",
    ):
        monkeypatch.delenv(name, raising=False)
    assert not telemetry.enabled()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    assert telemetry.enabled()
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert not telemetry.enabled()


@pytest.mark.integration
async def test_a_ticket_exports_a_workflow_agent_chat_and_tool_span_tree(
    muster_env: MusterEnv, spans: InMemorySpanExporter
) -> None:
    thread = "otel-refund"
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        await stream_run(runtime, thread, {"request": REFUND_TICKET})  # pauses for approval
        (pending,) = (await runtime.graph.aget_state(thread_config(thread))).interrupts
        decision = {"approved": True, "digest": pending.value["digest"], "by": "alice"}
        await stream_run(runtime, thread, Command(resume={pending.id: decision}))

    finished = spans.get_finished_spans()
    workflows = [s for s in finished if s.name == "invoke_workflow muster"]
    assert len(workflows) == 2  # the run that paused, and the one that resumed
    for workflow in workflows:
        assert workflow.attributes["gen_ai.conversation.id"] == thread
        assert workflow.parent is None
    first, second = sorted(workflows, key=lambda s: s.start_time)
    assert [e.name for e in first.events] == ["approval.pause"]
    assert [(e.name, e.attributes["muster.decision"]) for e in second.events] == [
        ("approval.resume", "approved")
    ]

    by_id = {s.context.span_id: s for s in finished}
    agents = [s for s in finished if s.attributes.get("gen_ai.operation.name") == "invoke_agent"]
    assert {s.attributes["gen_ai.agent.name"] for s in agents} >= {"billing", "policy", "comms"}
    assert all(s.parent.span_id == first.context.span_id for s in agents)
    chats = [s for s in finished if s.attributes.get("gen_ai.operation.name") == "chat"]
    tools = [s for s in finished if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    assert chats and tools
    for child in chats + tools:  # each model turn and MCP call sits under its agent
        assert by_id[child.parent.span_id].attributes["gen_ai.operation.name"] == "invoke_agent"
        assert child.start_time <= child.end_time
    assert any(s.attributes.get("gen_ai.usage.output_tokens", 0) > 0 for s in chats)
    assert "orders.find_order" in {s.attributes["gen_ai.tool.name"] for s in tools} or (
        "orders.refund_status" in {s.attributes["gen_ai.tool.name"] for s in tools}
    )


def test_no_events_are_kept_when_telemetry_is_off(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    for name in (
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_TRACES_EXPORTER",
    ):
        monkeypatch.delenv(name, raising=False)
    writer = TraceWriter("otel-off", directory=tmp_path)  # type: ignore[arg-type]
    writer.emit("node", node="plan", outcome="ok")
    assert writer._events is None
    writer.close()


@pytest.mark.integration
async def test_the_supervisors_own_model_calls_are_chat_spans_of_the_workflow(
    muster_env: MusterEnv,
    openai_server: RunningServer,  # noqa: F811 - the fixture imported above
    spans: InMemorySpanExporter,
) -> None:
    """The LLM planner's and the answer writer's calls (a provider on loopback) are `chat`
    spans under the workflow, named by the model, with their token usage."""
    async with open_runtime(_provider_options(muster_env, openai_server)) as runtime:
        values = await stream_run(runtime, "otel-llm", {"request": PROVIDER_TICKET})
    assert values["answer"].written_by == "model"

    finished = spans.get_finished_spans()
    (workflow,) = [s for s in finished if s.name == "invoke_workflow muster"]
    chats = [s for s in finished if s.attributes.get("gen_ai.operation.name") == "chat"]
    supervisor = [s for s in chats if s.parent.span_id == workflow.context.span_id]
    assert len(supervisor) == 2  # the plan and the answer's prose
    workers = [s for s in chats if s not in supervisor]
    assert workers  # each worker's turns stay under their agents
    for span in supervisor:
        assert span.name == "chat gpt-test"
        assert span.attributes["gen_ai.request.model"] == "gpt-test"
        assert span.attributes["gen_ai.usage.input_tokens"] > 0
        assert span.attributes["gen_ai.usage.output_tokens"] > 0
        assert workflow.start_time <= span.start_time < span.end_time <= workflow.end_time
