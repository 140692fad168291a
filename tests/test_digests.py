"""The two action digests stay in step.

Servers are reached only over MCP and never import `workers`, so `servers.approval` keeps its
own `action_digest`. The graph mints approvals with it and the orders server checks them with
it; `workers.contracts.sha256_hex` is the digest helper for everything else. If the two ever
drift apart, a digest taken on one side stops naming the same action on the other.
"""

from __future__ import annotations

from typing import Any

import pytest

from servers.approval import action_digest
from workers.contracts import ProposedAction, digest, sha256_hex

CASES: list[tuple[str, dict[str, Any]]] = [
    ("orders.issue_refund", {"order_id": "12345", "amount_cents": 4999}),
    ("orders.issue_refund", {"amount_cents": 4999, "order_id": "12345"}),  # key order is moot
    (
        "orders.issue_refund",
        {"order_id": "12345", "amount_cents": 4999, "idempotency_key": "mst-abc"},
    ),
    ("kb.search_kb", {}),
    ("x.y", {"nested": {"b": [1, 2.5, None, True], "a": "q"}, "empty": ""}),
]


@pytest.mark.parametrize(("tool", "args"), CASES)
def test_server_action_digest_matches_sha256_hex(tool: str, args: dict[str, Any]) -> None:
    assert action_digest(tool, args) == sha256_hex({"tool": tool, "args": args})


@pytest.mark.xfail(
    strict=True,
    reason="servers.approval escapes non-ASCII (json.dumps default), canonical_json does not; "
    "nothing compares the two on such arguments today",
)
def test_server_action_digest_matches_sha256_hex_beyond_ascii() -> None:
    args = {"note": "café"}
    assert action_digest("x.y", args) == sha256_hex({"tool": "x.y", "args": args})


def test_short_digest_is_a_prefix_of_the_full_one() -> None:
    action = ProposedAction(tool="orders.issue_refund", args={"order_id": "1", "amount_cents": 2})
    full = sha256_hex({"tool": action.tool, "args": action.args})
    assert len(full) == 64
    assert action.digest() == digest({"tool": action.tool, "args": action.args}) == full[:16]
