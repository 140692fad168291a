"""Planners: each turns a request into `Handoff` packets; `graph.plan` validates them all.

`rules` is the deterministic offline planner (the default); `llm` has a chat model write the
plan through structured output (`make_llm_planner`, imported from `graph.planners.llm` so the
rules path never loads it).
"""

from graph.planners.base import DEFAULT_TIMEOUT_S, MAX_STEPS_CAP, TIMEOUT_CAP_S, Planner
from graph.planners.rules import plan_ticket

__all__ = ["DEFAULT_TIMEOUT_S", "MAX_STEPS_CAP", "TIMEOUT_CAP_S", "Planner", "plan_ticket"]
