"""The fleet survives its database: real `muster worker` processes on a fresh PostgreSQL
database, whose backends are all terminated (`pg_terminate_backend`, as a failover or an
admin would) again and again while jobs run.

Before, the first blip killed the workers (Procrastinate's fetch raised a `ConnectorException`
out of the worker loop: exit 1, traceback), a survivor kept a dead audit connection for good,
and jobs whose outcome could not be written stayed "doing" on a live worker. Here every
worker must still be alive at the end, every thread finished (done, or waiting for the
approval it asks for), no job left "todo" or "doing" or failed, each report once, and the
refunds approved mid-blip made exactly once. Every wait is on an event (a worker step in a
trace since the last blip, a job in `doing`, every thread settled), never a fixed time.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from graph.app.fleet import fleet_state
from graph.trace import read_trace, trace_path
from tests.conftest import DEFAULT_TEST_PG, HANG_TIMEOUT_S, PROJECT_ROOT, MusterEnv, wait_until
from tests.test_actions import all_run_refunds, refund_rows
from tests.test_fleet import (
    EXIT_DRAINED,
    EXIT_OK,
    STALLED_AFTER_S,
    Fleet,
    report_keys,
    write_tickets,
)

BLIPS = 4
"""Times every backend of the database is terminated while tickets run (and once more
while the approved refunds run)."""

TERMINATE = (
    "SELECT pg_terminate_backend(pid) AS gone, application_name FROM pg_stat_activity"
    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
)


@pytest.fixture
def fresh_database() -> Iterator[str]:
    """A PostgreSQL database of this test's own (created, then dropped): terminating every
    backend of it touches nothing else. Unreachable server: as `postgres_database`."""
    server = os.environ.get("MUSTER_TEST_PG") or DEFAULT_TEST_PG
    name = f"muster_fleetdb_{uuid.uuid4().hex[:10]}"
    try:
        with psycopg.connect(server, autocommit=True, connect_timeout=10) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as error:
        if os.environ.get("MUSTER_REQUIRE_PG") or os.environ.get("CI"):
            pytest.fail(f"PostgreSQL is unreachable ({error}); MUSTER_REQUIRE_PG/CI is set")
        pytest.skip(f"PostgreSQL is unreachable: {error}")
    try:
        yield urlunsplit(urlsplit(server)._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(server, autocommit=True, connect_timeout=10) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def db_fleet(
    muster_env: MusterEnv, fresh_database: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Fleet]:
    """`tests.test_fleet.Fleet` on the fresh database; workers SIGKILLed (by pid) after."""
    monkeypatch.setenv("MUSTER_DB", fresh_database)
    tickets = muster_env.root / f"blip_{uuid.uuid4().hex[:8]}.jsonl"
    fl = Fleet(muster_env, fresh_database, tickets, [])
    try:
        yield fl
    finally:
        for proc in fl.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def fleet_command(*args: str) -> subprocess.Popen[str]:
    """A fleet command as a process of its own, started (`Fleet.fleet` waits for it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "graph.app.cli", *args],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(proc: subprocess.Popen[str]) -> int:
    """Its exit code, once it has exited (its output echoed if it failed)."""
    out, err = proc.communicate(timeout=HANG_TIMEOUT_S)
    if proc.returncode != EXIT_OK:
        print(out, err)
    return proc.returncode


def worker_steps(fleet: Fleet) -> int:
    """Worker steps so far over every thread's trace (grows while tickets run)."""
    return sum(
        sum(e.get("event") == "worker_step" for e in read_trace(trace_path(t, fleet.env.trace_dir)))
        for t in fleet.threads()
        if trace_path(t, fleet.env.trace_dir).exists()
    )


def blip(fleet: Fleet) -> list[str]:
    """Terminate every other backend of the database; the application names that went."""
    rows = fleet.query(TERMINATE)
    return [str(row["application_name"]) for row in rows if row["gone"]]


@pytest.mark.slow
@pytest.mark.integration
def test_workers_ride_out_terminated_backends_and_every_thread_ends_once(
    db_fleet: Fleet,
) -> None:
    fleet = db_fleet
    write_tickets(fleet.tickets, {f"bf-{n:02d}" for n in range(1, 9)})
    # The servers these tickets use (not `time`): each worker starts all of its servers.
    shipped = json.loads((PROJECT_ROOT / "domains/support/servers.json").read_text())
    servers = fleet.env.root / "servers.json"
    used = {k: v for k, v in shipped["mcpServers"].items() if k in ("orders", "kb", "policy")}
    servers.write_text(json.dumps({"mcpServers": used}), encoding="utf-8")
    common = ("--concurrency", "3", "--stalled-after", STALLED_AFTER_S, "--model", "offline:250",
              "--servers", str(servers))  # fmt: skip
    submit = fleet_command("submit", str(fleet.tickets))  # queued while the workers start
    workers = fleet.start_workers(["one", "two"], *common)
    assert finished(submit) == EXIT_OK, submit.args

    def alive() -> None:
        dead = [(p.pid, p.returncode) for p in workers if p.poll() is not None]
        assert not dead, (dead, fleet.log("one")[-3000:], fleet.log("two")[-3000:])

    gone: list[str] = []
    seen = 0
    for _ in range(BLIPS):
        # A blip mid-run: a job in hand and a worker step since the last one.
        def progressed(after: int = seen) -> int:
            alive()
            doing = any(j["status"] == "doing" for j in fleet.jobs())
            return steps if doing and (steps := worker_steps(fleet)) > after else 0

        seen = wait_until(progressed, "a worker step of a job in hand since the last blip")
        gone += blip(fleet)
    assert any(name == "muster-fleet" for name in gone), gone  # the queue's sessions went
    assert any(name.startswith("muster-lease") for name in gone), gone  # and leases in hand

    def settled() -> object:
        alive()
        return fleet.settled()

    waiting = wait_until(settled, "every thread to finish or wait for a human after the blips")
    assert isinstance(waiting, dict)
    approvals = sorted(t for t, (status, _) in waiting.items() if status == "interrupted")
    # One refund of each duplicated order waits (12345, 12366), whichever ticket claimed it.
    assert len(approvals) == 2, {t: status for t, (status, _) in waiting.items()}

    # Approve both from a third process, and blip once more while the refunds run.
    approving = [fleet_command("approve", thread, "--by", "lead") for thread in approvals]
    for approve in approving:
        assert finished(approve) == EXIT_OK, approve.args
    wait_until(
        lambda: (
            any(
                j["status"] == "doing" and j["task_name"] == "muster:resume_thread"
                for j in fleet.jobs()
            )
            or all(fleet.states()[t][0] == "done" for t in approvals)
        ),
        "an approved refund in hand",
    )
    gone += blip(fleet)

    def all_done() -> object:
        alive()
        states = fleet.settled()
        return states if states and all(states[t][0] == "done" for t in approvals) else None

    states = wait_until(all_done, "the approved threads to finish")
    assert isinstance(states, dict)
    for thread, (status, values) in states.items():
        assert status in ("done", "interrupted"), (thread, status)
        keys = report_keys(values)
        assert len(keys) == len(set(keys)), (thread, keys)  # no report twice
    assert [s for s, _ in states.values()].count("interrupted") == 0  # only the two asked
    statuses = {j["status"] for j in fleet.jobs()}
    assert statuses == {"succeeded"}, fleet.jobs()  # none failed, none left doing or todo
    refunds = sorted(r["order_id"] for r in all_run_refunds(fleet.env))
    assert refunds == ["12345", "12366"], refunds  # exactly once each
    assert all(len(refund_rows(fleet.env, order)) == 1 for order in refunds)

    # Every worker lived through it and still drains as usual.
    for proc in workers:
        proc.terminate()
    assert [proc.wait() for proc in workers] == [EXIT_DRAINED, EXIT_DRAINED]


# --- the parts, on the same fresh database ---------------------------------------------------


def _terminate(url: str, pid: int) -> None:
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


async def test_a_pool_hands_out_a_new_connection_for_one_the_database_ended(
    fresh_database: str,
) -> None:
    """`check_pooled` on a connection used a moment ago (no round-trip check): the server's
    last word on it is seen, and the pool replaces it instead of handing it out dead."""
    from psycopg_pool import AsyncConnectionPool

    from checkpoints.postgres_connect import check_pooled

    pool: AsyncConnectionPool[psycopg.AsyncConnection[object]] = AsyncConnectionPool(
        fresh_database, min_size=1, max_size=1, open=False, kwargs={"autocommit": True},
        check=check_pooled,
    )  # fmt: skip
    await pool.open(wait=True)
    try:
        async with pool.connection() as conn:
            first = conn.info.backend_pid
        _terminate(fresh_database, first)
        wait_until(lambda: _ended(fresh_database, first), "the backend to end")
        async with pool.connection() as conn:  # handed out a moment ago, and dead now
            await conn.execute("SELECT 1")
            assert conn.info.backend_pid != first
    finally:
        await pool.close()


def _ended(url: str, pid: int) -> bool:
    with psycopg.connect(url, autocommit=True) as admin:
        row = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,))
        return row.fetchone() == (0,)


async def test_the_audit_log_reconnects_after_the_database_ended_its_session(
    fresh_database: str,
) -> None:
    from checkpoints.postgres_audit import PostgresAuditLog

    async with await PostgresAuditLog.open(fresh_database) as audit:
        await audit.record(thread_id="t", event="note", actor="a", digest="d", result="one")
        pid = audit._pg.info.backend_pid
        _terminate(fresh_database, pid)
        wait_until(lambda: _ended(fresh_database, pid), "the backend to end")
        await audit.record(thread_id="t", event="note", actor="a", digest="d", result="two")
        standing, inserted = await audit.decide(
            thread_id="t", actor="lead", role="lead", digest="d", result={"decision": "approved"}
        )
        assert inserted and standing.actor == "lead"
        assert [r.result for r in await audit.rows("t")][:2] == ["one", "two"]
        assert audit.reconnects == 1


def test_a_run_that_lost_its_database_is_retried_soon_and_often() -> None:
    from procrastinate.exceptions import ConnectorException
    from procrastinate.jobs import Job

    from checkpoints.lease import ThreadLeaseLostError
    from graph.app.fleet_retry import DB_ATTEMPTS, ERROR_ATTEMPTS, FleetRetry, database_lost

    def job(attempts: int) -> Job:
        return Job(id=1, queue="muster", lock="t", queueing_lock=None, task_name="x",
                   attempts=attempts)  # fmt: skip

    try:
        try:
            raise psycopg.OperationalError("terminating connection")
        except psycopg.OperationalError as inner:
            raise ConnectorException() from inner
    except ConnectorException as wrapped:
        lost: BaseException = wrapped
    assert database_lost(lost) and database_lost(ThreadLeaseLostError("lost"))
    assert not database_lost(RuntimeError("a bug")) and not database_lost(None)
    retry = FleetRetry()
    decision = retry.get_retry_decision(exception=lost, job=job(ERROR_ATTEMPTS + 5))
    assert decision is not None  # not held to the error budget
    assert retry.get_retry_decision(exception=lost, job=job(DB_ATTEMPTS)) is None


async def test_a_job_the_worker_dropped_goes_back_to_the_queue(fresh_database: str) -> None:
    """A job the database says this worker is doing, which it is not running (a fetch whose
    answer was lost with its connection): a suspect on one sweep, back in the queue on the
    next; a job it is running is never touched."""
    from graph.app.fleet_queue import QUEUE, enqueue_ticket, open_fleet
    from graph.app.fleet_sweep import retry_orphans
    from graph.app.fleet_worker import TASKS

    async with open_fleet(fresh_database, tasks=dict(TASKS)) as app:
        me = await app.job_manager.register_worker()
        dropped = await enqueue_ticket(app, "orphan-1", "Where is order #12345?")
        running = await enqueue_ticket(app, "orphan-2", "Where is order #12366?")
        for _ in range(2):
            assert await app.job_manager.fetch_job(queues=[QUEUE], worker_id=me) is not None
        suspects: set[int] = set()
        assert await retry_orphans(app, me, lambda: {running}, suspects) == []
        assert suspects == {dropped}
        assert await retry_orphans(app, me, lambda: {running}, suspects) == [dropped]
        rows = await app.connector.execute_query_all_async(
            "SELECT id, status::text AS status FROM procrastinate_jobs ORDER BY id"
        )
        assert [(r["id"], r["status"]) for r in rows] == [(dropped, "todo"), (running, "doing")]


def _fleet_view(fleet: Fleet) -> dict[str, Any]:
    """What `muster fleet --json` says, read in-process (the same `read_fleet` and states)."""
    from graph.app.fleet_queue import read_fleet

    workers, jobs = asyncio.run(read_fleet(fleet.url))
    return {
        "workers": {w.label.split(" ")[0]: w for w in workers},
        "jobs": {t: j for t, j in jobs.items() if t in fleet.threads()},
    }


@pytest.mark.slow
@pytest.mark.integration
def test_a_sigkilled_worker_shows_dead_within_its_stall_bound(db_fleet: Fleet) -> None:
    """Liveness is the heartbeat against the worker's own stall bound (registered with it):
    once it is silent past `--stalled-after`, `muster fleet` says `dead` and its job
    `stalled`. Before, the job showed `running` for ~16 s and the worker was listed, silent
    but unmarked, until its row was pruned (150 s). (A database of its own: the dead
    worker's job is left for no other test's worker to sweep up.)"""
    fleet = db_fleet
    write_tickets(fleet.tickets, {"bf-03"})
    [thread] = fleet.threads()
    name = f"doomed-{uuid.uuid4().hex[:6]}"
    doomed = fleet.start_worker(name, "--stalled-after", STALLED_AFTER_S, "--model", "offline:1500")
    assert fleet.fleet("submit", str(fleet.tickets)).returncode == EXIT_OK

    def running() -> bool:
        view = _fleet_view(fleet)
        job = view["jobs"].get(thread)
        return job is not None and fleet_state(job, "in progress") == "running"

    wait_until(running, "the ticket running on the doomed worker", proc=doomed)
    alive = _fleet_view(fleet)["workers"][name]
    assert not alive.dead and alive.stalled_after_s == float(STALLED_AFTER_S)
    doomed.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    doomed.wait(timeout=HANG_TIMEOUT_S)

    def seen_dead() -> float | None:
        view = _fleet_view(fleet)
        worker, job = view["workers"].get(name), view["jobs"].get(thread)
        if worker is not None and worker.dead and job is not None:
            assert fleet_state(job, "in progress") == "stalled"
            return time.monotonic() - killed
        return None

    after_s = wait_until(seen_dead, "the killed worker shown dead")
    assert after_s is not None
    # Its last beat was at most a third of the bound before the kill; the poll adds little.
    assert after_s <= float(STALLED_AFTER_S) + 2.0, after_s
    shown = fleet.fleet("fleet", "--json", "--all")
    assert shown.returncode == EXIT_OK, shown.stderr
    payload = json.loads(shown.stdout)
    [row] = [w for w in payload["workers"] if w["worker"].startswith(name + " ")]
    assert row["state"] == "dead" and row["silent_s"] > float(STALLED_AFTER_S), row
    [thread_row] = [r for r in payload["threads"] if r["thread"] == thread]
    assert thread_row["state"] == "stalled" and "dead" in thread_row["detail"], thread_row
    text = fleet.fleet("fleet")
    assert f"{name} (" in text.stdout and ": dead, last heartbeat" in text.stdout, text.stdout


OUTAGE_S = 8.0
"""How long the database is unreachable in `test_the_queue_moves_again_soon_after_an_outage`."""
QUEUE_RESTART_BOUND_S = 5.0
"""The issue's target: the queue moving again within 5 s of the database answering."""


@pytest.mark.slow
@pytest.mark.integration
def test_the_queue_moves_again_soon_after_an_outage(db_fleet: Fleet) -> None:
    """The database unreachable for a few seconds (a loopback TCP proxy in front of it,
    stopped: connections refused, every session through it cut), then back: the worker
    lives, the queue moves again within `QUEUE_RESTART_BOUND_S` of the database answering,
    and no thread is lost or stuck (every job succeeded, every thread done or waiting for
    the approval it asks for, no report twice)."""
    from tests.fixtures.tcp_proxy import tcp_proxy

    fleet = db_fleet
    parts = urlsplit(fleet.url)
    write_tickets(fleet.tickets, {f"bf-{n:02d}" for n in range(3, 10)})  # no refunds asked
    shipped = json.loads((PROJECT_ROOT / "domains/support/servers.json").read_text())
    servers = fleet.env.root / "servers.json"
    used = {k: v for k, v in shipped["mcpServers"].items() if k in ("orders", "kb", "policy")}
    servers.write_text(json.dumps({"mcpServers": used}), encoding="utf-8")
    with tcp_proxy(parts.hostname or "127.0.0.1", parts.port or 5432) as proxy:
        netloc = parts.netloc.rsplit("@", 1)
        through = (
            f"{netloc[0]}@127.0.0.1:{proxy.port}"
            if len(netloc) == 2
            else (f"127.0.0.1:{proxy.port}")
        )
        proxied = urlunsplit(parts._replace(netloc=through))
        worker = fleet.start_worker(
            "behind", "--concurrency", "2", "--stalled-after", "15", "--model", "offline:400",
            "--servers", str(servers), env={"MUSTER_DB": proxied},
        )  # fmt: skip
        assert fleet.fleet("submit", str(fleet.tickets)).returncode == EXIT_OK

        def mid_run() -> bool:
            jobs = fleet.jobs()
            return any(j["status"] == "doing" for j in jobs) and any(
                j["status"] == "todo" for j in jobs
            )

        wait_until(mid_run, "a job in hand and jobs waiting", proc=worker)
        wait_until(lambda: worker_steps(fleet) > 0, "a worker step", proc=worker)
        proxy.stop()
        down = time.monotonic()

        def noticed() -> bool:  # the worker tried the database, and the outage lasted
            return proxy.refused > 0 and time.monotonic() - down >= OUTAGE_S

        wait_until(noticed, "the worker to meet the outage", proc=worker)
        before = {j["id"]: (j["status"], j["attempts"]) for j in fleet.jobs()}
        proxy.start()
        up = time.monotonic()

        def moving() -> float | None:
            # A job the worker fetched or finished since the database came back.
            for job in fleet.jobs():
                was = before.get(job["id"])
                if job["status"] == "succeeded" or (
                    job["status"] == "doing" and was is not None and was[0] == "todo"
                ):
                    if was is None or was[0] != job["status"]:
                        return time.monotonic() - up
            return None

        restart_s = wait_until(moving, "the queue to move after the outage", proc=worker)
        assert restart_s is not None
        print(f"queue moving again {restart_s:.2f}s after the database answered")
        assert restart_s <= QUEUE_RESTART_BOUND_S, (restart_s, fleet.log("behind")[-3000:])

        states = wait_until(fleet.settled, "every thread to finish after the outage", proc=worker)
        assert isinstance(states, dict)
        for thread, (status, values) in states.items():
            assert status in ("done", "interrupted"), (thread, status)
            keys = report_keys(values)
            assert len(keys) == len(set(keys)), (thread, keys)
        assert {j["status"] for j in fleet.jobs()} == {"succeeded"}, fleet.jobs()
        assert worker.poll() is None, fleet.log("behind")[-3000:]
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=HANG_TIMEOUT_S) == EXIT_DRAINED
