"""How each configured server is opened: langchain-mcp-adapters' connection configs, plus two hooks.

``connection_for`` turns a server from the servers file into the adapters' ``StdioConnection``,
``StreamableHttpConnection`` or ``SSEConnection``; ``create_session`` opens it inside the
server's owner task (``workers.hub.sessions``). The adapters do not expose two things the hub's
guarantees need, so this module adds them:

- **stdio: the child process and its stderr.** ``install()`` (see its docstring for why it is a
  patch) hands the spawned process to its ``ServerConnection`` (PID, noticing an exit without a
  call failing, killing a server that cannot initialise) and sends its stderr to a per-server log.
- **remote: noticing at once that the server went away.** When a streamable HTTP server dies
  mid-response the SDK swallows the broken stream and the call waits out its whole timeout.
  ``WatchedHttpClient`` (passed as the connection's ``httpx_client_factory``, a public option)
  reports broken connections so the owner tears the session down and in-flight calls fail fast.
"""

from __future__ import annotations

import contextvars
import logging
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

import httpx
import mcp.client.stdio as mcp_stdio
from langchain_mcp_adapters.sessions import (
    SSEConnection,
    StdioConnection,
    StreamableHttpConnection,
)

from workers.hub.servers_config import RemoteServerConfig, ServerConfig

Connection = StdioConnection | StreamableHttpConnection | SSEConnection
OnBroken = Callable[[Exception], None]

# The MCP SDK's defaults (mcp.shared._httpx_utils): a response stream may stay open for long.
# A copy of private values, checked against the SDK's by tests/test_pinned_internals.py.
_HTTP_TIMEOUT = httpx.Timeout(30.0, read=300.0)


def resolve_command(command: str) -> str:
    # "python" in a config means "the Python this hub runs on": the servers then import the
    # same installed packages (mcp, the servers package) as the hub, whatever PATH says.
    return sys.executable if command in ("python", "python3") else command


def connection_for(
    server: str,
    config: ServerConfig,
    *,
    environ: Mapping[str, str],
    on_broken: OnBroken,
) -> Connection:
    """The adapters' connection config for one server.

    Raises ServersConfigError if a header names an environment variable that is not set.
    """
    if isinstance(config, RemoteServerConfig):
        resolved = config.resolved_headers(environ, server=server)

        def factory(
            headers: dict[str, str] | None = None,
            timeout: httpx.Timeout | None = None,
            auth: httpx.Auth | None = None,
        ) -> httpx.AsyncClient:
            return WatchedHttpClient(
                on_broken=on_broken, headers=headers, timeout=timeout or _HTTP_TIMEOUT, auth=auth
            )

        if config.transport == "sse":
            return SSEConnection(
                transport="sse", url=config.url, headers=resolved, httpx_client_factory=factory
            )
        return StreamableHttpConnection(
            transport="streamable_http",
            url=config.url,
            headers=resolved,
            httpx_client_factory=factory,
        )
    return StdioConnection(
        transport="stdio",
        command=resolve_command(config.command),
        args=list(config.args),
        # Least privilege for the environment too: the SDK's minimal allowlist (HOME,
        # PATH, ...), the variables the config lets this server inherit, its own env.
        env=config.environment(environ),
        cwd=config.cwd,
    )


# --- remote: a client that reports a broken connection ---------------------------------------


class WatchedHttpClient(httpx.AsyncClient):
    """An ``httpx.AsyncClient`` that calls ``on_broken`` when a connection to the server fails.

    Covers both a request that cannot be sent (connection refused) and a response stream that
    breaks (the server died mid-response). Timeouts are not reported: a slow or idle server is
    not a dead one, and the hub bounds calls itself.
    """

    def __init__(self, *, on_broken: OnBroken, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._on_broken = on_broken

    def _report(self, exc: Exception) -> None:
        if isinstance(exc, httpx.TransportError) and not isinstance(exc, httpx.TimeoutException):
            self._on_broken(exc)

    async def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        try:
            response = await super().send(request, **kwargs)
        except Exception as exc:
            self._report(exc)
            raise
        response.stream = _WatchedStream(response.stream, self._report)
        return response


class _WatchedStream(httpx.AsyncByteStream):
    def __init__(self, inner: Any, report: OnBroken) -> None:
        self._inner = inner
        self._report = report

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._inner:
                yield chunk
        except Exception as exc:
            self._report(exc)
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()


# --- stdio: routing the child process to its connection --------------------------------------


@dataclass(frozen=True)
class ChildHooks:
    """Where a stdio server's process goes: its connection's callback and stderr log."""

    on_process: Callable[[Any], None]
    errlog: TextIO


_child_hooks: contextvars.ContextVar[ChildHooks | None] = contextvars.ContextVar(
    "muster_child_hooks", default=None
)


def route_children(hooks: ChildHooks | None) -> None:
    """Route processes spawned from the current task (an owner task) to ``hooks``.

    Owner tasks run in their own copy of the context, so this reaches only the process that
    this task's session spawns.
    """
    _child_hooks.set(hooks)


SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None
"""util-linux's `setpriv`, to start stdio servers with a parent-death signal."""


def dies_with_us(command: str, args: list[str]) -> tuple[str, list[str]]:
    """`command args` so that the server is SIGKILLed when this process dies.

    A SIGKILLed hub cannot stop its servers, and a server notices its closed stdin only once
    it reads it: a third-party server still importing (or one of ours that is busy) would
    outlive us by seconds. `setpriv --pdeathsig KILL` sets Linux's parent-death signal and
    then execs the server, so the process (same pid) carries it from its first instruction;
    anyio's `open_process`, which the SDK uses, has no `preexec_fn` to do it in-process. The
    signal follows the thread that spawned the server: the event loop's, which outlives the
    hub. Without `setpriv` (not Linux), servers still exit on stdin EOF."""
    if SETPRIV is None:
        return command, args
    return SETPRIV, ["--pdeathsig", "KILL", "--", command, *args]


async def _capturing_create(*args: Any, **kwargs: Any) -> Any:
    hooks = _child_hooks.get()
    if hooks is not None:
        if len(args) > 3:
            args = (*args[:3], hooks.errlog, *args[4:])
        else:
            kwargs["errlog"] = hooks.errlog
        if "command" in kwargs:  # how the SDK's stdio_client calls it
            kwargs["command"], kwargs["args"] = dies_with_us(
                kwargs["command"], list(kwargs.get("args") or [])
            )
    process = await _original_create(*args, **kwargs)
    if hooks is not None:
        hooks.on_process(process)
    return process


_original_create: Any = None


def install() -> None:
    """Hand each stdio server's process to its ServerConnection; ToolHub.connect calls this.

    Why a patch of the MCP SDK's private ``mcp.client.stdio._create_platform_compatible_process``:
    langchain-mcp-adapters' ``create_session`` (like the SDK's ``stdio_client`` under it) neither
    exposes the process it spawns nor takes an ``errlog``. The hub needs the process for PIDs,
    for noticing a dead server without waiting for a call to fail, for killing a server that
    cannot initialise, and for proving nothing outlives ``aclose()``; and it needs the server's
    stderr in a per-server log whose last lines go into error messages. ``stdio_client`` spawns
    through that function in the task that enters it, i.e. the owner task, where
    ``route_children`` has set the hooks; everywhere else the function behaves as before.
    If a future SDK renames it, PIDs read as None, stderr goes to ours, and a death is noticed
    when a call fails. It also shortens two SDK log records to one line (see the filter).
    Idempotent.
    """
    global _original_create
    # The SDK's private spawn function, pinned and checked by tests/test_pinned_internals.py.
    current = getattr(mcp_stdio, "_create_platform_compatible_process", None)
    if current is not None and current is not _capturing_create:
        _original_create = current
        setattr(mcp_stdio, "_create_platform_compatible_process", _capturing_create)  # noqa: B010
    for name in (mcp_stdio.__name__, "mcp.client.sse", "mcp.client.streamable_http"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _OneLineTransportErrors) for f in logger.filters):
            logger.addFilter(_OneLineTransportErrors())


class _OneLineTransportErrors(logging.Filter):
    """Shorten the SDK's tracebacks for a server's junk output or lost connection to one line.

    stdio_client logs each non-protocol line on a server's stdout with a full traceback, and
    the SSE client logs one when the server goes away; the hub already handles both (the line
    is skipped; the server is marked down). We keep the message, not the traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        # The SDK's log text, checked in stdio_client's source by tests/test_pinned_internals.py.
        if error is not None and "Failed to parse JSONRPC message" in record.getMessage():
            note = "skipped a non-protocol line on its stdout"
        elif isinstance(error, httpx.TransportError):
            note = f"{type(error).__name__}: {error}"
        else:
            return True
        record.msg = f"{record.getMessage()} ({note})"
        record.args = ()
        record.exc_info = None
        record.exc_text = None
        return True
