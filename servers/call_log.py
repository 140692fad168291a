"""Append-only log of tool calls as seen by the servers (for tests and audits).

If the environment variable ``MUSTER_CALL_LOG`` names a file, every tool of every server appends
one JSON line ``{"server", "tool", "args", "ts", "pid"}`` to it before doing any work. Each line is
written with a single unbuffered ``write`` on a file opened in append mode, so several server
processes can share one log without interleaving their (small) lines.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ENV_VAR = "MUSTER_CALL_LOG"


def record(server: str, tool: str, args: Mapping[str, object]) -> None:
    """Append one call record to the file named by MUSTER_CALL_LOG; do nothing if it is unset."""
    path = os.environ.get(ENV_VAR)
    if not path:
        return
    entry = {
        "server": server,
        "tool": tool,
        "args": dict(args),
        "ts": time.time(),
        "pid": os.getpid(),
    }
    line = (json.dumps(entry, sort_keys=True, default=str) + "\n").encode("utf-8")
    # O_APPEND + one write() per line, on a bare descriptor: `open()` builds a file object
    # and its buffer for each line, which cost a server more than its FTS query did.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def read_calls(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Return every record in the log file, oldest first (an absent file means no calls)."""
    p = Path(path)
    if not p.exists():
        return []
    with p.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def count_calls(
    path: str | os.PathLike[str], *, server: str | None = None, tool: str | None = None
) -> int:
    """Count the logged calls, optionally only those of one server and/or one tool."""
    return sum(
        1
        for c in read_calls(path)
        if (server is None or c.get("server") == server) and (tool is None or c.get("tool") == tool)
    )
