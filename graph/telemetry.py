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

The resource is the SDK's own detection (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`),
`service.name` "muster" only when the environment names no service. Export is off the
command's path: a `BatchSpanProcessor` with a bounded queue sends from its own thread, each
export bounded by a short timeout (2 s unless `OTEL_EXPORTER_OTLP_TIMEOUT` says), and the end
of a command waits for what is queued at most `MUSTER_OTEL_SHUTDOWN_MS` (500 ms), and not at
all once the collector has refused a connection (`shutdown`). Every attribute is redacted
(workers/redaction.py) as the trace lines the spans come from already are.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Sequence
from typing import Any

from graph.trace_events import RECORDING_EVENT
from workers.redaction import redact, redact_text

_provider: Any = None
"""The tracer provider spans go to: set by `use_provider`, else built from the environment."""
_export: _Export | None = None
"""The exporter and processor Muster built from the environment (None with `use_provider`)."""

WORKFLOW = "muster"

SHUTDOWN_ENV = "MUSTER_OTEL_SHUTDOWN_MS"
DEFAULT_SHUTDOWN_MS = 500
"""The most a command waits at its end for its spans to leave (`shutdown`)."""
DEFAULT_EXPORT_TIMEOUT_S = 2.0
"""One export's timeout, retries included, unless `OTEL_EXPORTER_OTLP[_TRACES]_TIMEOUT` says
(the SDK's own default is 10 s); it runs on the processor's thread, never on a command's."""
MAX_QUEUE_SIZE = 2048
"""Spans waiting for the exporter; more are dropped (and counted by the SDK), never waited on."""
SCHEDULE_DELAY_MS = 500
"""How long a finished span waits to be sent with others."""


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
    global _provider, _export
    _provider = provider
    _export = None


def resource() -> Any:
    """The resource every span carries: the SDK's own detection (`Resource.create`:
    `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPERIMENTAL_RESOURCE_DETECTORS`,
    the SDK's telemetry.* attributes), with `service.name` "muster" when neither names the
    service, and `service.version` the code's version unless the environment gives one."""
    from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource

    from graph.versions import code_version

    detected = Resource.create()
    attributes = dict(detected.attributes)
    if str(attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        attributes[SERVICE_NAME] = WORKFLOW
    attributes.setdefault(SERVICE_VERSION, code_version())
    return Resource(attributes, detected.schema_url)


def _env_float(*names: str) -> float | None:
    for name in names:
        raw = os.environ.get(name, "").strip()
        if raw:
            try:
                return float(raw)
            except ValueError:
                continue
    return None


def shutdown_budget_ms() -> float:
    """`MUSTER_OTEL_SHUTDOWN_MS`, else `DEFAULT_SHUTDOWN_MS`."""
    value = _env_float(SHUTDOWN_ENV)
    return DEFAULT_SHUTDOWN_MS if value is None or value < 0 else value


class _Export:
    """The exporter Muster builds: OTLP/HTTP behind a `BatchSpanProcessor` (a bounded queue,
    exported on the processor's own thread), with a `requests` session that says when the
    collector refused a connection (`refused`), so the end of a command need not wait out a
    collector that is not there."""

    def __init__(self) -> None:
        import requests
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        self.refused = threading.Event()
        """A connection to the collector was refused (or could not be made)."""
        self.wake = threading.Event()
        """Set when `refused` is, or when a shutdown finished: what `shutdown` waits on."""
        self.in_flight = 0
        """Export requests under way (on the processor's thread)."""
        export = self

        class WatchedSession(requests.Session):
            def request(self, *args: Any, **kwargs: Any) -> Any:
                export.in_flight += 1
                try:
                    return super().request(*args, **kwargs)
                except requests.ConnectionError:
                    export.refused.set()
                    export.wake.set()
                    raise
                finally:
                    export.in_flight -= 1

        timeout = _env_float("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")
        self.timeout_s = DEFAULT_EXPORT_TIMEOUT_S if timeout is None else timeout
        self.exporter = OTLPSpanExporter(timeout=self.timeout_s, session=WatchedSession())
        self.processor = BatchSpanProcessor(
            self.exporter,
            max_queue_size=int(_env_float("OTEL_BSP_MAX_QUEUE_SIZE") or MAX_QUEUE_SIZE),
            schedule_delay_millis=_env_float("OTEL_BSP_SCHEDULE_DELAY") or SCHEDULE_DELAY_MS,
            export_timeout_millis=self.timeout_s * 1000,
        )
        self.outcome: str | None = None
        """How `shutdown` ended: flushed, refused (the collector is down), timed_out."""


def _tracer() -> Any:
    global _provider, _export
    if _provider is None:
        from opentelemetry.sdk.trace import TracerProvider

        export = _Export()
        # Not the SDK's own exit hook: it would wait up to 30 s for a collector that is down.
        provider = TracerProvider(resource=resource(), shutdown_on_exit=False)
        provider.add_span_processor(export.processor)
        _provider, _export = provider, export
        atexit.register(shutdown)
    return _provider.get_tracer("muster")


def shutdown(budget_ms: float | None = None) -> str | None:
    """Send the spans still queued, waiting at most `budget_ms` (`shutdown_budget_ms`), and
    not at all once the collector has refused a connection: then the exporter is shut down,
    which ends its retries, and the spans left are dropped. Returns how it ended (`flushed`,
    `refused`, `timed_out`), or None when Muster built no exporter. Idempotent; the CLI calls
    it when a command ends, and it is registered to run at exit."""
    export = _export
    if export is None:
        return None
    if export.outcome is not None:
        return export.outcome
    budget = shutdown_budget_ms() if budget_ms is None else budget_ms
    done = threading.Event()

    def flush() -> None:
        # The processor's shutdown sends what is queued and joins its thread; this thread
        # is not waited on past the budget (below), and `exporter.shutdown()` ends its wait.
        export.processor.shutdown()
        done.set()
        export.wake.set()

    threading.Thread(target=flush, name="muster-otel-shutdown", daemon=True).start()
    export.wake.wait(budget / 1000)
    if done.is_set() and not export.refused.is_set():
        export.outcome = "flushed"
    else:
        export.outcome = "refused" if export.refused.is_set() else "timed_out"
        export.exporter.shutdown()  # ends a retry's back-off wait; the thread then ends
    return export.outcome


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

    tracer = _tracer()
    started_at = min(_start(e) for e in events)
    workflow = tracer.start_span(
        f"invoke_workflow {WORKFLOW}",
        start_time=_ns(started_at),
        attributes=redact(
            {
                "gen_ai.operation.name": "invoke_workflow",
                "gen_ai.conversation.id": thread_id,
                "muster.run_id": run_id,
            }
        ),
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
                attributes=redact(
                    {
                        "gen_ai.operation.name": "invoke_agent",
                        "gen_ai.agent.name": str(event.get("worker")),
                        "muster.packet_id": str(event.get("packet_id")),
                        "muster.outcome": str(event.get("outcome")),
                    }
                ),
            )
            if failed:
                reason = redact_text(str(event.get("reason") or "failed"))
                span.set_status(Status(StatusCode.ERROR, reason))
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
    # No flush here: the batch processor sends the spans from its own thread; a command's
    # end waits for them at most `shutdown_budget_ms`, and not at all for a refusing collector.


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
        name, context=context, start_time=_ns(_start(event)), attributes=redact(attributes)
    )
    span.end(end_time=_ns(float(event["ts"])))


def _node_span(tracer: Any, context: Any, workflow: Any, event: dict[str, Any]) -> None:
    node, outcome = str(event.get("node")), str(event.get("outcome") or "")
    if node == "approve":
        if outcome == "waiting":
            workflow.add_event(
                "approval.pause",
                redact({"muster.tool": str(event.get("tool"))}),
                timestamp=_ns(float(event["ts"])),
            )
            return
        workflow.add_event(
            "approval.resume",
            redact({"muster.decision": outcome, "muster.tool": str(event.get("tool"))}),
            timestamp=_ns(float(event["ts"])),
        )
    span = tracer.start_span(
        node,
        context=context,
        start_time=_ns(_start(event)),
        attributes=redact({"muster.node": node, "muster.outcome": outcome}),
    )
    span.end(end_time=_ns(float(event["ts"])))
