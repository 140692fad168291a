"""ToolHub: the single place every MCP tool call goes through.

Design, in short:

- **Persistent sessions.** Each configured server is opened once, as a stdio subprocess or a
  remote (streamable HTTP / SSE) session, through langchain-mcp-adapters' ``create_session``,
  and kept behind one ``ClientSession`` owned by one long-lived task (see
  ``workers.hub.sessions`` for why the owner task is needed). All workers and all concurrent
  runs share these sessions; one session serves concurrent calls. Spawning a process per call,
  as ``MultiServerMCPClient.get_tools()`` tools do, costs ~200x more per call.
- **Start on demand, or all at once.** ``connect(on_demand=True)`` starts nothing: each server
  starts when a caller first needs it (``ensure_servers`` for a worker's allowlist, or the
  first call of one of its tools), so a run starts only the servers its workers use; the
  ``on_server_start`` listeners hear of each start (progress lines). Without it every server
  starts at ``connect``. Either way, servers start concurrently. One that fails to start, or
  dies later, is marked down while the others keep working; its next use triggers a restart
  attempt. A remote server has no process: its death is seen when its connection breaks, and
  "restart" means opening a new session to the same URL.
- **One namespace, exact names.** Tools are catalogued as ``server.tool``. Invalid or
  colliding names are refused at registration (``hub.refused``), so lookups are exact, and so
  are definitions over the limits of ``workers.hub.admission`` or with malformed input
  schemas: each tool on its own, the server's other tools still register.
- **Least privilege, checked before anything runs.** ``call`` checks the qualified name
  against the caller's allowlist, then the catalogue. Tools are writes until proven reads:
  only a tool its server marks ``readOnlyHint: true`` (or the config lists in
  ``readOnlyTools``) is a read. Write tools are never offered by ``specs`` and never run by
  ``call``; only ``call_action``, used by the graph's approved action step, runs them.
- **Results are not validated against server-supplied schemas** (see
  ``ServerConnection.call_tool``): a hostile output schema cannot stall the event loop.
- **Errors are values.** ``call``/``call_action`` never raise (bar cancellation): every
  failure is a ``ToolCallResult`` whose ``outcome`` the graph routes on and whose ``text`` a
  model can act on.
- **Pinned definitions.** Each tool's definition is digested when first registered. If it
  changes later (seen on restart or ``refresh_definitions``), the tool is disabled until an
  explicit ``reconnect`` re-pins it, so a server cannot silently swap what a tool claims to do.

The servers, their sessions and the pinned catalogue are ``workers.hub.pool``'s; this module
checks and runs the calls.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from types import TracebackType
from typing import Any

import anyio
import mcp.types as types
from mcp.shared.exceptions import McpError

from workers.hub.allowlist import is_allowed, is_valid_qualified_name
from workers.hub.arguments import argument_problem
from workers.hub.backpressure import Backpressure
from workers.hub.catalogue import CatalogueEntry, ToolSpec, cap_text, result_text
from workers.hub.outcomes import CallOutcome, ToolCallResult
from workers.hub.pool import ServerPool
from workers.hub.servers_config import ServersConfig, ServersConfigError
from workers.hub.sessions import ServerConnection, ServerDown, ServerState
from workers.hub.transports import install

__all__ = [
    "CallOutcome",
    "ServerState",
    "ToolCallResult",
    "ToolHub",
    "ToolSpec",
    "cap_text",
]

# mcp.shared.session raises McpError(code=httpx.codes.REQUEST_TIMEOUT) when read_timeout hits.
_SDK_TIMEOUT_CODE = 408
# The streamable HTTP client answers a request with this when the server no longer knows the
# session (HTTP 404: its idle timeout, or a restart behind the same URL); nothing ran.
_SESSION_ENDED = (32600, "Session terminated")
# Extra time our own guard allows beyond the SDK timeout; it only fires if sending the request
# itself blocks (e.g. a wedged server whose stdin pipe is full), which the SDK does not time.
_GUARD_S = 2.0


class ToolHub:
    """Shared, persistent MCP sessions plus an allowlist-checked tool catalogue."""

    def __init__(
        self,
        config: ServersConfig,
        *,
        call_timeout_s: float,
        start_timeout_s: float,
        result_cap_bytes: int,
    ) -> None:
        # Use ToolHub.connect(); the constructor only wires state and starts nothing.
        self.config = config
        self.call_timeout_s = call_timeout_s
        self.result_cap_bytes = result_cap_bytes
        self._pool = ServerPool(config, start_timeout_s=start_timeout_s)
        """The servers' sessions (first and spares) and their pinned catalogue."""
        self.backpressure = Backpressure(
            limits={
                name: cfg.max_in_flight
                for name, cfg in config.mcp_servers.items()
                if cfg.max_in_flight is not None
            },
            rates={
                name: (cfg.requests_per_s, cfg.burst or 1)
                for name, cfg in config.mcp_servers.items()
                if cfg.requests_per_s is not None
            },
        )
        """Each server's circuit breaker, rate limit and in-flight cap, shared by every
        ticket."""
        self.on_server_start = self._pool.on_server_start
        """Called after each start attempt of a server's first session (up or not)."""

    @classmethod
    async def connect(
        cls,
        config: ServersConfig,
        *,
        call_timeout_s: float = 20.0,
        start_timeout_s: float = 15.0,
        result_cap_bytes: int = 16 * 1024,
        sequential: bool = False,
        on_demand: bool = False,
    ) -> ToolHub:
        """Start every server (concurrently unless ``sequential``) and pin their tools; with
        ``on_demand``, start none yet (each starts on first need, see `ensure_servers`).

        Raises only for an empty config; a server that fails is marked down instead.
        """
        if not config.mcp_servers:
            raise ServersConfigError("servers config has no servers in mcpServers")
        # Opening stdio sessions needs their processes (PIDs, exits, stderr logs), which the
        # adapters do not expose; install() hooks the SDK for that (see its docstring).
        install()
        # The constructor creates the log directory: file-system work, kept off the loop
        # (`langgraph dev` fails blocking calls on its loop with BlockingError).
        hub = await asyncio.to_thread(
            cls,
            config,
            call_timeout_s=call_timeout_s,
            start_timeout_s=start_timeout_s,
            result_cap_bytes=result_cap_bytes,
        )
        if on_demand:
            return hub
        try:
            await hub._pool.start_all(sequential=sequential)
        except BaseException:
            await hub.aclose()  # e.g. cancelled mid-start: leave no process behind
            raise
        return hub

    async def __aenter__(self) -> ToolHub:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop every server; when this returns, no process the hub started is alive."""
        await self._pool.aclose()

    # --- catalogue -------------------------------------------------------------------------

    @property
    def refused(self) -> list[str]:
        """One line per tool refused at registration, naming it and saying why (an invalid or
        colliding name, a definition over the limits, a malformed input schema)."""
        return self._pool.refused

    def specs(self, allow: Sequence[str]) -> list[ToolSpec]:
        """Tools the allowlist admits that are enabled and read-only, sorted by name."""
        return self._pool.specs(allow)

    async def ensure_servers(self, allow: Sequence[str]) -> list[str]:
        """Start (or try once to restart) every server the allowlist names that is not up;
        returns those still down (`ServerPool.ensure_servers`)."""
        return await self._pool.ensure_servers(allow)

    def action_specs(self) -> list[ToolSpec]:
        """Write tools, for the graph's action step (never for a worker's belt)."""
        return self._pool.action_specs()

    # --- health ----------------------------------------------------------------------------

    def health(self) -> dict[str, ServerState]:
        return self._pool.health()

    def server_pids(self) -> dict[str, int | None]:
        return self._pool.server_pids()

    async def ping(self, server: str | None = None) -> dict[str, bool]:
        """Ping one or all servers; a failed ping marks the server down (no restart here)."""
        return await self._pool.ping(server)

    async def refresh_definitions(self, server: str) -> list[str]:
        """List the server's tools again; disable (and return) those whose definition changed."""
        return await self._pool.refresh_definitions(server, self.call_timeout_s)

    async def reconnect(self, server: str) -> bool:
        """Restart ``server`` and re-pin its current definitions (the operator's explicit OK)."""
        return await self._pool.reconnect(server)

    async def spares_started(self) -> None:
        """Wait until every spare session has started or failed (a no-op without spares)."""
        await self._pool.spares_started()

    def sessions_up(self, server: str) -> int:
        """How many sessions to `server` are up (1 + its spares that started)."""
        return self._pool.sessions_up(server)

    # --- calls -----------------------------------------------------------------------------

    async def call(
        self,
        name: str,
        args: dict[str, Any],
        allow: Sequence[str],
        *,
        timeout_s: float | None = None,
    ) -> ToolCallResult:
        """Run a read tool for a worker. Never raises, except on cancellation."""
        started = time.perf_counter()
        try:
            if not is_allowed(name, allow):
                admitted = ", ".join(s.name for s in self.specs(allow)) or "(none)"
                text = f"ERROR: tool {name!r} is not allowed for this worker; allowed: {admitted}"
                return self._result(name, CallOutcome.NOT_ALLOWED, text, started)
            entry = await self._lookup(name)
            if entry is None:
                return self._missing(name, [s.name for s in self.specs(allow)], started)
            if entry.spec.writes:
                text = (
                    f"ERROR: tool {name!r} may have side effects (it is not marked read-only); "
                    "workers may only propose it"
                )
                return self._result(name, CallOutcome.NOT_ALLOWED, text, started)
            return await self._run(entry, args, timeout_s, started)
        except Exception as exc:  # noqa: BLE001
            return self._unexpected(name, exc, started)

    async def call_action(
        self, name: str, args: dict[str, Any], *, timeout_s: float | None = None
    ) -> ToolCallResult:
        """Run an approved write tool (the graph's action step only). Never raises."""
        started = time.perf_counter()
        try:
            entry = await self._lookup(name)
            if entry is None:
                return self._missing(name, [s.name for s in self.action_specs()], started)
            if not entry.spec.writes:
                text = f"ERROR: tool {name!r} is read-only; call_action runs write tools only"
                return self._result(name, CallOutcome.NOT_ALLOWED, text, started)
            return await self._run(entry, args, timeout_s, started)
        except Exception as exc:  # noqa: BLE001
            return self._unexpected(name, exc, started)

    def _unexpected(self, name: str, exc: Exception, started: float) -> ToolCallResult:
        # This is the worker boundary: errors are values (docs/architecture.md principle 2).
        # Anything unexpected (from the SDK, a misbehaving server, or a caller's bad input)
        # becomes text a model can act on, never an exception into the graph. CancelledError is
        # a BaseException, not an Exception, so it still propagates and cancelling a run works.
        text = f"ERROR: {name}: unexpected {type(exc).__name__}: {exc}"
        return self._result(str(name), CallOutcome.TOOL_ERROR, text, started)

    def _conn_for(self, name: str) -> ServerConnection | None:
        if not is_valid_qualified_name(name):
            return None
        return self._pool.conns.get(name.split(".", 1)[0])

    async def _lookup(self, name: str) -> CatalogueEntry | None:
        entry = self._pool.catalogue.get(name)
        conn = self._conn_for(name)
        if entry is None and conn is not None and conn.name not in self._pool.pinned:
            # The server was down at connect, so its tools were never seen: try it now.
            await self._pool.ensure_up(conn)
            entry = self._pool.catalogue.get(name)
        return entry

    def _missing(self, name: str, known: list[str], started: float) -> ToolCallResult:
        conn = self._conn_for(name)
        if conn is not None and conn.name not in self._pool.pinned:
            return self._unavailable(name, conn, started)  # can't tell: its server never came up
        listed = ", ".join(known) or "(none)"
        text = f"ERROR: unknown tool {name!r}; known tools you may call: {listed}"
        return self._result(name, CallOutcome.UNKNOWN_TOOL, text, started)

    async def _run(
        self, entry: CatalogueEntry, args: dict[str, Any], timeout_s: float | None, started: float
    ) -> ToolCallResult:
        server = entry.spec.server
        # Back-pressure (workers/hub/backpressure.py): a read call to a server whose
        # circuit is open is answered at once; an approved write always goes through.
        refusal = None if entry.spec.writes else await self.backpressure.admit(server)
        if refusal is not None:
            text = f"ERROR: server '{server}' is unavailable: {refusal}"
            return self._result(entry.spec.name, CallOutcome.UNAVAILABLE, text, started)
        await self.backpressure.pace(server)  # its rate limit first: waiting holds no slot
        async with self.backpressure.gate(server):
            with self._pool.picked(server, writes=entry.spec.writes) as conn:
                result = await self._run_on(conn, entry, args, timeout_s, started)
        await self.backpressure.settle(server, result.outcome, result.text)
        return result

    async def _run_on(
        self,
        conn: ServerConnection,
        entry: CatalogueEntry,
        args: dict[str, Any],
        timeout_s: float | None,
        started: float,
    ) -> ToolCallResult:
        name, server = entry.spec.name, entry.spec.server
        if entry.disabled:
            return self._result(name, CallOutcome.UNAVAILABLE, entry.disabled, started)
        problem = argument_problem(entry.spec.input_schema, args)
        if problem is not None:
            text = f"ERROR: {name}: {problem}"
            return self._result(name, CallOutcome.BAD_ARGUMENTS, text, started)
        if not await self._pool.ensure_up(conn) or conn.session is None:
            return self._unavailable(name, conn, started)
        if entry.disabled:  # the restart just now may have revealed a changed definition
            return self._result(name, CallOutcome.UNAVAILABLE, entry.disabled, started)
        timeout = self.call_timeout_s if timeout_s is None else timeout_s
        timed_out = f"ERROR: {name} timed out after {timeout}s; try again later or report it"
        try:
            async with asyncio.timeout(timeout + _GUARD_S):
                result = await conn.call_tool(entry.spec.tool, args, timeout)
        except McpError as exc:
            if exc.error.code == _SDK_TIMEOUT_CODE:
                return self._result(name, CallOutcome.TIMEOUT, timed_out, started)
            if exc.error.code == types.CONNECTION_CLOSED:
                conn.mark_down(f"server '{server}' closed the connection")
                return self._unavailable(name, conn, started)
            if (abs(exc.error.code), exc.error.message) == _SESSION_ENDED:
                conn.mark_down(f"server '{server}' ended the session; a new one opens on next use")
                return self._unavailable(name, conn, started)
            text = f"ERROR: {name}: {exc.error.message}"
            return self._result(name, CallOutcome.TOOL_ERROR, text, started)
        except TimeoutError:
            return self._result(name, CallOutcome.TIMEOUT, timed_out, started)
        except ServerDown as exc:
            conn.mark_down(str(exc))
            return self._unavailable(name, conn, started)
        except (
            anyio.ClosedResourceError,
            anyio.BrokenResourceError,
            anyio.EndOfStream,
            OSError,
        ) as exc:
            conn.mark_down(f"server '{server}' connection failed: {type(exc).__name__}")
            return self._unavailable(name, conn, started)
        text = result_text(result)
        if result.isError:
            return self._result(name, CallOutcome.TOOL_ERROR, f"ERROR: {name}: {text}", started)
        return self._result(name, CallOutcome.OK, text, started)

    def _unavailable(self, name: str, conn: ServerConnection, started: float) -> ToolCallResult:
        why = conn.last_error or "not running"
        text = f"ERROR: server '{conn.name}' is unavailable: {why}"
        return self._result(name, CallOutcome.UNAVAILABLE, text, started)

    def _result(self, name: str, outcome: CallOutcome, text: str, started: float) -> ToolCallResult:
        capped, truncated = cap_text(text, self.result_cap_bytes)
        ms = (time.perf_counter() - started) * 1000.0
        return ToolCallResult(name, outcome, capped, round(ms, 3), truncated)
