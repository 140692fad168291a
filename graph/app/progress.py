"""What `muster` prints while a thread runs: one line per event (`Progress`), and on a terminal
a status line of the workers running."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, TextIO

from graph.app.printable import plural, printable
from graph.app.render import describe_report, waiting_for
from workers.contracts import Handoff

if TYPE_CHECKING:  # the hub loads the MCP SDK; `threads` and `show` print without one
    from workers.hub import ServerState, ToolHub


TICK_S = 0.5
"""How often a terminal's `running:` status line is redrawn while workers run."""


class Progress:
    """Live progress lines: coloured marks on a terminal, plain text when piped. On a
    terminal, `ticking()` also keeps one status line redrawn in place (which workers run, for
    how long) until the next progress line replaces it."""

    def __init__(self, stream: TextIO, hub: ToolHub | None) -> None:
        self.stream = stream
        self.hub = hub
        self.tty = stream.isatty()
        self.running: dict[str, tuple[str, float]] = {}
        """Packets dispatched and not reported yet: packet id → (worker, start time)."""
        self.started = time.monotonic()
        self._status_shown = False
        """A status line (no newline) is on screen: the next line first erases it."""
        if hub is not None:  # None: reading a thread back, no servers
            hub.on_server_start.append(self._server_started)  # servers start on demand

    def _server_started(self, server: str, state: ServerState) -> None:
        took = f"{time.monotonic() - self.started:.1f} s"
        if state.up:
            self.line(f"server {server} up ({took})")
        else:
            self.line(f"server {server} DOWN ({took}): {state.last_error or 'did not start'}")

    def _mark(self, ok: bool) -> str:
        if not self.tty:  # both four wide, so the worker column lines up
            return "ok  " if ok else "FAIL"
        return "\033[32m✓\033[0m" if ok else "\033[31m✗\033[0m"

    def line(self, text: str, *, ok: bool | None = None) -> None:
        """One line of progress (control sequences removed), flushed at once; `ok` prefixes
        a pass/fail mark."""
        mark = "" if ok is None else self._mark(ok) + " "
        self._erase_status()
        print(mark + printable(text), file=self.stream, flush=True)

    def _erase_status(self) -> None:
        if self._status_shown:
            self.stream.write("\r\033[2K")  # back to column 0, clear the line
            self._status_shown = False

    @contextlib.asynccontextmanager
    async def ticking(self) -> AsyncIterator[None]:
        """While the block runs, on a terminal, redraw the running workers' status line every
        `TICK_S` (elapsed times grow while a slow worker runs); piped output is unchanged."""
        if not self.tty:
            yield
            return

        async def tick() -> None:
            while True:
                await asyncio.sleep(TICK_S)
                if self.running:
                    now = time.monotonic()
                    workers = ", ".join(f"{w} {now - t:.1f} s" for w, t in self.running.values())
                    status = printable(f"  running: {workers}")
                    self.stream.write(f"\r\033[2K\033[2m{status}\033[0m")
                    self.stream.flush()
                    self._status_shown = True

        ticker = asyncio.create_task(tick(), name="progress-ticker")
        try:
            yield
        finally:
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker
            self._erase_status()
            self.stream.flush()

    def __call__(self, node: str, update: dict[str, Any]) -> None:
        if node == "plan":
            packets: list[Handoff] = update.get("packets") or []
            self.line(f"plan: {plural(len(packets), 'packet')}")
            for packet in packets:
                # Before its servers start (on demand), a packet's tools are its allowlist.
                specs = self.hub.specs(packet.tool_allow) if self.hub is not None else []
                tools = [s.name for s in specs] or [str(entry) for entry in packet.tool_allow]
                self.line(f"  {packet.recipient:<10} tools: {', '.join(tools) or '(none)'}")
            for note in update.get("plan_notes") or []:
                self.line(f"  note: {note}")
            now = time.monotonic()
            self.running = {p.id: (p.recipient, now) for p in packets if not p.depends_on}
            self._still_running()
        elif node in ("dispatch", "__error_handler__dispatch"):
            for report in update.get("reports") or []:
                self.line(describe_report(report), ok=report.status == "ok")
                self.running.pop(report.packet_id, None)
            self._still_running()
        elif node == "recover":
            for record in update.get("recoveries") or []:
                self.line(f"recover: {record.strategy} — {record.detail}")
        elif node == "collect" and update.get("stop_reason"):
            self.line(f"stop: {update['stop_reason']}; no new work starts")
        elif node == "__interrupt__":
            for interrupt in update.get("value") or update.get("__interrupt__") or ():
                self.line(f"paused: {waiting_for(getattr(interrupt, 'value', interrupt))}")

    def _still_running(self) -> None:
        """On a terminal, which workers of the first wave are still running, and for how
        long (piped output stays one line per event)."""
        if not self.tty or not self.running:
            return
        now = time.monotonic()
        workers = ", ".join(f"{w} {now - t:.1f} s" for w, t in self.running.values())
        text = printable(f"  running: {workers}")
        self._erase_status()
        print(f"\033[2m{text}\033[0m", file=self.stream, flush=True)  # dim, ours alone
