"""`muster account`: add an approver's account, make an API token, list, revoke.

Every subcommand works on the accounts file `MUSTER_ACCOUNTS` names (created if missing);
setting that variable is what turns authentication on for `muster serve` and the CLI. An
account's name must be an approver of the approvers file, and its roles at most that
approver's roles (the graph holds every decision to the file again). A password is read
from standard input when it is not a terminal (one line), else asked twice without echo.
"""

from __future__ import annotations

import argparse
import getpass
import sys

from graph.app.exit_codes import ExitCode
from graph.app.serve.accounts import ACCOUNTS_ENV, Accounts, accounts_path
from graph.approvers import APPROVERS_ENV, approvers_path, load_approvers
from workers.errors import ConfigError


def _password() -> str:
    if not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\n")
    first = getpass.getpass("password: ")
    if getpass.getpass("again: ") != first:
        raise ConfigError("the passwords differ")
    return first


def _roles(name: str, wanted: list[str] | None) -> tuple[str, ...]:
    approvers = load_approvers()
    if unknown := approvers.unknown_approver(name):
        raise ConfigError(
            f"{unknown}; add it to {approvers_path()} first (${APPROVERS_ENV} names another "
            "file): an account is an approver's"
        )
    held = approvers.approvers[name].roles
    extra = [role for role in wanted or () if role not in held]
    if extra:
        raise ConfigError(
            f"{name} holds {', '.join(held)} in {approvers_path()}, not {', '.join(extra)}"
        )
    return tuple(dict.fromkeys(wanted)) if wanted else held


async def cmd_account(args: argparse.Namespace) -> int:
    path = accounts_path()
    if path is None:
        raise ConfigError(
            f"set {ACCOUNTS_ENV} to the accounts file (created if missing); setting it turns "
            "authentication on for muster serve and the CLI"
        )
    accounts = Accounts(path)
    try:
        if args.account_command == "add":
            roles = _roles(args.name, args.roles)
            accounts.add(args.name, roles, _password(), replace=args.replace)
            print(f"account {args.name} ({', '.join(roles)}) in {path}")
        elif args.account_command == "token":
            print(accounts.new_token(args.name, args.label))
            print(
                f"an API token of {args.name}; shown once, only its hash is kept", file=sys.stderr
            )
        elif args.account_command == "list":
            for name, roles, tokens in accounts.names():
                print(f"{name}\t{','.join(roles)}\t{tokens} token(s)")
        else:
            print(f"{accounts.revoke_tokens(args.name)} token(s) of {args.name} revoked")
    finally:
        accounts.close()
    return ExitCode.OK
