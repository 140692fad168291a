"""The support pack's plug-in: the ticket rules Muster was first written for.

Its parts predate domain packs and stay where other code (and tests) import them from:
the rules planner (`graph/planners/rules.py`, intents as data in `graph/planners/intents.py`),
the roster (`workers/roster.json`, or `MUSTER_ROSTER`), the servers (`servers/servers.json`, or
`MUSTER_SERVERS`), the billing proposal rules (`workers/proposals.py`), the policy fallback
(`graph/fallbacks.py`), the answer (`graph/resolve.py`, `graph/synthesize.py`) and the eval set
(`evals/tickets.jsonl`, scored by `graph/app/eval*.py`). This file names them for the loader.
"""

from __future__ import annotations

from graph.planners.intents import INTENTS as _TABLE
from graph.planners.rules import plan_ticket, read_ticket

plan = plan_ticket
"""The rules planner."""
read_request = read_ticket
"""The ticket reading (intents in seven languages, order ids, language, time zone)."""
INTENTS = frozenset(intent.name for intent in _TABLE)
"""Every intent the reading can produce."""
