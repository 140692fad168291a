"""Who calls the API: a bearer token, mapped to an approver name by a tokens file.

`MUSTER_API_TOKENS` names a JSON file `{"<token>": "<approver>", ...}`. Every route but the
OpenAPI document needs `Authorization: Bearer <token>`; a request without one, or with a
token the file does not list, gets 401. The approver a token maps to is who decides: a
decision's `by` comes from the token, never from the request body, and is then held to the
approvers file (graph/approvers.json) like `muster approve --by`. This is a first step
toward real identities (issue 27 item 4: accounts, hashed credentials, sessions): the tokens
are stored in the clear, so the file must be readable by the server's user alone.
"""

from __future__ import annotations

import hmac
import json
import os
from dataclasses import dataclass
from pathlib import Path

from workers.errors import ConfigError

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
