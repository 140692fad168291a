"""The savers' serializer wrapper: every blob compressed, and encrypted when keys are set.

`compressed(serde)` wraps a serializer in LangGraph's `EncryptedSerializer` with `ZlibCipher`
(checkpoints/compression.py), or `AesCipher` (checkpoints/encryption.py: compression, then
AES-GCM) when keys are configured. `EncryptedSerializer` rather than a serializer class of our
own, because LangGraph's `with_allowlist` (`_with_msgpack_allowlist`) knows how to carry the
strict msgpack allowlist through it to the inner `JsonPlusSerializer`; any other wrapper
silently loses strictness.
"""

from __future__ import annotations

from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

from checkpoints.compression import ZlibCipher
from checkpoints.encryption import AesCipher, configured_keys


def compressed(serde: SerializerProtocol) -> EncryptedSerializer:
    """`serde` with every blob zlib-compressed, and encrypted when keys are configured
    (`checkpoints/encryption.py`); it still reads uncompressed and unencrypted blobs."""
    keys = configured_keys()
    return EncryptedSerializer(AesCipher(keys) if keys else ZlibCipher(), serde)
