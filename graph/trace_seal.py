"""The originals of a trace line's redacted fields, sealed beside them with AES-256-GCM.

Why traces are redacted *and* sealed, not one or the other: the JSONL trace is read by people
(`jq`, a file attached to a bug) and by `muster replay`, which must serve every model and
tool call the run made exactly as it was (a customer's name in a tool result is part of what
the worker read; a redacted one would give another answer and another request digest, so a
strict replay would fail). So each field redaction changed is written redacted, in clear,
and its original goes into the line's `sealed` field, encrypted: `read_trace` opens it for
whoever holds the key (replay, the timeline, which redacts again what it draws), and to
anyone else the file shows no personal data.

The key: the current key of `MUSTER_ENCRYPTION_KEYS` (the checkpoints' keys,
checkpoints/encryption.py; rotation the same: every listed key reads), else a key derived
with HKDF from the installation's seal key (graph/action_seal.py: `MUSTER_SEAL_KEY`, or its
0600 key file outside the store), named `seal`. A line names the key that sealed it
(`sealed: "<kid>:<base64>"`); the thread id is authenticated with it, so a sealed field
copied into another thread's trace does not open. A line whose key is not at hand stays
redacted (`opened` says so); `muster replay` then warns that it serves redacted text.
"""

from __future__ import annotations

import base64
import json
import os
from functools import lru_cache
from typing import Any

from checkpoints.encryption import configured_keys
from graph.action_seal import seal_key

SEALED = "sealed"
"""The trace line field holding the sealed originals."""
LOCAL_KID = "seal"
"""The id of the key derived from the seal key."""
NONCE_BYTES = 12


def _derived(secret: bytes) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"muster trace v1").derive(
        secret
    )


@lru_cache(maxsize=8)
def _keys(configured: tuple[tuple[str, bytes], ...], local: bytes) -> dict[str, Any]:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    keys = {kid: AESGCM(key) for kid, key in configured}
    keys.setdefault(LOCAL_KID, AESGCM(_derived(local)))
    return keys


def trace_keys() -> tuple[str, dict[str, Any]]:
    """The id of the key that seals, and every key that opens (AES-GCM objects)."""
    configured = tuple(configured_keys().items())
    keys = _keys(configured, seal_key())
    return (configured[0][0] if configured else LOCAL_KID), keys


def seal(fields: dict[str, Any], *, thread_id: str) -> str:
    """`fields` (JSON) encrypted under the current trace key, as `kid:base64`."""
    kid, keys = trace_keys()
    nonce = os.urandom(NONCE_BYTES)
    plain = json.dumps(fields, default=str).encode()
    sealed = keys[kid].encrypt(nonce, plain, thread_id.encode())
    return f"{kid}:{base64.b64encode(nonce + sealed).decode()}"


def opened(event: dict[str, Any]) -> dict[str, Any]:
    """`event` with its sealed originals put back, when the key is at hand; else as it is
    (redacted, still carrying `sealed`)."""
    value = event.get(SEALED)
    if not isinstance(value, str):
        return event
    kid, _, encoded = value.partition(":")
    try:
        _, keys = trace_keys()
        key = keys.get(kid)
        if key is None:
            return event
        raw = base64.b64decode(encoded)
        thread = str(event.get("thread_id", "")).encode()
        plain = key.decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], thread)
        fields = json.loads(plain)
    except Exception:  # a wrong key, a damaged line: it stays redacted
        return event
    restored = {k: v for k, v in event.items() if k != SEALED}
    restored.update(fields)
    return restored
