"""The hub's tool catalogue: registration, pinned-definition digests, result text.

Pure functions over MCP ``Tool`` definitions, kept apart from ``workers.hub`` so the
registration rules (what is refused, what counts as a write) can be tested without servers.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import mcp.types as types

from servers.digests import content_digest
from workers.hub.admission import MAX_TOOL_NAME_CHARS, MAX_TOOLS_PER_SERVER, refusal
from workers.hub.allowlist import is_valid_qualified_name, qualify


@dataclass(frozen=True)
class ToolSpec:
    """What a model is told about one catalogued tool."""

    name: str  # qualified "server.tool"
    server: str
    tool: str
    description: str
    input_schema: dict[str, Any]
    writes: bool


@dataclass
class CatalogueEntry:
    spec: ToolSpec
    digest: str
    disabled: str | None = None  # why the tool is disabled, or None


def definition_digest(tool: types.Tool) -> str:
    """The content digest (`servers.digests`) of what a model is told about a tool.

    Annotations are included too: flipping readOnlyHint is as much a change of meaning as
    rewording the description.
    """
    pinned = {
        "name": tool.name,
        "description": tool.description or "",
        "inputSchema": tool.inputSchema,
        "annotations": tool.annotations.model_dump(mode="json") if tool.annotations else None,
    }
    return content_digest(pinned)


def is_write(
    tool: types.Tool, write_tools: Collection[str], read_only_tools: Collection[str] = ()
) -> bool:
    """Whether ``tool`` may have side effects: tools are writes until proven reads.

    The MCP spec's defaults hold (``readOnlyHint`` false, ``destructiveHint`` true), so a tool
    is a read only when its server marks it ``readOnlyHint: true`` or the servers file lists it
    in ``readOnlyTools``. A tool without annotations is a write. Any claim of writing wins over
    any claim of reading: the operator's ``writeTools``, an explicit ``readOnlyHint: false``, or
    ``destructiveHint: true`` (even beside ``readOnlyHint: true``, or beside our own
    ``readOnlyTools``), since believing it can only take a tool away from workers.
    """
    if tool.name in write_tools:
        return True
    ann = tool.annotations
    if ann is not None and (ann.readOnlyHint is False or ann.destructiveHint is True):
        return True
    if tool.name in read_only_tools:
        return False
    return ann is None or ann.readOnlyHint is not True


def register_tools(
    catalogue: dict[str, CatalogueEntry],
    server: str,
    tools: Sequence[types.Tool],
    write_tools: Collection[str],
    read_only_tools: Collection[str] = (),
) -> list[str]:
    """Add ``server``'s tools to ``catalogue``; return one line per refused tool.

    Each tool is refused on its own, and the others still register. Refused: invalid
    qualified names (e.g. a tool named "bad.name" or with non-ASCII letters), names listed more
    than once or already registered, and definitions over the limits of
    ``workers.hub.admission`` or with a malformed input schema. All copies of a duplicated
    name are refused, since we could not know which definition the server would really run.
    Each line starts with the quoted qualified name (shortened if long) and says why.
    """
    refused: list[str] = []
    counts: dict[str, int] = {}
    for tool in tools:
        counts[tool.name] = counts.get(tool.name, 0) + 1
    for index, tool in enumerate(tools):
        name = qualify(server, tool.name)
        try:
            why = _refusal(catalogue, name, tool, index, counts[tool.name], server)
            if why is None:
                spec = ToolSpec(
                    name=name,
                    server=server,
                    tool=tool.name,
                    description=tool.description or "",
                    input_schema=dict(tool.inputSchema),
                    writes=is_write(tool, write_tools, read_only_tools),
                )
                catalogue[name] = CatalogueEntry(spec, definition_digest(tool))
        except Exception as exc:  # noqa: BLE001 - one bad definition must not cost the others
            why = f"definition could not be read ({type(exc).__name__})"
        if why is not None:
            refused.append(f"{_quoted(name)}: {why}"[:_MAX_REFUSAL_CHARS])
    return refused


_MAX_REFUSAL_CHARS = 300
_MAX_SHOWN_NAME = 80


def _quoted(name: str) -> str:
    # Always '...' quoted and starting with the server's own name, so a line can be matched to
    # its server (ToolHub re-pins per server); a hostile 10,000-character name is shortened.
    shown = repr(name)[1:-1]
    if len(shown) > _MAX_SHOWN_NAME:
        shown = f"{shown[:_MAX_SHOWN_NAME]}...({len(name)} chars)"
    return f"'{shown}'"


def _refusal(
    catalogue: dict[str, CatalogueEntry],
    name: str,
    tool: types.Tool,
    index: int,
    count: int,
    server: str,
) -> str | None:
    """Why this listed tool may not be catalogued, or None."""
    if index >= MAX_TOOLS_PER_SERVER:
        return refusal(tool, index)  # cheap, and says only that there are too many
    if len(tool.name) <= MAX_TOOL_NAME_CHARS and not is_valid_qualified_name(name):
        return "invalid name (want server.tool, [A-Za-z0-9_-] only)"
    if count > 1:
        return f"listed {count} times by server {server!r}"
    if name in catalogue:
        return "collides with an already-registered tool"
    return refusal(tool, index)


def check_pins(
    catalogue: dict[str, CatalogueEntry], server: str, tools: Sequence[types.Tool]
) -> list[str]:
    """Disable (and return) ``server``'s tools whose definition differs from the pinned one.

    A tool the server no longer lists counts as changed. New tools are ignored until the
    server is explicitly reconnected and re-pinned.
    """
    current = {qualify(server, t.name): definition_digest(t) for t in tools}
    disabled: list[str] = []
    for name, entry in catalogue.items():
        if entry.spec.server != server or entry.disabled:
            continue
        if current.get(name) != entry.digest:
            what = "removed" if name not in current else "changed"
            entry.disabled = (
                f"ERROR: tool '{name}' is disabled: its definition {what} since it was "
                f"pinned; an operator must review it and reconnect server '{server}'"
            )
            disabled.append(name)
    return disabled


def cap_text(text: str, cap_bytes: int) -> tuple[str, bool]:
    """Cut ``text`` to at most ``cap_bytes`` UTF-8 bytes (never mid-character), with a marker."""
    data = text.encode("utf-8")
    if len(data) <= cap_bytes:
        return text, False
    kept = data[:cap_bytes].decode("utf-8", "ignore")  # drops a partial trailing character
    dropped = len(data) - len(kept.encode("utf-8"))
    return f"{kept}…[truncated {dropped} bytes]", True


def result_text(result: types.CallToolResult) -> str:
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        else:
            parts.append(f"[{block.type} content omitted]")
    if not parts and result.structuredContent is not None:
        parts.append(json.dumps(result.structuredContent, ensure_ascii=False))
    return "\n".join(parts)
