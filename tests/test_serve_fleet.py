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
from collections.abc import Iterator

import httpx
import pytest

from graph.app.options import MusterOptions
from graph.app.serve.app import create_app
from graph.app.serve.auth import TOKENS_ENV, load_tokens
from tests.conftest import HANG_TIMEOUT_S, wait_until
from tests.test_actions import all_run_refunds, refund_rows
from tests.test_fleet import EXIT_DRAINED, EXIT_OK, STALLED_AFTER_S, Fleet, fleet, write_tickets
from tests.test_serve import LEAD, Api
from tests.test_serve_accounts import serving

__all__ = ["fleet"]  # the fixture, from tests/test_fleet.py

pytestmark = [pytest.mark.slow, pytest.mark.integration]


@pytest.fixture
def fleet_api(fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    tokens = fleet.env.root / "tokens.json"
    tokens.write_text(json.dumps({LEAD: "lead"}))
    monkeypatch.setenv(TOKENS_ENV, str(tokens))
    app = create_app(MusterOptions.resolve(db=fleet.url), load_tokens())
    with serving(app) as url, httpx.Client(base_url=url, timeout=HANG_TIMEOUT_S) as client:
        yield Api(url, client)


def test_an_approval_through_the_api_is_queued_for_the_fleet(fleet: Fleet, fleet_api: Api) -> None:
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
