"""Remote MCP servers: a real FastMCP server over streamable HTTP (and SSE) on loopback.

The server (tests/fixtures/http_server.py) runs as a subprocess on a free port and reaches the
hub only through a servers config, as a deployment would write it. The tests check listing and
calls under qualified names, allowlists, a header taken from the environment, and a server
killed (SIGKILL) while a call is in flight: a typed failure, then a new session on next use.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
import pytest_asyncio
from mcp.shared.exceptions import McpError

from workers.hub import (
    CallOutcome,
    RemoteServerConfig,
    ServersConfig,
    ServersConfigError,
    ToolHub,
    load_servers_config,
    parse_servers_config,
)
from workers.hub.sessions import ServerConnection

module_loop = pytest.mark.asyncio(loop_scope="module")

FIXTURE = Path(__file__).parent / "fixtures" / "http_server.py"
READY_TIMEOUT_S = 60.0  # generous: several test runs may share two cores
TOKEN_VAR = "MUSTER_TEST_REMOTE_TOKEN"
TOKEN = "s3cret-from-the-environment"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HttpServer:
    """The fixture server as a subprocess on one loopback port; restartable on that port."""

    def __init__(self, tmp: Path, transport: str = "streamable-http") -> None:
        self.port = free_port()
        self.transport = transport
        self.gates = tmp / "gates"
        self.gates.mkdir(parents=True, exist_ok=True)
        self.log = tmp / "http_server.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        path = "/sse" if self.transport == "sse" else "/mcp"
        return f"http://127.0.0.1:{self.port}{path}"

    def _spawn(self) -> subprocess.Popen[bytes]:
        with self.log.open("ab") as log:
            return subprocess.Popen(
                [sys.executable, str(FIXTURE), str(self.port), self.transport, str(self.gates)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )

    async def start(self) -> int:
        """Start the server and wait until it accepts connections; returns its PID."""
        self.process = await asyncio.to_thread(self._spawn)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if self.process.poll() is not None:
                raise AssertionError(f"server exited: {self.log.read_text(errors='replace')}")
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                assert time.monotonic() < deadline, f"server not accepting on {self.port}"
                await asyncio.sleep(0.05)
                continue
            writer.close()
            await writer.wait_closed()
            return self.process.pid

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def servers_file(self, tmp: Path, **extra: Any) -> Path:
        """A servers config naming this server "remote", with a header from the environment."""
        spec = {
            "url": self.url,
            "transport": "sse" if self.transport == "sse" else "streamable_http",
            "headers": {"Authorization": f"Bearer ${{{TOKEN_VAR}}}", "X-Muster-Test": "plain"},
            **extra,
        }
        path = tmp / "servers.json"
        path.write_text(json.dumps({"mcpServers": {"remote": spec}}), encoding="utf-8")
        return path


async def wait_for_file(path: Path, timeout_s: float = READY_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not await asyncio.to_thread(path.exists):
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        await asyncio.sleep(0.02)


def remote_config(**spec: Any) -> ServersConfig:
    server = {"url": "http://127.0.0.1:9/mcp", **spec}
    return parse_servers_config({"mcpServers": {"remote": server}})


@pytest.fixture(scope="module", autouse=True)
def token() -> Iterator[None]:
    """The variable the servers file's Authorization header names."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(TOKEN_VAR, TOKEN)
        yield


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[tuple[HttpServer, ToolHub]]:
    tmp = tmp_path_factory.mktemp("remote")
    server = HttpServer(tmp)
    try:
        await server.start()
        config = load_servers_config(server.servers_file(tmp))
        async with await ToolHub.connect(config, call_timeout_s=30.0) as hub:
            yield server, hub
    finally:
        server.kill()


# --- one shared server and hub ------------------------------------------------------------


@module_loop
@pytest.mark.integration
async def test_remote_tools_are_listed_under_qualified_names(
    served: tuple[HttpServer, ToolHub],
) -> None:
    _, hub = served
    state = hub.health()["remote"]
    assert state.up and state.last_error is None and state.restarts == 0
    assert state.pid is None and hub.server_pids() == {"remote": None}  # no process of ours
    names = [spec.name for spec in hub.specs(["remote."])]
    assert names == [
        "remote.block",
        "remote.echo",
        "remote.pid",
        "remote.release",
        "remote.seen_header",
    ]
    assert [spec.name for spec in hub.action_specs()] == ["remote.refund"]
    assert hub.refused == []
    assert await hub.ping() == {"remote": True}


@module_loop
@pytest.mark.integration
async def test_remote_call_returns_the_result(served: tuple[HttpServer, ToolHub]) -> None:
    server, hub = served
    result = await hub.call("remote.echo", {"text": "héllo"}, ["remote.echo"])
    assert result.ok and result.text == "héllo"
    result = await hub.call("remote.pid", {}, ["remote."])
    assert result.ok and server.process is not None and int(result.text) == server.process.pid


@module_loop
@pytest.mark.integration
async def test_a_header_from_the_environment_reaches_the_server(
    served: tuple[HttpServer, ToolHub],
) -> None:
    _, hub = served
    seen = await hub.call("remote.seen_header", {"name": "authorization"}, ["remote."])
    assert seen.ok and seen.text == f"Bearer {TOKEN}"
    plain = await hub.call("remote.seen_header", {"name": "x-muster-test"}, ["remote."])
    assert plain.text == "plain"


@pytest.mark.parametrize(
    ("name", "allow"),
    [
        ("remote.echo", ["remote.pid"]),
        ("remote.echo", []),
        ("REMOTE.echo", ["remote."]),
        ("remotex.echo", ["remote."]),
        ("remote.echo ", ["remote.echo"]),
        ("remote.refund", ["remote.", "remote.refund"]),  # a write: proposed, never run
    ],
)
@module_loop
@pytest.mark.integration
async def test_allowlist_refusals_on_a_remote_server(
    served: tuple[HttpServer, ToolHub], name: str, allow: list[str]
) -> None:
    _, hub = served
    result = await hub.call(name, {"text": "x", "order_id": "1"}, allow)
    assert result.outcome == CallOutcome.NOT_ALLOWED and not result.ok
    assert result.text.startswith("ERROR: tool ")


@module_loop
@pytest.mark.integration
async def test_a_session_the_server_ended_is_reopened_on_next_use(
    served: tuple[HttpServer, ToolHub], monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the SDK reports when the server answers 404 for our session id (its idle timeout,
    # or a restart behind the same URL): the request never ran. A hub of its own, so the
    # shared one's restart count stays as the other tests expect.
    server, _ = served
    config = parse_servers_config({"mcpServers": {"remote": {"url": server.url}}})
    async with await ToolHub.connect(config) as hub:
        real_call = ServerConnection.call_tool

        async def ended(*args: Any, **kwargs: Any) -> Any:
            monkeypatch.setattr(ServerConnection, "call_tool", real_call)
            raise McpError(types.ErrorData(code=32600, message="Session terminated"))

        monkeypatch.setattr(ServerConnection, "call_tool", ended)
        result = await hub.call("remote.echo", {"text": "x"}, ["remote."])
        assert result.outcome == CallOutcome.UNAVAILABLE and "ended the session" in result.text
        assert not hub.health()["remote"].up
        result = await hub.call("remote.echo", {"text": "y"}, ["remote."])
        assert result.ok and result.text == "y" and hub.health()["remote"].restarts == 1


# --- a server that dies -------------------------------------------------------------------


async def _kill_mid_call_then_restart(server: HttpServer, tmp: Path) -> None:
    first_pid = await server.start()
    config = load_servers_config(server.servers_file(tmp))
    async with await ToolHub.connect(config, call_timeout_s=30.0) as hub:
        assert (await hub.call("remote.echo", {"text": "up"}, ["remote."])).text == "up"

        call = asyncio.create_task(hub.call("remote.block", {"tag": "kill-1"}, ["remote."]))
        await wait_for_file(server.gates / "kill-1.started")  # the call is in the server now
        server.kill()
        async with asyncio.timeout(15):  # far below the 30 s call timeout: it fails fast
            result = await call
        assert result.outcome == CallOutcome.UNAVAILABLE, result
        assert result.text.startswith("ERROR: server 'remote' is unavailable: ")
        assert result.duration_ms < 15_000
        state = hub.health()["remote"]
        assert not state.up and state.pid is None and state.restarts == 0
        assert "connection" in (state.last_error or "")
        assert await hub.ping() == {"remote": False}

        new_pid = await server.start()  # same port, new process
        assert new_pid != first_pid
        result = await hub.call("remote.pid", {}, ["remote."])
        assert result.ok and int(result.text) == new_pid
        state = hub.health()["remote"]
        assert state.up and state.restarts == 1 and state.pid is None
        assert (await hub.call("remote.echo", {"text": "again"}, ["remote."])).text == "again"


@pytest.mark.integration
async def test_streamable_http_server_killed_mid_call(tmp_path: Path) -> None:
    server = HttpServer(tmp_path)
    try:
        await _kill_mid_call_then_restart(server, tmp_path)
    finally:
        server.kill()


@pytest.mark.integration
async def test_sse_server_killed_mid_call(tmp_path: Path) -> None:
    server = HttpServer(tmp_path, transport="sse")
    try:
        await _kill_mid_call_then_restart(server, tmp_path)
    finally:
        server.kill()


@pytest.mark.integration
async def test_a_server_down_at_connect_comes_up_on_next_use(tmp_path: Path) -> None:
    server = HttpServer(tmp_path)  # not started yet: nothing listens on its port
    try:
        config = load_servers_config(server.servers_file(tmp_path))
        async with await ToolHub.connect(config, start_timeout_s=10.0) as hub:
            state = hub.health()["remote"]
            assert not state.up and state.pid is None
            assert "ConnectError" in (state.last_error or "")
            result = await hub.call("remote.echo", {"text": "x"}, ["remote."])
            assert result.outcome == CallOutcome.UNAVAILABLE  # a restart was tried, and failed
            assert hub.health()["remote"].restarts == 1

            await server.start()
            result = await hub.call("remote.echo", {"text": "now"}, ["remote."])
            assert result.ok and result.text == "now"
            assert hub.health()["remote"].up and hub.health()["remote"].restarts == 2
    finally:
        server.kill()


async def test_a_header_variable_unset_at_connect_is_a_down_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TOKEN_VAR, TOKEN)
    config = remote_config(headers={"Authorization": f"Bearer ${{{TOKEN_VAR}}}"})
    monkeypatch.delenv(TOKEN_VAR)  # gone between loading the file and opening the session
    async with await ToolHub.connect(config) as hub:
        state = hub.health()["remote"]
        assert not state.up and TOKEN_VAR in (state.last_error or "")
        result = await hub.call("remote.echo", {"text": "x"}, ["remote."])
        assert result.outcome == CallOutcome.UNAVAILABLE and TOKEN_VAR in result.text


# --- config validation --------------------------------------------------------------------


def test_remote_entries_parse_with_defaults_and_spellings() -> None:
    server = remote_config().mcp_servers["remote"]
    assert isinstance(server, RemoteServerConfig)
    assert (server.transport, server.headers, server.write_tools) == ("streamable_http", {}, [])
    for spelling in ("streamable_http", "streamable-http", "http"):
        parsed = remote_config(transport=spelling).mcp_servers["remote"]
        assert isinstance(parsed, RemoteServerConfig) and parsed.transport == "streamable_http"
    sse = remote_config(transport="sse", url="https://mcp.example.com/sse")
    assert sse.mcp_servers["remote"].transport == "sse"


def test_header_variables_resolve_from_the_environment() -> None:
    config = parse_servers_config(
        {
            "mcpServers": {
                "remote": {
                    "url": "http://127.0.0.1:9/mcp",
                    "headers": {"Authorization": "Bearer ${A_VAR}", "X": "$plain ${B}"},
                }
            }
        },
        environ={"A_VAR": "tok", "B": "b"},
    )
    remote = config.mcp_servers["remote"]
    assert isinstance(remote, RemoteServerConfig)
    assert remote.headers["Authorization"] == "Bearer ${A_VAR}"  # the file's text is kept
    resolved = remote.resolved_headers({"A_VAR": "tok", "B": "b"}, server="remote")
    assert resolved == {"Authorization": "Bearer tok", "X": "$plain b"}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"command": "python", "url": "http://h/mcp"},
            "server 'remote' has both 'command' and 'url'",
        ),
        ({"args": ["-m", "x"]}, "server 'remote': missing 'command'"),
        ({"url": "http://h/mcp", "transport": "websocket"}, "unknown transport 'websocket'"),
        ({"url": "http://h/mcp", "transport": "stdio"}, "transport 'stdio' needs 'command'"),
        ({"command": "python", "transport": "sse"}, "transport 'sse' needs 'url'"),
        ({"url": "ftp://h/mcp"}, "url must be an http:// or https:// URL, not 'ftp://h/mcp'"),
        ({"url": "127.0.0.1:8000/mcp"}, "url must be an http:// or https:// URL"),
        ({"url": "http://h/mcp", "headers": {"A": 1}}, "mcpServers.remote.headers.A"),
        (
            {"url": "http://h/mcp", "headers": {"Authorization": "Bearer ${NO_SUCH_VAR_XYZ}"}},
            "server 'remote': header 'Authorization' uses ${NO_SUCH_VAR_XYZ}, but "
            "NO_SUCH_VAR_XYZ is not set in the environment",
        ),
    ],
)
def test_remote_config_errors_are_one_line_and_name_the_server(
    tmp_path: Path, spec: dict[str, Any], expected: str
) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"remote": spec}}), encoding="utf-8")
    with pytest.raises(ServersConfigError) as info:
        load_servers_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and expected in message and "\n" not in message
