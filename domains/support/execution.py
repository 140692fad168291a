"""Support's reads around an approved action: the order's refunds right before a refund
runs, and what the action changed right after it ran.

If other refunds appeared since the proposal observed them, the human approved a state that
no longer holds (principle 11): the refund is refused before anything is sent. The graph's
`act` asks the pack (`BEFORE_EXECUTE` in plugin.py) before it executes any action. After it
ran (or the orders server refused it), `act` reads again what it changed (`AFTER_EXECUTE`:
the refund status after a refund, the order after a cancellation), so the answer written
afterwards says what is true now ("$129.00 has been refunded"), not what was true before.
"""

from __future__ import annotations

import json
from typing import Any

from graph.proposals import proposal_for
from graph.services import Services
from graph.state import MusterState
from graph.trace import record_call
from workers.contracts import ActionRecord, Finding

from .facts_read import money
from .order_record import ORDER_LOOKUP
from .proposals import REFUND_STATUS_TOOL


def _refunded_by(refund: dict[str, Any]) -> str:
    by = str(refund.get("requested_by") or "")
    return f"thread {by}" if by and by != "seed" else "an earlier request"


async def refund_state_changed(
    services: Services, state: MusterState, thread: str, record: ActionRecord
) -> str | None:
    """Why an approved refund must not run, or None. The order's refunds are re-read right
    before the write: if other refunds appeared since the proposal observed them, the human
    approved a state that no longer holds."""
    order_id = str(record.args.get("order_id", ""))
    read = await services.hub.call(REFUND_STATUS_TOOL, {"order_id": order_id}, [REFUND_STATUS_TOOL])
    record_call(services.trace, REFUND_STATUS_TOOL, {"order_id": order_id}, read, node="act")
    try:
        data = json.loads(read.text) if read.ok else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        return (
            f"refused before execution: the refund state of order {order_id} could not be "
            f"re-read ({read.text[:200]}); nothing was sent: a human should check it"
        )
    refunds = [r for r in data.get("refunds") or [] if isinstance(r, dict)]
    if any(r.get("idempotency_key") == record.idempotency_key for r in refunds):
        return None  # this thread's own refund: the call replays it
    proposal = proposal_for(state, thread, record)
    observed = proposal.observed_refunded_cents if proposal is not None else None
    now = int(data.get("refunded_cents", 0))
    if observed is None or now == observed or not refunds:
        return None
    latest = max(refunds, key=lambda r: str(r.get("refunded_at") or r.get("created_at") or ""))
    return (
        f"refused before execution: the refunds on order {order_id} changed after this refund "
        f"was proposed ({money(observed)} refunded then, {money(now)} now): "
        f"{money(int(latest.get('amount_cents', 0)))} was already refunded on "
        f"{latest.get('refunded_at') or latest.get('created_at')} by {_refunded_by(latest)} "
        f"(refund {latest.get('refund_id')}); nothing was sent: a human should check it"
    )


async def _read(services: Services, tool: str, order_id: str) -> list[Finding]:
    """One supervisor read of `tool` for `order_id`, recorded in the trace (for `muster
    replay`), as a finding; none when the read fails."""
    args = {"order_id": order_id}
    read = await services.hub.call(tool, args, [tool])
    record_call(services.trace, tool, args, read, node="act")
    if not read.ok or not order_id:
        return []
    return [Finding(id="E0", tool=tool, call_id=f"act-{tool}", args=args, observation=read.text)]


async def refunds_after(services: Services, record: ActionRecord) -> list[Finding]:
    """The order's refund status, read again right after a refund ran (or was refused)."""
    return await _read(services, REFUND_STATUS_TOOL, str(record.args.get("order_id", "")))


async def order_after(services: Services, record: ActionRecord) -> list[Finding]:
    """The order, read again right after a cancellation ran (its status is now cancelled)."""
    return await _read(services, ORDER_LOOKUP, str(record.args.get("order_id", "")))
