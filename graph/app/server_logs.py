"""Rate limits on the loggers where a misbehaving server's output becomes our log lines."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable


class RateLimitedLog(logging.Filter):
    """At most `burst` records of one message a `window_s` on a logger; the first one let
    through after the window says how many like it were dropped. The MCP client logs one
    line for each non-protocol line a server prints on its stdout (the hub shortens each to
    one line, `workers/hub/transports.py`), so a server printing garbage wrote a line of our
    log for every line of its own: 500 lines of junk, 500 lines of log."""

    def __init__(
        self, *, burst: int = 3, window_s: float = 10.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.burst = burst
        self.window_s = window_s
        self.clock = clock
        self._seen: dict[str, tuple[float, int, int]] = {}  # message → (window start, n, dropped)

    def filter(self, record: logging.LogRecord) -> bool:
        key = f"{record.name}:{record.levelno}:{record.msg}"
        now = self.clock()
        start, count, dropped = self._seen.get(key, (now, 0, 0))
        if now - start > self.window_s:
            start, count = now, 0
        if count >= self.burst:
            self._seen[key] = (start, count, dropped + 1)
            return False
        self._seen[key] = (start, count + 1, 0)
        if dropped:
            record.msg = f"{record.getMessage()} ({dropped} more like it dropped)"
            record.args = ()
        return True


SERVER_LOGGERS = (
    "mcp.client.stdio",
    "mcp.client.sse",
    "mcp.client.streamable_http",
    "psycopg.pool",
)
"""The loggers where what a server does wrong shows up as our log lines: the MCP client's
(a server's junk output) and psycopg_pool's (each failed reconnect while a database is away,
a few lines each)."""


def limit_server_logs() -> None:
    """Put a `RateLimitedLog` on each of `SERVER_LOGGERS` (once)."""
    for name in SERVER_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RateLimitedLog) for f in logger.filters):
            logger.addFilter(RateLimitedLog())
