"""Webhooks (graph/app/webhooks.py) against a real HTTP server on loopback.

The receiver is `http.server` in a thread of this process. It answers the first delivery
with 503, so the sender must retry it. Tests wait on the receiver's events (a
`threading.Condition`), never on a fixed time. The CLI test runs the real `muster run` and
`muster approve` as subprocesses: the thread waits for the reference refund's approval, then
ends, and both events arrive signed, the first one after a retry, each process having waited
for its delivery before exiting. The fast tests check the signature, a receiver that is down
(the run's outcome unchanged, one warning), and the bounded queue.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from graph.app import webhooks
from graph.app.webhooks import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    WebhookConfig,
    WebhookSender,
    sign,
    verify,
)
from tests.conftest import HANG_TIMEOUT_S, MusterEnv
from tests.test_studio import free_port, run_refunds

SECRET = "whsec-test-0123456789"
REFUND_TICKET = "Order #12345 was charged twice, please refund the duplicate"
EXIT_OK, EXIT_WAITING = 0, 5


@dataclass
class Delivery:
    headers: dict[str, str]
    body: bytes
    status: int

    @property
    def event(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.body)
        return loaded


@dataclass
class Receiver:
    """A webhook endpoint: what it was sent, and a condition to wait on."""

    url: str
    fail_first: int = 1
    """How many requests get 503 before the rest get 200."""
    hold: threading.Event | None = None
    """While set, not yet: requests wait for it before answering."""
    seen: list[Delivery] = field(default_factory=list)
    arrived: int = 0
    """Requests that reached the handler (answered or not)."""
    changed: threading.Condition = field(default_factory=threading.Condition)

    def wait_arrived(self, count: int) -> None:
        deadline = time.monotonic() + HANG_TIMEOUT_S
        with self.changed:
            while self.arrived < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    pytest.fail(f"{self.arrived} of {count} requests after {HANG_TIMEOUT_S:g}s")
                self.changed.wait(left)

    def wait_for(self, what: str, check: Callable[[list[Delivery]], bool]) -> list[Delivery]:
        deadline = time.monotonic() + HANG_TIMEOUT_S
        with self.changed:
            while not check(self.seen):
                left = deadline - time.monotonic()
                if left <= 0:
                    pytest.fail(f"no {what} after {HANG_TIMEOUT_S:g}s: {self.seen}")
                self.changed.wait(left)
            return list(self.seen)

    def accepted(self) -> list[dict[str, Any]]:
        return [d.event for d in self.seen if d.status == 200]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    port = free_port()
    found = Receiver(url=f"http://127.0.0.1:{port}/hooks/muster")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with found.changed:
                found.arrived += 1
                found.changed.notify_all()
            if found.hold is not None:
                found.hold.wait(HANG_TIMEOUT_S)
            with found.changed:
                status = 503 if len(found.seen) < found.fail_first else 200
                found.seen.append(Delivery(dict(self.headers.items()), body, status))
                found.changed.notify_all()
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        if found.hold is not None:
            found.hold.set()
        server.shutdown()
        server.server_close()


def signed_by(delivery: Delivery, secret: str = SECRET) -> bool:
    return verify(
        secret,
        delivery.body,
        timestamp=delivery.headers[TIMESTAMP_HEADER],
        signature=delivery.headers[SIGNATURE_HEADER],
    )


def test_signature_binds_body_secret_and_time() -> None:
    body, now = b'{"event": "ended"}', time.time()
    stamp = str(int(now))
    good = sign(SECRET, stamp, body)
    assert good.startswith("sha256=") and len(good) == len("sha256=") + 64
    assert verify(SECRET, body, timestamp=stamp, signature=good, now=now)
    assert not verify(SECRET, body + b" ", timestamp=stamp, signature=good, now=now)
    assert not verify("another-secret", body, timestamp=stamp, signature=good, now=now)
    assert not verify(SECRET, body, timestamp=str(int(now) + 1), signature=good, now=now)
    assert not verify(SECRET, body, timestamp=stamp, signature=good, now=now + 3600)


def test_no_url_or_no_secret_sends_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(webhooks.URL_ENV, raising=False)
    assert webhooks.sender() is None
    monkeypatch.setenv(webhooks.URL_ENV, "http://127.0.0.1:9/hook")
    monkeypatch.delenv(webhooks.SECRET_ENV, raising=False)
    assert webhooks.sender() is None  # unsigned webhooks are never sent
    webhooks.run_stopped("t-1", interrupts=(), answer_status="complete")  # and nothing raises


def test_a_receiver_that_is_down_costs_the_run_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    done = threading.Event()
    outcome: list[tuple[int | None, int]] = []

    def delivered(event: dict[str, Any], status: int | None, attempts: int) -> None:
        outcome.append((status, attempts))
        done.set()

    config = WebhookConfig(
        url=f"http://127.0.0.1:{free_port()}/nobody", secret=SECRET, attempts=3, backoff_s=0.01
    )
    sender = WebhookSender(config, on_delivered=delivered)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="muster.webhooks"):
        assert sender.send({"event": "ended", "thread_id": "t-down", "delivery": "d-1"})
        queued_in = time.monotonic() - started
        assert done.wait(HANG_TIMEOUT_S)
        assert sender.flush(HANG_TIMEOUT_S)
    assert queued_in < 0.5  # queued, not delivered, on the caller's time
    assert outcome == [(None, 3)]  # every attempt made, then given up
    warnings = [r for r in caplog.records if "t-down" in r.getMessage()]
    assert len(warnings) == 1, [r.getMessage() for r in caplog.records]
    assert "after 3 attempt(s)" in warnings[0].getMessage()


def test_the_queue_is_bounded(receiver: Receiver, caplog: pytest.LogCaptureFixture) -> None:
    receiver.fail_first = 0
    receiver.hold = threading.Event()  # the first delivery hangs until released
    config = WebhookConfig(url=receiver.url, secret=SECRET, attempts=1)
    sender = WebhookSender(config, queue_size=3)
    assert sender.send({"event": "ended", "thread_id": "t-0", "delivery": "d-0"})
    receiver.wait_arrived(1)  # taken off the queue: the sender's thread waits on it
    with caplog.at_level(logging.WARNING, logger="muster.webhooks"):
        kept = [
            sender.send({"event": "ended", "thread_id": f"t-{i}", "delivery": f"d-{i}"})
            for i in range(1, 6)
        ]
    assert kept == [True, True, True, False, False]  # 3 wait; the rest are dropped at once
    dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert len(dropped) == 2 and "t-4" in dropped[0], dropped
    receiver.hold.set()
    assert sender.flush(HANG_TIMEOUT_S)
    assert [e["thread_id"] for e in receiver.accepted()] == ["t-0", "t-1", "t-2", "t-3"]


@pytest.mark.slow
@pytest.mark.integration
def test_cli_runs_post_signed_waiting_and_ended_with_a_retry(
    muster_env: MusterEnv, receiver: Receiver
) -> None:
    hooks = {
        webhooks.URL_ENV: receiver.url,
        webhooks.SECRET_ENV: SECRET,
        webhooks.BACKOFF_ENV: "0.05",
        webhooks.FLUSH_ENV: str(HANG_TIMEOUT_S),  # the exit waits for delivery, however slow
    }
    thread = "hooked"
    run = muster_env.cli("run", REFUND_TICKET, "--thread", thread, extra_env=hooks)
    assert run.returncode == EXIT_WAITING, run.stdout + run.stderr

    seen = receiver.wait_for("the waiting event", lambda s: any(d.status == 200 for d in s))
    # The first attempt got 503 and was retried: the same delivery, signed again.
    assert [d.status for d in seen] == [503, 200], seen
    first, retried = seen
    assert first.headers[DELIVERY_HEADER] == retried.headers[DELIVERY_HEADER]
    assert first.body == retried.body
    waiting = retried.event
    assert waiting["event"] == "waiting" and waiting["thread_id"] == thread
    assert retried.headers[EVENT_HEADER] == "waiting"
    [ask] = waiting["waiting_for"]
    assert ask["kind"] == "approval" and ask["tool"] == "orders.issue_refund"
    assert "args" not in ask  # what it waits on, not the customer's data
    assert run_refunds(muster_env.orders_db, "12345") == []

    approved = muster_env.cli("approve", thread, "--by", "alice", extra_env=hooks)
    assert approved.returncode == EXIT_OK, approved.stdout + approved.stderr
    seen = receiver.wait_for(
        "the ended event", lambda s: len([d for d in s if d.status == 200]) == 2
    )
    ended = seen[-1]
    assert ended.status == 200 and ended.event["event"] == "ended", ended
    assert ended.event["thread_id"] == thread and ended.event["status"] == "done"
    assert ended.event["answer_status"]
    assert all(signed_by(d) for d in seen), seen
    assert not any(signed_by(d, "another-secret") for d in seen)
    assert len(run_refunds(muster_env.orders_db, "12345")) == 1
