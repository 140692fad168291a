"""`muster replay THREAD [--strict]` and `muster replay --batch FILE`: re-run recorded
threads on the current code, serving every model and tool call from their recordings, and
report what the code change moved.

Each thread's request runs again on a fresh thread, `replay-<thread>`, in a temporary store
of its own (a temporary SQLite file and trace folder, removed afterwards): the user's store
and its threads are only read, and a replay never collides with a thread there. The current
code plans, dispatches, recovers, verifies and answers; the models (the workers', the LLM
planner's and the answer writer's) answer from the recording by request digest and the hub
answers from it by tool and arguments (`graph.app.replay_record`), so no write is executed
and no backend is asked for anything already recorded. A request the new code makes that
the recording lacks is flagged (and served by the `--model` model, or read live for a tool);
under `--strict` it is an error.

The original is compared as of its first stop: a thread later approved or answered by a
human is compared at the checkpoint where it first waited, because the replay stops there
too (it never answers for a human). Differences are scored per field with pydantic-evals
(`graph.app.replay_diff`). Exit 0 when nothing differs, 1 when something does, 2 for bad
input or, under `--strict`, a call the recording lacks.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from langgraph.types import StateSnapshot
from pydantic_evals import Case, Dataset
from pydantic_evals.reporting import EvaluationReport

from checkpoints.threads import status_of, thread_config
from graph.app.batch_tickets import batch_name, batch_thread_id, load_tickets
from graph.app.flags import REPLAY_CONCURRENCY
from graph.app.options import MusterOptions
from graph.app.replay_diff import (
    FIELDS,
    RunView,
    SameAs,
    differences,
    run_view,
    with_supervisor_tokens,
)
from graph.app.replay_record import (
    REPLAYING,
    Recording,
    ReplayHub,
    ThreadReplay,
    load_recording,
    replay_factory,
    replay_planner,
)
from graph.app.run_services import open_services
from graph.app.runtime import (
    Graph,
    MusterRuntime,
    compiled_graph,
    open_store,
    stream_run_snapshot,
    with_checkpointer,
)
from graph.trace import trace_path
from workers.contracts import CHECKPOINTED_TYPES
from workers.errors import MusterError

ReplayReport = EvaluationReport[str, RunView, str]
"""What `Dataset.evaluate` returns for replayed threads."""


@dataclass(frozen=True)
class ReplayTarget:
    """One recorded thread to replay, read before anything runs."""

    name: str
    """How the summary names it: the ticket id of a batch, else the thread id."""
    thread_id: str
    """The original thread (only read)."""
    request: str
    """Its request, run again."""
    original: RunView
    """The original, as of its first stop."""
    recording: Recording
    """Its recorded model and tool calls."""


def replay_thread_id(thread_id: str) -> str:
    """The replay's thread in the temporary store."""
    return f"replay-{thread_id}"[:128]


async def first_stop(graph: Graph, thread_id: str, *, runs: int) -> StateSnapshot:
    """The thread as its first run left it: the latest snapshot for a thread run once, else
    the first that waited for a human (a later run answered it), else the latest."""
    config = thread_config(thread_id)
    latest = await graph.aget_state(config)
    if runs <= 1:
        return latest
    history = [s async for s in graph.aget_state_history(config)]
    return next((s for s in reversed(history) if s.interrupts), latest)


async def read_targets(
    options: MusterOptions, threads: Sequence[tuple[str, str]]
) -> list[ReplayTarget]:
    """Each (name, thread id) read from `options.db` with its recording; an unknown thread or
    one with nothing recorded is bad input, named."""
    targets = []
    async with open_store(options.db) as (graph, saver):
        for name, thread_id in threads:
            if await saver.aget_tuple(thread_config(thread_id)) is None:
                raise MusterError(f"no thread {thread_id} in {options.db}; see `muster threads`")
            path = trace_path(thread_id)
            if not path.exists():  # a thread that made no call records nothing: that is fine
                raise MusterError(
                    f"thread {thread_id} has no trace at {path}: a run records its model and "
                    "tool calls there (set MUSTER_TRACE_DIR to where it ran)"
                )
            recording = load_recording(path)
            if recording.still_sealed:
                print(
                    f"muster replay: warning: {recording.still_sealed} line(s) of {path} are "
                    "redacted and their originals sealed under a key not at hand (set "
                    "MUSTER_ENCRYPTION_KEYS or MUSTER_SEAL_KEY as the run had them): they are "
                    "served redacted",
                    file=sys.stderr,
                )
            snapshot = await first_stop(graph, thread_id, runs=len(recording.runs))
            request = str(snapshot.values.get("request") or "")
            waiting = status_of(snapshot) == "interrupted"
            original = with_supervisor_tokens(
                run_view(dict(snapshot.values), waiting=waiting), recording.supervisor_tokens
            )
            targets.append(ReplayTarget(name, thread_id, request, original, recording))
    return targets


@asynccontextmanager
async def open_replay_runtime(
    options: MusterOptions, workdir: Path
) -> AsyncIterator[MusterRuntime]:
    """A runtime over a fresh store in `workdir`, whose hub is a `ReplayHub` (servers start on
    demand, for their catalogue; calls are answered from the recordings)."""
    store = replace(options, db=workdir / "replay.sqlite").store
    async with (
        store.open_saver(allowed_types=CHECKPOINTED_TYPES) as saver,
        open_services(options, audit_db=store, hub_type=ReplayHub) as services,
    ):
        graph = with_checkpointer(compiled_graph(), saver)
        yield MusterRuntime(graph=graph, saver=saver, services=services, store=store)


async def replay_one(
    runtime: MusterRuntime,
    graph: Graph,
    target: ReplayTarget,
    *,
    strict: bool,
    trace_dir: Path,
    renames: dict[str, str],
) -> RunView:
    """Run `target`'s request on a fresh thread, served from its recording; its `RunView`,
    with the replay's thread ids written as the originals' (`renames`)."""
    replay = ThreadReplay(target.recording, strict=strict)
    thread_id = replay_thread_id(target.thread_id)
    services = replace(
        runtime.for_thread(thread_id, trace_dir=trace_dir),
        models=replay_factory(replay, fallback=runtime.services.models),
        planner=replay_planner(runtime.services.planner, replay),
    )
    token = REPLAYING.set(replay)  # the node tasks of this run inherit it
    try:
        snapshot = await stream_run_snapshot(
            runtime, thread_id, {"request": target.request}, services=services, graph=graph
        )
        view = run_view(
            dict(snapshot.values),
            waiting=status_of(snapshot) == "interrupted",
            renames=renames,
        )
        replayed = trace_path(thread_id, trace_dir)
        if replayed.exists():
            view = with_supervisor_tokens(view, load_recording(replayed).supervisor_tokens)
    except Exception as exc:  # one thread's crash is its difference, not the replay's end
        view = RunView(error=f"{type(exc).__name__}: {exc}")
    finally:
        REPLAYING.reset(token)
    return view.model_copy(
        update={"model_misses": replay.model_misses, "unrecorded_calls": replay.unrecorded_calls}
    )


async def replay_targets(
    options: MusterOptions,
    targets: Sequence[ReplayTarget],
    *,
    name: str,
    strict: bool = False,
    concurrency: int = REPLAY_CONCURRENCY,
) -> ReplayReport:
    """Replay every target on one replay runtime, at most `concurrency` at a time, and score
    each compared field with pydantic-evals (one case per thread)."""
    by_name = {t.name: t for t in targets}
    renames = {replay_thread_id(t.thread_id): t.thread_id for t in targets}
    dataset = Dataset[str, RunView, str](
        name=name,
        cases=[
            Case(name=t.name, inputs=t.name, expected_output=t.original, metadata=t.thread_id)
            for t in targets
        ],
        evaluators=[SameAs(field) for field in FIELDS],
    )
    with tempfile.TemporaryDirectory(prefix="muster-replay-") as tmp:
        workdir = Path(tmp)
        async with (
            open_replay_runtime(options, workdir) as runtime,
            runtime.lanes(max(1, min(concurrency, len(targets)))) as lanes,
        ):

            async def task(case: str) -> RunView:
                graph = await lanes.get()  # a checkpoint connection of its own
                try:
                    return await replay_one(
                        runtime,
                        graph,
                        by_name[case],
                        strict=strict,
                        trace_dir=workdir / "traces",
                        renames=renames,
                    )
                finally:
                    lanes.put_nowait(graph)

            return await dataset.evaluate(
                task, name=name, max_concurrency=concurrency, progress=False
            )


@dataclass
class ReplaySummary:
    """What a replay found, per thread, in the targets' order."""

    changed: dict[str, list[str]]
    """Thread (or ticket) name → the lines describing its differences (empty: unchanged)."""
    flagged: dict[str, list[str]]
    """Name → model requests and tool calls the recording lacked."""
    kept: dict[str, int]
    """Field → how many threads kept it."""
    total: int
    """Threads replayed."""

    @property
    def differing(self) -> list[str]:
        """The names whose replay differs from the original."""
        return [name for name, lines in self.changed.items() if lines]


def summarize(report: ReplayReport, targets: Sequence[ReplayTarget]) -> ReplaySummary:
    """The report read per thread: its differences and what its recording lacked."""
    cases = {case.name: case for case in report.cases}
    changed: dict[str, list[str]] = {}
    flagged: dict[str, list[str]] = {}
    kept: dict[str, int] = {field: 0 for field in FIELDS}
    for target in targets:
        case = cases.get(target.name)
        got = case.output if case is not None else None
        if isinstance(got, RunView):  # a failed replay too: a miss under --strict fails it
            flagged[target.name] = [f"model request {d} not recorded" for d in got.model_misses] + [
                f"tool call {c} not recorded" for c in got.unrecorded_calls
            ]
        if not isinstance(got, RunView) or got.error:
            why = got.error if isinstance(got, RunView) else "the replay did not run"
            changed[target.name] = [f"replay failed: {why}"]
            continue
        lines = []
        for difference in differences(target.original, got):
            lines.append(f"{difference.name}:")
            lines += [f"  {line}" for line in difference.lines]
        changed[target.name] = lines
        for field in FIELDS:
            assertion = case.assertions.get(field) if case is not None else None
            kept[field] += bool(assertion is not None and assertion.value is True)
    return ReplaySummary(changed, flagged, kept, len(targets))


def print_summary(summary: ReplaySummary, *, out: TextIO) -> None:
    """Each thread's differences (or `same`), what its recording lacked, then per field how
    many threads kept it."""
    for name, lines in summary.changed.items():
        flags = summary.flagged.get(name) or []
        print(f"{name}  {'DIFFERS' if lines else 'same'}", file=out)
        for line in lines + [f"flag: {f}" for f in flags]:
            print(f"    {line}", file=out)
    print(f"\n{'field':<14}{'kept':>6}{'total':>7}", file=out)
    for field in FIELDS:
        print(f"{field:<14}{summary.kept[field]:>6}{summary.total:>7}", file=out)
    flagged = sum(1 for f in summary.flagged.values() if f)
    print(
        f"threads with differences: {len(summary.differing)} of {summary.total}"
        f"; with calls not in the recording: {flagged}",
        file=out,
    )


def replay_threads(args: argparse.Namespace) -> tuple[str, list[tuple[str, str]]]:
    """The replay's name and its (name, thread id) pairs, from `THREAD` or `--batch FILE`."""
    if args.batch:
        path = Path(args.batch)
        tickets = load_tickets(path)
        return f"replay-{batch_name(path)}", [(t.id, batch_thread_id(path, t.id)) for t in tickets]
    if not args.thread:
        raise MusterError("muster replay: give a THREAD, or --batch FILE")
    return f"replay-{args.thread}", [(args.thread, args.thread)]


async def cmd_replay(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """`muster replay`: see the module docstring for what it does and its exit codes."""
    out = out or sys.stdout
    options = MusterOptions.from_args(args)
    name, threads = replay_threads(args)
    targets = await read_targets(options, threads)
    report = await replay_targets(
        options, targets, name=name, strict=args.strict, concurrency=args.concurrency
    )
    summary = summarize(report, targets)
    print_summary(summary, out=out)
    if args.strict and any(summary.flagged.values()):
        print("muster replay: --strict: calls the recording lacks (see flag: lines)", file=out)
        return 2
    return 1 if summary.differing else 0
