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
"""

from __future__ import annotations

import hmac
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import APIKeyCookie, HTTPAuthorizationCredentials, HTTPBearer

from graph.app.serve.accounts import ACCOUNTS_ENV, Accounts, Identity
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
