"""Compressed checkpoint blobs: `ZlibCipher`, zlib through LangGraph's serializer plug point.

`ZlibCipher` is a "cipher" that compresses; `checkpoints.serde.compressed` puts it in
LangGraph's `EncryptedSerializer`. Every blob a saver writes (checkpoints, pending writes,
Postgres channel blobs) goes through it; its type tag gains `+zlib` (or `+raw` when
compressing would not shrink it), and a blob without a `+` suffix, written before compression
was on, still loads unchanged.

Level 1 with a 4 KB window: a report's observations are repetitive JSON and text, so the
fastest level already takes a fan-out's blobs to about a third. Most blobs are one task's write
of a few KB; zlib's default 32 KB window and 128 KB hash tables cost more to set up than
compressing such a blob, so the small window halves the CPU (measured on a 200-packet fan-out:
621 blobs, 884 KB to 275 KB, within 1% of the default window's size). Blobs under
`MIN_BYTES` are stored as they are. `zlib.decompress` reads any window size.
"""

from __future__ import annotations

import zlib

from workers.errors import ConfigError

ZLIB_LEVEL = 1
"""zlib's fastest level: most of the gain at the least CPU."""
WINDOW_BITS = 12
"""A 4 KB window (zlib's default is 32 KB): about the size of one report."""
MEM_LEVEL = 4
"""Smaller hash tables to match the window (zlib's default is 8)."""
MIN_BYTES = 64
"""Blobs shorter than this (empty writes, routing values) are not worth compressing."""


class DamagedCheckpointError(ConfigError):
    """A stored blob cannot be decompressed: its bytes were changed since it was written (a
    disk error, a hand edit, a copy cut short). The saver that read it names the store
    (`checkpoints.saver.open_checkpointer`)."""


class ZlibCipher:
    """A `CipherProtocol` that compresses instead of encrypting (names `zlib` and `raw`)."""

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        """zlib-compress `plaintext`, or keep it as it is (`raw`) when that is no larger."""
        if len(plaintext) < MIN_BYTES:
            return "raw", plaintext
        compressor = zlib.compressobj(ZLIB_LEVEL, zlib.DEFLATED, WINDOW_BITS, MEM_LEVEL)
        packed = compressor.compress(plaintext) + compressor.flush()
        if len(packed) < len(plaintext):
            return "zlib", packed
        return "raw", plaintext

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        """The bytes `encrypt` was given."""
        if ciphername == "zlib":
            try:
                return zlib.decompress(ciphertext)
            except zlib.error as error:  # zlib's checksum caught changed bytes
                raise DamagedCheckpointError(
                    f"a stored checkpoint is damaged ({error}); its bytes changed after it was "
                    "written"
                ) from None
        if ciphername == "raw":
            return ciphertext
        raise ValueError(
            f"cannot read a checkpoint blob compressed with {ciphername!r}: only zlib and raw "
            "are known; was it written by another program's serializer?"
        )
