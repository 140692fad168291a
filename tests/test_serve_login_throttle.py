"""Login throttling of `muster serve` (graph/app/serve/auth.py, `LoginThrottle`).

After `LOGIN_FAILURES` wrong passwords for one account from one address within the window,
`POST /login` answers 429 with `Retry-After`, even to the right password, and hashes
nothing; once the window has passed, the right password logs in again. Time is the
throttle's injected clock, moved by the test: nothing sleeps. The server is real uvicorn
over the real accounts file (`muster account add`), as in tests/test_serve_accounts.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from graph.app.options import MusterOptions
from graph.app.serve.accounts import ACCOUNTS_ENV
from graph.app.serve.app import create_app
from graph.app.serve.auth import (
    LOGIN_FAILURES,
    LOGIN_WINDOW_S,
    SESSION_COOKIE,
    LoginThrottle,
    load_authenticator,
)
from tests.conftest import HANG_TIMEOUT_S, MusterEnv
from tests.test_serve_accounts import PASSWORDS, add_accounts, log_in, serving


@dataclass
class Clock:
    """Monotonic seconds that move only when the test says so."""

    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


def test_failures_per_account_and_address_over_a_sliding_window() -> None:
    clock = Clock()
    throttle = LoginThrottle(failures=3, address_failures=5, window_s=60.0, clock=clock)
    for _ in range(3):
        assert throttle.attempt("lead", "10.0.0.1") == 0.0
        clock.now += 1
    # The fourth try within the window waits until the first failure is 60 s old.
    assert throttle.attempt("lead", "10.0.0.1") == pytest.approx(57.0)
    # Another address, or another account from this one, is not held by lead's count.
    assert throttle.attempt("lead", "10.0.0.2") == 0.0
    assert throttle.attempt("alice", "10.0.0.1") == 0.0
    clock.now += 57.0  # the first failure leaves the window: one more try
    assert throttle.attempt("lead", "10.0.0.1") == 0.0
    assert throttle.attempt("lead", "10.0.0.1") > 0
    # A success forgets the account's failures there and takes its own attempt back.
    clock.now += 60.0
    assert throttle.attempt("lead", "10.0.0.1") == 0.0
    throttle.succeeded("lead", "10.0.0.1")
    for _ in range(3):
        assert throttle.attempt("lead", "10.0.0.1") == 0.0


def test_one_address_trying_many_names_is_held_too() -> None:
    clock = Clock()
    throttle = LoginThrottle(failures=3, address_failures=5, window_s=60.0, clock=clock)
    for n in range(5):
        assert throttle.attempt(f"name-{n}", "10.0.0.9") == 0.0
    assert throttle.attempt("name-new", "10.0.0.9") == pytest.approx(60.0)
    assert throttle.attempt("name-new", "10.0.0.8") == 0.0


def test_expired_counters_are_dropped_past_the_cap() -> None:
    clock = Clock()
    throttle = LoginThrottle(window_s=60.0, clock=clock, max_keys=10)
    for n in range(20):
        throttle.attempt(f"name-{n}", f"10.0.1.{n}")
    clock.now += 61.0
    throttle.attempt("lead", "10.0.0.1")
    assert len(throttle._stamps) == 2  # only lead's two counters are left


@dataclass
class Throttled:
    url: str
    clock: Clock

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=HANG_TIMEOUT_S, follow_redirects=False)


@pytest.fixture
def throttled(muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch) -> Iterator[Throttled]:
    with monkeypatch.context() as stdio:
        path, _tokens = add_accounts(muster_env.root, stdio)
    monkeypatch.setenv(ACCOUNTS_ENV, str(path))
    clock = Clock()
    app = create_app(
        MusterOptions.resolve(db=muster_env.checkpoint_db),
        load_authenticator(),
        login_throttle=LoginThrottle(clock=clock),
    )
    with serving(app) as url:
        yield Throttled(url, clock)


def test_repeated_wrong_passwords_are_refused_until_the_window_passes(
    throttled: Throttled,
) -> None:
    with throttled.client() as client:
        for n in range(LOGIN_FAILURES):
            wrong = log_in(client, "lead", f"wrong-password-{n}")
            assert wrong.status_code == 401 and "Wrong name or password" in wrong.text
            throttled.clock.now += 1.0
        # Now even the right password is refused, with how long to wait.
        refused = log_in(client, "lead", PASSWORDS["lead"])
        assert refused.status_code == 429, refused.text
        assert "Too many failed logins" in refused.text
        wait = int(refused.headers["Retry-After"])
        assert wait == int(LOGIN_WINDOW_S) - LOGIN_FAILURES
        assert SESSION_COOKIE not in client.cookies
        # Another account from the same address is not held by lead's failures.
        assert log_in(client, "alice", PASSWORDS["alice"]).status_code == 303
        client.cookies.clear()
        # Just before the window ends: still refused. After it: the right password works.
        throttled.clock.now += wait - 1.5
        assert log_in(client, "lead", PASSWORDS["lead"]).status_code == 429
        throttled.clock.now += 1.5
        welcome = log_in(client, "lead", PASSWORDS["lead"])
        assert welcome.status_code == 303, welcome.text
        assert welcome.headers["location"] == "/inbox"
        assert client.get("/session").json()["name"] == "lead"
