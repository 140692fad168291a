"""Planners: each turns a request into `Handoff` packets; `graph.plan` validates them all.

A domain pack brings its own deterministic planner (support's rules planner is
`domains/support/rules.py`; a pack may give a keyword table instead, `keywords`); `llm` has a
chat model write the plan through structured output (`make_llm_planner`, imported from
`graph.planners.llm` so the rules path never loads it).
"""

from graph.planners.base import (
    DEFAULT_TIMEOUT_S,
    MAX_STEPS_CAP,
    TIMEOUT_CAP_S,
    Planner,
    TicketReading,
)

__all__ = ["DEFAULT_TIMEOUT_S", "MAX_STEPS_CAP", "TIMEOUT_CAP_S", "Planner", "TicketReading"]
