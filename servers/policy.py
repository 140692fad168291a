"""Policy MCP server: the company's support policies, with injectable failure modes.

Run with ``python -m servers.policy`` (stdio). ``MUSTER_POLICY_MODE`` picks how it behaves:
healthy (default), broken (every call fails with "policy-db connection refused"), slow (answers
after ``MUSTER_POLICY_SLOW_S`` seconds, default 3), hang (never answers), crash (the process exits
mid-call) or garbage (writes a non-protocol line to stdout, then answers).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.session import ServerSession
from mcp.types import ToolAnnotations

from servers import serving
from servers.call_log import record
from servers.stdio_pipes import run_stdio

SERVER = "policy"
MODE_ENV_VAR = "MUSTER_POLICY_MODE"
SLOW_ENV_VAR = "MUSTER_POLICY_SLOW_S"
MODES = ("healthy", "broken", "slow", "hang", "crash", "garbage")
GARBAGE_LINE = b"THIS IS NOT JSON-RPC\n"

POLICIES: dict[str, tuple[str, str, str]] = {  # topic -> (policy_id, effective_date, text)
    "refunds": ("POL-REF-001", "2025-01-01",
                "Refunds go to the original payment method and never exceed the amount charged "
                "minus any earlier refunds. Every refund needs a recorded human approval for the "
                "exact order, amount and idempotency key. Refunds above $500 need a team lead."),
    "duplicate_charge": ("POL-BIL-004", "2025-01-01",
                         "A pending duplicate authorisation is not refunded: it clears within 5 "
                         "business days. A settled duplicate charge, or one still present after "
                         "5 business days, is refunded in full for the duplicated amount only, "
                         "with approval as for any refund. A goodwill credit may be offered on "
                         "top, under the goodwill credit policy."),
    "goodwill_credit": ("POL-BIL-007", "2025-02-01",
                        "Agents may offer a goodwill credit of up to 10% of the order value, at "
                        "most $15, once per customer in 12 months, as store credit (never cash). "
                        "Larger amounts need a team lead."),
    "returns": ("POL-RET-002", "2025-01-01",
                "Unused items in original packaging may be returned within 30 days of delivery "
                "for a full refund. Damaged or defective items may be returned within 14 days; "
                "return shipping is free for them."),
    "shipping": ("POL-SHP-003", "2024-11-15",
                 "Standard shipping takes 3-5 business days. An order delayed more than 10 "
                 "business days past its estimate may be refunded or replaced at the customer's "
                 "choice. Shipping fees are refunded only when we caused the delay."),
    "gift_cards": ("POL-GFT-001", "2024-09-01",
                   "Gift cards do not expire and are not redeemable for cash. Refunds of gift "
                   "card purchases go back to a gift card. Purchased gift cards are final sale."),
    "escalation": ("POL-ESC-001", "2025-01-01",
                   "Escalate to a team lead when a request exceeds an agent's limits, when the "
                   "customer asks for a manager, after two unresolved contacts, or whenever a "
                   "system needed to decide is unavailable. Never guess a policy."),
    "cancellation": ("POL-CAN-001", "2025-01-01",
                     "Orders can be cancelled free of charge until they ship; the authorisation "
                     "is released in full. Shipped orders cannot be cancelled and follow the "
                     "returns policy."),
    "price_match": ("POL-PRC-001", "2024-10-01",
                    "We match identical items at major retailers within 14 days of purchase; "
                    "the difference is refunded once. Marketplace sellers are excluded."),
    "warranty": ("POL-WAR-001", "2024-06-01",
                 "Electronics have a 2-year limited warranty against manufacturing defects. "
                 "Accidental damage and normal wear are not covered."),
}
ALIASES = {"refund": "refunds", "return": "returns", "gift_card": "gift_cards",
           "giftcards": "gift_cards", "duplicate_charges": "duplicate_charge",
           "goodwill": "goodwill_credit", "cancel": "cancellation", "cancellations": "cancellation",
           "delivery": "shipping", "escalations": "escalation"}


@dataclass(frozen=True)
class PolicySettings:
    """Lifespan resources: the failure mode this server runs in."""

    mode: str
    slow_s: float


def load_settings() -> PolicySettings:
    """Read MUSTER_POLICY_MODE and MUSTER_POLICY_SLOW_S; raise ValueError if either is invalid."""
    mode = os.environ.get(MODE_ENV_VAR, "healthy").strip().lower() or "healthy"
    if mode not in MODES:
        raise ValueError(f"unknown {MODE_ENV_VAR}={mode!r}; use one of: {', '.join(MODES)}")
    raw = os.environ.get(SLOW_ENV_VAR, "3")
    try:
        slow_s = float(raw)
    except ValueError:
        raise ValueError(f"{SLOW_ENV_VAR} must be a number of seconds (got {raw!r})") from None
    if slow_s < 0:
        raise ValueError(f"{SLOW_ENV_VAR} must not be negative (got {raw!r})")
    return PolicySettings(mode=mode, slow_s=slow_s)


@asynccontextmanager
async def lifespan(server: FastMCP) -> AsyncIterator[PolicySettings]:
    """Expose the failure mode to the tools."""
    yield load_settings()


mcp = FastMCP("policy", log_level="WARNING", lifespan=lifespan)


def normalize_topic(topic: str) -> str:
    """Lowercase, spaces and hyphens to underscores: "Gift cards" -> "gift_cards"."""
    key = "_".join(topic.strip().lower().replace("-", " ").split())
    return ALIASES.get(key, key)


def lookup(topic: str) -> dict[str, str]:
    """Return the policy for a topic as a dict; raise ValueError naming the known topics."""
    key = normalize_topic(topic)
    if key not in POLICIES:
        raise ValueError(f"unknown policy topic {topic!r}; known topics: {', '.join(POLICIES)}")
    policy_id, effective, text = POLICIES[key]
    return {"topic": key, "policy_id": policy_id, "text": text, "effective_date": effective}


# structured_output=False: tools return JSON text. Otherwise FastMCP adds an output schema
# that the client re-validates with jsonschema on every call (about 0.4 ms each).
@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
async def check_policy(topic: str, ctx: Context[ServerSession, PolicySettings]) -> str:
    """Return the current policy text for a topic such as refunds or duplicate_charge."""
    record(SERVER, "check_policy", {"topic": topic})
    settings = ctx.request_context.lifespan_context
    if settings.mode == "broken":
        raise ConnectionError("policy-db connection refused (policy store at policy-db:5432 is "
                              "down); do not guess the policy, report it as unavailable")
    if settings.mode == "slow":
        await anyio.sleep(settings.slow_s)
    elif settings.mode == "hang":
        await anyio.sleep_forever()
    elif settings.mode == "crash":
        sys.stderr.write("policy server: crash mode, exiting mid-call\n")
        sys.stderr.flush()
        os._exit(3)
    elif settings.mode == "garbage":
        os.write(1, GARBAGE_LINE)
    return json.dumps(lookup(topic))


def main() -> None:
    """Check the configuration, then serve over stdio; exit 2 with a message if it is invalid."""
    try:
        load_settings()
    except ValueError as exc:
        print(f"policy server: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    serving()
    run_stdio(mcp)
    # stdin closed (the hub went away, perhaps SIGKILLed): leave at once rather than spend
    # most of a second in interpreter shutdown while the parent is gone. Every protocol
    # message was flushed as it was written; the database connection closed in the lifespan.
    os._exit(0)


if __name__ == "__main__":
    main()
