"""What the incident servers (logs, metrics, deploys) share: time windows and SQLite files.

Times cross the tools as ISO-8601 text in UTC. A tool accepts ``2025-06-12T14:05:00Z``,
``2025-06-12T14:05Z``, ``2025-06-12 14:05``, an explicit offset (``+02:00``, converted to UTC) or
a bare date (midnight UTC); a time without an offset is UTC. Every time a tool returns is
``YYYY-MM-DDTHH:MM:SSZ``.

A window is ``[since, until)``. When a tool leaves them out, ``until`` is the data's "now"
(``servers.incident_world.DATA_AS_OF``) and ``since`` is ``until`` minus the tool's default span.

Each server keeps its data in its own SQLite file (path from an environment variable, default
under ``<project>/var``), created and seeded on first start, like the orders database. A file
seeded by another version of the world (``WORLD_FILES`` changed: new stories, other data) is
emptied and seeded again on start, so an old ``var/`` never serves stale evidence.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

VAR_DIR = Path(__file__).resolve().parent.parent / "var"
WORLD_FILES = ("incident_world.py", "incident_stories.py", "incident_series.py",
               "incident_changes.py")
"""The modules the seeded data is generated from: their bytes are the data's version."""
_TABLE = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+)")


def world_version() -> str:
    """A digest of the world's generator modules (what a seeded file was made from)."""
    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for name in WORLD_FILES:
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:16]


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
    """Create the schema at path and, if marker_table is empty or the file was seeded by
    another version of the world, (re)seed it inside the same transaction. A second start (or
    a concurrent one: BEGIN IMMEDIATE serializes them) seeds nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    version = world_version()
    conn = connect(path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        for statement in schema:
            conn.execute(statement)
        conn.execute("CREATE TABLE IF NOT EXISTS seeded_from (world TEXT NOT NULL)")
        seeded = conn.execute("SELECT world FROM seeded_from").fetchone()
        # `marker_table` and the schema's tables are literals from the calling module.
        empty = conn.execute(f"SELECT COUNT(*) FROM {marker_table}").fetchone()[0] == 0
        if empty or seeded is None or seeded[0] != version:
            tables = [m.group(1) for statement in schema if (m := _TABLE.search(statement))]
            for table in reversed(tables):  # children (foreign keys) before parents
                conn.execute(f"DELETE FROM {table}")
            seed(conn)
            conn.execute("DELETE FROM seeded_from")
            conn.execute("INSERT INTO seeded_from (world) VALUES (?)", (version,))
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
