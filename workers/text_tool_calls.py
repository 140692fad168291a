"""Tool calls a model wrote as text: recognised, so they run through the same allowlist.

Small instruct models served by llama.cpp or Ollama often answer a tool-calling request
with the call written in the message (`{"name": ..., "arguments": {...}}`, a Hermes/Qwen
`<tool_call>` block, a fenced JSON block, OpenAI's own `{"function": {...}}` shape) instead
of in the API's `tool_calls` field. Read as a final answer, such a worker would be "done"
without having called anything. This module finds those calls so the worker loop can run
them exactly as native calls: mapped back from aliases, checked by the hub's allowlist, a
name that was not offered refused by the hub with its own reason.

Why not LangChain's parsers: `langchain_core.utils.json.parse_json_markdown` reads one
fenced block, and the tool-call output parsers read `additional_kwargs["tool_calls"]`, the
field these models leave empty. Here every JSON value in the text is tried with the
standard library's `raw_decode`, which also finds a call inside prose or tags.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from langchain_core.messages.tool import ToolCall

NAME_KEYS = ("name", "tool", "tool_name", "function_name")
"""Keys a written call names its tool under."""
ARGUMENT_KEYS = ("arguments", "args", "parameters", "tool_input", "input")
"""Keys a written call puts its arguments under."""
MAX_TEXT_CALLS = 8
"""At most this many calls are read from one message: a model listing more is not calling."""


WRAPPERS = re.compile(r"</?tool_calls?>|```(?:json)?|<\|[a-z_]+\|>|\s+", re.IGNORECASE)
"""What models wrap written calls in (tags, fences, chat-template tokens): not prose."""
MAX_PROSE = 40
"""Characters of other text a message may hold and still be nothing but calls."""


def _json_values(text: str) -> Iterator[tuple[Any, int, int]]:
    """Every top-level JSON object or array in `text` with its span, in order."""
    decoder = json.JSONDecoder()
    i = 0
    while i < len(text):
        start = min((p for p in (text.find("{", i), text.find("[", i)) if p >= 0), default=-1)
        if start < 0:
            return
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            i = start + 1
            continue
        yield value, start, end
        i = end


def _arguments(raw: Any) -> dict[str, Any] | None:
    """A call's arguments as an object: OpenAI's shape sends them as a JSON string."""
    if raw is None:
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            return None
    return raw if isinstance(raw, dict) else None


def _calls_in(value: Any) -> Iterator[tuple[str, dict[str, Any] | None]]:
    """(name, arguments) for each call shape in a decoded JSON value; arguments are None
    when the call names a tool but its arguments are not an object."""
    if isinstance(value, list):
        for item in value:
            yield from _calls_in(item)
        return
    if not isinstance(value, dict):
        return
    if isinstance(value.get("tool_calls"), list):  # {"tool_calls": [...]}
        yield from _calls_in(value["tool_calls"])
        return
    if isinstance(value.get("function"), dict):  # OpenAI's {"type": "function", "function": ...}
        yield from _calls_in(value["function"])
        return
    name = next((value[k] for k in NAME_KEYS if isinstance(value.get(k), str)), None)
    if not name:
        return
    raw = next((value[k] for k in ARGUMENT_KEYS if k in value), None)
    yield name, _arguments(raw)


def tool_calls_in_text(text: str, offered: set[str], *, turn: int) -> list[ToolCall]:
    """The tool calls written in a model's message, as `ToolCall`s with stable ids.

    Only a JSON value naming one of the `offered` names (the aliases the model was given,
    control tools included) counts as a call, so a final answer that quotes some JSON is not
    mistaken for one, unless the message is nothing but calls (then a name that was not
    offered is returned too, and the hub refuses it as it refuses a native call to it). Ids are
    derived from the turn so a replayed run writes the same history. Arguments that are not
    an object become `{"__malformed__": <what was written>}`, which the hub's schema check
    refuses with a reason the model can read.
    """
    found: list[tuple[str, dict[str, Any] | None]] = []
    prose, last = [], 0
    for value, start, end in _json_values(text):
        calls = list(_calls_in(value))
        if calls:
            found.extend(calls)
            prose.append(text[last:start])
            last = end
    prose.append(text[last:])
    found = found[:MAX_TEXT_CALLS]
    only_calls = len(WRAPPERS.sub("", "".join(prose))) <= MAX_PROSE
    if not found or not (only_calls or any(name in offered for name, _ in found)):
        return []
    return [
        ToolCall(
            name=name,
            args=args if args is not None else {"__malformed__": "arguments are not an object"},
            id=f"text_call_{turn}_{i}",
        )
        for i, (name, args) in enumerate(found)
    ]
