"""PostgreSQL as the checkpoint store: `--db postgresql://…` / `MUSTER_DB`.

Everything beside the checkpoints moves with them: the audit log and the per-thread leases
live in the same database, and nothing is written to a SQLite checkpoint file. The orders
server keeps its own SQLite database (MUSTER_ORDERS_DB): only the checkpoint store moves.

The tests use the machine's PostgreSQL through the `postgres_url` fixture (tests/conftest.py:
a fresh database per session and xdist worker; `MUSTER_TEST_PG` names another server). The
CLI tests run the real `muster` as subprocesses with real stdio servers, as the SQLite
versions in test_actions.py and test_one_writer.py do, and reuse their helpers.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from checkpoints.lease import HOST, ThreadBusyError, ThreadLeaseLostError, hold_thread
from checkpoints.postgres import PostgresStore
from checkpoints.postgres_audit import PostgresAuditLog
from checkpoints.postgres_connect import redacted
from checkpoints.postgres_lease import (
    PostgresThreadLeases,
    hold_postgres_thread,
    postgres_lease_holder,
)
from checkpoints.postgres_schema import SCHEMA_LOCK
from checkpoints.store import SqliteStore, checkpoint_store, store_location
from checkpoints.threads import status_of, thread_config, thread_ids
from graph.app import fleet_queue
from graph.app.cli import main
from graph.app.fleet_queue import WORKERS_TABLE, build_app, ensure_fleet_schema, open_fleet
from graph.app.runtime import open_runtime, open_store
from graph.trace import read_trace, trace_path
from tests.conftest import DEMO_TICKET, HANG_TIMEOUT_S, PROJECT_ROOT, MusterEnv, wait_until
from tests.test_actions import REFUND_TICKET, refund_calls, refund_rows, run_to_interrupt
from tests.test_one_writer import BUSY, Cli, _one_error_line, _race, _split
from workers.contracts import CHECKPOINTED_TYPES, Report

EXIT_OK, EXIT_BAD_INPUT, EXIT_DEGRADED, EXIT_WAITING = 0, 2, 3, 5


@dataclass(frozen=True)
class PgEnv:
    """One test's run data (orders, call log, traces under tmp_path) on the session's
    PostgreSQL checkpoint store."""

    env: MusterEnv
    url: str

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.env.cli(*args)


@pytest.fixture
def pg(muster_env: MusterEnv, postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> PgEnv:
    """`muster_env` with `MUSTER_DB` pointing at the PostgreSQL test database."""
    monkeypatch.setenv("MUSTER_DB", postgres_url)
    return PgEnv(muster_env, postgres_url)


def new_thread(prefix: str) -> str:
    """A thread id no other test of the session uses (they share the database)."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


# --- reading the store ----------------------------------------------------------------------


async def read_audit(url: str, thread: str) -> list[tuple[str, str]]:
    """The thread's (event, actor) audit rows in PostgreSQL, oldest first."""
    async with await PostgresAuditLog.open(url) as audit:
        return [(row.event, row.actor) for row in await audit.rows(thread)]


def audit_rows(url: str, thread: str) -> list[tuple[str, str]]:
    """`read_audit`, from a test that is not async."""
    return asyncio.run(read_audit(url, thread))


DECIDED = ("decision", "attempt", "execution")
"""The rows of an approved action, from decision to execution (`pending`, the claim made
when it was put to a human, comes before)."""


def decided(rows: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(event, actor) for event, actor in rows if event in DECIDED]


def state(url: str, thread: str) -> tuple[str, dict[str, Any]]:
    async def read() -> tuple[str, dict[str, Any]]:
        async with open_store(url) as (graph, _):
            snapshot = await graph.aget_state(thread_config(thread))
        return status_of(snapshot), dict(snapshot.values)

    return asyncio.run(read())


def holds_lease(url: str, thread: str, pid: int) -> bool:
    holder = asyncio.run(postgres_lease_holder(url, thread))
    return holder is not None and holder.pid == pid


async def start_waiting_thread(url: str, thread: str, request: str) -> None:
    """Run `request` on a new thread of the PostgreSQL store to its approval interrupt."""
    async with open_runtime(db=url) as runtime:
        interrupts = await run_to_interrupt(runtime, thread, request)
    assert [i.value["kind"] for i in interrupts] == ["approval"]


# --- choosing the store ---------------------------------------------------------------------


def test_a_postgres_url_selects_postgres_and_anything_else_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = "postgresql://muster:s3cret@db.example:5432/muster"
    assert checkpoint_store(url) == PostgresStore(url)
    assert checkpoint_store("postgres://h/db") == PostgresStore("postgres://h/db")
    assert checkpoint_store(tmp_path / "c.sqlite") == SqliteStore(tmp_path / "c.sqlite")
    monkeypatch.setenv("MUSTER_DB", url)
    assert store_location() == url and isinstance(checkpoint_store(), PostgresStore)
    assert checkpoint_store(str(tmp_path / "x.sqlite")) == SqliteStore(tmp_path / "x.sqlite")
    monkeypatch.delenv("MUSTER_DB")
    assert isinstance(checkpoint_store(), SqliteStore)
    # The password never reaches a message.
    assert str(checkpoint_store(url)) == "postgresql://muster:***@db.example:5432/muster"
    assert redacted("postgresql://h/db") == "postgresql://h/db"


def _closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://u:pw@127.0.0.1:{port}/muster", "Connection refused"),
        ("postgresql://u:pw@127.0.0.1/x?nonsense=1", 'invalid URI query parameter: "nonsense"'),
        ("postgresql://a b@127.0.0.1/x", "unexpected spaces found"),
    ],
    ids=["unreachable", "bad-parameter", "malformed"],
)
@pytest.mark.parametrize("command", [["threads"], ["show", "t"], ["run", "Order #12345"]])
def test_a_bad_or_unreachable_postgres_url_is_one_line(
    muster_env: MusterEnv,
    capsys: pytest.CaptureFixture[str],
    url: str,
    message: str,
    command: list[str],
) -> None:
    url = url.format(port=_closed_port())
    assert main(["--db", url, *command]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    line = _one_error_line(err)
    assert message in line and "pw" not in line, line
    assert "Traceback" not in err
    assert not muster_env.checkpoint_db.exists()


# --- the audit log, the saver, the lease: in-process on the test database ---------------------


async def test_the_first_decision_stands_in_the_postgres_audit_log(postgres_url: str) -> None:
    thread = new_thread("audit")
    async with await checkpoint_store(postgres_url).open_audit() as audit:
        assert isinstance(audit, PostgresAuditLog)
        first, inserted = await audit.decide(
            thread_id=thread, actor="lead", role="team_lead", digest="d1",
            result={"decision": "approved"},
        )  # fmt: skip
        assert inserted and (first.actor, first.role) == ("lead", "team_lead")
        later, inserted = await audit.decide(
            thread_id=thread, actor="bob", role="agent", digest="d1",
            result={"decision": "rejected"},
        )  # fmt: skip
        assert not inserted and later == first
        await audit.record(thread_id=thread, event="attempt", actor="muster", digest="d1",
                           result={"tool": "orders.issue_refund"})  # fmt: skip
        assert [(r.event, r.actor) for r in await audit.rows(thread)] == [
            ("decision", "lead"),
            ("attempt", "muster"),
        ]
        assert (await audit.decision(thread, "d1")) == first
        assert await audit.decision(thread, "other") is None

    # Ten deciders on five connections at once (five processes' worth): exactly one is first.
    race = new_thread("audit-race")
    logs = [await PostgresAuditLog.open(postgres_url) for _ in range(5)]
    try:
        results = await asyncio.gather(
            *(
                log.decide(
                    thread_id=race,
                    actor=who,
                    role="agent",
                    digest="d2",
                    result={"decision": decision},
                )  # fmt: skip
                for log in logs
                for who, decision in [("alice", "approved"), ("bob", "rejected")]
            )
        )
    finally:
        for log in logs:
            await log.close()
    assert sum(inserted for _, inserted in results) == 1
    assert len({row for row, _ in results}) == 1  # everyone got the one that stands
    assert [event for event, _ in await read_audit(postgres_url, race)] == ["decision"]


def test_the_postgres_audit_log_overrides_every_public_method_of_the_sqlite_one() -> None:
    """`PostgresAuditLog` subclasses `AuditLog` (so `Services.audit` takes it): a method added
    to `AuditLog` and not mirrored would run SQLite code on a PostgreSQL connection."""
    from checkpoints.audit import AuditLog

    public = {name for name in vars(AuditLog) if not name.startswith("_")}
    public |= {"__aenter__", "__aexit__"}
    missing = sorted(name for name in public if name not in vars(PostgresAuditLog))
    assert missing == [], f"mirror these in checkpoints/postgres_audit.py: {missing}"


async def test_two_threads_claiming_one_subject_together_one_stands(postgres_url: str) -> None:
    subject = f"orders.issue_refund:{uuid.uuid4().hex[:6]}"
    threads = [new_thread("claim") for _ in range(6)]
    logs = [await PostgresAuditLog.open(postgres_url) for _ in threads]
    try:
        standing = await asyncio.gather(
            *(
                log.claim(thread_id=thread, digest=f"d-{thread}", subject=subject)
                for log, thread in zip(logs, threads, strict=True)
            )
        )
        winner = standing[0]
        assert winner is not None and winner.subject == subject
        assert all(claim == winner for claim in standing)  # everyone sees the one that stands
        assert await logs[0].open_claim(subject) == winner
        # The others gave way at once: claiming again (a resumed node) changes nothing.
        loser = next(t for t in threads if t != winner.thread_id)
        assert await logs[1].claim(thread_id=loser, digest=f"d-{loser}", subject=subject) == winner
        # Settled: nobody holds the subject any more.
        await logs[0].record(thread_id=winner.thread_id, event="execution", actor="muster",
                             digest=winner.digest, result={})  # fmt: skip
        assert await logs[0].open_claim(subject) is None
    finally:
        for log in logs:
            await log.close()


async def test_the_pooled_saver_keeps_strict_msgpack_and_lists_threads(
    postgres_url: str,
) -> None:
    store = checkpoint_store(postgres_url)
    report = Report(worker="billing", objective="o", status="ok", packet_id="billing-1")
    thread = new_thread("saver")
    async with store.open_saver(allowed_types=CHECKPOINTED_TYPES) as saver:
        from langgraph.checkpoint.base import empty_checkpoint

        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"reports": [report]}
        checkpoint["channel_versions"] = {"reports": "1"}
        config: Any = thread_config(thread)
        config["configurable"]["checkpoint_ns"] = ""
        await saver.aput(config, checkpoint, {}, {"reports": "1"})
        loaded = await saver.aget_tuple(thread_config(thread))
        assert loaded is not None
        assert loaded.checkpoint["channel_values"]["reports"] == [report]  # a Report again
        assert thread in await thread_ids(saver)
        # Batch lanes share the one pooled saver.
        async with store.open_lane_savers(saver, 3) as lanes:
            assert lanes == [saver, saver, saver]


@asynccontextmanager
async def scratch_database(url: str) -> AsyncIterator[str]:
    """A database of its own, beside the session's, dropped afterwards."""
    name = f"muster_scratch_{uuid.uuid4().hex[:10]}"
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as admin:
        await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(urlsplit(url)._replace(path=f"/{name}"))
    finally:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as admin:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def test_many_processes_first_using_a_database_at_once_set_it_up_once(
    postgres_url: str,
) -> None:
    """On a fresh database, savers and audit logs opening together each create the tables
    under one advisory lock: none fails on a half-created table, none deadlocks on the
    saver's `CREATE INDEX CONCURRENTLY`."""
    async with scratch_database(postgres_url) as url:
        store = checkpoint_store(url)

        async def saver() -> list[str]:
            async with store.open_saver(allowed_types=CHECKPOINTED_TYPES) as opened:
                return await thread_ids(opened)

        async def audit() -> list[Any]:
            async with await store.open_audit() as log:
                return await log.rows()

        async def fleet() -> list[Any]:
            # Two `muster worker`s started together on a fresh database: each sets up the
            # queue (Procrastinate's schema and Muster's worker table) or finds it set up.
            async with open_fleet(url):
                return []

        opened = await asyncio.wait_for(
            asyncio.gather(
                *(saver() for _ in range(4)),
                *(audit() for _ in range(3)),
                *(fleet() for _ in range(4)),
            ),
            HANG_TIMEOUT_S,
        )
        assert opened == [[]] * 11


async def test_a_worker_finding_the_queue_half_set_up_waits_for_the_one_setting_it_up(
    postgres_url: str,
) -> None:
    """Another process holds the schema lock, has applied Procrastinate's schema and is
    creating the worker table (not yet committed). A worker opening the queue now must wait
    for it, not run its own `CREATE TABLE IF NOT EXISTS` beside it: PostgreSQL fails the
    second one with a duplicate key in its catalogue once the first commits."""
    async with scratch_database(postgres_url) as url:
        async with open_fleet(url):  # the schema, as the first worker applies it
            pass
        async with (
            await psycopg.AsyncConnection.connect(url, autocommit=True) as first,
            # A session of its own: a transaction sees one snapshot of pg_stat_activity.
            await psycopg.AsyncConnection.connect(url, autocommit=True) as observer,
        ):
            await first.execute("DROP TABLE muster_fleet_workers")
            await first.execute("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK,))
            await first.execute("BEGIN")
            await first.execute(WORKERS_TABLE)
            second = asyncio.create_task(ensure_fleet_schema(build_app(url), url))

            async def second_waits() -> bool:
                # Blocked behind the uncommitted table (the bug), or polling the schema
                # lock (the fix): either way it has reached the point that matters.
                cursor = await observer.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND pid NOT IN (pg_backend_pid(), %s) AND (wait_event_type = 'Lock'"
                    " OR query LIKE %s)",
                    (first.info.backend_pid, "%pg_try_advisory_lock%"),
                )
                row = await cursor.fetchone()
                return bool(row and row[0])

            deadline = asyncio.get_running_loop().time() + HANG_TIMEOUT_S
            while not await second_waits():
                assert asyncio.get_running_loop().time() < deadline, "the second never waited"
                assert not second.done(), second
                await asyncio.sleep(0.02)
            await first.execute("COMMIT")
            await first.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK,))
        await asyncio.wait_for(second, HANG_TIMEOUT_S)  # no CheckpointStoreError


async def test_a_held_thread_refuses_a_sibling_and_a_lost_session_stops_the_holder(
    postgres_url: str,
) -> None:
    thread = new_thread("lease")
    entered, leave = asyncio.Event(), asyncio.Event()

    async def first() -> None:
        async with hold_postgres_thread(postgres_url, thread):
            async with hold_postgres_thread(postgres_url, thread):  # nests: one lease
                entered.set()
                await leave.wait()

    task = asyncio.create_task(first())
    await entered.wait()
    holder = await postgres_lease_holder(postgres_url, thread)
    assert holder is not None and (holder.pid, holder.host) == (os.getpid(), HOST)
    with pytest.raises(ThreadBusyError):
        async with hold_postgres_thread(postgres_url, thread):
            pass
    leave.set()
    await task
    assert await postgres_lease_holder(postgres_url, thread) is None  # released on exit

    # The lease's session ends under the holder (a failover, an admin): the heartbeat
    # notices and the block stops with ThreadLeaseLostError rather than run on unguarded.
    leases = PostgresThreadLeases(postgres_url)
    with pytest.raises(ThreadLeaseLostError):
        async with hold_thread(leases, thread, key=f"lost:{postgres_url}", heartbeat_s=0.05):
            async with await PostgresAuditLog.open(postgres_url) as admin:
                await admin._pg.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE pid <> pg_backend_pid() AND application_name LIKE 'muster-lease%%'"
                    " AND datname = current_database()"
                )
            await asyncio.Event().wait()  # until the heartbeat cancels the block
    assert await postgres_lease_holder(postgres_url, thread) is None


HOLDER = """
import asyncio, sys
from checkpoints.postgres_lease import hold_postgres_thread

async def main() -> None:
    async with hold_postgres_thread(sys.argv[1], sys.argv[2]):
        print("held", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

asyncio.run(main())
"""


@pytest.mark.slow
async def test_another_process_holding_a_thread_refuses_until_it_is_killed(
    postgres_url: str,
) -> None:
    thread = new_thread("killed")
    holder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", HOLDER, postgres_url, thread,
        cwd=PROJECT_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        assert await holder.stdout.readline() == b"held\n"
        with pytest.raises(ThreadBusyError) as busy:
            async with hold_postgres_thread(postgres_url, thread):
                pytest.fail("took a live holder's lease")
        assert str(busy.value) == (
            f"thread {thread} is being advanced by another process (pid {holder.pid}); "
            "try again when it finishes"
        )
        holder.kill()  # SIGKILL: no chance to unlock; PostgreSQL ends its session
        await asyncio.wait_for(holder.wait(), HANG_TIMEOUT_S)
        async with hold_postgres_thread(postgres_url, thread):
            taken = await postgres_lease_holder(postgres_url, thread)
            assert taken is not None and taken.pid == os.getpid()
    finally:
        if holder.returncode is None:
            holder.kill()
        await asyncio.wait_for(holder.wait(), HANG_TIMEOUT_S)


# --- the real CLI on PostgreSQL -------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.integration
def test_run_resume_show_threads_and_approve_on_postgres(pg: PgEnv) -> None:
    thread = new_thread("pg-flow")
    url = pg.url
    run = pg.cli("--db", url, "run", REFUND_TICKET, "--thread", thread)
    assert run.returncode == EXIT_WAITING, run.stdout + run.stderr
    assert "waiting for a human" in run.stdout
    again = pg.cli("--db", url, "run", REFUND_TICKET, "--thread", thread)
    assert again.returncode == EXIT_BAD_INPUT
    assert "already exists (interrupted)" in _one_error_line(again.stderr)

    resume = pg.cli("resume", thread, "--db", url)
    assert resume.returncode == EXIT_WAITING, resume.stderr
    assert f"thread {thread} waits for a human" in resume.stdout

    threads = pg.cli("--db", url, "threads")
    assert threads.returncode == EXIT_OK, threads.stderr
    [line] = [line for line in threads.stdout.splitlines() if line.startswith(thread)]
    assert "interrupted" in line and "waits: approval" in line
    show = pg.cli("show", thread)  # MUSTER_DB names the same database
    assert show.returncode == EXIT_OK, show.stderr
    assert "orders.issue_refund" in show.stdout and "billing" in show.stdout

    approve = pg.cli("--db", url, "approve", thread, "--by", "alice")
    assert approve.returncode == EXIT_OK, approve.stdout + approve.stderr
    assert "approved by alice, EXECUTED" in approve.stdout
    assert len(refund_rows(pg.env, "12345")) == 1
    assert decided(audit_rows(url, thread)) == [
        ("decision", "alice"),
        ("attempt", "muster"),
        ("execution", "muster"),
    ]
    shown = pg.cli("show", thread, "--db", url)
    assert "audit: decision by alice" in shown.stdout and "audit: execution" in shown.stdout
    threads = pg.cli("threads", "--json")
    assert f'"{thread}"' in threads.stdout
    assert state(url, thread)[0] == "done"

    twice = pg.cli("approve", thread, "--by", "alice")
    assert twice.returncode == EXIT_BAD_INPUT
    assert "no pending approval" in _one_error_line(twice.stderr)
    assert len(refund_calls(pg.env)) == 1
    # Everything went to PostgreSQL: no SQLite checkpoint file appeared.
    assert not pg.env.checkpoint_db.exists()


@pytest.mark.slow
@pytest.mark.integration
def test_a_second_process_is_refused_and_a_killed_holder_blocks_nobody(pg: PgEnv) -> None:
    """The run is frozen (SIGSTOP) once it is planning (its input checkpoint is saved by
    then), so a `resume` certainly meets its lease and fails with the one-line error; then
    the run is SIGKILLed and `resume` takes the thread over at once and finishes it, each
    packet reported once. The run's workers take 3 s a model turn: it cannot finish first."""
    thread = new_thread("pg-lease")
    url = pg.url
    trace = trace_path(thread, pg.env.trace_dir)
    run = Cli(pg.env, "run", "run", DEMO_TICKET, "--thread", thread, "--model",
              "offline:3000", extra={})  # fmt: skip
    try:
        wait_until(lambda: holds_lease(url, thread, run.proc.pid), "run's lease", proc=run.proc)
        planned = lambda e: e.get("event") == "node" and e.get("node") == "plan"  # noqa: E731
        wait_until(lambda: any(planned(e) for e in read_trace(trace)),
                   "the run's plan", proc=run.proc)  # fmt: skip
        os.kill(run.proc.pid, signal.SIGSTOP)
        try:
            second = Cli(pg.env, "second", "resume", thread, extra={})
            assert second.wait() == EXIT_BAD_INPUT, second.stdout + second.stderr
        finally:
            os.kill(run.proc.pid, signal.SIGKILL)
            os.kill(run.proc.pid, signal.SIGCONT)
        assert run.wait() == -signal.SIGKILL
    finally:
        run.kill()
    assert _one_error_line(second.stderr) == (
        f"muster: error: thread {thread} {BUSY} (pid {run.proc.pid}); try again when it finishes"
    )
    assert "resuming" not in second.stdout
    assert state(url, thread)[0] == "in progress"

    resume = pg.cli("resume", thread, "--json")
    assert resume.returncode == EXIT_OK, resume.stdout + resume.stderr
    status, values = state(url, thread)
    assert status == "done"
    assert sorted(Counter(r.packet_id for r in values["reports"]).values()) == [1, 1, 1]
    assert asyncio.run(postgres_lease_holder(url, thread)) is None
    assert not pg.env.checkpoint_db.exists()


@pytest.mark.slow
@pytest.mark.integration
async def test_two_approves_together_refund_once_on_postgres(pg: PgEnv) -> None:
    thread = new_thread("pg-two-approves")
    await start_waiting_thread(pg.url, thread, REFUND_TICKET)
    approve = ["approve", thread, "--by", "alice"]
    won, lost = _split(*await asyncio.to_thread(_race, pg.env, thread, approve, approve))
    assert "approved by alice, EXECUTED" in won.stdout
    error = _one_error_line(lost.stderr)
    # Refused by the lease while the other runs, or (if it came second) by the thread itself.
    assert BUSY in error or "no pending approval" in error, error
    print(f"loser said: {error}")
    assert len(refund_rows(pg.env, "12345")) == 1
    assert len(refund_calls(pg.env)) == 1
    assert [event for event, _ in decided(await read_audit(pg.url, thread))] == list(DECIDED)
    assert not pg.env.checkpoint_db.exists()


@pytest.mark.slow
@pytest.mark.integration
def test_batch_and_clarify_on_postgres(pg: PgEnv) -> None:
    name = f"pgq{uuid.uuid4().hex[:6]}"
    tickets = pg.env.root / f"{name}.jsonl"
    tickets.write_text(
        '{"id": "dup", "request": "Order #12333 was charged twice. Was the duplicate put right?"}\n'
        '{"id": "vague", "request": "I want my money back for my order"}\n'
        '{"id": "gift", "request": "Do gift cards expire?"}\n'
    )
    batch = pg.cli("batch", str(tickets), "--concurrency", "3", "--json")
    assert batch.returncode == EXIT_DEGRADED, batch.stdout + batch.stderr  # vague waits
    again = pg.cli("batch", str(tickets), "--resume", "--json")
    assert again.returncode == EXIT_DEGRADED, again.stderr
    assert '"skipped": 3' in again.stdout  # every thread read back from PostgreSQL

    vague = f"batch-{name}-vague"
    assert state(pg.url, vague)[0] == "interrupted"
    clarify = pg.cli("clarify", vague, "It is order #12333")
    assert clarify.returncode in (EXIT_OK, EXIT_DEGRADED), clarify.stdout + clarify.stderr
    status, values = state(pg.url, vague)
    assert status == "done" and "It is order #12333" in values["answer"].text
    listed = pg.cli("threads").stdout
    assert all(f"batch-{name}-{i}" in listed for i in ("dup", "vague", "gift")), listed
    assert not pg.env.checkpoint_db.exists()


async def test_the_queue_pool_checks_a_connection_only_after_it_sat_idle(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Procrastinate's pool checks each connection it hands out (a round trip per query);
    ours only a new one or one not handed out for `IDLE_CHECK_S`. The checks are counted where
    psycopg_pool makes them, and a checked connection still works."""
    checked: list[int] = []
    real_check = AsyncConnectionPool.check_connection

    async def counted(conn: psycopg.AsyncConnection[Any]) -> None:
        checked.append(conn.info.backend_pid)
        await real_check(conn)

    monkeypatch.setattr(AsyncConnectionPool, "check_connection", staticmethod(counted))
    pool = fleet_queue._queue_pool(
        conninfo=postgres_url, min_size=1, max_size=1, open=False, kwargs={"autocommit": True}
    )
    await pool.open(wait=True)
    try:
        async with pool.connection() as conn:  # never handed out before: checked
            pid = conn.info.backend_pid
        async with pool.connection() as conn:  # back a moment ago: handed out as it is
            assert conn.info.backend_pid == pid
        assert checked == [pid]
        fleet_queue._handed_out_at[conn] -= fleet_queue.IDLE_CHECK_S + 1  # as if unused since
        async with pool.connection() as conn:
            assert conn.info.backend_pid == pid
            await conn.execute("SELECT 1")
        assert checked == [pid, pid]
    finally:
        await pool.close()


@pytest.mark.integration
async def test_delete_removes_a_postgres_thread_and_redacts_its_audit(pg: PgEnv) -> None:
    """`muster delete` on PostgreSQL: the saver's own `adelete_thread`, the audit rows kept
    with their results redacted."""
    from checkpoints.store import checkpoint_store
    from checkpoints.threads import thread_exists
    from graph.app.retention import delete_thread

    thread = new_thread("delete")
    await start_waiting_thread(pg.url, thread, "Order #12345 was charged twice, refund it")
    async with await PostgresAuditLog.open(pg.url) as audit:
        await audit.record(
            thread_id=thread, event="note", actor="lead", digest="", result={"order": "12345"}
        )
    redacted = await delete_thread(checkpoint_store(pg.url), thread)
    assert redacted >= 1
    async with open_store(pg.url) as (_, saver):
        assert not await thread_exists(saver, thread)
    async with await PostgresAuditLog.open(pg.url) as audit:
        results = [row.result for row in await audit.rows(thread)]
    assert results and all(r == '{"redacted": true}' for r in results)


@pytest.mark.integration
async def test_postgres_audit_rows_store_personal_fields_redacted(pg: PgEnv) -> None:
    """As the SQLite audit (tests/test_redaction.py): the rows keep their shape and what they
    are read back for; an e-mail and a customer name the run learnt are stored redacted."""
    from workers import redaction

    redaction.REDACTOR.learn({"customer": "Y. Brennan-Holt"})
    thread = new_thread("audit-redact")
    async with await PostgresAuditLog.open(pg.url) as audit:
        row, first = await audit.decide(
            thread_id=thread, actor="alice", role="lead", digest="d1",
            result={"decision": "approved", "note": "Y. Brennan-Holt, y.bh@example.com"},
        )
        rows = await audit.rows(thread)
    assert first and json.loads(row.result)["decision"] == "approved"
    assert [json.loads(r.result) for r in rows] == [
        {"decision": "approved", "note": "[name], [email]"}
    ]
