"""Time travel: `muster history THREAD` and `muster fork THREAD --checkpoint ID`.

The module runs the reference ticket once with the policy server broken (policy fails on it,
then is replaced by the cached snapshot; the refund is approved by `lead` and executed), on
real MCP servers and a real SQLite store. Forking it from just before `synthesize` with the
policy server healthy and `--rerun policy` must give a complete answer on a new thread,
leave the original as it was, and not ask for (or run) the refund again.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import StateSnapshot

from checkpoints.threads import thread_config, thread_ids
from graph.app.cli import main
from graph.app.fork import find_checkpoint, parse_edits, plan_fork, seed_fork
from graph.app.history import FORKED_FROM, CheckpointEntry, checkpoint_entries
from graph.app.runtime import open_runtime, open_store, stream_run
from graph.trace import read_trace, trace_path
from tests.conftest import HANG_TIMEOUT_S, PROJECT_ROOT, calls_so_far
from tests.test_timeline import reference_env, run_reference
from workers.errors import MusterError

THREAD = "ref-history"


@dataclass(frozen=True)
class Reference:
    """The module's reference run: finished, its answer partial because of the fallback."""

    root: Path
    db: Path

    @property
    def call_log(self) -> Path:
        return self.root / "calls.jsonl"


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reference]:
    root = tmp_path_factory.mktemp("history")
    with pytest.MonkeyPatch.context() as monkeypatch:
        db = reference_env(root, monkeypatch, policy="broken")
        asyncio.run(run_reference(db, THREAD))
        yield Reference(root=root, db=db)


async def read_thread(db: Path, thread: str) -> tuple[list[StateSnapshot], StateSnapshot]:
    """A thread's checkpoint history (newest first) and latest snapshot."""
    async with open_store(db) as (graph, _):
        history = [s async for s in graph.aget_state_history(thread_config(thread))]
        return history, await graph.aget_state(thread_config(thread))


def entries_of(db: Path, thread: str) -> list[CheckpointEntry]:
    return checkpoint_entries(asyncio.run(read_thread(db, thread))[0])


def checkpoint_before(entries: list[CheckpointEntry], *nodes: str) -> CheckpointEntry:
    """The one checkpoint that runs exactly `nodes` next."""
    (entry,) = [e for e in entries if e.next == nodes]
    return entry


async def all_threads(db: Path) -> list[str]:
    async with open_store(db) as (_, saver):
        return await thread_ids(saver)


@pytest.mark.integration
def test_history_lists_every_checkpoint_with_what_its_step_did(
    reference: Reference, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["history", THREAD]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"thread {THREAD}: done, ")
    assert out[1].split() == ["STEP", "CHECKPOINT", "TIME", "NEXT", "SUMMARY"]
    rows = {line.split()[0]: line for line in out[2:] if line[:4].strip().lstrip("-").isdigit()}
    assert "input: Customer says order #12345 was charged twice." in rows["-1"]
    assert "dispatch ×3  plan: 3 packets (billing-1, policy-2, comms-3)" in rows["1"]
    assert "billing-1 ok; policy-2 failed (tool_error); comms-3 ok" in "\n".join(out)
    # A broken server is not retried by recovery (graph/retries.py): straight to the cache.
    assert "retry policy-2" not in "\n".join(out)
    assert "fallback policy-2 (after tool_error)" in "\n".join(out)
    waiting = [line for line in out if line.endswith("[waits for a human]")]
    assert len(waiting) == 1 and "waiting for approval of orders.issue_refund" in waiting[0]
    end = rows[max(rows, key=int)]
    assert "(end)" in end and "synthesize: answer partial (degraded)" in end
    assert out[-1].startswith(f"start a new thread from one: muster fork {THREAD} --checkpoint ID")

    assert main(["history", THREAD, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    steps = [e["step"] for e in listed]
    assert steps == list(range(-1, len(steps) - 1))  # every superstep, oldest first
    assert len({e["checkpoint_id"] for e in listed}) == len(listed)
    assert listed[-2]["next"] == ["synthesize"] and listed[-1]["next"] == []

    # `--checkpoint` takes an id or a unique prefix, and says when a prefix is ambiguous.
    history, _ = asyncio.run(read_thread(reference.db, THREAD))
    last = listed[-1]["checkpoint_id"]
    assert find_checkpoint(history, last[:-1], listing="x").config == history[0].config
    with pytest.raises(MusterError, match=r"matches \d+ checkpoints"):
        find_checkpoint(history, last[:8], listing="x")


@pytest.mark.integration
def test_forking_before_synthesize_with_a_healthy_policy_completes_on_a_new_thread(
    reference: Reference,
) -> None:
    before_history, before = asyncio.run(read_thread(reference.db, THREAD))
    assert before.values["answer"].status == "partial"  # the cached policy went into it
    target = checkpoint_before(checkpoint_entries(before_history), "synthesize")

    fork = subprocess.run(
        [sys.executable, "-m", "graph.app.cli", "fork", THREAD]
        + ["--checkpoint", target.checkpoint_id, "--rerun", "policy"],
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT_S,
        cwd=PROJECT_ROOT,
        env={**os.environ, "MUSTER_POLICY_MODE": "healthy"},
    )
    assert fork.returncode == 0, fork.stdout + fork.stderr  # 0: complete
    found = re.search(
        r"^forked thread: (\S+) \(from (\S+) at checkpoint (\S+), step", fork.stdout, re.M
    )
    assert found is not None, fork.stdout
    new, source, checkpoint = found.groups()
    assert (source, checkpoint) == (THREAD, target.checkpoint_id) and new != THREAD
    assert f"thread: {new}" in fork.stdout

    history, after = asyncio.run(read_thread(reference.db, new))
    answer = after.values["answer"]
    assert (answer.status, answer.degraded, answer.needs_human) == ("complete", False, False)
    policy = [r for r in after.values["reports"] if r.worker == "policy"]
    assert [(r.status, r.fallback) for r in policy] == [("ok", False)]
    assert after.values["recoveries"] == []
    assert history[-1].metadata.get(FORKED_FROM) == THREAD
    # The refund the original executed is the fork's too: not asked for, not run again.
    assert [a.status for a in after.values["actions"]] == ["executed"]
    assert not after.interrupts
    assert calls_so_far(reference.call_log, server="orders", tool="issue_refund") == 1
    assert any(e["event"] == "forked" for e in read_trace(trace_path(new)))

    # The original thread is unchanged: the same checkpoints, the same answer.
    again_history, again = asyncio.run(read_thread(reference.db, THREAD))
    assert [c.config for c in again_history] == [c.config for c in before_history]
    assert again.values["answer"] == before.values["answer"]
    assert len(again.values["reports"]) == len(before.values["reports"])


@pytest.mark.integration
async def test_a_fork_at_the_first_fan_out_runs_every_packet_again_with_an_edit(
    reference: Reference, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSTER_POLICY_MODE", "healthy")
    history, _ = await read_thread(reference.db, THREAD)
    target = find_checkpoint(
        history,
        checkpoint_before(checkpoint_entries(history), *["dispatch"] * 3).checkpoint_id,
        listing="x",
    )
    assert list(target.next) == ["dispatch"] * 3  # after plan: the first wave
    new = "ref-history-french"
    plan = plan_fork(
        THREAD,
        target,
        thread_id=new,
        edits=parse_edits(["language=French"]),
        reruns=(),
        listing="x",
    )
    async with open_runtime(db=reference.db) as runtime:
        seeded = await seed_fork(runtime.graph, runtime.saver, plan, new)
        assert list(seeded.next) == ["collect"]  # the barrier decides what runs
        values = await stream_run(runtime, new, None)
    forked, _ = await read_thread(reference.db, new)
    assert [list(s.next) for s in reversed(forked)][:2] == [["collect"], ["dispatch"] * 3]
    reports = values["reports"]
    assert sorted((r.packet_id, r.status) for r in reports) == [
        ("billing-1", "ok"),
        ("comms-3", "ok"),
        ("policy-2", "ok"),
    ]
    assert any("French" in q for q in values["answer"].open_questions)
    # The refund ran in the original thread; billing now reads it as done, proposes nothing.
    assert calls_so_far(reference.call_log, server="orders", tool="issue_refund") == 1


@pytest.mark.integration
def test_bad_forks_are_refused_with_one_line_and_write_nothing(
    reference: Reference, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = entries_of(reference.db, THREAD)
    before_synthesize = checkpoint_before(entries, "synthesize").checkpoint_id
    end = entries[-1].checkpoint_id
    threads = asyncio.run(all_threads(reference.db))
    traces = sorted(p.name for p in (reference.root / "traces").iterdir())
    page = reference.root / "nope.html"
    refused = [
        (["fork", "nope", "--checkpoint", end], "unknown thread nope"),
        (["fork", THREAD, "--checkpoint", "0" * 16], "no checkpoint '0000000000000000'"),
        (["fork", THREAD, "--checkpoint", end[:4]], f"no checkpoint '{end[:4]}'"),
        (["fork", THREAD, "--checkpoint", end], "is the end of the thread"),
        (
            ["fork", THREAD, "--checkpoint", before_synthesize, "--edit", "colour=blue"],
            "--edit colour: not a state field",
        ),
        (
            ["fork", THREAD, "--checkpoint", before_synthesize, "--edit", "order_ids=12345"],
            "--edit order_ids: Input should be a valid list",
        ),
        (
            ["fork", THREAD, "--checkpoint", before_synthesize, "--rerun", "nobody"],
            "--rerun nobody: no packet or worker of that name",
        ),
        (
            ["fork", THREAD, "--checkpoint", before_synthesize, "--new-thread", THREAD],
            f"thread {THREAD} already exists",
        ),
        (["history", "nope"], "unknown thread nope"),
        (["show", "nope", "--html", str(page)], "unknown thread nope"),
    ]
    for argv, why in refused:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("muster: error: ") and why in err[0], (argv, err)
    assert asyncio.run(all_threads(reference.db)) == threads
    assert sorted(p.name for p in (reference.root / "traces").iterdir()) == traces
    assert not page.exists()


def test_edits_are_validated_against_the_state_types() -> None:
    assert parse_edits(["language=French"]) == {"language": "French"}
    assert parse_edits(['{"intents": ["refund"], "stop_reason": null}', "deadline_at=9.5"]) == {
        "intents": ["refund"],
        "stop_reason": None,
        "deadline_at": 9.5,
    }
    report: dict[str, Any] = {"packet_id": "p-1", "worker": "w", "objective": "o", "status": "ok"}
    (parsed,) = parse_edits([json.dumps({"reports": [report]})])["reports"]
    assert parsed.packet_id == "p-1" and parsed.findings == []
    for bad, why in [
        ("language", "give KEY=VALUE"),
        ("=x", "give KEY=VALUE"),
        ('{"language": ', "not valid JSON"),
        ("[1]", "give KEY=VALUE"),
        ('{"reports": [{"worker": "w"}]}', "--edit reports: Field required"),
    ]:
        with pytest.raises(MusterError, match=re.escape(why)):
            parse_edits([bad])
