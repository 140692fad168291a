"""`muster`: run, resume and inspect support-ticket threads from a terminal.

This module is the entry point, and it is kept cheap: it builds the parser from
`graph.app.flags` (standard library only), says at once what the command is doing (a
command that runs the graph then loads LangGraph and starts its servers, which takes
seconds), and only then imports the commands (`graph.app.commands`, `graph.app.batch`,
`graph.app.eval`). `muster --help` therefore never loads LangGraph; tests/test_first_hour.py
holds that. `muster threads` and `muster show` load the graph but not the MCP SDK, nor batch,
eval or replay; tests/test_cli_imports.py holds that.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from graph.app.exit_codes import ExitCode
from graph.app.flags import (
    SCENARIO_NAMES,
    add_batch_parser,
    add_eval_parser,
    add_replay_parser,
    add_run_options,
    add_show_parser,
    add_store_options,
    add_time_travel_parsers,
    days,
    received_moment,
)
from graph.app.fleet_flags import FLEET_COMMANDS, FLEET_STARTING, add_fleet_commands
from graph.app.thread_filters import STATUSES, since_time, thread_status

Command = Callable[[argparse.Namespace], Coroutine[Any, Any, int]]

LOADING = "loading Muster; MCP servers start as workers need them"
STARTING = {
    "run": f"muster run: {LOADING}",
    "resume": f"muster resume {{thread}}: {LOADING}",
    "follow-up": f"muster follow-up {{thread}}: {LOADING}",
    "approve": f"muster approve {{thread}}: {LOADING}",
    "clarify": f"muster clarify {{thread}}: {LOADING}",
    "cancel": f"muster cancel {{thread}}: {LOADING}",
    "batch": f"muster batch {{tickets}}: {LOADING}",
    "eval": f"muster eval {{dataset}}: {LOADING}",
    "fork": f"muster fork {{thread}}: {LOADING}",
    "replay": f"muster replay {{thread}}{{batch}}: {LOADING}",
    "serve": f"muster serve {{host}}:{{port}}: {LOADING}",
    **{name: f"muster {line}" for name, line in FLEET_STARTING.items()},
}
"""The first line of each command that runs the graph, printed before its imports; `{name}`
is filled from the command's arguments (a missing one is left empty)."""
RESULT_LINES_ONLY = frozenset({"submit"})
"""Commands whose stdout is their result alone (`announce` writes to stderr for them)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="muster",
        description="Muster: a supervisor that plans a support ticket, dispatches specialists "
        "in parallel over MCP tools, recovers from failures and answers honestly.",
        epilog=ExitCode.help_table(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_store_options(parser, top_level=True)
    common = argparse.ArgumentParser(add_help=False)
    add_store_options(common)
    running = argparse.ArgumentParser(add_help=False)
    add_run_options(running)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run", parents=[common, running], help="run a new ticket on a new thread"
    )
    run.add_argument("request", nargs="?", help="the ticket text")
    run.add_argument(
        "--scenario", help=f"a bundled scenario ({', '.join(SCENARIO_NAMES)}); sets models"
    )
    run.add_argument("--thread", help="thread id to use (must be new)")
    run.add_argument(
        "--received-at",
        type=received_moment,
        metavar="TIME",
        help="when the request arrived, ISO 8601 with its offset (2025-06-12T14:09:00Z): a "
        "page that states no time (or no date) is read as of it, and the answer says so",
    )
    resume = commands.add_parser(
        "resume", parents=[common, running], help="resume an unfinished thread"
    )
    resume.add_argument("thread")
    follow_up = commands.add_parser(
        "follow-up",
        parents=[common, running],
        help="the customer's next message on a thread that has answered: a new turn on it",
    )
    follow_up.add_argument("thread")
    follow_up.add_argument("request", metavar="message", help="the customer's new message")
    threads = commands.add_parser("threads", parents=[common], help="list threads and their status")
    threads.add_argument("--json", action="store_true")
    threads.add_argument(
        "--status",
        action="append",
        type=thread_status,
        metavar="STATUS",
        help=f"only threads with this status ({', '.join(STATUSES)}; in-progress and waiting "
        "work too); may be repeated",
    )
    threads.add_argument(
        "--since",
        type=since_time,
        metavar="WHEN",
        help="only threads updated since WHEN: an ISO date or time (UTC unless given a zone) "
        "or an age (90s, 30m, 2h, 7d)",
    )
    approve = commands.add_parser(
        "approve", parents=[common, running], help="approve (or --reject) a pending action"
    )
    approve.add_argument("thread")
    approve.add_argument("--reject", action="store_true", help="reject instead of approving")
    approve.add_argument("--note", help="why, for the audit log")
    approve.add_argument(
        "--by",
        help="who decides: a name in the approvers file (graph/approvers.json, or "
        "$MUSTER_APPROVERS); default: the current user, who must be listed there. Taken on "
        "trust, for local use, unless $MUSTER_ACCOUNTS turns authentication on: then "
        "$MUSTER_TOKEN says who decides and --by alone is refused",
    )
    approve.add_argument(
        "--digest",
        help="the digest shown by `muster show`, or its first 8+ hex characters; "
        "refuse if different",
    )
    clarify = commands.add_parser(
        "clarify", parents=[common, running], help="answer a worker's clarifying question"
    )
    clarify.add_argument("thread")
    clarify.add_argument("answer")
    pause = commands.add_parser(
        "pause", parents=[common], help="stop every approved action from running (kill switch)"
    )
    resume_all = commands.add_parser(
        "resume-all", parents=[common], help="let approved actions run again after `pause`"
    )
    cancel = commands.add_parser(
        "cancel", parents=[common, running], help="end a thread cleanly: nothing more runs"
    )
    cancel.add_argument("thread")
    delete = commands.add_parser(
        "delete", parents=[common], help="remove a thread's checkpoints, trace and lease"
    )
    delete.add_argument("thread")
    purge = commands.add_parser(
        "purge", parents=[common], help="delete every thread not updated in DAYS days"
    )
    purge.add_argument(
        "--older-than", type=days, required=True, metavar="DAYS", help="age in days (0: all)"
    )
    for control in (pause, resume_all, cancel):
        control.add_argument(
            "--by",
            help="who: a name in the approvers file (default: you); on trust unless "
            "$MUSTER_ACCOUNTS is set (then $MUSTER_TOKEN says who)",
        )
        control.add_argument("--reason", help="why, for the audit log and the answer")
    serve = commands.add_parser(
        "serve",
        parents=[common],
        help="the HTTP API and web inbox over the store: submit, read, decide (docs/service.md)",
        description="Serve Muster's HTTP API (OpenAPI at /openapi.json) and, with accounts, "
        "its web inbox (/inbox) over the store, running tickets in this process. With "
        "$MUSTER_ACCOUNTS, callers log in (a session with CSRF protection) or give an API "
        "token of their account; else a bearer token of the JSON file $MUSTER_API_TOKENS "
        "names ({token: approver}). The caller decides, held to their roles.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (8000)")
    serve.add_argument("--servers", help="mcpServers config file (as for run)")
    serve.add_argument("--model", help="the model for every run (as for run)")
    add_account_parser(commands)
    add_batch_parser(commands, [common, running])
    add_eval_parser(commands)
    add_fleet_commands(commands, common)
    add_show_parser(commands, common)
    add_time_travel_parsers(commands, common, running)
    add_replay_parser(commands, [common, running])
    return parser


def add_account_parser(commands: argparse._SubParsersAction) -> None:
    """`muster account add|token|list|revoke` (graph/app/serve/account_command.py runs them)."""
    account = commands.add_parser(
        "account",
        help="approvers' accounts and API tokens ($MUSTER_ACCOUNTS; docs/service.md)",
        description="Manage the accounts file $MUSTER_ACCOUNTS names. Setting "
        "$MUSTER_ACCOUNTS turns authentication on: muster serve then wants a login or an "
        "API token, and muster approve/cancel want $MUSTER_TOKEN (--by alone is refused).",
    )
    actions = account.add_subparsers(dest="account_command", required=True)
    add = actions.add_parser("add", help="add an account (password from stdin or a prompt)")
    add.add_argument("name", help="an approver of the approvers file")
    add.add_argument(
        "--role",
        action="append",
        dest="roles",
        help="a role the account acts under (repeatable; default: the approver's roles)",
    )
    add.add_argument("--replace", action="store_true", help="reset an existing account")
    token = actions.add_parser("token", help="make an API token for an account (shown once)")
    token.add_argument("name")
    token.add_argument("--label", default="", help="what the token is for")
    actions.add_parser("list", help="the accounts, their roles and token counts")
    revoke = actions.add_parser("revoke", help="remove every API token of an account")
    revoke.add_argument("name")


def announce(args: argparse.Namespace) -> None:
    """The first line of a command that runs the graph, before anything slow: to stdout, or
    to stderr under `--json` (stdout is then the JSON alone)."""
    template = STARTING.get(args.command)
    if template is None:
        return
    # `muster submit` prints the thread ids it queued, one a line, for a script to read:
    # its first line is no result, so it goes where --json sends it.
    to_stderr = getattr(args, "json", False) is True or args.command in RESULT_LINES_ONLY
    stream = sys.stderr if to_stderr else sys.stdout
    print(template.format_map(_Arguments(args)), file=stream, flush=True)


class _Arguments(dict[str, str]):
    """The command's arguments as format fields; one it lacks is empty."""

    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__({k: str(v) for k, v in vars(args).items() if v is not None})

    def __missing__(self, key: str) -> str:
        return ""


def command_for(name: str) -> Command:
    """The function that runs `muster NAME` (this imports LangGraph and the rest)."""
    if name in FLEET_COMMANDS:
        from graph.app.fleet import COMMANDS as FLEET

        return FLEET[name]
    if name == "account":
        from graph.app.serve.account_command import cmd_account

        return cmd_account
    from graph.app.commands import COMMANDS

    return COMMANDS[name]


def load_command(name: str, *, whole_process: bool) -> Command:
    """`command_for(name)`; when this process is the command (`whole_process`), what the
    imports build is frozen out of the garbage collector.

    The modules, classes and schemas the imports make (most of a second of CPU for `muster
    threads`) live as long as the process, yet each collector pass walks them again: during
    the imports, the command and at exit the passes cost about a third of `muster threads`'
    CPU (bench/cli_start.py). `gc.freeze()` moves them where no pass looks, the idiom Python's
    documentation gives for this. Only for a process of our own: a caller's objects (a test
    calling `main`) are never frozen."""
    if not whole_process:
        return command_for(name)
    gc.disable()  # no passes over what is being imported; frozen just below
    try:
        return command_for(name)
    finally:
        freeze_imports()
        gc.enable()


def freeze_imports() -> None:
    """Move every object alive now out of the cyclic collector's sight (`gc.freeze()`), for
    a process of one's own once its imports are done: what `muster` does before a command.
    Benchmarks that time a command's work in their own process call it to run as the command
    does (a full collection over the imports costs about 50 ms, once per wide fan-out).
    Objects frozen are still freed when their last reference goes; only a cycle among them
    would stay, so freeze after imports, not amid one's own data."""
    gc.freeze()


def __getattr__(name: str) -> Any:
    # `from graph.app.cli import COMMANDS` still works, without loading it for `--help`.
    if name == "COMMANDS":
        from graph.app.commands import COMMANDS

        return COMMANDS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `muster` console script (and of `python -m graph.app.cli`): with
    no `argv`, this process is the command, and it reads `sys.argv`."""
    args = build_parser().parse_args(argv)
    try:
        announce(args)
        from workers.errors import MusterError, ProviderError  # light: no third-party import
    except BrokenPipeError:
        return _closed_pipe()
    try:
        command = load_command(args.command, whole_process=argv is None)
        code = asyncio.run(command(args))
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
        return code
    except ProviderError as error:
        print(f"muster: provider error: {error}", file=sys.stderr)
        return ExitCode.for_provider(error.reason) or ExitCode.PROVIDER_AUTH
    except MusterError as error:
        print(f"muster: error: {error}", file=sys.stderr)
        return ExitCode.BAD_INPUT
    except KeyboardInterrupt:
        print("muster: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        return _closed_pipe()


def _closed_pipe() -> int:
    """The reader of stdout went away (`muster threads | head`): stop quietly, as `cat`
    does. Point stdout at /dev/null first so the interpreter's final flush cannot raise."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return ExitCode.OK


if __name__ == "__main__":
    sys.exit(main())
