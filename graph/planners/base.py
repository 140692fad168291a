"""What every planner shares: its type, the reading of a request it plans from, and the limits
`validate_plan` holds any plan to."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

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


@runtime_checkable
class RevisablePlanner(Protocol):
    """A planner that can be asked again with what was wrong with its plan (the LLM's)."""

    def revise(self, request: str, roster: Roster, problem: str) -> Awaitable[list[Handoff]]:
        """Packets for `request` again, told `problem` (the validation's words)."""
        ...


@dataclass(frozen=True)
class TicketReading:
    """What a domain's rules read from a request, before any tool is called."""

    intents: tuple[str, ...]
    """Intent names, in table order."""
    order_ids: tuple[str, ...]
    """The request's subject ids, normalised (support: order ids as the customer wrote them;
    a pack that reads none leaves it empty)."""
    language: str
    """`English`, or the language the request seems to be written in."""
    timezone: str | None
    """A time zone named in the request, for a callback."""
    about_an_order: bool
    """True when the request concerns some order, named or not."""
    action_intents: tuple[str, ...] = ()
    """The intents a packet must carry when its worker may propose actions, whoever planned
    it (`graph.plan.with_intents`); support: the order-bound ones."""
    unaccounted: tuple[str, ...] = ()
    """Parts of the request (clauses, as written) that ask for something the reading could
    not attribute to an intent or a subject: the answer names them and cannot be `complete`
    without a human (`graph.abstain`)."""
    confidence: float = 1.0
    """How much of what the request asks the reading accounts for, 0 to 1."""
    may_propose: bool = True
    """Whether the reading is one an action may be proposed from. A reading only a learned
    model made (support: `second_opinion.filled`) routes the request and looks its subject
    up, but proposes nothing: a person reads the request first."""
