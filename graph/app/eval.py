"""`muster eval DATASET`: run labelled tickets through Muster and say how often it got each
field right.

The fields are the domain pack's (its plug-in's `EVAL_FIELDS`, a
`graph.app.eval_fields.LabelledFields`). Support's (`domains/support/scoring.py`, labels as
`domains/support/LABELS.md` says) name, per ticket, the intents, the workers the planner
should send packets to, the policy and KB ids the reports should cite, the actions that
should be proposed (tool and arguments), and the answer's status and needs_human, with
targets (intents and workers 95%, policy ids 90%, actions 100%). The command prints, per
field, how many tickets were right against the targets, how many were marked `complete`
while an intent is unaddressed (target 0), and a table of every miss; progress goes to
stderr as tickets finish. A pack that scores itself (`score()` and `TARGETS`, as incidents
does) runs through `graph.app.eval_domain` instead.

The scoring is pydantic-evals (`graph.app.eval_dataset`); it is imported only when an eval
runs, because it brings pydantic-ai along and adds seconds to every other `muster` command.
The run is isolated: one runtime over a temporary checkpoint store and orders database.

`muster eval --lifecycle [DATASET]` drives each case of a lifecycle file (default: the pack's
`lifecycle/cases.jsonl`) to its end, answering its stops as labelled, and scores the final
answer and the servers' final data (`graph.app.eval_lifecycle`).

Exit code: 0 for a finished eval; with `--check`, 1 if any target is missed; 2 for a bad
dataset or bad options.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from graph.app.eval_fields import EvalTicket, LabelledFields, labelled_fields, load_eval_tickets
from graph.app.eval_report import eval_json, print_eval, scored_tickets, summarize_eval
from graph.app.flags import EVAL_CONCURRENCY
from graph.app.options import MusterOptions, model_name
from graph.domains import DomainPack, load_domain
from workers.errors import ConfigError

DEFAULT_CONCURRENCY = EVAL_CONCURRENCY
"""Tickets running at once unless `--concurrency` says otherwise."""
MAX_CONCURRENCY = 64
"""The most `--concurrency` accepts."""
TARGETS_MISSED = 1
"""The exit code of `muster eval --check` when a target is missed."""


@dataclass(frozen=True, kw_only=True)
class EvalOptions:
    """`muster eval` arguments, validated before any server starts."""

    path: Path
    """The labelled tickets file."""
    tickets: list[EvalTicket]
    """Its tickets, in file order."""
    fields: LabelledFields
    """What the domain pack scores per ticket (its plug-in's `EVAL_FIELDS`)."""
    run: MusterOptions
    """How each ticket runs (`--model`, `--planner`, `--servers`); its db is replaced."""
    concurrency: int
    """Tickets running at once (`--concurrency`)."""
    json_out: Path | None
    """Where `--json` writes the results, if given."""
    check: bool
    """Exit 1 when a target is missed (`--check`)."""


def _json_path(given: str | None, dataset: Path) -> Path | None:
    if not given:
        return None
    out = Path(given).expanduser()
    if out.exists() and out.resolve() == dataset.resolve():
        raise ConfigError(f"--json {out} is the dataset itself; choose another path")
    if out.is_dir():
        raise ConfigError(f"--json {out} is a directory; give a file path")
    if not out.parent.is_dir() or not os.access(out.parent, os.W_OK):
        raise ConfigError(f"--json {out}: folder {out.parent} is missing or not writable")
    return out


def eval_options(args: argparse.Namespace, pack: DomainPack) -> EvalOptions:
    """Validate the arguments and read the dataset against the pack's labelled fields
    (raises `ConfigError`, exit 2)."""
    if args.concurrency > MAX_CONCURRENCY:
        raise ConfigError(f"--concurrency must be at most {MAX_CONCURRENCY}")
    path = Path(args.dataset).expanduser()
    fields = labelled_fields(pack)
    return EvalOptions(
        path=path,
        tickets=load_eval_tickets(path, fields),
        fields=fields,
        run=MusterOptions.from_args(args),
        concurrency=args.concurrency,
        json_out=_json_path(args.json, path),
        check=bool(args.check),
    )


async def _cmd_domain_eval(
    args: argparse.Namespace, pack: DomainPack, *, show_misses: bool = True
) -> int:
    """`muster eval --domain NAME [DATASET]` for a pack that scores itself."""
    from graph.app.eval_domain import evaluate_domain, load_cases, print_domain_eval, targets_met

    if args.concurrency > MAX_CONCURRENCY:
        raise ConfigError(f"--concurrency must be at most {MAX_CONCURRENCY}")
    dataset = Path(args.dataset) if args.dataset else None
    cases = await asyncio.to_thread(load_cases, pack, dataset)
    run = MusterOptions.from_args(args)
    started = time.monotonic()
    print(
        f"muster eval --domain {pack.name}: {len(cases)} cases, {args.concurrency} at a time",
        file=sys.stderr,
    )
    results = await evaluate_domain(
        pack,
        cases,
        run,
        concurrency=args.concurrency,
        progress=sys.stderr,
        progress_detail=show_misses,
    )
    targets = pack.hook("TARGETS") or {}
    print(
        f"muster eval --domain {pack.name}: {len(results)} cases, "
        f"{time.monotonic() - started:.1f} s\n"
    )
    print_domain_eval(results, targets, sys.stdout, show_misses=show_misses)
    if args.json:
        rows = [
            {
                "id": r.id,
                "error": r.error,
                "fields": {
                    k: {"right": v[0], "expected": v[1], "got": v[2]} for k, v in r.fields.items()
                },
            }
            for r in results
        ]
        text = json.dumps(rows, indent=2) + "\n"
        await asyncio.to_thread(Path(args.json).write_text, text, encoding="utf-8")
    return TARGETS_MISSED if args.check and not targets_met(results, targets) else 0


async def _cmd_lifecycle_eval(args: argparse.Namespace, pack: DomainPack) -> int:
    """`muster eval --lifecycle [DATASET]`: every case driven to its end and scored on its
    final answer and the servers' final data (graph/app/eval_lifecycle.py)."""
    from graph.app.eval_lifecycle import (
        evaluate_lifecycle,
        lifecycle_json,
        print_lifecycle,
        targets_met,
    )
    from graph.app.eval_lifecycle_cases import default_lifecycle_file, load_lifecycle_cases

    if getattr(args, "split", None) is not None:
        raise ConfigError("--lifecycle scores a lifecycle file, not a split")
    if args.concurrency > MAX_CONCURRENCY:
        raise ConfigError(f"--concurrency must be at most {MAX_CONCURRENCY}")
    given = str(args.dataset or "")
    path = await asyncio.to_thread(
        lambda: Path(given).expanduser() if given else default_lifecycle_file(pack)
    )
    json_out = _json_path(args.json, path)
    cases = await asyncio.to_thread(load_lifecycle_cases, path)
    run = MusterOptions.from_args(args)
    started = time.monotonic()
    print(f"muster eval --lifecycle {path}: {len(cases)} cases", file=sys.stderr)
    results = await evaluate_lifecycle(
        pack, cases, run, concurrency=args.concurrency, progress=sys.stderr
    )
    print(
        f"muster eval --lifecycle {path}: {len(results)} cases, "
        f"{time.monotonic() - started:.1f} s\n"
    )
    print_lifecycle(results, sys.stdout, show_misses=not getattr(args, "no_misses", False))
    if json_out is not None:
        await asyncio.to_thread(json_out.write_text, lifecycle_json(results), encoding="utf-8")
        print(f"\nresults written to {json_out}")
    return TARGETS_MISSED if args.check and not targets_met(results) else 0


FROZEN_SPLIT = "test"
"""The split whose tickets are scored and never shown: no table of misses for it."""


def split_dataset(pack: DomainPack, split: str) -> Path:
    """The pack's split file (`splits/NAME.jsonl` beside its domain.json); `ConfigError`
    when the pack has no corpus split."""
    folder = pack.eval_files.get("splits")
    path = folder / f"{split}.jsonl" if folder is not None else None
    if path is None or not path.is_file():
        raise ConfigError(
            f"domain {pack.name} has no {split} split (scripts/split_corpus.py writes them)"
        )
    return path


async def cmd_eval(args: argparse.Namespace) -> int:
    """`muster eval [DATASET | --split NAME] [--lifecycle] [--domain D] [--model M] [--planner
    P] [--json FILE] [--check] [--no-misses]`."""
    pack = load_domain(getattr(args, "domain", None))
    if getattr(args, "lifecycle", False):
        return await _cmd_lifecycle_eval(args, pack)
    split = getattr(args, "split", None)
    if split is not None:
        if args.dataset:
            raise ConfigError("give DATASET or --split, not both")
        args.dataset = str(split_dataset(pack, split))
    if split == FROZEN_SPLIT and getattr(args, "json", None):
        raise ConfigError(
            f"the {FROZEN_SPLIT} split is scored, never read: --json (every case's result) "
            "is refused for it"
        )
    show_misses = not getattr(args, "no_misses", False) and split != FROZEN_SPLIT
    if pack.hook("score") is not None:
        return await _cmd_domain_eval(args, pack, show_misses=show_misses)
    if not args.dataset:
        if "dataset" not in pack.eval_files:
            raise ConfigError(f"give the labelled tickets: domain {pack.name} has no eval set")
        args.dataset = str(pack.eval_files["dataset"])
    opts = eval_options(args, pack)
    # pydantic-evals (and pydantic-ai with it) takes seconds to import: only evals pay for it.
    from graph.app.eval_dataset import evaluate_tickets

    started = time.monotonic()
    model, planner = model_name(args.model), args.planner
    print(
        f"muster eval {opts.path}: {len(opts.tickets)} tickets, model {model}, planner "
        f"{planner}, {opts.concurrency} at a time",
        file=sys.stderr,
    )
    report = await evaluate_tickets(
        opts.path.stem,
        opts.tickets,
        opts.run,
        fields=opts.fields,
        concurrency=opts.concurrency,
        progress=sys.stderr,
        progress_detail=show_misses,
    )
    results = scored_tickets(report, opts.tickets, opts.fields)
    summary = summarize_eval(results, opts.fields)
    wall_s = time.monotonic() - started
    print(
        f"muster eval {opts.path}: {len(results)} tickets, model {model}, planner {planner}, "
        f"{wall_s:.1f} s\n"
    )
    print_eval(summary, results, sys.stdout, show_misses=show_misses)
    if opts.json_out is not None:
        header = {
            "dataset": str(opts.path),
            "model": model,
            "planner": planner,
            "wall_s": round(wall_s, 1),
        }
        opts.json_out.write_text(eval_json(summary, results, header), encoding="utf-8")
        print(f"\nresults written to {opts.json_out}")
    return TARGETS_MISSED if opts.check and not summary.targets_met else 0
