"""Crash tests with a real kill: SIGKILL the `muster` CLI mid fan-out, then resume the thread.

The CLI runs as a subprocess with real stdio MCP servers and a real SQLite checkpointer. The
policy server is slow, so billing and comms finish while policy is still working; the process
is killed then. On resume only the unfinished branch may run again: the servers' own call log
proves the finished workers' tools were not called twice.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from checkpoints.saver import open_checkpointer
from checkpoints.threads import ThreadStatus, status_of, thread_config, thread_ids
from graph.app.cli import LOADING
from graph.app.runtime import open_store
from graph.trace import read_trace, trace_path
from servers.call_log import count_calls
from tests.conftest import (
    DEMO_TICKET,
    HANG_TIMEOUT_S,
    PROJECT_ROOT,
    MusterEnv,
    calls_so_far,
    saved_branch_workers,
    wait_until,
)
from workers.contracts import CHECKPOINTED_TYPES

pytestmark = [
    pytest.mark.skipif(
        not Path("/proc/self/stat").exists(), reason="needs /proc to find the killed CLI's servers"
    ),
    pytest.mark.slow,  # the muster CLI as a subprocess
]

SLOW_POLICY_S = 600.0
"""How long the policy server takes per call in the run that gets killed: far longer than the
run takes to reach the kill (the kill, not this, ends the call), however loaded the machine."""
FAST_WORKERS = ("billing", "comms")


def _ppid(pid: int) -> int | None:
    """The parent pid of `pid` from /proc, or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may contain spaces or ')'.
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[1])


def _children(pid: int) -> list[int]:
    """Direct children of `pid` (the CLI's MCP server processes)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _ppid(int(entry.name)) == pid:
            found.append(int(entry.name))
    return found


def _cmdline(pid: int) -> list[str]:
    """The argv of `pid` (empty if it is gone)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"  # a zombie is dead, only not yet reaped


def _kill_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_store(db: Path, thread: str) -> tuple[list[str], ThreadStatus, dict[str, Any]]:
    """In-process read of the checkpoint store: every thread id, and one thread's status and
    state values (cheaper than another CLI subprocess, and no server starts)."""

    async def read() -> tuple[list[str], ThreadStatus, dict[str, Any]]:
        async with open_store(db) as (graph, saver):
            snapshot = await graph.aget_state(thread_config(thread))
            return await thread_ids(saver), status_of(snapshot), dict(snapshot.values)

    return asyncio.run(read())


def _finished_workers(events: list[dict[str, Any]]) -> set[str]:
    """Workers whose dispatch node has reported an outcome in the trace."""
    return {
        str(e.get("worker"))
        for e in events
        if e.get("event") == "node" and e.get("node") == "dispatch" and e.get("outcome")
    }


def _wait_for_fast_workers(
    trace: Path, call_log: Path, proc: subprocess.Popen[str]
) -> list[dict[str, Any]]:
    """Wait until billing and comms have finished (their trace lines) and the slow policy call
    has reached the server (its call log); fail if the CLI exits first."""

    def reached() -> list[dict[str, Any]]:
        events = read_trace(trace)
        if not set(FAST_WORKERS) <= _finished_workers(events):
            return []
        return events if calls_so_far(call_log, server="policy", tool="check_policy") else []

    return wait_until(reached, f"billing and comms finishing (trace {trace})", proc=proc)


@pytest.mark.integration
def test_sigkill_mid_fanout_then_resume_repeats_no_finished_work(muster_env: MusterEnv) -> None:
    thread = "crash-1"
    db = str(muster_env.checkpoint_db)
    trace = trace_path(thread, muster_env.trace_dir)
    child_env = {
        **os.environ,
        "MUSTER_POLICY_MODE": "slow",
        "MUSTER_POLICY_SLOW_S": str(SLOW_POLICY_S),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "graph.app.cli", "run", DEMO_TICKET, "--db", db, "--thread", thread],
        cwd=PROJECT_ROOT,
        env=child_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    servers: list[int] = []
    try:
        _wait_for_fast_workers(trace, muster_env.call_log, proc)
        servers = _children(proc.pid)  # before the kill: afterwards they are reparented
        # The finished branches' writes land in SQLite just after their trace lines
        # (docs/architecture.md, platform facts: a kill within ~1 ms of a branch finishing may
        # re-run it): wait for them, then kill.
        wait_until(
            lambda: set(FAST_WORKERS) <= saved_branch_workers(muster_env.checkpoint_db, thread),
            "billing's and comms' reports in the checkpoint store",
            proc=proc,
        )
        events = read_trace(trace)
        assert "policy" not in _finished_workers(events), "policy finished before the kill"
        started = [_cmdline(pid) for pid in servers]
        modules = {argv[argv.index("-m") + 1] for argv in started if "-m" in argv[:-1]}
        assert {"servers.orders", "servers.kb", "servers.policy"} <= modules, started
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=HANG_TIMEOUT_S) == -signal.SIGKILL
    finally:
        if proc.poll() is None:  # the test failed before its kill: clean up all the same
            servers = servers or _children(proc.pid)
            _kill_quietly(proc.pid)
            proc.wait(timeout=HANG_TIMEOUT_S)
        for pid in servers:
            _kill_quietly(pid)
    wait_until(lambda: not any(_alive(pid) for pid in servers), "the killed CLI's servers exiting")

    # The killed run made each fast call once and started the slow policy call.
    before = {
        tool: count_calls(muster_env.call_log, server=server, tool=tool)
        for server, tool in [
            ("orders", "find_order"),
            ("orders", "refund_status"),
            ("kb", "get_article"),
            ("policy", "check_policy"),
        ]
    }
    assert before == {"find_order": 1, "refund_status": 1, "get_article": 1, "check_policy": 1}

    # The store knows the thread and that work is left.
    threads, status, _ = _read_store(muster_env.checkpoint_db, thread)
    assert (threads, status) == ([thread], "in progress")

    resumed = muster_env.cli(
        "resume",
        thread,
        "--db",
        db,
        "--json",
        extra_env={"MUSTER_POLICY_MODE": "healthy"},
    )
    assert resumed.returncode == 0, resumed.stderr
    result = json.loads(resumed.stdout)

    # Finished workers' tools were not called again; only the unfinished branch re-ran.
    assert count_calls(muster_env.call_log, server="orders", tool="find_order") == 1
    assert count_calls(muster_env.call_log, server="orders", tool="refund_status") == 1
    assert count_calls(muster_env.call_log, server="kb", tool="get_article") == 1
    assert count_calls(muster_env.call_log, server="policy", tool="check_policy") == 2

    # Every report exactly once, one per packet, all ok; the answer is whole.
    per_packet = Counter(r["packet_id"] for r in result["reports"])
    assert per_packet == Counter({"billing-1": 1, "policy-2": 1, "comms-3": 1})
    assert {r["worker"]: r["status"] for r in result["reports"]} == {
        "billing": "ok",
        "policy": "ok",
        "comms": "ok",
    }
    assert result["recoveries"] == []
    assert result["answer"]["status"] == "complete"
    assert result["answer"]["degraded"] is False
    assert result["waiting_for_human"] is False

    # The trace agrees: the resumed run (a new run id) dispatched policy only.
    killed_run = events[0]["run_id"]
    resumed_dispatches = [
        e["worker"]
        for e in read_trace(trace)
        if e["run_id"] != killed_run and e.get("event") == "node" and e.get("node") == "dispatch"
    ]
    assert resumed_dispatches == ["policy"]

    # The stored thread agrees with the printed result.
    _, status, values = _read_store(muster_env.checkpoint_db, thread)
    assert status == "done"
    assert sorted(r.packet_id for r in values["reports"]) == ["billing-1", "comms-3", "policy-2"]


def test_resume_unknown_thread_is_bad_input(muster_env: MusterEnv) -> None:
    db = str(muster_env.checkpoint_db)

    async def create_empty_store() -> None:
        async with open_checkpointer(db, allowed_types=CHECKPOINTED_TYPES):
            pass

    asyncio.run(create_empty_store())
    result = muster_env.cli("resume", "no-such-thread", "--db", db)
    assert result.returncode == 2
    # Only the first progress line, printed before anything is read, then the one-line error.
    assert result.stdout == f"muster resume no-such-thread: {LOADING}\n"
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("muster: error: unknown thread no-such-thread")


def test_resume_without_a_store_is_bad_input(muster_env: MusterEnv) -> None:
    missing = str(muster_env.root / "missing.sqlite")
    result = muster_env.cli("resume", "anything", "--db", missing)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("muster: error:"), result.stderr
    assert not Path(missing).exists()


@pytest.mark.integration
def test_run_on_a_finished_thread_is_refused(muster_env: MusterEnv) -> None:
    db = str(muster_env.checkpoint_db)
    thread = "finished-1"
    first = muster_env.cli("run", DEMO_TICKET, "--db", db, "--thread", thread)
    assert first.returncode == 0, first.stderr
    calls_before = count_calls(muster_env.call_log)

    again = muster_env.cli(
        "run",
        "Order #12345 arrived late, I want a refund",
        "--db",
        db,
        "--thread",
        thread,
        "--json",
    )
    assert again.returncode == 2
    assert again.stdout == ""
    # --json: the first progress line goes to stderr, before the one-line error.
    progress, *lines = again.stderr.strip().splitlines()
    assert progress == f"muster run: {LOADING}"
    assert len(lines) == 1, again.stderr
    assert lines[0].startswith(f"muster: error: thread {thread} already exists (done)")
    assert count_calls(muster_env.call_log) == calls_before  # no worker ran

    # The thread is untouched: still the first request, its three reports, its answer.
    threads, status, values = _read_store(muster_env.checkpoint_db, thread)
    assert (threads, status) == ([thread], "done")
    assert values["request"] == DEMO_TICKET
    assert sorted(r.packet_id for r in values["reports"]) == ["billing-1", "comms-3", "policy-2"]
    assert values["answer"].status == "complete"
    shown = muster_env.cli("show", thread, "--db", db)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"thread {thread}: done")
    reports = shown.stdout.split("\nreports:\n", 1)[1].split("\nanswer:", 1)[0].splitlines()
    workers = [line.split()[0] for line in reports if line.startswith("  ") and line[2] != " "]
    assert sorted(workers) == ["billing", "comms", "policy"]
