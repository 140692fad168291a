"""`muster eval --lifecycle`: drive each labelled thread to its end and score the final answer
and the final state of the servers' data (issue 24, as tau2-bench scores the final database).

A lifecycle case says how its stops are answered: a decision (approve or reject) for each
action it expects Muster to propose, matched by tool and arguments, and the replies to its
clarification questions, in order. The thread is driven as a user drives it: each pending
interrupt is answered with LangGraph's `Command(resume={interrupt_id: value})`, the value
built as `muster approve` / `muster approve --reject` / `muster clarify` build it
(`graph.app.pending.pending_answer` picks the interrupt). A stop the case did not expect (an
approval nobody labelled, a question with no reply left) is a miss: an unlabelled action is
rejected, so nothing unlabelled is ever written, and a question with no reply ends the drive.

Each case runs on its own runtime over fresh files (checkpoint store with its audit log,
and every database the pack's servers write, `EVAL_DATABASES`, handed to those servers
through their `env`), so one case's refund never shows in another's data and cases can run
side by side. The servers that own a database start before the request; their tables are
read then and again after the last stop; the difference (rows added and rows removed, seed
rows never counted) is the case's final data, compared with its labels.

Fields, per case:

- `stops`: every stop was answered by a label and every labelled answer was used;
- `data`: the rows the thread added (projected onto the labelled columns) are exactly the
  labelled ones, table by table; every table not labelled is unchanged;
- `answer`: the thread is done and its final answer agrees with what happened: status and
  needs_human as labelled, every decided action named once in the resolution with the
  approval state its record has (executed, rejected, held), nothing left "pending approval",
  each approved action executed and each rejected one not, and the labelled phrases present
  (`answer_says`) or absent (`answer_lacks`);
- `final_state`: `data` and `answer` both right (target 95%).

The label format is in each pack's LABELS.md ("Lifecycle cases").
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from langgraph.types import Command

from checkpoints.threads import thread_config
from graph.app.eval_env import isolated_environment
from graph.app.eval_lifecycle_cases import APPROVER, Drive, LifecycleCase, LifecycleResult
from graph.app.eval_lifecycle_score import (
    Tables,
    args_text,
    read_tables,
    score_answer,
    score_data,
    score_stops,
)
from graph.app.options import MusterOptions
from graph.app.runtime import MusterRuntime, open_runtime, stream_run_snapshot
from graph.domains import DomainPack
from workers.contracts import Answer

FIELDS = ("stops", "data", "answer", "final_state")
"""The scored fields, in table order."""
TARGETS: dict[str, float | None] = {
    "stops": None,
    "data": None,
    "answer": None,
    "final_state": 0.95,
}
"""The final state (data as labelled and an answer that agrees with it) on 95% of cases."""
MAX_STOPS = 12
"""The most stops one case is driven through; a thread still waiting after them is a miss."""
MAX_CONCURRENCY = 4
"""Cases running at once at most: each has its own runtime and servers."""


def eval_databases(pack: DomainPack) -> tuple[str, ...]:
    """The variables naming the databases the pack's servers write."""
    fields = pack.hook("EVAL_FIELDS")
    return tuple(pack.hook("EVAL_DATABASES") or getattr(fields, "EVAL_DATABASES", ()) or ())


def eval_env(pack: DomainPack) -> dict[str, str]:
    """The environment the pack's labels assume (support: the orders system's date)."""
    fields = pack.hook("EVAL_FIELDS")
    return dict(pack.hook("EVAL_ENV") or getattr(fields, "EVAL_ENV", None) or {})


# --- driving a thread ------------------------------------------------------------------------


async def drive_thread(
    runtime: MusterRuntime, thread_id: str, case: LifecycleCase, *, trace_dir: Path
) -> tuple[dict[str, Any], Drive]:
    """Run the case's request, then answer each stop as labelled until the thread ends."""
    from graph.app.pending import pending_answer  # the CLI's own choice of interrupt

    drive = Drive()
    decisions = list(case.answers.approvals)
    replies = list(case.answers.clarifications)
    payload: dict[str, Any] | Command = {"request": case.request}
    for _ in range(MAX_STOPS + 1):
        services = runtime.for_thread(thread_id, trace_dir=trace_dir)  # one trace file per run
        snapshot = await stream_run_snapshot(runtime, thread_id, payload, services=services)
        if not snapshot.interrupts:
            drive.finished = not snapshot.next
            if snapshot.next:
                drive.error = f"the run stopped before its end (next: {', '.join(snapshot.next)})"
            break
        first = snapshot.interrupts[0].value
        kind = first.get("kind") if isinstance(first, dict) else None
        where = "lifecycle eval"
        if kind == "approval":
            tool, args = str(first["tool"]), dict(first.get("args") or {})
            label = next((d for d in decisions if d.matches(tool, args)), None)
            shown = f"{tool}({args_text(args)})"
            if label is None:
                drive.unexpected.append(f"unlabelled approval of {shown} (rejected)")
            else:
                decisions.remove(label)
            approved = label is not None and label.decision == "approve"
            drive.stops.append(f"{'approve' if approved else 'reject'} {shown}")
            value = {
                "approved": approved,
                "digest": first["digest"],
                "by": label.by if label is not None else APPROVER,
                "note": label.note if label is not None else "not in the lifecycle labels",
            }
            target, resume = await pending_answer(
                snapshot, "approval", value, thread=thread_id, where=where
            )
        elif kind == "clarification":
            if not replies:
                drive.unexpected.append(f"unlabelled question: {first.get('question')!r}")
                drive.error = "a clarification no label answers"
                break
            reply = replies.pop(0)
            drive.stops.append(f"clarify {reply!r}")
            target, resume = await pending_answer(
                snapshot, "clarification", reply, thread=thread_id, where=where
            )
        else:
            drive.unexpected.append(f"an interrupt of kind {kind!r}")
            drive.error = f"an interrupt of kind {kind!r}"
            break
        payload = Command(resume={target.id: resume})
    else:
        drive.error = f"still waiting after {MAX_STOPS} stops"
    drive.unused = [f"{d.decision} {d.tool}({args_text(d.args)})" for d in decisions]
    drive.unused += [f"clarify {r!r}" for r in replies]
    snapshot = await runtime.graph.aget_state(thread_config(thread_id))
    return dict(snapshot.values), drive


def _case_servers(options: MusterOptions, databases: Mapping[str, Path]) -> Any:
    """The servers config with each database variable handed, through `env`, to every stdio
    server that inherits it, so each case's servers write their own files."""
    from workers.hub.servers_config import StdioServerConfig, inherits

    servers = {}
    for name, server in options.servers.mcp_servers.items():
        if isinstance(server, StdioServerConfig):
            given = {v: str(p) for v, p in databases.items() if inherits(v, server.inherit_env)}
            if given:
                server = server.model_copy(update={"env": {**server.env, **given}})
        servers[name] = server
    return options.servers.model_copy(update={"mcp_servers": servers})


def _owners(options: MusterOptions, databases: Sequence[str]) -> list[str]:
    """`server.*` entries for the stdio servers that write the databases."""
    from workers.hub.servers_config import StdioServerConfig, inherits

    return [
        f"{name}.*"
        for name, server in options.servers.mcp_servers.items()
        if isinstance(server, StdioServerConfig)
        and any(inherits(v, server.inherit_env) for v in databases)
    ]


async def run_case(
    case: LifecycleCase, options: MusterOptions, databases: Sequence[str], workdir: Path
) -> LifecycleResult:
    """One case on a runtime of its own over fresh files in `workdir`."""
    await asyncio.to_thread(workdir.mkdir, parents=True, exist_ok=True)
    files = {var: workdir / f"{var.lower()}.sqlite" for var in databases}
    run_options = replace(
        options, db=workdir / "checkpoints.sqlite", servers=_case_servers(options, files)
    )
    thread_id = f"lc-{case.id}-{uuid.uuid4().hex[:8]}"[:128]
    values: dict[str, Any] = {}
    drive = Drive()
    before: dict[str, Tables] = {}
    after: dict[str, Tables] = {}
    try:
        async with open_runtime(run_options) as runtime:
            await runtime.services.hub.ensure_servers(_owners(run_options, databases))
            before = {v: await asyncio.to_thread(read_tables, p) for v, p in files.items()}
            values, drive = await drive_thread(
                runtime, thread_id, case, trace_dir=workdir / "traces"
            )
            after = {v: await asyncio.to_thread(read_tables, p) for v, p in files.items()}
    except Exception as exc:  # one case's crash is its miss, not the eval's end
        drive.error = f"{type(exc).__name__}: {exc}"
        drive.finished = False
    data = score_data(before, after, case.final.data)
    if drive.error and not after:
        data = (False, data[1], drive.error)
    answer = score_answer(values, case, drive)
    fields = {
        "stops": score_stops(case, drive),
        "data": data,
        "answer": answer,
        "final_state": (
            data[0] and answer[0],
            "data and answer as labelled",
            "right" if data[0] and answer[0] else "wrong",
        ),
    }
    got = values.get("answer")
    return LifecycleResult(case.id, fields, drive, got if isinstance(got, Answer) else None)


async def evaluate_lifecycle(
    pack: DomainPack,
    cases: list[LifecycleCase],
    options: MusterOptions,
    *,
    concurrency: int,
    progress: TextIO | None = None,
) -> list[LifecycleResult]:
    """Drive every case to its end, at most `concurrency` at a time, and score it."""
    databases = eval_databases(pack)
    gate = asyncio.Semaphore(max(1, min(concurrency, MAX_CONCURRENCY, len(cases))))
    results: dict[str, LifecycleResult] = {}
    with (
        tempfile.TemporaryDirectory(prefix="muster-lifecycle-") as tmp,
        isolated_environment(Path(tmp), databases=databases, pinned=eval_env(pack)),
    ):

        async def one(case: LifecycleCase) -> None:
            async with gate:
                result = await run_case(case, options, databases, Path(tmp) / case.id)
            results[case.id] = result
            if progress is not None:
                misses = [name for name, (ok, _, _) in result.fields.items() if not ok]
                status = f"misses: {', '.join(misses)}" if misses else "all right"
                if result.drive.error:
                    status += f" ({result.drive.error})"
                print(
                    f"[{len(results)}/{len(cases)}] {case.id}  {status}", file=progress, flush=True
                )

        await asyncio.gather(*(one(case) for case in cases))
    return [results[case.id] for case in cases]


def targets_met(results: Sequence[LifecycleResult]) -> bool:
    """True when every field with a target reaches it."""
    for name, target in TARGETS.items():
        if target is not None and results:
            if sum(r.fields[name][0] for r in results) / len(results) < target:
                return False
    return True


def print_lifecycle(
    results: Sequence[LifecycleResult], out: TextIO, *, show_misses: bool = True
) -> None:
    """Per field: right, total, share, target; then every miss."""
    print(f"{'field':<12} {'right':>5} {'total':>5} {'percent':>8} {'target':>7}  met", file=out)
    total = len(results)
    for name in FIELDS:
        right = sum(r.fields[name][0] for r in results)
        share = right / total if total else 0.0
        target = TARGETS[name]
        met = "-" if target is None else ("yes" if share >= target else "NO")
        shown = "-" if target is None else f"{target:.0%}"
        print(f"{name:<12} {right:>5} {total:>5} {share:>8.1%} {shown:>7}  {met}", file=out)
    print(f"targets: {'all met' if targets_met(results) else 'NOT all met'}", file=out)
    misses = [
        (r.id, name, expected, got)
        for r in results
        for name, (ok, expected, got) in r.fields.items()
        if not ok and name != "final_state"
    ]
    print(f"\nmisses: {len(misses)}", file=out)
    if show_misses:
        for case_id, name, expected, got in misses:
            print(f"{case_id:<10} {name:<7} expected {expected}\n{'':<18} got      {got}", file=out)


def lifecycle_json(results: Sequence[LifecycleResult]) -> str:
    """The results as `--json` writes them."""
    rows = [
        {
            "id": r.id,
            "error": r.drive.error,
            "stops": r.drive.stops,
            "fields": {
                k: {"right": v[0], "expected": v[1], "got": v[2]} for k, v in r.fields.items()
            },
        }
        for r in results
    ]
    return json.dumps(rows, indent=2) + "\n"
