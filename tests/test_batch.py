"""`muster batch`: a queue of tickets, one thread each, over one set of MCP sessions.

The queue tests run the real CLI (`python -m graph.app.cli batch …`) as a subprocess with real
stdio MCP servers and a real SQLite checkpointer, and check the servers' own call log. The
crash test SIGKILLs a batch mid-queue and finishes it with `--resume`: every ticket ends done
exactly once, and no finished ticket's tools are called again.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import re
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from checkpoints.threads import ThreadStatus, status_of, thread_config, thread_ids, waiting_on
from graph.app.batch import cmd_batch
from graph.app.batch_outcomes import TicketResult, outcome_of
from graph.app.batch_queue import plan_batch
from graph.app.batch_report import BatchProgress
from graph.app.batch_tickets import Ticket, TicketsFileError, batch_thread_id, load_tickets
from graph.app.runtime import open_store
from graph.trace import read_trace, trace_path
from servers.call_log import count_calls, read_calls
from tests.conftest import (
    HANG_TIMEOUT_S,
    PROJECT_ROOT,
    MusterEnv,
    saved_branch_workers,
    wait_until,
)
from workers.contracts import Answer
from workers.errors import ConfigError

QUEUE = [
    ("dup-charge", "Order #12333 was charged twice. Was the duplicate put right?"),
    ("ambiguous", "I want my money back for my order"),
    ("refund", "Order #12366 was charged twice, please refund the duplicate charge."),
    ("gift-card", "Do gift cards expire?"),
    ("furious", "I am furious, order #12331 is late. Get me a manager."),
    ("cancel", "Can I cancel order #12321? It has shipped, I think."),
]
"""Six tickets: three complete, one clarification, one approval, one escalation."""
EXPECTED_STATUS: dict[str, ThreadStatus] = {
    "dup-charge": "done",
    "ambiguous": "interrupted",
    "refund": "interrupted",
    "gift-card": "done",
    "furious": "done",
    "cancel": "done",
}
EXPECTED_OUTCOME = {
    "dup-charge": "complete",
    "ambiguous": "needs_human",
    "refund": "needs_human",
    "gift-card": "complete",
    "furious": "needs_human",
    "cancel": "complete",
}
BILLING_ORDERS = {"dup-charge": "12333", "refund": "12366", "furious": "12331", "cancel": "12321"}
"""Tickets that name an order: billing looks each up exactly once."""

CRASH_QUEUE = [
    (f"late-{n}", f"Where is order #{n}? The delivery is late.") for n in range(12320, 12328)
]
"""Eight tickets, each about its own order, each with a (slow) policy lookup."""
SLOW_POLICY_S = 6.0
"""Policy answers this late in the killed run, so billing finishes well before policy: the
window in which the queue is killed, wide enough for a loaded machine. The first tickets must
finish before the kill, so it stays below the hub's 20 s call timeout."""


def write_tickets(path: Path, tickets: list[tuple[str, str]]) -> Path:
    path.write_text("".join(json.dumps({"id": i, "request": r}) + "\n" for i, r in tickets))
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def read_threads(db: Path, ids: list[str]) -> tuple[list[str], dict[str, Any]]:
    """Every thread id in the store, and each given thread's latest snapshot."""

    async def read() -> tuple[list[str], dict[str, Any]]:
        async with open_store(db) as (graph, saver):
            snapshots = {t: await graph.aget_state(thread_config(t)) for t in ids}
            return await thread_ids(saver), snapshots

    return asyncio.run(read())


def find_order_calls(call_log: Path) -> Counter[str]:
    """find_order calls per order id, as the orders server logged them."""
    return Counter(
        str(c["args"]["order_id"]).lstrip("#")
        for c in read_calls(call_log)
        if c["server"] == "orders" and c["tool"] == "find_order"
    )


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("muster: error: "), lines
    return lines[0]


# --- the queue, through the real CLI -------------------------------------------------------


@pytest.mark.slow
@pytest.mark.integration
def test_batch_runs_each_ticket_on_its_own_thread(muster_env: MusterEnv) -> None:
    tickets = write_tickets(muster_env.root / "queue.jsonl", QUEUE)
    db = muster_env.checkpoint_db
    result = muster_env.cli("batch", str(tickets), "--concurrency", "3", "--db", str(db))
    assert result.returncode == 3, result.stderr  # needs_human, nothing failed
    out = result.stdout

    # Piped: one plain line per finished ticket, then the summary table.
    finished = re.findall(r"^\[\s*(\d+)/6\] (\S+) (\S+)", out, re.M)
    assert sorted(int(n) for n, _, _ in finished) == [1, 2, 3, 4, 5, 6]
    assert {tid: outcome for _, tid, outcome in finished} == EXPECTED_OUTCOME
    table = dict(
        re.findall(r"^  (complete|partial|needs_human|failed) +(\d+) +\$\d+\.\d{4}$", out, re.M)
    )
    assert table == {"complete": "3", "partial": "0", "needs_human": "3", "failed": "0"}
    assert re.search(r"^  billing +ambiguous +1$", out, re.M), out

    # One answers line per ticket, in ticket order, next to the tickets file.
    answers = read_jsonl(muster_env.root / "queue.answers.jsonl")
    assert [a["id"] for a in answers] == [i for i, _ in QUEUE]
    by_id = {a["id"]: a for a in answers}
    for ticket_id, record in by_id.items():
        assert record["thread_id"] == f"batch-queue-{ticket_id}"
        assert record["outcome"] == EXPECTED_OUTCOME[ticket_id]
    assert by_id["ambiguous"]["waiting_for"] == ["clarification"]
    assert by_id["refund"]["waiting_for"] == ["approval"]
    assert by_id["refund"]["status"] == "waiting" and by_id["refund"]["answer_text"] is None
    assert by_id["furious"]["status"] == "complete" and by_id["furious"]["needs_human"] is True
    assert by_id["dup-charge"]["status"] == "complete"
    assert "12333" in by_id["dup-charge"]["answer_text"]

    # Each ticket has its own thread, in the state its outcome says.
    ids = [batch_thread_id(tickets, i) for i, _ in QUEUE]
    stored, snapshots = read_threads(db, ids)
    assert sorted(stored) == sorted(ids)
    for (ticket_id, request), thread in zip(QUEUE, ids, strict=True):
        snapshot = snapshots[thread]
        assert status_of(snapshot) == EXPECTED_STATUS[ticket_id], ticket_id
        assert snapshot.values["request"] == request  # clean context: its own request only
    assert waiting_on(snapshots[ids[1]]) == ["clarification"]
    assert waiting_on(snapshots[ids[2]]) == ["approval"]

    # The servers saw one order lookup per billing ticket, and no refund ran.
    assert count_calls(muster_env.call_log, server="orders", tool="find_order") == 4
    assert find_order_calls(muster_env.call_log) == Counter(BILLING_ORDERS.values())
    assert count_calls(muster_env.call_log, server="orders", tool="issue_refund") == 0

    # --resume on a finished batch runs nothing again and keeps one line per ticket.
    calls_before = len(read_calls(muster_env.call_log))
    again = muster_env.cli("batch", str(tickets), "--resume", "--db", str(db), "--json")
    assert again.returncode == 3, again.stderr
    summary = json.loads(again.stdout)
    assert (summary["ran"], summary["resumed"], summary["skipped"]) == (0, 0, 6)
    assert summary["counts"] == {"complete": 3, "partial": 0, "needs_human": 3, "failed": 0}
    assert len(read_calls(muster_env.call_log)) == calls_before
    assert [a["id"] for a in read_jsonl(muster_env.root / "queue.answers.jsonl")] == [
        i for i, _ in QUEUE
    ]


# --- crash and resume, with a real kill ------------------------------------------------------


def _ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def _children(pid: int) -> list[int]:
    return [
        int(e.name)
        for e in Path("/proc").iterdir()
        if e.name.isdigit() and _ppid(int(e.name)) == pid
    ]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _kill_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _finished_lines(path: Path) -> list[dict[str, Any]]:
    """Whole lines appended so far (a torn last line is ignored)."""
    if not path.exists():
        return []
    records = []
    for line in path.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.slow
@pytest.mark.integration
def test_sigkill_mid_queue_then_resume_finishes_each_ticket_once(muster_env: MusterEnv) -> None:
    tickets = write_tickets(muster_env.root / "late.jsonl", CRASH_QUEUE)
    out = muster_env.root / "late-answers.jsonl"
    db = muster_env.checkpoint_db
    ids = [i for i, _ in CRASH_QUEUE]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "graph.app.cli",
            "batch",
            str(tickets),
            "--concurrency",
            "2",
            "--db",
            str(db),
            "--out",
            str(out),
        ],
        cwd=PROJECT_ROOT,
        env={
            **os.environ,
            "MUSTER_POLICY_MODE": "slow",
            "MUSTER_POLICY_SLOW_S": str(SLOW_POLICY_S),
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    servers: list[int] = []
    try:
        # Kill once two tickets are finished and another is mid-way: its billing branch is
        # done (and checkpointed) while its slow policy call is still running.
        billing_done = wait_until(
            lambda: _mid_way(out, tickets, ids, muster_env.trace_dir),
            "two tickets done and another mid-way (the kill point)",
            proc=proc,
        )
        servers = _children(proc.pid)  # before the kill: afterwards they are reparented
        # A finished branch's writes land in SQLite just after its trace line
        # (docs/architecture.md, platform facts: a kill within ~1 ms of a branch finishing may
        # re-run it): wait for them, then kill.
        wait_until(
            lambda: _branches_saved(db, tickets, billing_done, muster_env.trace_dir),
            "the mid-way tickets' finished branches in the checkpoint store",
            proc=proc,
        )
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=HANG_TIMEOUT_S) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            servers = servers or _children(proc.pid)
            _kill_quietly(proc.pid)
            proc.wait(timeout=HANG_TIMEOUT_S)
        for pid in servers:
            _kill_quietly(pid)
    assert servers, "the batch had no MCP server children"
    wait_until(lambda: not any(_alive(pid) for pid in servers), "the batch's servers exiting")

    finished_before = {r["id"] for r in _finished_lines(out)}
    mid_way = [i for i in billing_done if i not in finished_before]
    assert 2 <= len(finished_before) < len(ids), finished_before
    assert mid_way, "no ticket was mid-way at the kill"
    at_kill = {
        i: read_trace(trace_path(batch_thread_id(tickets, i), muster_env.trace_dir))
        for i in mid_way
    }
    calls_at_kill = find_order_calls(muster_env.call_log)
    for ticket_id in finished_before | set(mid_way):
        assert calls_at_kill[ticket_order(ticket_id)] == 1

    # Without --resume the batch refuses to start over its existing threads.
    refused = one_error_line(muster_env.cli("batch", str(tickets), "--db", str(db)))
    assert "--resume" in refused and "already has" in refused

    resumed = muster_env.cli(
        "batch",
        str(tickets),
        "--resume",
        "--concurrency",
        "8",
        "--db",
        str(db),
        "--out",
        str(out),
        "--json",
    )
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["counts"] == {"complete": 8, "partial": 0, "needs_human": 0, "failed": 0}
    assert summary["skipped"] >= len(finished_before)
    assert summary["resumed"] >= len(mid_way)
    assert summary["skipped"] + summary["resumed"] + summary["ran"] == len(ids)

    # Every ticket is done, each packet reported once, each answer written once.
    threads = [batch_thread_id(tickets, i) for i in ids]
    stored, snapshots = read_threads(db, threads)
    assert sorted(stored) == sorted(threads)
    for thread in threads:
        snapshot = snapshots[thread]
        assert status_of(snapshot) == "done", thread
        assert snapshot.values["answer"].status == "complete"
        per_packet = Counter(r.packet_id for r in snapshot.values["reports"])
        assert set(per_packet.values()) == {1}, (thread, per_packet)
        syntheses = [
            e
            for e in read_trace(trace_path(thread, muster_env.trace_dir))
            if e.get("event") == "node" and e.get("node") == "synthesize"
        ]
        assert len(syntheses) == 1, thread

    # The final answers file: exactly one line per ticket, in ticket order.
    answers = read_jsonl(out)
    assert [a["id"] for a in answers] == ids
    assert {a["outcome"] for a in answers} == {"complete"}

    # No finished ticket's order was looked up again; every order at least once.
    calls = find_order_calls(muster_env.call_log)
    assert set(calls) == {ticket_order(i) for i in ids}, calls
    for ticket_id in finished_before | set(mid_way):
        assert calls[ticket_order(ticket_id)] == 1, (ticket_id, calls)

    # A ticket resumed mid-way re-ran exactly the branches that had not finished at the kill.
    for ticket_id in mid_way:
        killed = {e["run_id"] for e in at_kill[ticket_id]}
        events = read_trace(trace_path(batch_thread_id(tickets, ticket_id), muster_env.trace_dir))
        rerun = _finished_workers([e for e in events if e["run_id"] not in killed])
        done_at_kill = _finished_workers(at_kill[ticket_id])
        assert "billing" in done_at_kill and "policy" not in done_at_kill
        assert rerun == {"billing", "policy", "comms"} - done_at_kill, (ticket_id, rerun)
    assert sum(calls.values()) <= len(ids) + 2  # at most the two in flight at the kill re-ran


def ticket_order(ticket_id: str) -> str:
    return ticket_id.removeprefix("late-")


def _finished_workers(events: list[dict[str, Any]]) -> set[str]:
    """Workers whose dispatch node reported an outcome in these trace events."""
    return {
        str(e.get("worker"))
        for e in events
        if e.get("event") == "node" and e.get("node") == "dispatch" and e.get("outcome")
    }


def _branches_saved(db: Path, tickets: Path, ticket_ids: list[str], trace_dir: Path) -> bool:
    """Whether every branch the trace shows finished, in these tickets' threads, has its report
    saved in the checkpoint store (the kill may then lose only unfinished work)."""
    for ticket_id in ticket_ids:
        thread = batch_thread_id(tickets, ticket_id)
        finished = _finished_workers(read_trace(trace_path(thread, trace_dir)))
        if not finished <= saved_branch_workers(db, thread):
            return False
    return True


def _mid_way(out: Path, tickets: Path, ids: list[str], trace_dir: Path) -> list[str]:
    """Unfinished tickets whose billing branch has finished, once two tickets are done."""
    finished = {r["id"] for r in _finished_lines(out)}
    if len(finished) < 2:
        return []
    mid = []
    for ticket_id in ids:
        if ticket_id in finished:
            continue
        workers = _finished_workers(
            read_trace(trace_path(batch_thread_id(tickets, ticket_id), trace_dir))
        )
        if "billing" in workers and "policy" not in workers:
            mid.append(ticket_id)
    return mid


# --- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing", None, "not found"),
        (
            "malformed",
            '{"id": "a", "request": "hi"}\n{"id": "b", "request": \n',
            "line 2: not valid JSON",
        ),
        (
            "dupes",
            '{"id": "a", "request": "hi"}\n\n{"id": "a", "request": "yo"}\n',
            'line 3: duplicate id "a" (first on line 1)',
        ),
    ],
    ids=["missing", "malformed", "duplicate-ids"],
)
@pytest.mark.slow  # the muster CLI as a subprocess (no server starts)
def test_bad_tickets_file_is_bad_input(
    muster_env: MusterEnv, name: str, content: str | None, message: str
) -> None:
    path = muster_env.root / f"{name}.jsonl"
    if content is not None:
        path.write_text(content)
    line = one_error_line(muster_env.cli("batch", str(path), "--db", str(muster_env.checkpoint_db)))
    assert message in line and str(path) in line
    assert not muster_env.checkpoint_db.exists()  # refused before anything was opened
    assert not muster_env.call_log.exists()


@pytest.mark.parametrize("value", ["0", "-3", "many", "2000"])
def test_bad_concurrency_is_refused_before_anything_starts(
    muster_env: MusterEnv, value: str
) -> None:
    tickets = write_tickets(muster_env.root / "q.jsonl", QUEUE[:1])
    args = argparse.Namespace(
        tickets=str(tickets),
        concurrency=value,
        resume=False,
        out=None,
        db=str(muster_env.checkpoint_db),
        servers=None,
        model="offline",
        json=False,
    )
    with pytest.raises(ConfigError, match="--concurrency must be"):
        asyncio.run(cmd_batch(args))
    assert not muster_env.checkpoint_db.exists()


# --- in-process units: the file format, the outcome buckets, the progress bar ----------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "has no tickets"),
        ("[1, 2]\n", "line 1: expected an object"),
        ('{"request": "hi"}\n', 'line 1: "id" must be'),
        ('{"id": "../etc", "request": "hi"}\n', 'line 1: "id" must be'),
        ('{"id": "a", "request": "  "}\n', 'line 1: "request" must be a non-empty string'),
        ('{"id": "a"}\n', 'line 1: "request" must be a non-empty string'),
    ],
)
def test_load_tickets_names_the_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(content)
    with pytest.raises(TicketsFileError, match=re.escape(message)):
        load_tickets(path)


def test_load_tickets_accepts_numeric_ids_and_skips_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "black friday.jsonl"
    path.write_text(
        '{"id": 7, "request": "hi", "channel": "email"}\n\n{"id": "x-1", "request": "yo"}\n'
    )
    assert load_tickets(path) == [Ticket("7", "hi", 1), Ticket("x-1", "yo", 3)]
    assert batch_thread_id(path, "7") == "batch-black-friday-7"


def _snapshot(**fields: Any) -> Any:
    """A stand-in for a `StateSnapshot`: just the fields `status_of` and the batch read."""
    defaults: dict[str, Any] = {"values": {}, "next": (), "interrupts": (), "tasks": ()}
    return SimpleNamespace(**{**defaults, **fields})


def test_resume_sorts_tickets_by_their_threads(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    tickets = [Ticket(i, f"request {i}", n) for n, i in enumerate("abcdef", start=1)]
    done = _snapshot(values={"request": "request a", "answer": _answer("complete")})
    waiting = _snapshot(
        values={"request": "request b"},
        next=("dispatch",),
        interrupts=(SimpleNamespace(value={"kind": "approval"}),),
    )
    crashed = _snapshot(values={"request": "request c"}, next=("dispatch",))
    failed = _snapshot(
        values={"request": "request d"}, next=("dispatch",), tasks=(SimpleNamespace(error="boom"),)
    )
    existing = {"a": done, "b": waiting, "c": crashed, "d": failed, "e": _snapshot()}

    with pytest.raises(ConfigError, match=r"already has 5 of 6 threads .*--resume"):
        plan_batch(path, tickets, existing, resume=False)
    plan = plan_batch(path, tickets, existing, resume=True)
    assert [(r.ticket.id, r.outcome) for r in plan.skip] == [
        ("a", "complete"),
        ("b", "needs_human"),
    ]
    assert [t.id for t in plan.resume] == ["c", "d"]
    assert [t.id for t in plan.run] == ["e", "f"]

    changed = {"a": _snapshot(values={"request": "something else", "answer": _answer("complete")})}
    with pytest.raises(ConfigError, match="line 1: ticket a differs"):
        plan_batch(path, tickets, changed, resume=True)


def _answer(status: str, *, degraded: bool = False, needs_human: bool = False) -> Answer:
    return Answer(text="", status=status, degraded=degraded, needs_human=needs_human)  # type: ignore[arg-type]


def test_each_ticket_counts_in_one_bucket() -> None:
    assert outcome_of("interrupted", None) == "needs_human"
    assert outcome_of("done", _answer("complete")) == "complete"
    assert outcome_of("done", _answer("complete", needs_human=True)) == "needs_human"
    assert outcome_of("done", _answer("partial", degraded=True)) == "partial"
    assert outcome_of("done", _answer("complete", degraded=True)) == "partial"
    assert outcome_of("done", _answer("failed", degraded=True, needs_human=True)) == "failed"
    assert outcome_of("failed", None) == "failed"
    assert outcome_of("in progress", None) == "unfinished"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_one_updating_line_on_a_terminal() -> None:
    stream = _Terminal()
    progress = BatchProgress(stream, 40)
    progress.counts.update({"complete": 11, "partial": 3, "needs_human": 2})
    result = TicketResult(
        ticket=Ticket("t", "r", 1),
        thread_id="batch-x-t",
        thread_status="done",
        outcome="complete",
        answer=None,
        waiting_for=[],
    )
    progress.finish(result)
    progress.close()
    text = stream.getvalue()
    assert text.startswith("\r")
    assert text.endswith("[####......] 17/40 complete 12 partial 3 needs_human 2 failed 0\n")
    assert text.count("\n") == 1  # redrawn in place, one newline when done
