"""`muster serve` with accounts (`MUSTER_ACCOUNTS`): who is calling, proven.

Accounts are made with the real `muster account` command, passwords hashed with scrypt, API
tokens and sessions stored as hashes; the server is real uvicorn on a loopback port over the
real SQLite store with real MCP servers. With authentication on, every route but the login
page refuses an unauthenticated request (the app's routes are enumerated); a session's write
needs its CSRF token; an account is held to its roles on every decision (a refund above
$500 needs a team lead, a rollback the on-call engineer); an approval may lower a refund
within the policy's bounds and no further; two sessions approving at once execute the refund
once; and the CLI wants a token, refusing `--by` alone. Every wait polls with one safety
bound (`HANG_TIMEOUT_S`); concurrent requests start together on a barrier.
"""

from __future__ import annotations

import asyncio
import io
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.routing import APIRoute

from graph.app.cli import main
from graph.app.options import MusterOptions
from graph.app.serve.accounts import (
    ACCOUNTS_ENV,
    TOKEN_ENV,
    Accounts,
    cli_identity,
    hash_password,
    local_use_notice,
    password_matches,
)
from graph.app.serve.app import create_app
from graph.app.serve.auth import CSRF_HEADER, SESSION_COOKIE, load_authenticator
from graph.approvers import Decision, Refusal, check_decision, load_approvers
from tests.conftest import HANG_TIMEOUT_S, MusterEnv, calls_so_far, wait_until
from tests.test_actions import REFUND_TICKET, audit_rows, refund_rows
from tests.test_approvers import BIG_CENTS, BIG_ORDER, BIG_TICKET, add_big_order
from workers.errors import ConfigError, MusterError

PASSWORDS = {"lead": "lead-password-1", "alice": "alice-password-1"}


@dataclass
class Served:
    """A running `muster serve` with accounts, and its API tokens."""

    url: str
    tokens: dict[str, str]
    accounts: Path
    app: FastAPI

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=HANG_TIMEOUT_S, follow_redirects=False)

    def bearer(self, name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[name]}"}

    def thread(self, thread_id: str) -> dict[str, Any]:
        with self.client() as client:
            response = client.get(f"/threads/{thread_id}", headers=self.bearer("lead"))
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def wait_for(self, thread_id: str, status: str) -> dict[str, Any]:
        def reached() -> dict[str, Any]:
            body = self.thread(thread_id)
            if body["running_here"]:
                return {}
            if body["thread_status"] in ("done", "failed") and body["thread_status"] != status:
                pytest.fail(f"thread {thread_id} is {body['thread_status']}, not {status}")
            return body if body["thread_status"] == status else {}

        return wait_until(reached, f"thread {thread_id} {status}")

    def submit(self, request: str, thread_id: str) -> dict[str, Any]:
        with self.client() as client:
            body = {"request": request, "thread_id": thread_id}
            response = client.post("/threads", json=body, headers=self.bearer("lead"))
        assert response.status_code == 202, response.text
        return self.wait_for(thread_id, "interrupted")


def add_accounts(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    """`muster account add` for lead (every role) and alice (agent), passwords on stdin, and
    an API token each (`muster account token`)."""
    path = root / "accounts.sqlite"
    monkeypatch.setenv(ACCOUNTS_ENV, str(path))
    tokens = {}
    for name, password in PASSWORDS.items():
        monkeypatch.setattr("sys.stdin", io.StringIO(password + "\n"))
        assert main(["account", "add", name]) == 0
    for name in PASSWORDS:
        out = io.StringIO()
        monkeypatch.setattr("sys.stdout", out)
        assert main(["account", "token", name, "--label", "tests"]) == 0
        tokens[name] = out.getvalue().strip()
    return path, tokens


@contextmanager
def serving(app: FastAPI) -> Iterator[str]:
    """`app` under real uvicorn on a free loopback port, in a thread of its own; its URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", ws="none", log_level="warning"))
    runner = threading.Thread(target=asyncio.run, args=(server.serve(sockets=[sock]),))
    runner.start()
    try:
        wait_until(lambda: server.started or not runner.is_alive(), "the server starting")
        assert server.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        runner.join(HANG_TIMEOUT_S)
        sock.close()
    assert not runner.is_alive(), "the server did not stop"


@pytest.fixture
def served(muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    with monkeypatch.context() as stdio:
        path, tokens = add_accounts(muster_env.root, stdio)
    monkeypatch.setenv(ACCOUNTS_ENV, str(path))
    app = create_app(MusterOptions.resolve(db=muster_env.checkpoint_db), load_authenticator())
    with serving(app) as url:
        yield Served(url, tokens, path, app)


def log_in(client: httpx.Client, name: str, password: str) -> httpx.Response:
    """The login form as a browser posts it: its double-submit token from the page."""
    page = client.get("/login")
    assert page.status_code == 200
    match = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert match is not None
    return client.post("/login", data={"name": name, "password": password, "csrf": match[1]})


def session_csrf(client: httpx.Client) -> str:
    """The session's CSRF token, as the inbox page carries it."""
    page = client.get("/inbox")
    assert page.status_code == 200, page.text
    match = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
    assert match is not None
    return match[1]


# --- accounts, without a server -------------------------------------------------------------


def test_passwords_and_tokens_are_stored_hashed(tmp_path: Path) -> None:
    stored = hash_password("correct horse battery")
    assert stored.startswith("scrypt$16384$8$1$") and "correct" not in stored
    assert password_matches("correct horse battery", stored)
    assert not password_matches("correct horse batterz", stored)
    assert not password_matches("x", "garbage")
    accounts = Accounts(tmp_path / "a.sqlite")
    accounts.add("lead", ("agent", "team_lead"), "a long password")
    with pytest.raises(ConfigError, match="exists already"):
        accounts.add("lead", ("agent",), "a long password")
    with pytest.raises(ConfigError, match="at least 12"):
        accounts.add("bob", ("agent",), "short")
    token = accounts.new_token("lead")
    assert accounts.token_identity(token) == accounts.token_identity(token)
    identity = accounts.token_identity(token)
    assert identity is not None and identity.name == "lead" and identity.via.startswith("token ")
    assert accounts.token_identity(token + "x") is None
    assert accounts.login("lead", "a long password") is not None
    assert accounts.login("lead", "a long passwore") is None
    assert accounts.login("nobody", "a long password") is None
    session, csrf = accounts.new_session(identity)
    found = accounts.session(session)
    assert found is not None and found[1] == csrf
    accounts.end_session(session)
    assert accounts.session(session) is None
    accounts.close()
    raw = (tmp_path / "a.sqlite").read_bytes()
    assert token.encode() not in raw and session.encode() not in raw
    assert b"a long password" not in raw


def test_an_account_is_an_approvers_with_at_most_their_roles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ACCOUNTS_ENV, str(tmp_path / "accounts.sqlite"))
    monkeypatch.setattr("sys.stdin", io.StringIO("mallory-password\n"))
    with pytest.raises(ConfigError, match="'mallory' is not a known approver"):
        asyncio.run(_account("add", "mallory"))
    monkeypatch.setattr("sys.stdin", io.StringIO("alice-password-1\n"))
    with pytest.raises(ConfigError, match="not team_lead"):
        asyncio.run(_account("add", "alice", "--role", "team_lead"))
    monkeypatch.setattr("sys.stdin", io.StringIO("lead-password-12\n"))
    asyncio.run(_account("add", "lead", "--role", "agent"))  # fewer roles than the file's
    accounts = Accounts(tmp_path / "accounts.sqlite")
    assert accounts.names() == [("lead", ("agent",), 0)]
    accounts.close()
    monkeypatch.delenv(ACCOUNTS_ENV)
    assert main(["account", "list"]) == 2  # no accounts file named: an error, exit 2


async def _account(*argv: str) -> int:
    from graph.app.cli import build_parser
    from graph.app.serve.account_command import cmd_account

    return await cmd_account(build_parser().parse_args(["account", *argv]))


def test_the_cli_needs_a_token_when_authentication_is_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ACCOUNTS_ENV, raising=False)
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert cli_identity("lead") == ("lead", None)  # off: believed, for local use
    path = tmp_path / "accounts.sqlite"
    accounts = Accounts(path)
    accounts.add("alice", ("agent",), "alice-password-1")
    token = accounts.new_token("alice")
    accounts.close()
    monkeypatch.setenv(ACCOUNTS_ENV, str(path))
    with pytest.raises(MusterError, match="--by alone is refused"):
        cli_identity("lead")
    monkeypatch.setenv(TOKEN_ENV, "mst_0000_not-a-token-of-anyone")
    with pytest.raises(MusterError, match="not an API token"):
        cli_identity(None)
    monkeypatch.setenv(TOKEN_ENV, token)
    assert cli_identity(None) == ("alice", ("agent",))
    with pytest.raises(MusterError, match="--by lead is not the account"):
        cli_identity("lead")
    # `muster approve` itself refuses before reading any thread.
    monkeypatch.delenv(TOKEN_ENV)
    assert main(["approve", "no-such-thread", "--by", "lead"]) == 2


def test_without_accounts_the_cli_says_identities_are_not_checked(
    muster_env: MusterEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Authentication off: every decision or control command says, in one line on stderr,
    that who it acts as is not checked (local use); on, none says it."""
    monkeypatch.delenv(ACCOUNTS_ENV, raising=False)
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    db = str(muster_env.checkpoint_db)
    notice = local_use_notice()
    assert "identities are not checked" in notice and "local use" in notice
    for argv in (
        ["approve", "no-such-thread", "--by", "lead"],
        ["approve", "no-such-thread", "--reject"],
        ["cancel", "no-such-thread", "--by", "lead"],
    ):
        assert main([*argv, "--db", db]) == 2, argv
        err = capsys.readouterr().err.splitlines()
        assert [line for line in err if "not checked" in line] == [notice], err
        assert [line for line in err if line.startswith("muster: error:")], err
    path = tmp_path / "accounts.sqlite"
    accounts = Accounts(path)
    accounts.add("lead", ("team_lead",), "lead-password-12")
    monkeypatch.setenv(TOKEN_ENV, accounts.new_token("lead"))
    accounts.close()
    monkeypatch.setenv(ACCOUNTS_ENV, str(path))
    assert main(["approve", "no-such-thread", "--db", db]) == 2
    assert "not checked" not in capsys.readouterr().err


def test_rollbacks_need_the_on_call_role_and_edits_stay_within_bounds() -> None:
    config = load_approvers()
    rollback = {"change_id": "chg-1"}
    digest = "ab" * 32
    value = {"approved": True, "digest": digest, "by": "alice"}
    refused = check_decision(
        value, digest=digest, tool="deploys.rollback", args=rollback, config=config
    )
    assert isinstance(refused, Refusal) and "on-call" in refused.error
    lead = check_decision(
        {**value, "by": "lead"},
        digest=digest,
        tool="deploys.rollback",
        args=rollback,
        config=config,
    )
    assert isinstance(lead, Decision) and lead.role == "oncall"
    refund = {"order_id": BIG_ORDER, "amount_cents": BIG_CENTS, "expected_refunded_cents": 0}
    tool = "orders.issue_refund"

    def edit(by: str, **args: Any) -> Decision | Refusal:
        edited = {**refund, **args}
        return check_decision(
            {"approved": True, "digest": digest, "by": by, "args": edited},
            digest=digest,
            tool=tool,
            args=refund,
            config=config,
        )

    # An agent may approve a partial refund under the $500 limit, not the whole $649.
    partial = edit("alice", amount_cents=40000)
    assert isinstance(partial, Decision) and partial.args == {**refund, "amount_cents": 40000}
    assert isinstance(edit("alice"), Refusal)
    for bad, words in (
        ({"amount_cents": BIG_CENTS + 1}, "outside 1..64900"),
        ({"amount_cents": 0}, "outside"),
        ({"amount_cents": "100"}, "whole number"),
        ({"order_id": "12345"}, "order_id may not be edited"),
        ({"expected_refunded_cents": 5}, "may not be edited"),
    ):
        refused = edit("lead", **bad)
        assert isinstance(refused, Refusal) and words in refused.error, (bad, refused)


# --- the server -----------------------------------------------------------------------------


def leaf_routes(routes: list[Any]) -> list[Any]:
    """The routes under `routes`, included routers opened (FastAPI keeps each one whole)."""
    found = []
    for route in routes:
        included = getattr(route, "original_router", None)
        found += leaf_routes(included.routes) if included is not None else [route]
    return found


def app_routes(app: FastAPI) -> list[tuple[str, str]]:
    """Every (method, path) the app serves, with path parameters filled in."""
    found = []
    for route in leaf_routes(app.routes):
        methods = getattr(route, "methods", None) or set()
        for method in sorted(methods - {"HEAD"}):
            found.append((method, re.sub(r"\{[^}]+\}", "x1", route.path)))
    return found


def test_with_authentication_on_only_the_login_page_is_open(served: Served) -> None:
    app = served.app
    routes = app_routes(app)
    assert {(m, p) for m, p in routes} >= {
        ("GET", "/login"),
        ("POST", "/login"),
        ("GET", "/inbox"),
        ("GET", "/openapi.json"),
        ("POST", "/threads/x1/decisions"),
        ("GET", "/inbox/threads/x1/timeline"),
    }
    api = [r for r in leaf_routes(app.routes) if isinstance(r, APIRoute)]
    assert len(api) == len(routes) == 19, routes
    with served.client() as client:
        for method, path in routes:
            if path == "/login":
                continue
            for headers in ({}, {"Authorization": "Bearer " + "y" * 40}):
                response = client.request(method, path, headers=headers, json={})
                refused = response.status_code == 401 or (
                    response.status_code == 303 and response.headers["location"] == "/login"
                )
                assert refused, (method, path, headers, response.status_code, response.text)
            # A cookie that names no session is no better.
            client.cookies.set(SESSION_COOKIE, "forged-session-id")
            response = client.request(method, path, json={})
            client.cookies.clear()
            assert response.status_code in (401, 303), (method, path)
        assert client.get("/login").status_code == 200


@pytest.mark.integration
def test_sessions_csrf_roles_and_edits_on_the_server(served: Served, muster_env: MusterEnv) -> None:
    add_big_order(muster_env)
    small = served.submit(REFUND_TICKET, "small")
    big = served.submit(BIG_TICKET, "big")
    small_digest = small["pending_approvals"][0]["digest"]
    big_digest = big["pending_approvals"][0]["digest"]
    with served.client() as alice, served.client() as lead:
        wrong = log_in(alice, "alice", "not-her-password")
        assert wrong.status_code == 401 and "Wrong name or password" in wrong.text
        assert SESSION_COOKIE not in alice.cookies
        # The login form's double-submit token: a post without the page's cookie is refused.
        forged_login = alice.post(
            "/login", data={"name": "alice", "password": PASSWORDS["alice"], "csrf": "forged"}
        )
        assert forged_login.status_code == 403 and SESSION_COOKIE not in alice.cookies
        assert log_in(alice, "alice", PASSWORDS["alice"]).status_code == 303
        csrf = session_csrf(alice)
        assert alice.get("/session").json()["roles"] == ["agent"]

        # A session's write with no CSRF token, or a forged one, runs nothing.
        decide_big = "/threads/big/decisions"
        for headers in ({}, {CSRF_HEADER: "forged-" + csrf[7:]}):
            refused = alice.post(decide_big, json={"decision": "reject"}, headers=headers)
            assert (refused.status_code, refused.json()["check"]) == (403, "csrf"), refused.text
        # Below the threshold: an agent may not approve the $649 refund ...
        below = alice.post(
            decide_big,
            json={"decision": "approve", "digest": big_digest},
            headers={CSRF_HEADER: csrf},
        )
        assert (below.status_code, below.json()["check"]) == (403, "role"), below.text
        assert "needs an approver with role team_lead" in below.json()["detail"]
        # ... nor raise it, nor edit what the policy does not let her edit.
        args = big["pending_approvals"][0]["args"]
        for edited, check in (
            ({**args, "amount_cents": BIG_CENTS + 100}, "edit"),
            ({**args, "order_id": "12345"}, "edit"),
        ):
            response = alice.post(
                decide_big,
                json={"decision": "approve", "digest": big_digest, "args": edited},
                headers={CSRF_HEADER: csrf},
            )
            assert (response.status_code, response.json()["check"]) == (422, check)
        assert refund_rows(muster_env, BIG_ORDER) == []
        # A partial refund under $500 is hers to approve: it runs for the edited amount.
        partial = alice.post(
            decide_big,
            json={
                "decision": "approve",
                "digest": big_digest,
                "args": {**args, "amount_cents": 30000},
            },
            headers={CSRF_HEADER: csrf},
        )
        assert partial.status_code == 202, partial.text
        done = served.wait_for("big", "done")
        assert [r["amount_cents"] for r in refund_rows(muster_env, BIG_ORDER)] == [30000]
        (record,) = [a for a in done["actions"] if a["status"] == "executed"]
        assert record["decided_by"] == "alice" and record["args"]["amount_cents"] == 30000
        assert "approved with edits: amount_cents 64900 -> 30000" in record["note"]
        events = [(r["event"], r["actor"]) for r in audit_rows(muster_env, "big")]
        assert events[:2] == [("authenticated", "alice"), ("decision", "alice")]
        assert audit_rows(muster_env, "big")[0]["result"]["via"] == "session"

        # The lead, over an API token, approves the small one; logging out ends a session.
        assert log_in(lead, "lead", PASSWORDS["lead"]).status_code == 303
        lead_csrf = session_csrf(lead)
        assert lead.post("/logout", headers={CSRF_HEADER: lead_csrf}).status_code == 204
        assert lead.get("/threads").status_code == 401
    with served.client() as client:
        approved = client.post(
            "/threads/small/decisions",
            json={"decision": "approve", "digest": small_digest},
            headers=served.bearer("lead"),
        )
        assert approved.status_code == 202, approved.text
    served.wait_for("small", "done")
    assert [r["amount_cents"] for r in refund_rows(muster_env, "12345")] == [12900]
    first = audit_rows(muster_env, "small")[0]
    assert first["event"] == "authenticated" and first["result"]["via"].startswith("token ")


@pytest.mark.integration
def test_two_sessions_approving_at_once_execute_once(served: Served, muster_env: MusterEnv) -> None:
    waiting = served.submit(REFUND_TICKET, "twice")
    digest = waiting["pending_approvals"][0]["digest"]
    sessions = [served.client(), served.client()]
    try:
        tokens = []
        for client in sessions:
            assert log_in(client, "lead", PASSWORDS["lead"]).status_code == 303
            tokens.append(session_csrf(client))
        barrier = threading.Barrier(2)
        results: list[httpx.Response] = []

        def approve(client: httpx.Client, csrf: str) -> None:
            barrier.wait(HANG_TIMEOUT_S)
            results.append(
                client.post(
                    "/threads/twice/decisions",
                    json={"decision": "approve", "digest": digest},
                    headers={CSRF_HEADER: csrf},
                )
            )

        racers = [
            threading.Thread(target=approve, args=pair)
            for pair in zip(sessions, tokens, strict=True)
        ]
        for racer in racers:
            racer.start()
        for racer in racers:
            racer.join(HANG_TIMEOUT_S)
    finally:
        for client in sessions:
            client.close()
    statuses = sorted(r.status_code for r in results)
    # One holds the thread's lease and runs; the other is told it is busy (or, if it came
    # after the run, that nothing is pending): 409, and nothing of it runs.
    assert statuses == [202, 409], [r.text for r in results]
    served.wait_for("twice", "done")
    assert [r["amount_cents"] for r in refund_rows(muster_env, "12345")] == [12900]
    assert calls_so_far(muster_env.call_log, server="orders", tool="issue_refund") == 1
    decisions = [r for r in audit_rows(muster_env, "twice") if r["event"] == "decision"]
    assert len(decisions) == 1
