"""Chaos benchmark: SIGKILL `muster run`, `muster approve` and `muster batch` at seeded random
points, resume every thread to a terminal state, and count what went wrong.

Run: `.venv/bin/python bench/chaos.py --trials 30 --seed 7` (a benchmark, never a test;
`tests/test_chaos.py` runs three trials of it in `make test`).

Each trial has a temporary folder of its own (orders database, checkpoint database, call log,
traces) and picks one command kind, in turn:

  run      `muster run "Order #12345 was charged twice, please refund the duplicate"`
  approve  `muster approve THREAD --by alice` on a thread paused for that refund's approval
  batch    `muster batch` on six Black Friday tickets (three propose refunds, two of them
           for the same duplicate charge of order 12345)

The command runs as a subprocess with the offline model at 50 ms a turn and is SIGKILLed a
seeded random delay after an observed event (its first output line, after its servers are
up; for `batch`, its first trace line), so the kill lands inside the work, not in imports.
Then each thread is driven to a terminal state with the ordinary commands (`muster batch
--resume`, `muster resume`, `muster run --thread` if the thread was never saved, `muster
approve --by alice` where a refund waits) and checked:

  duplicated reports  `(packet_id, attempt)` repeated in a thread's final `reports`
  re-run workers      a packet whose report was in the checkpoint store at the kill, dispatched
                      again after it (from the trace); and, counted apart, a packet the trace
                      had called finished before the kill but whose write had not landed (the
                      trace line now follows the write, checkpoints/announce.py: both are 0)
  refund rows         new rows in the orders database's `refunds` table; over-refunds are rows
                      beyond one per expected order (or any for another order, or more than
                      the duplicate charge), missing ones an expected order with none
  orphans             server processes of the killed command (its children, and the pids in
                      its call log lines) still alive 1 s after the kill
  leftover dirs       `/tmp/muster-hub-<killed pid>-*` still there after the resume and the
                      next hub start's reaping step (`reap_dead_log_dirs`)
  busy errors         "being advanced by another process" after a kill: the dead owner's thread
                      lease must be taken over, never block the resume
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by file (tests/test_chaos.py)
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # bench/, beside this script: puts the project first on sys.path

from checkpoints.threads import describe_threads, thread_config
from graph.app.batch_tickets import batch_thread_id
from graph.app.runtime import open_store
from graph.trace import read_trace, trace_path
from workers.contracts import Report
from workers.hub.log_dirs import reap_dead_log_dirs

PROJECT_ROOT = Path(__file__).resolve().parent.parent
Kind = Literal["run", "approve", "batch"]
KINDS: tuple[Kind, ...] = ("run", "approve", "batch")

MODEL = "offline:50"
"""The offline model, 50 ms a turn: a run's work takes a few hundred ms, room for a kill."""
REFUND_TICKET = "Order #12345 was charged twice, please refund the duplicate"
QUEUE_IDS = ("bf-01", "bf-03", "bf-05", "bf-06", "bf-07", "bf-13")
"""The batch's tickets from examples/black_friday.jsonl: bf-01 and bf-05 both propose the
refund of order 12345's duplicate charge, bf-06 that of order 12366."""
EXPECTED_REFUNDS: dict[Kind, dict[str, int]] = {
    "run": {"12345": 12900},
    "approve": {"12345": 12900},
    "batch": {"12345": 12900, "12366": 3299},
}
"""Per kind, the orders that must end with exactly one new refund row, and its amount."""
KILL_WINDOW_S: dict[Kind, float] = {"run": 0.6, "approve": 0.25, "batch": 0.6}
"""The kill delay is drawn from [0, window) after the event; each window is about the time
from the event to the command's exit on a quiet machine (a later kill finds it gone)."""
APPROVER = "alice"
ORPHAN_GRACE_S = 1.0
"""A killed command's servers must be gone this long after the kill (they read EOF)."""
SAFETY_TIMEOUT_S = 300.0
"""Only a hang hits this: a command, or the wait for an event."""
MAX_ROUNDS = 6
"""Rounds of resume/approve per trial before a thread counts as not completed."""
BUSY = "being advanced by another process"
HUB_DIR_PREFIX = "muster-hub-"

T = TypeVar("T")


class ChaosError(RuntimeError):
    """A trial could not be set up or driven (a command failed where it must not)."""


@dataclass
class Sandbox:
    """One trial's run data, and the environment every command of the trial runs with."""

    root: Path

    @property
    def orders_db(self) -> Path:
        return self.root / "orders.sqlite"

    @property
    def checkpoint_db(self) -> Path:
        return self.root / "checkpoints.sqlite"

    @property
    def call_log(self) -> Path:
        return self.root / "calls.jsonl"

    @property
    def trace_dir(self) -> Path:
        return self.root / "traces"

    @property
    def tickets(self) -> Path:
        return self.root / "queue.jsonl"

    def env(self) -> dict[str, str]:
        """The environment of every command (servers and stores point into the sandbox)."""
        return {
            **os.environ,
            **harness.store_env(self.root, db=self.checkpoint_db),
            "MUSTER_APPROVAL_SECRET": f"chaos-{self.root.name}",
            "PYTHONUNBUFFERED": "1",  # the first output line is the kill clock's event
        }

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "graph.app.cli", *args]

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run one `muster` command to its end."""
        return subprocess.run(
            self.argv(*args),
            capture_output=True,
            text=True,
            cwd=PROJECT_ROOT,
            env=self.env(),
            timeout=SAFETY_TIMEOUT_S,
        )

    def start(self, *args: str) -> subprocess.Popen[str]:
        """Start one `muster` command (to be killed)."""
        return subprocess.Popen(
            self.argv(*args),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=PROJECT_ROOT,
            env=self.env(),
        )


def wait_for(condition: Callable[[], T], what: str, *, timeout_s: float = SAFETY_TIMEOUT_S) -> T:
    """Poll `condition` until it is truthy and return it; a `ChaosError` after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise ChaosError(f"no sign of {what} after {timeout_s:g}s")
        time.sleep(0.005)
    return value


# --- processes ------------------------------------------------------------------------------


def alive(pid: int) -> bool:
    """True if `pid` runs (a zombie is dead, only not yet reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def call_log_pids(call_log: Path, *, after_line: int) -> set[int]:
    """The server pids of the call log's lines past `after_line` (a torn last line skipped)."""
    if not call_log.exists():
        return set()
    pids = set()
    for line in call_log.read_text(encoding="utf-8").splitlines()[after_line:]:
        try:
            pids.add(int(json.loads(line)["pid"]))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            continue
    return pids


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def trace_lines(trace_dir: Path) -> int:
    """Trace lines written so far, over every thread's file."""
    return sum(line_count(p) for p in trace_dir.glob("*.jsonl")) if trace_dir.is_dir() else 0


@dataclass
class Kill:
    """What happened around one SIGKILL."""

    pid: int
    delay_s: float
    landed: bool
    """The command was still running at the kill (else it had finished first)."""
    orphans: list[int]
    output: str


def kill_after_event(
    sandbox: Sandbox, args: list[str], *, event: Literal["output", "trace"], delay_s: float
) -> Kill:
    """Start `muster *args`, wait for the event (its first output line, or its first trace
    line), wait `delay_s` more, SIGKILL it and check its servers exit within ORPHAN_GRACE_S
    (any left are killed: they are this script's descendants)."""
    calls_before = line_count(sandbox.call_log)
    traces_before = trace_lines(sandbox.trace_dir)
    proc = sandbox.start(*args)
    first_line = threading.Event()
    output: list[str] = []

    def drain() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            output.append(line)
            first_line.set()
        first_line.set()  # EOF: the waiter sees it and finds the process gone

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    servers: list[int] = []
    try:
        if event == "output":
            wait_for(first_line.is_set, f"the first output line of muster {args[0]}")
        else:
            wait_for(
                lambda: trace_lines(sandbox.trace_dir) > traces_before or proc.poll() is not None,
                f"the first trace line of muster {args[0]}",
            )
        if proc.poll() is not None and not output:
            raise ChaosError(f"muster {args[0]} exited (rc={proc.returncode}) before its event")
        time.sleep(delay_s)  # the seeded kill point, measured from the event
        landed = proc.poll() is None
        servers = harness.children(proc.pid) if landed else []  # before the kill: then reparented
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:  # it finished just now, between the poll and the kill
            landed = False
        proc.wait(timeout=SAFETY_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            servers = servers or harness.children(proc.pid)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=SAFETY_TIMEOUT_S)
    reader.join(timeout=SAFETY_TIMEOUT_S)
    if proc.stdout is not None:
        proc.stdout.close()
    watched = set(servers) | call_log_pids(sandbox.call_log, after_line=calls_before)
    deadline = time.monotonic() + ORPHAN_GRACE_S
    while any(alive(p) for p in watched) and time.monotonic() < deadline:
        time.sleep(0.01)
    orphans = sorted(p for p in watched if alive(p))
    for pid in orphans:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return Kill(proc.pid, delay_s, landed, orphans, "".join(output))


# --- the store, the trace and the orders database --------------------------------------------

PacketKey = tuple[str, str]
"""(packet id, packet fingerprint): one dispatch of one packet."""


def saved_packets(db: Path, threads: Iterable[str]) -> dict[str, set[str]]:
    """Per thread, the packet ids with a report in the checkpoint store now (the latest
    checkpoint, or a pending write of the superstep in flight)."""

    async def read() -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        async with open_store(db) as (_, saver):
            for thread in threads:
                saved = await saver.aget_tuple(thread_config(thread))
                values: list[Any] = []
                if saved is not None:
                    values.append(saved.checkpoint["channel_values"].get("reports"))
                    values += [v for _, ch, v in saved.pending_writes or [] if ch == "reports"]
                found[thread] = {
                    r.packet_id
                    for v in values
                    if isinstance(v, list)
                    for r in v
                    if isinstance(r, Report)
                }
        return found

    return asyncio.run(read()) if db.exists() else {t: set() for t in threads}


def dispatches(trace_dir: Path, thread: str) -> list[dict[str, Any]]:
    """The thread's finished `dispatch` node events, oldest first."""
    return [
        e
        for e in read_trace(trace_path(thread, trace_dir))
        if e.get("event") == "node" and e.get("node") == "dispatch" and e.get("outcome")
    ]


@dataclass
class ThreadState:
    status: str
    waiting_on: list[str]
    reports: list[Report]


def read_threads(db: Path) -> dict[str, ThreadState]:
    """Every thread in the store, with its status and final reports."""
    if not db.exists():
        return {}

    async def read() -> dict[str, ThreadState]:
        async with open_store(db) as (graph, saver):
            infos = await describe_threads(graph, saver)
            states = {}
            for info in infos:
                snapshot = await graph.aget_state(thread_config(info.thread_id))
                reports = list(snapshot.values.get("reports") or [])
                states[info.thread_id] = ThreadState(info.status, info.waiting_on, reports)
            return states

    return asyncio.run(read())


def new_refunds(orders_db: Path) -> list[tuple[str, str | None, int]]:
    """(order id, charge id, cents) of every refund not in the seed."""
    if not orders_db.exists():
        return []
    with sqlite3.connect(orders_db) as conn:
        rows = conn.execute(
            "SELECT order_id, charge_id, amount_cents FROM refunds WHERE requested_by != 'seed'"
        ).fetchall()
    return [(str(o), c, int(a)) for o, c, a in rows]


# --- one trial -------------------------------------------------------------------------------


@dataclass
class Trial:
    """The outcome of one trial."""

    index: int
    kind: Kind
    delay_s: float = 0.0
    landed: bool = False
    threads: int = 0
    completed: bool = False
    duplicated_reports: int = 0
    rerun_workers: int = 0
    unsaved_reruns: int = 0
    refund_rows: int = 0
    over_refunds: int = 0
    missing_refunds: int = 0
    orphans: int = 0
    leftover_dirs: int = 0
    busy_errors: int = 0
    problems: list[str] = field(default_factory=list)

    def figures(self) -> dict[str, int]:
        """The counts a trial can get wrong, by name."""
        return {
            "duplicated reports": self.duplicated_reports,
            "re-run workers": self.rerun_workers,
            "unsaved re-runs": self.unsaved_reruns,
            "refund rows": self.refund_rows,
            "over-refunds": self.over_refunds,
            "missing refunds": self.missing_refunds,
            "orphans": self.orphans,
            "leftover dirs": self.leftover_dirs,
            "lease busy errors": self.busy_errors,
        }

    @property
    def clean(self) -> bool:
        """Everything held: completed, nothing doubled or re-run, each refund once."""
        return self.completed and not (
            self.duplicated_reports
            or self.rerun_workers
            or self.unsaved_reruns
            or self.over_refunds
            or self.missing_refunds
            or self.orphans
            or self.leftover_dirs
            or self.busy_errors
            or self.problems
        )


def write_queue(path: Path) -> None:
    wanted = set(QUEUE_IDS)
    lines = (PROJECT_ROOT / "examples" / "black_friday.jsonl").read_text().splitlines()
    picked = [line for line in lines if line.strip() and json.loads(line)["id"] in wanted]
    path.write_text("\n".join(picked) + "\n", encoding="utf-8")


def check(result: subprocess.CompletedProcess[str], trial: Trial, what: str) -> None:
    """Note a command that errored (exit 1 or 2) or met a lease held by a dead owner."""
    if BUSY in result.stderr:
        trial.busy_errors += 1
    if result.returncode in (1, 2) or result.returncode < 0:
        last = (result.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        trial.problems.append(f"{what}: exit {result.returncode}: {last}")


def drive_to_terminal(sandbox: Sandbox, trial: Trial, threads: dict[str, str]) -> None:
    """Resume, re-run or approve until every thread is done or waits on a human for
    something other than an approval. `threads` maps thread id to its ticket text."""
    db = str(sandbox.checkpoint_db)
    common = ("--db", db, "--model", MODEL)
    for round_no in range(MAX_ROUNDS):
        if trial.kind == "batch" and round_no == 0:
            check(sandbox.cli("batch", str(sandbox.tickets), "--resume", *common), trial, "batch")
        states = read_threads(sandbox.checkpoint_db)
        pending = {
            t: states.get(t)
            for t in threads
            if t not in states
            or not (
                states[t].status == "done"
                or (states[t].status == "interrupted" and "approval" not in states[t].waiting_on)
            )
        }
        if not pending:
            trial.completed = True
            return

        def advance(thread: str, state: ThreadState | None) -> subprocess.CompletedProcess[str]:
            if state is None:
                # Killed before the thread's first checkpoint: run it again under its id.
                return sandbox.cli("run", threads[thread], "--thread", thread, *common)
            # A thread saved with only its input ("new") resumes like any other.
            if state.status == "interrupted":
                return sandbox.cli("approve", thread, "--by", APPROVER, *common)
            return sandbox.cli("resume", thread, *common)

        # The threads at once: two approvals of one order's refund race, as two people might.
        with ThreadPoolExecutor(max_workers=len(pending)) as pool:
            done = pool.map(lambda item: (item[0], advance(*item)), pending.items())
            for thread, result in list(done):
                check(result, trial, f"round {round_no + 1} {thread}")
    trial.problems.append(f"threads not terminal after {MAX_ROUNDS} rounds")


def run_trial(index: int, kind: Kind, delay_s: float, root: Path) -> Trial:
    """One trial in the folder `root`: set up, kill `delay_s` after the event, drive every
    thread to the end, check."""
    trial = Trial(index=index, kind=kind, delay_s=delay_s)
    sandbox = Sandbox(root)
    db = str(sandbox.checkpoint_db)
    common = ("--db", db, "--model", MODEL)
    if kind == "batch":
        write_queue(sandbox.tickets)
        tickets = [json.loads(line) for line in sandbox.tickets.read_text().splitlines()]
        threads = {batch_thread_id(sandbox.tickets, t["id"]): t["request"] for t in tickets}
        args = ["batch", str(sandbox.tickets), *common]
        event: Literal["output", "trace"] = "trace"  # its first line comes before its servers
    else:
        thread = f"chaos-{index}"
        threads = {thread: REFUND_TICKET}
        if kind == "run":
            args = ["run", REFUND_TICKET, "--thread", thread, *common]
        else:
            paused = sandbox.cli("run", REFUND_TICKET, "--thread", thread, *common)
            if paused.returncode != 5:
                raise ChaosError(f"setup run: exit {paused.returncode}, expected 5 (waiting)")
            args = ["approve", thread, "--by", APPROVER, *common]
        event = "output"
    trial.threads = len(threads)

    kill = kill_after_event(sandbox, args, event=event, delay_s=trial.delay_s)
    trial.landed = kill.landed
    trial.orphans = len(kill.orphans)
    saved_at_kill = saved_packets(sandbox.checkpoint_db, threads)
    seen_at_kill = {
        t: {(e["packet_id"], e["packet"]) for e in dispatches(sandbox.trace_dir, t)}
        for t in threads
    }
    runs_at_kill = {
        t: {e.get("run_id") for e in read_trace(trace_path(t, sandbox.trace_dir))} for t in threads
    }

    drive_to_terminal(sandbox, trial, threads)

    states = read_threads(sandbox.checkpoint_db)
    for thread in threads:
        reports = states[thread].reports if thread in states else []
        keys = Counter((r.packet_id, r.attempt) for r in reports)
        trial.duplicated_reports += sum(n - 1 for n in keys.values() if n > 1)
        again: Counter[PacketKey] = Counter(
            (e["packet_id"], e["packet"])
            for e in dispatches(sandbox.trace_dir, thread)
            if e.get("run_id") not in runs_at_kill[thread]
        )
        for (packet_id, fingerprint), _ in again.items():
            if packet_id in saved_at_kill[thread]:
                trial.rerun_workers += 1
            elif (packet_id, fingerprint) in seen_at_kill[thread]:
                trial.unsaved_reruns += 1

    refunds = new_refunds(sandbox.orders_db)
    expected = EXPECTED_REFUNDS[kind]
    trial.refund_rows = len(refunds)
    per_order = Counter(order for order, _, _ in refunds)
    per_charge = Counter(charge for _, charge, _ in refunds)
    trial.over_refunds = sum(n - (1 if order in expected else 0) for order, n in per_order.items())
    trial.over_refunds += sum(n - 1 for n in per_charge.values() if n > 1)
    trial.over_refunds += sum(1 for order, _, cents in refunds if cents > expected.get(order, 0))
    trial.missing_refunds = sum(1 for order in expected if per_order[order] == 0)
    # The next hub start reaps a dead hub's folder; the resume may not have started one (an
    # approval already decided starts no servers), so run that same start-up step here.
    reap_dead_log_dirs()
    trial.leftover_dirs = len(
        list(Path(tempfile.gettempdir()).glob(f"{HUB_DIR_PREFIX}{kill.pid}-*"))
    )
    return trial


def run_trials(
    *,
    trials: int,
    seed: int,
    kinds: Iterable[Kind] = KINDS,
    jobs: int = 1,
    on_trial: Callable[[Trial], None] | None = None,
    keep: Path | None = None,
) -> list[Trial]:
    """`trials` seeded trials, the kinds in turn, each in a temporary folder of its own;
    `jobs` of them at once (the kinds and kill delays are drawn first, so a seed gives the
    same plan however many run at once)."""
    rng = random.Random(seed)
    order = list(kinds)
    plan = [
        (i, order[i % len(order)], round(rng.uniform(0.0, KILL_WINDOW_S[order[i % len(order)]]), 3))
        for i in range(trials)
    ]

    def one(item: tuple[int, Kind, float]) -> Trial:
        with tempfile.TemporaryDirectory(prefix="muster-chaos-") as tmp:
            trial = run_trial(*item, Path(tmp))
            if keep is not None and not trial.clean:  # its databases and traces, to look at
                shutil.copytree(tmp, keep / f"trial-{trial.index}", dirs_exist_ok=True)
        if on_trial is not None:
            on_trial(trial)
        return trial

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, plan))


# --- the report ------------------------------------------------------------------------------

COLUMNS = (
    ("trials", lambda ts: len(ts)),
    ("killed mid-run", lambda ts: sum(t.landed for t in ts)),
    ("threads", lambda ts: sum(t.threads for t in ts)),
    ("completed", lambda ts: sum(t.completed for t in ts)),
    ("duplicated reports", lambda ts: sum(t.duplicated_reports for t in ts)),
    ("re-run workers", lambda ts: sum(t.rerun_workers for t in ts)),
    ("re-run, traced finished", lambda ts: sum(t.unsaved_reruns for t in ts)),
    ("refund rows", lambda ts: sum(t.refund_rows for t in ts)),
    ("expected refund rows", lambda ts: sum(len(EXPECTED_REFUNDS[t.kind]) for t in ts)),
    ("over-refunds", lambda ts: sum(t.over_refunds for t in ts)),
    ("missing refunds", lambda ts: sum(t.missing_refunds for t in ts)),
    ("orphans", lambda ts: sum(t.orphans for t in ts)),
    ("leftover dirs", lambda ts: sum(t.leftover_dirs for t in ts)),
    ("lease busy errors", lambda ts: sum(t.busy_errors for t in ts)),
)


def table(results: list[Trial]) -> str:
    """The summary: one row per figure, a column per kind and the total."""
    kinds = [k for k in KINDS if any(t.kind == k for t in results)]
    groups = [[t for t in results if t.kind == k] for k in kinds] + [results]
    head = f"{'':26}" + "".join(f"{name:>9}" for name in [*kinds, "total"])
    rows = [head]
    for name, figure in COLUMNS:
        rows.append(f"{name:26}" + "".join(f"{figure(g):>9}" for g in groups))
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--kind", choices=KINDS, action="append", help="only these kinds")
    parser.add_argument("--jobs", type=int, default=1, help="trials at once (default 1)")
    parser.add_argument("--verbose", action="store_true", help="one line per trial")
    parser.add_argument(
        "--keep", type=Path, help="copy each unclean trial's folder here (databases, traces)"
    )
    args = parser.parse_args(argv)
    started = time.monotonic()

    def show(trial: Trial) -> None:
        if args.verbose or not trial.clean:
            print(
                f"trial {trial.index:>2} {trial.kind:7} kill +{trial.delay_s:.3f}s "
                f"{'mid-run' if trial.landed else 'after exit'}: "
                f"{'clean' if trial.clean else 'NOT CLEAN'}"
                + "".join(
                    f", {name} {value}"
                    for name, value in trial.figures().items()
                    if value and name != "refund rows"
                )
                + "".join(f"\n    {p}" for p in trial.problems),
                flush=True,
            )

    results = run_trials(
        trials=args.trials,
        seed=args.seed,
        kinds=args.kind or KINDS,
        jobs=args.jobs,
        on_trial=show,
        keep=args.keep,
    )
    print(
        f"\nchaos: {args.trials} trials, seed {args.seed}, {args.jobs} at once, model {MODEL}, "
        f"{time.monotonic() - started:.0f}s\n"
    )
    print(table(results))
    return 0 if all(t.clean for t in results) else 1


if __name__ == "__main__":
    sys.exit(main())
