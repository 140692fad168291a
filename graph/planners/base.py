"""What every planner shares: its type and the limits `validate_plan` holds any plan to."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from workers.contracts import Handoff
from workers.roster import Roster

MAX_STEPS_CAP = 10
"""No packet may ask for more model turns than this, whoever planned it."""
TIMEOUT_CAP_S = 120.0
"""No packet may run longer than this."""
DEFAULT_TIMEOUT_S = 60.0
"""Wall-clock limit given to a packet when the planner sets none."""

Planner = Callable[[str, Roster], list[Handoff] | Awaitable[list[Handoff]]]
"""Writes packets for a request (or returns an awaitable of them, as the LLM planner does);
its output is always validated afterwards."""
