"""The run trace: one JSON line per node and per worker step, one file per thread.

Every event carries the thread id, the run id, the superstep, the worker, a digest of its
packet, the tool, the outcome and the duration, so reading a run later is one query
(`jq 'select(.worker=="policy")'`), not interleaved prints.

With redaction on (the default, workers/redaction.py), each line is written redacted: the
customer names in its tool results are learnt first, then every e-mail, phone, card number
and known name in its fields is replaced; the original of each field that changed is sealed
in the line's `sealed` field (graph/trace_seal.py), which `read_trace` opens for replay.
OpenTelemetry gets the redacted lines.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graph import telemetry, trace_seal
from graph.trace_events import RECORDING_EVENT
from servers.digests import short_digest
from workers import redaction

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage, BaseMessage
    from pydantic import BaseModel

    from workers.hub import ToolCallResult

DEFAULT_TRACE_DIR = Path(__file__).resolve().parent.parent / "var" / "traces"
"""Where traces go unless `MUSTER_TRACE_DIR` or `--trace-dir` says otherwise."""


def trace_dir() -> Path:
    """The trace directory for this process."""
    return Path(os.environ.get("MUSTER_TRACE_DIR") or DEFAULT_TRACE_DIR)


THREAD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
"""Thread ids name files (traces), so they are plain names: no slashes, no '..' tricks."""


def trace_path(thread_id: str, directory: Path | None = None) -> Path:
    """The JSONL file for one thread."""
    if not THREAD_ID.match(thread_id):
        raise ValueError(f"thread id {thread_id!r} is not a plain name")
    return (directory or trace_dir()) / f"{thread_id}.jsonl"


class TraceWriter:
    """Appends events for one run of one thread.

    The file stays open and each event is one small `write` + `flush` on an append-mode
    handle: cheap enough to do inline in async nodes (no thread hop), and whole lines, so a
    process killed mid-run leaves a readable trace.
    """

    def __init__(self, thread_id: str, *, directory: Path | None = None, run_id: str | None = None):
        self.thread_id = thread_id
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.path = trace_path(thread_id, directory)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("a", encoding="utf-8")
        # Kept only when OpenTelemetry is on: the run's spans are built from them at close.
        self._events: list[dict[str, Any]] | None = [] if telemetry.enabled() else None

    def emit(self, event: str, **fields: Any) -> None:
        """Write one event; `fields` typically hold superstep, node, worker, packet, tool,
        outcome and duration_ms."""
        record = {
            "ts": round(time.time(), 4),
            "thread_id": self.thread_id,
            "run_id": self.run_id,
            "event": event,
            **fields,
        }
        redactor = redaction.active()
        if redactor is not None:
            record = self._redacted(redactor, record)
        self._file.write(json.dumps(record, default=str) + "\n")
        self._file.flush()
        if self._events is not None:
            self._events.append(record)

    def _redacted(self, redactor: redaction.Redactor, record: dict[str, Any]) -> dict[str, Any]:
        """`record` redacted, with the originals of the fields that changed sealed."""
        redactor.learn(record)
        clear = redactor.value(record)
        changed = {k: v for k, v in record.items() if clear[k] is not v and clear[k] != v}
        if not changed:
            return record
        return {**clear, trace_seal.SEALED: trace_seal.seal(changed, thread_id=self.thread_id)}

    def close(self) -> None:
        """Close the file; with OpenTelemetry on, export the run's spans (graph/telemetry.py)."""
        self._file.close()
        if self._events is not None:
            events, self._events = self._events, None
            telemetry.export_run(self.thread_id, self.run_id, events, ended_at=time.time())


def current_trace() -> TraceWriter | None:
    """The trace of the graph run the caller is in (its services' `trace`), or None outside a
    run or untraced: for code a node calls without handing it the trace (a planner is called
    as `planner(request, roster)`)."""
    from langgraph.runtime import get_runtime  # here: reading a trace needs no LangGraph

    try:
        context = get_runtime().context
    except RuntimeError:  # not inside a graph run
        return None
    trace = getattr(context, "trace", None)
    return trace if isinstance(trace, TraceWriter) else None


@cache
def _schema_tag(schema: type[BaseModel]) -> str:
    return f"{schema.__name__}#{short_digest(schema.model_json_schema())}"


def structured_request(messages: Sequence[BaseMessage], schema: type[BaseModel]) -> str:
    """The digest of a structured-output model request, for recording and replay: a worker
    turn's digest (`request_digest`), with the schema asked for (its name and a digest of its
    JSON schema) where a turn has the names of the tools offered."""
    from workers.models import request_digest  # here: reading a trace needs no LangChain

    return request_digest(messages, [_schema_tag(schema)])


def record_model_call(
    trace: TraceWriter | None,
    request: str,
    *,
    node: str,
    reply: AIMessage | None = None,
    error: BaseException | None = None,
    started: float | None = None,
    model: str | None = None,
) -> None:
    """Record one model call the supervisor made itself, as a worker's model turn is recorded:
    the request's digest, and the reply (content, tool calls, usage) with its tokens, or the
    error (no-op untraced). `started` (`time.monotonic()` before the call) and `model` (its
    name) make it a `chat` span in the OpenTelemetry export (`graph.telemetry`)."""
    if trace is None:
        return
    from workers.models import recorded_reply

    timing: dict[str, Any] = {}
    if started is not None:
        timing["duration_ms"] = round((time.monotonic() - started) * 1000, 1)
    if model:
        timing["model"] = model
    if reply is None:
        failure = error or ValueError("no reply")
        trace.emit(
            RECORDING_EVENT,
            kind="model",
            node=node,
            outcome="error",
            request=request,
            error=[type(failure).__name__, str(failure)],
            **timing,
        )
        return
    usage: dict[str, Any] = dict(reply.usage_metadata or {})
    trace.emit(
        RECORDING_EVENT,
        kind="model",
        node=node,
        outcome="final",
        **timing,
        tokens=int(usage.get("total_tokens", 0)),
        input_tokens=int(usage.get("input_tokens", 0)),
        output_tokens=int(usage.get("output_tokens", 0)),
        request=request,
        response=recorded_reply(reply),
    )


def record_call(
    trace: TraceWriter | None,
    tool: str,
    args: dict[str, Any],
    result: ToolCallResult,
    *,
    node: str,
) -> None:
    """Record one hub call the supervisor made itself (no-op untraced)."""
    if trace is not None:
        trace.emit(
            RECORDING_EVENT,
            node=node,
            tool=tool,
            args=args,
            outcome=str(result.outcome),
            result=result.text,
        )


def read_trace(path: Path) -> list[dict[str, Any]]:
    """All events in a trace file (a torn last line, from a kill, is skipped), with their
    sealed originals opened when the key is at hand (graph/trace_seal.py): what reads them
    must redact what it shows again."""
    events: list[dict[str, Any]] = []
    if not path.exists():
        return events
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and trace_seal.SEALED in event:
            event = trace_seal.opened(event)
        events.append(event)
    return events
