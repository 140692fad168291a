"""`muster delete` and `muster purge`: a thread's checkpoints, writes, trace and lease go;
its audit rows stay with their results redacted; a thread another process runs is refused."""

from __future__ import annotations

import json
import sqlite3

import pytest

from graph.trace import trace_path
from tests.conftest import MusterEnv
from tests.test_actions import CLI_TIMEOUT_S, REFUND_TICKET


def rows(env: MusterEnv, table: str, thread: str) -> int:
    with sqlite3.connect(env.checkpoint_db) as conn:
        (count,) = conn.execute(
            f"SELECT count(*) FROM {table} WHERE thread_id = ?", (thread,)
        ).fetchone()
    return int(count)


@pytest.mark.slow
@pytest.mark.integration
def test_delete_removes_a_thread_and_keeps_a_redacted_audit(muster_env: MusterEnv) -> None:
    cli = muster_env.cli
    assert cli("run", REFUND_TICKET, "--thread", "gone", timeout=CLI_TIMEOUT_S).returncode == 5
    assert cli("approve", "gone", "--by", "lead", timeout=CLI_TIMEOUT_S).returncode == 0
    other = cli("run", "Where is order 12321?", "--thread", "kept", timeout=CLI_TIMEOUT_S)
    assert other.returncode in (0, 3), other.stderr
    assert rows(muster_env, "checkpoints", "gone") and rows(muster_env, "writes", "gone")
    assert trace_path("gone").exists()
    with sqlite3.connect(muster_env.checkpoint_db) as conn:
        before = conn.execute("SELECT result FROM muster_audit WHERE thread_id='gone'").fetchall()
    assert any("12345" in r for (r,) in before)

    deleted = cli("delete", "gone", timeout=CLI_TIMEOUT_S)
    assert deleted.returncode == 0, deleted.stderr
    assert rows(muster_env, "checkpoints", "gone") == 0 and rows(muster_env, "writes", "gone") == 0
    assert not trace_path("gone").exists()
    with sqlite3.connect(muster_env.checkpoint_db) as conn:
        after = conn.execute("SELECT event, result FROM muster_audit WHERE thread_id='gone'")
        audit = after.fetchall()
    assert len(audit) == len(before) and all(json.loads(r) == {"redacted": True} for _, r in audit)
    assert rows(muster_env, "checkpoints", "kept") > 0  # another thread is untouched
    shown = cli("show", "gone", timeout=CLI_TIMEOUT_S)
    assert shown.returncode == 2 and "unknown thread gone" in shown.stderr
    again = cli("delete", "gone", timeout=CLI_TIMEOUT_S)
    assert again.returncode == 2 and "unknown thread gone" in again.stderr

    kept = cli("purge", "--older-than", "1", timeout=CLI_TIMEOUT_S)
    assert kept.returncode == 0 and "purged 0 thread(s)" in kept.stdout
    assert rows(muster_env, "checkpoints", "kept") > 0
    purged = cli("purge", "--older-than", "0", timeout=CLI_TIMEOUT_S)
    assert purged.returncode == 0 and "purged 1 thread(s)" in purged.stdout
    assert rows(muster_env, "checkpoints", "kept") == 0
    bad = cli("purge", "--older-than", "-3", timeout=CLI_TIMEOUT_S)
    assert bad.returncode == 2


@pytest.mark.slow
@pytest.mark.integration
def test_delete_on_postgresql_removes_the_thread_and_redacts_its_audit(
    muster_env: MusterEnv, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uuid

    import psycopg

    monkeypatch.setenv("MUSTER_DB", postgres_url)
    thread = f"gone-{uuid.uuid4().hex[:8]}"  # the session's database is shared

    def count(table: str) -> int:
        with psycopg.connect(postgres_url, connect_timeout=10) as conn:
            row = conn.execute(
                f"SELECT count(*) FROM {table} WHERE thread_id = %s", (thread,)
            ).fetchone()
        assert row is not None
        return int(row[0])

    cli = muster_env.cli
    assert cli("run", REFUND_TICKET, "--thread", thread, timeout=CLI_TIMEOUT_S).returncode == 5
    assert cli("approve", thread, "--by", "lead", timeout=CLI_TIMEOUT_S).returncode == 0
    assert count("checkpoints") and count("checkpoint_writes") and count("muster_audit")
    deleted = cli("delete", thread, timeout=CLI_TIMEOUT_S)
    assert deleted.returncode == 0, deleted.stderr
    assert count("checkpoints") == 0 and count("checkpoint_writes") == 0
    with psycopg.connect(postgres_url, connect_timeout=10) as conn:
        results = conn.execute(
            "SELECT result FROM muster_audit WHERE thread_id = %s", (thread,)
        ).fetchall()
    assert results and all(
        (json.loads(r) if isinstance(r, str) else r) == {"redacted": True} for (r,) in results
    )
    again = cli("delete", thread, timeout=CLI_TIMEOUT_S)
    assert again.returncode == 2 and f"unknown thread {thread}" in again.stderr
