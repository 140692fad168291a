"""What `muster replay` serves a run from: the recording in a thread's trace, a chat model
that answers from it, and a hub that answers tool calls from it and never executes a write.

A traced run records Muster's two boundaries as it goes (no extra file, no extra pass):
each model turn's `worker_step` event carries the request's digest and the response (or the
error), each worker tool call's event its arguments and result, and the supervisor's own
calls are `recording` events: its hub calls (shared facts, the refund re-read, an executed
write; `graph.trace.record_call`) and its model calls, the LLM planner's and the answer
writer's, in a worker turn's format (`graph.trace.record_model_call`; their request digest
covers the messages and the structured-output schema). `load_recording` reads them back.

The model side serves, per recorded request digest, that request's recorded replies in
order (the last repeats), as LangChain's `GenericFakeChatModel` would but without calling its
private `_generate`; a structured-output request (`with_structured_output`) is served the
same way and its reply parsed into the schema. The
tool side is a `ToolHub` whose one execution step (`_run`) answers from the recording; the
hub's own checks (allowlist, unknown tool, read vs write) still run first, on the current
catalogue.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, convert_to_messages
from langchain_core.outputs import ChatGeneration, ChatResult, LLMResult
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel

from graph.planners import Planner
from graph.planners.llm import LlmPlanner
from graph.trace import read_trace, structured_request
from graph.trace_events import RECORDING_EVENT
from graph.trace_seal import SEALED
from workers.contracts import canonical_json
from workers.hub import CallOutcome, ToolCallResult, ToolHub
from workers.hub.catalogue import CatalogueEntry
from workers.models import ModelFactory, replayed_reply, request_digest, writes_prose

VOLATILE_WRITE_ARGS = ("approval", "idempotency_key", "requested_by")
"""Arguments of a write that name the thread or the moment (the token, the key, the asker):
a replay on a new thread matches the write without them."""


def call_key(tool: str, args: dict[str, Any], *, writes: bool = False) -> str:
    """How a recorded tool call is found again: its exact name and canonical arguments."""
    if writes:
        args = {k: v for k, v in args.items() if k not in VOLATILE_WRITE_ARGS}
    return tool + canonical_json(args)


@dataclass
class Recording:
    """One thread's recorded model turns and tool calls, in the order they happened."""

    models: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Request digest → the recorded replies (`{"response": ...}` or `{"error": [type, text]}`)."""
    tools: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """`call_key` → the recorded (outcome, result text) of each call with those arguments."""
    runs: set[str] = field(default_factory=set)
    """The run ids in the trace: more than one means the thread was resumed or answered."""
    supervisor_tokens: dict[str, int] = field(default_factory=dict)
    """Tokens of the supervisor's own model calls in the first run, by node (`plan`,
    `synthesize`): a replay is one run, compared with the original's first."""
    still_sealed: int = 0
    """Lines whose redacted originals could not be opened (graph/trace_seal.py: their key
    is not at hand): they are served as redacted, so the replay may differ for that."""


def load_recording(path: Path) -> Recording:
    """The recording in one thread's trace file (every run of the thread, in order)."""
    recording = Recording()
    first_run: str | None = None
    for event in read_trace(path):
        recording.still_sealed += SEALED in event
        kind = event.get("event")
        run = str(event.get("run_id"))
        recording.runs.add(run)
        first_run = first_run or run
        if kind == RECORDING_EVENT and event.get("kind") == "model" and run == first_run:
            node = str(event.get("node"))
            tokens = int(event.get("tokens") or 0)
            recording.supervisor_tokens[node] = recording.supervisor_tokens.get(node, 0) + tokens
        if kind in ("worker_step", RECORDING_EVENT) and event.get("kind") == "model":
            if not event.get("request"):
                continue
            entry = (
                {"error": event["error"]}
                if event.get("error")
                else {"response": event.get("response") or {}}
            )
            recording.models.setdefault(str(event["request"]), []).append(entry)
        elif (kind == "worker_step" and event.get("kind") == "tool" and "result" in event) or (
            kind == RECORDING_EVENT
        ):
            args = event.get("args") or {}
            tool, pair = (
                str(event.get("tool")),
                (str(event.get("outcome")), str(event.get("result"))),
            )
            # Both forms: the hub says at replay time whether the tool is a write.
            for key in {call_key(tool, args), call_key(tool, args, writes=True)}:
                recording.tools.setdefault(key, []).append(pair)
    return recording


class ModelMiss(Exception):
    """A model request whose digest is not in the recording (`--strict`)."""


_ERRORS: dict[str, type[Exception]] = {}


def _recorded_error(name: str, text: str) -> Exception:
    """An exception that reads as the recorded one did (`model call failed: Name: text`)."""
    if name not in _ERRORS:
        _ERRORS[name] = type(name, (Exception,), {})
    return _ERRORS[name](text)


class _Served(Iterator[AIMessage]):
    """The recorded replies to one request: each call takes the next, the last repeats, and
    a recorded error is raised again."""

    def __init__(self, entries: Sequence[dict[str, Any]]) -> None:
        self.entries, self.at = entries, 0

    def __next__(self) -> AIMessage:
        entry = self.entries[min(self.at, len(self.entries) - 1)]
        self.at += 1
        if "error" in entry:
            name, text = entry["error"]
            raise _recorded_error(str(name), str(text))
        return replayed_reply(entry["response"])


@dataclass
class ThreadReplay:
    """One thread being replayed: its recording, the mode, and what was not in it."""

    recording: Recording
    """What the original run recorded."""
    strict: bool = False
    """A model request or tool call missing from the recording is an error, not a fallback."""
    model_misses: list[str] = field(default_factory=list)
    """Model requests not in the recording (digests), in order."""
    unrecorded_calls: list[str] = field(default_factory=list)
    """Tool calls not in the recording: refused (strict, or a write) or read live."""
    _tool_cursor: dict[str, int] = field(default_factory=dict)

    def tool_result(self, key: str) -> tuple[str, str] | None:
        """The next recorded (outcome, text) for `key`; the last repeats."""
        recorded = self.recording.tools.get(key)
        if not recorded:
            return None
        at = self._tool_cursor.get(key, 0)
        self._tool_cursor[key] = at + 1
        return recorded[min(at, len(recorded) - 1)]


REPLAYING: ContextVar[ThreadReplay | None] = ContextVar("muster_replaying", default=None)
"""The thread a replay task is serving; set around each replayed run (the graph's node tasks
inherit it), so one hub serves every thread of a batch from its own recording."""


class ReplayChatModel(BaseChatModel):
    """A chat model answering each request from the recording, by its digest, through one
    `_Served` stream per recorded request. A request not recorded raises `ModelMiss`
    under `--strict` (a worker reports it as `unavailable`, the LLM planner as a `PlannerCallError`,
    the answer writer leaves the composed answer), else goes to `fallback`."""

    replay: Any
    """The `ThreadReplay` served (typed loosely: pydantic does not know the dataclass)."""
    fallback: BaseChatModel
    """The model for requests the recording lacks (non-strict); the offline model by default."""
    served: dict[str, _Served] = {}
    """The recorded replies per digest, made on first use."""

    @property
    def _llm_type(self) -> str:
        return "muster-replay"

    def bind_tools(
        self, tools: Sequence[Any], **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Tools bound as providers take them (OpenAI format), as the offline model does."""
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def with_structured_output(
        self, schema: dict[str, Any] | type, *, include_raw: bool = False, **kwargs: Any
    ) -> Runnable[LanguageModelInput, dict[str, Any] | BaseModel]:
        """The recorded reply to a structured-output request, parsed into `schema` (a pydantic
        model: what the LLM planner and the answer writer ask for), from its JSON content or
        its first tool call's arguments, whichever way the provider answered; with
        `include_raw`, as LangChain shapes it (`raw`, `parsed`, `parsing_error`)."""
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise NotImplementedError("a replay serves structured output into pydantic models")
        model: type[BaseModel] = schema

        async def ask(given: LanguageModelInput) -> dict[str, Any] | BaseModel:
            messages = _as_messages(given)
            served = self._served(structured_request(messages, model))
            if served is None:
                fallback = self.fallback.with_structured_output(
                    model, include_raw=include_raw, **kwargs
                )
                return await fallback.ainvoke(messages)
            raw = next(served)
            if not include_raw:
                return _parsed(raw, model)
            try:
                return {"raw": raw, "parsed": _parsed(raw, model), "parsing_error": None}
            except ValueError as error:
                return {"raw": raw, "parsed": None, "parsing_error": error}

        return RunnableLambda(ask, name="ReplayStructuredOutput")

    def _served(self, digest: str) -> _Served | None:
        """`digest`'s recorded replies; None when the recording lacks it (counted as a miss;
        under `--strict` a `ModelMiss`)."""
        replay: ThreadReplay = self.replay
        entries = replay.recording.models.get(digest)
        if entries:
            if digest not in self.served:
                self.served[digest] = _Served(entries)
            return self.served[digest]
        replay.model_misses.append(digest)
        if replay.strict:
            raise ModelMiss(f"model request {digest} is not in the recording (--strict)")
        return None

    def _recorded(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> _Served | None:
        tools = kwargs.get("tools") or []
        return self._served(request_digest(messages, [t.get("function", t)["name"] for t in tools]))

    # `_generate` / `_agenerate` are LangChain's documented hooks for a custom chat model (the
    # contract: tests/test_pinned_internals.py); the fallback is asked through its public
    # `generate` / `agenerate`.
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        served = self._recorded(messages, kwargs)
        if served is not None:
            return ChatResult(generations=[ChatGeneration(message=next(served))])
        return _chat_result(self.fallback.generate([messages], stop, **kwargs))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        # No thread hop: serving a recorded reply is a dict lookup.
        served = self._recorded(messages, kwargs)
        if served is not None:
            return ChatResult(generations=[ChatGeneration(message=next(served))])
        return _chat_result(await self.fallback.agenerate([messages], stop, **kwargs))


def _as_messages(given: LanguageModelInput) -> list[BaseMessage]:
    """A model's input as its messages, as a chat model reads it (a string is one human
    message), with LangChain's public converters."""
    if isinstance(given, PromptValue):
        return given.to_messages()
    if isinstance(given, str):
        return [HumanMessage(content=given)]
    return convert_to_messages(given)


def _chat_result(result: LLMResult) -> ChatResult:
    """The one prompt's `ChatResult` of a `generate` call."""
    generations = [g for g in result.generations[0] if isinstance(g, ChatGeneration)]
    return ChatResult(generations=generations, llm_output=result.llm_output)


def _parsed(reply: AIMessage, schema: type[BaseModel]) -> BaseModel:
    """A recorded structured reply as `schema`: JSON content (OpenAI's structured outputs) or
    the first tool call's arguments (providers that answer by function calling)."""
    if reply.tool_calls:
        return schema.model_validate(reply.tool_calls[0]["args"])
    return schema.model_validate_json(str(reply.content))


def replay_factory(replay: ThreadReplay, *, fallback: ModelFactory) -> ModelFactory:
    """Models for one replayed thread: each answers from the recording, `fallback`'s model
    for what it lacks (non-strict). The answer writer is asked only if `fallback` would have
    written prose (`writes_prose`): Muster's own models leave the answer to code."""
    models: dict[str, BaseChatModel] = {}

    def model(worker: str) -> BaseChatModel:
        if worker not in models:
            own = fallback(worker)
            composes = worker == "synthesizer" and not writes_prose(own)
            models[worker] = own if composes else ReplayChatModel(replay=replay, fallback=own)
        return models[worker]

    return model


def replay_planner(planner: Planner, replay: ThreadReplay) -> Planner:
    """`planner` for one replayed thread: an LLM planner answers from the recording (its own
    model for what it lacks, non-strict); any other planner is code, and runs as it is."""
    if isinstance(planner, LlmPlanner):
        return planner.with_model(ReplayChatModel(replay=replay, fallback=planner.model))
    return planner


REFUSED_WRITE = "ERROR: {name}: a replay never executes a write, and this one is not recorded"
NOT_RECORDED = "ERROR: {name}: this call is not in the recording (--strict)"


class ReplayHub(ToolHub):
    """A `ToolHub` whose one execution step answers from the recording of the thread being
    replayed (`REPLAYING`). A write is answered from the recording or refused, never run; an
    unrecorded read is refused under `--strict`, else read live and flagged. The servers
    still start on demand, for their current catalogue (what workers are offered)."""

    async def _run(
        self, entry: CatalogueEntry, args: dict[str, Any], timeout_s: float | None, started: float
    ) -> ToolCallResult:
        name, writes = entry.spec.name, entry.spec.writes
        replay = REPLAYING.get()
        key = call_key(name, args, writes=writes) if isinstance(args, dict) else name
        recorded = replay.tool_result(key) if replay is not None else None
        if recorded is not None:
            outcome, text = recorded
            return ToolCallResult(name, CallOutcome(outcome), text, 0.0)
        if replay is not None:
            replay.unrecorded_calls.append(f"{name}({canonical_json(args)})")
        if writes or replay is None:
            return self._result(
                name, CallOutcome.NOT_ALLOWED, REFUSED_WRITE.format(name=name), started
            )
        if replay.strict:
            text = NOT_RECORDED.format(name=name)
            return self._result(name, CallOutcome.TOOL_ERROR, text, started)
        return await super()._run(entry, args, timeout_s, time.perf_counter())
