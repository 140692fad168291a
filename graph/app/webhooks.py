"""Webhooks: a signed POST when a thread starts waiting for a human and when it ends.

Configured per deployment, by the environment of the process that runs the thread:

- `MUSTER_WEBHOOK_URL`: where to POST (unset: no webhooks).
- `MUSTER_WEBHOOK_SECRET`: the shared secret the signature is made with (required with a
  URL; without one nothing is sent, and that is logged once).
- `MUSTER_WEBHOOK_ATTEMPTS` (default 5), `MUSTER_WEBHOOK_TIMEOUT_S` (per attempt, default
  5), `MUSTER_WEBHOOK_BACKOFF_S` (the first retry's delay, default 0.5; doubled each time, at
  most 30 s, with jitter), `MUSTER_WEBHOOK_FLUSH_S` (how long a process that is exiting waits
  for deliveries still queued, default 5).

Every run goes through `graph.app.runtime`'s one streaming loop (`muster run`, `resume`,
`approve`, `clarify`, `cancel`, `serve`, the fleet's workers, batches), which calls
`run_stopped` when a run returns: `waiting` when it stopped at an interrupt (an approval, a
question, the kill switch), `ended` when it reached its end. A failed or drained run sends
nothing; it has not ended, and its resume will tell.

Each request is `POST` with a JSON body (`event`, `thread_id`, `status`, `at`, `delivery`,
and `waiting_for` or `answer_status`) and headers `X-Muster-Event`, `X-Muster-Delivery` (the
same on every retry of one event: a receiver drops duplicates by it), `X-Muster-Timestamp`
(Unix seconds of this attempt) and `X-Muster-Signature: sha256=<hex>`, the HMAC-SHA256 under
the secret of `<timestamp>.<body>`; `verify` checks one, and refuses a stale timestamp.

Delivery is off the run's path: `run_stopped` only puts the event on a bounded queue (1,000
events; a full queue drops the event and logs it) and one background thread delivers them
in order. A connection error, a timeout, 408, 429 or a 5xx is retried with exponential
backoff and full jitter, up to the attempts; any other status is final. A delivery that fails
for good is logged once, as a warning, and the run never hears of it.
"""

from __future__ import annotations

import atexit
import hashlib
import hmac
import json
import logging
import os
import queue
import random
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("muster.webhooks")

URL_ENV = "MUSTER_WEBHOOK_URL"
SECRET_ENV = "MUSTER_WEBHOOK_SECRET"
ATTEMPTS_ENV = "MUSTER_WEBHOOK_ATTEMPTS"
TIMEOUT_ENV = "MUSTER_WEBHOOK_TIMEOUT_S"
BACKOFF_ENV = "MUSTER_WEBHOOK_BACKOFF_S"
FLUSH_ENV = "MUSTER_WEBHOOK_FLUSH_S"

SIGNATURE_HEADER = "X-Muster-Signature"
TIMESTAMP_HEADER = "X-Muster-Timestamp"
EVENT_HEADER = "X-Muster-Event"
DELIVERY_HEADER = "X-Muster-Delivery"

QUEUE_SIZE = 1000
"""Events waiting for delivery at most; past it a new event is dropped (and logged)."""
MAX_BACKOFF_S = 30.0
RETRY_STATUSES = frozenset({408, 429})
"""Besides every 5xx, the statuses worth another attempt."""
TOLERANCE_S = 300.0
"""How old a timestamp `verify` accepts by default."""


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The `X-Muster-Signature` value for `body` sent at `timestamp`."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(
    secret: str,
    body: bytes,
    *,
    timestamp: str,
    signature: str,
    now: float | None = None,
    tolerance_s: float = TOLERANCE_S,
) -> bool:
    """Whether a delivery is Muster's: the signature matches (in constant time) and the
    timestamp is within `tolerance_s` of now. What a receiver runs first."""
    try:
        sent = float(timestamp)
    except ValueError:
        return False
    if abs((time.time() if now is None else now) - sent) > tolerance_s:
        return False
    return hmac.compare_digest(sign(secret, timestamp, body), signature)


def backoff_s(attempt: int, base_s: float) -> float:
    """The delay before retry `attempt` (1, 2, ...): exponential, capped, full jitter."""
    ceiling = min(MAX_BACKOFF_S, base_s * 2 ** (attempt - 1))
    return random.uniform(ceiling / 2, ceiling)


@dataclass(frozen=True)
class WebhookConfig:
    """One deployment's webhook settings (see the module's docstring)."""

    url: str
    secret: str
    attempts: int = 5
    timeout_s: float = 5.0
    backoff_s: float = 0.5
    flush_s: float = 5.0

    @classmethod
    def from_env(cls) -> WebhookConfig | None:
        """The settings in the environment; None when no URL is set (or it is unusable,
        which is logged once)."""
        url = os.environ.get(URL_ENV, "").strip()
        if not url:
            return None
        secret = os.environ.get(SECRET_ENV, "")
        problem = (
            f"${SECRET_ENV} is not set: webhooks are signed, so none is sent"
            if not secret
            else f"${URL_ENV} must be an http(s) URL, not {url[:60]!r}"
            if not url.startswith(("http://", "https://"))
            else None
        )
        if problem:
            _warn_once(problem)
            return None
        try:
            return cls(
                url=url,
                secret=secret,
                attempts=max(1, int(os.environ.get(ATTEMPTS_ENV) or 5)),
                timeout_s=float(os.environ.get(TIMEOUT_ENV) or 5.0),
                backoff_s=float(os.environ.get(BACKOFF_ENV) or 0.5),
                flush_s=float(os.environ.get(FLUSH_ENV) or 5.0),
            )
        except ValueError as error:
            _warn_once(f"webhook settings are malformed ({error}); none is sent")
            return None


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning("webhooks: %s", message)


Delivered = Callable[[dict[str, Any], int | None, int], None]
"""Told after each event's last attempt: the event, the final HTTP status (None: no answer),
and how many attempts it took."""


class WebhookSender:
    """A bounded queue of events and the one daemon thread that delivers them."""

    def __init__(
        self,
        config: WebhookConfig,
        *,
        on_delivered: Delivered | None = None,
        queue_size: int = QUEUE_SIZE,
    ) -> None:
        self.config = config
        self.on_delivered = on_delivered
        self._queue: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=queue_size)
        self._thread = threading.Thread(target=self._deliver_all, name="muster-webhooks")
        self._thread.daemon = True  # never keeps a process alive; `flush` bounds the wait
        self._thread.start()

    def send(self, event: dict[str, Any]) -> bool:
        """Queue `event` for delivery and return at once; False when the queue is full
        (the event is dropped, and that is logged)."""
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            log.warning(
                "webhooks: %d events wait for %s; %s on thread %s dropped",
                self._queue.maxsize,
                self.config.url,
                event.get("event"),
                event.get("thread_id"),
            )
            return False
        return True

    def flush(self, timeout_s: float | None = None) -> bool:
        """Wait (at most `timeout_s`, default the config's `flush_s`) until every queued
        event has been delivered or given up; True when none is left."""
        deadline = time.monotonic() + (self.config.flush_s if timeout_s is None else timeout_s)
        with self._queue.all_tasks_done:
            while self._queue.unfinished_tasks:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._queue.all_tasks_done.wait(left)
        return True

    def _deliver_all(self) -> None:
        while True:
            event = self._queue.get()
            try:
                self._deliver(event)
            except Exception:  # the thread must outlive any one event
                log.exception("webhooks: delivering %s failed", event.get("event"))
            finally:
                self._queue.task_done()

    def _deliver(self, event: dict[str, Any]) -> None:
        body = json.dumps(event, sort_keys=True, default=str).encode()
        status: int | None = None
        error = ""
        attempt = 0
        for attempt in range(1, self.config.attempts + 1):
            if attempt > 1:
                time.sleep(backoff_s(attempt - 1, self.config.backoff_s))
            status, error = self._post(event, body)
            if status is not None and 200 <= status < 300:
                break
            if status is not None and status < 500 and status not in RETRY_STATUSES:
                break  # final: another attempt would get the same answer
        ok = status is not None and 200 <= status < 300
        if not ok:
            log.warning(
                "webhooks: %s for thread %s was not delivered to %s after %d attempt(s): %s",
                event.get("event"),
                event.get("thread_id"),
                self.config.url,
                attempt,
                error or f"HTTP {status}",
            )
        if self.on_delivered is not None:
            self.on_delivered(event, status, attempt)

    def _post(self, event: dict[str, Any], body: bytes) -> tuple[int | None, str]:
        """One attempt: the status it got (None: none), and what went wrong."""
        timestamp = str(int(time.time()))
        request = urllib.request.Request(
            self.config.url,
            data=body,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "User-Agent": "muster-webhooks",
                EVENT_HEADER: str(event.get("event")),
                DELIVERY_HEADER: str(event.get("delivery")),
                TIMESTAMP_HEADER: timestamp,
                SIGNATURE_HEADER: sign(self.config.secret, timestamp, body),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.config.timeout_s) as response:
                return int(response.status), ""
        except urllib.error.HTTPError as refused:
            return int(refused.code), f"HTTP {refused.code}"
        except (OSError, ValueError) as failed:  # refused, reset, timed out, bad URL
            return None, f"{type(failed).__name__}: {failed}"


_senders: dict[WebhookConfig, WebhookSender] = {}
_lock = threading.Lock()


def sender() -> WebhookSender | None:
    """This process's sender for the configured webhook, or None when none is configured.
    One per configuration, started on first use; a process that exits first waits up to
    `flush_s` for what it queued."""
    config = WebhookConfig.from_env()
    if config is None:
        return None
    with _lock:
        found = _senders.get(config)
        if found is None:
            found = _senders[config] = WebhookSender(config)
            atexit.register(found.flush)
        return found


def _waiting(value: Any) -> dict[str, Any]:
    """What one interrupt waits for, without its arguments' values."""
    from graph.app.render import waiting_for  # the CLI's one line for it

    if not isinstance(value, dict):
        return {"kind": "unknown", "text": waiting_for(value)}
    fields = ("kind", "tool", "digest", "needs_role", "question", "by", "since")
    return {k: value[k] for k in fields if k in value} | {"text": waiting_for(value)}


def run_stopped(
    thread_id: str,
    *,
    interrupts: Sequence[Any],
    answer_status: str | None,
) -> None:
    """Tell the deployment's webhook how a run that returned stopped: at an interrupt
    (`waiting`, with what it waits for) or at its end (`ended`). Returns at once; never
    raises (a webhook is no reason to fail a run)."""
    try:
        target = sender()
        if target is None:
            return
        waiting = [_waiting(getattr(i, "value", i)) for i in interrupts]
        event: dict[str, Any] = {
            "event": "waiting" if waiting else "ended",
            "thread_id": thread_id,
            "status": "interrupted" if waiting else "done",
            "at": time.time(),
            "delivery": uuid.uuid4().hex,
        }
        if waiting:
            event["waiting_for"] = waiting
        else:
            event["answer_status"] = answer_status
        target.send(event)
    except Exception as error:  # principle: the run's outcome stands whatever this does
        _warn_once(f"could not queue an event: {error!r}")
