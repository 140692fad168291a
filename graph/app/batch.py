"""`muster batch`: run a queue of tickets, one thread per ticket, over one set of MCP sessions.

Each line of the tickets file is `{"id": "...", "request": "..."}`. Every ticket runs on its
own thread, `batch-<file stem>-<ticket id>` (DESIGN principle 7: a clean context per job,
and an id a later `--resume` can find again). The whole batch shares one `open_runtime`:
one checkpoint store, one `ToolHub` with one session per server, one model factory; an
`asyncio.Semaphore` bounds how many tickets run at once (`--concurrency`, default 16).

Progress is a single updating line on a terminal and one plain line per finished ticket
when piped. The run ends with a summary (complete / partial / needs_human / failed, and
failed reports per worker and reason) and writes one JSON line per ticket to `--out`
(default `<stem>.answers.jsonl` next to the tickets file). Finished tickets are appended to
that file as they finish, for visibility while the batch runs or after a crash; at the end
the file is rewritten atomically from the thread states, in ticket order, one line per ticket.

If a batch dies mid-queue, `muster batch FILE --resume` looks at each ticket's thread:
done, or waiting on a human → skipped (and counted); in progress or failed → resumed with
`None`; absent → run. Without `--resume` a batch whose threads already exist is refused.

Outcomes (each ticket counts in exactly one):
  needs_human  the thread waits on an approval or a clarification, or the answer needs a person
  failed       no answer (the run raised), or the answer's status is failed
  partial      the answer is partial or degraded
  complete     everything else

Exit code: 0 if every ticket is complete, 4 if any failed, otherwise 3 if any is partial,
degraded or needs a human; 6 if SIGINT/SIGTERM stopped the batch cleanly (resume it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from langgraph.errors import GraphDrained
from langgraph.runtime import RunControl
from langgraph.types import StateSnapshot

from checkpoints.saver import check_db_path, resolve_db_path
from checkpoints.threads import ThreadStatus, status_of, thread_config, waiting_on
from graph.app.runtime import Graph, Runtime, open_runtime, open_store, stream_run
from graph.limits import RunLimits
from graph.planners import Planner, plan_ticket
from graph.planners.llm import make_llm_planner
from workers.contracts import Answer, Report
from workers.errors import ConfigError
from workers.hub import DEFAULT_SERVERS_FILE, ServersConfig, load_servers_config
from workers.models import ModelFactory, load_model_factory

EXIT_OK, EXIT_DEGRADED, EXIT_FAILED, EXIT_DRAINED = 0, 3, 4, 6
"""The same codes as `graph.app.cli` (not imported from there: cli imports this module)."""

DEFAULT_CONCURRENCY = 16
MAX_CONCURRENCY = 1024
TICKET_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
"""Ticket ids become part of a thread id and of a trace file name: no paths, no spaces."""
BAR_WIDTH = 10

Outcome = Literal["complete", "partial", "needs_human", "failed", "unfinished"]
OUTCOMES: tuple[Outcome, ...] = ("complete", "partial", "needs_human", "failed")
"""The finished outcomes, in the order the progress line and summary show them."""


MAX_LANES = 16
"""Checkpoint connections a batch opens at most (see `Runtime.lanes`)."""


class TicketsFileError(ConfigError):
    """The tickets file is missing or malformed; the message names the file and the line."""


@dataclass(frozen=True)
class Ticket:
    """One line of the tickets file."""

    id: str
    request: str
    line: int


@dataclass
class TicketResult:
    """Where one ticket stands, read from its thread (one line of the answers file)."""

    ticket: Ticket
    thread_id: str
    thread_status: ThreadStatus
    outcome: Outcome
    answer: Answer | None
    waiting_for: list[str]
    failures: list[tuple[str, str]] = field(default_factory=list)
    """(worker, reason) of every failed report in the thread, retries included."""
    error: str | None = None
    """Why the run raised, if it did (the thread is then `failed` or unfinished)."""

    def record(self) -> dict[str, Any]:
        """The JSON object written to the answers file."""
        answer = self.answer
        if answer is not None:
            status: str = answer.status
        elif self.waiting_for:
            status = "waiting"
        elif self.outcome == "unfinished":
            status = "unfinished"
        else:
            status = "failed"
        return {
            "id": self.ticket.id,
            "thread_id": self.thread_id,
            "status": status,
            "outcome": self.outcome,
            "degraded": answer.degraded if answer is not None else self.outcome == "failed",
            "needs_human": self.outcome == "needs_human"
            or (answer is not None and answer.needs_human),
            "waiting_for": self.waiting_for,
            "answer_text": answer.text if answer is not None else None,
            "error": self.error,
        }


# ---------------------------------------------------------------------------------------------
# The tickets file


def load_tickets(path: Path) -> list[Ticket]:
    """Read and validate a tickets file; a `TicketsFileError` names the file and the line."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # tolerate a BOM
    except FileNotFoundError:
        raise TicketsFileError(f"tickets file {path} not found") from None
    except IsADirectoryError:
        raise TicketsFileError(f"tickets file {path} is a directory, not a JSONL file") from None
    except UnicodeDecodeError as error:
        raise TicketsFileError(f"tickets file {path} is not UTF-8 text ({error.reason})") from None
    except OSError as error:
        raise TicketsFileError(f"cannot read tickets file {path}: {error.strerror}") from None
    tickets: list[Ticket] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path} line {number}"
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as error:
            raise TicketsFileError(f"{where}: not valid JSON ({error.msg})") from None
        if not isinstance(data, dict):
            raise TicketsFileError(f'{where}: expected an object {{"id": ..., "request": ...}}')
        ticket_id = data.get("id")
        if isinstance(ticket_id, int) and not isinstance(ticket_id, bool):
            ticket_id = str(ticket_id)
        if not isinstance(ticket_id, str) or not TICKET_ID.fullmatch(ticket_id):
            raise TicketsFileError(
                f'{where}: "id" must be 1-64 letters, digits, ".", "_" or "-" '
                f"(got {json.dumps(data.get('id'))})"
            )
        request = data.get("request")
        if not isinstance(request, str) or not request.strip():
            raise TicketsFileError(f'{where}: "request" must be a non-empty string')
        if ticket_id in first_line:
            raise TicketsFileError(
                f'{where}: duplicate id "{ticket_id}" (first on line {first_line[ticket_id]})'
            )
        first_line[ticket_id] = number
        tickets.append(Ticket(id=ticket_id, request=request, line=number))
    if not tickets:
        raise TicketsFileError(f"tickets file {path} has no tickets")
    return tickets


def batch_name(path: Path) -> str:
    """The batch's name, from the file stem, safe inside a thread id."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", path.stem).strip("-") or "tickets"


def batch_thread_id(path: Path, ticket_id: str) -> str:
    """The deterministic thread id of one ticket of one batch file."""
    return f"batch-{batch_name(path)}-{ticket_id}"


def default_out_path(path: Path) -> Path:
    """`<stem>.answers.jsonl` next to the tickets file."""
    return path.with_name(f"{path.stem}.answers.jsonl")


def parse_concurrency(value: object) -> int:
    """--concurrency as a whole number in 1..MAX_CONCURRENCY."""
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ConfigError(f"--concurrency must be a whole number, got {value!r}") from None
    if not 1 <= number <= MAX_CONCURRENCY:
        raise ConfigError(f"--concurrency must be between 1 and {MAX_CONCURRENCY}, got {number}")
    return number


# ---------------------------------------------------------------------------------------------
# Reading a ticket's outcome from its thread


def outcome_of(status: ThreadStatus, answer: Answer | None) -> Outcome:
    """The one bucket a ticket counts in (see the module docstring)."""
    if status == "interrupted":
        return "needs_human"
    if answer is not None and status == "done":
        if answer.status == "failed":
            return "failed"
        if answer.needs_human:
            return "needs_human"
        if answer.status == "partial" or answer.degraded:
            return "partial"
        return "complete"
    if status == "failed":
        return "failed"
    return "unfinished"


def result_from_snapshot(
    ticket: Ticket, thread_id: str, snapshot: StateSnapshot | None, error: str | None = None
) -> TicketResult:
    """A ticket's result from its latest snapshot (None: the thread does not exist)."""
    if snapshot is None or not snapshot.values and not snapshot.next:
        status: ThreadStatus = "new"
        values: dict[str, Any] = {}
    else:
        status = status_of(snapshot)
        values = dict(snapshot.values)
    answer = values.get("answer")
    reports: list[Report] = values.get("reports") or []
    task_errors = [str(t.error) for t in (snapshot.tasks if snapshot else ()) if t.error]
    if error is None and task_errors:
        error = task_errors[0]
    outcome = outcome_of(status, answer)
    if outcome == "unfinished" and error is not None:
        outcome = "failed"  # the run raised before its first checkpoint
    return TicketResult(
        ticket=ticket,
        thread_id=thread_id,
        thread_status=status,
        outcome=outcome,
        answer=answer,
        waiting_for=waiting_on(snapshot) if snapshot is not None else [],
        failures=[(r.worker, r.reason or "unknown") for r in reports if r.status == "failed"],
        error=error,
    )


# ---------------------------------------------------------------------------------------------
# Output


def write_jsonl_atomically(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Replace `path` with these records, one JSON line each, all or nothing."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one record as one write, so a kill leaves whole lines."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")


class BatchProgress:
    """A single updating bar on a terminal; one plain line per finished ticket when piped."""

    def __init__(self, stream: TextIO, total: int) -> None:
        self.stream = stream
        self.total = total
        self.tty = stream.isatty()
        self.counts: Counter[str] = Counter()
        self._bar_shown = False

    @property
    def finished(self) -> int:
        return sum(self.counts[o] for o in OUTCOMES)

    def tally(self) -> str:
        return " ".join(f"{o} {self.counts[o]}" for o in OUTCOMES)

    def line(self, text: str) -> None:
        """A line of its own (the bar, if shown, is redrawn under it)."""
        if self.tty and self._bar_shown:
            self.stream.write("\r\033[K")
        print(text, file=self.stream, flush=True)
        if self.tty and self._bar_shown:
            self._draw()

    def _draw(self) -> None:
        done = self.finished
        filled = BAR_WIDTH * done // self.total if self.total else BAR_WIDTH
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        self.stream.write(f"\r\033[K[{bar}] {done}/{self.total} {self.tally()}")
        self.stream.flush()
        self._bar_shown = True

    def start(self, already: Sequence[TicketResult]) -> None:
        for result in already:
            self.counts[result.outcome] += 1
        if self.tty:
            self._draw()

    def finish(self, result: TicketResult) -> None:
        self.counts[result.outcome] += 1
        if self.tty:
            self._draw()
            return
        detail = f" (waiting for {', '.join(result.waiting_for)})" if result.waiting_for else ""
        if result.error:
            detail += f": {result.error.splitlines()[0][:200]}"
        width = len(str(self.total))
        print(
            f"[{self.finished:>{width}}/{self.total}] {result.ticket.id} {result.outcome}"
            f"{detail}  {result.thread_id}",
            file=self.stream,
            flush=True,
        )

    def close(self) -> None:
        if self.tty and self._bar_shown:
            self.stream.write("\n")
            self.stream.flush()
            self._bar_shown = False


@dataclass
class BatchSummary:
    """What a batch did, for the table, `--json` and the exit code."""

    batch: str
    tickets: int
    ran: int
    resumed: int
    skipped: int
    counts: dict[str, int]
    failures_per_worker: list[dict[str, Any]]
    out: str
    wall_s: float
    drained: bool
    exit_code: int

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def summarize(
    name: str,
    results: Sequence[TicketResult],
    *,
    ran: int,
    resumed: int,
    skipped: int,
    out: Path,
    wall_s: float,
    drained: bool,
) -> BatchSummary:
    """Counts per outcome, failed reports per (worker, reason), and the exit code."""
    counts: Counter[str] = Counter(r.outcome for r in results)
    failures = Counter(f for r in results for f in r.failures)
    if drained or counts["unfinished"]:
        code = EXIT_DRAINED
    elif counts["failed"]:
        code = EXIT_FAILED
    elif (
        counts["partial"]
        or counts["needs_human"]
        or any(r.answer is not None and r.answer.degraded for r in results)
    ):
        code = EXIT_DEGRADED
    else:
        code = EXIT_OK
    keys: tuple[str, ...] = (*OUTCOMES, "unfinished") if counts["unfinished"] else OUTCOMES
    return BatchSummary(
        batch=name,
        tickets=len(results),
        ran=ran,
        resumed=resumed,
        skipped=skipped,
        counts={k: counts[k] for k in keys},
        failures_per_worker=[
            {"worker": worker, "reason": reason, "count": count}
            for (worker, reason), count in sorted(failures.items())
        ],
        out=str(out),
        wall_s=round(wall_s, 3),
        drained=drained,
        exit_code=code,
    )


def print_summary(summary: BatchSummary, stream: TextIO) -> None:
    """The summary table."""
    lines = [
        f"batch {summary.batch}: {summary.tickets} tickets in {summary.wall_s:.1f}s "
        f"({summary.ran} new, {summary.resumed} resumed, {summary.skipped} already finished)",
        "",
        f"  {'outcome':<12} {'tickets':>7}",
    ]
    lines += [f"  {k:<12} {v:>7}" for k, v in summary.counts.items()]
    lines += ["", "failed reports per worker:"]
    if summary.failures_per_worker:
        lines.append(f"  {'worker':<12} {'reason':<12} {'count':>5}")
        lines += [
            f"  {f['worker']:<12} {f['reason']:<12} {f['count']:>5}"
            for f in summary.failures_per_worker
        ]
    else:
        lines.append("  (none)")
    lines += ["", f"answers: {summary.out}"]
    print("\n".join(lines), file=stream, flush=True)


# ---------------------------------------------------------------------------------------------
# Running


@dataclass
class BatchPlan:
    """What each ticket needs: skip (finished), resume (None), or run (its request)."""

    skip: list[TicketResult] = field(default_factory=list)
    resume: list[Ticket] = field(default_factory=list)
    run: list[Ticket] = field(default_factory=list)


async def _existing_threads(
    db: Path, db_exists: bool, path: Path, tickets: Sequence[Ticket]
) -> dict[str, StateSnapshot]:
    """The snapshots of this batch's threads that already exist (no servers start)."""
    if not db_exists:
        return {}
    found: dict[str, StateSnapshot] = {}
    async with open_store(db) as (graph, saver):
        for ticket in tickets:
            thread_id = batch_thread_id(path, ticket.id)
            if await saver.aget_tuple(thread_config(thread_id)) is not None:
                found[ticket.id] = await graph.aget_state(thread_config(thread_id))
    return found


def plan_batch(
    path: Path, tickets: Sequence[Ticket], existing: dict[str, StateSnapshot], resume: bool
) -> BatchPlan:
    """Sort the tickets by what their threads need (see the module docstring); refuse a batch
    that already has threads unless `resume`, and a ticket whose text changed since."""
    plan = BatchPlan()
    if existing and not resume:
        example = batch_thread_id(path, next(iter(existing)))
        raise ConfigError(
            f"batch {batch_name(path)} already has {len(existing)} of {len(tickets)} threads "
            f"in this store (e.g. {example}); finish it with `muster batch {path} --resume`, "
            "or use another --db"
        )
    for ticket in tickets:
        snapshot = existing.get(ticket.id)
        if snapshot is None:
            plan.run.append(ticket)
            continue
        stored = snapshot.values.get("request")
        if stored is not None and stored != ticket.request:
            raise ConfigError(
                f"{path} line {ticket.line}: ticket {ticket.id} differs from the request its "
                f"thread {batch_thread_id(path, ticket.id)} was started with; give the changed "
                "ticket a new id"
            )
        status = status_of(snapshot)
        if status == "new":  # a checkpoint but no state and nothing next: start it afresh
            plan.run.append(ticket)
        elif status in ("done", "interrupted"):
            plan.skip.append(
                result_from_snapshot(ticket, batch_thread_id(path, ticket.id), snapshot)
            )
        else:
            plan.resume.append(ticket)
    return plan


async def _read_result(
    runtime_graph: Any, path: Path, ticket: Ticket, error: str | None = None
) -> TicketResult:
    thread_id = batch_thread_id(path, ticket.id)
    snapshot = await runtime_graph.aget_state(thread_config(thread_id))
    return result_from_snapshot(ticket, thread_id, snapshot, error)


async def run_batch(
    runtime: Runtime,
    path: Path,
    plan: BatchPlan,
    *,
    concurrency: int,
    progress: BatchProgress,
    out: Path | None = None,
    controls: set[RunControl] | None = None,
    stop: asyncio.Event | None = None,
    lanes: asyncio.Queue[Graph] | None = None,
) -> tuple[list[TicketResult], bool]:
    """Run and resume the planned tickets on `runtime`, at most `concurrency` at a time.

    Returns the results of the tickets it ran and whether a drain stopped it. Each finished
    ticket is appended to `out` (if given) as soon as its thread is read back. Every run's
    `RunControl` is in `controls` while it runs; once `stop` is set no new ticket starts.
    """
    semaphore = asyncio.Semaphore(concurrency)
    lanes = lanes or asyncio.Queue()
    if lanes.empty():
        lanes.put_nowait(runtime.graph)
    live = controls if controls is not None else set()
    drained = False
    results: list[TicketResult] = []

    async def one(ticket: Ticket, resume: bool) -> None:
        nonlocal drained
        async with semaphore:
            if drained or (stop is not None and stop.is_set()):
                return
            thread_id = batch_thread_id(path, ticket.id)
            control = RunControl()
            live.add(control)
            error: str | None = None
            graph = await lanes.get()
            try:
                await stream_run(
                    runtime,
                    thread_id,
                    None if resume else {"request": ticket.request},
                    services=runtime.for_thread(thread_id),
                    control=control,
                    graph=graph,
                )
            except GraphDrained:
                drained = True
                return
            except Exception as exc:  # one ticket's crash must not stop the queue
                error = f"{type(exc).__name__}: {exc}"
            finally:
                live.discard(control)
                lanes.put_nowait(graph)
            try:
                result = await _read_result(runtime.graph, path, ticket, error)
            except Exception as exc:  # the store failed us: say so for this ticket, go on
                reason = f"reading the thread back failed: {type(exc).__name__}: {exc}"
                result = result_from_snapshot(ticket, thread_id, None, error or reason)
            results.append(result)
            if out is not None and result.outcome != "unfinished":
                append_jsonl(out, result.record())
            progress.finish(result)

    jobs = [(t, True) for t in plan.resume] + [(t, False) for t in plan.run]
    await asyncio.gather(*(one(ticket, resume) for ticket, resume in jobs))
    return results, drained


def _install_signal_handlers(
    controls: set[RunControl], stop: asyncio.Event, progress: BatchProgress
) -> list[int]:
    """SIGINT/SIGTERM: tickets in flight finish their superstep and are checkpointed, no new
    ticket starts. A second signal stops at once."""
    loop = asyncio.get_running_loop()
    installed: list[int] = []

    def drain(signum: int) -> None:
        if stop.is_set():
            loop.remove_signal_handler(signum)
            os.kill(os.getpid(), signum)
            return
        stop.set()
        progress.line(
            f"{signal.Signals(signum).name}: finishing the tickets in flight, then stopping"
        )
        for control in list(controls):
            control.request_drain(signal.Signals(signum).name)

    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(signum, drain, signum)
        except (NotImplementedError, RuntimeError):  # not the main thread, or no support
            continue
        installed.append(signum)
    return installed


# ---------------------------------------------------------------------------------------------
# The subcommand


def add_batch_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    parents: list[argparse.ArgumentParser],
) -> None:
    """Register `muster batch` (the parents give --db, --servers, --model and --json)."""
    batch = subparsers.add_parser(
        "batch",
        parents=parents,
        help="run a JSONL file of tickets, one thread per ticket",
        description='Run every ticket of a JSONL file ({"id": ..., "request": ...} per line) '
        "on its own thread, sharing one set of MCP server sessions. Exit 0 if every ticket is "
        "complete, 3 if any is partial, degraded or needs a human, 4 if any failed, 6 if "
        "stopped by a signal (continue with --resume).",
    )
    batch.add_argument("tickets", help="the tickets file (JSONL)")
    batch.add_argument(
        "--concurrency",
        default=DEFAULT_CONCURRENCY,
        metavar="N",
        help=f"tickets running at once (default: {DEFAULT_CONCURRENCY})",
    )
    batch.add_argument(
        "--resume",
        action="store_true",
        help="finish a batch that stopped: skip finished or waiting tickets, resume the rest",
    )
    batch.add_argument(
        "--out",
        metavar="PATH",
        help="answers file, one JSON line per ticket (default: <stem>.answers.jsonl next to "
        "the tickets file)",
    )


def _out_path(args: argparse.Namespace, tickets_path: Path) -> Path:
    out = Path(args.out).expanduser() if getattr(args, "out", None) else None
    out = out or default_out_path(tickets_path)
    if out.resolve() == tickets_path.resolve():
        raise ConfigError(f"--out {out} is the tickets file itself; choose another path")
    if out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file path")
    if not out.parent.is_dir():
        raise ConfigError(f"--out {out}: folder {out.parent} does not exist")
    if not os.access(out.parent, os.W_OK):
        raise ConfigError(f"--out {out}: folder {out.parent} is not writable")
    return out


@dataclass(frozen=True)
class BatchOptions:
    """`muster batch` arguments, validated before any server starts."""

    path: Path
    tickets: list[Ticket]
    out: Path
    concurrency: int
    resume: bool
    db: Path
    db_exists: bool
    servers: ServersConfig
    models: ModelFactory
    planner: Planner
    limits: RunLimits
    as_json: bool


def batch_options(args: argparse.Namespace) -> BatchOptions:
    """Validate the arguments and read the tickets file (raises `ConfigError`, exit 2)."""
    concurrency = parse_concurrency(getattr(args, "concurrency", DEFAULT_CONCURRENCY))
    path = Path(args.tickets).expanduser()
    tickets = load_tickets(path)
    servers = load_servers_config(
        Path(args.servers) if getattr(args, "servers", None) else DEFAULT_SERVERS_FILE
    )
    db = resolve_db_path(getattr(args, "db", None))
    check_db_path(db)
    model_name = getattr(args, "model", None) or "offline"
    models = load_model_factory(model_name)
    planner: Planner = plan_ticket
    if getattr(args, "planner", "rules") == "llm":
        if model_name.startswith("offline"):
            raise ConfigError(
                "--planner llm needs a provider model, e.g. --model openai:gpt-4o-mini"
            )
        planner = make_llm_planner(models("planner"))
    return BatchOptions(
        path=path,
        tickets=tickets,
        out=_out_path(args, path),
        concurrency=concurrency,
        resume=bool(getattr(args, "resume", False)),
        db=db,
        db_exists=db.exists(),
        servers=servers,
        models=models,
        planner=planner,
        limits=RunLimits.from_options(
            max_steps=getattr(args, "max_steps", None),
            max_tokens=getattr(args, "max_tokens", None),
            deadline_s=getattr(args, "deadline", None),
        ),
        as_json=bool(getattr(args, "json", False)),
    )


async def cmd_batch(args: argparse.Namespace) -> int:
    """`muster batch FILE [--concurrency N] [--resume] [--out PATH]`; returns the exit code."""
    started = time.monotonic()
    opts = batch_options(args)
    path, tickets, out = opts.path, opts.tickets, opts.out
    name = batch_name(path)
    stream = sys.stderr if opts.as_json else sys.stdout

    existing = await _existing_threads(opts.db, opts.db_exists, path, tickets)
    plan = plan_batch(path, tickets, existing, opts.resume)
    progress = BatchProgress(stream, len(tickets))
    todo = len(plan.run) + len(plan.resume)
    progress.line(
        f"batch {name}: {len(tickets)} tickets, {len(plan.skip)} already finished, "
        f"{len(plan.resume)} to resume, {len(plan.run)} to run, concurrency {opts.concurrency}"
    )
    # The answers file shows the finished tickets at once; later ones are appended.
    by_id = {r.ticket.id: r for r in plan.skip}
    write_jsonl_atomically(out, (by_id[t.id].record() for t in tickets if t.id in by_id))
    progress.start(plan.skip)
    drained = False
    try:
        if todo:
            controls: set[RunControl] = set()
            stop = asyncio.Event()
            async with (
                open_runtime(
                    db=opts.db,
                    servers=opts.servers,
                    models=opts.models,
                    planner=opts.planner,
                    limits=opts.limits,
                ) as rt,
                rt.lanes(min(opts.concurrency, todo, MAX_LANES)) as lanes,
            ):
                installed = _install_signal_handlers(controls, stop, progress)
                try:
                    ran, drained = await run_batch(
                        rt,
                        path,
                        plan,
                        concurrency=opts.concurrency,
                        progress=progress,
                        out=out,
                        controls=controls,
                        stop=stop,
                        lanes=lanes,
                    )
                finally:
                    loop = asyncio.get_running_loop()
                    for signum in installed:
                        loop.remove_signal_handler(signum)
                drained = drained or stop.is_set()
                errors = {r.ticket.id: r.error for r in ran if r.error}
                final = [await _read_result(rt.graph, path, t, errors.get(t.id)) for t in tickets]
        else:
            async with open_store(opts.db) as (graph, _saver):
                final = [await _read_result(graph, path, t) for t in tickets]
    finally:
        progress.close()
    write_jsonl_atomically(out, (r.record() for r in final))
    summary = summarize(
        name,
        final,
        ran=len(plan.run),
        resumed=len(plan.resume),
        skipped=len(plan.skip),
        out=out,
        wall_s=time.monotonic() - started,
        drained=drained,
    )
    if opts.as_json:
        print(json.dumps(summary.as_dict(), indent=2))
    else:
        print_summary(summary, sys.stdout)
    if summary.exit_code == EXIT_DRAINED:
        print(
            f"stopped before every ticket finished; state is saved. Continue with: "
            f"muster batch {path} --resume",
            file=sys.stderr,
        )
    return summary.exit_code
