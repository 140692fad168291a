"""Knowledge-base MCP server: ranked full-text search (SQLite FTS5, bm25) over support articles.

Run with ``python -m servers.kb`` (stdio). The articles are seeded into an in-memory FTS5 table
when the server starts.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.session import ServerSession
from mcp.types import ToolAnnotations

from servers import serving
from servers.call_log import record
from servers.stdio_pipes import run_stdio

SERVER = "kb"
MAX_LIMIT = 10

ARTICLES: tuple[tuple[str, str, str], ...] = (
    ("KB-101", "Where is my order? Tracking a shipment",
     "Every shipped order has a tracking link in the shipping confirmation email. Tracking can "
     "take 24 hours to show the first scan. Standard delivery takes 3-5 business days."),
    ("KB-102", "Shipping delays and late deliveries",
     "If an order is marked delayed, the carrier has reported a hold-up. Delayed parcels usually "
     "arrive within 7 business days of the original estimate. After 10 business days without a "
     "scan, open a lost-parcel claim and offer a replacement or a refund."),
    ("KB-103", "Returns: how to send an item back",
     "Most items can be returned within 30 days of delivery if unused and in original packaging. "
     "Create a return label from the order page; the return is inspected on arrival and the "
     "refund is issued to the original payment method."),
    ("KB-104", "Cancelling an order",
     "An order can be cancelled free of charge while its status is processing. Once it has "
     "shipped it cannot be cancelled; the customer should refuse delivery or start a return."),
    ("KB-105", "Changing the delivery address",
     "The delivery address can be changed while the order is processing. After dispatch, ask the "
     "carrier to redirect the parcel using the tracking link; we cannot change it for them."),
    ("KB-106", "Damaged or defective items",
     "Ask the customer for a photo of the damage and the packaging within 14 days of delivery. "
     "Offer a free replacement or a full refund; the damaged item does not need to be returned "
     "if it is worth under $50."),
    ("KB-107", "Warranty claims",
     "Electronics carry a 2-year limited warranty against manufacturing defects. Accidental "
     "damage is not covered. Collect the order number and a description of the fault, then "
     "raise a warranty claim with the manufacturer."),
    ("KB-108", "International shipping and customs",
     "We ship to 40 countries. International delivery takes 7-14 business days. Import duties "
     "and customs fees are paid by the recipient and are not refundable."),
    ("KB-109", "Price match",
     "We match the price of identical items sold by major retailers within 14 days of purchase. "
     "The difference is refunded to the original payment method after the agent verifies the "
     "competitor price."),
    ("KB-110", "Missing items from a delivery",
     "If a parcel arrives with an item missing, check whether the order shipped in several "
     "parcels. If not, send the missing item at no cost."),
    ("KB-111", "Order status meanings",
     "processing: payment authorised, not yet packed. shipped: handed to the carrier. delivered: "
     "carrier confirmed delivery. delayed: carrier reported a hold-up. cancelled and returned "
     "orders are refunded."),
    ("KB-112", "Escalations and complaints",
     "Escalate to a team lead when a customer asks for a manager, when a refund above policy "
     "limits is requested, or after two unresolved contacts. Log the complaint, the order "
     "number and what was already tried."),
    ("KB-201", "Duplicate charges and pending double charges",
     "When a customer is charged twice for one order, the second entry is usually a duplicate "
     "authorisation: a pending hold, not a completed charge. Duplicate authorisations clear "
     "automatically within 5 business days and the money returns to the card. If a duplicate "
     "charge has settled, or has not cleared after 5 business days, refund the duplicate charge "
     "in full. Beyond that, a goodwill credit may be offered for the inconvenience."),
    ("KB-202", "Refund timing",
     "Refunds are issued to the original payment method. Cards show the refund in 5-10 business "
     "days depending on the bank; PayPal within 24 hours; gift cards instantly."),
    ("KB-203", "Gift cards",
     "Gift cards never expire and cannot be exchanged for cash. Orders paid with a gift card are "
     "refunded to the gift card. A lost gift card can be reissued with proof of purchase."),
    ("KB-204", "Accepted payment methods",
     "We accept Visa, Mastercard, American Express, PayPal, Apple Pay and gift cards. A card is "
     "authorised when the order is placed and captured when it ships."),
    ("KB-205", "Goodwill credits",
     "A goodwill credit is store credit offered to apologise for a service failure. It is added "
     "to the customer's account, not refunded to the card, and is limited by policy."),
    ("KB-206", "Loyalty points",
     "Customers earn 1 point per dollar spent. Points post 30 days after delivery and are "
     "removed if the order is refunded. 500 points can be redeemed for a $5 voucher."),
    ("KB-207", "Subscriptions and auto-renewal",
     "Subscriptions renew automatically each month. Customers can pause or cancel at any time "
     "from the account page; cancelling stops the next renewal but does not refund the current "
     "period."),
    ("KB-208", "Account security and suspicious activity",
     "If a customer reports an order they did not place, lock the account, reset the password, "
     "and pass the case to the fraud team. Never share order details before verifying identity."),
    ("KB-209", "Failed or declined payments",
     "A declined payment leaves the order unplaced. Ask the customer to check the card details "
     "or use another payment method; we cannot see why the bank declined."),
    ("KB-210", "Invoices and receipts",
     "Receipts are emailed when an order ships. A VAT invoice can be downloaded from the order "
     "page or sent by support on request."),
)


@dataclass
class KBIndex:
    """Lifespan resources: the in-memory FTS5 index."""

    conn: sqlite3.Connection


def build_index() -> sqlite3.Connection:
    """Create an in-memory FTS5 table (porter stemming) holding every article."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.execute(
        "CREATE VIRTUAL TABLE articles USING fts5("
        "id UNINDEXED, title, body, tokenize = 'porter unicode61')"
    )
    conn.executemany("INSERT INTO articles (id, title, body) VALUES (?, ?, ?)", ARTICLES)
    conn.commit()
    return conn


@asynccontextmanager
async def lifespan(server: FastMCP) -> AsyncIterator[KBIndex]:
    """Build the search index for the server's lifetime."""
    conn = build_index()
    try:
        yield KBIndex(conn=conn)
    finally:
        conn.close()


mcp = FastMCP("kb", log_level="WARNING", lifespan=lifespan)

_WORD_RE = re.compile(r"[^\W_]+")


def match_expression(query: str) -> str:
    """Turn free text into a safe FTS5 query: every word quoted, ORed together ('' if none)."""
    words = dict.fromkeys(w.lower() for w in _WORD_RE.findall(query))
    return " OR ".join(f'"{w}"' for w in words)


# structured_output=False: tools return JSON text. Otherwise FastMCP adds an output schema
# that the client re-validates with jsonschema on every call (about 0.4 ms each).
@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def search_kb(query: str, ctx: Context[ServerSession, KBIndex], limit: int = 3) -> str:
    """Search the support knowledge base; returns the best-matching articles, best first."""
    record(SERVER, "search_kb", {"query": query, "limit": limit})
    if limit < 1 or limit > MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT} (got {limit})")
    expression = match_expression(query)
    if not expression:
        return json.dumps({"query": query, "results": []})
    rows = ctx.request_context.lifespan_context.conn.execute(
        "SELECT id, title, body, snippet(articles, 2, '', '', '...', 24) AS snippet,"
        " bm25(articles, 0.0, 5.0, 1.0) AS rank"
        " FROM articles WHERE articles MATCH ? ORDER BY rank LIMIT ?",
        (expression, limit),
    ).fetchall()
    results = [
        {"id": r[0], "title": r[1], "snippet": r[3], "body": r[2], "score": round(-r[4], 6)}
        for r in rows
    ]
    return json.dumps({"query": query, "results": results})


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def get_article(article_id: str, ctx: Context[ServerSession, KBIndex]) -> str:
    """Read one knowledge-base article by id (e.g. KB-201): its title and customer-facing text."""
    record(SERVER, "get_article", {"article_id": article_id})
    wanted = article_id.strip().upper()
    row = ctx.request_context.lifespan_context.conn.execute(
        "SELECT id, title, body FROM articles WHERE id = ?", (wanted,)
    ).fetchone()
    if row is None:
        raise ValueError(f"no article {article_id!r}; search with search_kb to find article ids")
    return json.dumps({"id": row[0], "title": row[1], "body": row[2]})


if __name__ == "__main__":
    serving()
    run_stdio(mcp)
    # stdin closed (the hub went away, perhaps SIGKILLed): leave at once rather than spend
    # most of a second in interpreter shutdown while the parent is gone. Every protocol
    # message was flushed as it was written; the database connection closed in the lifespan.
    os._exit(0)
