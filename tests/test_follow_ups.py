"""Follow-up messages continue a ticket (issue 27, item 2): the real CLI and `muster serve`
over the real SQLite store, real MCP servers (subprocesses) and the offline model.

- A first ticket, its refund approved, then "Any news on the refund?" on the same thread: the
  order id carries over, the answer says the refund was already executed, and the orders
  database still holds one refund row (exactly once across turns).
- Double-texting is rejected: a second message on a thread that is running (another process
  holds its lease), that has not finished (killed mid-run) or that waits for a human is
  refused with exit 2 (the API: 409) and runs nothing.
- The contact count reaches POL-ESC-001: the third contact after two unresolved ones is
  escalated to a team lead.
- A thread written before `turn` and `contacts` existed still resumes, and takes a follow-up.

Every wait polls a condition with one safety bound (`HANG_TIMEOUT_S`), never a fixed sleep.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from checkpoints.threads import status_of, thread_config
from graph.app.options import MusterOptions
from graph.app.runtime import open_store
from graph.app.serve.app import create_app
from graph.app.serve.auth import TOKENS_ENV, load_tokens
from tests.conftest import HANG_TIMEOUT_S, PROJECT_ROOT, MusterEnv, calls_so_far, wait_until
from tests.test_actions import REFUND_TICKET, audit_rows, refund_rows

EXIT_OK, EXIT_BAD_INPUT, EXIT_DEGRADED, EXIT_WAITING = 0, 2, 3, 5
NEWS = "Any news on the refund?"
"""A follow-up that names no order: it is about the thread's order 12345."""
MISSING = "Order #99999 never arrived, where is it?"
"""A ticket about an order that does not exist: answered, but not resolved (partial)."""


def thread_values(db: Path, thread: str) -> tuple[str, dict[str, Any]]:
    """The thread's status and values at its latest checkpoint, read from the store."""

    async def read() -> tuple[str, dict[str, Any]]:
        async with open_store(db) as (graph, _saver):
            snapshot = await graph.aget_state(thread_config(thread))
            return status_of(snapshot), dict(snapshot.values)

    return asyncio.run(read())


def one_error(result: subprocess.CompletedProcess[str]) -> str:
    """The one `muster: error:` line a refused command prints on stderr."""
    lines = [line for line in result.stderr.splitlines() if line.startswith("muster: error:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def executions(env: MusterEnv, thread: str) -> int:
    return sum(row["event"] == "execution" for row in audit_rows(env, thread))


@pytest.mark.integration
def test_a_follow_up_is_answered_with_the_earlier_context(muster_env: MusterEnv) -> None:
    db, thread = str(muster_env.checkpoint_db), "fu-refund"
    first = muster_env.cli("run", REFUND_TICKET, "--thread", thread, "--db", db)
    assert first.returncode == EXIT_WAITING, first.stdout + first.stderr

    # Waiting for a human: a second message is rejected, and nothing runs.
    calls = calls_so_far(muster_env.call_log, server="orders")
    busy = muster_env.cli("follow-up", thread, NEWS, "--db", db)
    assert busy.returncode == EXIT_BAD_INPUT, busy.stdout + busy.stderr
    assert "waits for a human (approval)" in one_error(busy)
    assert calls_so_far(muster_env.call_log, server="orders") == calls
    status, values = thread_values(muster_env.checkpoint_db, thread)
    assert status == "interrupted" and values["request"] == REFUND_TICKET

    approved = muster_env.cli("approve", thread, "--by", "lead", "--db", db)
    assert approved.returncode == EXIT_OK, approved.stdout + approved.stderr
    assert [r["amount_cents"] for r in refund_rows(muster_env, "12345")] == [12900]

    # `run --thread` on the answered thread still refuses, and names the follow-up command.
    again = muster_env.cli("run", NEWS, "--thread", thread, "--db", db)
    assert again.returncode == EXIT_BAD_INPUT
    hint = f"(done); send the customer's next message with `muster follow-up {thread}"
    assert hint in one_error(again)

    follow = muster_env.cli("follow-up", thread, NEWS, "--db", db, "--json")
    assert follow.returncode == EXIT_OK, follow.stdout + follow.stderr
    assert "follow-up on thread fu-refund: message 2" in follow.stderr
    printed = json.loads(follow.stdout)
    text = printed["answer"]["text"]
    assert text.startswith(f"Request: {NEWS}")
    # The order id carried over: billing looked at order 12345 without being told again.
    assert "$129.00 was already refunded on order 12345" in text
    # The answer refers to the earlier message and to the refund executed in turn 1.
    assert f"after «{REFUND_TICKET}» about 12345 (answered complete" in text
    assert "Already done on this thread (not proposed again): orders.issue_refund(" in text
    assert "approved by lead, EXECUTED" in text

    status, values = thread_values(muster_env.checkpoint_db, thread)
    assert status == "done" and values["turn"] == 2 and values["request"] == NEWS
    assert [c["text"] for c in values["contacts"]] == [REFUND_TICKET, NEWS]
    assert [c["subjects"] for c in values["contacts"]] == [["12345"], ["12345"]]
    assert values["contacts"][0]["status"] == "complete"
    assert values["order_ids"] == ["12345"]
    billing = [p for p in values["packets"] if p.recipient == "billing"]
    assert [p.inputs["order_id"] for p in billing] == ["12345"]
    # This turn's reports only (the first turn's were reset), nothing proposed or asked again.
    packet_ids = [r.packet_id for r in values["reports"]]
    assert sorted(packet_ids) == sorted({p.id for p in values["packets"]}), packet_ids
    assert all(not r.proposed_actions for r in values["reports"])
    assert [(a.status, a.decided_by) for a in values["actions"]][-1] == ("executed", "lead")
    assert values["answer"].status == "complete" and not values["answer"].needs_human
    # Exactly once across turns: one refund row, one execution in the audit log.
    assert [r["amount_cents"] for r in refund_rows(muster_env, "12345")] == [12900]
    assert executions(muster_env, thread) == 1


@pytest.mark.integration
def test_a_busy_thread_rejects_a_second_message_and_the_third_unresolved_contact_escalates(
    muster_env: MusterEnv,
) -> None:
    db, thread = str(muster_env.checkpoint_db), "fu-busy"
    # A run that cannot finish: its policy server never answers (in that process only).
    stuck = subprocess.Popen(
        [sys.executable, "-m", "graph.app.cli", "run", MISSING, "--thread", thread, "--db", db],
        cwd=PROJECT_ROOT,
        env={**os.environ, "MUSTER_POLICY_MODE": "hang"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until(
            lambda: calls_so_far(muster_env.call_log, server="policy"),
            "the run calling the hung policy server",
            proc=stuck,
        )
        running = muster_env.cli("follow-up", thread, "Any update?", "--db", db)
        assert running.returncode == EXIT_BAD_INPUT, running.stdout + running.stderr
        assert "is being advanced by another process" in one_error(running)
    finally:
        os.killpg(stuck.pid, signal.SIGKILL)  # the run and its servers, mid-run
        stuck.wait(HANG_TIMEOUT_S)

    # Killed mid-run: not finished, so a follow-up is refused until it is resumed.
    unfinished = muster_env.cli("follow-up", thread, "Any update?", "--db", db)
    assert unfinished.returncode == EXIT_BAD_INPUT
    assert "has not finished (in progress)" in one_error(unfinished)
    assert f"muster resume {thread}" in one_error(unfinished)
    resumed = muster_env.cli("resume", thread, "--db", db)
    assert resumed.returncode in (EXIT_OK, EXIT_DEGRADED), resumed.stdout + resumed.stderr
    status, values = thread_values(muster_env.checkpoint_db, thread)
    assert status == "done" and values["answer"].status == "partial"  # no such order
    assert values["request"] == MISSING and len(values["contacts"]) == 1

    second = muster_env.cli("follow-up", thread, "Still nothing. Where is order 99999?")
    assert second.returncode in (EXIT_OK, EXIT_DEGRADED), second.stdout + second.stderr
    _, values = thread_values(muster_env.checkpoint_db, thread)
    assert values["answer"].status == "partial"
    assert not any(p.recipient == "escalation" for p in values["packets"])  # one unresolved

    third = muster_env.cli("follow-up", thread, "This is the third time I write. Where is it?")
    assert third.returncode == EXIT_DEGRADED, third.stdout + third.stderr
    status, values = thread_values(muster_env.checkpoint_db, thread)
    assert status == "done" and values["turn"] == 3
    assert [c.get("status") for c in values["contacts"]] == ["partial", "partial", None]
    # The order id carried over twice, and POL-ESC-001 saw the count.
    assert values["order_ids"] == ["99999"]
    (escalation,) = [p for p in values["packets"] if p.recipient == "escalation"]
    assert (escalation.inputs["contacts"], escalation.inputs["unresolved_contacts"]) == ("3", "2")
    assert any(p.inputs.get("topic") == "escalation" for p in values["packets"])
    answer = values["answer"]
    assert answer.needs_human
    assert any(
        "Escalated to a team lead: contact 3 from the customer, after 2 unresolved contacts "
        "(POL-ESC-001)." in q
        for q in answer.open_questions
    )
    assert "POL-ESC-001: Escalate to a team lead" in answer.text


@pytest.mark.integration
def test_a_thread_from_before_follow_ups_resumes_and_takes_one(muster_env: MusterEnv) -> None:
    db = str(muster_env.checkpoint_db)
    source, old = "fu-source", "fu-old"
    # The plan of the reference ticket, as a thread that is then rejected (nothing refunded).
    first = muster_env.cli("run", REFUND_TICKET, "--thread", source, "--db", db)
    assert first.returncode == EXIT_WAITING, first.stdout + first.stderr
    rejected = muster_env.cli("approve", source, "--by", "lead", "--reject", "--db", db)
    assert rejected.returncode != EXIT_WAITING, rejected.stdout + rejected.stderr
    _, planned = thread_values(muster_env.checkpoint_db, source)
    # An older checkpoint: what `plan` wrote before `turn` and `contacts` existed, saved as
    # if the process had died right after it (its packets not dispatched yet).
    kept = (
        "request", "packets", "plan_notes", "intents", "domain", "language", "unaccounted",
        "confidence", "versions", "order_ids", "unknown_orders",
    )  # fmt: skip

    async def seed() -> None:
        async with open_store(db) as (graph, _saver):
            values = {key: planned[key] for key in kept if key in planned}
            await graph.aupdate_state(thread_config(old), values, as_node="dispatch")
            snapshot = await graph.aget_state(thread_config(old))
            assert "contacts" not in snapshot.values and "turn" not in snapshot.values
            assert status_of(snapshot) == "in progress"

    asyncio.run(seed())
    resumed = muster_env.cli("resume", old, "--db", db)
    assert resumed.returncode == EXIT_WAITING, resumed.stdout + resumed.stderr
    approved = muster_env.cli("approve", old, "--by", "lead", "--db", db)
    assert approved.returncode == EXIT_OK, approved.stdout + approved.stderr
    assert [r["amount_cents"] for r in refund_rows(muster_env, "12345")] == [12900]
    status, values = thread_values(muster_env.checkpoint_db, old)
    assert status == "done" and "contacts" not in values  # still the old shape: turn 1

    follow = muster_env.cli("follow-up", old, NEWS, "--db", db)
    assert follow.returncode == EXIT_OK, follow.stdout + follow.stderr
    assert "$129.00 was already refunded on order 12345" in follow.stdout
    status, values = thread_values(muster_env.checkpoint_db, old)
    assert status == "done" and values["turn"] == 2
    # The first message, as its answer quoted it; its order and its outcome.
    (earlier, latest) = values["contacts"]
    assert (earlier["turn"], earlier["text"], earlier["subjects"]) == (1, REFUND_TICKET, ["12345"])
    assert earlier["status"] == "complete" and latest["text"] == NEWS
    assert [r["amount_cents"] for r in refund_rows(muster_env, "12345")] == [12900]
    assert executions(muster_env, old) == 1


# --- `POST /threads/{id}/messages` ---------------------------------------------------------

LEAD = "lead-token-" + "x" * 24


class Api:
    def __init__(self, client: httpx.Client) -> None:
        self.client = client

    def post(self, path: str, body: Any) -> httpx.Response:
        return self.client.post(path, json=body, headers={"Authorization": f"Bearer {LEAD}"})

    def thread(self, thread_id: str) -> dict[str, Any]:
        response = self.client.get(
            f"/threads/{thread_id}", headers={"Authorization": f"Bearer {LEAD}"}
        )
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def wait_for(self, thread_id: str, status: str) -> dict[str, Any]:
        def reached() -> dict[str, Any]:
            body = self.thread(thread_id)
            return body if body["thread_status"] == status and not body["running_here"] else {}

        return wait_until(reached, f"thread {thread_id} {status}")


@pytest.fixture
def api(muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    """`create_app` under real uvicorn on a free loopback port, in a thread of its own."""
    tokens = muster_env.root / "tokens.json"
    tokens.write_text(json.dumps({LEAD: "lead"}))
    monkeypatch.setenv(TOKENS_ENV, str(tokens))
    app = create_app(MusterOptions.resolve(db=muster_env.checkpoint_db), load_tokens())
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", ws="none", log_level="warning"))
    runner = threading.Thread(target=asyncio.run, args=(server.serve(sockets=[sock]),))
    runner.start()
    try:
        wait_until(lambda: server.started or not runner.is_alive(), "the server starting")
        assert server.started, "uvicorn did not start"
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        with httpx.Client(base_url=url, timeout=HANG_TIMEOUT_S) as client:
            yield Api(client)
    finally:
        server.should_exit = True
        runner.join(HANG_TIMEOUT_S)
        sock.close()
    assert not runner.is_alive(), "the server did not stop"


@pytest.mark.integration
def test_a_follow_up_through_the_api(api: Api, muster_env: MusterEnv) -> None:
    thread = "api-fu"
    messages = f"/threads/{thread}/messages"
    assert api.post(messages, {"message": NEWS}).status_code == 404  # no such thread yet
    submitted = api.post("/threads", {"request": REFUND_TICKET, "thread_id": thread})
    assert submitted.status_code == 202, submitted.text
    # While this server runs it (its lease), and then while it waits for a human: 409.
    running = api.post(messages, {"message": NEWS})
    assert running.status_code == 409, running.text
    waiting = api.wait_for(thread, "interrupted")
    refused = api.post(messages, {"message": NEWS})
    assert refused.status_code == 409 and "waits for a human" in refused.json()["detail"]
    assert api.post(messages, {"message": "  "}).status_code == 422  # blank
    assert api.post(messages, {"text": NEWS}).status_code == 422  # not the body's shape
    assert api.thread(thread)["thread_status"] == "interrupted"

    (pending,) = waiting["pending_approvals"]
    decided = api.post(
        f"/threads/{thread}/decisions", {"decision": "approve", "digest": pending["digest"]}
    )
    assert decided.status_code == 202, decided.text
    api.wait_for(thread, "done")
    accepted = api.post(messages, {"message": NEWS})
    assert accepted.status_code == 202, accepted.text
    assert accepted.json()["accepted"] == "follow-up"
    assert accepted.json()["resume"] == {"message": 2}
    done = api.wait_for(thread, "done")
    text = done["answer"]["text"]
    assert text.startswith(f"Request: {NEWS}")
    assert "$129.00 was already refunded on order 12345" in text
    assert "Already done on this thread (not proposed again)" in text
    assert [r["amount_cents"] for r in refund_rows(muster_env, "12345")] == [12900]
    assert executions(muster_env, thread) == 1
