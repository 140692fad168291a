"""What the incident servers (logs, metrics, deploys) share: time windows and SQLite files.

Times cross the tools as ISO-8601 text in UTC. A tool accepts ``2025-06-12T14:05:00Z``,
``2025-06-12T14:05Z``, ``2025-06-12 14:05``, an explicit offset (``+02:00``, converted to UTC) or
a bare date (midnight UTC); a time without an offset is UTC. Every time a tool returns is
``YYYY-MM-DDTHH:MM:SSZ``.

A window is ``[since, until)``. When a tool leaves them out, ``until`` is the data's "now"
(``servers.incident_world.DATA_AS_OF``) and ``since`` is ``until`` minus the tool's default span.

Each server keeps its data in its own SQLite file (path from an environment variable, default
under ``<project>/var``), created and seeded on first start, like the orders database.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

VAR_DIR = Path(__file__).resolve().parent.parent / "var"


def parse_time(raw: str, *, name: str) -> datetime:
    """Parse an ISO-8601 time (see the module docstring) to an aware UTC datetime, or raise
    ValueError naming the argument and the accepted shape."""
    text = raw.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"{name} must be an ISO-8601 UTC time like 2025-06-12T14:05:00Z (got {raw!r})"
        ) from None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def iso(value: datetime) -> str:
    """Format an aware datetime as ``YYYY-MM-DDTHH:MM:SSZ`` (UTC)."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Window:
    """A half-open time window ``[since, until)`` in UTC."""

    since: datetime
    """First instant inside the window."""
    until: datetime
    """First instant after the window."""

    @property
    def minutes(self) -> float:
        """The window's length in minutes."""
        return (self.until - self.since).total_seconds() / 60.0

    def as_json(self) -> dict[str, str]:
        """``{"since": ..., "until": ...}`` in the tools' time format."""
        return {"since": iso(self.since), "until": iso(self.until)}


def window(
    since: str, until: str, *, now: datetime, default_span: timedelta,
    max_span: timedelta | None = None,
) -> Window:
    """Resolve a tool's since/until arguments (either may be empty) into a `Window`; raise
    ValueError when it is empty, reversed or longer than max_span."""
    end = parse_time(until, name="until") if until.strip() else now
    start = parse_time(since, name="since") if since.strip() else end - default_span
    if start >= end:
        raise ValueError(f"since ({iso(start)}) must be before until ({iso(end)})")
    if max_span is not None and end - start > max_span:
        hours = max_span.total_seconds() / 3600
        raise ValueError(f"window too long: at most {hours:g} hours (got {iso(start)} to "
                         f"{iso(end)}); ask for a shorter window")
    return Window(since=start, until=end)


def db_path(env_var: str, default_name: str) -> Path:
    """The database path from env_var, or ``<project>/var/<default_name>``."""
    raw = os.environ.get(env_var)
    return Path(raw).expanduser() if raw else VAR_DIR / default_name


def connect(path: Path) -> sqlite3.Connection:
    """Open the database in autocommit mode (transactions are explicit), WAL journal."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30.0)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def ensure_seeded(
    path: Path, schema: Sequence[str], *, marker_table: str,
    seed: Callable[[sqlite3.Connection], None],
) -> None:
    """Create the schema at path and, if marker_table is empty, run seed inside the same
    transaction. A second start (or a concurrent one: BEGIN IMMEDIATE serializes them) seeds
    nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        for statement in schema:
            conn.execute(statement)
        # `marker_table` is a literal from the calling module, never input.
        if conn.execute(f"SELECT COUNT(*) FROM {marker_table}").fetchone()[0] == 0:
            seed(conn)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()


def check_service(service: str, known: Sequence[str]) -> str:
    """Normalize a service name (trimmed, lower case) or raise ValueError listing the known
    ones."""
    name = service.strip().lower()
    if name not in known:
        raise ValueError(f"unknown service {service!r}; known services: {', '.join(known)}")
    return name
