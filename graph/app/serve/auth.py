"""Who calls the API: accounts (`MUSTER_ACCOUNTS`, graph/app/serve/accounts.py), or a bearer
token mapped to an approver name by a tokens file (`MUSTER_API_TOKENS`, below).

`MUSTER_API_TOKENS` names a JSON file `{"<token>": "<approver>", ...}`. Every route but the
OpenAPI document needs `Authorization: Bearer <token>`; a request without one, or with a
token the file does not list, gets 401. The approver a token maps to is who decides: a
decision's `by` comes from the token, never from the request body, and is then held to the
approvers file (graph/approvers.json) like `muster approve --by`. This is a first step
toward real identities: the tokens are stored in the clear, so the file must be readable by
the server's user alone. With an accounts file instead (`Authenticator`), tokens are stored
hashed and people log in from a browser.

Logins are throttled (`LoginThrottle`): after `LOGIN_FAILURES` wrong passwords for one
account from one address within `LOGIN_WINDOW_S`, or `LOGIN_ADDRESS_FAILURES` from one
address whatever the name, `POST /login` answers 429 with `Retry-After` (the right password
too, and without hashing it) until the oldest of those failures is out of the window. The
counts live in the server's memory: a restart forgets them, and several server processes
count apart.
"""

from __future__ import annotations

import hmac
import json
import math
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import APIKeyCookie, HTTPAuthorizationCredentials, HTTPBearer

from graph.app.serve.accounts import ACCOUNTS_ENV, NOTICE_PREFIX, Accounts, Identity
from workers.errors import ConfigError, MusterError

TOKENS_ENV = "MUSTER_API_TOKENS"
"""Names the tokens file: a JSON object mapping each bearer token to an approver name."""

MIN_TOKEN_CHARS = 16
"""A shorter token is refused when the file is read: it could be guessed."""


@dataclass(frozen=True)
class ApiTokens:
    """The tokens the API accepts, each with the approver it speaks for."""

    approvers: dict[str, str]
    """token → approver name."""
    path: Path
    """The file they were read from, for messages."""

    def approver(self, token: str) -> str | None:
        """The approver `token` speaks for, or None: compared in constant time with every
        token, so the time taken does not tell how much of a token was right."""
        found = None
        given = token.encode()
        for known, name in self.approvers.items():
            if hmac.compare_digest(given, known.encode()):
                found = name
        return found


def tokens_path(given: str | Path | None = None) -> Path:
    """The tokens file: `given`, else `MUSTER_API_TOKENS`; a `ConfigError` if neither."""
    named = given or os.environ.get(TOKENS_ENV)
    if not named:
        raise ConfigError(
            f"muster serve needs bearer tokens: set {TOKENS_ENV} to a JSON file of "
            '{"<token>": "<approver>"} (approvers as in graph/approvers.json)'
        )
    return Path(named).expanduser()


def load_tokens(given: str | Path | None = None) -> ApiTokens:
    """Read and check the tokens file (`tokens_path`): a JSON object of token strings of at
    least `MIN_TOKEN_CHARS` characters, each mapped to a non-empty approver name."""
    path = tokens_path(given)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{TOKENS_ENV}: tokens file {path} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConfigError(f"{TOKENS_ENV}: cannot read tokens file {path} ({error})") from None
    if not isinstance(data, dict) or not data:
        raise ConfigError(f'{TOKENS_ENV}: {path} must be a JSON object {{"<token>": "<approver>"}}')
    approvers: dict[str, str] = {}
    for token, name in data.items():
        if len(token) < MIN_TOKEN_CHARS or not token.isprintable() or token != token.strip():
            raise ConfigError(
                f"{TOKENS_ENV}: {path} has a token of {len(token)} characters; give each "
                f"token at least {MIN_TOKEN_CHARS} printable characters (e.g. python -c "
                '"import secrets; print(secrets.token_urlsafe(32))")'
            )
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"{TOKENS_ENV}: {path} maps a token to {name!r}, not an approver")
        approvers[token] = name.strip()
    return ApiTokens(approvers=approvers, path=path)


class Authenticator:
    """How `muster serve` knows who calls. With an accounts file (`MUSTER_ACCOUNTS`): API
    tokens stored hashed, and browser sessions with CSRF tokens (`sessions` is True); else
    the plain tokens file of `MUSTER_API_TOKENS`, bearer tokens only."""

    def __init__(self, *, accounts: Accounts | None = None, tokens: ApiTokens | None = None):
        if (accounts is None) == (tokens is None):
            raise ValueError("give accounts or a tokens file")
        self.accounts = accounts
        self.tokens = tokens

    @property
    def sessions(self) -> bool:
        return self.accounts is not None

    def describe(self) -> str:
        if self.accounts is not None:
            return f"accounts of {self.accounts.path} (login, sessions, hashed API tokens)"
        assert self.tokens is not None
        return f"{len(self.tokens.approvers)} token(s) from {self.tokens.path}"

    def local_notice(self) -> str | None:
        """Without accounts, one line saying what is not checked (None with accounts)."""
        if self.accounts is not None:
            return None
        return (
            f"{NOTICE_PREFIX} identities are not checked beyond the plain tokens file (no "
            f"${ACCOUNTS_ENV}): each token is believed to be the approver it names, there is "
            "no login or inbox, and the CLI's `--by` on this store is believed as given; for "
            f"local use only (set ${ACCOUNTS_ENV}: docs/service.md)"
        )

    def bearer(self, token: str) -> Identity | None:
        """The identity an API token speaks for, or None."""
        if self.accounts is not None:
            return self.accounts.token_identity(token)
        assert self.tokens is not None
        name = self.tokens.approver(token)
        return Identity(name, (), "tokens file") if name is not None else None


def load_authenticator() -> Authenticator:
    """Accounts when `MUSTER_ACCOUNTS` is set, else the tokens file (`load_tokens`), else a
    `ConfigError`: the server never runs without authentication."""
    accounts = Accounts.from_env()
    if accounts is not None:
        return Authenticator(accounts=accounts)
    try:
        return Authenticator(tokens=load_tokens())
    except ConfigError as error:
        if os.environ.get(TOKENS_ENV):
            raise
        raise ConfigError(
            f"{error}, or set {ACCOUNTS_ENV} to an accounts file (muster account add NAME)"
        ) from None


LOGIN_FAILURES = 5
"""Wrong passwords for one account from one address before its logins there are refused."""
LOGIN_ADDRESS_FAILURES = 20
"""Failed logins from one address, whatever names they tried, before it is refused."""
LOGIN_WINDOW_S = 300.0
"""How far back failures count: a refusal lasts until the oldest of them is this old."""
LOGIN_MAX_KEYS = 10_000
"""Past this many (account, address) and address counters, the expired ones are dropped."""


class LoginThrottle:
    """Failed logins per (account, address) and per address, over a sliding window.

    `attempt` is asked before the password is checked, and counts the attempt as a failure
    at once (so concurrent guesses cannot slip past the count while scrypt runs); `succeeded`
    takes it back and forgets the account's failures from that address. Called from the
    event loop only; `clock` (monotonic seconds) is injected by tests."""

    def __init__(
        self,
        *,
        failures: int = LOGIN_FAILURES,
        address_failures: int = LOGIN_ADDRESS_FAILURES,
        window_s: float = LOGIN_WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = LOGIN_MAX_KEYS,
    ) -> None:
        self.failures = failures
        self.address_failures = address_failures
        self.window_s = window_s
        self.clock = clock
        self.max_keys = max_keys
        self._stamps: dict[tuple[str, ...], deque[float]] = {}

    def _recent(self, key: tuple[str, ...], now: float) -> deque[float]:
        stamps = self._stamps.setdefault(key, deque())
        while stamps and stamps[0] <= now - self.window_s:
            stamps.popleft()
        return stamps

    def attempt(self, name: str, address: str) -> float:
        """0.0 if `name` may try to log in from `address` now (the attempt is counted as a
        failure until `succeeded`), else how many seconds until it may."""
        now = self.clock()
        if len(self._stamps) > self.max_keys:
            self._stamps = {
                key: stamps
                for key, stamps in self._stamps.items()
                if stamps and stamps[-1] > now - self.window_s
            }
        counted = (
            (self._recent(("account", name, address), now), self.failures),
            (self._recent(("address", address), now), self.address_failures),
        )
        wait = max(
            (
                stamps[len(stamps) - limit] + self.window_s - now
                for stamps, limit in counted
                if len(stamps) >= limit
            ),
            default=0.0,
        )
        if wait > 0:
            return wait
        for stamps, _ in counted:
            stamps.append(now)
        return 0.0

    def succeeded(self, name: str, address: str) -> None:
        """The password was right: the account's failures from `address` are forgotten, and
        this attempt no longer counts against the address."""
        self._stamps.pop(("account", name, address), None)
        stamps = self._stamps.get(("address", address))
        if stamps:
            stamps.pop()


def retry_after(wait_s: float) -> str:
    """`Retry-After`'s whole seconds for a wait of `wait_s`, at least 1."""
    return str(max(1, math.ceil(wait_s)))


SESSION_COOKIE = "muster_session"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

_bearer = HTTPBearer(auto_error=False, description="an API token (muster account token NAME)")
_cookie = APIKeyCookie(
    name=SESSION_COOKIE,
    auto_error=False,
    description="a browser session (POST /login); writes also need its X-CSRF-Token",
)


def unauthenticated(auth: Authenticator) -> HTTPException:
    how = (
        "log in at /login, or give Authorization: Bearer <API token>"
        if auth.sessions
        else "give a valid token: Authorization: Bearer <token of $MUSTER_API_TOKENS>"
    )
    return HTTPException(status_code=401, detail=how, headers={"WWW-Authenticate": "Bearer"})


def session_of(request: Request, session: str | None) -> tuple[Identity, str] | None:
    """The live session a cookie names, and its CSRF token."""
    auth: Authenticator = request.app.state.auth
    if not session or auth.accounts is None:
        return None
    return auth.accounts.session(session)


def authenticate(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    session: Annotated[str | None, Depends(_cookie)],
) -> Identity:
    """Who the request speaks for: its bearer token's account, or its session's (a write
    carrying the session's CSRF token); 401 without either, 403 for a write whose CSRF
    token is missing or wrong."""
    auth: Authenticator = request.app.state.auth
    if credentials is not None:
        identity = auth.bearer(credentials.credentials)
        if identity is None:
            raise unauthenticated(auth)
        return identity
    found = session_of(request, session)
    if found is None:
        raise unauthenticated(auth)
    identity, csrf = found
    if request.method not in SAFE_METHODS:
        given = request.headers.get(CSRF_HEADER, "")
        if not hmac.compare_digest(given.encode(), csrf.encode()):
            raise CsrfRefused(
                f"a browser session's {request.method} needs its CSRF token in {CSRF_HEADER} "
                "(the inbox sends it; reload the page)"
            )
    return identity


class CsrfRefused(MusterError):
    """A session's write without its CSRF token (403)."""
