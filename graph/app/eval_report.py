"""What `muster eval` reports: per-field scores against the targets, the tickets marked
`complete` while an intent is unaddressed, and a table of every miss.

`scored_tickets` turns the pydantic-evals report into one `ScoredTicket` per labelled ticket
(a case that failed outright counts as wrong on every field, so no ticket drops out of the
totals); `summarize_eval` counts them; `print_eval` and `eval_json` show them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from graph.app.eval_fields import (
    HONEST_STATUS,
    EvalTicket,
    LabelledFields,
    Measure,
    Scored,
    complete_while_unaddressed,
    run_error,
    show_field,
)

if TYPE_CHECKING:  # pydantic-evals is imported only when an eval runs (graph/app/eval.py)
    from pydantic_evals.reporting import EvaluationReport


@dataclass(frozen=True)
class ScoredTicket:
    """One ticket's result: what was expected, what Muster did, and which fields match."""

    id: str
    expected: Scored
    got: Scored | None
    """None when the case failed before it produced an outcome (`error` says why)."""
    right: dict[str, bool]
    """Per scored field, in table order: whether Muster got it right."""
    complete_while_unaddressed: bool
    error: str | None = None
    language: str | None = None
    """The ticket's language, when the dataset names one."""
    cost_usd: float = 0.0
    """What its models' priced calls cost (workers/cost.py), in US dollars."""
    unpriced_calls: int = 0
    """Its model calls the price table does not know: not priced, never counted as free."""

    def record(self) -> dict[str, Any]:
        """The ticket as the `--json` file has it."""
        return {
            "id": self.id,
            "language": self.language,
            "cost_usd": round(self.cost_usd, 6),
            "unpriced_calls": self.unpriced_calls,
            "all_right": all(self.right.values()),
            "right": self.right,
            "complete_while_unaddressed": self.complete_while_unaddressed,
            "error": self.error,
            "expected": self.expected.model_dump(mode="json"),
            "got": self.got.model_dump(mode="json") if self.got else None,
        }


def scored_tickets(
    report: EvaluationReport[str, Scored, str],
    tickets: list[EvalTicket],
    fields: LabelledFields,
) -> list[ScoredTicket]:
    """One `ScoredTicket` per ticket, in file order. A missing or failed assertion is a miss."""
    cases = {case.name: case for case in report.cases}
    failures = {failure.name: failure.error_message for failure in report.failures}
    scored = []
    for ticket in tickets:
        case = cases.get(ticket.id)
        if case is None or not isinstance(case.output, Scored):
            error = failures.get(ticket.id, "the case was not evaluated")
            wrong = dict.fromkeys(fields.FIELDS, False)
            scored.append(
                ScoredTicket(ticket.id, ticket.labels, None, wrong, False, error, ticket.language)
            )
            continue
        passed = {name: result.value is True for name, result in case.assertions.items()}
        metrics = case.metrics or {}
        scored.append(
            ScoredTicket(
                id=ticket.id,
                expected=ticket.labels,
                got=case.output,
                right={field: passed.get(field, False) for field in fields.FIELDS},
                complete_while_unaddressed=not passed[HONEST_STATUS]
                if HONEST_STATUS in passed
                else complete_while_unaddressed(case.output, ticket.labels),
                error=run_error(case.output),
                language=ticket.language,
                cost_usd=float(metrics.get("cost_usd", 0.0)),
                unpriced_calls=int(metrics.get("unpriced_calls", 0)),
            )
        )
    return scored


@dataclass(frozen=True)
class FieldScore:
    """How often one field was right, and whether that meets its target."""

    field: str
    right: int
    total: int
    target: float | None

    @property
    def share(self) -> float:
        return self.right / self.total if self.total else 0.0

    @property
    def met(self) -> bool | None:
        """None when the field has no target."""
        return None if self.target is None else self.share >= self.target - 1e-9


@dataclass(frozen=True)
class EvalSummary:
    """The per-field scores, the overall score and the honesty count of one eval."""

    fields: list[FieldScore]
    overall: FieldScore
    """Tickets with every field right."""
    complete_while_unaddressed: list[str]
    """Ids of tickets marked complete while an intent is unaddressed (target: none)."""
    measures: list[Measure]
    """The pack's own measures (its `EVAL_FIELDS.MEASURES`), if it has any."""
    cost_usd: float = 0.0
    """What every ticket's priced model calls cost, in US dollars."""
    unpriced_calls: int = 0
    """Model calls the price table does not know, over every ticket."""

    @property
    def cost_per_ticket_usd(self) -> float:
        return self.cost_usd / self.overall.total if self.overall.total else 0.0

    @property
    def targets_met(self) -> bool:
        """Every field and measure target met, and no ticket complete while an intent is
        unaddressed."""
        return (
            not self.complete_while_unaddressed
            and all(f.met is not False for f in self.fields)
            and all(m.met is not False for m in self.measures)
        )


def summarize_eval(results: list[ScoredTicket], fields: LabelledFields) -> EvalSummary:
    """Count the scored tickets per field of the pack's, against its targets."""
    total, targets = len(results), fields.TARGETS
    return EvalSummary(
        fields=[
            FieldScore(field, sum(r.right[field] for r in results), total, targets.get(field))
            for field in fields.FIELDS
        ],
        overall=FieldScore("all fields", sum(all(r.right.values()) for r in results), total, None),
        complete_while_unaddressed=[r.id for r in results if r.complete_while_unaddressed],
        measures=list(measure(results)) if (measure := getattr(fields, "MEASURES", None)) else [],
        cost_usd=round(sum(r.cost_usd for r in results), 6),
        unpriced_calls=sum(r.unpriced_calls for r in results),
    )


def _misses(results: list[ScoredTicket]) -> list[tuple[str, str, str, str]]:
    rows: list[tuple[str, str, str, str]] = []
    for r in results:
        for field, right in r.right.items():
            if not right:
                got = show_field(r.got, field) if r.got else "(no outcome)"
                rows.append((r.id, field, show_field(r.expected, field), got))
    return rows


def print_eval(
    summary: EvalSummary, results: list[ScoredTicket], out: TextIO, *, show_misses: bool = True
) -> None:
    """The per-field table, the honesty count, the pack's own measures, errors, and (unless
    `show_misses` is False) a table of every miss."""
    print(f"{'field':<12} {'right':>5} {'total':>5} {'percent':>8} {'target':>7}  met", file=out)
    for score in [*summary.fields, summary.overall]:
        target = f"{score.target:.0%}" if score.target is not None else "-"
        met = {True: "yes", False: "NO", None: "-"}[score.met]
        print(
            f"{score.field:<12} {score.right:>5} {score.total:>5} {score.share:>8.1%} "
            f"{target:>7}  {met}",
            file=out,
        )
    bad = summary.complete_while_unaddressed
    print(
        f"\ncomplete while an intent is unaddressed: {len(bad)} (target 0: "
        f"{'NO' if bad else 'yes'}){': ' + ', '.join(bad) if bad else ''}",
        file=out,
    )
    if summary.measures:
        width = max(len(m.name) for m in summary.measures)
        print(f"\n{'measure':<{width}}  {'value':<18} {'target':<17} met", file=out)
        for m in summary.measures:
            met = {True: "yes", False: "NO", None: "-"}[m.met]
            print(f"{m.name:<{width}}  {m.shown:<18} {m.target:<17} {met}", file=out)
    print(f"targets: {'all met' if summary.targets_met else 'NOT all met'}", file=out)
    print(f"cost: {_cost_line(summary)}", file=out)
    errors = [r for r in results if r.error]
    if errors:
        print(f"\nerrors ({len(errors)}):", file=out)
        for r in errors:
            print(f"  {r.id}: {r.error}", file=out)
    rows = _misses(results)
    missed = len({row[0] for row in rows})
    print(f"\nmisses: {len(rows)} in {missed} of {len(results)} tickets", file=out)
    if not rows or not show_misses:
        return
    id_w = max(2, *(len(row[0]) for row in rows))
    field_w = max(len("field"), *(len(row[1]) for row in rows))
    expected_w = min(48, max(len("expected"), *(len(row[2]) for row in rows)))
    print(f"{'id':<{id_w}}  {'field':<{field_w}}  {'expected':<{expected_w}}  got", file=out)
    for ticket_id, field, expected, got in rows:
        print(f"{ticket_id:<{id_w}}  {field:<{field_w}}  {expected:<{expected_w}}  {got}", file=out)


def _cost_line(summary: EvalSummary) -> str:
    unpriced = (
        f", {summary.unpriced_calls} model call(s) the price table does not know (not counted)"
        if summary.unpriced_calls
        else ""
    )
    return (
        f"${summary.cost_usd:.4f} for {summary.overall.total} tickets "
        f"(${summary.cost_per_ticket_usd:.4f} a ticket){unpriced}"
    )


def eval_json(summary: EvalSummary, results: list[ScoredTicket], header: dict[str, Any]) -> str:
    """The `--json` file: what ran (`header`), the scores, and every ticket's result."""
    fields = [
        {
            "field": s.field,
            "right": s.right,
            "total": s.total,
            "share": round(s.share, 4),
            "target": s.target,
            "met": s.met,
        }
        for s in [*summary.fields, summary.overall]
    ]
    document = {
        **header,
        "fields": fields,
        "complete_while_unaddressed": summary.complete_while_unaddressed,
        "measures": [
            {"name": m.name, "value": m.shown, "target": m.target, "met": m.met}
            for m in summary.measures
        ],
        "targets_met": summary.targets_met,
        "cost_usd": summary.cost_usd,
        "cost_per_ticket_usd": round(summary.cost_per_ticket_usd, 6),
        "unpriced_calls": summary.unpriced_calls,
        "tickets": [r.record() for r in results],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
