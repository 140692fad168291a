"""Approval tokens bound to one exact action (stdlib only).

The graph mints a token after a human approves an action; the orders server verifies it before it
writes. A token is ``"<expires_at>.<hmac>"`` where the HMAC-SHA256 (keyed by the shared secret
``MUSTER_APPROVAL_SECRET``) covers the action digest and the expiry, so a token approves exactly
one tool with exactly these arguments, until it expires.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
from collections.abc import Mapping

SECRET_ENV_VAR = "MUSTER_APPROVAL_SECRET"

MISSING = "missing approval"
MALFORMED = "malformed approval"
MISMATCH = "approval does not match this action"
EXPIRED = "approval expired"

_TOKEN_RE = re.compile(r"([0-9]{1,12})\.([0-9a-f]{64})")


def action_digest(tool: str, args: Mapping[str, object]) -> str:
    """Return the sha256 hex digest of the canonical JSON of {"tool": tool, "args": args}."""
    # Kept equal to workers.contracts.sha256_hex (servers can't import it): test_digests.py
    canonical = json.dumps(
        {"tool": tool, "args": dict(args)}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _mac(secret: str, digest: str, expires: int) -> str:
    message = f"{digest}.{expires}".encode()
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def mint_token(digest: str, *, secret: str, expires_at: float) -> str:
    """Return a token approving the action with this digest until expires_at (unix seconds)."""
    expires = int(expires_at)
    return f"{expires}.{_mac(secret, digest, expires)}"


def verify_token(token: str, digest: str, *, secret: str, now: float) -> str | None:
    """Return None if the token approves this digest at time now, else the reason it does not."""
    if not token or not token.strip():
        return MISSING
    match = _TOKEN_RE.fullmatch(token.strip())
    if match is None:
        return MALFORMED
    expires = int(match.group(1))
    if not hmac.compare_digest(match.group(2), _mac(secret, digest, expires)):
        return MISMATCH
    if now >= expires:
        return EXPIRED
    return None


def secret_from_env() -> str | None:
    """Return MUSTER_APPROVAL_SECRET, or None when it is unset or empty."""
    return os.environ.get(SECRET_ENV_VAR) or None
