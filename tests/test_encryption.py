"""Checkpoints encrypted at rest (AES-256-GCM through LangGraph's EncryptedSerializer): a real
run's blobs in the SQLite file hold no customer name in clear, a rotated key still reads old
blobs, a store written without encryption still reads, a missing key is one clear error."""

from __future__ import annotations

import base64
import sqlite3

import pytest

from checkpoints.encryption import AesCipher, configured_keys
from graph.app.runtime import open_runtime, stream_run
from tests.conftest import MusterEnv
from workers.errors import ConfigError

TICKET = "Customer says order #12345 was charged twice. What happened and what can we do?"


def key(byte: int) -> str:
    return base64.b64encode(bytes([byte]) * 32).decode()


def blobs(db: object) -> list[bytes]:
    with sqlite3.connect(str(db)) as conn:
        rows = conn.execute("SELECT checkpoint FROM checkpoints").fetchall()
        rows += conn.execute("SELECT value FROM writes").fetchall()
    return [bytes(r[0]) for r in rows if r[0] is not None]


async def _run(env: MusterEnv, thread: str) -> dict:
    async with open_runtime(db=env.checkpoint_db) as runtime:
        return await stream_run(runtime, thread, {"request": TICKET})


async def _read(env: MusterEnv, thread: str) -> dict:
    from checkpoints.threads import thread_config

    async with open_runtime(db=env.checkpoint_db) as runtime:
        return dict((await runtime.graph.aget_state(thread_config(thread))).values)


@pytest.mark.integration
async def test_a_runs_checkpoints_hold_no_customer_data_in_clear(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSTER_ENCRYPTION_KEYS", f"k1:{key(1)}")
    values = await _run(muster_env, "enc-1")
    # The run worked, and read its own encrypted state back (it waits for the refund).
    assert any("Okafor" in f.observation for r in values["reports"] for f in r.findings)
    stored = blobs(muster_env.checkpoint_db)
    assert stored and not any(b"Okafor" in b or b"12345" in b for b in stored)

    # Rotation: a new key writes, the old one still reads what it wrote.
    monkeypatch.setenv("MUSTER_ENCRYPTION_KEYS", f"k2:{key(2)},k1:{key(1)}")
    again = await _run(muster_env, "enc-2")
    assert [r.status for r in again["reports"]] == [r.status for r in values["reports"]]
    old = await _read(muster_env, "enc-1")  # written with k1, read under the rotated keys
    assert [r.packet_id for r in old["reports"]] == [r.packet_id for r in values["reports"]]
    with sqlite3.connect(str(muster_env.checkpoint_db)) as conn:
        kinds = {k.rsplit(".", 1)[-1] for (k,) in conn.execute("SELECT type FROM checkpoints")}
    assert kinds == {"k1", "k2"}

    # Without the old key, a thread it wrote is one clear error naming the key.
    monkeypatch.setenv("MUSTER_ENCRYPTION_KEYS", f"k2:{key(2)}")
    from checkpoints.saver import strict_serializer

    serde = strict_serializer([])
    with sqlite3.connect(str(muster_env.checkpoint_db)) as conn:
        kind, blob = conn.execute("SELECT type, checkpoint FROM checkpoints LIMIT 1").fetchone()
    assert kind.endswith(".aes.k1")
    with pytest.raises(ConfigError, match="key 'k1'"):
        serde.loads_typed((kind, blob))


def test_unencrypted_blobs_still_read_and_changed_bytes_are_refused() -> None:
    from checkpoints.compression import DamagedCheckpointError, ZlibCipher

    plain = b'{"customer": "R. Okafor"}' * 10
    name, packed = ZlibCipher().encrypt(plain)
    cipher = AesCipher({"k1": bytes(32)})
    assert cipher.decrypt(name, packed) == plain  # written before encryption was on
    name, sealed = cipher.encrypt(plain)
    assert name.endswith(".aes.k1") and b"Okafor" not in sealed
    assert cipher.decrypt(name, sealed) == plain
    tampered = sealed[:-1] + bytes([sealed[-1] ^ 1])
    with pytest.raises(DamagedCheckpointError):
        cipher.decrypt(name, tampered)


def test_keys_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MUSTER_ENCRYPTION_KEYS", "k1:short")
    with pytest.raises(ConfigError, match="not base64|32 bytes"):
        configured_keys()
    monkeypatch.setenv("MUSTER_ENCRYPTION_KEYS", f"k1:{base64.b64encode(b'x' * 16).decode()}")
    with pytest.raises(ConfigError, match="must be 32 bytes"):
        configured_keys()
    monkeypatch.delenv("MUSTER_ENCRYPTION_KEYS")
    assert configured_keys() == {}
