"""A tool call's arguments checked against the tool's own input schema, before the call.

A model that writes `{}` for a tool that requires `order_id`, names a parameter the tool
does not have, or sends a string instead of an object has made a mistake of its own, not
met a failing backend: the hub reports it as `bad_arguments` with the schema's words, so
the model can correct it and the report names it (never "unavailable" or a server error).

Only the structure every consumer relies on is checked (an object, required names
present, no unknown names where the schema closes its properties). Types are left to the
server: FastMCP and most servers coerce "12345" to an integer the way their own
validation allows, and a stricter check here would refuse calls that work.
"""

from __future__ import annotations

from typing import Any


def argument_problem(schema: dict[str, Any], args: object) -> str | None:
    """What is wrong with `args` for a tool whose input schema is `schema`, or None."""
    if not isinstance(args, dict):
        return f"arguments must be a JSON object, not {type(args).__name__}"
    properties = schema.get("properties")
    known = set(properties) if isinstance(properties, dict) else set()
    required = [r for r in schema.get("required") or [] if isinstance(r, str)]
    missing = [name for name in required if name not in args]
    problems = []
    if missing:
        problems.append(f"missing required argument(s) {missing}")
    if schema.get("additionalProperties") is False or (known and missing):
        unknown = sorted(str(k) for k in args if k not in known)
        if unknown:
            problems.append(f"unknown argument(s) {unknown}")
    if not problems:
        return None
    expected = ", ".join(sorted(known)) or "(none)"
    return "; ".join(problems) + f"; the tool takes: {expected}"
