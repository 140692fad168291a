"""The MCP layer: every tool call a worker or the supervisor makes goes through `ToolHub`.

One long-lived session per configured server (stdio subprocess or remote HTTP), opened through
langchain-mcp-adapters' session layer inside an owner task; exact qualified names
(`server.tool`); allowlists checked before anything runs; results capped; health checked and
sessions restarted on next use; tool definitions pinned. Callers import from this face only,
so the files behind it can move.
"""

from workers.hub.allowlist import SERVER_PREFIX, is_allowed, is_valid_entry
from workers.hub.catalogue import ToolSpec, cap_text
from workers.hub.hub import CallOutcome, ToolCallResult, ToolHub
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

__all__ = [
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
