"""The flags of the fleet's commands: `muster worker`, `muster submit`, `muster fleet`.

Like `graph.app.flags`, this module imports nothing but the standard library, so `muster
--help` stays instant; the commands themselves live in `graph.app.fleet`, which loads
Procrastinate, LangGraph and the hub only when one runs.
"""

from __future__ import annotations

import argparse

from graph.app.flags import positive_int, positive_seconds

WORKER_CONCURRENCY = 8
"""Jobs (tickets) one worker process runs at once unless `--concurrency` says otherwise."""
STALLED_AFTER_S = 15.0
"""A worker silent this long is dead: its jobs are retried on another worker. It sends a
heartbeat every third of this, and every worker sweeps for stalled jobs as often."""

FLEET_STARTING = {
    "worker": "worker: loading Muster, then the MCP servers",
    "submit": "submit: loading the fleet's queue",
}
"""The first line these commands print before their imports (cli.STARTING's format)."""


def add_fleet_commands(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    """Register `muster worker`, `muster submit` and `muster fleet`. `common` is the parent
    that gives `--db` (the fleet needs a PostgreSQL store)."""
    worker = subparsers.add_parser(
        "worker",
        parents=[common],
        help="run tickets from the fleet's queue until stopped (PostgreSQL store)",
        description="Take jobs from the fleet's queue (Procrastinate, in the PostgreSQL "
        "database of --db) and run them, with one set of MCP servers for every ticket this "
        "process runs. SIGINT/SIGTERM drain: the jobs in hand finish or are checkpointed and "
        "handed back to the queue, no new job starts; a second signal stops at once.",
    )
    worker.add_argument(
        "--concurrency",
        type=positive_int,
        default=WORKER_CONCURRENCY,
        metavar="N",
        help=f"tickets this worker runs at once (default: {WORKER_CONCURRENCY})",
    )
    worker.add_argument(
        "--stalled-after",
        type=positive_seconds,
        default=STALLED_AFTER_S,
        metavar="SECONDS",
        help="a worker silent this long is dead and its jobs go to another worker "
        f"(default: {STALLED_AFTER_S:g}); heartbeats every third of it",
    )
    worker.add_argument(
        "--servers",
        help="mcpServers config file (default: $MUSTER_SERVERS, else domains/support/servers.json)",
    )
    worker.add_argument(
        "--model",
        help="offline, offline:<ms> or provider:model (default: $MUSTER_MODEL, else offline)",
    )
    worker.add_argument(
        "--planner",
        choices=["rules", "llm"],
        default="rules",
        help="rules: the deterministic ticket planner; llm: --model plans (structured output)",
    )
    worker.add_argument(
        "--max-steps", type=positive_int, help="total worker steps for each run (default 60)"
    )
    worker.add_argument(
        "--max-tokens", type=positive_int, help="total tokens for each run (default 200000)"
    )
    worker.add_argument(
        "--name", help="how this worker shows in `muster fleet` (default: host:pid)"
    )

    submit = subparsers.add_parser(
        "submit",
        parents=[common],
        help="queue a ticket (or a JSONL file of tickets) for the fleet; prints thread ids",
        description="Queue tickets for `muster worker` processes: one ticket's text, or a "
        'JSONL file ({"id": ..., "request": ...} per line, as for `muster batch`; thread '
        "ids batch-<stem>-<id>). Prints one thread id a line. A ticket whose thread exists "
        "or is queued already is skipped, with a line on stderr.",
    )
    submit.add_argument("ticket", help="the ticket text, or a .jsonl file of tickets")
    submit.add_argument("--thread", help="thread id for a single ticket (must be new)")
    submit.add_argument("--json", action="store_true", help="print the thread ids as JSON")

    fleet = subparsers.add_parser(
        "fleet",
        parents=[common],
        help="the fleet's workers and threads: queued, running (where), waiting, done",
    )
    fleet.add_argument("--json", action="store_true")
    fleet.add_argument(
        "--all", action="store_true", help="list every thread, not only unfinished ones"
    )


FLEET_COMMANDS = ("worker", "submit", "fleet")
"""The commands `add_fleet_commands` registers (`graph.app.fleet.FLEET_COMMANDS` runs them)."""
