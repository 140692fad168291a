"""What a tool call returns: `CallOutcome` and `ToolCallResult`, values with no MCP in them.

They live apart from `workers.hub.hub` so the graph's nodes, which route on outcomes, and the
CLI's reading commands can import them without loading the MCP SDK (about a second of
imports); `ToolHub` produces them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class CallOutcome(StrEnum):
    """How a call ended; the graph routes on this, never on the text."""

    OK = "ok"
    NOT_ALLOWED = "not_allowed"
    UNKNOWN_TOOL = "unknown_tool"
    BAD_ARGUMENTS = "bad_arguments"
    TOOL_ERROR = "tool_error"
    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"


COUNTED_FAILURES = frozenset({CallOutcome.TOOL_ERROR, CallOutcome.TIMEOUT, CallOutcome.UNAVAILABLE})
"""Outcomes that say the server is failing (its circuit breaker counts them, and recovery
never retries them); a refusal or bad arguments are the caller's."""


@dataclass(frozen=True)
class ToolCallResult:
    """One call's result: ``text`` is what a model sees (capped, "ERROR: ..." on failure)."""

    name: str
    outcome: CallOutcome
    text: str
    duration_ms: float
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.outcome is CallOutcome.OK
