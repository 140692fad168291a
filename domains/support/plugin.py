"""The support pack's plug-in: the ticket rules Muster was first written for.

Its parts, beside this file: the rules planner (`rules.py`, intents as data in
`intents.py`), the policy fallback (`fallbacks.py`, `policy_snapshot.json`), the answer's
sections (`resolve.py` over the facts `facts_read.py` reads from the reports) and the eval set
(`tickets.jsonl`, labelled by the rules in `LABELS.md`, scored by `graph/app/eval*.py`).
`domain.json` names the roster (`workers/roster.json`) and the servers
(`servers/servers.json`), which stay where they are for now; for the bundled default,
`MUSTER_ROSTER` and `MUSTER_SERVERS` still replace them (graph/app/options.py).

Still outside the pack: the billing proposal rules (`workers/proposals.py`, which workers
import, and the refund's re-read in `graph/approval.py`), the order record shared fact
(`graph/facts.py`), the support answer's assembly and layout (`graph/synthesize.py`, the
answer a pack without `compose_answer` gets).
"""

from __future__ import annotations

from .fallbacks import load_policy_snapshot
from .intents import INTENTS as _TABLE
from .rules import plan_ticket, read_ticket

plan = plan_ticket
"""The rules planner."""
read_request = read_ticket
"""The ticket reading (intents in seven languages, order ids, language, time zone)."""
INTENTS = frozenset(intent.name for intent in _TABLE)
"""Every intent the reading can produce."""
FALLBACKS = {"policy": load_policy_snapshot()}
"""The policy worker's cached snapshot, put in by recovery when the live policy server fails."""
ACTION_SUBJECTS = {"orders.issue_refund": "order_id", "orders.cancel_order": "order_id"}
"""The argument naming what each write tool changes: one such action per order waits for a
human at a time, across threads (graph/approval.py)."""
