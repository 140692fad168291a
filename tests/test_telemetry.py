"""OpenTelemetry: a ticket's run becomes a tree of GenAI spans (workflow → agents → chat and
tool calls), with approval pause and resume as events; with no OTEL_* environment, nothing is
kept or exported."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from langgraph.types import Command
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from checkpoints.threads import thread_config
from graph import telemetry
from graph.app.runtime import open_runtime, stream_run
from graph.trace import TraceWriter
from tests.conftest import HANG_TIMEOUT_S, MusterEnv
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
    # The supervisor's steps last as long as they ran (they were all 0 ms): the plan looks
    # the order up once for every packet, the answer is written from the reports.
    nodes = {s.name: s for s in finished if "muster.node" in (s.attributes or {})}
    assert {"plan", "collect", "verify", "synthesize"} <= set(nodes)
    for name in ("plan", "synthesize"):
        start, end = nodes[name].start_time, nodes[name].end_time
        assert start is not None and end is not None and end > start, name


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


class Collector(BaseHTTPRequestHandler):
    """An OTLP/HTTP collector on loopback that holds each export until `release` is set."""

    holding = threading.Event()
    release = threading.Event()

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        Collector.holding.set()
        Collector.release.wait(HANG_TIMEOUT_S)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def otel_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """The OTel environment cleared; whatever provider a test builds is dropped after."""
    for name in [n for n in os.environ if n.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    monkeypatch.delenv(telemetry.SHUTDOWN_ENV, raising=False)
    telemetry.use_provider(None)
    try:
        yield monkeypatch
    finally:
        telemetry.shutdown(budget_ms=0)
        telemetry.use_provider(None)


EVENTS = [{"ts": 1.0, "event": "node", "node": "plan", "outcome": "ok", "duration_ms": 5.0}]


def test_the_resource_is_the_sdks_detection_with_muster_as_the_default_name(
    otel_env: pytest.MonkeyPatch,
) -> None:
    attributes = telemetry.resource().attributes
    assert attributes["service.name"] == "muster"
    assert attributes["service.version"] and attributes["telemetry.sdk.name"] == "opentelemetry"
    otel_env.setenv("OTEL_SERVICE_NAME", "muster-eu")
    otel_env.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=staging,team=support")
    attributes = telemetry.resource().attributes
    assert attributes["service.name"] == "muster-eu"
    assert attributes["deployment.environment"] == "staging" and attributes["team"] == "support"
    otel_env.delenv("OTEL_SERVICE_NAME")
    otel_env.setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attributes")
    assert telemetry.resource().attributes["service.name"] == "from-attributes"


def test_a_refusing_collector_ends_the_shutdown_at_once(otel_env: pytest.MonkeyPatch) -> None:
    """The export is a batch processor with a bounded queue and a short timeout, not the SDK's
    30 s exit hook; a collector that refuses connections ends the shutdown on that event (the
    exporter is shut down, which ends its retries), however long the budget."""
    otel_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    otel_env.setenv(telemetry.SHUTDOWN_ENV, str(HANG_TIMEOUT_S * 1000))
    assert telemetry.enabled()
    telemetry.export_run("otel-down", "r1", EVENTS, ended_at=2.0)
    export = telemetry._export
    assert export is not None
    assert isinstance(export.processor, BatchSpanProcessor)
    assert export.processor._batch_processor._max_queue_size == telemetry.MAX_QUEUE_SIZE
    assert export.timeout_s == telemetry.DEFAULT_EXPORT_TIMEOUT_S
    assert telemetry._provider._atexit_handler is None  # not the SDK's unbounded exit hook
    assert telemetry.shutdown() == "refused"
    assert export.refused.is_set() and export.exporter._shutdown
    assert telemetry.shutdown() == "refused"  # once


def test_a_hung_collector_holds_neither_a_run_nor_the_shutdown(
    otel_env: pytest.MonkeyPatch,
) -> None:
    """A collector that takes the connection and never answers: a run's spans are handed to
    the processor's thread (the next run's export returns while the first is still held),
    and the shutdown gives up after its budget (`MUSTER_OTEL_SHUTDOWN_MS`)."""
    Collector.holding.clear()
    Collector.release.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        otel_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
        otel_env.setenv("OTEL_BSP_SCHEDULE_DELAY", "1")
        otel_env.setenv(telemetry.SHUTDOWN_ENV, "50")
        telemetry.export_run("otel-hung", "r1", EVENTS, ended_at=2.0)
        assert Collector.holding.wait(HANG_TIMEOUT_S)
        export = telemetry._export
        assert export is not None and export.in_flight == 1
        telemetry.export_run("otel-hung", "r2", EVENTS, ended_at=2.0)  # no flush: returns
        assert export.in_flight == 1 and not Collector.release.is_set()
        assert telemetry.shutdown() == "timed_out"
        assert export.exporter._shutdown
    finally:
        Collector.release.set()
        server.shutdown()
        server.server_close()
