"""`muster eval --domain NAME`: score a domain pack's labelled set with the pack's own scorer.

A pack that scores itself (`score(values, labels)` and `TARGETS` in its plug-in; incidents
does) is run here: every request of its dataset on its own thread, at most `concurrency` at a
time, on a temporary checkpoint store (and a temporary `MUSTER_DEPLOYS_DB`, the one incident
database that is written to); then per field how many were right against the targets, and a
table of every miss, as for the support set (`graph.app.eval`).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from checkpoints.threads import thread_config
from graph.app.eval_env import isolated_environment
from graph.app.options import MusterOptions
from graph.app.runtime import open_runtime, stream_run
from graph.domains import DomainPack
from graph.received import parse_received_at
from workers.errors import ConfigError

Scorer = Callable[[dict[str, Any], dict[str, Any]], dict[str, tuple[bool, str, str]]]
"""A pack's scorer: per field, (right, expected, got)."""


@dataclass(frozen=True)
class DomainCase:
    """One labelled request."""

    id: str
    """Its id in the dataset."""
    request: str
    """The request text."""
    labels: dict[str, Any]
    """What the right answer holds."""
    received_at: str | None = None
    """When the request arrived (the line's `received_at`, or the field the pack names for
    it: incidents' `paged_at`), passed to the run as `InputState.received_at`."""


@dataclass
class DomainResult:
    """One case's scores."""

    id: str
    """The case id."""
    fields: dict[str, tuple[bool, str, str]]
    """Per field: (right, expected, got)."""
    error: str | None = None
    """Why the run did not finish, if it did not."""


def _jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]
    except (OSError, json.JSONDecodeError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from None


def labels_for(pack: DomainPack, dataset: Path | None) -> Path | None:
    """The labels of a dataset: ``<name>_labels.jsonl`` beside a given ``<name>.jsonl`` when it
    exists (``heldout.jsonl`` -> ``heldout_labels.jsonl``), else the pack's own labels file."""
    if dataset is not None:
        sibling = dataset.with_name(f"{dataset.stem}_labels.jsonl")
        if sibling.is_file():
            return sibling
    return pack.eval_files.get("labels")


def load_cases(pack: DomainPack, dataset: Path | None = None) -> list[DomainCase]:
    """The pack's requests (or `dataset`'s) with their labels, by id (see `labels_for`)."""
    requests = _jsonl(dataset or pack.eval_files["dataset"])
    labels_file = labels_for(pack, dataset)
    labels = {str(row["id"]): row["labels"] for row in _jsonl(labels_file)} if labels_file else {}
    cases = []
    received_field = pack.received_field
    for row in requests:
        case_id = str(row.get("id"))
        if case_id not in labels and "labels" not in row:
            raise ConfigError(f"case {case_id} has no labels")
        received = row.get("received_at") or row.get(received_field)
        if received is not None:
            try:
                parse_received_at(str(received))
            except ValueError as error:
                raise ConfigError(f"case {case_id}: {error}") from None
        cases.append(
            DomainCase(
                case_id,
                str(row["request"]),
                labels.get(case_id) or row["labels"],
                str(received) if received is not None else None,
            )
        )
    return cases



async def evaluate_domain(
    pack: DomainPack,
    cases: list[DomainCase],
    options: MusterOptions,
    *,
    concurrency: int,
    progress: TextIO | None = None,
    progress_detail: bool = True,
) -> list[DomainResult]:
    """Run every case and score it with the pack's scorer."""
    scorer: Scorer | None = pack.hook("score")
    if scorer is None:
        raise ConfigError(f"domain {pack.name} has no scorer (score() in its plugin.py)")
    results: dict[str, DomainResult] = {}
    databases = pack.hook("EVAL_DATABASES") or ()
    with (
        tempfile.TemporaryDirectory(prefix="muster-eval-") as tmp,
        isolated_environment(Path(tmp), databases=databases, pinned=pack.hook("EVAL_ENV")),
    ):
        run_options = replace(options, db=Path(tmp) / "checkpoints.sqlite")
        async with (
            open_runtime(run_options) as runtime,
            runtime.lanes(max(1, min(concurrency, len(cases)))) as lanes,
        ):

            async def one(case: DomainCase) -> None:
                graph = await lanes.get()
                thread_id = f"eval-{uuid.uuid4().hex[:12]}"
                error: str | None = None
                try:
                    await stream_run(
                        runtime,
                        thread_id,
                        {
                            "request": case.request,
                            **({"received_at": case.received_at} if case.received_at else {}),
                        },
                        services=runtime.for_thread(thread_id, trace_dir=Path(tmp) / "traces"),
                        graph=graph,
                    )
                except Exception as exc:  # one case's crash is its miss, not the eval's end
                    error = f"{type(exc).__name__}: {exc}"
                finally:
                    lanes.put_nowait(graph)
                snapshot = await runtime.graph.aget_state(thread_config(thread_id))
                fields = scorer(dict(snapshot.values), case.labels)
                results[case.id] = DomainResult(case.id, fields, error)
                if progress is not None:
                    right = sum(ok for ok, _, _ in fields.values())
                    # A frozen split prints progress only, never which case missed what.
                    line = f"  {case.id}  {right}/{len(fields)}" if progress_detail else ""
                    print(f"[{len(results)}/{len(cases)}]{line}", file=progress, flush=True)

            await asyncio.gather(*(one(case) for case in cases))
    return [results[case.id] for case in cases]


def targets_met(results: list[DomainResult], targets: dict[str, float | None]) -> bool:
    """True when every field with a target reaches it."""
    for name, target in targets.items():
        if target is None or not results:
            continue
        right = sum(r.fields[name][0] for r in results if name in r.fields)
        if right / len(results) < target:
            return False
    return True


def print_domain_eval(
    results: list[DomainResult],
    targets: dict[str, float | None],
    out: TextIO,
    *,
    show_misses: bool = True,
) -> None:
    """The per-field table, errors and (unless `show_misses` is False) every miss."""
    print(f"{'field':<24} {'right':>5} {'total':>5} {'percent':>8} {'target':>7}  met", file=out)
    total = len(results)
    for name, target in targets.items():
        right = sum(r.fields[name][0] for r in results if name in r.fields)
        share = right / total if total else 0.0
        met = "-" if target is None else ("yes" if share >= target else "NO")
        shown = f"{target:.0%}" if target is not None else "-"
        print(f"{name:<24} {right:>5} {total:>5} {share:>8.1%} {shown:>7}  {met}", file=out)
    print(f"targets: {'all met' if targets_met(results, targets) else 'NOT all met'}", file=out)
    errors = [r for r in results if r.error]
    if errors:
        print(f"\nerrors ({len(errors)}):", file=out)
        for r in errors:
            print(f"  {r.id}: {r.error}", file=out)
    misses = [
        (r.id, name, exp, got)
        for r in results
        for name, (ok, exp, got) in r.fields.items()
        if not ok
    ]
    print(f"\nmisses: {len(misses)}", file=out)
    if not show_misses:
        return
    for case_id, name, expected, got in misses:
        print(f"{case_id:<8} {name:<24} expected {expected:<40} got {got}", file=out)
