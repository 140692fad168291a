"""The support pack's plug-in: the ticket rules Muster was first written for.

Its parts, beside this file: the rules planner (`rules.py`, intents as data in
`intents.py`); the order record shared fact (`order_record.py`); the billing proposal rules
(`proposals.py`: refund and cancellation, registered with `workers.proposals` when the pack
loads) and the refund's re-read right before it runs (`execution.py`); the policy fallback
(`fallbacks.py`, `policy_snapshot.json`); the answer (`answer.py`: its assembly and layout,
with its sections from `resolve.py` over the facts `facts_read.py` reads from the reports);
and the eval set (`tickets.jsonl`, labelled by the rules in `LABELS.md`, scored by
`graph/app/eval*.py`). `domain.json` names the roster (`workers/roster.json`) and the
servers (`servers/servers.json`), which stay where they are for now; for the bundled
default, `MUSTER_ROSTER` and `MUSTER_SERVERS` still replace them (graph/app/options.py).

Still outside the pack: the order-id format (`workers/order_ids.py`: `graph/plan.py` finds a
request's order ids with it for the shared facts, recovery finds one in a human's
clarification), the `order_ids`/`unknown_orders` fields of the state and of `SharedFacts`,
the scoring of the support eval's fields (`graph/app/eval_fields.py`) and the wording of the
plain answer layout (`graph.synthesize.render_text`, which support's layout also uses).
"""

from __future__ import annotations

from . import answer, execution, order_record
from .fallbacks import load_policy_snapshot
from .intents import INTENTS as _TABLE
from .proposals import CANCEL_TOOL, REFUND_TOOL
from .proposals import PROPOSAL_RULES as _PROPOSAL_RULES
from .rules import plan_ticket, read_ticket

plan = plan_ticket
"""The rules planner."""
read_request = read_ticket
"""The ticket reading (intents in seven languages, order ids, language, time zone)."""
INTENTS = frozenset(intent.name for intent in _TABLE)
"""Every intent the reading can produce."""
FALLBACKS = {"policy": load_policy_snapshot()}
"""The policy worker's cached snapshot, put in by recovery when the live policy server fails."""
compose_answer = answer.compose_answer
"""The ticket answer: every intent resolved, a draft reply, the evidence (answer.py)."""
render_answer = answer.render_answer
"""Its terminal layout, with the policies that apply."""
resolve_facts = order_record.resolve_order_record
"""The order record, looked up once for every packet that needs it; a packet about an order
that does not exist is answered by the lookup (order_record.py)."""
PROPOSAL_RULES = _PROPOSAL_RULES
"""The refund and cancellation rules (proposals.py), registered with `workers.proposals` when
the pack loads."""
ACTION_SUBJECTS = {REFUND_TOOL: "order_id", CANCEL_TOOL: "order_id"}
"""The argument naming what each write tool changes: one such action per order waits for a
human at a time, across threads (graph/approval.py)."""
ACTION_NAMES = {REFUND_TOOL: "a refund"}
"""How messages name the write tools ("a refund on order 12345 is awaiting approval ...")."""
BEFORE_EXECUTE = {REFUND_TOOL: execution.refund_state_changed}
"""Right before an approved refund runs, the order's refunds are re-read (execution.py)."""
REQUESTER_TOOLS = frozenset({REFUND_TOOL})
"""The refund records the thread that asked (`requested_by`) in the orders ledger."""
