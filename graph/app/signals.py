"""Stopping cleanly on SIGINT/SIGTERM: LangGraph drains the runs in flight.

The first signal asks every registered `RunControl` to drain: the work in flight finishes,
its superstep is checkpointed, and no new work starts (the run then raises `GraphDrained`,
and `muster resume` or `muster batch --resume` continues it). A second signal stops the
process at once, with the signal's default action. `muster run` (one run) and `muster batch`
(many) both stop this way.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from types import TracebackType

from langgraph.runtime import RunControl

DRAIN_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class SignalDrain:
    """Turns SIGINT/SIGTERM into a drain of the registered runs; a second signal kills.

    `install()` the handlers on the running loop (or use it as a `with` block, which also
    removes them), add each run's `RunControl` to `controls` while it runs, and check
    `stop` before starting new work.
    """

    def __init__(self, announce: Callable[[str], None], *, in_flight: str) -> None:
        self.announce = announce
        """Prints the one line that says a drain started."""
        self.in_flight = in_flight
        """What finishes before the stop, in that line ("work in flight")."""
        self.controls: set[RunControl] = set()
        """The runs in flight; each is asked to drain on the first signal."""
        self.stop = asyncio.Event()
        """Set by the first signal: start nothing new."""
        self._installed: list[int] = []

    def install(self) -> None:
        """Handle SIGINT and SIGTERM on the running loop (where the platform lets us)."""
        loop = asyncio.get_running_loop()
        for signum in DRAIN_SIGNALS:
            try:
                loop.add_signal_handler(signum, self._on_signal, signum)
            except (NotImplementedError, RuntimeError):  # not the main thread, or no support
                continue
            self._installed.append(signum)

    def uninstall(self) -> None:
        """Give the signals back their default handlers."""
        loop = asyncio.get_running_loop()
        while self._installed:
            loop.remove_signal_handler(self._installed.pop())

    def _on_signal(self, signum: int) -> None:
        name = signal.Signals(signum).name
        if self.stop.is_set():  # the second signal: stop at once
            asyncio.get_running_loop().remove_signal_handler(signum)
            os.kill(os.getpid(), signum)
            return
        self.stop.set()
        self.announce(f"{name}: finishing {self.in_flight}, then stopping")
        for control in list(self.controls):
            control.request_drain(name)

    def __enter__(self) -> SignalDrain:
        self.install()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.uninstall()
