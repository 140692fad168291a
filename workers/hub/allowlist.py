"""Qualified tool names and allowlist matching (pure functions, no I/O).

A tool is addressed as ``server.tool``: exactly one dot, each side drawn from the MCP
tool-name characters ``[A-Za-z0-9_-]``, ASCII only. An allowlist entry is either such an
exact name or a ``server.`` prefix that admits every tool of that one server.

Matching is deliberately strict (docs/architecture.md principle 4): no trimming, no case
folding, and a prefix matches whole segments only, so ``orders.`` never admits
``ordersx.refund``. An entry that is not well formed admits nothing, rather than being
"repaired" into something that might admit more than its author meant.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# re.ASCII is implied by the explicit character classes, but \Z (not $) matters: "$" also
# matches before a trailing newline, which would let "orders.find_order\n" through.
_SEGMENT = r"[A-Za-z0-9_-]+"
QUALIFIED_NAME = re.compile(rf"^{_SEGMENT}\.{_SEGMENT}\Z")
SERVER_NAME = re.compile(rf"^{_SEGMENT}\Z")
SERVER_PREFIX = re.compile(rf"^{_SEGMENT}\.\Z")


def is_valid_server_name(name: str) -> bool:
    """True if ``name`` is usable as the server part of a qualified name."""
    return isinstance(name, str) and SERVER_NAME.match(name) is not None


def is_valid_qualified_name(name: str) -> bool:
    """True if ``name`` is ``server.tool`` with exactly one dot and ASCII name characters."""
    return isinstance(name, str) and QUALIFIED_NAME.match(name) is not None


def qualify(server: str, tool: str) -> str:
    """The qualified name of ``tool`` on ``server`` (not validated; see is_valid_qualified_name)."""
    return f"{server}.{tool}"


def is_valid_entry(entry: str) -> bool:
    """True if ``entry`` is an exact qualified name or a ``server.`` prefix."""
    return isinstance(entry, str) and (
        QUALIFIED_NAME.match(entry) is not None or SERVER_PREFIX.match(entry) is not None
    )


def is_allowed(name: str, allow: Sequence[str]) -> bool:
    """True if the qualified ``name`` is admitted by some entry of ``allow``.

    An invalid name is never allowed; an invalid entry admits nothing.
    """
    if isinstance(allow, str):
        # A bare string is a Sequence[str] too; iterating it would test single characters.
        # Treat it as a caller bug that admits nothing rather than guessing.
        return False
    if not is_valid_qualified_name(name):
        return False
    server = name.split(".", 1)[0]
    for entry in allow:
        if not isinstance(entry, str):
            continue
        if QUALIFIED_NAME.match(entry) is not None:
            if entry == name:
                return True
        elif SERVER_PREFIX.match(entry) is not None:
            # Compare the whole server segment, never str.startswith: "orders." must not
            # admit "ordersx.find_order".
            if entry[:-1] == server:
                return True
    return False
