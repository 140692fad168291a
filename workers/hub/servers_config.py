"""The ``mcpServers`` config file: which MCP servers the hub starts, and how.

The shape is the one most MCP clients use, so any third-party stdio server can be dropped in::

    {"mcpServers": {"orders": {"command": "python", "args": ["-m", "servers.orders"],
                               "env": {}, "cwd": null, "writeTools": ["issue_refund"]}}}

``writeTools`` is our extension: tools the operator declares as side-effecting even if the
server's annotations do not say so (annotations are hints the server controls; this list is
controlled by whoever deploys Muster).

This module never imports the ``servers`` package: the hub talks to servers only over MCP.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from mcp.client.stdio import get_default_environment
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from workers.errors import ConfigError
from workers.hub.allowlist import is_valid_server_name

DEFAULT_SERVERS_FILE: Path = Path(__file__).resolve().parents[2] / "servers" / "servers.json"


class ServersConfigError(ConfigError, ValueError):
    """The servers config file is missing or malformed (one-line message naming the file)."""


class ServerConfig(BaseModel):
    """How to start one stdio MCP server."""

    # Unknown keys (e.g. "disabled", "type" written by other clients) are ignored, not fatal.
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)

    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    write_tools: list[str] = Field(default_factory=list, alias="writeTools")
    inherit_env: list[str] = Field(default_factory=list, alias="inheritEnv")
    """Variables of the hub's environment the server may see: exact names, or prefixes
    ending in '*'. Everything else stays out (a third-party server gets no API keys and no
    approval secret); the SDK's minimal environment (PATH, HOME, ...) is always passed."""

    def environment(self, parent: Mapping[str, str]) -> dict[str, str]:
        """The child's environment: the SDK's minimal one, the inherited variables, `env`."""
        inherited = {
            name: value
            for name, value in parent.items()
            if any(
                name == pattern or (pattern.endswith("*") and name.startswith(pattern[:-1]))
                for pattern in self.inherit_env
            )
        }
        return {**get_default_environment(), **inherited, **self.env}


class ServersConfig(BaseModel):
    """All configured servers, keyed by server name (the ``server`` part of ``server.tool``)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)

    mcp_servers: dict[str, ServerConfig] = Field(alias="mcpServers")

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
    where = ".".join(str(part) for part in first.get("loc", ()))
    msg = str(first.get("msg", "invalid"))
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if first.get("type") == "missing" and where:
        return f"missing {where.rsplit('.', 1)[-1]!r} at {where}"
    return f"{where}: {msg}" if where else msg


def parse_servers_config(data: object, *, source: str = "<config>") -> ServersConfig:
    """Validate already-parsed JSON; errors are ServersConfigError naming ``source``."""
    if not isinstance(data, dict):
        raise ServersConfigError(f"{source}: top level must be a JSON object")
    if "mcpServers" not in data:
        raise ServersConfigError(f'{source}: missing "mcpServers"')
    if not isinstance(data["mcpServers"], dict):
        raise ServersConfigError(f'{source}: "mcpServers" must be an object')
    try:
        return ServersConfig.model_validate(data)
    except ValidationError as exc:
        raise ServersConfigError(f"{source}: {_describe(exc)}") from None


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
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ServersConfigError(
            f"{path}: invalid JSON at line {exc.lineno} col {exc.colno}: {exc.msg}"
        ) from None
    return parse_servers_config(data, source=str(path))
