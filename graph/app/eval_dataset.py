"""Scoring labelled tickets with pydantic-evals: the `Dataset`, its evaluators, and the task
that runs Muster on one ticket.

Each ticket is a `Case` (inputs: the request; expected output: its labels; metadata: its id),
and each field the pack scores (its `EVAL_FIELDS`, a `graph.app.eval_fields.LabelledFields`)
is one `FieldMatch` evaluator returning a bool, so a field's score is the share of cases
whose assertion passed. `HonestStatus` asserts the answer is not
`complete` while an intent is unaddressed. `Dataset.evaluate` runs the cases at most
`concurrency` at a time; a `CaseLifecycle` prints a line to stderr as each finishes.

Every case shares one runtime (the MCP servers start once), opened before `evaluate` and
closed after, over a temporary directory: a fresh checkpoint store, traces, and a fresh file for
each database the pack's servers write (`EVAL_DATABASES`, pointed there before the servers
start), so an eval never touches the user's data; the pack's `EVAL_ENV` (support: the orders
system's date the labels assume) is pinned for the run.
"""

from __future__ import annotations

import tempfile
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from pydantic_evals import Case, Dataset
from pydantic_evals.dataset import increment_eval_metric
from pydantic_evals.evaluators import Evaluator, EvaluatorContext
from pydantic_evals.lifecycle import CaseLifecycle
from pydantic_evals.reporting import EvaluationReport, ReportCase, ReportCaseFailure

from checkpoints.threads import thread_config, waiting_on
from graph.app.eval_env import isolated_environment
from graph.app.eval_fields import (
    HONEST_STATUS,
    EvalTicket,
    LabelledFields,
    Scored,
    complete_while_unaddressed,
    field_matches,
    run_error,
)
from graph.app.options import MusterOptions
from graph.app.runtime import Graph, MusterRuntime, open_runtime, stream_run
from graph.supervisor_spend import thread_cost

EvalReport = EvaluationReport[str, Scored, str]
"""What `Dataset.evaluate` returns for these cases."""
COST_METRIC = "cost_usd"
"""A case's metric: what its models' priced calls cost, in US dollars (workers/cost.py)."""
UNPRICED_METRIC = "unpriced_calls"
"""A case's metric: its model calls the price table does not know."""


def _pair(ctx: EvaluatorContext[str, Scored, str]) -> tuple[Scored, Scored]:
    got, expected = ctx.output, ctx.expected_output
    if not isinstance(got, Scored) or not isinstance(expected, Scored):
        raise TypeError("an eval case compares an outcome with labels")
    return got, expected


@dataclass(repr=False)
class FieldMatch(Evaluator[str, Scored, str]):
    """Did Muster get one labelled field right? (sets compare as sets, actions as (tool, args))"""

    field: str
    """The field it scores; also the assertion's name in the report."""

    def get_default_evaluation_name(self) -> str:
        return self.field

    def evaluate(self, ctx: EvaluatorContext[str, Scored, str]) -> bool:
        got, expected = _pair(ctx)
        return field_matches(got, expected, self.field)


@dataclass(repr=False)
class HonestStatus(Evaluator[str, Scored, str]):
    """Passes unless the answer is `complete` while an intent is unaddressed."""

    def get_default_evaluation_name(self) -> str:
        return HONEST_STATUS

    def evaluate(self, ctx: EvaluatorContext[str, Scored, str]) -> bool:
        got, expected = _pair(ctx)
        return not complete_while_unaddressed(got, expected)


def build_dataset(
    name: str, tickets: list[EvalTicket], fields: LabelledFields
) -> Dataset[str, Scored, str]:
    """One case per ticket, one evaluator per pack field, and the honest-status check."""
    evaluators: list[Evaluator[str, Scored, str]] = [FieldMatch(f) for f in fields.FIELDS]
    evaluators.append(HonestStatus())
    return Dataset[str, Scored, str](
        name=name,
        cases=[
            Case(name=t.id, inputs=t.request, expected_output=t.labels, metadata=t.id)
            for t in tickets
        ],
        evaluators=evaluators,
    )


@dataclass
class Tally:
    """How many cases have finished, of how many."""

    done: int
    total: int


class CaseProgress(CaseLifecycle[str, Scored, str]):
    """Prints one line to `out` as each case finishes: `[12/83] bf-05  misses: kb_ids`."""

    def __init__(
        self, case: Case[str, Scored, str], out: TextIO, tally: Tally, *, detail: bool = True
    ) -> None:
        super().__init__(case)
        self.out, self.tally, self.detail = out, tally, detail

    async def teardown(
        self, result: ReportCase[str, Scored, str] | ReportCaseFailure[str, Scored, str] | None
    ) -> None:
        self.tally.done += 1
        if isinstance(result, ReportCase):
            misses = [name for name, a in result.assertions.items() if a.value is not True]
            misses += [f.name for f in result.evaluator_failures]
            error = run_error(result.output) if isinstance(result.output, Scored) else None
            status = f"error: {error}" if error else f"misses: {', '.join(misses)}"
            status = status if error or misses else "all right"
        else:
            status = f"error: {result.error_message}" if result else "cancelled"
        if not self.detail:  # a frozen split: progress only, never which case missed what
            print(f"[{self.tally.done}/{self.tally.total}]", file=self.out)
            self.out.flush()
            return
        print(f"[{self.tally.done}/{self.tally.total}] {self.case.name}  {status}", file=self.out)
        self.out.flush()


async def run_ticket(
    runtime: MusterRuntime,
    graph: Graph,
    request: str,
    *,
    fields: LabelledFields,
    trace_dir: Path,
) -> Scored:
    """Run one ticket on a new thread of `graph` and read what Muster did. A run that raises is an
    outcome with status `error` (every field it got wrong counts as a miss), not a crash."""
    thread_id = f"eval-{uuid.uuid4().hex[:12]}"
    error: str | None = None
    try:
        await stream_run(
            runtime,
            thread_id,
            {"request": request},
            services=runtime.for_thread(thread_id, trace_dir=trace_dir),
            graph=graph,
        )
    except Exception as exc:  # one ticket's crash is its miss, not the eval's end
        error = f"{type(exc).__name__}: {exc}"
    snapshot = await runtime.graph.aget_state(thread_config(thread_id))
    # The ticket's cost, as the case's metrics (`ScoredTicket.cost_usd`, the report's column).
    cost_usd, unpriced = thread_cost(snapshot.values)  # workers' and supervisor's calls
    increment_eval_metric(COST_METRIC, cost_usd)
    increment_eval_metric(UNPRICED_METRIC, unpriced)
    if error is None and snapshot.next and not snapshot.interrupts:
        error = f"the run stopped before it finished (next: {', '.join(snapshot.next)})"
    return fields.read_outcome(
        snapshot.values, thread_id=thread_id, waiting_for=waiting_on(snapshot), error=error
    )


async def evaluate_tickets(
    name: str,
    tickets: list[EvalTicket],
    options: MusterOptions,
    *,
    fields: LabelledFields,
    concurrency: int,
    progress: TextIO,
    progress_detail: bool = True,
) -> EvalReport:
    """Run every ticket through Muster on one runtime, at most `concurrency` at a time, and
    score it with the pack's `fields`; `options.db` is replaced by a temporary store."""
    dataset = build_dataset(name, tickets, fields)
    tally = Tally(0, len(tickets))
    with (
        tempfile.TemporaryDirectory(prefix="muster-eval-") as tmp,
        isolated_environment(
            Path(tmp),
            databases=fields.EVAL_DATABASES,
            pinned=fields.EVAL_ENV,
        ),
    ):
        workdir = Path(tmp)
        run_options = replace(options, db=workdir / "checkpoints.sqlite")
        async with (
            open_runtime(run_options) as runtime,
            runtime.lanes(min(concurrency, len(tickets))) as lanes,
        ):

            async def muster(request: str) -> Scored:
                graph = await lanes.get()  # a checkpoint connection of its own
                try:
                    return await run_ticket(
                        runtime, graph, request, fields=fields, trace_dir=workdir / "traces"
                    )
                finally:
                    lanes.put_nowait(graph)

            return await dataset.evaluate(
                muster,
                name=name,
                max_concurrency=concurrency,
                progress=False,
                lifecycle=lambda case: CaseProgress(
                    case, progress, tally, detail=progress_detail
                ),
            )
