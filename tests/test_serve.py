"""`muster serve`: the HTTP API, served by real uvicorn on a loopback port, over the real
SQLite checkpointer with real MCP servers (stdio subprocesses).

The reference refund goes from a ticket to exactly one refund row through the API alone:
submitted, waiting for approval, listed in /approvals with its digest, a wrong digest refused
with nothing run, approved with a token, the final answer delivered as a server-sent event.
Every wait polls the thread's status with one safety bound (`HANG_TIMEOUT_S`), never a
fixed sleep.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from graph.app.options import MusterOptions
from graph.app.serve.accounts import ACCOUNTS_ENV
from graph.app.serve.app import create_app
from graph.app.serve.auth import TOKENS_ENV, Authenticator, load_tokens
from graph.app.serve.front import FLEET_ENV, fleet_setting
from tests.conftest import HANG_TIMEOUT_S, PROJECT_ROOT, MusterEnv, wait_until
from tests.test_actions import REFUND_TICKET, audit_rows, refund_rows
from workers.errors import ConfigError

LEAD, ALICE, STRANGER = (secrets.token_urlsafe(24) for _ in range(3))
"""Tokens of the approver `lead`, of `alice`, and of a name no approvers file lists."""


@dataclass
class Api:
    """A running `muster serve` and a client for it."""

    url: str
    client: httpx.Client

    def as_(self, token: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"} if token else {}

    def get(self, path: str, token: str | None = LEAD, **kw: Any) -> httpx.Response:
        return self.client.get(path, headers=self.as_(token), **kw)

    def post(self, path: str, body: Any = None, token: str | None = LEAD) -> httpx.Response:
        return self.client.post(path, json=body, headers=self.as_(token))

    def thread(self, thread_id: str) -> dict[str, Any]:
        response = self.get(f"/threads/{thread_id}")
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def wait_for(self, thread_id: str, status: str) -> dict[str, Any]:
        """The thread once it has `status` and no run of the server holds it."""

        def reached() -> dict[str, Any]:
            body = self.thread(thread_id)
            done = body["thread_status"] == status and not body["running_here"]
            return body if done else {}

        return wait_until(reached, f"thread {thread_id} {status}")


@pytest.fixture
def api(muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    """`create_app` under real uvicorn on a free loopback port, in a thread of its own."""
    tokens = muster_env.root / "tokens.json"
    tokens.write_text(json.dumps({LEAD: "lead", ALICE: "alice", STRANGER: "mallory"}))
    monkeypatch.setenv(TOKENS_ENV, str(tokens))
    app = create_app(MusterOptions.resolve(db=muster_env.checkpoint_db), load_tokens())
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", ws="none", log_level="warning"))
    runner = threading.Thread(target=asyncio.run, args=(server.serve(sockets=[sock]),))
    runner.start()
    try:
        wait_until(lambda: server.started or not runner.is_alive(), "the server starting")
        assert server.started, "uvicorn did not start"
        url = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=url, timeout=HANG_TIMEOUT_S) as client:
            yield Api(url, client)
    finally:
        server.should_exit = True
        runner.join(HANG_TIMEOUT_S)
        sock.close()
    assert not runner.is_alive(), "the server did not stop"


def events(response: httpx.Response) -> Iterator[tuple[str, dict[str, Any]]]:
    """The (event, data) pairs of a server-sent event stream, as they arrive."""
    name = None
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: ") and name is not None:
            yield name, json.loads(line.removeprefix("data: "))
            name = None


@pytest.mark.integration
def test_a_refund_from_ticket_to_one_row_through_the_api(api: Api, muster_env: MusterEnv) -> None:
    submitted = api.post("/threads", {"request": REFUND_TICKET, "thread_id": "api-refund"})
    assert submitted.status_code == 202, submitted.text
    assert submitted.json()["thread_id"] == "api-refund"
    waiting = api.wait_for("api-refund", "interrupted")
    # The thread reads as `muster run --json` prints it, with the answer so far.
    assert waiting["waiting_for_human"] and not waiting["answer_is_final"]
    (pending,) = waiting["pending_approvals"]
    assert pending["tool"] == "orders.issue_refund"

    (item,) = api.get("/approvals").json()
    assert (item["thread_id"], item["digest"]) == ("api-refund", pending["digest"])
    assert item["args"]["amount_cents"] == 12900
    assert any("POL-BIL-004" in line for line in item["policy"])
    assert any("orders.find_order" in line for line in item["evidence"])
    assert "refund" in item["draft_reply"].lower()

    # Refused, and nothing runs: no token, an unknown token, a wrong digest, `by` in the body.
    decisions = "/threads/api-refund/decisions"
    assert api.post(decisions, {"decision": "approve"}, token=None).status_code == 401
    assert api.post(decisions, {"decision": "approve"}, token="x" * 32).status_code == 401
    wrong = api.post(decisions, {"decision": "approve", "digest": "0" * 12})
    assert wrong.status_code == 409, wrong.text
    assert wrong.json()["check"] == "digest" and "digest mismatch" in wrong.json()["detail"]
    by_body = api.post(decisions, {"decision": "approve", "by": "lead"}, token=ALICE)
    assert by_body.status_code == 422
    stranger = api.post(decisions, {"decision": "approve"}, token=STRANGER)
    assert (stranger.status_code, stranger.json()["check"]) == (403, "approver")
    assert api.post("/threads/nope/decisions", {"decision": "approve"}).status_code == 404
    assert refund_rows(muster_env, "12345") == []
    assert api.thread("api-refund")["thread_status"] == "interrupted"

    with api.client.stream("GET", "/threads/api-refund/events", headers=api.as_(ALICE)) as sse:
        assert sse.headers["content-type"].startswith("text/event-stream")
        stream = events(sse)
        assert next(stream) == (
            "status",
            {
                "thread_id": "api-refund",
                "status": "interrupted",
                "waiting_on": ["approval"],
                "running_here": False,
            },
        )
        approved = api.post(decisions, {"decision": "approve", "digest": item["digest"][:12]})
        assert approved.status_code == 202, approved.text
        assert approved.json()["by"] == "lead"  # from the token
        assert approved.json()["resume"]["by"] == "lead"
        rest = list(stream)  # the stream ends after the answer
    names = [name for name, _ in rest]
    assert names[-1] == "answer" and names.count("answer") == 1, names
    assert "progress" in names and "status" in names
    answer = rest[-1][1]
    assert answer["thread_status"] == "done" and answer["answer_is_final"]
    assert "executed (approved by lead)" in answer["answer"]["text"]
    rows = refund_rows(muster_env, "12345")
    assert [r["amount_cents"] for r in rows] == [12900]

    done = api.thread("api-refund")
    assert done["thread_status"] == "done" and done["answer_is_final"]
    assert [(a["status"], a["decided_by"]) for a in done["actions"]][-1] == ("executed", "lead")
    rows_of_audit = audit_rows(muster_env, "api-refund")
    assert [row["event"] for row in rows_of_audit] == [
        "authenticated",  # who the server authenticated, and how
        "decision",
        "attempt",
        "execution",
    ]
    assert rows_of_audit[0]["actor"] == "lead"
    assert rows_of_audit[0]["result"] == {"via": "tokens file", "answers": "approval"}
    again = api.post(decisions, {"decision": "approve"})
    assert again.status_code == 409 and "no pending approval" in again.json()["detail"]
    assert refund_rows(muster_env, "12345") == rows
    listed = api.get("/threads", params={"status": "done"}).json()
    assert [t["thread_id"] for t in listed] == ["api-refund"]
    assert api.get("/approvals").json() == []


@pytest.mark.integration
def test_a_question_answered_then_the_thread_cancelled(api: Api, muster_env: MusterEnv) -> None:
    thread = api.post("/threads", {"request": "I was charged twice for my order"}).json()
    thread_id = thread["thread_id"]
    asking = api.wait_for(thread_id, "interrupted")
    (question,) = asking["pending_questions"]
    assert question["kind"] == "clarification"
    decisions = f"/threads/{thread_id}/decisions"
    assert api.post(decisions, {"decision": "respond"}).status_code == 422  # no answer
    assert api.post(decisions, {"decision": "approve"}).status_code == 409  # nothing to approve
    answered = api.post(decisions, {"decision": "respond", "answer": "It is order #12345"})
    assert answered.status_code == 202, answered.text
    waiting = wait_until(
        lambda: (body := api.wait_for(thread_id, "interrupted"))["pending_approvals"] and body,
        "the refund proposed for the order the customer gave",
    )
    assert waiting["pending_approvals"][0]["args"]["order_id"] == "12345"

    cancelled = api.post(f"/threads/{thread_id}/cancel", {"reason": "customer withdrew"}, ALICE)
    assert cancelled.status_code == 202, cancelled.text
    done = api.wait_for(thread_id, "done")
    assert "cancellation by alice: customer withdrew" in done["answer"]["stop_reason"]
    assert [row["event"] for row in done["audit"]] == ["authenticated", "cancel", "authenticated"]
    assert refund_rows(muster_env, "12345") == []
    again = api.post(f"/threads/{thread_id}/cancel")
    assert again.status_code == 409 and "already done" in again.json()["detail"]

    # Retention through the API, as `muster delete` / `muster purge` (issue 28 item 3).
    nothing_old = api.post("/purge", {"older_than_days": 3650})
    assert nothing_old.status_code == 200 and nothing_old.json()["deleted"] == []
    deleted = api.client.request("DELETE", f"/threads/{thread_id}", headers=api.as_(LEAD))
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["audit_rows_redacted"] >= 2
    assert api.get(f"/threads/{thread_id}").status_code == 404
    assert thread_id not in [t["thread_id"] for t in api.get("/threads").json()]
    gone = api.client.request("DELETE", f"/threads/{thread_id}", headers=api.as_(LEAD))
    assert gone.status_code == 404


def test_tickets_are_checked_as_run_checks_them(api: Api, muster_env: MusterEnv) -> None:
    blank = api.post("/threads", {"request": "   "})
    assert blank.status_code == 422 and "blank" in blank.json()["detail"]
    long = api.post("/threads", {"request": "x" * 20_001})
    assert long.status_code == 422 and "the limit is 20,000" in long.json()["detail"]
    bad_id = api.post("/threads", {"request": "hello", "thread_id": "../etc"})
    assert bad_id.status_code == 422 and "thread_id" in bad_id.json()["detail"]
    assert api.post("/threads", {"text": "hello"}).status_code == 422
    assert api.get("/threads", params={"status": "sleeping"}).status_code == 422
    assert api.get("/threads", params={"since": "last tuesday"}).status_code == 422
    assert api.get("/threads").json() == []  # nothing was started


def test_every_route_but_the_document_needs_a_token(api: Api) -> None:
    routes = [
        (method, route.path.replace("{thread_id}", "t-1"))
        for route in api_routes()
        for method in sorted(route.methods - {"HEAD"})
    ]
    assert len(routes) == 10, routes
    for method, path in routes:
        for token in (None, "y" * 32):
            response = api.client.request(method, path, headers=api.as_(token), json={})
            assert response.status_code == 401, (method, path, response.text)
            assert response.headers["www-authenticate"] == "Bearer"
    assert api.get("/threads/unknown").status_code == 404
    assert api.get("/threads/unknown/events").status_code == 404
    assert api.post("/threads/unknown/cancel").status_code == 404
    assert api.get("/openapi.json", token=None).status_code == 200
    assert api.get("/docs", token=None).status_code == 404  # Swagger's page loads a CDN


def api_routes() -> list[Any]:
    """The API's routes (all on one router: FastAPI keeps an included router whole)."""
    from fastapi.routing import APIRoute

    from graph.app.serve.app import router

    return [route for route in router.routes if isinstance(route, APIRoute)]


def test_the_openapi_document(muster_env: MusterEnv, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({LEAD: "lead"}))
    document = create_app(MusterOptions.resolve(), load_tokens(tokens)).openapi()
    paths = {path: sorted(ops) for path, ops in document["paths"].items()}
    assert paths == {
        "/threads": ["get", "post"],
        "/threads/{thread_id}": ["delete", "get"],
        "/threads/{thread_id}/events": ["get"],
        "/approvals": ["get"],
        "/threads/{thread_id}/decisions": ["post"],
        "/threads/{thread_id}/cancel": ["post"],
        "/threads/{thread_id}/messages": ["post"],
        "/purge": ["post"],
    }
    schemas = document["components"]["schemas"]
    ref = "#/components/schemas/"
    post_threads = document["paths"]["/threads"]["post"]
    assert post_threads["requestBody"]["content"]["application/json"]["schema"]["$ref"] == (
        ref + "TicketIn"
    )
    assert post_threads["responses"]["202"]["content"]["application/json"]["schema"] == {
        "$ref": ref + "ThreadAccepted"
    }
    decide = document["paths"]["/threads/{thread_id}/decisions"]["post"]
    assert decide["requestBody"]["content"]["application/json"]["schema"]["$ref"] == (
        ref + "DecisionIn"
    )
    assert {"401", "403", "404", "409", "422"} <= set(decide["responses"])
    decision = schemas["DecisionIn"]
    assert decision["properties"]["decision"]["enum"] == ["approve", "reject", "respond"]
    assert "by" not in decision["properties"] and decision["additionalProperties"] is False
    detail = schemas["ThreadDetail"]["properties"]
    cli_keys = {"thread_id", "waiting_for_human", "status", "pending_approvals", "answer"}
    assert cli_keys | {"thread_status", "actions", "audit"} <= set(detail)
    assert {"digest", "policy", "evidence", "draft_reply"} <= set(
        schemas["ApprovalItem"]["properties"]
    )
    events = document["paths"]["/threads/{thread_id}/events"]["get"]["responses"]["200"]
    assert "text/event-stream" in events["content"]
    assert document["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


def test_a_tokens_file_is_required_and_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKENS_ENV, raising=False)
    with pytest.raises(ConfigError, match="MUSTER_API_TOKENS"):
        load_tokens()
    bad = tmp_path / "tokens.json"
    for content, words in (
        ("[]", "JSON object"),
        (json.dumps({"short": "lead"}), "at least 16"),
        (json.dumps({LEAD: ""}), "not an approver"),
        ("{", "cannot read"),
    ):
        bad.write_text(content)
        with pytest.raises(ConfigError, match=words):
            load_tokens(bad)
    with pytest.raises(ConfigError, match="does not exist"):
        load_tokens(tmp_path / "missing.json")
    tokens = load_tokens(_written(bad, {LEAD: " lead "}))
    assert (tokens.approver(LEAD), tokens.approver(LEAD[:-1]), tokens.approver("")) == (
        "lead",
        None,
        None,
    )


def _written(path: Path, data: dict[str, str]) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_only_serve_loads_fastapi() -> None:
    """The other commands never import FastAPI or uvicorn (`muster --help`, `threads`)."""
    probe = (
        "import sys, graph.app.cli, graph.app.commands; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('fastapi', 'uvicorn', 'starlette') or m.startswith('graph.app.serve.')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        timeout=HANG_TIMEOUT_S,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.slow
def test_muster_serve_serves_until_sigterm(muster_env: MusterEnv) -> None:
    """The command itself: refused without tokens (exit 2, one line), else serving the
    store until SIGTERM, which it ends cleanly."""
    refused = muster_env.cli("serve", extra_env={TOKENS_ENV: "", "MUSTER_ACCOUNTS": ""})
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "muster: error: muster serve needs bearer tokens: set MUSTER_API_TOKENS to a JSON "
        'file of {"<token>": "<approver>"} (approvers as in graph/approvers.json), or set '
        "MUSTER_ACCOUNTS to an accounts file (muster account add NAME)"
    ]
    tokens = _written(muster_env.root / "tokens.json", {LEAD: "lead"})
    on_sqlite = muster_env.cli("serve", extra_env={TOKENS_ENV: str(tokens), FLEET_ENV: "1"})
    assert on_sqlite.returncode == 2  # in front of the fleet: a PostgreSQL store or nothing
    (error,) = [line for line in on_sqlite.stderr.splitlines() if line.startswith("muster:")]
    assert error.startswith("muster: error: MUSTER_SERVE_FLEET: the fleet needs a PostgreSQL")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = muster_env.root / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "graph.app.cli", "serve", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=PROJECT_ROOT,
            env={**os.environ, TOKENS_ENV: str(tokens), ACCOUNTS_ENV: "", FLEET_ENV: ""},
        )
    try:
        wait_until(lambda: "Uvicorn running" in log.read_text(), "the server up", proc=proc)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=HANG_TIMEOUT_S) as client:
            assert client.get("/threads").status_code == 401
            listed = client.get("/threads", headers={"Authorization": f"Bearer {LEAD}"})
            assert (listed.status_code, listed.json()) == (200, [])
        proc.send_signal(signal.SIGTERM)
        proc.wait(HANG_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert "muster serve: http://127.0.0.1:" in text and "Application shutdown complete" in text
    assert "tickets run in this process" in text
    # No accounts: one line says identities are not checked beyond the tokens file.
    notice = Authenticator(tokens=load_tokens(tokens)).local_notice()
    assert notice and "identities are not checked" in notice and "local use" in notice
    assert text.count(notice) == 1, text


def test_in_front_of_the_fleet_is_an_explicit_setting(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`MUSTER_SERVE_FLEET`: 1/true/yes/on or 0/false/no/off/unset, else a one-line error;
    on a SQLite store the app is refused before it starts."""
    for value, on in (("1", True), ("on", True), ("TRUE", True), ("0", False), ("", False)):
        monkeypatch.setenv(FLEET_ENV, value)
        assert fleet_setting() is on, value
    monkeypatch.setenv(FLEET_ENV, "maybe")
    with pytest.raises(ConfigError, match="MUSTER_SERVE_FLEET='maybe'"):
        fleet_setting()
    tokens = load_tokens(_written(muster_env.root / "tokens.json", {LEAD: "lead"}))
    options = MusterOptions.resolve(db=muster_env.checkpoint_db)
    with pytest.raises(ConfigError, match="the fleet needs a PostgreSQL store"):
        create_app(options, tokens, fleet=True)
    monkeypatch.delenv(FLEET_ENV)
    create_app(options, tokens)  # in this process: nothing is opened before it starts
