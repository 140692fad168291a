"""The digests: one module (`servers/digests.py`), one encoding, four kinds that agree.

The action digest (what an approval and its token bind), the content digest (what a value
is), the short digest (an identity inside a thread) and the replay digest (a recorded model
request's key) are all sha256 of one canonical JSON. They used to be two copies that
disagreed beyond ASCII: the servers' escaped non-ASCII text, the workers' wrote it as UTF-8.
The old two are written out here (`old_*`) so the promise of the change is checked: nothing
minted before over ASCII input changes, and what was minted over non-ASCII arguments still
verifies.
"""

from __future__ import annotations

import hashlib
import json
import time
from contextlib import closing
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from graph.approvers import check_decision, load_approvers
from graph.proposals import approval_digest, approval_digests, idempotency_key, pending_proposals
from servers import orders
from servers.approval import MISMATCH, mint_token, verify_token
from servers.digests import (
    action_digest,
    action_digests,
    canonical_json,
    content_digest,
    legacy_action_digest,
    replay_digest,
    short_digest,
)
from workers.contracts import ActionRecord, Handoff, ProposedAction, Report
from workers.models import request_digest

CASES: list[tuple[str, dict[str, Any]]] = [
    ("orders.issue_refund", {"order_id": "12345", "amount_cents": 4999}),
    ("orders.issue_refund", {"amount_cents": 4999, "order_id": "12345"}),  # key order is moot
    (
        "orders.issue_refund",
        {"order_id": "12345", "amount_cents": 4999, "idempotency_key": "mst-abc"},
    ),
    ("kb.search_kb", {}),
    ("x.y", {"nested": {"b": [1, 2.5, None, True], "a": "q"}, "empty": ""}),
    ("x.y", {"control": 'tab\there, quote " and backslash \\'}),
]

BEYOND_ASCII: list[tuple[str, dict[str, Any]]] = [
    ("x.y", {"note": "café"}),
    ("orders.issue_refund", {"order_id": "12345", "amount_cents": 1, "charge_id": "ch_ü"}),
    ("x.y", {"text": "日本語 and emoji 🎉", "Schlüssel": ["ß", {"ç": "ã"}]}),
]


def old_server_action_digest(tool: str, args: dict[str, Any]) -> str:
    """`servers.approval.action_digest` before the one module (json.dumps' ensure_ascii)."""
    canonical = json.dumps(
        {"tool": tool, "args": dict(args)}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def old_sha256_hex(value: Any) -> str:
    """`workers.contracts.sha256_hex` before the one module (UTF-8, not escaped)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(("tool", "args"), CASES + BEYOND_ASCII)
def test_the_kinds_agree_on_any_input(tool: str, args: dict[str, Any]) -> None:
    full = content_digest({"tool": tool, "args": args})
    assert action_digest(tool, args) == full and len(full) == 64
    assert short_digest({"tool": tool, "args": args}) == full[:16]
    assert replay_digest({"tool": tool, "args": args}) == full[:24]
    action = ProposedAction(tool=tool, args=args)
    assert action.short_digest() == full[:16]


@pytest.mark.parametrize(("tool", "args"), CASES)
def test_no_digest_of_ascii_input_changes(tool: str, args: dict[str, Any]) -> None:
    """Approval digests, tokens and `args_digest` rows stored before still match."""
    assert action_digest(tool, args) == old_server_action_digest(tool, args)
    assert action_digest(tool, args) == old_sha256_hex({"tool": tool, "args": args})
    assert action_digests(tool, args) == (action_digest(tool, args),)  # no legacy to accept


@pytest.mark.parametrize(("tool", "args"), BEYOND_ASCII)
def test_beyond_ascii_only_the_action_digest_changes_and_its_old_form_is_kept(
    tool: str, args: dict[str, Any]
) -> None:
    value = {"tool": tool, "args": args}
    # The workers' digests (content, short, replay: idempotency keys, request digests) did
    # not escape, so they are what they were.
    assert content_digest(value) == old_sha256_hex(value)
    assert "\\u" not in canonical_json(value)
    # The servers' action digest did: the new one differs, the old one is the legacy one.
    assert action_digest(tool, args) != old_server_action_digest(tool, args)
    assert legacy_action_digest(tool, args) == old_server_action_digest(tool, args)
    assert action_digests(tool, args) == (
        action_digest(tool, args),
        legacy_action_digest(tool, args),
    )


def test_a_request_digest_is_the_replay_digest_it_was() -> None:
    from langchain_core.messages import HumanMessage

    messages = [HumanMessage("Meine Bestellung 12345 kam doppelt – Rückbuchung?")]
    flat = [["orders_find_order"], [["human", messages[0].content, [], None]]]
    assert request_digest(messages, ["orders_find_order"]) == old_sha256_hex(flat)[:24]


def test_a_lone_surrogate_digests_instead_of_raising() -> None:
    """JSON may carry one; the old server escaped it, the old workers raised on it."""
    assert len(action_digest("x.y", {"s": "\ud800"})) == 64
    assert legacy_action_digest("x.y", {"s": "\ud800"}) == old_server_action_digest(
        "x.y", {"s": "\ud800"}
    )
    assert action_digest("x.y", {"s": "\ud800"}) != action_digest("x.y", {"s": "\ud801"})


def test_a_token_minted_over_the_old_encoding_still_verifies() -> None:
    args = {"order_id": "12345", "amount_cents": 500, "idempotency_key": "clé-1"}
    old = mint_token(
        old_server_action_digest("orders.issue_refund", args), secret="s", expires_at=2e9
    )
    digests = action_digests("orders.issue_refund", args)
    assert verify_token(old, digests, secret="s", now=time.time()) is None
    assert verify_token(old, digests[0], secret="s", now=time.time()) == MISMATCH
    new = mint_token(digests[0], secret="s", expires_at=2e9)
    assert verify_token(new, digests, secret="s", now=time.time()) is None
    # Still one action only: a token over other arguments matches neither digest.
    other = action_digests("orders.issue_refund", {**args, "amount_cents": 501})
    assert verify_token(old, other, secret="s", now=time.time()) == MISMATCH


def test_a_refund_written_under_the_old_digest_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The orders ledger's row from before (its `args_digest` escaped) replays by its key,
    under an old token, instead of being refused as the key reused for other arguments."""
    monkeypatch.setenv("MUSTER_APPROVAL_SECRET", "s")
    monkeypatch.delenv("MUSTER_CALL_LOG", raising=False)
    path = tmp_path / "orders.sqlite"
    orders.ensure_database(path)
    with closing(orders.connect(path)) as conn:
        oid = conn.execute("SELECT order_id FROM orders LIMIT 1").fetchone()[0]
        key = "clé-1"
        args = {"order_id": oid, "amount_cents": 1, "idempotency_key": key}
        legacy = old_server_action_digest(orders.REFUND_TOOL, args)
        result = {"refund_id": "re_old", **args, "status": "refunded", "replayed": False}
        conn.execute(
            "INSERT INTO refunds (refund_id, order_id, amount_cents, idempotency_key,"
            " args_digest, created_at, result_json) VALUES ('re_old', ?, 1, ?, ?, 't', ?)",
            (oid, key, legacy, json.dumps(result)),
        )
        ctx: Any = SimpleNamespace(
            request_context=SimpleNamespace(lifespan_context=SimpleNamespace(conn=conn))
        )
        token = mint_token(legacy, secret="s", expires_at=time.time() + 60)
        replayed = json.loads(orders.issue_refund(oid, 1, key, ctx, approval=token))
        assert (replayed["refund_id"], replayed["replayed"]) == ("re_old", True)
        other = mint_token(
            action_digest(orders.REFUND_TOOL, {**args, "amount_cents": 2}),
            secret="s",
            expires_at=time.time() + 60,
        )
        with pytest.raises(ValueError, match="reused with different arguments"):
            orders.issue_refund(oid, 2, key, ctx, approval=other)
        rows = conn.execute("SELECT refund_id FROM refunds WHERE idempotency_key = ?", (key,))
        assert [tuple(r) for r in rows] == [("re_old",)]


def _decided_before(thread: str, action: ProposedAction) -> ActionRecord:
    """The record an older Muster kept for `action`: under the escaped digest."""
    key = idempotency_key(thread, action)
    return ActionRecord(
        digest=old_server_action_digest(action.tool, {**action.args, "idempotency_key": key}),
        tool=action.tool,
        args=action.args,
        idempotency_key=key,
        proposed_by=action.proposed_by,
        decision="approved",
        decided_by="lead",
        decided_at=1.0,
        expires_at=2.0,
        status="executed",
    )


def test_an_action_decided_under_the_old_digest_is_not_asked_again() -> None:
    thread = "t-ü"
    action = ProposedAction(tool="x.y", args={"note": "café"}, proposed_by="billing")
    report = Report(
        packet_id="p1", worker="billing", objective="o", status="ok", proposed_actions=[action]
    )
    state: Any = {"domain": "support", "reports": [report], "actions": []}
    assert pending_proposals(state, thread) == [action]
    record = _decided_before(thread, action)
    assert record.digest != approval_digest(action, record.idempotency_key)
    assert record.digest in approval_digests(action, record.idempotency_key)
    assert pending_proposals({**state, "actions": [record]}, thread) == []


def test_a_decision_carrying_the_old_digest_names_the_action() -> None:
    action = ProposedAction(tool="x.y", args={"note": "café"})
    current, legacy = approval_digests(action, "mst-k")
    config = load_approvers()
    value = {"approved": False, "digest": legacy[:12], "by": "bob"}
    checked = check_decision(
        value, digest=current, tool=action.tool, args=action.args, config=config, earlier=[legacy]
    )
    assert getattr(checked, "decision", None) == "rejected"
    without = check_decision(
        value, digest=current, tool=action.tool, args=action.args, config=config
    )
    assert "digest mismatch" in getattr(without, "error", "")


def test_a_packet_fingerprint_is_a_short_digest() -> None:
    packet = Handoff(
        id="p",
        sender="s",
        recipient="billing",
        objective="Prüfe die Bestellung 12345.",
        inputs={"order_id": "12345"},
        tool_allow=("orders.find_order",),
    )
    expected = {
        "recipient": "billing",
        "objective": "Prüfe die Bestellung 12345.",
        "inputs": {"order_id": "12345"},
        "tool_allow": ["orders.find_order"],
    }
    assert packet.fingerprint() == old_sha256_hex(expected)[:16] == short_digest(expected)
