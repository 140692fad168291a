"""Logs MCP server: structured log lines from every service, in a real SQLite database.

Run with ``python -m servers.logs`` (stdio). The lines live at ``MUSTER_LOGS_DB`` (default
``<project>/var/logs.sqlite``), generated deterministically (fixed seed) from
``servers.incident_world`` on first start: a week of lines (``LOGS_START`` to ``DATA_AS_OF``)
from twelve services. Each line has a time, service, host, level (INFO, WARN, ERROR), message,
request id, HTTP status, route, latency and the version the host was running. Error lines follow
the same rates as the metrics server's error_rate (about one line per 40 failed requests), deploys
and config changes are logged when they happen, and a line's version changes with each deploy.

Every tool returns JSON text; times are ISO-8601 UTC (see ``servers.incident_store``).
"""

from __future__ import annotations

import bisect
import json
import math
import os
import random
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.session import ServerSession
from mcp.types import ToolAnnotations

from servers import serving
from servers.call_log import record
from servers.incident_changes import Change, build_changes
from servers.incident_series import ServiceModel, minute_of
from servers.incident_store import check_service, connect, db_path, ensure_seeded, iso, window
from servers.incident_stories import STORIES
from servers.incident_world import (
    DATA_AS_OF,
    LOGS_START,
    METRICS_START,
    SERVICE_NAMES,
    SERVICES,
    ServiceProfile,
)
from servers.stdio_pipes import run_stdio

SERVER = "logs"
DB_ENV_VAR = "MUSTER_LOGS_DB"
SEED = "muster-incident-logs-v1"
LEVELS = ("INFO", "WARN", "ERROR")
MAX_LIMIT = 100
TOP_ERRORS = 5
DEFAULT_SPAN = timedelta(hours=1)
MAX_SPAN = timedelta(days=8)
ERRORS_PER_LINE = 40
"""One ERROR line is logged per this many failed requests (on average)."""
MAX_ERRORS_PER_MIN = 15
ACCESS_P = 0.12
"""Chance a minute has a sampled INFO access line."""

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS lines (
        id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, service TEXT NOT NULL, host TEXT NOT NULL,
        level TEXT NOT NULL, message TEXT NOT NULL, request_id TEXT, status INTEGER,
        route TEXT, latency_ms INTEGER, version TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS lines_by_service ON lines(service, ts)",
    "CREATE INDEX IF NOT EXISTS lines_by_time ON lines(ts)",
)
Line = tuple[int, str, str, str, str, str | None, int | None, str | None, int | None, str]
"""(ts, service, host, level, message, request_id, status, route, latency_ms, version)."""


def _poisson(rng: random.Random, lam: float) -> int:
    if lam <= 0:
        return 0
    limit, k, p = math.exp(-min(lam, 30.0)), 0, rng.random()
    while p > limit and k < MAX_ERRORS_PER_MIN:
        k += 1
        p *= rng.random()
    return k


def _lines(profile: ServiceProfile, changes: list[Change]) -> Iterator[Line]:
    """A service's log lines, LOGS_START to DATA_AS_OF (deterministic)."""
    name, model = profile.name, ServiceModel.of(profile)
    requests, p50s, p95s, error_rates, _, _, memories = model.columns
    rng = random.Random(f"{SEED}:{name}")
    uniform, randrange, choice = rng.random, rng.randrange, rng.choice
    deploys = [c for c in changes if c.service == name and c.kind == "deploy"]
    starts = [minute_of(c.at) for c in deploys]
    events = {minute_of(c.at): c for c in changes if c.service == name}
    restarts = {minute_of(r) for s in STORIES if s.leak and s.leak.service == name
                for r in s.leak.restarts}
    hosts = [f"{name}-{i}" for i in range(profile.hosts)]
    first, last, origin = minute_of(LOGS_START), minute_of(DATA_AS_OF), minute_of(METRICS_START)
    upcoming = bisect.bisect_right(starts, first)
    ver = deploys[upcoming - 1].to_value if upcoming else profile.version
    noise = [(profile.error_rate, profile.noise_errors)]

    def rid() -> str:
        return f"req-{rng.getrandbits(48):012x}"

    for minute in range(first, last):
        i, base = minute - origin, minute * 60
        p50, p95, memory = p50s[i], p95s[i], memories[i]
        while upcoming < len(starts) and starts[upcoming] <= minute:
            ver = deploys[upcoming].to_value
            upcoming += 1
        if minute in events:
            yield from _change_lines(events[minute], hosts, base, ver)
        if minute in restarts:
            for k, host in enumerate(hosts):
                yield (base + 2 * k, name, host, "INFO", "instance restarted by on-call: memory "
                       f"was at {round(100 * memories[i - 1])}% of the container limit",
                       None, None, None, None, ver)
        if uniform() < ACCESS_P:
            yield (base + randrange(60), name, choice(hosts), "INFO", "request completed",
                   rid(), 200, choice(profile.routes), round(p50 * 0.6 + uniform() * p95), ver)
        active = model.active(minute)
        sources = noise
        if active or memory > 0.88:
            sources = noise + [
                (max(0.0, e.error_rate - profile.error_rate) * s, e.errors)
                for e, s in active if e.errors and e.error_rate is not None]
            if memory > 0.88:
                sources.append(((memory - 0.88) * 0.5, (
                    (503, profile.routes[0], "request shed: heap above 88% of the limit"),)))
        for _ in range(_poisson(rng, requests[i] * error_rates[i] / ERRORS_PER_LINE)):
            options = sources[0][1] if len(sources) == 1 else rng.choices(
                sources, [w for w, _ in sources])[0][1]
            status, route, message = choice(options)
            yield (base + randrange(60), name, choice(hosts), "ERROR", message, rid(),
                   status, route, round(p50 + uniform() * p95), ver)
        for effect, s in active:
            for _ in range(_poisson(rng, effect.warn_per_min * s)):
                yield (base + randrange(60), name, choice(hosts), "WARN",
                       choice(effect.warnings), None, None, None, None, ver)
        if memory > 0.7 and uniform() < 0.3:
            pause = round(200 + 3000 * (memory - 0.7))
            yield (base + randrange(60), name, choice(hosts), "WARN",
                   f"GC pause {pause}ms: heap at {round(100 * memory)}% of the container limit",
                   None, None, None, pause, ver)
        if uniform() < 0.02:
            yield (base + randrange(60), name, choice(hosts), "WARN",
                   "slow request: over the latency objective", rid(), 200,
                   choice(profile.routes), round(p95 * (1 + 1.5 * uniform())), ver)


def _change_lines(change: Change, hosts: list[str], base: int, ver: str) -> Iterator[Line]:
    """The lines a deploy or config change logs as it rolls out."""
    service = change.service
    if change.kind == "deploy":
        yield (base, service, hosts[0], "INFO", f"deploy started: {change.from_value} -> "
               f"{change.to_value} ({change.change_id}) by {change.author}",
               None, None, None, None, ver)
        for k, host in enumerate(hosts):
            yield (base + 5 + 3 * k, service, host, "INFO",
                   f"instance started, running version {change.to_value}",
                   None, None, None, None, ver)
        return
    yield (base, service, hosts[0], "INFO", f"config change applied: {change.target} = "
           f"{change.to_value} ({change.change_id}) by {change.author}",
           None, None, None, None, ver)


def seed(conn: sqlite3.Connection) -> None:
    """Insert every service's log lines (deterministic)."""
    changes = build_changes()
    for profile in SERVICES:
        lines: list[Line] = sorted(_lines(profile, changes), key=lambda line: line[0])
        conn.executemany(
            "INSERT INTO lines (ts, service, host, level, message, request_id, status, route,"
            " latency_ms, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", lines)


def ensure_database(path: Path) -> None:
    """Create and seed the logs database at path, once."""
    ensure_seeded(path, SCHEMA, marker_table="lines", seed=seed)


@dataclass
class LogStore:
    """Lifespan resources: one connection to the logs database."""

    conn: sqlite3.Connection


@asynccontextmanager
async def lifespan(server: FastMCP) -> AsyncIterator[LogStore]:
    """Open (creating and seeding if needed) the database for the server's lifetime."""
    path = db_path(DB_ENV_VAR, "logs.sqlite")
    ensure_database(path)
    conn = connect(path)
    try:
        yield LogStore(conn=conn)
    finally:
        conn.close()


mcp = FastMCP("logs", log_level="WARNING", lifespan=lifespan)
LogsContext = Context[ServerSession, LogStore]


def _levels(level: str) -> list[str]:
    wanted = []
    for part in level.replace(",", " ").split():
        name = {"WARNING": "WARN", "ERR": "ERROR"}.get(part.upper(), part.upper())
        if name not in LEVELS:
            raise ValueError(f"unknown level {part!r}; use INFO, WARN or ERROR (or several, "
                             "comma-separated)")
        wanted.append(name)
    return list(dict.fromkeys(wanted))


def _escape(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _line(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "ts": iso(datetime.fromtimestamp(row["ts"], tz=UTC)), "service": row["service"],
        "host": row["host"], "level": row["level"], "message": row["message"],
        "request_id": row["request_id"], "status": row["status"], "route": row["route"],
        "latency_ms": row["latency_ms"], "version": row["version"],
    }


# structured_output=False: tools return JSON text. Otherwise FastMCP adds an output schema
# that the client re-validates with jsonschema on every call (about 0.4 ms each).
@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def search_logs(
    ctx: LogsContext, service: str = "", level: str = "", text: str = "", since: str = "",
    until: str = "", limit: int = 20,
) -> str:
    """Search log lines, newest first, by service, level (INFO/WARN/ERROR, comma-separated),
    text (every word must appear) and window [since, until) (ISO UTC; default: the last hour)."""
    record(SERVER, "search_logs", {"service": service, "level": level, "text": text,
                                   "since": since, "until": until, "limit": limit})
    if limit < 1 or limit > MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT} (got {limit})")
    span = window(since, until, now=DATA_AS_OF, default_span=DEFAULT_SPAN, max_span=MAX_SPAN)
    where = ["ts >= ?", "ts < ?"]
    params: list[str | float | int] = [span.since.timestamp(), span.until.timestamp()]
    svc = check_service(service, SERVICE_NAMES) if service.strip() else ""
    if svc:
        where.append("service = ?")
        params.append(svc)
    levels = _levels(level)
    if levels:
        where.append(f"level IN ({', '.join('?' * len(levels))})")
        params.extend(levels)
    for term in text.split():
        where.append("(message LIKE ? ESCAPE '\\' OR route LIKE ? ESCAPE '\\'"
                     " OR request_id LIKE ? ESCAPE '\\')")
        params.extend([f"%{_escape(term)}%"] * 3)
    clause = " AND ".join(where)
    conn = ctx.request_context.lifespan_context.conn
    total = conn.execute(f"SELECT COUNT(*) FROM lines WHERE {clause}", params).fetchone()[0]
    rows = conn.execute(f"SELECT * FROM lines WHERE {clause} ORDER BY ts DESC, id DESC LIMIT ?",
                        [*params, limit]).fetchall()
    return json.dumps({
        **span.as_json(), "filters": {"service": svc, "levels": levels, "text": text.split()},
        "total": total, "returned": len(rows), "truncated": total > len(rows),
        "lines": [_line(r) for r in rows],
    })


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def error_summary(ctx: LogsContext, since: str = "", until: str = "", service: str = "") -> str:
    """Per service, over [since, until) (ISO UTC; default: the last hour): ERROR and WARN counts,
    5xx by status, first and last error, and the top error messages with the versions logging
    them."""
    record(SERVER, "error_summary", {"since": since, "until": until, "service": service})
    span = window(since, until, now=DATA_AS_OF, default_span=DEFAULT_SPAN, max_span=MAX_SPAN)
    names = [check_service(service, SERVICE_NAMES)] if service.strip() else list(SERVICE_NAMES)
    conn = ctx.request_context.lifespan_context.conn
    bounds = (span.since.timestamp(), span.until.timestamp())
    out = []
    for name in names:
        counts = dict(conn.execute(
            "SELECT level, COUNT(*) FROM lines WHERE service = ? AND ts >= ? AND ts < ?"
            " GROUP BY level", (name, *bounds)).fetchall())
        first_last = conn.execute(
            "SELECT MIN(ts), MAX(ts) FROM lines WHERE service = ? AND level = 'ERROR'"
            " AND ts >= ? AND ts < ?", (name, *bounds)).fetchone()
        by_status = {str(s): n for s, n in conn.execute(
            "SELECT status, COUNT(*) FROM lines WHERE service = ? AND level = 'ERROR'"
            " AND ts >= ? AND ts < ? GROUP BY status ORDER BY status", (name, *bounds))}
        top = conn.execute(
            "SELECT message, status, route, COUNT(*) AS n, MIN(ts) AS first, MAX(ts) AS last,"
            " GROUP_CONCAT(DISTINCT version) AS versions FROM lines"
            " WHERE service = ? AND level = 'ERROR' AND ts >= ? AND ts < ?"
            " GROUP BY message, status, route ORDER BY n DESC, first LIMIT ?",
            (name, *bounds, TOP_ERRORS)).fetchall()
        out.append({
            "service": name, "errors": counts.get("ERROR", 0),
            "warnings": counts.get("WARN", 0), "lines": sum(counts.values()),
            "first_error_at": _when(first_last[0]), "last_error_at": _when(first_last[1]),
            "by_status": by_status,
            "top_errors": [{
                "message": r["message"], "status": r["status"], "route": r["route"],
                "count": r["n"], "first_seen": _when(r["first"]), "last_seen": _when(r["last"]),
                "versions": sorted(r["versions"].split(",")),
            } for r in top],
        })
    out.sort(key=lambda s: (-s["errors"], s["service"]))
    return json.dumps({**span.as_json(), "services": out})


def _when(ts: int | None) -> str | None:
    return None if ts is None else iso(datetime.fromtimestamp(ts, tz=UTC))


if __name__ == "__main__":
    serving()
    run_stdio(mcp)
    # stdin closed (the hub went away, perhaps SIGKILLed): leave at once rather than spend
    # most of a second in interpreter shutdown while the parent is gone.
    os._exit(0)
