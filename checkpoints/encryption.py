"""Checkpoints encrypted at rest: AES-256-GCM after compression, through LangGraph's own
`EncryptedSerializer` (the same plug point compression uses, `checkpoints/serde.py`).

Checkpoint blobs and pending writes hold customer names, orders and notes. With keys
configured, every blob a saver writes is compressed (or kept raw when that does not shrink
it) and then encrypted with AES-GCM under the current key; its cipher name records both and
the key id (`zlib.aes.<kid>`, `raw.aes.<kid>`), so a blob names the key it needs. AES-GCM
authenticates, so a changed byte is refused (`DamagedCheckpointError`), never half read.

Keys: `MUSTER_ENCRYPTION_KEYS` (or a file named by `MUSTER_ENCRYPTION_KEYS_FILE`, one per
line) holds `kid:base64key` entries, 32-byte keys, comma- or newline-separated. The first is
the current key: it writes. Every key listed reads. Rotation: put a new key first and keep
the old ones after it; blobs written before are read with the key they name, new ones are
written with the new key; an old key may be dropped once no thread needs it. Blobs written
without encryption (plain, `zlib` or `raw`) still read, so turning encryption on needs no
migration. Without keys, nothing is encrypted (compression only), as before.

`cryptography` provides AES-GCM (already installed with LangGraph's API server; declared in
pyproject.toml); LangGraph's `EncryptedSerializer.from_pycryptodome_aes` would need
pycryptodome and knows one key, no rotation.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

from checkpoints.compression import DamagedCheckpointError, ZlibCipher
from workers.errors import ConfigError

KEYS_ENV = "MUSTER_ENCRYPTION_KEYS"
KEYS_FILE_ENV = "MUSTER_ENCRYPTION_KEYS_FILE"
NONCE_BYTES = 12


def _parse(text: str, source: str) -> dict[str, bytes]:
    keys: dict[str, bytes] = {}
    for entry in (e.strip() for e in text.replace("\n", ",").split(",")):
        if not entry:
            continue
        kid, sep, encoded = entry.partition(":")
        if not sep or not kid.isalnum():
            raise ConfigError(f"{source}: an entry must be 'kid:base64key' (kid letters/digits)")
        try:
            key = base64.b64decode(encoded, validate=True)
        except ValueError:
            raise ConfigError(f"{source}: key {kid!r} is not base64") from None
        if len(key) != 32:
            raise ConfigError(f"{source}: key {kid!r} must be 32 bytes (AES-256), not {len(key)}")
        keys.setdefault(kid, key)
    return keys


def configured_keys() -> dict[str, bytes]:
    """The keys from the environment, the writing one first; empty when none are set."""
    text, source = os.environ.get(KEYS_ENV, ""), KEYS_ENV
    path = os.environ.get(KEYS_FILE_ENV)
    if not text and path:
        try:
            text, source = Path(path).read_text(encoding="utf-8"), path
        except OSError as error:
            raise ConfigError(f"{KEYS_FILE_ENV}={path}: {error}") from None
    return _parse(text, source) if text.strip() else {}


class AesCipher:
    """A `CipherProtocol`: compress (`ZlibCipher`), then AES-256-GCM under the current key."""

    def __init__(self, keys: dict[str, bytes]) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        if not keys:
            raise ConfigError("encryption needs at least one key")
        self._aead = {kid: AESGCM(key) for kid, key in keys.items()}
        self.current = next(iter(keys))
        """The id of the key that writes."""
        self._zlib = ZlibCipher()

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        packing, packed = self._zlib.encrypt(plaintext)
        nonce = os.urandom(NONCE_BYTES)
        sealed = self._aead[self.current].encrypt(nonce, packed, packing.encode())
        return f"{packing}.aes.{self.current}", nonce + sealed

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        from cryptography.exceptions import InvalidTag

        packing, sep, kid = ciphername.partition(".aes.")
        if not sep:  # written before encryption was on: compressed or raw only
            return self._zlib.decrypt(ciphername, ciphertext)
        aead = self._aead.get(kid)
        if aead is None:
            raise ConfigError(
                f"a stored checkpoint is encrypted with key {kid!r}, which {KEYS_ENV} does not "
                f"hold (it holds {', '.join(self._aead)}); add that key to read it"
            )
        try:
            packed = aead.decrypt(
                ciphertext[:NONCE_BYTES], ciphertext[NONCE_BYTES:], packing.encode()
            )
        except InvalidTag:
            raise DamagedCheckpointError(
                "a stored checkpoint failed its AES-GCM check: its bytes changed after it was "
                "written, or the key with its id is not the key it was written with"
            ) from None
        return self._zlib.decrypt(packing, packed)
