"""One persistent MCP session per server, owned by one long-lived asyncio task.

Sessions are opened with langchain-mcp-adapters' ``create_session`` (stdio, streamable HTTP or
SSE; see ``workers.hub.transports``). anyio requires a cancel scope (and so the transport and
the ``ClientSession``) to be entered and exited in the same task; closing from another task
raises "Attempted to exit cancel scope in a different task". So each ``ServerConnection`` has an
*owner task* that opens the session, publishes it, then waits for either a stop request or the
server going away (its process exiting, or its HTTP connection breaking), and unwinds the
contexts itself. Everyone else only calls methods on the published ``ClientSession``, which
serves concurrent requests.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, TextIO, TypeVar

import anyio
import mcp.types as types
from langchain_mcp_adapters.sessions import create_session
from mcp import ClientSession

from workers.hub.admission import MAX_TOOL_PAGES, MAX_TOOLS_PER_SERVER
from workers.hub.servers_config import ServerConfig, StdioServerConfig
from workers.hub.transports import (
    ChildHooks,
    Connection,
    OnBroken,
    connection_for,
    route_children,
)

T = TypeVar("T")

# stdio_client waits 2 s for exit, then SIGTERM/SIGKILL with 2 s more; a remote session's
# close sends one DELETE to end the server-side session.
STOP_TIMEOUT_S = 6.0


def tail(path: Path, lines: int = 5, max_bytes: int = 4096, start: int = 0) -> str:
    """The last few lines of a log file after offset ``start``, joined with ' | '."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(start, size - max_bytes))
            data = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return " | ".join(line.strip() for line in data.splitlines()[-lines:] if line.strip())


@dataclass(frozen=True)
class ServerState:
    """A snapshot of one server's health, as returned by ToolHub.health()."""

    up: bool
    pid: int | None
    last_error: str | None
    restarts: int
    started: bool = True
    """False for a server started on demand that nobody has needed yet."""


class ServerConnection:
    """One server's ClientSession (and, for stdio, its process), run by one owner task."""

    def __init__(
        self, name: str, config: ServerConfig, *, start_timeout_s: float, log_path: Path | None
    ) -> None:
        self.name = name
        self.config = config
        self.start_timeout_s = start_timeout_s
        self.log_path = log_path
        self.session: ClientSession | None = None
        self.tools: list[types.Tool] = []
        self.pid: int | None = None
        self.last_error: str | None = None
        self.starts = 0
        self.lock = asyncio.Lock()  # serialises start/stop/restart of this one server
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._ready: asyncio.Future[None] | None = None  # resolved once started or failed
        # Set when the current session goes away, to fail in-flight calls at once: when a
        # ClientSession is torn down by cancellation it does not answer pending requests,
        # which would otherwise wait out their full timeout.
        self._closed = asyncio.Event()
        self._process: Any = None
        self._errlog: TextIO | None = None
        self._log_start = 0  # where this run's stderr begins in the log file
        self._stopping = False  # stop() asked for this shutdown (vs. a crash or mark_down)

    @property
    def up(self) -> bool:
        return self.session is not None

    @property
    def restarts(self) -> int:
        return max(0, self.starts - 1)

    def state(self) -> ServerState:
        return ServerState(
            self.up, self.pid if self.up else None, self.last_error, self.restarts, self.starts > 0
        )

    def _connection(self, stop: asyncio.Event) -> Connection:
        """The adapters' connection config; for stdio, also route the child to this object."""
        if isinstance(self.config, StdioServerConfig):

            def on_process(process: Any) -> None:
                self._process = process
                self.pid = getattr(process, "pid", None)

            route_children(ChildHooks(on_process, self._open_errlog()))
        else:
            route_children(None)
        return connection_for(
            self.name, self.config, environ=os.environ, on_broken=self._on_broken(stop)
        )

    def _on_broken(self, stop: asyncio.Event) -> OnBroken:
        # A remote server's connection broke: tear this run's session down now, so calls in
        # flight fail at once instead of waiting out their timeout. Reports that arrive while
        # the session is being stopped (e.g. its closing DELETE) are not news.
        def report(exc: Exception) -> None:
            if not stop.is_set():
                self.mark_down(f"server '{self.name}' connection failed: {_describe(exc)}")

        return report

    def _open_errlog(self) -> TextIO:
        # Servers' stderr must go to a real file descriptor (it is handed to the child).
        # MUSTER_SERVER_STDERR=1 shows it on our stderr; by default it goes to a per-server
        # log whose last lines we quote in error messages.
        if os.environ.get("MUSTER_SERVER_STDERR") == "1":
            try:
                sys.stderr.fileno()
                return sys.stderr
            except (AttributeError, OSError, ValueError):
                pass
        if self._errlog is None:
            assert self.log_path is not None
            self._errlog = self.log_path.open("a", encoding="utf-8")
        return self._errlog

    def _error(self, what: str) -> str:
        # Only this run's lines: the log is shared by every restart of the server.
        stderr_tail = tail(self.log_path, start=self._log_start) if self.log_path else ""
        return f"{what}; server stderr: {stderr_tail}" if stderr_tail else what

    async def start(self) -> bool:
        """Start the owner task and wait until the session is ready or has failed.

        Never raises (except CancelledError): failure is recorded in last_error.
        """
        await self.stop()
        self.starts += 1
        self.last_error = None
        self._log_start = os.fstat(self._errlog.fileno()).st_size if self._errlog else 0
        self._stopping = False
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._ready = ready
        self._stop = asyncio.Event()
        self._closed = asyncio.Event()
        self._task = asyncio.create_task(self._own(ready, self._stop), name=f"mcp:{self.name}")
        try:
            # The owner enforces start_timeout_s itself; this outer bound only guards against
            # a bug there leaving us waiting forever.
            await asyncio.wait_for(asyncio.shield(ready), self.start_timeout_s + STOP_TIMEOUT_S)
        except TimeoutError:
            self.last_error = f"server '{self.name}' did not start in {self.start_timeout_s}s"
            await self.stop()
        return self.up

    async def _own(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        exited_by_itself = False
        try:
            async with create_session(self._connection(stop)) as session:
                try:
                    with anyio.fail_after(self.start_timeout_s):
                        await session.initialize()
                        tools = await list_all_tools(session)
                        await session.send_ping()
                except BaseException as exc:
                    if isinstance(exc, TimeoutError):
                        self.last_error = self._error(
                            f"server '{self.name}' did not start in {self.start_timeout_s}s"
                        )
                    # A server that could not even initialise gets no graceful shutdown:
                    # stdio_client would wait 2 s for it to exit before signalling it.
                    self._kill()
                    raise
                self.tools = tools
                self.session = session
                ready.set_result(None)
                await self._wait_for_stop_or_exit(stop)
                self.session = None
                self._closed.set()
                exited_by_itself = self._process is not None and (
                    self._process.returncode is not None
                )
        except Exception as exc:  # noqa: BLE001 - any failure here means "server down"
            if not stop.is_set() and self.last_error is None:
                self.last_error = self._error(f"server '{self.name}' failed: {_describe(exc)}")
        finally:
            self.session = None
            self._closed.set()
            rc = getattr(self._process, "returncode", None)
            if rc is not None and not self._stopping and (exited_by_itself or rc > 0):
                # More precise than whatever a failed call recorded ("connection closed").
                self.last_error = self._error(
                    f"server '{self.name}' exited with code {self._process.returncode}"
                )
            self._process = None
            if not ready.done():
                ready.set_result(None)

    def _kill(self) -> None:
        pid = getattr(self._process, "pid", None)
        if pid is None or getattr(self._process, "returncode", None) is not None:
            return
        try:
            # stdio_client starts servers with start_new_session=True: pid is the group id,
            # so this also reaches any children the server spawned.
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    async def _wait_for_stop_or_exit(self, stop: asyncio.Event) -> None:
        waiters = [asyncio.ensure_future(stop.wait())]
        if self._process is not None:
            waiters.append(asyncio.ensure_future(self._process.wait()))
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
            await asyncio.gather(*waiters, return_exceptions=True)

    def mark_down(self, reason: str) -> None:
        """Record that the session is unusable (e.g. connection closed) and tear it down."""
        if self.session is not None or self.last_error is None:
            # Keep an earlier, more precise cause (e.g. the exit code) if there is one.
            self.last_error = self._error(reason)
        self.session = None
        self._closed.set()
        if self._stop is not None:
            self._stop.set()

    async def call_tool(
        self, tool: str, args: dict[str, Any], timeout_s: float
    ) -> types.CallToolResult:
        """tools/call with the SDK's timeout, failing fast if the session goes away.

        Raises ServerDown if there is no session or it closes while the call is in flight.

        This sends the request itself instead of using ``ClientSession.call_tool``, which
        validates a structured result against the tool's ``outputSchema`` with jsonschema,
        synchronously on the event loop. That schema is the server's own: a catastrophic
        regex in it (``"pattern": "^(a+)+$"`` against 30 'a's and a '!') stalled the whole
        process for seconds, past every timeout. We skip that validation rather than run it
        in a thread with a time limit, because a thread cannot be stopped (a runaway regex
        would keep a core and the GIL busy after we gave up on it) and because the check buys
        the hub nothing: it never trusts tool output, which reaches a model only as capped
        text, and a lying server could as well send wrong data that fits its schema.
        """
        request = types.ClientRequest(
            types.CallToolRequest(params=types.CallToolRequestParams(name=tool, arguments=args))
        )
        timeout = timedelta(seconds=timeout_s)
        return await self._request(
            lambda session: session.send_request(
                request, types.CallToolResult, request_read_timeout_seconds=timeout
            )
        )

    async def ping(self) -> None:
        """session.send_ping, failing fast (ServerDown) if the session goes away."""
        await self._request(lambda session: session.send_ping())

    async def _request(self, send: Callable[[ClientSession], Awaitable[T]]) -> T:
        session, closed = self.session, self._closed
        if session is None or closed.is_set():
            raise ServerDown(f"server '{self.name}' is not running")
        call = asyncio.ensure_future(send(session))
        closing = asyncio.ensure_future(closed.wait())
        try:
            await asyncio.wait((call, closing), return_when=asyncio.FIRST_COMPLETED)
        finally:
            closing.cancel()
            if not call.done():
                call.cancel()
                call.add_done_callback(_consume)
        if call.done() and not call.cancelled():
            return call.result()
        raise ServerDown(f"server '{self.name}' went away during the call")

    async def stop(self) -> None:
        """Ask the owner task to unwind its contexts (it kills the process) and wait for it."""
        task, self._task = self._task, None
        self._stopping = True
        if self._stop is not None:
            self._stop.set()
        if task is not None and self._ready is not None and not self._ready.done():
            # Still starting (a server that hangs before it answers `initialize`): the stop
            # event is not looked at until the session is ready, so cancel the owner, which
            # SIGKILLs the process group, instead of waiting out its start timeout.
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            task = None
        if task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(task), STOP_TIMEOUT_S)
            except TimeoutError:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self.session = None

    async def close(self) -> None:
        await self.stop()
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None


class ServerDown(Exception):
    """The server's session is gone (crashed, stopped, or never started)."""


def _consume(task: asyncio.Future[Any]) -> None:
    # Retrieve the outcome of an abandoned call so asyncio does not log it as unretrieved.
    if not task.cancelled():
        task.exception()


async def list_all_tools(session: ClientSession) -> list[types.Tool]:
    """tools/list, following pagination cursors, within the limits of what a server may list.

    Reading stops after ``MAX_TOOL_PAGES`` pages, or once more than ``MAX_TOOLS_PER_SERVER``
    tools are in (the catalogue refuses those beyond the limit, one line each).
    """
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.nextCursor
        if not cursor or len(tools) > MAX_TOOLS_PER_SERVER:
            break
    return tools


def _describe(exc: BaseException) -> str:
    # anyio task groups wrap failures in ExceptionGroups; show the first leaf, which is the
    # actual cause (e.g. a BrokenResourceError writing to a dead process).
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
