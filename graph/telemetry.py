"""OpenTelemetry traces of a run, following the GenAI semantic conventions; off by default.

When the standard OpenTelemetry environment asks for traces (`OTEL_EXPORTER_OTLP_ENDPOINT` or
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_TRACES_EXPORTER` other than `none`; and not
`OTEL_SDK_DISABLED=true`), each run's trace events (graph/trace.py) become spans when the run
ends, exported by the official SDK over OTLP/HTTP:

    invoke_workflow muster         the run; gen_ai.conversation.id = the thread id
      invoke_agent <worker>        one per packet (a dispatch), failed ones with ERROR status
        chat <model>               one per model turn, with gen_ai.usage.* token counts
        execute_tool <tool>        one per MCP call, gen_ai.tool.name
      chat <model>                 the supervisor's own model calls (LLM planner, writer)
      <node>                       plan, collect, recover, verify, approve, act, synthesize
    approval events                `approval.pause` (a run stops for a human) and
                                   `approval.resume` (a decision), on the workflow span

Why spans are built at the end of a run from the trace events, not opened live: the events
already carry every start, duration, packet and outcome (the trace is the one record of a
run), so the hot path pays nothing when telemetry is off and one list append per event when
it is on; a process killed mid-run exports no spans for that run (its JSONL trace has it all).
The SDK is imported only when telemetry is on (`pip install 'muster[otel]'`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

_provider: Any = None
"""The tracer provider spans go to: set by `use_provider`, else built from the environment."""

WORKFLOW = "muster"


def enabled() -> bool:
    """Whether the OpenTelemetry environment asks for traces (or a provider was given)."""
    if _provider is not None:
        return True
    if os.environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return False
    exporter = os.environ.get("OTEL_TRACES_EXPORTER", "").lower()
    if exporter == "none":
        return False
    return bool(
        exporter
        or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def use_provider(provider: Any) -> None:
    """Send spans to `provider` (an SDK TracerProvider), e.g. one with an in-memory exporter
    in a test; None goes back to the environment."""
    global _provider
    _provider = provider


def _tracer() -> Any:
    global _provider
    if _provider is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        # The SDK reads OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES and the exporter's
        # OTEL_EXPORTER_OTLP_* settings itself.
        provider = TracerProvider(resource=Resource.create({"service.name": WORKFLOW}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        _provider = provider
    return _provider.get_tracer("muster")


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def export_run(
    thread_id: str, run_id: str, events: Sequence[dict[str, Any]], *, ended_at: float
) -> None:
    """Turn one run's trace events into spans and hand them to the exporter."""
    if not events:
        return
    from opentelemetry import trace
    from opentelemetry.trace import Status, StatusCode

    from graph.trace import RECORDING_EVENT  # here: graph.trace imports this module

    tracer = _tracer()
    started_at = min(_start(e) for e in events)
    workflow = tracer.start_span(
        f"invoke_workflow {WORKFLOW}",
        start_time=_ns(started_at),
        attributes={
            "gen_ai.operation.name": "invoke_workflow",
            "gen_ai.conversation.id": thread_id,
            "muster.run_id": run_id,
        },
    )
    in_workflow = trace.set_span_in_context(workflow)
    packets: dict[str, Any] = {}
    for event in sorted(events, key=_start):
        if event.get("event") == "node" and event.get("node") == "dispatch":
            failed = event.get("outcome") != "ok"
            span = tracer.start_span(
                f"invoke_agent {event.get('worker')}",
                context=in_workflow,
                start_time=_ns(_start(event)),
                attributes={
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": str(event.get("worker")),
                    "muster.packet_id": str(event.get("packet_id")),
                    "muster.outcome": str(event.get("outcome")),
                },
            )
            if failed:
                span.set_status(Status(StatusCode.ERROR, str(event.get("reason") or "failed")))
            span.end(end_time=_ns(float(event["ts"])))
            packets[str(event.get("packet_id"))] = span
    for event in events:
        if event.get("event") == "worker_step":
            parent = packets.get(str(event.get("packet_id")), workflow)
            _step_span(tracer, trace.set_span_in_context(parent), event)
        elif event.get("event") == RECORDING_EVENT and event.get("kind") == "model":
            # The supervisor's own model calls (the LLM planner's, the answer writer's).
            _step_span(tracer, in_workflow, event)
        elif event.get("event") == "node" and event.get("node") != "dispatch":
            _node_span(tracer, in_workflow, workflow, event)
    workflow.end(end_time=_ns(max(ended_at, started_at)))
    force_flush = getattr(_provider, "force_flush", None)
    if force_flush is not None:
        force_flush()


def _start(event: dict[str, Any]) -> float:
    return float(event["ts"]) - float(event.get("duration_ms") or 0) / 1000


def _step_span(tracer: Any, context: Any, event: dict[str, Any]) -> None:
    if event.get("kind") == "model":
        attributes: dict[str, Any] = {"gen_ai.operation.name": "chat"}
        for key in ("input_tokens", "output_tokens"):
            if event.get(key) is not None:
                attributes[f"gen_ai.usage.{key}"] = int(event[key])
        if event.get("model"):
            attributes["gen_ai.request.model"] = str(event["model"])
        if event.get("cost_usd") is not None:  # money, from workers/cost.py's price table
            attributes["muster.cost_usd"] = float(event["cost_usd"])
        name = f"chat {event.get('model') or event.get('worker') or event.get('node')}"
    elif event.get("kind") == "tool":
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": str(event.get("tool")),
            "muster.outcome": str(event.get("outcome")),
        }
        name = f"execute_tool {event.get('tool')}"
    else:
        return
    span = tracer.start_span(
        name, context=context, start_time=_ns(_start(event)), attributes=attributes
    )
    span.end(end_time=_ns(float(event["ts"])))


def _node_span(tracer: Any, context: Any, workflow: Any, event: dict[str, Any]) -> None:
    node, outcome = str(event.get("node")), str(event.get("outcome") or "")
    if node == "approve":
        if outcome == "waiting":
            workflow.add_event(
                "approval.pause",
                {"muster.tool": str(event.get("tool"))},
                timestamp=_ns(float(event["ts"])),
            )
            return
        workflow.add_event(
            "approval.resume",
            {"muster.decision": outcome, "muster.tool": str(event.get("tool"))},
            timestamp=_ns(float(event["ts"])),
        )
    span = tracer.start_span(
        node,
        context=context,
        start_time=_ns(_start(event)),
        attributes={"muster.node": node, "muster.outcome": outcome},
    )
    span.end(end_time=_ns(float(event["ts"])))
