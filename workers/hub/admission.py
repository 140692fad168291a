"""What a server may advertise: limits and shape checks on each listed tool definition.

A server's ``tools/list`` answer is input from outside, like any other: it becomes the
descriptions and parameter schemas a model is shown, in every worker whose allowlist admits
the tool. Each definition is checked here before it is catalogued. One that breaks a limit or
is malformed is refused on its own, with a reason (``ToolHub.refused``); the server's other
tools still register, so one bad definition never costs a worker its whole belt.

The checks are plain Python over already-parsed JSON, linear in its size and never recursive
beyond ``MAX_SCHEMA_DEPTH``. A full JSON Schema metaschema check was measured too slow to run
on the event loop (jsonschema's 2020-12 ``check_schema``: about 35 ms for a 20-property
schema), so ``check_input_schema`` checks the shapes that consumers rely on instead: what
models and providers read (``type``, ``properties``, ``required``, ``items``, combinators).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import mcp.types as types

MAX_TOOLS_PER_SERVER = 256
"""Tools registered per server, in the order it lists them; each one after these is refused.
Large real servers list about a hundred; thousands only flood models' context and ours."""

MAX_TOOL_PAGES = 64
"""``tools/list`` pages followed per listing; a server that keeps handing out cursors (or
more than ``MAX_TOOLS_PER_SERVER`` tools) is not read further."""

MAX_TOOL_NAME_CHARS = 128
"""Longest tool name (the server's part of ``server.tool``); the MCP spec says names SHOULD
be 1 to 128 characters."""

MAX_DESCRIPTION_CHARS = 8 * 1024
"""Longest tool description, in characters: every worker offered the tool pays for it in
context on every model turn."""

MAX_SCHEMA_BYTES = 64 * 1024
"""Largest input schema, as compact UTF-8 JSON."""

MAX_SCHEMA_DEPTH = 32
"""Deepest nesting of objects and arrays in an input schema (the schema object is depth 1)."""

_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMAS = (
    "not",
    "additionalProperties",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
)
_STRINGS = ("description", "title", "pattern", "format", "$ref", "$schema", "$id")


def refusal(tool: types.Tool, index: int) -> str | None:
    """Why the server's ``index``-th listed tool may not be catalogued, or None if it may.

    Name *syntax* and duplicates are checked by the catalogue; this checks the limits above and
    the input schema's shape.
    """
    if index >= MAX_TOOLS_PER_SERVER:
        return f"the server lists more than {MAX_TOOLS_PER_SERVER} tools; later ones are refused"
    if len(tool.name) > MAX_TOOL_NAME_CHARS:
        return f"name is {len(tool.name)} characters long (at most {MAX_TOOL_NAME_CHARS})"
    description = tool.description or ""
    if len(description) > MAX_DESCRIPTION_CHARS:
        return f"description is {len(description)} characters (at most {MAX_DESCRIPTION_CHARS})"
    problem = check_input_schema(tool.inputSchema)
    return f"input schema {problem}" if problem else None


def check_input_schema(schema: object) -> str | None:
    """What is wrong with an input schema (depth, size, then shape), or None if nothing."""
    if not isinstance(schema, dict):
        return "is not a JSON object"
    if _depth_exceeds(schema, MAX_SCHEMA_DEPTH):
        return f"is nested more than {MAX_SCHEMA_DEPTH} levels deep"
    try:
        size = len(json.dumps(schema, ensure_ascii=False, separators=(",", ":")).encode())
    except (TypeError, ValueError) as exc:
        return f"is not JSON ({exc})"
    if size > MAX_SCHEMA_BYTES:
        return f"is {size} bytes of JSON (at most {MAX_SCHEMA_BYTES})"
    if schema.get("type") != "object":
        return f'is malformed: type must be "object", not {_short(schema.get("type"))}'
    problem = _shape(schema, "$")
    return f"is malformed: {problem}" if problem else None


def _depth_exceeds(value: object, limit: int) -> bool:
    # Iterative, so a hostile nesting cannot raise RecursionError here.
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children: Sequence[Any] = ()
        if isinstance(node, dict):
            children = list(node.values())
        elif isinstance(node, list):
            children = node
        if children and depth >= limit:
            if any(isinstance(child, dict | list) for child in children):
                return True
            continue
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _shape(schema: object, at: str) -> str | None:
    """The first shape error in a (sub)schema. Depth is already bounded, so recursion is."""
    if isinstance(schema, bool):
        return None
    if not isinstance(schema, dict):
        return f"{at} must be a schema object or a boolean, not {_short(schema)}"
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) and kind else [kind] if "type" in schema else []
    if not all(isinstance(k, str) and k in _TYPES for k in kinds):
        return f"{at}.type must name JSON Schema types, not {_short(kind)}"
    for key in _STRINGS:
        if key in schema and not isinstance(schema[key], str):
            return f"{at}.{key} must be a string"
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return f"{at}.required must be a list of property names, not {_short(required)}"
    if "enum" in schema and not isinstance(schema["enum"], list):
        return f"{at}.enum must be a list"
    for key in _SCHEMA_MAPS:
        if key not in schema:
            continue
        members = schema[key]
        if not isinstance(members, dict):
            return f"{at}.{key} must be an object, not {_short(members)}"
        for name, sub in members.items():
            if problem := _shape(sub, f"{at}.{key}.{name}"):
                return problem
    for key in _SCHEMA_LISTS:
        if key not in schema:
            continue
        if not isinstance(schema[key], list) or not schema[key]:
            return f"{at}.{key} must be a non-empty list of schemas"
        for i, sub in enumerate(schema[key]):
            if problem := _shape(sub, f"{at}.{key}[{i}]"):
                return problem
    items = schema.get("items", True)
    for i, sub in enumerate(items if isinstance(items, list) else [items]):
        if problem := _shape(sub, f"{at}.items" + (f"[{i}]" if isinstance(items, list) else "")):
            return problem
    for key in _SCHEMAS:
        if key in schema and (problem := _shape(schema[key], f"{at}.{key}")):
            return problem
    return None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
