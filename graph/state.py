"""The graph state. Reducers are declared in the type, so parallel writes never collide.

`reports` uses `operator.add`: every parallel `dispatch` appends its report, and every report
from every wave, retry and fallback stays visible. Because the list grows across runs on one
thread, a new job always gets a new thread id (principle 7).
"""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

from workers.contracts import ActionRecord, Answer, Handoff, RecoveryRecord, Report


class InputState(TypedDict):
    """What a caller passes in: the request, nothing else."""

    request: str
    """The ticket or incident text, verbatim."""


class MusterState(InputState, total=False):
    """Everything the supervisor knows about one job."""

    packets: list[Handoff]
    """The validated plan: one packet per sub-task."""
    plan_notes: list[str]
    """What plan validation corrected (dropped duplicates, narrowed allowlists, capped budgets)."""
    reports: Annotated[list[Report], operator.add]
    """Every report, in completion order; retries and fallbacks add, never overwrite."""
    recoveries: Annotated[list[RecoveryRecord], operator.add]
    """Every recovery step taken and what came of it."""
    actions: Annotated[list[ActionRecord], operator.add]
    """Every approval decision and execution of a proposed action."""
    conflicts: list[str]
    """Facts two reports disagreed on, and how synthesis ruled."""
    unverified: list[str]
    """Claims `verify` could not tie to an observation, one line each."""
    stop_reason: str
    """Which run limit stopped new work, written by `collect`; absent while within limits."""
    answer: Answer
    """The final answer, written by `synthesize`."""
