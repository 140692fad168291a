"""Fleet benchmark: SQLite in one process vs 1 and 2 `muster worker` processes on PostgreSQL.

Run: `.venv/bin/python bench/fleet.py [--tickets N] [--quick] [--configs sqlite,pg1,pg2,c1]
[--delays 0,100] [--concurrency 16] [--server URL] [--profile] [--keep]` (a benchmark, never a
test). `--quick` is 40 tickets at 0 ms a turn without the c1 run: a smoke run of every path in
a minute or two. Needs a PostgreSQL server (`--server`, default `MUSTER_TEST_PG`, else
postgresql://postgres@127.0.0.1:5432/postgres) on which it may create and drop databases.

The queue: `examples/black_friday.jsonl` repeated until there are `--tickets` (default 200)
tickets, each repeat with ticket ids of its own (`bf-01-r1` ... `bf-40-r5`), so every ticket is
a thread of its own. The offline model at 0 ms a turn (`offline`: pure CPU) and at 100 ms a turn
(`offline:100`). Every run gets a fresh checkpoint store, a fresh orders database, its own
traces and call log (in a temporary folder, removed at the end unless `--keep`).

Configurations (each at every `--delays` value):
  sqlite  one process, as `muster batch` does it: `open_runtime` on a fresh SQLite file, one
          lane per ticket in flight (`runtime.lanes`), `run_batch` at `--concurrency` (16),
          inside this process (the library, as bench/batch.py uses it). Every MCP server is
          started before the clock, as a worker does (`servers_on_demand=False`).
  pg1     ONE `muster worker --concurrency 16` process (graph.app.cli, as the `muster` script
          runs it, from a small launcher that adds a log line per job that raised) on a fresh
          PostgreSQL database (`muster_bench_<pid>_<n>`, dropped after the run). The workers
          are started and idle (their MCP servers up) before the clock; then this process
          queues every ticket with `enqueue_ticket` (what `muster submit FILE.jsonl` does, on a
          Procrastinate app opened before the clock), and the clock stops when the last
          ticket's job line comes out of a worker (stdout read as it is written: an event, not
          a poll). The workers are stopped by pid: SIGTERM (they drain), SIGKILL after 60 s.
  pg2     the same with TWO worker processes, each `--concurrency 16`.
  c1      at 100 ms a turn only: `sqlite` at concurrency 1, for the concurrency-16-vs-1 target.

Columns:
  wall       the queue only: from the first ticket started/queued to the last one finished
             (server start-up is printed apart, on the detail line, as `startup`).
  t/s        tickets per second: tickets / wall.
  proc       CPU ms per ticket of the process(es) running the graph: for sqlite/c1 this
             process (`getrusage`, every thread); for pg1/pg2 the worker processes
             (utime + stime from /proc/<pid>/stat, every thread), read just before the first
             ticket is queued and after the last finished. The CPU this process spends queueing
             the jobs is on the detail line (`submit CPU`).
  pg         CPU ms per ticket of the PostgreSQL server: utime + stime + cutime + cstime summed
             over EVERY process whose comm is `postgres` (/proc/<pid>/stat), after minus
             before. The postmaster's cutime/cstime carry the CPU of backends that ended during
             the run (a session a pool closed, or a lease's own session). This INCLUDES
             PostgreSQL's background processes (checkpointer, WAL writer, autovacuum, ...) and
             any other client of the shared server: the sqlite rows show that background level
             (nothing of theirs touches PostgreSQL). The detail line splits it: our database's
             backends alive at the end (by application_name: Procrastinate's pool, the thread
             leases' pool, and the rest: the checkpoint saver's pool, the audit log), backends
             that ended during the run (any database), other databases' backends, background
             processes.
  proc+pg    proc + pg: what the target on PostgreSQL's CPU compares (see below).
  servers    CPU ms per ticket of the MCP server processes (the children of this process or
             of the workers: one set per process that runs tickets).
  store B    checkpoint store bytes per ticket. SQLite: the file size after the runtime closed
             and the WAL was checkpointed into it (it also holds the audit log and the leases).
             PostgreSQL: `pg_total_relation_size` (heap, TOAST, indexes) of `checkpoints`,
             `checkpoint_blobs` and `checkpoint_writes`.
  data B     checkpoint data per ticket. SQLite: sum of length(checkpoint) + length(metadata)
             of `checkpoints` and length(value) of `writes`, as bench/checkpoint_bytes.py counts
             them. PostgreSQL: sum of pg_column_size (as stored, maybe compressed) of checkpoint
             + metadata (JSONB) of `checkpoints` and of the blobs of `checkpoint_blobs` and
             `checkpoint_writes`.
  load       the 1-minute load average when the run ended (the machine is shared).

The detail line under each row also gives: the cores this run kept busy ((proc + pg + servers
+ submit CPU) / wall: how much of the machine the benchmark got), the outcomes, for the fleet
the enqueue time, job retries (Procrastinate attempts beyond the first), the jobs that raised
and why, and what PostgreSQL did per ticket (our database's transactions, sessions opened, rows
written, from pg_stat_database; the server's WAL records, bytes and syncs, from pg_stat_wal).

Every ticket must finish exactly once, or the benchmark stops with the reasons: in every
configuration each thread ends done or waiting for a human (no failed or unfinished outcome) and
no report (packet id, attempt) appears twice; on the fleet, each thread also has exactly one
job (`muster:run_ticket`, succeeded), its worker line `starting` once and one ending line.

Targets (printed with met / MISSED): at 0 ms a turn, pg2 tickets/s >= 1.7x pg1's (with the
ceiling the measured CPU per ticket allows on this machine's cores); at 100 ms a turn in one
process, c1 wall / sqlite c16 wall >= 10x (with the CPU ceiling c1 wall / c16 proc CPU); and
PostgreSQL CPU per ticket <= 1.5x SQLite's, where the quantities compared are, at 0 ms a turn,
pg1's proc + pg (the worker process plus every postgres process) against sqlite's proc (this
process), the MCP servers left out of both.

`--profile` then runs sqlite, pg1 and pg2 once more (first delay) under cProfile on the main
thread's CPU clock over the queue only (the workers' profiler is switched on and off by
SIGUSR1/SIGUSR2), and prints where each one's CPU goes by subsystem (the share of the
profiled time, times the unprofiled run's proc CPU per ticket) and the top functions.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import inspect
import io
import itertools
import json
import os
import pstats
import re
import secrets
import shutil
import signal
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import harness  # bench/, beside this script: puts the project first on sys.path
from harness import (
    OTHER,
    PHASE_NAMES,
    ROOT,
    Attribution,
    Proc,
    descendants,
    load_average,
    proc_table,
    sqlite_file_bytes,
    verdict,
)

# Every server and store this script starts points inside WORK; each run points these at a
# folder of its own before it starts anything (`run_env`).
WORK = harness.sandbox("muster-bench-fleet-")
# One secret for this process and every worker (as the tests' environment has one).
os.environ.setdefault("MUSTER_APPROVAL_SECRET", secrets.token_hex(32))

import psycopg  # noqa: E402 - after the environment is set
from freezing import add_freeze_flag, freeze_note  # noqa: E402 - bench/, beside this script
from langgraph.types import StateSnapshot  # noqa: E402

from checkpoints.threads import status_of, thread_config  # noqa: E402
from graph.app.batch_outcomes import result_from_snapshot  # noqa: E402
from graph.app.batch_queue import MAX_LANES, BatchPlan, run_batch  # noqa: E402
from graph.app.batch_report import BatchProgress  # noqa: E402
from graph.app.batch_tickets import Ticket, batch_thread_id, load_tickets  # noqa: E402
from graph.app.fleet_queue import QUEUE, RUN_TICKET, enqueue_ticket, open_fleet  # noqa: E402
from graph.app.runtime import Graph, open_runtime, open_store  # noqa: E402
from servers.orders import ensure_database  # noqa: E402
from workers.models import load_model_factory  # noqa: E402

BLACK_FRIDAY = ROOT / "examples" / "black_friday.jsonl"
DEFAULT_SERVER = os.environ.get("MUSTER_TEST_PG") or "postgresql://postgres@127.0.0.1:5432/postgres"
TARGET_FLEET = 1.7
"""pg2 tickets/s over pg1's at 0 ms a turn."""
TARGET_CONCURRENCY = 10.0
"""c1 wall over c16 wall at 100 ms a turn, one process."""
TARGET_PG_CPU = 1.5
"""pg1 (worker + postgres) CPU per ticket over sqlite (this process) CPU per ticket."""
WORKER_START_S = 180.0
"""How long a worker may take to start its MCP servers (a loaded machine is slow)."""
QUEUE_TIMEOUT_S = 900.0
"""How long a run may take before it is declared stuck (the benchmark then stops)."""
STOP_S = 60.0
"""How long a SIGTERMed worker may take to drain before it is SIGKILLed."""
ENDED = ("done", "interrupted", "failed", "in progress")
"""The states a worker's job line ends a run in (`advance`); only the first two are right."""
JOB_LINE = re.compile(r"^job (\d+) (\S+): (.*)$")
RETRY_LINE = "procrastinate job "
"""How the launcher's log handler starts its line about a job that raised (`LAUNCHER`)."""
LAUNCHER = """
import logging, os, runpy, sys

class Why(logging.Handler):  # a job that raised: one line saying what (Procrastinate logs
    def emit(self, record):  # these at INFO, which nothing prints by default)
        action = getattr(record, "action", "")
        if action.startswith(("job_error", "job_aborted")):
            error = record.exc_info[1] if record.exc_info else None
            why = " ".join(f"{type(error).__name__}: {error}".split())[:300]
            print(f"procrastinate job {action}: {record.getMessage()[:100]} | {why}", flush=True)

log = logging.getLogger("procrastinate.worker")
log.setLevel(logging.INFO)
log.addHandler(Why())
sys.argv = ["muster", *sys.argv[1:]]
sys.path[0] = os.getcwd()  # the project (this file lives in the run data folder)
out = os.environ.pop("BENCH_FLEET_PROFILE", "")
if out:  # cProfile on the main thread's CPU clock, from SIGUSR1 to SIGUSR2 (the clock)
    import cProfile, signal, time
    profile = cProfile.Profile(time.thread_time_ns, 1e-9)

    def stop(*_):
        profile.disable()
        profile.dump_stats(out + ".part")
        os.replace(out + ".part", out)

    signal.signal(signal.SIGUSR1, lambda *_: profile.enable())
    signal.signal(signal.SIGUSR2, stop)
runpy.run_module("graph.app.cli", run_name="__main__")
"""
"""How a worker is started (`python WORK/muster_worker.py worker ...`): `muster worker`
(graph.app.cli, as the `muster` script runs it), with a log handler that prints one line for
each job that raised (its exception), and, when BENCH_FLEET_PROFILE names an output file,
cProfile (main thread, CPU clock) from SIGUSR1 to SIGUSR2: the clock of the run."""

# `servers_on_demand` is new in `open_runtime`: start every MCP server before the clock, as a
# worker does, when the runtime can be asked to.
UP_FRONT: dict[str, Any] = (
    {"servers_on_demand": False}
    if "servers_on_demand" in inspect.signature(open_runtime).parameters
    else {}
)
RUN_IDS = itertools.count(1)


# --- tickets ----------------------------------------------------------------------------------


def write_tickets(path: Path, n: int) -> list[Ticket]:
    """The Black Friday queue repeated to `n` tickets, ids `<id>-r<repeat>`, written to `path`."""
    base = load_tickets(BLACK_FRIDAY)
    lines = []
    for i in range(n):
        ticket = base[i % len(base)]
        ticket_id = f"{ticket.id}-r{i // len(base) + 1}"
        lines.append(json.dumps({"id": ticket_id, "request": ticket.request}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_tickets(path)


# --- CPU from /proc ---------------------------------------------------------------------------


def cpu_of(pids: Iterable[int], table: dict[int, Proc], *, reaped: bool = False) -> float:
    """CPU seconds of `pids` (with the children they reaped if `reaped`)."""
    return sum(
        table[pid].own + (table[pid].children if reaped else 0.0) for pid in pids if pid in table
    )


def postgres_cpu(table: dict[int, Proc]) -> float:
    """CPU seconds of every `postgres` process, with the backends the postmaster reaped."""
    return sum(p.own + p.children for p in table.values() if p.comm == "postgres")


BACKEND_TITLE = re.compile(r"^postgres: [^:]+: (\S+) (\S+) (\S*[(\[]\S*)")
"""A client backend's process title: `postgres: 15/main: USER DATABASE HOST(PORT) STATE`."""


def postgres_processes(table: dict[int, Proc]) -> dict[int, tuple[str, str]]:
    """Each `postgres` process: (role, database). Role: postmaster, backend (a client's
    session, with its database) or background (checkpointer, WAL writer, autovacuum, ...)."""
    found = {}
    for proc in table.values():
        if proc.comm != "postgres":
            continue
        parent = table.get(proc.ppid)
        if parent is None or parent.comm != "postgres":
            found[proc.pid] = ("postmaster", "")
            continue
        try:
            with open(f"/proc/{proc.pid}/cmdline", "rb") as f:
                title = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        match = BACKEND_TITLE.match(title)
        found[proc.pid] = ("backend", match[2]) if match else ("background", "")
    return found


@dataclass
class CpuMark:
    """CPU readings at one moment: this process, the given processes, their descendants,
    PostgreSQL (all of it, and each of its processes with its role)."""

    process: float
    procs: float
    servers: float
    postgres: float
    table: dict[int, Proc]
    roles: dict[int, tuple[str, str]]

    @classmethod
    def take(cls, pids: list[int]) -> CpuMark:
        table = proc_table()
        below = descendants(pids or [os.getpid()], table)
        return cls(
            process=harness.process_cpu().own,
            procs=cpu_of(pids, table),
            servers=cpu_of(below, table, reaped=True),
            postgres=postgres_cpu(table),
            table=table,
            roles=postgres_processes(table),
        )


def postgres_split(
    before: CpuMark, after: CpuMark, database: str, apps: dict[int, str] | None = None
) -> dict[str, float]:
    """PostgreSQL's CPU between two marks, seconds, by where it went: our database's
    backends alive at the end; backends that ended meanwhile (of any database: the postmaster
    reaps them, and /proc no longer tells whose they were); other databases' live backends;
    background processes (and the postmaster itself). `apps` (pid: application_name) splits
    ours: `queue` is Procrastinate's pool (application_name `muster-fleet`), `lease` the
    thread leases' sessions (`muster-lease ...`), `store` the rest (the checkpoint saver's
    pool, the audit log)."""
    split = dict.fromkeys(("ours", "queue", "lease", "store", "ended", "others", "background"), 0.0)
    for pid, (role, db) in after.roles.items():
        now = after.table[pid]
        old = before.table.get(pid)
        spent = now.own - (old.own if old is not None and old.started == now.started else 0.0)
        if role == "postmaster":
            split["background"] += spent
            was = old.children if old is not None else 0.0
            split["ended"] += now.children - was
        elif role == "backend" and db == database:
            split["ours"] += spent
            if apps is not None:
                app = apps.get(pid) or ""
                part = "lease" if app.startswith("muster-lease") else "store"
                split["queue" if app == "muster-fleet" else part] += spent
        elif role == "backend":
            split["others"] += spent
        else:
            split["background"] += spent
    for pid, (role, _) in before.roles.items():
        if pid not in after.roles and role != "postmaster":  # ended: counted from before on
            split["ended"] -= before.table[pid].own
    return split


# --- results ----------------------------------------------------------------------------------


@dataclass
class Run:
    """One configuration's measurements."""

    config: str
    delay_ms: int
    concurrency: int
    processes: int
    tickets: int
    wall: float
    proc_cpu: float
    server_cpu: float
    pg_cpu: float
    store_bytes: int = 0
    data_bytes: int = 0
    startup: float = 0.0
    submit_cpu: float = 0.0
    enqueue_s: float = 0.0
    outcomes: Counter[str] = field(default_factory=Counter)
    retries: int = 0
    exit_codes: list[int | None] = field(default_factory=list)
    others: str = ""
    load: float = 0.0
    notes: list[str] = field(default_factory=list)
    raised: list[str] = field(default_factory=list)
    """One line per job that raised (and was retried, or failed)."""
    activity: dict[str, float] = field(default_factory=dict)
    """`pg_activity` after the workers stopped minus before the first ticket was queued."""
    pg_split: dict[str, float] = field(default_factory=dict)
    """PostgreSQL's CPU by where it went (`postgres_split`), seconds."""

    @property
    def label(self) -> str:
        if self.processes == 0:
            return f"sqlite c{self.concurrency} in-process"
        return f"{self.config} {self.processes}x worker c{self.concurrency}"

    @property
    def rate(self) -> float:
        return self.tickets / self.wall

    def per(self, seconds: float) -> float:
        """Seconds of the whole run as ms per ticket."""
        return 1000 * seconds / self.tickets

    @property
    def machine_cpu(self) -> float:
        return self.proc_cpu + self.pg_cpu

    @property
    def all_cpu(self) -> float:
        """Everything the tickets cost the machine: proc, postgres, MCP servers."""
        return self.proc_cpu + self.pg_cpu + self.server_cpu


class NotOnce(SystemExit):
    """A ticket did not finish, or finished more than once."""


def check_exactly_once(
    threads: list[str], snapshots: dict[str, StateSnapshot], tickets: list[Ticket]
) -> tuple[Counter[str], list[str]]:
    """Outcomes by kind, and every way a thread failed to end exactly once."""
    problems = []
    outcomes: Counter[str] = Counter()
    for ticket, thread in zip(tickets, threads, strict=True):
        snapshot = snapshots[thread]
        status = status_of(snapshot)
        outcome = result_from_snapshot(ticket, thread, snapshot).outcome
        outcomes[outcome] += 1
        if status not in ("done", "interrupted") or outcome in ("failed", "unfinished"):
            problems.append(f"{thread}: {status}, {outcome}")
        keys = [(r.packet_id, r.attempt) for r in snapshot.values.get("reports") or []]
        if len(keys) != len(set(keys)):
            problems.append(f"{thread}: a report twice: {sorted(keys)}")
    return outcomes, problems


async def read_snapshots(graph: Graph, threads: list[str]) -> dict[str, StateSnapshot]:
    return {t: await graph.aget_state(thread_config(t)) for t in threads}


def fail(label: str, problems: list[str]) -> None:
    if problems:
        shown = "\n  ".join(problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise NotOnce(f"{label}: NOT every ticket finished exactly once:\n  {shown}{more}")


def run_env(run_dir: Path) -> dict[str, str]:
    """This run's orders database (fresh, seeded), traces and call log."""
    run_dir.mkdir(parents=True)
    env = {
        "MUSTER_ORDERS_DB": str(run_dir / "orders.sqlite"),
        "MUSTER_TRACE_DIR": str(run_dir / "traces"),
        "MUSTER_CALL_LOG": str(run_dir / "calls.jsonl"),
    }
    ensure_database(Path(env["MUSTER_ORDERS_DB"]))
    return env


def model_name(delay_ms: int) -> str:
    return "offline" if delay_ms == 0 else f"offline:{delay_ms}"


# --- sqlite: one process ----------------------------------------------------------------------


def sqlite_bytes(db: Path) -> tuple[int, int]:
    """(file bytes, checkpoint data bytes) of a closed SQLite store, its WAL folded in first
    (how big the WAL had grown depends on when SQLite last checkpointed it)."""
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = sqlite_file_bytes(db)
        data = conn.execute(
            "SELECT (SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) "
            "FROM checkpoints) + (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes)"
        ).fetchone()[0]
    conn.close()
    return size, int(data)


async def run_in_process(
    config: str, n: int, delay_ms: int, concurrency: int, profile: cProfile.Profile | None = None
) -> Run:
    """`muster batch` in this process: fresh SQLite store, lanes, `run_batch` (under `profile`
    if given)."""
    run_dir = WORK / f"run{next(RUN_IDS):02d}-{config}-{delay_ms}ms"
    os.environ.update(run_env(run_dir))
    path = run_dir / "fleet.jsonl"
    tickets = write_tickets(path, n)
    threads = [batch_thread_id(path, t.id) for t in tickets]
    db = run_dir / "checkpoints.sqlite"
    opened = time.perf_counter()
    models = load_model_factory(model_name(delay_ms))
    async with open_runtime(db=db, models=models, **UP_FRONT) as runtime:
        startup = time.perf_counter() - opened
        async with runtime.lanes(min(concurrency, MAX_LANES)) as lanes:
            before = CpuMark.take([])
            started = time.perf_counter()
            if profile is not None:
                profile.enable()
            progress = BatchProgress(io.StringIO(), n)
            try:
                async with asyncio.timeout(QUEUE_TIMEOUT_S):
                    results, drained = await run_batch(
                        runtime,
                        path,
                        BatchPlan(run=list(tickets)),
                        concurrency=concurrency,
                        progress=progress,
                        lanes=lanes,
                    )
            except TimeoutError:
                raise NotOnce(
                    f"{config} {delay_ms} ms: stuck: {progress.finished} of {n} tickets "
                    f"finished after {QUEUE_TIMEOUT_S:g}s (run data in {run_dir}; --keep)"
                ) from None
            if profile is not None:
                profile.disable()
            wall = time.perf_counter() - started
            after = CpuMark.take([])
        snapshots = await read_snapshots(runtime.graph, threads)
    problems = [f"drained before the end: {drained}"] if drained else []
    ran = Counter(r.thread_id for r in results)
    problems += [f"{t}: ran {ran[t]} times" for t in threads if ran[t] != 1]
    outcomes, more = check_exactly_once(threads, snapshots, tickets)
    fail(f"{config} {delay_ms} ms", problems + more)
    store, data = sqlite_bytes(db)
    return Run(
        config=config,
        delay_ms=delay_ms,
        concurrency=concurrency,
        processes=0,
        tickets=n,
        wall=wall,
        proc_cpu=after.process - before.process,
        server_cpu=after.servers - before.servers,
        pg_cpu=after.postgres - before.postgres,
        store_bytes=store,
        data_bytes=data,
        startup=startup,
        outcomes=outcomes,
        load=os.getloadavg()[0],
        pg_split=postgres_split(before, after, ""),
    )


# --- PostgreSQL: worker processes -------------------------------------------------------------


def database_url(server: str, name: str) -> str:
    return server.rsplit("/", 1)[0] + "/" + name


CREATED: list[str] = []
"""Scratch databases made by this process, dropped at the end whatever happens."""


@asynccontextmanager
async def scratch_database(server: str, name: str) -> AsyncIterator[str]:
    async with await psycopg.AsyncConnection.connect(server, autocommit=True) as conn:
        await conn.execute(f'CREATE DATABASE "{name}"')
    CREATED.append(name)
    try:
        yield database_url(server, name)
    finally:
        await drop_database(server, name)


async def drop_database(server: str, name: str) -> None:
    async with await psycopg.AsyncConnection.connect(server, autocommit=True) as conn:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    if name in CREATED:
        CREATED.remove(name)


async def other_databases(server: str, ours: str) -> int:
    """How many client backends are connected to databases other than ours (shared server)."""
    async with await psycopg.AsyncConnection.connect(server, autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
            "AND datname IS DISTINCT FROM %s AND pid <> pg_backend_pid()",
            (ours,),
        )
        row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def backend_apps(server: str, database: str) -> dict[int, str]:
    """pid: application_name of each session on `database`."""
    async with await psycopg.AsyncConnection.connect(server, autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT pid, application_name FROM pg_stat_activity WHERE datname = %s", (database,)
        )
        return {int(pid): str(app or "") for pid, app in await cursor.fetchall()}


async def postgres_bytes(url: str) -> tuple[int, int]:
    """(table bytes, checkpoint data bytes) of the checkpoint tables."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT pg_total_relation_size('checkpoints') "
            "+ pg_total_relation_size('checkpoint_blobs') "
            "+ pg_total_relation_size('checkpoint_writes'), "
            "(SELECT COALESCE(SUM(pg_column_size(checkpoint) + pg_column_size(metadata)), 0) "
            " FROM checkpoints) "
            "+ (SELECT COALESCE(SUM(pg_column_size(blob)), 0) FROM checkpoint_blobs) "
            "+ (SELECT COALESCE(SUM(pg_column_size(blob)), 0) FROM checkpoint_writes)"
        )
        row = await cursor.fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


PG_ACTIVITY = (
    "SELECT d.xact_commit + d.xact_rollback AS transactions, d.sessions, "
    "d.tup_inserted + d.tup_updated + d.tup_deleted AS rows_written, "
    "w.wal_records, w.wal_bytes, w.wal_sync FROM pg_stat_database d, pg_stat_wal w "
    "WHERE d.datname = current_database()"
)
"""What PostgreSQL did: our database's transactions (every autocommit statement is one),
sessions (connections opened) and rows written; the server's WAL records, bytes and syncs."""


async def pg_activity(url: str) -> dict[str, float]:
    """`PG_ACTIVITY`'s counters now (PostgreSQL 14+; {} if it cannot tell)."""
    try:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            cursor = await conn.execute(PG_ACTIVITY)
            row = await cursor.fetchone()
            names = [c.name for c in cursor.description or []]
    except psycopg.Error:
        return {}
    return dict(zip(names, map(float, row), strict=True)) if row else {}


async def fleet_jobs(url: str) -> list[tuple[str, str, str, int]]:
    """(thread, task, status, attempts) of every job of the queue."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT lock, task_name, status::text, attempts FROM procrastinate_jobs "
            "WHERE queue_name = %s ORDER BY id",
            (QUEUE,),
        )
        return [(str(a), str(b), str(c), int(d)) for a, b, c, d in await cursor.fetchall()]


class WorkerLines:
    """What the workers print, read as they print it: when each is up, and each thread's
    `starting` and ending lines (an event once every expected thread has ended)."""

    def __init__(self, expected: set[str], log: Path) -> None:
        self.expected = expected
        self.log = log.open("w", encoding="utf-8")
        self.starts: Counter[str] = Counter()
        self.ends: Counter[str] = Counter()
        self.odd: list[str] = []
        self.raised: list[str] = []
        self.all_ended = asyncio.Event()

    async def follow(self, name: str, stream: asyncio.StreamReader, up: asyncio.Event) -> None:
        while line := await stream.readline():
            text = line.decode(errors="replace").rstrip("\n")
            self.log.write(f"{name}: {text}\n")
            if not up.is_set() and text.startswith("worker ") and "concurrency" in text:
                up.set()
            if text.startswith(RETRY_LINE):
                self.raised.append(f"{name}: {text}")
                continue
            match = JOB_LINE.match(text)
            if match is None:
                if text and not text.startswith(("worker ", "SIGTERM", "muster worker")):
                    self.odd.append(f"{name}: {text}")
                continue
            thread, what = match[2], match[3]
            if what == "starting":
                self.starts[thread] += 1
            elif what.split(" (")[0] in ENDED:
                self.ends[thread] += 1
                if self.expected <= self.ends.keys():
                    self.all_ended.set()
            elif not what.startswith("continuing"):
                self.odd.append(f"{name}: {text}")

    def close(self) -> None:
        self.log.close()


async def wait_for(
    event: asyncio.Event, procs: list[asyncio.subprocess.Process], what: str, limit_s: float
) -> None:
    """Wait for `event`; fail if a worker exits first or nothing happens within `limit_s`."""
    waiter = asyncio.ensure_future(event.wait())
    exits = [asyncio.ensure_future(p.wait()) for p in procs]
    try:
        done, _ = await asyncio.wait(
            [waiter, *exits], timeout=limit_s, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        for task in (waiter, *exits):
            task.cancel()
    if waiter not in done:
        codes = [p.returncode for p in procs]
        why = (
            f"a worker exited (codes {codes})"
            if any(c is not None for c in codes)
            else (f"nothing after {limit_s:g}s")
        )
        raise NotOnce(f"{what}: {why}")


async def wait_for_files(paths: list[Path], limit_s: float = 60.0) -> None:
    """Wait (polling) until every file of `paths` exists: the workers' profiles."""
    deadline = time.monotonic() + limit_s
    # Another process writes them, and says nothing when it has.
    while not all(p.exists() for p in paths) and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)


async def stop_workers(procs: list[asyncio.subprocess.Process]) -> list[int | None]:
    """SIGTERM each worker by pid (it drains), SIGKILL by pid any still there after `STOP_S`,
    then any MCP server of theirs left behind (by pid, if it is still that process)."""
    table = proc_table()
    left = {pid: table[pid].started for pid in descendants([p.pid for p in procs], table)}
    for proc in procs:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            await asyncio.wait_for(proc.wait(), STOP_S)
        except TimeoutError:
            proc.kill()
            await proc.wait()
    now = proc_table()
    for pid, started in left.items():
        if pid in now and now[pid].started == started:
            os.kill(pid, signal.SIGKILL)
    return [p.returncode for p in procs]


async def run_fleet(
    config: str,
    n: int,
    delay_ms: int,
    concurrency: int,
    workers: int,
    server: str,
    profile: bool = False,
) -> tuple[Run, list[Path]]:
    """`workers` x `muster worker` on a fresh PostgreSQL database; this process queues."""
    number = next(RUN_IDS)
    run_dir = WORK / f"run{number:02d}-{config}-{delay_ms}ms"
    env = {**os.environ, **run_env(run_dir)}
    path = run_dir / "fleet.jsonl"
    tickets = write_tickets(path, n)
    threads = [batch_thread_id(path, t.id) for t in tickets]
    name = f"muster_bench_{os.getpid()}_{number}"
    profiles = [run_dir / f"worker{i + 1}.prof" for i in range(workers)]
    launcher = WORK / "muster_worker.py"
    launcher.write_text(LAUNCHER, encoding="utf-8")
    async with scratch_database(server, name) as url:
        env["MUSTER_DB"] = url
        lines = WorkerLines(set(threads), run_dir / "workers.log")
        procs: list[asyncio.subprocess.Process] = []
        readers: list[asyncio.Task[None]] = []
        try:
            opened = time.perf_counter()
            ups = []
            for i in range(workers):
                extra = {"BENCH_FLEET_PROFILE": str(profiles[i])} if profile else {}
                proc = await asyncio.create_subprocess_exec(
                    sys.executable,
                    str(launcher),
                    "worker",
                    "--concurrency",
                    str(concurrency),
                    "--model",
                    model_name(delay_ms),
                    "--name",
                    f"bench-w{i + 1}",
                    cwd=ROOT,
                    env={**env, **extra},
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.STDOUT,
                )
                procs.append(proc)
                up = asyncio.Event()
                ups.append(up)
                assert proc.stdout is not None
                readers.append(asyncio.create_task(lines.follow(f"w{i + 1}", proc.stdout, up)))
            for i, up in enumerate(ups):
                await wait_for(up, procs, f"worker {i + 1} to start", WORKER_START_S)
            startup = time.perf_counter() - opened
            others_before = await other_databases(server, name)
            activity_before = await pg_activity(url)
            async with open_fleet(url) as app:
                pids = [p.pid for p in procs]
                before = CpuMark.take(pids)
                if profile:
                    for proc in procs:
                        proc.send_signal(signal.SIGUSR1)
                started = time.perf_counter()
                for ticket, thread in zip(tickets, threads, strict=True):
                    await enqueue_ticket(app, thread, ticket.request)
                enqueue_s = time.perf_counter() - started
                submit_cpu = harness.process_cpu().own - before.process
                await wait_for(lines.all_ended, procs, "every ticket to end", QUEUE_TIMEOUT_S)
                wall = time.perf_counter() - started
            if profile:
                for proc in procs:
                    proc.send_signal(signal.SIGUSR2)
                await wait_for_files(profiles)
            # Procrastinate marks a job succeeded just after its task returns: wait for that.
            deadline = time.monotonic() + 30
            while any(s in ("todo", "doing") for _, _, s, _ in await fleet_jobs(url)):
                if time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.02)
            after = CpuMark.take(pids)
            apps = await backend_apps(server, name)
            others_after = await other_databases(server, name)
        finally:
            codes = await stop_workers(procs)
            if readers:  # each ends at the end of its worker's output
                await asyncio.wait(readers, timeout=10)
            for reader in readers:
                reader.cancel()
            lines.close()
        # Every worker's backend has ended, so their counters are all in (a backend sends
        # its counts at most once a second, and when it ends).
        activity_after = await pg_activity(url)
        jobs = await fleet_jobs(url)
        async with open_store(url) as (graph, _saver):
            snapshots = await read_snapshots(graph, threads)
        store, data = await postgres_bytes(url)
    problems = []
    by_thread: dict[str, list[tuple[str, str, int]]] = {}
    for thread, task, status, attempts in jobs:
        by_thread.setdefault(thread, []).append((task, status, attempts))
    for thread in threads:
        mine = by_thread.get(thread, [])
        if [(task, status) for task, status, _ in mine] != [(RUN_TICKET, "succeeded")]:
            problems.append(f"{thread}: jobs {mine}")
        if lines.starts[thread] != 1 or lines.ends[thread] != 1:
            problems.append(
                f"{thread}: started {lines.starts[thread]}x, ended {lines.ends[thread]}x"
            )
    problems += [f"job of an unknown thread {t}" for t in set(by_thread) - set(threads)]
    outcomes, more = check_exactly_once(threads, snapshots, tickets)
    fail(f"{config} {delay_ms} ms (worker output in {run_dir}; run with --keep)", problems + more)
    run = Run(
        config=config,
        delay_ms=delay_ms,
        concurrency=concurrency,
        processes=workers,
        tickets=n,
        wall=wall,
        proc_cpu=after.procs - before.procs,
        server_cpu=after.servers - before.servers,
        pg_cpu=after.postgres - before.postgres,
        store_bytes=store,
        data_bytes=data,
        startup=startup,
        submit_cpu=submit_cpu,
        enqueue_s=enqueue_s,
        outcomes=outcomes,
        retries=sum(max(a - 1, 0) for _, _, _, a in jobs),  # a job run once has 1
        exit_codes=codes,
        others=f"{others_before}/{others_after}",
        load=os.getloadavg()[0],
        notes=lines.odd[:5],
        pg_split=postgres_split(before, after, name, apps),
        raised=lines.raised,
        activity={
            k: activity_after[k] - activity_before[k]
            for k in activity_after.keys() & activity_before.keys()
        },
    )
    return run, profiles


# --- report -----------------------------------------------------------------------------------

HEADER = (
    f"{'config':<26} {'model':<12} {'n':>4} {'wall s':>7} {'t/s':>6} | CPU ms/ticket: "
    f"{'proc':>6} {'pg':>6} {'proc+pg':>7} {'servers':>7} | B/ticket: {'store':>7} "
    f"{'data':>7} | {'load':>4}"
)


def row(run: Run) -> str:
    return (
        f"{run.label:<26} {model_name(run.delay_ms):<12} {run.tickets:>4} {run.wall:>7.2f} "
        f"{run.rate:>6.1f} |                {run.per(run.proc_cpu):>6.1f} "
        f"{run.per(run.pg_cpu):>6.1f} {run.per(run.machine_cpu):>7.1f} "
        f"{run.per(run.server_cpu):>7.1f} |           {run.store_bytes / run.tickets:>7,.0f} "
        f"{run.data_bytes / run.tickets:>7,.0f} | {run.load:>4.2f}"
    )


def detail(run: Run) -> str:
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(run.outcomes.items()))
    busy = (run.machine_cpu + run.server_cpu + run.submit_cpu) / run.wall
    text = (
        f"    startup {run.startup:.1f} s; outcomes: {outcomes}; cores kept busy by this run "
        f"(proc + pg + servers + submit CPU / wall) {busy:.2f} of {os.cpu_count()}"
    )
    if run.processes:
        text += (
            f"; enqueue {run.enqueue_s:.2f} s, submit CPU {run.per(run.submit_cpu):.1f} "
            f"ms/ticket; job retries {run.retries}; worker exit codes {run.exit_codes}; "
            f"client backends of other databases start/end {run.others}"
        )
    if run.pg_split and run.processes:
        p = {k: run.per(v) for k, v in run.pg_split.items()}
        text += (
            f"\n    postgres CPU ms/ticket: {p['ours']:.1f} our database's backends alive at the "
            f"end ({p['queue']:.1f} Procrastinate's pool, {p['lease']:.1f} the thread leases' "
            f"pool, {p['store']:.1f} the checkpoint saver's pool and the audit log), "
            f"{p['ended']:.1f} backends that ended during the run (any database), "
            f"{p['others']:.1f} other databases' backends, {p['background']:.1f} background"
        )
    if run.activity:
        a, n = run.activity, run.tickets
        text += (
            f"\n    PostgreSQL per ticket (from the clock's start until the workers stopped): "
            f"{a['transactions'] / n:.0f} transactions, {a['sessions'] / n:.2f} sessions opened, "
            f"{a['rows_written'] / n:.0f} rows written; server-wide WAL: "
            f"{a['wal_records'] / n:.0f} records, {a['wal_bytes'] / n:,.0f} B, "
            f"{a['wal_sync'] / n:.1f} syncs"
        )
    if run.raised:
        kinds = Counter(line.partition(" | ")[2][:160] for line in run.raised)
        text += f"\n    jobs that raised: {len(run.raised)}"
        for why, count in kinds.most_common(5):
            text += f"\n      {count}x {why}"
    for note in run.notes:
        text += f"\n    worker said: {note}"
    return text


def targets(runs: list[Run]) -> None:
    def find(config: str, delay: int) -> Run | None:
        return next((r for r in runs if r.config == config and r.delay_ms == delay), None)

    print("\ntargets:")
    pg1, pg2 = find("pg1", 0), find("pg2", 0)
    if pg1 and pg2:
        ratio = pg2.rate / pg1.rate
        print(
            f"  2 worker processes vs 1, 0 ms a turn: {pg2.rate:.1f} / {pg1.rate:.1f} tickets/s "
            f"= {ratio:.2f}x (target >= {TARGET_FLEET}x): {verdict(ratio >= TARGET_FLEET)}"
        )
        cores = os.cpu_count() or 1
        # On idle cores: one worker process runs on one core at most, and everything the
        # tickets cost (workers, postgres, MCP servers) shares all the cores.
        one = min(1000 / pg1.per(pg1.proc_cpu), 1000 * cores / pg1.per(pg1.all_cpu))
        two = min(2000 / pg2.per(pg2.proc_cpu), 1000 * cores / pg2.per(pg2.all_cpu))
        print(
            f"    ceiling on {cores} idle cores at the CPU per ticket measured: pg1 <= "
            f"min(1 core / proc, {cores} cores / (proc+pg+servers)) = {one:.1f} tickets/s, pg2 "
            f"<= min(2 cores / proc, {cores} cores / (proc+pg+servers)) = {two:.1f} tickets/s: "
            f"{two / one:.2f}x at best"
        )
    else:
        print("  2 worker processes vs 1 at 0 ms a turn: not measured (needs pg1 and pg2 at 0 ms)")
    c16, c1 = find("sqlite", 100), find("c1", 100)
    if c16 and c1:
        ratio = c1.wall / c16.wall
        print(
            f"  concurrency 16 vs 1, one process (SQLite), 100 ms a turn: c1 wall {c1.wall:.2f} s "
            f"/ c16 wall {c16.wall:.2f} s = {ratio:.1f}x (target >= {TARGET_CONCURRENCY:g}x): "
            f"{verdict(ratio >= TARGET_CONCURRENCY)}; CPU ceiling c1 wall / c16 process CPU = "
            f"{c1.wall / c16.proc_cpu:.1f}x"
        )
    else:
        print("  concurrency 16 vs 1 at 100 ms a turn: not measured (needs sqlite and c1 at 100)")
    lite = find("sqlite", 0)
    if lite and pg1:
        ratio = pg1.machine_cpu / pg1.tickets / (lite.proc_cpu / lite.tickets)
        print(
            "  PostgreSQL CPU per ticket vs SQLite's, 0 ms a turn: pg1 (the worker process + every "
            f"postgres process) {pg1.per(pg1.machine_cpu):.1f} ms vs sqlite in-process (this "
            f"process) {lite.per(lite.proc_cpu):.1f} ms = {ratio:.2f}x "
            f"(target <= {TARGET_PG_CPU}x): {verdict(ratio <= TARGET_PG_CPU)}"
        )
        if pg2:
            ratio2 = pg2.machine_cpu / pg2.tickets / (lite.proc_cpu / lite.tickets)
            print(
                f"    (pg2, both workers + postgres: {pg2.per(pg2.machine_cpu):.1f} ms = "
                f"{ratio2:.2f}x; MCP servers are left out of both sides)"
            )
    else:
        print("  PostgreSQL CPU vs SQLite's at 0 ms a turn: not measured (needs sqlite and pg1)")


def print_phases(columns: list[tuple[Run, pstats.Stats]]) -> None:
    """Per configuration: each phase's ms per ticket, as its share of the profiled CPU times
    the unprofiled run's `proc` CPU per ticket."""
    shares = [Attribution(stats).shares() for _, stats in columns]
    # The phases of bench/harness.py (shared with bench/cpu_profile.py); the ones no column
    # spent anything in are left out.
    names = [p for p in PHASE_NAMES if p == OTHER or any(share.get(p) for share in shares)]
    width = max(len(n) for n in names)
    print(
        "\nwhere the CPU of the process(es) running the graph goes, ms per ticket (cProfile on "
        "the main thread's CPU clock over the queue; each phase's share of the profiled time "
        "times the unprofiled `proc` CPU per ticket; psycopg, sqlite3, asyncio and other "
        "helpers count for the phase that called them):"
    )
    print(f"  {'':<{width}}" + "".join(f" {run.label:>26}" for run, _ in columns))
    for name in names:
        cells = "".join(
            f" {run.per(run.proc_cpu) * part:>20.1f} ({100 * part:2.0f}%)"
            for (run, _), share in zip(columns, shares, strict=True)
            for part in [share.get(name, 0.0)]
        )
        print(f"  {name:<{width}}{cells}")
    total = "".join(f" {run.per(run.proc_cpu):>20.1f} (100%)" for run, _ in columns)
    print(f"  {'total (unprofiled proc)':<{width}}{total}")


def print_top(label: str, stats: pstats.Stats, top: int) -> None:
    out = io.StringIO()
    stats.stream = out  # type: ignore[attr-defined]
    stats.sort_stats("tottime").print_stats(top)
    body = out.getvalue()
    body = body[body.find("   ncalls") :] if "   ncalls" in body else body
    print(f"\n--- {label}: top {top} functions by own CPU (profiled) ---\n{body.rstrip()}")


# --- main -------------------------------------------------------------------------------------


async def profile_pass(args: argparse.Namespace, runs: list[Run]) -> None:
    """`--profile`: each configuration once more at the first delay, profiled; the phase
    table scales each phase's share by the unprofiled run's CPU per ticket."""
    delay = args.delays[0]
    columns: list[tuple[Run, pstats.Stats]] = []
    for config in args.configs:
        plain = next((r for r in runs if r.config == config and r.delay_ms == delay), None)
        if plain is None:
            continue
        print(f"profiling {plain.label} at {model_name(delay)} ...", flush=True)
        if config == "sqlite":
            profile = cProfile.Profile(time.thread_time_ns, 1e-9)  # CPU, not time waiting
            await run_in_process(config, args.tickets, delay, args.concurrency, profile)
            stats = pstats.Stats(profile)
        else:
            _, paths = await run_fleet(
                config,
                args.tickets,
                delay,
                args.concurrency,
                int(config[-1]),
                args.server,
                profile=True,
            )
            found = [str(p) for p in paths if p.exists()]
            if not found:
                print(f"  no profile from the workers of {plain.label}")
                continue
            stats = pstats.Stats(*found)
        columns.append((plain, stats))
    if columns:
        print_phases(columns)
        for run, stats in columns:
            print_top(f"{run.label}, {model_name(run.delay_ms)}", stats, args.top)


async def main(args: argparse.Namespace) -> None:
    print(
        f"fleet bench: {args.tickets} tickets ({BLACK_FRIDAY.name} repeated), configs "
        f"{','.join(args.configs)}, model delays {args.delays} ms, concurrency "
        f"{args.concurrency}, {os.cpu_count()} CPUs, load average {load_average()} at start"
    )
    print(f"PostgreSQL server {args.server}; run data in {WORK}; {freeze_note(args.no_freeze)}")
    print(HEADER)
    runs: list[Run] = []

    def done(run: Run) -> None:
        runs.append(run)
        print(row(run))
        print(detail(run), flush=True)

    for delay in args.delays:
        for config in args.configs:
            if config == "sqlite":
                done(await run_in_process("sqlite", args.tickets, delay, args.concurrency))
            elif config in ("pg1", "pg2"):
                run, _ = await run_fleet(
                    config, args.tickets, delay, args.concurrency, int(config[-1]), args.server
                )
                done(run)
    if "c1" in args.configs:
        done(await run_in_process("c1", args.tickets, 100, 1))
    targets(runs)
    if args.profile:
        await profile_pass(args, runs)
    print(f"\nload average {load_average()} at end")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="200 tickets: SQLite in one process vs 1 and 2 `muster worker` on PostgreSQL"
    )
    parser.add_argument("--tickets", type=int, default=200, help="tickets (default 200)")
    parser.add_argument(
        "--quick", action="store_true", help="40 tickets, 0 ms a turn, no c1 run (a smoke run)"
    )
    parser.add_argument(
        "--configs",
        default="sqlite,pg1,pg2,c1",
        help="which of sqlite, pg1, pg2, c1 to run (default all; c1 runs at 100 ms a turn)",
    )
    parser.add_argument(
        "--delays", default="0,100", help="model ms a turn, comma-separated (default 0,100)"
    )
    parser.add_argument(
        "--concurrency", type=int, default=16, help="tickets in flight per process (default 16)"
    )
    parser.add_argument("--server", default=DEFAULT_SERVER, help="PostgreSQL server URL")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="then run sqlite/pg1/pg2 once more under cProfile: where their CPU goes",
    )
    parser.add_argument("--top", type=int, default=15, help="functions shown per profile")
    parser.add_argument("--keep", action="store_true", help="keep the run data folder")
    add_freeze_flag(parser)
    args = parser.parse_args()
    args.configs = [c for c in args.configs.split(",") if c]
    unknown = set(args.configs) - {"sqlite", "pg1", "pg2", "c1"}
    if unknown:
        parser.error(f"unknown configs {sorted(unknown)}")
    args.delays = [int(d) for d in args.delays.split(",") if d]
    if args.quick:
        args.tickets = 40
        args.delays = [0]
        args.configs = [c for c in args.configs if c != "c1"]
    return args


def cleanup(server: str, keep: bool) -> None:
    async def drop_all() -> None:
        for name in list(CREATED):
            await drop_database(server, name)

    if CREATED:
        asyncio.run(drop_all())
    if keep:
        print(f"run data kept in {WORK}")
    else:
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    arguments = parse_args()
    try:
        asyncio.run(main(arguments))
    finally:
        cleanup(arguments.server, arguments.keep)
