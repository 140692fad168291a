"""`muster serve` in front of the fleet (issue 27: "in-process or in front of the fleet").

A ticket queued with `muster submit` is run by a real `muster worker` process on the
session's PostgreSQL database (the helpers of tests/test_fleet.py) and waits for its
refund's approval. `muster serve` on the same database lists it in /approvals; the decision
posted to the API is checked there and queued for the fleet (`queued_on_fleet`), not run in
the server; the worker resumes the thread and the refund runs once. Every wait polls a
condition with one safety bound (`HANG_TIMEOUT_S`).
"""

from __future__ import annotations

import json
import signal
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from graph.app.options import MusterOptions
from graph.app.serve.app import create_app
from graph.app.serve.auth import TOKENS_ENV, load_tokens
from graph.app.serve.front import FLEET_ENV
from tests.conftest import HANG_TIMEOUT_S, wait_until
from tests.test_actions import REFUND_TICKET, all_run_refunds, refund_rows
from tests.test_fleet import EXIT_DRAINED, EXIT_OK, STALLED_AFTER_S, Fleet, fleet, write_tickets
from tests.test_follow_ups import NEWS
from tests.test_serve import LEAD, Api
from tests.test_serve_accounts import serving

__all__ = ["fleet"]  # the fixture, from tests/test_fleet.py

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def serve_api(fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    tokens = fleet.env.root / "tokens.json"
    tokens.write_text(json.dumps({LEAD: "lead"}))
    monkeypatch.setenv(TOKENS_ENV, str(tokens))
    app = create_app(MusterOptions.resolve(db=fleet.url), load_tokens())
    with serving(app) as url, httpx.Client(base_url=url, timeout=HANG_TIMEOUT_S) as client:
        yield Api(url, client)


@pytest.fixture
def fleet_api(fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    """`muster serve` running threads in its own process (a fleet thread's decisions queued)."""
    monkeypatch.delenv(FLEET_ENV, raising=False)
    yield from serve_api(fleet, monkeypatch)


@pytest.fixture
def front_api(fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    """`muster serve` in front of the fleet (`MUSTER_SERVE_FLEET=1`): it runs nothing."""
    monkeypatch.setenv(FLEET_ENV, "1")
    yield from serve_api(fleet, monkeypatch)


def test_an_approval_through_the_api_is_queued_for_the_fleet(
    fleet: Fleet, fleet_api: Api, capfd: pytest.CaptureFixture[str]
) -> None:
    write_tickets(fleet.tickets, {"bf-01"})  # a duplicate charge: its refund waits for a human
    worker = fleet.start_worker(
        "w1", "--concurrency", "1", "--stalled-after", STALLED_AFTER_S, "--model", "offline"
    )
    submitted = fleet.fleet("submit", str(fleet.tickets))
    assert submitted.returncode == EXIT_OK, submitted.stderr
    (thread,) = fleet.threads()
    settled = wait_until(fleet.settled, "the fleet's ticket to wait for a human", proc=worker)
    assert settled is not None and settled[thread][0] == "interrupted"

    (item,) = [a for a in fleet_api.get("/approvals").json() if a["thread_id"] == thread]
    assert item["tool"] == "orders.issue_refund"
    decided = fleet_api.post(
        f"/threads/{thread}/decisions", {"decision": "approve", "digest": item["digest"]}
    )
    assert decided.status_code == 202, decided.text
    assert decided.json()["queued_on_fleet"] is True
    assert decided.json()["by"] == "lead"
    assert isinstance(decided.json()["job_id"], int)  # returned, not printed by the server
    assert "queued as job" not in capfd.readouterr().err

    def done() -> bool:
        now = fleet.settled()
        return now is not None and now[thread][0] == "done"

    wait_until(done, "the fleet worker to run the approved refund", proc=worker)
    assert f"{thread}: continuing (interrupted)" in fleet.log("w1")
    refunds = all_run_refunds(fleet.env)
    assert len(refunds) == 1, refunds
    assert len(refund_rows(fleet.env, refunds[0]["order_id"])) == 1
    detail = fleet_api.thread(thread)
    assert [(a["status"], a["decided_by"]) for a in detail["actions"]][-1] == ("executed", "lead")
    assert not detail["running_here"]  # the worker ran it, not the server
    again = fleet_api.post(f"/threads/{thread}/decisions", {"decision": "approve"})
    assert again.status_code == 409, again.text

    worker.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=HANG_TIMEOUT_S) == EXIT_DRAINED


def test_in_front_of_the_fleet_tickets_decisions_and_follow_ups_are_queued_for_workers(
    fleet: Fleet, front_api: Api, capfd: pytest.CaptureFixture[str]
) -> None:
    """`POST /threads` and `POST /threads/{id}/messages` queue jobs, as `muster submit` does;
    a real `muster worker` runs every turn; the server runs none and prints no CLI lines."""
    thread = f"front-{uuid.uuid4().hex[:8]}"
    submitted = front_api.post("/threads", {"request": REFUND_TICKET, "thread_id": thread})
    assert submitted.status_code == 202, submitted.text
    body = submitted.json()
    assert body["thread_id"] == thread and body["accepted"] == "run"
    assert body["queued_on_fleet"] is True and isinstance(body["job_id"], int)
    # No worker yet: the ticket waits in the queue, and reads as a new thread.
    queued = front_api.thread(thread)
    assert queued["thread_status"] == "new" and not queued["running_here"]
    again = front_api.post("/threads", {"request": REFUND_TICKET, "thread_id": thread})
    assert again.status_code == 409 and "queued on the fleet" in again.json()["detail"]
    (job,) = fleet.query(
        "SELECT task_name, status::text AS status FROM procrastinate_jobs WHERE id = %s",
        body["job_id"],
    )
    assert job == {"task_name": "muster:run_ticket", "status": "todo"}

    worker = fleet.start_worker(
        "w1", "--concurrency", "1", "--stalled-after", STALLED_AFTER_S, "--model", "offline"
    )

    def reached(status: str, request: str) -> dict[str, Any]:
        detail = front_api.thread(thread)
        assert not detail["running_here"]  # never this server
        return detail if (detail["thread_status"], detail["request"]) == (status, request) else {}

    waiting = wait_until(
        lambda: reached("interrupted", REFUND_TICKET),
        "the worker to reach the approval",
        proc=worker,
    )
    (pending,) = waiting["pending_approvals"]
    decided = front_api.post(
        f"/threads/{thread}/decisions", {"decision": "approve", "digest": pending["digest"]}
    )
    assert decided.status_code == 202, decided.text
    assert decided.json()["queued_on_fleet"] is True and decided.json()["job_id"]
    assert decided.json()["resume"]["approved"] is True
    wait_until(lambda: reached("done", REFUND_TICKET), "the worker to refund", proc=worker)

    follow = front_api.post(f"/threads/{thread}/messages", {"message": NEWS})
    assert follow.status_code == 202, follow.text
    assert follow.json()["accepted"] == "follow-up" and follow.json()["queued_on_fleet"] is True
    assert follow.json()["resume"] == {"message": 2}
    done = wait_until(
        lambda: reached("done", NEWS), "the worker to answer the follow-up", proc=worker
    )
    text = done["answer"]["text"]
    assert text.startswith(f"Request: {NEWS}")
    assert "$129.00 was already refunded on order 12345" in text
    assert [e["event"] for e in done["audit"]].count("execution") == 1
    assert [r["amount_cents"] for r in refund_rows(fleet.env, "12345")] == [12900]

    log = fleet.log("w1")
    assert f"{thread}: starting" in log
    assert f"{thread}: continuing (interrupted)" in log
    assert f"{thread}: follow-up: message 2" in log
    assert "queued as job" not in capfd.readouterr().err  # the CLI's lines are not the server's

    worker.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=HANG_TIMEOUT_S) == EXIT_DRAINED


def test_in_front_of_the_fleet_a_cancellation_is_finished_by_a_worker(
    fleet: Fleet, front_api: Api
) -> None:
    """The cancellation is written by the server; a worker routes the thread to its answer."""
    thread = f"front-cancel-{uuid.uuid4().hex[:8]}"
    worker = fleet.start_worker(
        "w1", "--concurrency", "1", "--stalled-after", STALLED_AFTER_S, "--model", "offline"
    )
    submitted = front_api.post("/threads", {"request": REFUND_TICKET, "thread_id": thread})
    assert submitted.status_code == 202 and submitted.json()["queued_on_fleet"], submitted.text

    def status_is(status: str) -> dict[str, Any]:
        detail = front_api.thread(thread)
        assert not detail["running_here"]
        return detail if detail["thread_status"] == status else {}

    wait_until(lambda: status_is("interrupted"), "the approval", proc=worker)
    cancelled = front_api.post(f"/threads/{thread}/cancel", {"reason": "customer withdrew"})
    assert cancelled.status_code == 202, cancelled.text
    assert cancelled.json()["queued_on_fleet"] is True
    done = wait_until(lambda: status_is("done"), "the worker to finish the cancel", proc=worker)
    assert "cancellation by lead: customer withdrew" in done["answer"]["stop_reason"]
    assert refund_rows(fleet.env, "12345") == []
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=HANG_TIMEOUT_S) == EXIT_DRAINED
