"""Every flag of `muster`: the parser, cheap to build (the exit codes: `graph.app.exit_codes`).

`muster --help` must answer at once, so this module imports nothing but the standard
library: the commands themselves (`graph.app.commands`, `graph.app.batch`, `graph.app.eval`)
load LangGraph, the models and the hub only when a command runs. `options` validates what
these flags say (`MusterOptions.from_args`); `hints` prints the commands that carry them on.
"""

from __future__ import annotations

import argparse
import math

from graph.received import parse_received_at

DEFAULT_MODEL = "offline"
"""The model every entry point uses unless `--model` or `MUSTER_MODEL` names another."""
DEFAULT_PLANNER = "rules"
"""The planner unless `--planner` names another."""
SCENARIO_NAMES = ("metrics-down", "sick-day")
"""The bundled scenarios (graph/app/scenarios.py; a test keeps the two in step)."""
BATCH_CONCURRENCY = 16
"""Tickets a batch runs at once unless `--concurrency` says otherwise."""
EVAL_CONCURRENCY = 8
"""Tickets an eval runs at once unless `--concurrency` says otherwise."""
REPLAY_CONCURRENCY = 8
"""Threads a replay runs at once unless `--concurrency` says otherwise."""


def days(text: str) -> float:
    """argparse type for `purge --older-than`: a finite number of days, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of days: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of days, 0 or more: {text!r}")
    return value


def positive_dollars(text: str) -> float:
    """argparse type for `--max-cost`: a finite amount of US dollars above 0."""
    try:
        value = float(text.lstrip("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an amount of dollars: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite amount above 0, not {text!r}")
    return value


def positive_seconds(text: str) -> float:
    """argparse type for `--deadline`: a finite number of seconds above 0 (not nan, inf, 0)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(
            f"must be a finite number of seconds above 0, not {text!r}"
        )
    return value


def positive_int(text: str) -> int:
    """argparse type for limits: a whole number of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def add_store_options(parser: argparse.ArgumentParser, *, top_level: bool = False) -> None:
    """`--db`, for every command that reads or writes threads. `muster` takes it before the
    command too (`muster --db URL run ...`); `top_level` declares that one, whose value the
    command's own `--db` (declared without a default) overrides."""
    parser.add_argument(
        "--db",
        default=None if top_level else argparse.SUPPRESS,
        help="checkpoint database: a SQLite file or a postgresql:// URL "
        "(default: $MUSTER_DB, else checkpoints/muster.sqlite)",
    )


DOMAIN_HELP = (
    "the domain pack: support (default), incidents, or a pack's folder "
    "(default: $MUSTER_DOMAIN, else support)"
)
"""`--domain`'s help (graph/domains.py loads the pack)."""


def add_domain_option(parser: argparse.ArgumentParser) -> None:
    """`--domain NAME|PATH`: which domain pack's roster, servers, planner and answer to use."""
    parser.add_argument("--domain", metavar="NAME|PATH", help=DOMAIN_HELP)


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The flags of every command that runs the graph: run, resume, approve, clarify, batch."""
    add_domain_option(parser)
    parser.add_argument(
        "--servers",
        help="mcpServers config file (default: $MUSTER_SERVERS, else domains/support/servers.json)",
    )
    parser.add_argument(
        "--model",
        help="offline, offline:<ms> or provider:model (default: $MUSTER_MODEL, else offline)",
    )
    parser.add_argument("--json", action="store_true", help="print the answer and reports as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the answer as Markdown")
    parser.add_argument(
        "--max-steps", type=positive_int, help="total worker steps for the run (default 60)"
    )
    parser.add_argument(
        "--max-tokens", type=positive_int, help="total tokens for the run (default 200000)"
    )
    parser.add_argument(
        "--max-cost",
        type=positive_dollars,
        metavar="USD",
        help="total money the run's priced model calls may cost, in US dollars (default: none)",
    )
    parser.add_argument(
        "--deadline",
        type=positive_seconds,
        metavar="SECONDS",
        help="wall-clock limit counted from now, server start included; kept with the thread, "
        "so a resume keeps it unless given its own --deadline",
    )
    parser.add_argument(
        "--planner",
        choices=["rules", "llm"],
        default=DEFAULT_PLANNER,
        help="rules: the deterministic ticket planner; llm: --model plans (structured output)",
    )


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
        default=BATCH_CONCURRENCY,
        metavar="N",
        help=f"tickets running at once (default: {BATCH_CONCURRENCY})",
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
        "the checkpoint store: checkpoints/ for the default store, var/ for PostgreSQL)",
    )


def add_eval_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `muster eval` (it takes no --db: every eval runs on a temporary store)."""
    parser = subparsers.add_parser(
        "eval",
        help="score Muster on a labelled ticket set (per field, with a table of misses)",
        description="Run every labelled ticket of DATASET (JSONL; domains/support/LABELS.md has "
        "the format) on a temporary store and orders database, and print per field how often "
        "Muster got it right, against the targets. Exit 0 when the eval finished; with "
        "--check, 1 if a target is missed; 2 for a bad dataset or option.",
    )
    parser.add_argument(
        "dataset",
        nargs="?",
        help="the labelled tickets (JSONL), e.g. domains/support/tickets.jsonl (default: the "
        "domain pack's eval set)",
    )
    add_domain_option(parser)
    parser.add_argument(
        "--model",
        help="offline, offline:<ms> or provider:model (default: $MUSTER_MODEL, else offline)",
    )
    parser.add_argument(
        "--planner",
        choices=["rules", "llm"],
        default=DEFAULT_PLANNER,
        help="rules: the deterministic ticket planner; llm: --model plans (structured output)",
    )
    parser.add_argument(
        "--servers",
        help="mcpServers config file (default: $MUSTER_SERVERS, else domains/support/servers.json)",
    )
    parser.add_argument(
        "--concurrency",
        type=positive_int,
        default=EVAL_CONCURRENCY,
        metavar="N",
        help=f"tickets running at once (default: {EVAL_CONCURRENCY})",
    )
    parser.add_argument(
        "--json", metavar="FILE", help="also write the scores and every ticket's result here"
    )
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if any target is missed (for CI)"
    )
    parser.add_argument(
        "--split",
        choices=["train", "dev", "test"],
        help="score one split of the pack's labelled corpus (its splits/NAME.jsonl) instead "
        "of DATASET; the test split prints scores only (it is scored, never read)",
    )
    parser.add_argument(
        "--no-misses",
        action="store_true",
        help="print the scores without the table of misses",
    )
    parser.add_argument(
        "--lifecycle",
        action="store_true",
        help="drive each case of DATASET (default: the pack's lifecycle/cases.jsonl) to its "
        "end, answering its stops as labelled (approve or reject each action, the "
        "clarification replies), and score the final answer and the servers' final data "
        "(LABELS.md: Lifecycle cases)",
    )


def add_show_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    """Register `muster show` (`common` gives --db), with `--html` for the timeline."""
    show = subparsers.add_parser(
        "show", parents=[common], help="a thread's history, reports and tool calls"
    )
    show.add_argument("thread")
    show.add_argument(
        "--html",
        nargs="?",
        const="",
        metavar="FILE",
        help="write the thread's timeline to FILE as one self-contained HTML page, viewable "
        "offline: the supervisor above one lane per worker dispatch, every model turn and "
        "tool call with its duration, failures, recoveries, approvals and the answer "
        "(default FILE: THREAD.timeline.html)",
    )


def add_time_travel_parsers(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
    running: argparse.ArgumentParser,
) -> None:
    """Register `muster history` and `muster fork` (`common` gives --db; `running` the run
    options a fork runs with)."""
    history = subparsers.add_parser(
        "history",
        parents=[common],
        help="a thread's checkpoints (id, step, next nodes, time, what happened), to fork from",
    )
    history.add_argument("thread")
    history.add_argument("--json", action="store_true", help="print the checkpoints as JSON")
    fork = subparsers.add_parser(
        "fork",
        parents=[common, running],
        help="start a new thread from one of a thread's checkpoints, and run it on",
        description="Copy the state at one checkpoint of THREAD (`muster history THREAD` lists "
        "them) to a new thread, apply --edit and --rerun, and run the new thread on with "
        "LangGraph's own update_state: the graph's edges decide what runs next. THREAD is "
        "left as it was. Exit codes as for `muster run`.",
    )
    fork.add_argument("thread", help="the thread to fork")
    fork.add_argument(
        "--checkpoint",
        required=True,
        metavar="ID",
        help="the checkpoint to start from: its id as `muster history` prints it, or a "
        "unique prefix of at least 8 characters",
    )
    fork.add_argument(
        "--edit",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="replace a state field in the new thread: KEY=VALUE (VALUE is JSON if it parses, "
        "else text; null removes the field) or a JSON object of fields; may be repeated",
    )
    fork.add_argument(
        "--rerun",
        action="append",
        default=[],
        metavar="PACKET",
        help="run a packet again (a packet id such as policy-2, or a worker name): the new "
        "thread forgets its reports and recoveries, and those of packets that depend on it, "
        "and dispatches it afresh; may be repeated",
    )
    fork.add_argument(
        "--new-thread", metavar="ID", help="the new thread's id (must be new; default: generated)"
    )


def add_replay_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    parents: list[argparse.ArgumentParser],
) -> None:
    """Register `muster replay` (the parents give --db and the run options it replays with)."""
    replay = subparsers.add_parser(
        "replay",
        parents=parents,
        help="re-run recorded threads on the current code and report what changed",
        description="Run THREAD's request again (or, with --batch FILE, every ticket's thread "
        "as `muster batch FILE` named it) on a fresh thread in a temporary store, serving each "
        "model and tool call from the thread's recording (its trace) and never executing a "
        "write, then print what differs: plan, per-worker trajectory, reports, proposed "
        "actions, answer status and text, tokens. Exit 0 if nothing differs, 1 if something "
        "does, 2 for bad input or, with --strict, a call the recording lacks.",
    )
    replay.add_argument("thread", nargs="?", help="the thread to replay")
    replay.add_argument(
        "--batch", metavar="FILE", help="replay every ticket of this tickets file (JSONL)"
    )
    replay.add_argument(
        "--strict",
        action="store_true",
        help="a model request or tool call not in the recording is an error (default: the "
        "--model model answers it, a read runs live, and it is flagged)",
    )
    replay.add_argument(
        "--concurrency",
        type=positive_int,
        default=REPLAY_CONCURRENCY,
        metavar="N",
        help=f"threads replayed at once (default: {REPLAY_CONCURRENCY})",
    )


def received_moment(text: str) -> str:
    """`--received-at`: ISO 8601 with an offset, kept as given; argparse prints the error."""
    try:
        parse_received_at(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text.strip()
