"""The fleet: `muster worker` processes on Procrastinate, sharing one PostgreSQL database.

The slow tests start real worker processes (`python -m graph.app.cli worker`, each with its
own stdio MCP servers) on the session's PostgreSQL database (`postgres_url`), queue tickets
with `submit`, and kill or stop workers mid-ticket. They wait on events (a job in `doing`
on the worker to kill, with a branch of its thread saved; every thread finished), never for
a fixed time. Each test queues its own tickets file (a unique stem, so unique thread ids):
the database is shared with the other PostgreSQL tests of the session.

Exactly once is read from the records themselves: each thread's checkpointed reports (no
`(packet_id, attempt)` twice), each thread's trace (no branch dispatched twice), the refunds
table of the orders database, and the jobs table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from procrastinate.jobs import Job, Status
from psycopg.rows import dict_row

from checkpoints.lease import ThreadBusyError
from checkpoints.threads import status_of, thread_config
from graph.app.fleet import answer_on_fleet, fleet_state, tickets_of
from graph.app.fleet_queue import FleetJob
from graph.app.fleet_retry import FleetRetry
from graph.app.runtime import open_runtime, open_store, stream_run_outcome
from graph.trace import read_trace, trace_path
from tests.conftest import DEMO_TICKET, HANG_TIMEOUT_S, PROJECT_ROOT, MusterEnv, wait_until
from tests.test_actions import REFUND_TICKET, all_run_refunds, refund_rows
from workers.contracts import Report

EXIT_OK, EXIT_DRAINED = 0, 6
BLACK_FRIDAY = PROJECT_ROOT / "examples" / "black_friday.jsonl"
STALLED_AFTER_S = "3"
"""The workers' `--stalled-after` in these tests: a killed worker's job is back within ~4 s."""


# --- pure parts ----------------------------------------------------------------------------


def _job(attempts: int) -> Job:
    return Job(id=1, queue="muster", lock="t", queueing_lock=None, task_name="x", attempts=attempts)


def test_a_drained_run_goes_back_at_once_a_busy_thread_soon_an_error_twice_more() -> None:
    retry = FleetRetry()
    from langgraph.errors import GraphDrained

    drained = retry.get_retry_decision(exception=GraphDrained("SIGTERM"), job=_job(5))
    assert drained is not None and drained.retry_at is not None
    busy = retry.get_retry_decision(exception=ThreadBusyError.__new__(ThreadBusyError), job=_job(3))
    assert busy is not None
    assert retry.get_retry_decision(exception=RuntimeError("x"), job=_job(0)) is not None
    assert retry.get_retry_decision(exception=RuntimeError("x"), job=_job(1)) is not None
    assert retry.get_retry_decision(exception=RuntimeError("x"), job=_job(2)) is None
    assert retry.get_retry_decision(exception=KeyboardInterrupt(), job=_job(0)) is None


def test_the_fleet_view_puts_each_thread_in_one_place() -> None:
    def job(status: str, worker: str | None = "w", silent: float | None = 1.0) -> FleetJob:
        return FleetJob("t", 1, "muster:run_ticket", status, 0, worker, silent)

    assert fleet_state(job("todo"), "in progress") == "queued"
    assert fleet_state(job("doing"), "in progress") == "running"
    assert fleet_state(job("doing", None, None), "in progress") == "stalled"
    dead = FleetJob("t", 1, "muster:run_ticket", "doing", 0, "w", 4.0, worker_dead=True)
    assert fleet_state(dead, "in progress") == "stalled"
    assert fleet_state(job("succeeded"), "interrupted") == "waiting for a human"
    assert fleet_state(job("succeeded"), "done") == "done"
    assert fleet_state(None, "done") == "done"
    assert fleet_state(job("failed"), "in progress") == "other"


def test_submit_reads_a_ticket_or_a_jsonl_file(tmp_path: Path) -> None:
    one = tickets_of(argparse.Namespace(ticket="Order #12345 was charged twice", thread="x-1"))
    assert one == [("x-1", "Order #12345 was charged twice")]
    lines = tickets_of(argparse.Namespace(ticket=str(BLACK_FRIDAY), thread=None))
    assert len(lines) == 40 and lines[0][0] == "batch-black_friday-bf-01"


async def test_a_sqlite_thread_is_answered_in_process(muster_env: MusterEnv) -> None:
    args = argparse.Namespace(db=str(muster_env.checkpoint_db), thread="any", json=False)
    assert await answer_on_fleet(args, "approval", {}) is None


@pytest.mark.integration
async def test_the_outcome_a_worker_logs_is_the_thread_s_status(muster_env: MusterEnv) -> None:
    """A fleet worker tells how a job's run ended from the run's own updates, without
    reading the thread back: the same status a read of the thread gives, and the answer's
    status, for a ticket that waits for a human and for one that finishes."""
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        for thread, request in (("waits", REFUND_TICKET), ("ends", DEMO_TICKET)):
            outcome = await stream_run_outcome(runtime, thread, {"request": request})
            snapshot = await runtime.graph.aget_state(thread_config(thread))
            assert outcome.status == status_of(snapshot), thread
            answer = snapshot.values.get("answer")
            assert outcome.answer_status == getattr(answer, "status", None), thread
        assert (await runtime.graph.aget_state(thread_config("waits"))).interrupts
        assert outcome.status == "done" and outcome.answer_status is not None


async def test_a_worker_judged_dead_while_alive_comes_back_and_keeps_its_own_jobs(
    postgres_url: str,
) -> None:
    """A loaded machine can make a live worker's heartbeat late: another worker's sweep may
    retry its jobs and delete its row. Its own sweep puts the row back under the same id
    (its fetches need it: the jobs table refers to it) and never retries its own jobs."""
    from graph.app.fleet_queue import QUEUE, enqueue_ticket, open_fleet
    from graph.app.fleet_sweep import keep_alive, retry_stalled_jobs
    from graph.app.fleet_worker import TASKS

    thread = f"keepalive-{uuid.uuid4().hex[:8]}"
    async with open_fleet(postgres_url, tasks=dict(TASKS)) as app:
        me = await app.job_manager.register_worker()
        assert await keep_alive(app, me) is False  # present: an ordinary heartbeat
        job_id = await enqueue_ticket(app, thread, "Order #12345 was charged twice")
        job = await app.job_manager.fetch_job(queues=[QUEUE], worker_id=me)
        assert job is not None and job.id == job_id
        # Its heartbeat is late by more than the bound; then another worker prunes its row.
        await app.connector.execute_query_async(
            "UPDATE procrastinate_workers SET last_heartbeat = now() - interval '1 hour'"
            " WHERE id = %(id)s",
            id=me,
        )
        assert job_id not in await retry_stalled_jobs(app, stalled_after=3, own_worker_id=me)
        await app.job_manager.prune_stalled_workers(3)  # another worker's sweep, say

        async def job_row() -> dict[str, Any]:
            return await app.connector.execute_query_one_async(
                "SELECT status::text AS status, worker_id FROM procrastinate_jobs"
                " WHERE id = %(id)s",
                id=job_id,
            )

        assert await job_row() == {"status": "doing", "worker_id": None}
        # Its own sweep does not take the job it runs, though no worker is named on it now.
        assert job_id not in await retry_stalled_jobs(app, stalled_after=3, in_hand={job_id})
        assert await keep_alive(app, me, {job_id}) is True  # back, under the same id
        assert await keep_alive(app, me, {job_id}) is False
        assert await job_row() == {"status": "doing", "worker_id": me}
        # And it can fetch again (with its row gone, this failed on the foreign key).
        await enqueue_ticket(app, f"{thread}-2", "Where is order #12345?")
        again = await app.job_manager.fetch_job(queues=[QUEUE], worker_id=me)
        assert again is not None
        for done in (job_id, again.id):
            assert done is not None
            await app.job_manager.finish_job_by_id_async(
                done, status=Status.SUCCEEDED, delete_job=True
            )
        await app.job_manager.unregister_worker(me)


# --- real worker processes -----------------------------------------------------------------


@dataclass
class Fleet:
    """One test's tickets, workers and run data on the session's PostgreSQL database."""

    env: MusterEnv
    url: str
    tickets: Path
    procs: list[subprocess.Popen[str]]

    def start_worker(
        self, name: str, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen[str]:
        """A `muster worker` process, its output in `<name>.log`, once it is taking jobs;
        `env` adds to the test's environment."""
        proc = self.spawn_worker(name, *args, env=env)
        wait_until(lambda: "concurrency" in self.log(name), f"worker {name} to start", proc=proc)
        return proc

    def start_workers(self, names: list[str], *args: str) -> list[subprocess.Popen[str]]:
        """`start_worker` for each name, started together (their servers start side by side)."""
        procs = [self.spawn_worker(name, *args) for name in names]
        for name, proc in zip(names, procs, strict=True):
            wait_until(lambda n=name: "concurrency" in self.log(n), f"worker {name}", proc=proc)
        return procs

    def spawn_worker(
        self, name: str, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen[str]:
        """A `muster worker` process, its output in `<name>.log`, just started."""
        log = self.env.root / f"{name}.log"
        with log.open("w") as out:  # the child keeps its own copy of the descriptor
            proc = subprocess.Popen(
                [sys.executable, "-m", "graph.app.cli", "worker", "--name", name, *args],
                cwd=PROJECT_ROOT,
                env={**os.environ, **(env or {})},
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
            )
        self.procs.append(proc)
        return proc

    def log(self, name: str) -> str:
        path = self.env.root / f"{name}.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""

    def fleet(self, *args: str) -> subprocess.CompletedProcess[str]:
        """A fleet command (or `approve`, through the queue) as a process of its own."""
        return subprocess.run(
            [sys.executable, "-m", "graph.app.cli", *args],
            capture_output=True,
            text=True,
            timeout=HANG_TIMEOUT_S,
            cwd=PROJECT_ROOT,
        )

    def threads(self) -> list[str]:
        stem = self.tickets.stem
        return [
            f"batch-{stem}-{json.loads(line)['id']}"
            for line in self.tickets.read_text().splitlines()
        ]

    def query(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        with psycopg.connect(self.url, autocommit=True, row_factory=dict_row) as conn:
            return conn.execute(sql, params).fetchall()

    def jobs(self) -> list[dict[str, Any]]:
        """This test's jobs, oldest first."""
        return self.query(
            "SELECT j.id, j.lock, j.task_name, j.status::text AS status, j.attempts, w.name"
            " FROM procrastinate_jobs j LEFT JOIN muster_fleet_workers w"
            " ON w.worker_id = j.worker_id WHERE j.lock = ANY(%s) ORDER BY j.id",
            self.threads(),
        )

    def states(self) -> dict[str, tuple[str, dict[str, Any]]]:
        async def read() -> dict[str, tuple[str, dict[str, Any]]]:
            async with open_store(self.url) as (graph, _saver):
                out: dict[str, tuple[str, dict[str, Any]]] = {}
                for thread in self.threads():
                    snapshot = await graph.aget_state(thread_config(thread))
                    out[thread] = (status_of(snapshot), dict(snapshot.values))
                return out

        return asyncio.run(read())

    def settled(self) -> dict[str, tuple[str, dict[str, Any]]] | None:
        """Every thread done or waiting for a human, and no job of theirs left to run."""
        if any(j["status"] in ("todo", "doing") for j in self.jobs()):
            return None
        states = self.states()
        if all(status in ("done", "interrupted") for status, _ in states.values()):
            return states
        return None


@pytest.fixture
def fleet(
    muster_env: MusterEnv, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Fleet]:
    """`MUSTER_DB` on the session's PostgreSQL database; workers stopped (SIGKILL) after."""
    monkeypatch.setenv("MUSTER_DB", postgres_url)
    tickets = muster_env.root / f"fleet_{uuid.uuid4().hex[:8]}.jsonl"
    fl = Fleet(muster_env, postgres_url, tickets, [])
    try:
        yield fl
    finally:
        for proc in fl.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=HANG_TIMEOUT_S)


def write_tickets(path: Path, ids: set[str]) -> None:
    lines = [
        line + "\n"
        for line in BLACK_FRIDAY.read_text().splitlines()
        if json.loads(line)["id"] in ids
    ]
    path.write_text("".join(lines), encoding="utf-8")


def dispatches(thread: str, trace_dir: Path) -> Counter[tuple[str, str]]:
    """How many times each branch finished, by its trace (`dispatch` lines, keyed by packet
    id and fingerprint: a recovery retry of a packet has another fingerprint)."""
    return Counter(
        (str(e["packet_id"]), str(e["packet"]))
        for e in read_trace(trace_path(thread, trace_dir))
        if e.get("node") == "dispatch"
    )


def plans(thread: str, trace_dir: Path) -> int:
    """How many times the thread was planned, by its trace."""
    events = read_trace(trace_path(thread, trace_dir))
    return sum(e.get("event") == "node" and e.get("node") == "plan" for e in events)


def report_keys(values: dict[str, Any]) -> list[tuple[str, int]]:
    reports = values.get("reports") or []
    assert all(isinstance(r, Report) for r in reports)
    return [(r.packet_id, r.attempt) for r in reports]


@pytest.mark.slow
@pytest.mark.integration
def test_two_workers_one_killed_every_ticket_ends_once_and_an_approval_refunds_once(
    fleet: Fleet,
) -> None:
    # bf-01/bf-02: duplicate refunds, which wait for approval (a later ticket about the same
    # order is held: one refund per order waits for a human); the rest a mix.
    ids = {f"bf-{n:02d}" for n in range(1, 13)}
    write_tickets(fleet.tickets, ids)
    # The worker to kill runs a slow model, so its tickets are long and it is surely
    # mid-ticket when killed; the survivor a fast one.
    fleet.start_worker(
        "slow", "--concurrency", "2", "--stalled-after", STALLED_AFTER_S, "--model",
        "offline:1500",
    )  # fmt: skip
    slow = fleet.procs[0]
    submitted = fleet.fleet("submit", str(fleet.tickets))
    assert submitted.returncode == EXIT_OK, submitted.stderr
    assert submitted.stdout.split() == fleet.threads()

    def slow_mid_ticket() -> str | None:
        """A thread the slow worker is running, past its checkpointed plan, mid-superstep."""
        for job in fleet.jobs():
            if job["status"] == "doing" and job["name"] == "slow":
                events = read_trace(trace_path(job["lock"], fleet.env.trace_dir))
                if any(e.get("event") == "worker_step" for e in events):
                    return str(job["lock"])
        return None

    victim = wait_until(slow_mid_ticket, "the slow worker mid-ticket", proc=slow)
    assert victim is not None
    before = dispatches(victim, fleet.env.trace_dir)
    slow.send_signal(signal.SIGKILL)
    slow.wait(timeout=HANG_TIMEOUT_S)
    # The survivor starts once the slow worker was killed mid-ticket: started together, on a
    # loaded machine the fast one could take every job before the slow one took any.
    fleet.start_worker(
        "fast", "--concurrency", "4", "--stalled-after", STALLED_AFTER_S, "--model", "offline"
    )

    states = wait_until(fleet.settled, "every ticket to finish or wait for a human")
    assert states is not None
    # The killed worker's job went back to the queue and the survivor continued the thread.
    assert f"{victim}: continuing (in progress)" in fleet.log("fast"), fleet.log("fast")
    assert "retried stalled jobs" in fleet.log("fast")
    after = dispatches(victim, fleet.env.trace_dir)
    assert all(after[key] == 1 for key in before), (before, after)  # finished branches kept
    assert plans(victim, fleet.env.trace_dir) == 1  # the checkpointed plan was not redone
    for thread, (_status, values) in states.items():
        keys = report_keys(values)
        assert len(keys) == len(set(keys)), (thread, keys)
        assert max(dispatches(thread, fleet.env.trace_dir).values()) == 1, thread
    assert all_run_refunds(fleet.env) == []  # nothing is refunded without a human
    view = fleet.fleet("fleet", "--json")
    assert view.returncode == EXIT_OK, view.stderr
    rows = {row["thread"]: row for row in json.loads(view.stdout)["threads"]}
    approvals = [t for t in fleet.threads() if rows[t]["detail"] == "approval"]
    assert approvals, rows  # the refunds of bf-01, bf-02 (one per order; the rest held)
    waiting = approvals[0]
    assert states[waiting][0] == "interrupted"

    # A third process approves; whichever worker is free runs the refund, once.
    approve = fleet.fleet("approve", waiting, "--by", "lead")
    assert approve.returncode == EXIT_OK, approve.stdout + approve.stderr
    assert "queued as job" in approve.stdout
    again = fleet.fleet("approve", waiting, "--by", "lead")  # queued, or already answered

    def approved_done() -> bool:
        settled = fleet.settled()
        return settled is not None and settled[waiting][0] == "done"

    wait_until(approved_done, "the approved thread to finish")
    refunds = all_run_refunds(fleet.env)
    assert len(refunds) == 1, (refunds, again.stdout + again.stderr)
    assert len(refund_rows(fleet.env, refunds[0]["order_id"])) == 1
    assert f"{waiting}: continuing (interrupted)" in fleet.log("fast") + fleet.log("slow")
    # Each ticket ran as one thread, queued once.
    runs = Counter(j["lock"] for j in fleet.jobs() if j["task_name"] == "muster:run_ticket")
    assert runs == Counter(fleet.threads())

    view = fleet.fleet("fleet", "--json")
    assert view.returncode == EXIT_OK, view.stderr
    shown = {row["thread"]: row["state"] for row in json.loads(view.stdout)["threads"]}
    assert shown[waiting] == "done"
    assert all(shown[t] in ("done", "waiting for a human") for t in fleet.threads())

    fast = fleet.procs[1]
    fast.send_signal(signal.SIGTERM)
    assert fast.wait(timeout=HANG_TIMEOUT_S) == EXIT_DRAINED


@pytest.mark.slow
@pytest.mark.integration
def test_sigterm_checkpoints_the_ticket_in_hand_and_another_worker_finishes_it(
    fleet: Fleet,
) -> None:
    write_tickets(fleet.tickets, {"bf-03"})
    thread = fleet.threads()[0]
    # The policy branch answers 6 s late on this worker, so when the first branch's report is
    # in, the ticket is still in hand for certain (the rest of it takes milliseconds).
    first = fleet.start_worker(
        "first",
        "--stalled-after",
        STALLED_AFTER_S,
        "--model",
        "offline:1500",
        env={"MUSTER_POLICY_MODE": "slow", "MUSTER_POLICY_SLOW_S": "6"},
    )
    assert fleet.fleet("submit", str(fleet.tickets)).returncode == EXIT_OK
    wait_until(
        lambda: dispatches(thread, fleet.env.trace_dir), "a branch of the ticket", proc=first
    )
    started = time.monotonic()
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=HANG_TIMEOUT_S) == EXIT_DRAINED
    assert "drained; checkpointed and back in the queue" in fleet.log("first")
    [job] = fleet.jobs()
    assert job["status"] == "todo"  # handed back at once, not left for the stalled sweep
    assert fleet.states()[thread][0] == "in progress"
    before = dispatches(thread, fleet.env.trace_dir)

    fleet.start_worker("second", "--stalled-after", STALLED_AFTER_S)
    states = wait_until(fleet.settled, "the second worker to finish the ticket")
    assert states is not None
    assert states[thread][0] == "done"
    keys = report_keys(states[thread][1])
    assert len(keys) == len(set(keys))
    after = dispatches(thread, fleet.env.trace_dir)
    assert all(after[key] == 1 for key in before) and max(after.values()) == 1
    assert time.monotonic() - started < HANG_TIMEOUT_S
    assert Status.SUCCEEDED.value in {j["status"] for j in fleet.jobs()}
