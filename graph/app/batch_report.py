"""What `muster batch` shows and writes: the progress line, the summary, the answers file.

Progress is a single updating line on a terminal and one plain line per finished ticket when
piped. The run ends with a summary (complete / partial / needs_human / failed with what each
cost in money, the total, and failed reports per worker and reason) and its exit code: 0 if
every ticket is complete, 4 if any failed, otherwise 3 if any is partial, degraded or needs a
human; 6 if SIGINT/SIGTERM stopped the batch cleanly (resume it). The answers file holds one
JSON line per ticket (with its cost): appended as tickets finish, rewritten atomically in
ticket order at the end.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from graph.app.batch_outcomes import OUTCOMES, TicketResult
from graph.app.hints import NOTHING, Carried
from graph.app.options import ExitCode
from graph.app.render import waiting_lines
from graph.trace import DEFAULT_TRACE_DIR

BAR_WIDTH = 10
"""Characters in the progress bar."""


def default_out_path(path: Path, store: Path | str) -> Path:
    """`<stem>.answers.jsonl` next to the checkpoint store that holds the batch's threads
    (a SQLite file's folder; `var/` of the project for PostgreSQL), never next to the
    tickets file: that is often a folder of the repository (`examples/`)."""
    folder = store.parent if isinstance(store, Path) else DEFAULT_TRACE_DIR.parent
    return folder / f"{path.stem}.answers.jsonl"


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
    exit_code: ExitCode
    unfinished: int = 0
    """Tickets not finished when a signal stopped the batch (never started, or mid-run)."""
    waiting: list[dict[str, Any]] = field(default_factory=list)
    """Per ticket that needs a human: its thread and one line per thing it waits for, each
    with the command that answers it."""
    cost_usd: float = 0.0
    """What every ticket's priced model calls cost, in US dollars (workers/cost.py)."""
    cost_per_outcome: dict[str, float] = field(default_factory=dict)
    """The same, per outcome (the summary table's cost column)."""
    unpriced_calls: int = 0
    """Model calls the price table does not know, over every ticket (not in `cost_usd`)."""

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
    carried: Carried = NOTHING,
) -> BatchSummary:
    """Counts per outcome, failed reports per (worker, reason), what waits for a human (with
    commands carrying the options in force), and the exit code. `ran` and `resumed` count
    the tickets that finished this time: an unfinished one is counted as unfinished."""
    counts: Counter[str] = Counter(r.outcome for r in results)
    failures = Counter(f for r in results for f in r.failures)
    if drained or counts["unfinished"]:
        code = ExitCode.DRAINED
    elif counts["failed"]:
        code = ExitCode.FAILED
    elif (
        counts["partial"]
        or counts["needs_human"]
        or any(r.answer is not None and r.answer.degraded for r in results)
    ):
        code = ExitCode.DEGRADED
    else:
        code = ExitCode.OK
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
        unfinished=counts["unfinished"],
        cost_usd=round(sum(r.cost_usd for r in results), 6),
        cost_per_outcome={
            k: round(sum(r.cost_usd for r in results if r.outcome == k), 6) for k in keys
        },
        unpriced_calls=sum(r.unpriced_calls for r in results),
        waiting=[
            {"id": r.ticket.id, "thread_id": r.thread_id, "waiting": _waits(r, carried)}
            for r in results
            if r.outcome == "needs_human"
        ],
    )


def _waits(result: TicketResult, carried: Carried) -> list[str]:
    """What a ticket that needs a human waits for, each with the command that answers it."""
    if result.pending_approvals or result.pending_questions:
        return waiting_lines(
            result.thread_id, result.pending_approvals, result.pending_questions, carried
        )
    show = carried.command("show", result.thread_id, run=False)
    return [f"the answer needs a person to take the ticket over; details: {show}"]


def _dollars(usd: float) -> str:
    return f"${usd:.4f}"


def print_summary(summary: BatchSummary, stream: TextIO) -> None:
    """The summary table."""
    unfinished = f", {summary.unfinished} unfinished" if summary.unfinished else ""
    lines = [
        f"batch {summary.batch}: {summary.tickets} tickets in {summary.wall_s:.1f}s "
        f"({summary.ran} new, {summary.resumed} resumed, {summary.skipped} already finished"
        f"{unfinished})",
        "",
        f"  {'outcome':<12} {'tickets':>7} {'cost':>10}",
    ]
    lines += [
        f"  {k:<12} {v:>7} {_dollars(summary.cost_per_outcome.get(k, 0.0)):>10}"
        for k, v in summary.counts.items()
    ]
    lines.append(f"  {'total':<12} {summary.tickets:>7} {_dollars(summary.cost_usd):>10}")
    if summary.unpriced_calls:
        lines.append(
            f"  ({summary.unpriced_calls} model call(s) the price table does not know: "
            "not in the cost)"
        )
    lines += ["", "failed reports per worker:"]
    if summary.failures_per_worker:
        lines.append(f"  {'worker':<12} {'reason':<12} {'count':>5}")
        lines += [
            f"  {f['worker']:<12} {f['reason']:<12} {f['count']:>5}"
            for f in summary.failures_per_worker
        ]
    else:
        lines.append("  (none)")
    if summary.waiting:
        lines += ["", "waiting for a human:"]
        for ticket in summary.waiting:
            lines += [f"  {ticket['id']} ({ticket['thread_id']}): {w}" for w in ticket["waiting"]]
    lines += ["", f"answers: {summary.out}"]
    print("\n".join(lines), file=stream, flush=True)
