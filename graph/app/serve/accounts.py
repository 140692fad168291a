"""Approvers' accounts: who they are (a name and roles), how they prove it, and their sessions.

`MUSTER_ACCOUNTS` names a SQLite file of accounts; setting it turns authentication on, for
`muster serve` (browser sessions and API tokens) and for the CLI (`MUSTER_TOKEN`, and
`--by` alone is refused). Without it, `muster approve --by NAME` is believed as before: for
local use on one machine, and the command says so on stderr (`local_use_notice`).

- An account is an approver of the approvers file (graph/approvers.json) with the roles it
  acts under: at most the roles the file gives that approver, since the graph checks the
  file again on every decision.
- Passwords are hashed with scrypt (`hashlib.scrypt`, N=2**14, r=8, p=1, a 16-byte salt):
  a slow, memory-hard key derivation, so a stolen file does not give the passwords away.
- API tokens are 32 random bytes; only their SHA-256 is stored (a token has the entropy a
  password lacks, so a fast hash is enough), looked up by that hash.
- A session is a random id (its SHA-256 stored) with a synchronizer CSRF token of its own,
  ending after `SESSION_TTL_S` or at logout.

Standard library only: the CLI imports it (lazily) without loading FastAPI.
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from workers.errors import ConfigError, MusterError

ACCOUNTS_ENV = "MUSTER_ACCOUNTS"
"""Names the accounts file; set, authentication is on."""
TOKEN_ENV = "MUSTER_TOKEN"
"""The CLI's API token when authentication is on."""

SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
"""scrypt's cost: about 16 MiB and tens of milliseconds per hash."""
MIN_PASSWORD_CHARS = 12
SESSION_TTL_S = 12 * 3600.0
"""A browser session lasts a working day."""
TOKEN_PREFIX = "mst_"

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS muster_account (
        name TEXT PRIMARY KEY, roles TEXT NOT NULL, password TEXT NOT NULL,
        created_at REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS muster_api_token (
        id TEXT PRIMARY KEY, account TEXT NOT NULL REFERENCES muster_account(name),
        hash TEXT NOT NULL UNIQUE, label TEXT NOT NULL DEFAULT '', created_at REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS muster_session (
        hash TEXT PRIMARY KEY, account TEXT NOT NULL REFERENCES muster_account(name),
        csrf TEXT NOT NULL, created_at REAL NOT NULL, expires_at REAL NOT NULL)""",
)


@dataclass(frozen=True)
class Identity:
    """Who an authenticated request (or command) speaks for, and how it proved it."""

    name: str
    roles: tuple[str, ...]
    via: str
    """`session`, `token <id>`, or `tokens file` (the older plain-text `MUSTER_API_TOKENS`)."""


def accounts_path() -> Path | None:
    """The accounts file `MUSTER_ACCOUNTS` names, or None: authentication is off."""
    named = os.environ.get(ACCOUNTS_ENV, "").strip()
    return Path(named).expanduser() if named else None


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    """`scrypt$N$r$p$salt$hash`, both in base64."""
    salt = salt or secrets.token_bytes(16)
    derived = hashlib.scrypt(
        password.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32
    )
    b64 = base64.b64encode
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${b64(salt).decode()}${b64(derived).decode()}"


def password_matches(password: str, stored: str) -> bool:
    """Whether `password` hashes to `stored` (compared in constant time)."""
    try:
        scheme, n, r, p, salt, want = stored.split("$")
        derived = hashlib.scrypt(
            password.encode(),
            salt=base64.b64decode(salt),
            n=int(n),
            r=int(r),
            p=int(p),
            dklen=32,
        )
    except ValueError:
        return False
    return scheme == "scrypt" and hmac.compare_digest(derived, base64.b64decode(want))


_DUMMY = hash_password("not a password of anyone", salt=b"\0" * 16)
"""Hashed against when the name is unknown, so a wrong name takes as long as a wrong password."""


def _sha256(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class Accounts:
    """The accounts file. One connection, used under a lock: the server calls it from the
    event loop (each statement is a primary-key lookup) and from threads (scrypt)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.parent.is_dir():
            raise ConfigError(f"{ACCOUNTS_ENV}: folder {path.parent} does not exist")
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
        with self._lock, self._conn:
            self._conn.execute("PRAGMA journal_mode=WAL")
            for statement in SCHEMA:
                self._conn.execute(statement)
        try:
            os.chmod(path, 0o600)  # hashes only, but nobody else's to read
        except OSError:
            pass

    @classmethod
    def from_env(cls) -> Accounts | None:
        """The accounts `MUSTER_ACCOUNTS` names, or None when authentication is off."""
        path = accounts_path()
        return cls(path) if path is not None else None

    def close(self) -> None:
        self._conn.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._conn:
            yield self._conn

    def add(self, name: str, roles: Sequence[str], password: str, *, replace: bool = False) -> None:
        """Add (or, with `replace`, reset) an account; the password is hashed here."""
        if len(password) < MIN_PASSWORD_CHARS:
            raise ConfigError(f"a password needs at least {MIN_PASSWORD_CHARS} characters")
        if not roles:
            raise ConfigError(f"account {name} needs at least one role")
        hashed = hash_password(password)
        with self._tx() as conn:
            exists = conn.execute("SELECT 1 FROM muster_account WHERE name = ?", (name,))
            if exists.fetchone() is not None and not replace:
                raise ConfigError(f"account {name} exists already (--replace resets it)")
            conn.execute(
                "INSERT OR REPLACE INTO muster_account (name, roles, password, created_at)"
                " VALUES (?, ?, ?, ?)",
                (name, json.dumps(list(roles)), hashed, time.time()),
            )
            if replace:  # a reset password ends the sessions the old one opened
                conn.execute("DELETE FROM muster_session WHERE account = ?", (name,))

    def names(self) -> list[tuple[str, tuple[str, ...], int]]:
        """Every account: its name, roles and how many API tokens it has."""
        with self._tx() as conn:
            rows = conn.execute(
                "SELECT a.name, a.roles, (SELECT COUNT(*) FROM muster_api_token AS t"
                " WHERE t.account = a.name) FROM muster_account AS a ORDER BY a.name"
            ).fetchall()
        return [(name, tuple(json.loads(roles)), count) for name, roles, count in rows]

    def _identity(self, name: str, via: str) -> Identity | None:
        with self._tx() as conn:
            row = conn.execute("SELECT roles FROM muster_account WHERE name = ?", (name,))
            found = row.fetchone()
        return Identity(name, tuple(json.loads(found[0])), via) if found else None

    def login(self, name: str, password: str) -> Identity | None:
        """The account if `password` is its password (slow on purpose: scrypt)."""
        with self._tx() as conn:
            row = conn.execute("SELECT password FROM muster_account WHERE name = ?", (name,))
            found = row.fetchone()
        matches = password_matches(password, found[0] if found else _DUMMY)
        return self._identity(name, "session") if found and matches else None

    def new_token(self, name: str, label: str = "") -> str:
        """A new API token for `name`, shown once: only its hash is kept."""
        if self._identity(name, "") is None:
            raise ConfigError(f"no account {name}; add it with `muster account add {name}`")
        token_id = secrets.token_hex(4)
        token = f"{TOKEN_PREFIX}{token_id}_{secrets.token_urlsafe(32)}"
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO muster_api_token (id, account, hash, label, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (token_id, name, _sha256(token), label, time.time()),
            )
        return token

    def token_identity(self, token: str) -> Identity | None:
        """The account an API token speaks for, or None."""
        with self._tx() as conn:
            row = conn.execute(
                "SELECT id, account FROM muster_api_token WHERE hash = ?", (_sha256(token),)
            ).fetchone()
        return self._identity(row[1], f"token {row[0]}") if row else None

    def revoke_tokens(self, name: str) -> int:
        """Remove every API token of `name`; how many there were."""
        with self._tx() as conn:
            cursor = conn.execute("DELETE FROM muster_api_token WHERE account = ?", (name,))
        return cursor.rowcount

    def new_session(self, identity: Identity) -> tuple[str, str]:
        """A browser session for `identity`: its id (the cookie) and its CSRF token."""
        session, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        now = time.time()
        with self._tx() as conn:
            conn.execute("DELETE FROM muster_session WHERE expires_at < ?", (now,))
            conn.execute(
                "INSERT INTO muster_session (hash, account, csrf, created_at, expires_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (_sha256(session), identity.name, csrf, now, now + SESSION_TTL_S),
            )
        return session, csrf

    def session(self, session: str) -> tuple[Identity, str] | None:
        """The identity and CSRF token of a live session, or None."""
        with self._tx() as conn:
            row = conn.execute(
                "SELECT account, csrf FROM muster_session WHERE hash = ? AND expires_at > ?",
                (_sha256(session), time.time()),
            ).fetchone()
        identity = self._identity(row[0], "session") if row else None
        return (identity, row[1]) if identity is not None and row else None

    def end_session(self, session: str) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM muster_session WHERE hash = ?", (_sha256(session),))


NOTICE_PREFIX = "muster: note:"
"""How a command's notice line starts (never an error: the command goes on)."""


def local_use_notice(flag: str = "--by") -> str:
    """The line a command prints when authentication is off: who it acts as is not checked."""
    return (
        f"{NOTICE_PREFIX} identities are not checked (no ${ACCOUNTS_ENV}): {flag} or the OS "
        f"user is believed as given, for local use only; set ${ACCOUNTS_ENV} to require "
        "accounts (docs/service.md)"
    )


def cli_identity(
    by: str | None, *, flag: str = "--by", out: TextIO | None = None
) -> tuple[str, tuple[str, ...] | None]:
    """Who a CLI decision or control command speaks for, and the roles to hold them to.

    Authentication off (no `MUSTER_ACCOUNTS`): `by`, else the OS user, believed for local
    use (roles None: the approvers file's), and `local_use_notice` is printed on `out`
    (stderr). On: the account of `MUSTER_TOKEN`; `by` alone is refused, and a `by` that
    names another account too."""
    path = accounts_path()
    if path is None:
        print(local_use_notice(flag), file=out or sys.stderr, flush=True)
        return by or getpass.getuser(), None
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise MusterError(
            f"authentication is on (${ACCOUNTS_ENV} is {path}): set ${TOKEN_ENV} to your API "
            f"token (`muster account token NAME` makes one); {flag} alone is refused"
        )
    accounts = Accounts(path)
    try:
        identity = accounts.token_identity(token)
    finally:
        accounts.close()
    if identity is None:
        raise MusterError(f"${TOKEN_ENV} is not an API token of {path}; ask for a new one")
    if by and by != identity.name:
        raise MusterError(
            f"{flag} {by} is not the account of ${TOKEN_ENV} ({identity.name}); leave {flag} "
            "out, or use that account's token"
        )
    return identity.name, identity.roles
