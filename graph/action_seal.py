"""A seal on every proposed action, so a pending action cannot be changed unseen.

The approval digest binds what a human approves, but a human who approves without checking
it (`muster approve THREAD --by lead`, as the quick start does) approves whatever the
checkpoint holds. Someone with write access to the checkpoint store could edit a pending
refund's arguments between proposal and approval. So the moment a worker's report enters
the state (`graph.dispatch`), each proposed action is sealed: an HMAC-SHA256 over the thread,
the tool, its arguments and the proposing worker, keyed by a secret the store does not hold.
`approve` checks the seal before anything else, with or without `--digest`; an action whose
seal does not hold is refused, recorded, and never put to a human or executed.

The key is `MUSTER_SEAL_KEY` if set (a fleet on several machines must share one), else a
random key kept in a file outside the store, created on first use with mode 0600:
`MUSTER_SEAL_KEY_FILE`, else `$XDG_CONFIG_HOME/muster/seal.key` (`~/.config/...`).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import secrets
from functools import lru_cache
from pathlib import Path

from workers.contracts import ProposedAction, canonical_json

KEY_ENV = "MUSTER_SEAL_KEY"
KEY_FILE_ENV = "MUSTER_SEAL_KEY_FILE"


def key_file() -> Path:
    """Where the seal key is kept when `MUSTER_SEAL_KEY` is not set."""
    named = os.environ.get(KEY_FILE_ENV)
    if named:
        return Path(named)
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "muster" / "seal.key"


@lru_cache(maxsize=8)
def _key_from(path: Path) -> bytes:
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        # O_EXCL: of two processes creating it at once, one wins and the other reads its key.
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_hex(32))
    return path.read_text(encoding="utf-8").strip().encode()


def seal_key() -> bytes:
    """The key seals are made with (see the module docstring). The first call may create
    the key file: from a graph node, use `seal_key_off_loop`."""
    from_env = os.environ.get(KEY_ENV)
    return from_env.encode() if from_env else _key_from(key_file())


async def seal_key_off_loop() -> bytes:
    """`seal_key` on a worker thread: reading (or creating) the key file is blocking I/O,
    which an event loop must not do (LangGraph's dev server refuses it outright)."""
    return await asyncio.to_thread(seal_key)


def seal_of(thread: str, action: ProposedAction, key: bytes | None = None) -> str:
    """The seal of `action` proposed in `thread` (with `key`, else `seal_key()`)."""
    message = canonical_json([thread, action.tool, action.args, action.proposed_by])
    secret = key if key is not None else seal_key()
    return hmac.new(secret, message.encode(), hashlib.sha256).hexdigest()[:40]


def sealed(thread: str, action: ProposedAction, key: bytes | None = None) -> ProposedAction:
    """`action` carrying its seal."""
    return action.model_copy(update={"seal": seal_of(thread, action, key)})


def seal_holds(thread: str, action: ProposedAction, key: bytes | None = None) -> bool:
    """True if `action` is exactly what was proposed in `thread`."""
    return bool(action.seal) and hmac.compare_digest(action.seal, seal_of(thread, action, key))
