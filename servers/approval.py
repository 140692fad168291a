"""Approval tokens bound to one exact action (stdlib only).

The graph mints a token after a human approves an action; the orders server verifies it before it
writes. A token is ``"<expires_at>.<hmac>"`` where the HMAC-SHA256 (keyed by the shared secret
``MUSTER_APPROVAL_SECRET``) covers the action digest and the expiry, so a token approves exactly
one tool with exactly these arguments, until it expires. The digest is
`servers.digests.action_digest`, re-exported here as part of the format.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Sequence

# Re-exported: the digest a token covers is part of the published format.
from servers.digests import action_digest as action_digest

SECRET_ENV_VAR = "MUSTER_APPROVAL_SECRET"

MISSING = "missing approval"
MALFORMED = "malformed approval"
MISMATCH = "approval does not match this action"
EXPIRED = "approval expired"

_TOKEN_RE = re.compile(r"([0-9]{1,12})\.([0-9a-f]{64})")


def _mac(secret: str, digest: str, expires: int) -> str:
    message = f"{digest}.{expires}".encode()
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def mint_token(digest: str, *, secret: str, expires_at: float) -> str:
    """Return a token approving the action with this digest until expires_at (unix seconds)."""
    expires = int(expires_at)
    return f"{expires}.{_mac(secret, digest, expires)}"


def verify_token(
    token: str, digest: str | Sequence[str], *, secret: str, now: float
) -> str | None:
    """Return None if the token approves this digest at time now, else the reason it does not.

    `digest` may be the action's digests (`action_digests`: the current one, then the one an
    older graph minted for non-ASCII arguments); a token over any of them approves it."""
    if not token or not token.strip():
        return MISSING
    match = _TOKEN_RE.fullmatch(token.strip())
    if match is None:
        return MALFORMED
    expires = int(match.group(1))
    digests = (digest,) if isinstance(digest, str) else tuple(digest)
    # Every candidate is compared, so the time taken does not say which one matched.
    matched = [hmac.compare_digest(match.group(2), _mac(secret, d, expires)) for d in digests]
    if not any(matched):
        return MISMATCH
    if now >= expires:
        return EXPIRED
    return None


def secret_from_env() -> str | None:
    """Return MUSTER_APPROVAL_SECRET, or None when it is unset or empty."""
    return os.environ.get(SECRET_ENV_VAR) or None
