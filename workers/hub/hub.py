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
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

import anyio
import mcp.types as types
from mcp.shared.exceptions import McpError

from workers.hub.allowlist import is_allowed, is_valid_qualified_name
from workers.hub.arguments import argument_problem
from workers.hub.backpressure import Backpressure
from workers.hub.catalogue import (
    CatalogueEntry,
    ToolSpec,
    cap_text,
    check_pins,
    register_tools,
    result_text,
)
from workers.hub.log_dirs import make_log_dir
from workers.hub.outcomes import CallOutcome, ToolCallResult
from workers.hub.servers_config import ServersConfig, ServersConfigError
from workers.hub.sessions import ServerConnection, ServerDown, ServerState, list_all_tools
from workers.hub.transports import install

__all__ = [
    "CallOutcome",
    "ServerState",
    "ToolCallResult",
    "ToolHub",
    "ToolSpec",
    "cap_text",
    "register_tools",
]

# mcp.shared.session raises McpError(code=httpx.codes.REQUEST_TIMEOUT) when read_timeout hits.
_SDK_TIMEOUT_CODE = 408
# The streamable HTTP client answers a request with this when the server no longer knows the
# session (HTTP 404: its idle timeout, or a restart behind the same URL); nothing ran.
_SESSION_ENDED = (32600, "Session terminated")
# Extra time our own guard allows beyond the SDK timeout; it only fires if sending the request
# itself blocks (e.g. a wedged server whose stdin pipe is full), which the SDK does not time.
_GUARD_S = 2.0
_PING_TIMEOUT_S = 5.0


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
        self._refused: dict[str, list[str]] = {}  # per server, replaced when it is re-pinned
        self._catalogue: dict[str, CatalogueEntry] = {}
        self._pinned: set[str] = set()  # servers whose tools have been registered
        self._log_dir = make_log_dir()  # and reap those of hubs that were SIGKILLed
        self._conns = {
            name: ServerConnection(
                name, cfg, start_timeout_s=start_timeout_s, log_path=self._log_dir / f"{name}.log"
            )
            for name, cfg in config.mcp_servers.items()
        }
        # `"sessions": N` in the servers file: N-1 spare sessions per server for read calls,
        # started in the background once the first is pinned (see `_start_spares`).
        self._spares: dict[str, list[ServerConnection]] = {
            name: [
                ServerConnection(
                    name,
                    cfg,
                    start_timeout_s=start_timeout_s,
                    log_path=self._log_dir / f"{name}.{index}.log",
                )
                for index in range(2, cfg.sessions + 1)
            ]
            for name, cfg in config.mcp_servers.items()
        }
        self._spare_starts: list[asyncio.Task[None]] = []
        self._in_flight: dict[ServerConnection, int] = {}
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
        self._closed = False
        self.on_server_start: list[Callable[[str, ServerState], None]] = []
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
            if sequential:  # only for measuring what concurrency buys (bench/hub_latency.py)
                for conn in hub._conns.values():
                    await hub._first_start(conn)
            else:
                await asyncio.gather(*(hub._first_start(c) for c in hub._conns.values()))
        except BaseException:
            await hub.aclose()  # e.g. cancelled mid-start: leave no process behind
            raise
        return hub

    async def _first_start(self, conn: ServerConnection) -> None:
        """Start a server that never started: pin its tools, start its spare sessions in the
        background, tell the listeners."""
        await conn.start()
        if conn.up:
            self._pin(conn)
            if self._spares.get(conn.name) and not self._closed:
                self._spare_starts.append(asyncio.create_task(self._start_spares(conn.name)))
        for listener in self.on_server_start:
            listener(conn.name, conn.state())

    async def _start_spares(self, name: str) -> None:
        """Start `name`'s spare sessions; one whose tools differ from the pinned first
        session's is stopped and never used (its server changed, or is not the same server)."""

        async def one(spare: ServerConnection) -> None:
            await spare.start()
            first = self._conns[name]
            if spare.up and [t.model_dump() for t in spare.tools] != [
                t.model_dump() for t in first.tools
            ]:
                await spare.stop()
                spare.last_error = f"server '{name}' spare session lists other tools; not used"

        await asyncio.gather(*(one(spare) for spare in self._spares[name]))

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
        if self._closed:
            return
        self._closed = True
        for task in self._spare_starts:
            task.cancel()
        await asyncio.gather(*self._spare_starts, return_exceptions=True)
        spares = [spare for group in self._spares.values() for spare in group]
        await asyncio.gather(*(conn.close() for conn in [*self._conns.values(), *spares]))
        await asyncio.to_thread(shutil.rmtree, self._log_dir, ignore_errors=True)

    # --- catalogue -------------------------------------------------------------------------

    def _pin(self, conn: ServerConnection) -> None:
        for name in [n for n, e in self._catalogue.items() if e.spec.server == conn.name]:
            del self._catalogue[name]
        self._refused[conn.name] = register_tools(
            self._catalogue,
            conn.name,
            conn.tools,
            conn.config.write_tools,
            conn.config.read_only_tools,
        )
        self._pinned.add(conn.name)

    @property
    def refused(self) -> list[str]:
        """One line per tool refused at registration, naming it and saying why (an invalid or
        colliding name, a definition over the limits, a malformed input schema)."""
        return [line for lines in self._refused.values() for line in lines]

    def specs(self, allow: Sequence[str]) -> list[ToolSpec]:
        """Tools the allowlist admits that are enabled and read-only, sorted by name."""
        return [
            e.spec
            for name, e in sorted(self._catalogue.items())
            if not e.spec.writes and not e.disabled and is_allowed(name, allow)
        ]

    async def ensure_servers(self, allow: Sequence[str]) -> list[str]:
        """Start (or try once to restart) every server the allowlist names that is not up: one
        not started yet (on demand) or down at connect has no catalogued tools, so `specs`
        alone cannot show it. Returns the servers that are still down."""
        named = {entry.split(".", 1)[0] for entry in allow if isinstance(entry, str)}
        down = [
            conn for name, conn in self._conns.items() if name in named and not self._ready(conn)
        ]
        await asyncio.gather(*(self._ensure_up(conn) for conn in down))
        return sorted(conn.name for conn in down if not conn.up)

    def _ready(self, conn: ServerConnection) -> bool:
        """Up and catalogued. A session is up a moment before its starter pins its tools (the
        owner task sets it, the starter resumes later): a caller that saw only `up` in that
        moment found no tools and ended its worker `unavailable`. It waits for the pin."""
        return conn.up and conn.name in self._pinned

    def action_specs(self) -> list[ToolSpec]:
        """Write tools, for the graph's action step (never for a worker's belt)."""
        return [e.spec for _, e in sorted(self._catalogue.items()) if e.spec.writes]

    # --- health ----------------------------------------------------------------------------

    def health(self) -> dict[str, ServerState]:
        return {name: conn.state() for name, conn in self._conns.items()}

    def server_pids(self) -> dict[str, int | None]:
        return {name: conn.state().pid for name, conn in self._conns.items()}

    async def ping(self, server: str | None = None) -> dict[str, bool]:
        """Ping one or all servers; a failed ping marks the server down (no restart here)."""
        names = [server] if server is not None else list(self._conns)

        async def one(name: str) -> bool:
            conn = self._conns.get(name)
            if conn is None or conn.session is None:
                return False
            try:
                await conn.ping()  # bounded by bounded() below
            except ServerDown:
                return False  # already marked down, with its cause
            except Exception as exc:  # noqa: BLE001 - any failure means "not healthy"
                conn.mark_down(f"server '{name}' failed a ping: {exc!r}")
                return False
            return True

        async def bounded(name: str) -> bool:
            try:
                async with asyncio.timeout(_PING_TIMEOUT_S):
                    return await one(name)
            except TimeoutError:
                return False

        results = await asyncio.gather(*(bounded(n) for n in names))
        return dict(zip(names, results, strict=True))

    async def _ensure_up(self, conn: ServerConnection) -> bool:
        """Restart a down server (once per use); re-check its pins; report whether it is up."""
        if self._ready(conn) or self._closed:
            return conn.up
        attempt = conn.starts
        async with conn.lock:
            # If another caller attempted a restart while we waited for the lock, share its
            # result rather than try again: N parallel calls must not mean N restarts.
            if not conn.up and conn.starts == attempt:
                if attempt == 0:
                    await self._first_start(conn)  # on demand: first sight of its tools
                else:
                    await conn.start()
                    if conn.up:
                        if conn.name in self._pinned:
                            check_pins(self._catalogue, conn.name, conn.tools)
                        else:
                            self._pin(conn)  # it was down at connect: first sight of its tools
        return conn.up

    async def refresh_definitions(self, server: str) -> list[str]:
        """List the server's tools again; disable (and return) those whose definition changed."""
        conn = self._conns[server]
        if not await self._ensure_up(conn) or conn.session is None:
            return []
        async with asyncio.timeout(self.call_timeout_s):
            conn.tools = await list_all_tools(conn.session)
        return check_pins(self._catalogue, server, conn.tools)

    async def reconnect(self, server: str) -> bool:
        """Restart ``server`` and re-pin its current definitions (the operator's explicit OK)."""
        conn = self._conns[server]
        async with conn.lock:
            await conn.start()
            if conn.up:
                self._pin(conn)
        return conn.up

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
        return self._conns.get(name.split(".", 1)[0])

    async def _lookup(self, name: str) -> CatalogueEntry | None:
        entry = self._catalogue.get(name)
        conn = self._conn_for(name)
        if entry is None and conn is not None and conn.name not in self._pinned:
            # The server was down at connect, so its tools were never seen: try it now.
            await self._ensure_up(conn)
            entry = self._catalogue.get(name)
        return entry

    def _missing(self, name: str, known: list[str], started: float) -> ToolCallResult:
        conn = self._conn_for(name)
        if conn is not None and conn.name not in self._pinned:
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
            conn = self._session_for(server, writes=entry.spec.writes)
            # Counted from the pick, so calls issued together spread over the sessions.
            self._in_flight[conn] = self._in_flight.get(conn, 0) + 1
            try:
                result = await self._run_on(conn, entry, args, timeout_s, started)
            finally:
                self._in_flight[conn] -= 1
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
        if not await self._ensure_up(conn) or conn.session is None:
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

    async def spares_started(self) -> None:
        """Wait until every spare session has started or failed (a no-op without spares)."""
        if self._spare_starts:
            await asyncio.shield(asyncio.gather(*self._spare_starts, return_exceptions=True))

    def sessions_up(self, server: str) -> int:
        """How many sessions to `server` are up (1 + its spares that started)."""
        group = [self._conns[server], *self._spares.get(server, [])]
        return sum(1 for c in group if c.up and c.session is not None)

    def _session_for(self, server: str, *, writes: bool) -> ServerConnection:
        """The session a call goes to: the first for a write tool (one writer per server) or
        when it has no spares; else the least busy session that is up, the first on a tie.
        A spare that fails is marked down and left so (the first session restarts)."""
        first = self._conns[server]
        spares = self._spares.get(server) or []
        if writes or not spares:
            return first
        up = [c for c in (first, *spares) if c.up and c.session is not None]
        if not up:
            return first  # the usual restart path
        return min(up, key=lambda c: self._in_flight.get(c, 0))

    def _unavailable(self, name: str, conn: ServerConnection, started: float) -> ToolCallResult:
        why = conn.last_error or "not running"
        text = f"ERROR: server '{conn.name}' is unavailable: {why}"
        return self._result(name, CallOutcome.UNAVAILABLE, text, started)

    def _result(self, name: str, outcome: CallOutcome, text: str, started: float) -> ToolCallResult:
        capped, truncated = cap_text(text, self.result_cap_bytes)
        ms = (time.perf_counter() - started) * 1000.0
        return ToolCallResult(name, outcome, capped, round(ms, 3), truncated)
