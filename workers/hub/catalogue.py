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

from workers.contracts import sha256_hex
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
    """sha256 of the canonical JSON of what a model is told about a tool.

    Annotations are included too: flipping readOnlyHint is as much a change of meaning as
    rewording the description.
    """
    pinned = {
        "name": tool.name,
        "description": tool.description or "",
        "inputSchema": tool.inputSchema,
        "annotations": tool.annotations.model_dump(mode="json") if tool.annotations else None,
    }
    return sha256_hex(pinned)


def is_write(tool: types.Tool, write_tools: Collection[str]) -> bool:
    # Explicit hints only; an unannotated tool counts as a read unless the operator lists it in
    # writeTools (the config is ours to control, annotations are the server's claim).
    ann = tool.annotations
    hinted = ann is not None and (ann.readOnlyHint is False or ann.destructiveHint is True)
    return hinted or tool.name in write_tools


def register_tools(
    catalogue: dict[str, CatalogueEntry],
    server: str,
    tools: Sequence[types.Tool],
    write_tools: Collection[str],
) -> list[str]:
    """Add ``server``'s tools to ``catalogue``; return one line per refused tool.

    Refused: invalid qualified names (e.g. a tool named "bad.name" or with non-ASCII letters),
    and names listed more than once or already registered. All copies of a duplicated name
    are refused, since we could not know which definition the server would really run.
    """
    refused: list[str] = []
    counts: dict[str, int] = {}
    for tool in tools:
        counts[tool.name] = counts.get(tool.name, 0) + 1
    for tool in tools:
        name = qualify(server, tool.name)
        if not is_valid_qualified_name(name):
            refused.append(f"{name!r}: invalid name (want server.tool, [A-Za-z0-9_-] only)")
        elif counts[tool.name] > 1:
            refused.append(f"{name!r}: listed {counts[tool.name]} times by server {server!r}")
        elif name in catalogue:
            refused.append(f"{name!r}: collides with an already-registered tool")
        else:
            spec = ToolSpec(
                name=name,
                server=server,
                tool=tool.name,
                description=tool.description or "",
                input_schema=dict(tool.inputSchema),
                writes=is_write(tool, write_tools),
            )
            catalogue[name] = CatalogueEntry(spec, definition_digest(tool))
    return refused


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
