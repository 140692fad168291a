"""The MCP layer: every tool call a worker or the supervisor makes goes through `ToolHub`.

One long-lived session per configured server (stdio subprocess or remote HTTP), opened through
langchain-mcp-adapters' session layer inside an owner task; exact qualified names
(`server.tool`); allowlists checked before anything runs; results capped; health checked and
sessions restarted on next use; tool definitions pinned. Callers import from this face only,
so the files behind it can move.

The face is lazy: the allowlist and the call outcomes (no MCP in them) load with it, the rest
(`ToolHub`, the catalogue, the servers file) on first use, because the MCP SDK costs about a
second of imports and the CLI's reading commands (`muster threads`, `muster show`) and the
graph's nodes need none of it until a hub runs.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from workers.hub.allowlist import SERVER_PREFIX, is_allowed, is_valid_entry
from workers.hub.outcomes import COUNTED_FAILURES, CallOutcome, ToolCallResult

if TYPE_CHECKING:
    from workers.hub.catalogue import ToolSpec, cap_text
    from workers.hub.hub import ToolHub
    from workers.hub.servers_config import (
        DEFAULT_SERVERS_FILE,
        RemoteServerConfig,
        ServerConfig,
        ServersConfig,
        ServersConfigError,
        StdioServerConfig,
        load_servers_config,
        parse_servers_config,
    )
    from workers.hub.sessions import ServerState

_LAZY = {
    "ToolSpec": "workers.hub.catalogue",
    "cap_text": "workers.hub.catalogue",
    "ToolHub": "workers.hub.hub",
    "DEFAULT_SERVERS_FILE": "workers.hub.servers_config",
    "RemoteServerConfig": "workers.hub.servers_config",
    "ServerConfig": "workers.hub.servers_config",
    "ServersConfig": "workers.hub.servers_config",
    "ServersConfigError": "workers.hub.servers_config",
    "StdioServerConfig": "workers.hub.servers_config",
    "load_servers_config": "workers.hub.servers_config",
    "parse_servers_config": "workers.hub.servers_config",
    "ServerState": "workers.hub.sessions",
}
"""Each public name that loads the MCP SDK, and the module it lives in."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # once loaded, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "COUNTED_FAILURES",
    "DEFAULT_SERVERS_FILE",
    "SERVER_PREFIX",
    "CallOutcome",
    "RemoteServerConfig",
    "ServerConfig",
    "ServerState",
    "ServersConfig",
    "ServersConfigError",
    "StdioServerConfig",
    "ToolCallResult",
    "ToolHub",
    "ToolSpec",
    "cap_text",
    "is_allowed",
    "is_valid_entry",
    "load_servers_config",
    "parse_servers_config",
]
