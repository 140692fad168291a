"""Bad input at every door: one clear line and exit 2, never a traceback or a hang, and no
data changed. A store with flipped bytes, an empty store file, a ticket over `run`'s 20,000
characters in `batch` and `submit`, a PostgreSQL URL nothing answers, a thread id with a
newline."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import time
from pathlib import Path

import pytest

from checkpoints.saver import CheckpointStoreError, check_db_path
from checkpoints.threads import thread_config
from graph.app.batch_tickets import TicketsFileError, batch_thread_id, load_tickets
from graph.app.runtime import open_store
from tests.conftest import MusterEnv
from workers.errors import ConfigError

EXIT_BAD_INPUT = 2
TICKET = "Order #12333 was charged twice for the headphones, what happened and what can we do? " * 3


async def _seed(db: Path, thread: str) -> None:
    """A thread with a checkpoint, as a run's first step leaves it (no server starts)."""
    async with open_store(db) as (graph, _saver):
        await graph.aupdate_state(thread_config(thread), {"request": TICKET}, as_node="__start__")


def _flip_blobs(db: Path) -> int:
    """Flip bytes inside every compressed checkpoint blob; returns how many."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT rowid, type, checkpoint FROM checkpoints").fetchall()
        flipped = 0
        for rowid, kind, blob in rows:
            if kind and kind.endswith("+zlib") and len(blob) > 24:
                changed = bytearray(blob)
                for i in range(8, 24):
                    changed[i] ^= 0xFF
                conn.execute("UPDATE checkpoints SET checkpoint = ? WHERE rowid = ?",
                             (bytes(changed), rowid))  # fmt: skip
                flipped += 1
    return flipped


def _stored(db: Path) -> list[tuple[object, ...]]:
    """Every checkpoint and pending write in the store, as stored."""
    with sqlite3.connect(db) as conn:
        return (
            conn.execute("SELECT * FROM checkpoints").fetchall()
            + conn.execute("SELECT * FROM writes").fetchall()
        )


def _one_line_error(result: object) -> str:
    stderr = str(getattr(result, "stderr", ""))
    lines = [line for line in stderr.splitlines() if line.startswith("muster")]
    assert "Traceback" not in stderr, stderr
    assert lines and lines[-1].startswith("muster: error: "), stderr
    return lines[-1]


@pytest.mark.integration
def test_a_store_with_flipped_bytes_is_one_clear_error_and_batch_on_it_ends(
    muster_env: MusterEnv, tmp_path: Path
) -> None:
    tickets = tmp_path / "flip.jsonl"
    tickets.write_text(json.dumps({"id": "a", "request": TICKET}) + "\n", encoding="utf-8")
    thread = batch_thread_id(tickets, "a")
    muster_env.checkpoint_db.touch()  # `open_store` reads an existing store only
    asyncio.run(_seed(muster_env.checkpoint_db, thread))
    assert _flip_blobs(muster_env.checkpoint_db) >= 1
    before = _stored(muster_env.checkpoint_db)

    async def read() -> None:
        async with open_store(muster_env.checkpoint_db) as (graph, _saver):
            await graph.aget_state(thread_config(thread))

    with pytest.raises(CheckpointStoreError, match="a stored checkpoint is damaged") as caught:
        asyncio.run(read())
    assert str(muster_env.checkpoint_db) in str(caught.value)

    batch = muster_env.cli("batch", str(tickets), "--resume", timeout=120)  # no hang
    assert batch.returncode == EXIT_BAD_INPUT, batch.stdout + batch.stderr
    assert "is damaged" in _one_line_error(batch)
    assert _stored(muster_env.checkpoint_db) == before  # nothing written over it


def test_an_empty_store_file_is_refused_unless_it_is_being_created(tmp_path: Path) -> None:
    store = tmp_path / "checkpoints.sqlite"
    store.write_bytes(b"")
    check_db_path(store)  # just created: a process setting it up may be writing its header
    old = time.time() - 60
    os.utime(store, (old, old))
    for must_exist in (False, True):
        with pytest.raises(CheckpointStoreError, match="it is an empty file") as caught:
            check_db_path(store, must_exist=must_exist)
        assert "\n" not in str(caught.value)
    assert store.stat().st_size == 0


def test_batch_and_submit_refuse_a_ticket_over_runs_limit(tmp_path: Path) -> None:
    """Both read tickets files through `load_tickets`, which asks what `run` asks."""
    import argparse

    from graph.app.fleet import tickets_of

    tickets = tmp_path / "big.jsonl"
    lines = [{"id": "ok", "request": TICKET}, {"id": "big", "request": "x" * 5_000_000}]
    tickets.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    message = r"line 2: ticket big: the ticket is 5,000,000 characters; the limit is 20,000"
    with pytest.raises(TicketsFileError, match=message):
        load_tickets(tickets)  # muster batch
    with pytest.raises(TicketsFileError, match=message):
        tickets_of(argparse.Namespace(ticket=str(tickets), thread=None))  # muster submit FILE
    with pytest.raises(ConfigError, match="the limit is 20,000"):
        tickets_of(argparse.Namespace(ticket="y" * 20_001, thread=None))  # submit "TEXT"


async def test_the_fleet_fails_fast_on_a_database_nothing_answers() -> None:
    """`submit` (and every fleet command) tries the URL on one connection first: a refused
    port or a missing database is one line at once, not Procrastinate's pool after 30 s."""
    from graph.app.fleet_queue import open_fleet

    for url in (
        "postgresql://postgres@127.0.0.1:1/muster",  # nothing listens
        "postgresql://postgres@127.0.0.1:5432/muster_no_such_database",
    ):
        started = time.monotonic()
        with pytest.raises(CheckpointStoreError) as caught:
            async with open_fleet(url):
                pass
        assert time.monotonic() - started < 10, url
        assert "\n" not in str(caught.value)


def test_a_thread_id_with_a_newline_is_refused_on_one_line(muster_env: MusterEnv) -> None:
    for bad in ("ab\ncd", "ab\n", "a\x1b[2Jb", "a\tb"):
        with pytest.raises(ConfigError, match="has a control character") as caught:
            thread_config(bad)
        assert "\n" not in str(caught.value) and "\x1b" not in str(caught.value)
    muster_env.checkpoint_db.touch()
    asyncio.run(_seed(muster_env.checkpoint_db, "fine-1"))
    show = muster_env.cli("show", "ab\ncd")
    assert show.returncode == EXIT_BAD_INPUT
    assert r"thread id 'ab\ncd' has a control character" in _one_line_error(show)
    assert show.stderr.count("\n") == 1, show.stderr


def test_a_repeated_log_line_is_let_through_a_few_times_a_window() -> None:
    import logging

    from graph.app.server_logs import RateLimitedLog

    now = [0.0]
    limit = RateLimitedLog(burst=3, window_s=10.0, clock=lambda: now[0])

    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("mcp.client.stdio", logging.ERROR, __file__, 1, msg, (), None)

    assert [limit.filter(record("junk")) for _ in range(500)].count(True) == 3
    assert limit.filter(record("another message"))  # each message has its own count
    now[0] = 11.0
    later = record("junk")
    assert limit.filter(later) and later.getMessage() == "junk (497 more like it dropped)"


GARBAGE_SERVER = """
import json, sys
for i in range(300):
    sys.stdout.write(f"junk line {i}\\n")
sys.stdout.flush()
from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations
mcp = FastMCP("junk", log_level="WARNING")

@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def forecast(query: str) -> str:
    "The forecast."
    return json.dumps({"forecast": "sunny"})

mcp.run()
"""


@pytest.mark.integration
async def test_a_server_printing_garbage_does_not_flood_the_log(
    muster_env: MusterEnv, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import sys

    from graph.app.options import MusterOptions
    from graph.app.runtime import open_runtime

    server = tmp_path / "junk_server.py"
    server.write_text(GARBAGE_SERVER, encoding="utf-8")
    servers = tmp_path / "servers.json"
    spec = {"command": sys.executable, "args": [str(server)], "env": {}}
    servers.write_text(json.dumps({"mcpServers": {"junk": spec}}), encoding="utf-8")
    options = MusterOptions.resolve(db=muster_env.checkpoint_db, servers=servers)
    async with open_runtime(options, servers_on_demand=False) as runtime:
        result = await runtime.services.hub.call("junk.forecast", {"query": "Paris"}, ["junk."])
    assert "sunny" in str(result)  # the server works; its junk lines were skipped
    junk = [r for r in caplog.records if "Failed to parse JSONRPC" in r.getMessage()]
    assert 1 <= len(junk) <= 3, len(junk)  # 300 lines of junk, not 300 lines of log
