"""`muster serve` over PostgreSQL (issue 27: "over the same SQLite or PostgreSQL store").

The API of tests/test_serve.py, real uvicorn on a loopback port, with the checkpoints, the
audit log and the thread index on the session's PostgreSQL database (`postgres_url`; the
orders server keeps its own SQLite file). The reference refund goes from a ticket to one
refund row through the API alone: listed and searched (status, subject, time), found in
/approvals with its evidence, approved with a token, read back with its audit rows. A
second server on the same database sees the thread as the first left it. Every wait polls
the thread's status with one safety bound (`HANG_TIMEOUT_S`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import httpx
import pytest

from graph.app.options import MusterOptions
from graph.app.serve.app import create_app
from graph.app.serve.auth import TOKENS_ENV, load_tokens
from tests.conftest import HANG_TIMEOUT_S, MusterEnv, calls_so_far
from tests.test_actions import REFUND_TICKET, refund_rows
from tests.test_serve import ALICE, LEAD, Api
from tests.test_serve_accounts import serving

pytestmark = pytest.mark.integration


@pytest.fixture
def pg_api(
    muster_env: MusterEnv, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Api]:
    tokens = muster_env.root / "tokens.json"
    tokens.write_text(json.dumps({LEAD: "lead", ALICE: "alice"}))
    monkeypatch.setenv(TOKENS_ENV, str(tokens))
    monkeypatch.setenv("MUSTER_DB", postgres_url)
    app = create_app(MusterOptions.resolve(db=postgres_url), load_tokens())
    with serving(app) as url, httpx.Client(base_url=url, timeout=HANG_TIMEOUT_S) as client:
        yield Api(url, client)


def test_a_refund_through_the_api_on_postgres(
    pg_api: Api, muster_env: MusterEnv, postgres_url: str
) -> None:
    api = pg_api
    # The database is the session's, shared with the other PostgreSQL tests: this test's
    # thread has an id of its own, and lists are read for it alone.
    thread = f"pg-refund-{uuid.uuid4().hex[:8]}"

    def listed(**params: str) -> list[str]:
        """This thread, if `GET /threads` finds it (searched for its id unless `q` is given)."""
        response = api.get("/threads", params={"limit": "500", "q": thread, **params})
        assert response.status_code == 200, response.text
        return [t["thread_id"] for t in response.json() if t["thread_id"] == thread]

    submitted = api.post("/threads", {"request": REFUND_TICKET, "thread_id": thread})
    assert submitted.status_code == 202, submitted.text
    waiting = api.wait_for(thread, "interrupted")
    (pending,) = waiting["pending_approvals"]
    # Searched by status, subject and time: updated within the hour, not before it.
    for params, found in (
        ({"status": "interrupted", "q": "12345"}, [thread]),
        ({"status": "done"}, []),
        ({"q": "no such words in any ticket"}, []),
        ({"since": "1h"}, [thread]),
        ({"until": "1h"}, []),
        ({"since": "2h", "until": "2099-01-01"}, [thread]),
        ({"since": "2099-01-01"}, []),
    ):
        assert listed(**params) == found, params
    (item,) = [a for a in api.get("/approvals").json() if a["thread_id"] == thread]
    assert item["digest"] == pending["digest"]
    assert any("orders.find_order" in line for line in item["evidence"])

    # A wrong digest runs nothing; the right one, with lead's token, runs the refund once.
    decisions = f"/threads/{thread}/decisions"
    wrong = api.post(decisions, {"decision": "approve", "digest": "0" * 12})
    assert (wrong.status_code, wrong.json()["check"]) == (409, "digest")
    assert refund_rows(muster_env, "12345") == []
    approved = api.post(decisions, {"decision": "approve", "digest": item["digest"]})
    assert approved.status_code == 202, approved.text
    done = api.wait_for(thread, "done")
    assert done["answer_is_final"]
    assert [(a["status"], a["decided_by"]) for a in done["actions"]][-1] == ("executed", "lead")
    assert [r["amount_cents"] for r in refund_rows(muster_env, "12345")] == [12900]
    assert calls_so_far(muster_env.call_log, server="orders", tool="issue_refund") == 1
    events = [row["event"] for row in done["audit"]]
    assert events == ["authenticated", "decision", "attempt", "execution"], events
    assert done["audit"][0]["actor"] == "lead"
    assert json.loads(done["audit"][0]["result"]) == {"via": "tokens file", "answers": "approval"}
    again = api.post(decisions, {"decision": "approve"})
    assert again.status_code == 409
    assert [a for a in api.get("/approvals").json() if a["thread_id"] == thread] == []
    assert listed(status="done") == [thread]

    # Another server on the same database reads the same thread.
    app = create_app(MusterOptions.resolve(db=postgres_url), load_tokens())
    with (
        serving(app) as url,
        httpx.Client(base_url=url, timeout=HANG_TIMEOUT_S) as client,
    ):
        other = Api(url, client)
        assert other.thread(thread)["thread_status"] == "done"
        found = other.get("/threads", token=ALICE, params={"q": thread}).json()
        assert [t["thread_id"] for t in found] == [thread]
