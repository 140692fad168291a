"""The hub's servers: each one's sessions (first and spares), starts, restarts, pinned tools.

Started at once or on demand and restarted on next use; the catalogue holds the tools each
server's first session was pinned to.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from workers.hub.allowlist import is_allowed
from workers.hub.catalogue import CatalogueEntry, ToolSpec, check_pins, register_tools
from workers.hub.log_dirs import make_log_dir
from workers.hub.servers_config import ServersConfig
from workers.hub.sessions import ServerConnection, ServerDown, ServerState, list_all_tools

_PING_TIMEOUT_S = 5.0


class ServerPool:
    """Every configured server's sessions, and the pinned catalogue of their tools."""

    def __init__(self, config: ServersConfig, *, start_timeout_s: float) -> None:
        # The constructor only wires state and starts nothing; it creates the log directory,
        # so `ToolHub.connect` builds it off the event loop.
        self._refused: dict[str, list[str]] = {}  # per server, replaced when it is re-pinned
        self.catalogue: dict[str, CatalogueEntry] = {}
        self.pinned: set[str] = set()
        """Servers whose tools have been registered."""
        self._log_dir = make_log_dir()  # and reap those of hubs that were SIGKILLed
        self.conns = {
            name: ServerConnection(
                name, cfg, start_timeout_s=start_timeout_s, log_path=self._log_dir / f"{name}.log"
            )
            for name, cfg in config.mcp_servers.items()
        }
        """Each server's first session: the one started, pinned and restarted."""
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
        self._closed = False
        self.on_server_start: list[Callable[[str, ServerState], None]] = []
        """Called after each start attempt of a server's first session (up or not)."""

    async def start_all(self, *, sequential: bool = False) -> None:
        """Start every server, concurrently unless ``sequential``."""
        if sequential:  # only for measuring what concurrency buys (bench/hub_latency.py)
            for conn in self.conns.values():
                await self._first_start(conn)
        else:
            await asyncio.gather(*(self._first_start(c) for c in self.conns.values()))

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
            first = self.conns[name]
            if spare.up and [t.model_dump() for t in spare.tools] != [
                t.model_dump() for t in first.tools
            ]:
                await spare.stop()
                spare.last_error = f"server '{name}' spare session lists other tools; not used"

        await asyncio.gather(*(one(spare) for spare in self._spares[name]))

    async def aclose(self) -> None:
        """Stop every server; when this returns, no process the pool started is alive."""
        if self._closed:
            return
        self._closed = True
        for task in self._spare_starts:
            task.cancel()
        await asyncio.gather(*self._spare_starts, return_exceptions=True)
        spares = [spare for group in self._spares.values() for spare in group]
        await asyncio.gather(*(conn.close() for conn in [*self.conns.values(), *spares]))
        await asyncio.to_thread(shutil.rmtree, self._log_dir, ignore_errors=True)

    # --- catalogue -------------------------------------------------------------------------

    def _pin(self, conn: ServerConnection) -> None:
        for name in [n for n, e in self.catalogue.items() if e.spec.server == conn.name]:
            del self.catalogue[name]
        self._refused[conn.name] = register_tools(
            self.catalogue,
            conn.name,
            conn.tools,
            conn.config.write_tools,
            conn.config.read_only_tools,
        )
        self.pinned.add(conn.name)

    @property
    def refused(self) -> list[str]:
        """One line per tool refused at registration, naming it and saying why (an invalid or
        colliding name, a definition over the limits, a malformed input schema)."""
        return [line for lines in self._refused.values() for line in lines]

    def specs(self, allow: Sequence[str]) -> list[ToolSpec]:
        """Tools the allowlist admits that are enabled and read-only, sorted by name."""
        return [
            e.spec
            for name, e in sorted(self.catalogue.items())
            if not e.spec.writes and not e.disabled and is_allowed(name, allow)
        ]

    async def ensure_servers(self, allow: Sequence[str]) -> list[str]:
        """Start (or try once to restart) every server the allowlist names that is not up: one
        not started yet (on demand) or down at connect has no catalogued tools, so `specs`
        alone cannot show it. Returns the servers that are still down."""
        named = {entry.split(".", 1)[0] for entry in allow if isinstance(entry, str)}
        down = [conn for name, conn in self.conns.items() if name in named and not self.ready(conn)]
        await asyncio.gather(*(self.ensure_up(conn) for conn in down))
        return sorted(conn.name for conn in down if not conn.up)

    def ready(self, conn: ServerConnection) -> bool:
        """Up and catalogued. A session is up a moment before its starter pins its tools (the
        owner task sets it, the starter resumes later): a caller that saw only `up` in that
        moment found no tools and ended its worker `unavailable`. It waits for the pin."""
        return conn.up and conn.name in self.pinned

    def action_specs(self) -> list[ToolSpec]:
        """Write tools, for the graph's action step (never for a worker's belt)."""
        return [e.spec for _, e in sorted(self.catalogue.items()) if e.spec.writes]

    # --- health ----------------------------------------------------------------------------

    def health(self) -> dict[str, ServerState]:
        return {name: conn.state() for name, conn in self.conns.items()}

    def server_pids(self) -> dict[str, int | None]:
        return {name: conn.state().pid for name, conn in self.conns.items()}

    async def ping(self, server: str | None = None) -> dict[str, bool]:
        """Ping one or all servers; a failed ping marks the server down (no restart here)."""
        names = [server] if server is not None else list(self.conns)

        async def one(name: str) -> bool:
            conn = self.conns.get(name)
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

    async def ensure_up(self, conn: ServerConnection) -> bool:
        """Restart a down server (once per use); re-check its pins; report whether it is up."""
        if self.ready(conn) or self._closed:
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
                        if conn.name in self.pinned:
                            check_pins(self.catalogue, conn.name, conn.tools)
                        else:
                            self._pin(conn)  # it was down at connect: first sight of its tools
        return conn.up

    async def refresh_definitions(self, server: str, timeout_s: float) -> list[str]:
        """List the server's tools again; disable (and return) those whose definition changed."""
        conn = self.conns[server]
        if not await self.ensure_up(conn) or conn.session is None:
            return []
        async with asyncio.timeout(timeout_s):
            conn.tools = await list_all_tools(conn.session)
        return check_pins(self.catalogue, server, conn.tools)

    async def reconnect(self, server: str) -> bool:
        """Restart ``server`` and re-pin its current definitions (the operator's explicit OK)."""
        conn = self.conns[server]
        async with conn.lock:
            await conn.start()
            if conn.up:
                self._pin(conn)
        return conn.up

    # --- sessions --------------------------------------------------------------------------

    async def spares_started(self) -> None:
        """Wait until every spare session has started or failed (a no-op without spares)."""
        if self._spare_starts:
            await asyncio.shield(asyncio.gather(*self._spare_starts, return_exceptions=True))

    def sessions_up(self, server: str) -> int:
        """How many sessions to `server` are up (1 + its spares that started)."""
        group = [self.conns[server], *self._spares.get(server, [])]
        return sum(1 for c in group if c.up and c.session is not None)

    @contextmanager
    def picked(self, server: str, *, writes: bool) -> Iterator[ServerConnection]:
        """The session a call to `server` goes to (`_session_for`), counted in flight while
        the call runs."""
        conn = self._session_for(server, writes=writes)
        # Counted from the pick, so calls issued together spread over the sessions.
        self._in_flight[conn] = self._in_flight.get(conn, 0) + 1
        try:
            yield conn
        finally:
            self._in_flight[conn] -= 1

    def _session_for(self, server: str, *, writes: bool) -> ServerConnection:
        """The session a call goes to: the first for a write tool (one writer per server) or
        when it has no spares; else the least busy session that is up, the first on a tie.
        A spare that fails is marked down and left so (the first session restarts)."""
        first = self.conns[server]
        spares = self._spares.get(server) or []
        if writes or not spares:
            return first
        up = [c for c in (first, *spares) if c.up and c.session is not None]
        if not up:
            return first  # the usual restart path
        return min(up, key=lambda c: self._in_flight.get(c, 0))
