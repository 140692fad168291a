"""The ``mcpServers`` config file: which MCP servers the hub starts, and how.

The shape is the one most MCP clients use (Claude Desktop, Cursor), so any third-party server
can be dropped in. A server is either a stdio subprocess (``command``) or a remote server
(``url``, over streamable HTTP or SSE)::

    {"mcpServers": {
        "orders": {"command": "python", "args": ["-m", "servers.orders"],
                   "env": {}, "cwd": null, "inheritEnv": ["MUSTER_ORDERS_DB"],
                   "writeTools": ["issue_refund"], "readOnlyTools": []},
        "tickets": {"url": "https://tickets.example.com/mcp", "transport": "streamable_http",
                    "headers": {"Authorization": "Bearer ${TICKETS_TOKEN}"}}}}

Header values name secrets as ``${VAR}``, read from the hub's environment, so a servers file
never holds a token. (For stdio servers, langchain-mcp-adapters expands ``${VAR}`` in ``env``
values the same way: writing one is an explicit grant of that variable to the server.)

``inheritEnv`` names the variables of the hub's environment a stdio server sees: exact
names, or prefixes ending in ``*``. A prefix never matches a secret (``is_secret_name``: the
approval secret, and any name containing SECRET, TOKEN, KEY, PASSWORD, PASSWD or CREDENTIAL):
only its exact name grants one, so ``["*"]`` or ``["MUSTER_*"]`` cannot hand the approval
secret to a server. A key written twice in one JSON object is an error, not a silent override.

``sessions``, ``maxInFlight``, ``requests_per_s`` and ``burst`` bound the load on a server
(`workers.hub.backpressure`): its sessions, its calls at once, the calls that start a second
(none unset) and how many of those may start together.

``writeTools`` and ``readOnlyTools`` are our extensions. Tools are writes until proven reads
(docs/architecture.md principle 12): a tool is offered to workers only if its server marks it
``readOnlyHint: true`` or ``readOnlyTools`` lists it. ``writeTools`` declares tools
side-effecting whatever the server says; ``readOnlyTools`` vouches for tools a server leaves
unannotated (annotations are hints the server controls; these lists are controlled by whoever
deploys Muster). A server's own claim that a tool writes (``readOnlyHint: false`` or
``destructiveHint: true``) is never overridden by ``readOnlyTools``.

This module never imports the ``servers`` package: the hub talks to servers only over MCP.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from mcp.client.stdio import get_default_environment
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from workers.errors import ConfigError
from workers.hub.allowlist import is_valid_server_name

DEFAULT_SERVERS_FILE: Path = (
    Path(__file__).resolve().parents[2] / "domains" / "support" / "servers.json"
)


class ServersConfigError(ConfigError, ValueError):
    """The servers config file is missing or malformed (one-line message naming the file)."""


RemoteTransport = Literal["streamable_http", "sse"]
"""How a remote server is reached: MCP's streamable HTTP, or the older HTTP+SSE transport."""

# Spellings other clients and langchain-mcp-adapters accept for streamable HTTP.
_TRANSPORTS: dict[str, RemoteTransport] = {
    "streamable_http": "streamable_http",
    "streamable-http": "streamable_http",
    "http": "streamable_http",
    "sse": "sse",
}
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

APPROVAL_SECRET_VAR = "MUSTER_APPROVAL_SECRET"
"""The variable holding the key approval tokens are signed with; only the server that
verifies them (``orders``) is granted it, by exact name."""
SECRET_NAME_PARTS: tuple[str, ...] = ("SECRET", "TOKEN", "KEY", "PASSWORD", "PASSWD", "CREDENTIAL")
"""A variable whose name contains one of these (any case) is a secret: no wildcard grants it."""


def is_secret_name(name: str) -> bool:
    """True if ``name`` is a variable only an exact ``inheritEnv`` entry may grant."""
    upper = name.upper()
    return name == APPROVAL_SECRET_VAR or any(part in upper for part in SECRET_NAME_PARTS)


def inherits(name: str, patterns: Sequence[str]) -> bool:
    """True if a server whose ``inheritEnv`` is ``patterns`` sees the variable ``name``: an
    exact entry always grants it; a prefix entry (``"MUSTER_*"``, ``"*"``) grants it only if
    it is not a secret."""
    if name in patterns:
        return True
    return not is_secret_name(name) and any(
        pattern.endswith("*") and name.startswith(pattern[:-1]) for pattern in patterns
    )


MAX_SESSIONS = 8
"""The most sessions one server may be given (`"sessions"` in the servers file)."""


class _ServerBase(BaseModel):
    # Unknown keys (e.g. "disabled", "type" written by other clients) are ignored, not fatal.
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)

    write_tools: list[str] = Field(default_factory=list, alias="writeTools")
    """Tools the operator declares as side-effecting whatever the server's annotations say."""
    read_only_tools: list[str] = Field(default_factory=list, alias="readOnlyTools")
    """Tools the operator vouches are reads though the server does not mark them
    ``readOnlyHint: true`` (an unannotated tool is otherwise a write, never offered to workers)."""
    sessions: int = Field(default=1, ge=1, le=MAX_SESSIONS)
    """How many sessions the hub keeps to this server (stdio: that many processes). Read
    calls go to the least busy one, so a fan-out is not served one call at a time by one
    process; write tools always use the first (one writer)."""
    max_in_flight: int | None = Field(default=None, ge=1, le=1024, alias="maxInFlight")
    """The most calls to this server at once (back-pressure: the rest wait their turn);
    unset, the hub's default (`MUSTER_SERVER_MAX_IN_FLIGHT`, else 16)."""
    requests_per_s: float | None = Field(default=None, gt=0, le=10_000, allow_inf_nan=False)
    """The most calls to this server that start per second (the rest wait their turn, before
    the in-flight cap); unset, no rate limit."""
    burst: int | None = Field(default=None, ge=1, le=1024)
    """Calls that may start at once after a quiet spell, under `requests_per_s` (default 1)."""

    @model_validator(mode="after")
    def _burst_needs_a_rate(self) -> _ServerBase:
        if self.burst is not None and self.requests_per_s is None:
            raise ValueError("'burst' needs 'requests_per_s' (the rate it bursts over)")
        return self

    @model_validator(mode="after")
    def _not_both(self) -> _ServerBase:
        both = sorted(set(self.write_tools) & set(self.read_only_tools))
        if both:
            raise ValueError(
                f"{', '.join(map(repr, both))} listed in both writeTools and readOnlyTools; "
                "keep each tool in one of them"
            )
        return self


class StdioServerConfig(_ServerBase):
    """How to start one stdio MCP server (a subprocess the hub owns)."""

    transport: Literal["stdio"] = "stdio"
    """Always "stdio"; a server with ``command`` is started as a subprocess."""
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    inherit_env: list[str] = Field(default_factory=list, alias="inheritEnv")
    """Variables of the hub's environment the server may see: exact names, or prefixes
    ending in '*' (which never match a secret, see `inherits`). Everything else stays out (a
    third-party server gets no API keys and no approval secret); the SDK's minimal environment
    (PATH, HOME, ...) is always passed."""

    def environment(self, parent: Mapping[str, str]) -> dict[str, str]:
        """The child's environment: the SDK's minimal one, the inherited variables, `env`."""
        inherited = {
            name: value for name, value in parent.items() if inherits(name, self.inherit_env)
        }
        return {**get_default_environment(), **inherited, **self.env}

    @field_validator("transport", mode="before")
    @classmethod
    def _stdio_only(cls, value: object) -> object:
        if value != "stdio":
            raise ValueError(
                f"transport {value!r} needs 'url' (a remote server); "
                "a server with 'command' is a stdio server"
            )
        return value


class RemoteServerConfig(_ServerBase):
    """How to reach one remote MCP server over streamable HTTP or SSE."""

    url: str
    """The endpoint, http:// or https:// (e.g. ``http://127.0.0.1:8000/mcp``; SSE: ``.../sse``)."""
    transport: RemoteTransport = "streamable_http"
    """``streamable_http`` (the default; also spelt ``streamable-http`` or ``http``) or ``sse``."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Sent with every request. Values may name variables of the hub's environment as
    ``${VAR}`` (e.g. ``"Bearer ${MY_TOKEN}"``); they are resolved when the session opens."""

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"url must be an http:// or https:// URL, not {value!r}")
        return value

    @field_validator("transport", mode="before")
    @classmethod
    def _known_transport(cls, value: object) -> object:
        if value == "stdio":
            raise ValueError("transport 'stdio' needs 'command' instead of 'url'")
        if not isinstance(value, str) or value not in _TRANSPORTS:
            raise ValueError(
                f"unknown transport {value!r}; use 'streamable_http' or 'sse' with 'url', "
                "or 'command' for a stdio server"
            )
        return _TRANSPORTS[value]

    def missing_variables(self, environ: Mapping[str, str]) -> list[tuple[str, str]]:
        """(header, variable) pairs whose ``${VAR}`` is not set in ``environ``."""
        return [
            (header, name)
            for header, value in self.headers.items()
            for name in _VARIABLE.findall(value)
            if name not in environ
        ]

    def resolved_headers(self, environ: Mapping[str, str], *, server: str) -> dict[str, str]:
        """The headers with every ``${VAR}`` replaced from ``environ``.

        Raises ServersConfigError naming the server and the first variable that is not set.
        """
        for header, name in self.missing_variables(environ):
            raise ServersConfigError(_missing_variable(server, header, name))
        return {
            header: _VARIABLE.sub(lambda match: environ[match.group(1)], value)
            for header, value in self.headers.items()
        }


def _missing_variable(server: str, header: str, name: str) -> str:
    return (
        f"server {server!r}: header {header!r} uses ${{{name}}}, but {name} is not set in "
        "the environment; set it or remove the header"
    )


def _kind(value: Any) -> str | None:
    if isinstance(value, dict):
        return "remote" if "url" in value else "stdio"
    if isinstance(value, _ServerBase):
        return "remote" if isinstance(value, RemoteServerConfig) else "stdio"
    return None


ServerConfig = StdioServerConfig | RemoteServerConfig
"""One configured server: a stdio subprocess or a remote (HTTP) server."""

_AnyServer = Annotated[
    Annotated[StdioServerConfig, Tag("stdio")] | Annotated[RemoteServerConfig, Tag("remote")],
    Discriminator(
        _kind,
        custom_error_type="server_entry",
        custom_error_message="a server must be an object with 'command' or 'url'",
    ),
]


class ServersConfig(BaseModel):
    """All configured servers, keyed by server name (the ``server`` part of ``server.tool``)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)

    mcp_servers: dict[str, _AnyServer] = Field(alias="mcpServers")

    @field_validator("mcp_servers", mode="before")
    @classmethod
    def _command_or_url(cls, value: object) -> object:
        for name, entry in value.items() if isinstance(value, dict) else ():
            if not isinstance(entry, dict):
                continue  # the discriminator reports it
            if "command" in entry and "url" in entry:
                raise ValueError(
                    f"server {name!r} has both 'command' and 'url'; give 'command' to start a "
                    "stdio server or 'url' to reach a remote one"
                )
            if "command" not in entry and "url" not in entry:
                raise ValueError(
                    f"server {name!r}: missing 'command' (to start a stdio server) "
                    "or 'url' (to reach a remote one)"
                )
        return value

    @field_validator("mcp_servers")
    @classmethod
    def _names_are_valid(cls, value: dict[str, ServerConfig]) -> dict[str, ServerConfig]:
        if not value:
            raise ValueError("mcpServers lists no servers")
        for name in value:
            if not is_valid_server_name(name):
                raise ValueError(f"bad server name {name!r} (must match [A-Za-z0-9_-]+)")
        return value


def _describe(error: ValidationError) -> str:
    """One line for the first pydantic error, e.g. 'mcpServers.orders.command: Field required'."""
    first = error.errors()[0]
    loc = list(first.get("loc", ()))
    if len(loc) > 2 and loc[0] == "mcpServers" and loc[2] in ("stdio", "remote"):
        del loc[2]  # the union's tag, not a key the user wrote
    where = ".".join(str(part) for part in loc)
    msg = str(first.get("msg", "invalid"))
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if first.get("type") == "missing" and where:
        return f"missing {where.rsplit('.', 1)[-1]!r} at {where}"
    return f"{where}: {msg}" if where else msg


def parse_servers_config(
    data: object, *, source: str = "<config>", environ: Mapping[str, str] | None = None
) -> ServersConfig:
    """Validate already-parsed JSON; errors are ServersConfigError naming ``source``.

    Every ``${VAR}`` a remote server's headers name must be set in ``environ`` (by default
    the process environment), so a missing secret is reported here, not at the first call.
    """
    if not isinstance(data, dict):
        raise ServersConfigError(f"{source}: top level must be a JSON object")
    if "mcpServers" not in data:
        raise ServersConfigError(f'{source}: missing "mcpServers"')
    if not isinstance(data["mcpServers"], dict):
        raise ServersConfigError(f'{source}: "mcpServers" must be an object')
    try:
        config = ServersConfig.model_validate(data)
    except ValidationError as exc:
        raise ServersConfigError(f"{source}: {_describe(exc)}") from None
    environ = os.environ if environ is None else environ
    for name, server in config.mcp_servers.items():
        if isinstance(server, RemoteServerConfig):
            for header, variable in server.missing_variables(environ):
                raise ServersConfigError(f"{source}: {_missing_variable(name, header, variable)}")
    return config


def load_servers_config(path: Path = DEFAULT_SERVERS_FILE) -> ServersConfig:
    """Read and validate a servers config file.

    Raises ServersConfigError (a ValueError) with a one-line message naming the file and
    what is wrong with it.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ServersConfigError(f"{path}: servers config file not found") from None
    except OSError as exc:
        raise ServersConfigError(f"{path}: cannot read servers config: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ServersConfigError(f"{path}: not UTF-8 text ({exc.reason})") from None
    try:
        data = json.loads(text, object_pairs_hook=_refuse_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise ServersConfigError(
            f"{path}: invalid JSON at line {exc.lineno} col {exc.colno}: {exc.msg}"
        ) from None
    except _DuplicateKeyError as exc:
        raise ServersConfigError(
            f"{path}: key {exc.key!r} appears twice in one object; JSON would silently keep "
            "the second, so remove or rename one"
        ) from None
    return parse_servers_config(data, source=str(path))


class _DuplicateKeyError(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _refuse_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`json.loads` object hook: an object naming a key twice is refused, at any level."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKeyError(key)
        obj[key] = value
    return obj
