"""Every digest Muster takes of a JSON value: one encoding, four kinds (standard library only).

The one encoding is `canonical_json`: sorted keys, no spaces, and text beyond ASCII written as
itself (`ensure_ascii=False`), hashed with sha256 over its UTF-8 bytes. Every kind below is a
sha256 of that text, so two sides that take the same kind of the same value always agree:

- `content_digest(value)`, the full 64 hex characters: what a value is. The hub pins each
  tool's definition by it (`workers.hub.catalogue`); the other kinds are cut from it.
- `action_digest(tool, args)`, the content digest of `{"tool": tool, "args": args}`: what an
  approval binds. The graph shows it to the human, with the idempotency key among the
  arguments (`graph.proposals.approval_digest`), and mints the approval token over it
  (`servers.approval`); a write server verifies the token against the digest it takes of the
  arguments it got, and keeps it beside the idempotency key as the write's `args_digest`.
- `short_digest(value)`, its first 16 hex characters: an identity inside a thread. A
  proposed action's (`ProposedAction.short_digest`, which the idempotency key is made from),
  a packet's (`Handoff.fingerprint`), a schema's tag in a request digest.
- `replay_digest(value)`, its first 24 hex characters: the key a model request is recorded
  under and replayed by (`workers.models.request_digest` builds the value from the messages).

Hashing raw text or bytes (a pack's files, a phrase table, a long tool name's suffix, an id
made from an idempotency key) is not one of these kinds and stays where it is done.

Why here: servers are reached only over MCP and import nothing of ours, and workers never
import servers, so neither side could hold the other's digest; there used to be two copies.
This module is the one a write server, the workers and the graph all import, the single
exception tests/test_layers.py allows: it imports only the standard library and nothing of
ours, so importing it brings no server along. A server kept outside `servers/` may copy it.

What changed, and what still verifies. Before this module `servers.approval.action_digest`
wrote its JSON with `json.dumps`' default `ensure_ascii=True` (`é` as `\\u00e9`), while the
workers' digests wrote UTF-8. For ASCII-only values the two texts are the same bytes, so no
digest of ASCII input changes: approval digests in checkpoints and the audit, tokens,
`args_digest` rows, idempotency keys, recorded request digests all still match. Content,
short and replay digests never escaped, so they are unchanged for any input. Only an action
digest over arguments with non-ASCII text changes (none of the bundled write tools takes
free text: their arguments are ids, amounts and keys, but a pack's tool may). One minted
before is that action's `legacy_action_digest`, and verification accepts it: `action_digests`
gives the current digest and, when it differs, the legacy one; `servers.approval.verify_token`
accepts a token over either, a write server replays a key whose stored `args_digest` is
either, and the graph takes an action record or a decision carrying either as made for the
same action. New digests are always the current ones.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

SHORT_DIGEST_LEN = 16
"""Hex characters of a short digest."""

REPLAY_DIGEST_LEN = 24
"""Hex characters of a replay digest."""


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no spaces and non-ASCII text as itself: the one form every
    digest is taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _sha256(text: str) -> str:
    # `surrogatepass`: a lone surrogate (JSON may carry one) hashes instead of raising; no
    # well-formed text encodes to those bytes, so it digests like nothing else.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def content_digest(value: Any) -> str:
    """The full sha256 hex digest of `value`'s canonical JSON."""
    return _sha256(canonical_json(value))


def short_digest(value: Any) -> str:
    """The first `SHORT_DIGEST_LEN` hex characters of `value`'s content digest: an identity
    inside a thread (a proposal, a packet)."""
    return content_digest(value)[:SHORT_DIGEST_LEN]


def replay_digest(value: Any) -> str:
    """The first `REPLAY_DIGEST_LEN` hex characters of `value`'s content digest: the key of
    a recorded model request."""
    return content_digest(value)[:REPLAY_DIGEST_LEN]


def _action(tool: str, args: Mapping[str, object]) -> dict[str, Any]:
    return {"tool": tool, "args": dict(args)}


def action_digest(tool: str, args: Mapping[str, object]) -> str:
    """The content digest of `{"tool": tool, "args": args}`: what an approval and its token
    bind, exactly this tool with exactly these arguments."""
    return content_digest(_action(tool, args))


def legacy_action_digest(tool: str, args: Mapping[str, object]) -> str:
    """The action digest as it was minted before the one encoding, with non-ASCII text
    escaped (`ensure_ascii=True`); the same as `action_digest` for ASCII-only arguments.
    Only for verifying a digest or token minted then: never mint one with it."""
    escaped = json.dumps(_action(tool, args), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(escaped.encode("ascii")).hexdigest()


def action_digests(tool: str, args: Mapping[str, object]) -> tuple[str, ...]:
    """The digests a stored approval of this action may carry: the current one first, then
    the legacy one when the arguments hold non-ASCII text (otherwise the two are equal)."""
    current, legacy = action_digest(tool, args), legacy_action_digest(tool, args)
    return (current,) if legacy == current else (current, legacy)
