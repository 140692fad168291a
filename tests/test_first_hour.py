"""The first hour with Muster (issue 13): what a newcomer types, as printed, works.

Every command Muster prints for a next step carries the options in force (`--db`, `--out`,
`--model`, ...) and is run here as printed, through a shell, in a temporary store with no
`MUSTER_DB` set; a paused run and a batch say what waits and how to answer it; `muster --help`
loads no LangGraph; `muster threads` into a closed pipe stops quietly; the first progress line
comes before anything slow.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from checkpoints.saver import open_checkpointer
from checkpoints.threads import ThreadInfo
from graph.app.batch_report import default_out_path
from graph.app.flags import SCENARIO_NAMES
from graph.app.hints import Carried
from graph.app.render import waiting_lines
from graph.app.scenarios import SCENARIOS
from graph.app.thread_filters import select_threads, since_time, thread_status
from servers.call_log import count_calls
from tests.conftest import (
    DEMO_TICKET,
    HANG_TIMEOUT_S,
    PROJECT_ROOT,
    MusterEnv,
    error_lines,
    wait_until,
)
from tests.test_actions import REFUND_TICKET
from tests.test_batch import QUEUE, write_tickets
from workers.contracts import CHECKPOINTED_TYPES

VENV_BIN = Path(sys.executable).parent
HEAVY = ("langgraph", "langchain_core", "mcp", "pydantic", "aiosqlite", "psycopg", "workers.hub")


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
"""A terminal escape sequence (colour, erase line)."""


def muster_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "graph.app.cli", *args]


def shell_env(**extra: str) -> dict[str, str]:
    """The test's environment with `muster` on PATH and no `MUSTER_DB`: a hint that needs
    the store must name it."""
    env = {k: v for k, v in os.environ.items() if k != "MUSTER_DB"}
    return {**env, "PATH": f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}", **extra}


def run_as_printed(command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A printed hint, pasted into a shell."""
    assert command.startswith("muster "), command
    return subprocess.run(
        ["bash", "-c", command],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        env=env,
        timeout=HANG_TIMEOUT_S,
    )


# --- fast units -------------------------------------------------------------------------


def test_the_entry_point_and_help_load_no_langgraph() -> None:
    """Structural, not a timing: `muster --help` builds the parser without LangGraph, the
    models, the hub or pydantic (the commands import them when they run)."""
    probe = (
        "import sys\n"
        "from graph.app.cli import build_parser\n"
        "build_parser().format_help()\n"
        f"print([m for m in sys.modules if m.startswith({HEAVY!r})])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=PROJECT_ROOT
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_parser_names_the_bundled_scenarios() -> None:
    assert SCENARIO_NAMES == tuple(sorted(SCENARIOS))


def test_carried_options_are_what_the_command_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MUSTER_DB", "MUSTER_SERVERS", "MUSTER_MODEL"):
        monkeypatch.delenv(name, raising=False)
    args = argparse.Namespace(
        db="var/my store.sqlite",
        servers="my-servers.json",
        model="offline:100",
        planner="rules",
        max_steps=5,
        max_tokens=None,
        deadline=3.0,  # kept with the thread: never carried
        json=True,  # the reader's choice: never carried
        out="answers.jsonl",
        concurrency="4",
    )
    carried = Carried.from_args(args)
    assert carried.command("resume", "t-1") == (
        "muster resume t-1 --db 'var/my store.sqlite' --servers my-servers.json "
        "--model offline:100 --max-steps 5"
    )
    assert carried.command("show", "t-1", run=False) == "muster show t-1 --db 'var/my store.sqlite'"
    assert carried.command("batch", "q.jsonl", "--resume", batch=True).endswith(
        "--out answers.jsonl --concurrency 4"
    )
    # Defaults carry nothing; the environment counts (it may have been set for one command).
    assert Carried.from_args(argparse.Namespace()).command("resume", "t-1") == "muster resume t-1"
    monkeypatch.setenv("MUSTER_MODEL", "openai:gpt-4o-mini")
    monkeypatch.setenv("MUSTER_DB", "postgresql://muster:s3cret@db.internal/muster")
    hint = Carried.from_args(argparse.Namespace()).command("approve", "t-1")
    assert hint == 'muster approve t-1 --db "$MUSTER_DB" --model openai:gpt-4o-mini'
    assert "s3cret" not in hint


def test_a_question_ends_with_the_clarify_command() -> None:
    carried = Carried.from_args(argparse.Namespace(db="/tmp/x.sqlite"))
    (line,) = waiting_lines(
        "t-9", [], [{"kind": "clarification", "question": "Which order?"}], carried
    )
    assert line == (
        'waiting for an answer: Which order?; answer with: muster clarify t-9 "<answer>" '
        "--db /tmp/x.sqlite"
    )


def test_batch_answers_go_next_to_the_store_not_the_tickets(tmp_path: Path) -> None:
    tickets = PROJECT_ROOT / "examples" / "black_friday.jsonl"
    store = tmp_path / "muster.sqlite"
    assert default_out_path(tickets, store) == tmp_path / "black_friday.answers.jsonl"
    pg = default_out_path(tickets, "postgresql://postgres@127.0.0.1/muster")
    assert pg == PROJECT_ROOT / "var" / "black_friday.answers.jsonl"
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "examples/black_friday.answers.jsonl"], cwd=PROJECT_ROOT
    )
    assert ignored.returncode == 0, "examples/*.answers.jsonl is not gitignored"


def test_a_store_in_a_missing_folder_is_one_error_for_every_command(
    muster_env: MusterEnv, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A mistyped --db folder: `run` and `batch` do not silently make a new, empty store
    # there (which `threads` without that --db would never show); every command says so.
    from graph.app.cli import main

    tickets = write_tickets(tmp_path / "tickets.jsonl", QUEUE[:1])
    db = tmp_path / "typo" / "store.sqlite"
    for argv in (
        ["run", REFUND_TICKET],
        ["batch", str(tickets)],
        ["resume", "t-1"],
        ["approve", "t-1", "--by", "lead"],
        ["threads"],
        ["show", "t-1"],
    ):
        assert main([*argv, "--db", str(db)]) == 2, argv
        err = "\n".join(error_lines(capsys.readouterr().err)) + "\n"
        assert err.startswith("muster: error: ") and err.count("\n") == 1, err
        assert str(db) in err and "does not exist" in err, err
    assert not db.parent.exists()


def test_a_wait_cut_to_the_deadline_prints_rounded() -> None:
    # Server start and tool call timeouts are cut to what --deadline leaves, and their
    # messages print them ("server 'orders' did not start in 0.28s", not 0.28185224533081055s).
    from graph.limits import RunLimits

    cut = RunLimits(deadline_at=time.time() + 1.23456).cut(15.0)
    assert f"{cut}" in ("1.23", "1.22"), cut
    assert RunLimits().cut(15.0) == 15.0
    assert RunLimits(deadline_at=time.time() + 60).cut(15.0) == 15.0
    assert RunLimits(deadline_at=time.time() - 5.0).cut(15.0) == 0.1


def test_threads_filters_by_status_and_age() -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)

    def info(thread: str, status: str, age: timedelta) -> ThreadInfo:
        return ThreadInfo(thread, status, (now - age).isoformat(), "r", None, [])  # type: ignore[arg-type]

    infos = [
        info("a", "done", timedelta(minutes=5)),
        info("b", "interrupted", timedelta(hours=3)),
        info("c", "in progress", timedelta(days=2)),
    ]
    assert thread_status("waiting") == "interrupted"
    assert thread_status("in-progress") == "in progress"
    with pytest.raises(argparse.ArgumentTypeError, match="unknown status"):
        thread_status("finished")
    pick = lambda **kw: [i.thread_id for i in select_threads(infos, **kw)]  # noqa: E731
    assert pick(status=["interrupted", "in progress"]) == ["b", "c"]
    assert pick(since=since_time("1h", now=now)) == ["a"]
    assert pick(since=since_time("2026-11-30")) == ["a", "b"]
    assert pick(status=["done"], since=since_time("7d", now=now)) == ["a"]
    with pytest.raises(argparse.ArgumentTypeError, match="ISO date"):
        since_time("yesterday")


def test_threads_into_a_pipe_closed_early_prints_no_traceback(muster_env: MusterEnv) -> None:
    async def make_store() -> None:
        async with open_checkpointer(muster_env.checkpoint_db, allowed_types=CHECKPOINTED_TYPES):
            pass

    asyncio.run(make_store())
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader (`head`) is gone before muster writes a byte
    try:
        proc = subprocess.run(
            muster_argv("threads"),
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=PROJECT_ROOT,
            timeout=HANG_TIMEOUT_S,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
    assert proc.returncode == 0


# --- the CLI as a subprocess, hints run as printed --------------------------------------


@pytest.mark.slow
@pytest.mark.integration
def test_a_drained_run_prints_a_resume_command_that_works_as_printed(
    muster_env: MusterEnv,
) -> None:
    thread = "first-hour-drain"
    store = muster_env.root / "elsewhere" / "store.sqlite"
    store.parent.mkdir()
    env = shell_env(MUSTER_POLICY_MODE="slow", MUSTER_POLICY_SLOW_S="2")
    proc = subprocess.Popen(
        muster_argv(
            "run", DEMO_TICKET, "--thread", thread, "--db", str(store), "--model", "offline:0"
        ),
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(
            lambda: calls_started(muster_env, "policy"), "the policy call in flight", proc=proc
        )
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=HANG_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 6, err
    hint = err.split("Continue with: ", 1)[1].splitlines()[0]
    assert hint == f"muster resume {thread} --db {store} --model offline:0"
    # Listed as stopped by the signal, not as a run still going.
    listed = run_as_printed(f"muster threads --db {store} --status in-progress", shell_env())
    assert "[stopped by SIGINT: resume it]" in listed.stdout, listed.stdout

    resumed = run_as_printed(hint + " --json", shell_env())
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["answer"]["status"] == "complete"
    listed = run_as_printed(f"muster threads --db {store}", shell_env())
    assert f"{thread}  done" in listed.stdout and "stopped by" not in listed.stdout


def calls_started(env: MusterEnv, server: str) -> bool:
    return env.call_log.exists() and f'"server": "{server}"' in env.call_log.read_text()


@pytest.mark.slow
@pytest.mark.integration
def test_a_paused_run_ends_with_the_approval_and_a_command_that_works_as_printed(
    muster_env: MusterEnv,
) -> None:
    approvers = muster_env.root / "approvers.json"
    approvers.write_text(
        json.dumps({"approvers": {getpass.getuser(): {"roles": ["agent"]}}, "limits": []})
    )
    env = shell_env(MUSTER_APPROVERS=str(approvers))
    store = muster_env.root / "store.sqlite"
    ran = subprocess.run(
        muster_argv("run", REFUND_TICKET, "--thread", "first-hour-refund", "--db", str(store)),
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        env=env,
        timeout=HANG_TIMEOUT_S,
    )
    assert ran.returncode == 5, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0] == "muster run: loading Muster; MCP servers start as workers need them"
    assert "servers start as workers need them: orders, kb, policy, time" in lines
    # Only the servers its workers need start, each announced; the clock is never read.
    assert any(line.startswith("server orders up (") for line in lines), lines
    assert not any(line.startswith("server time ") for line in lines), lines
    last = lines[-1]
    assert last.startswith(
        "waiting for approval of orders.issue_refund of $129.00 on order 12345, digest "
    ), last
    approve = last.split("approve with: ", 1)[1].removesuffix(" (--reject to refuse)")
    digest = last.split(", digest ", 1)[1][:12]
    assert approve == f"muster approve first-hour-refund --digest {digest} --db {store}"
    details = ran.stdout.split("(details: ", 1)[1].split(")", 1)[0]

    shown = run_as_printed(details, env)
    assert shown.returncode == 0, shown.stderr
    assert "pending approval: orders.issue_refund" in shown.stdout

    approved = run_as_printed(approve, env)
    assert approved.returncode == 0, approved.stderr
    assert f"executed (approved by {getpass.getuser()})" in approved.stdout
    assert count_calls(muster_env.call_log, server="orders", tool="issue_refund") == 1


@pytest.mark.slow
@pytest.mark.integration
def test_a_stopped_batch_counts_unfinished_and_its_resume_works_as_printed(
    muster_env: MusterEnv,
) -> None:
    tickets = write_tickets(muster_env.root / "queue.jsonl", QUEUE)
    store = muster_env.root / "batch" / "store.sqlite"
    store.parent.mkdir()
    out = muster_env.root / "answers" / "queue.jsonl"
    out.parent.mkdir()
    env = shell_env(MUSTER_POLICY_MODE="slow", MUSTER_POLICY_SLOW_S="1")
    argv = ["batch", str(tickets), "--db", str(store), "--out", str(out), "--concurrency", "1"]
    proc = subprocess.Popen(
        muster_argv(*argv),
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        loading = "loading Muster; MCP servers start as workers need them"
        assert first == f"muster batch {tickets}: {loading}\n"
        while not (line := proc.stdout.readline()).startswith("[1/6]"):  # a ticket finished
            assert line, "the batch ended before its first ticket finished"
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=HANG_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 6, err
    summary = next(line for line in rest.splitlines() if line.startswith("batch queue: 6 tickets"))
    new = int(summary.split("(", 1)[1].split(" new", 1)[0])
    assert 1 <= new < 6 and f"{6 - new} unfinished)" in summary, summary
    hint = err.split("Continue with: ", 1)[1].splitlines()[0]
    assert hint == (f"muster batch {tickets} --resume --db {store} --out {out} --concurrency 1")

    resumed = run_as_printed(hint, shell_env())
    assert resumed.returncode == 3, resumed.stderr
    again = next(
        x for x in resumed.stdout.splitlines() if x.startswith("batch queue: 6 tickets in")
    )
    counts = again.split("(", 1)[1]
    ran, resumed_count = int(counts.split(" new")[0]), int(counts.split(", ")[1].split()[0])
    assert ran + resumed_count == 6 - new and f"{new} already finished)" in again, again
    waiting = resumed.stdout.split("waiting for a human:\n", 1)[1].split("\n\n", 1)[0]
    refund = next(line for line in waiting.splitlines() if line.startswith("  refund "))
    assert "waiting for approval of orders.issue_refund of $32.99 on order 12366" in refund
    digest = refund.split(", digest ", 1)[1][:12]
    approve = (
        f"approve with: muster approve batch-queue-refund --digest {digest} --by NAME "
        f"--db {store} (NAME: "
    )
    assert approve in refund
    ambiguous = next(line for line in waiting.splitlines() if line.startswith("  ambiguous "))
    assert f'answer with: muster clarify batch-queue-ambiguous "<answer>" --db {store}' in ambiguous
    assert any(line.startswith("  furious ") for line in waiting.splitlines())

    records = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert len(records) == 6
    (pending,) = records["refund"]["pending_approvals"]
    assert pending["tool"] == "orders.issue_refund" and len(pending["digest"]) == 64
    assert pending["digest"][:12] in refund
    (question,) = records["ambiguous"]["pending_questions"]
    assert question["question"] and question["worker"] == "billing"
    assert records["dup-charge"]["pending_approvals"] == []


# --- a terminal ---------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.integration
def test_on_a_terminal_the_first_line_comes_at_once_then_the_servers(
    muster_env: MusterEnv,
) -> None:
    """In a pty, as a person sees it: the first line before the imports and the servers, then
    which servers are up, then, while the slow policy worker runs, that it is running. The
    bound on the first line scales with the machine's load (a structural check first: it
    comes before the servers line)."""
    controller, terminal = pty.openpty()
    started = time.monotonic()
    proc = subprocess.Popen(
        muster_argv("run", DEMO_TICKET),
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        cwd=PROJECT_ROOT,
        env=shell_env(
            MUSTER_DB=str(muster_env.checkpoint_db),
            MUSTER_POLICY_MODE="slow",
            MUSTER_POLICY_SLOW_S="2",
        ),
        close_fds=True,
    )
    os.close(terminal)
    seen: list[tuple[float, str]] = []
    buffer = raw = b""
    try:
        while True:  # to the end of the run
            ready, _, _ = select.select([controller], [], [], HANG_TIMEOUT_S)
            assert ready, f"no output after {HANG_TIMEOUT_S}s: {seen}"
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the run ended (EIO on Linux)
                break
            if not chunk:
                break
            buffer += chunk
            raw += chunk
            *lines, buffer = buffer.split(b"\n")
            now = time.monotonic() - started
            # As a person reads it: no escape sequences (colours, the status line's erase), and
            # what follows the last carriage return (a status line redrawn, then replaced).
            # (A terminal ends each line with \r\n: that \r is not a redraw.)
            texts = [ANSI.sub("", line.decode(errors="replace")).rstrip("\r") for line in lines]
            seen += [(now, text.rsplit("\r", 1)[-1].strip()) for text in texts]
        proc.wait(timeout=HANG_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(controller)
    (first_at, first), *_ = seen
    assert first == "muster run: loading Muster; MCP servers start as workers need them", seen
    servers_at = next(at for at, text in seen if text.startswith("server policy "))
    assert first_at < servers_at
    policy_done = next(at for at, text in seen if "policy" in text and "finding" in text)
    running = [(at, text) for at, text in seen if "running: " in text and "policy" in text]
    assert running and running[0][0] <= policy_done, seen
    # The status line is redrawn in place while the slow worker runs: its time grows.
    redrawn = re.findall(rb"\r\x1b\[2K\x1b\[2m  running: [^\r\n]*?policy (\d+\.\d) s", raw)
    assert len({float(t) for t in redrawn}) >= 2, raw[-2000:]
    load = os.getloadavg()[0] / (os.cpu_count() or 1)
    assert first_at < max(1.0, load), f"first line after {first_at:.2f}s (load {load:.1f}/cpu)"


# --- the README's quick start, read from the README -------------------------------------

QUICKSTART = re.compile(r"<!-- quickstart -->\n```bash\n(.*?)```\n<!-- /quickstart -->", re.S)
COMMENT = re.compile(r"\s{2,}#\s*(.*)$")


def quickstart_lines() -> list[tuple[str, str]]:
    """(command, comment) for each line of the README's quick start."""
    match = QUICKSTART.search((PROJECT_ROOT / "README.md").read_text(encoding="utf-8"))
    assert match, "README.md has no <!-- quickstart --> block"
    lines = []
    for raw in match[1].splitlines():
        comment = COMMENT.search(raw)
        command = raw[: comment.start()] if comment else raw
        lines.append((command.strip(), comment[1] if comment else ""))
    return lines


@pytest.mark.slow
@pytest.mark.integration
def test_the_readme_quick_start_works_line_by_line(muster_env: MusterEnv) -> None:
    """Each `muster` line runs as written (in this test's store and orders database) with
    the exit code its comment states (0 if none); `make` targets and the venv are checked to
    exist, not run: `make setup` is what built this venv, and `make reset` would clear the
    working tree's own demo data."""
    lines = quickstart_lines()
    assert [c for c, _ in lines if not c.startswith("muster ")] == [
        "make setup",
        "source .venv/bin/activate",
        "make reset",
    ]
    env = shell_env(MUSTER_DB=str(muster_env.checkpoint_db))
    outputs: dict[str, str] = {}
    for command, comment in lines:
        if command.startswith("make "):
            dry = subprocess.run(
                ["make", "-n", command.split()[1]], cwd=PROJECT_ROOT, capture_output=True
            )
            assert dry.returncode == 0, f"{command}: {dry.stderr!r}"
            continue
        if command.startswith("source "):
            assert (PROJECT_ROOT / command.split()[1]).is_file()
            continue
        expected = int(m[1]) if (m := re.search(r"exit (\d+)", comment)) else 0
        result = run_as_printed(command, env)
        assert result.returncode == expected, f"{command}\n{result.stdout}\n{result.stderr}"
        outputs[command.split()[1]] = result.stdout
    assert "Exit codes:" in outputs["--help"]
    assert (
        outputs["run"]
        .splitlines()[-1]
        .startswith("waiting for approval of orders.issue_refund of $129.00 on order 12345")
    )
    assert "pending approval: orders.issue_refund" in outputs["show"]
    assert "executed (approved by lead)" in outputs["approve"]
    assert "refund-1  done" in outputs["threads"]


def test_a_provider_not_installed_names_the_extra_that_installs_it() -> None:
    # The README's install line for each provider, not LangChain's bare package name.
    import importlib.util

    from workers.errors import UnknownModelError
    from workers.models import load_model_factory

    if importlib.util.find_spec("langchain_anthropic") is not None:
        pytest.skip("langchain-anthropic is installed here")
    with pytest.raises(UnknownModelError) as raised:
        load_model_factory("anthropic:claude-sonnet-4-5")
    message = str(raised.value)
    assert "pip install -e '.[anthropic]'" in message and "\n" not in message, message
