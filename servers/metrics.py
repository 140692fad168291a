"""Metrics MCP server: per-minute time series per service, with injectable failure modes.

Run with ``python -m servers.metrics`` (stdio). The samples live in SQLite at
``MUSTER_METRICS_DB`` (default ``<project>/var/metrics.sqlite``), generated deterministically
from ``servers.incident_world`` on first start (two weeks, every minute, every service; about
two seconds). Metrics: requests (req/min), latency_p50 and latency_p95 (ms), error_rate (share
of 5xx), cpu, db_pool and memory (shares of their limits).

``MUSTER_METRICS_MODE`` picks how the backend behaves: healthy (default); slow (every call
answers after ``MUSTER_METRICS_SLOW_S`` seconds, default 90, longer than a worker's default
60 s deadline); down (every call fails with "metrics backend unreachable"); dies_mid_run (the
first ``MUSTER_METRICS_DIE_AFTER`` calls, default 2, answer; the next one makes the process exit
without answering; a restarted process counts again from zero).

Every tool returns JSON text; times are ISO-8601 UTC (see ``servers.incident_store``).
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.session import ServerSession
from mcp.types import ToolAnnotations

from servers import serving
from servers.call_log import record
from servers.incident_series import METRICS, minute_of, samples
from servers.incident_store import (
    Window,
    check_service,
    connect,
    db_path,
    ensure_seeded,
    iso,
    window,
)
from servers.incident_world import DATA_AS_OF, METRICS_START, SERVICE_NAMES, SERVICES
from servers.stdio_pipes import run_stdio

SERVER = "metrics"
DB_ENV_VAR = "MUSTER_METRICS_DB"
MODE_ENV_VAR = "MUSTER_METRICS_MODE"
SLOW_ENV_VAR = "MUSTER_METRICS_SLOW_S"
DIE_AFTER_ENV_VAR = "MUSTER_METRICS_DIE_AFTER"
MODES = ("healthy", "slow", "down", "dies_mid_run")
DEFAULT_SPAN = timedelta(hours=1)
MAX_SPAN = timedelta(days=14)
WEEK = timedelta(days=7)
MAX_POINTS = 120
"""A query returns at most this many points; longer windows are averaged into buckets."""
CHANGE_RATIO = 1.5
"""compare_week_over_week calls a metric higher (lower) when its mean moved by this factor..."""
MIN_DELTA = {"error_rate": 0.01, "cpu": 0.10, "db_pool": 0.10, "memory": 0.10}
"""...and, for shares, by at least this much in absolute terms (noise on a tiny base is not a
change)."""

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS samples (
        service TEXT NOT NULL, minute INTEGER NOT NULL, requests REAL NOT NULL,
        latency_p50 REAL NOT NULL, latency_p95 REAL NOT NULL, error_rate REAL NOT NULL,
        cpu REAL NOT NULL, db_pool REAL NOT NULL, memory REAL NOT NULL,
        PRIMARY KEY (service, minute)) WITHOUT ROWID""",
)


def seed(conn: sqlite3.Connection) -> None:
    """Insert every service's samples (deterministic)."""
    for profile in SERVICES:
        conn.executemany("INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         samples(profile))


def ensure_database(path: Path) -> None:
    """Create and seed the metrics database at path, once."""
    ensure_seeded(path, SCHEMA, marker_table="samples", seed=seed)


@dataclass
class MetricsBackend:
    """Lifespan resources: the failure mode, the call count, and the database (None when the
    backend is down)."""

    mode: str
    slow_s: float
    die_after: int
    conn: sqlite3.Connection | None = None
    calls: int = field(default=0)


def load_settings() -> MetricsBackend:
    """Read the MUSTER_METRICS_* settings; raise ValueError naming a bad one."""
    mode = os.environ.get(MODE_ENV_VAR, "healthy").strip().lower() or "healthy"
    if mode not in MODES:
        raise ValueError(f"unknown {MODE_ENV_VAR}={mode!r}; use one of: {', '.join(MODES)}")
    raw_slow = os.environ.get(SLOW_ENV_VAR, "90")
    try:
        slow_s = float(raw_slow)
    except ValueError:
        raise ValueError(f"{SLOW_ENV_VAR} must be a number of seconds (got {raw_slow!r})") from None
    raw_die = os.environ.get(DIE_AFTER_ENV_VAR, "2")
    try:
        die_after = int(raw_die)
    except ValueError:
        raise ValueError(f"{DIE_AFTER_ENV_VAR} must be a whole number of calls "
                         f"(got {raw_die!r})") from None
    if slow_s < 0 or die_after < 0:
        raise ValueError(f"{SLOW_ENV_VAR} and {DIE_AFTER_ENV_VAR} must not be negative")
    return MetricsBackend(mode=mode, slow_s=slow_s, die_after=die_after)


@asynccontextmanager
async def lifespan(server: FastMCP) -> AsyncIterator[MetricsBackend]:
    """Open (creating and seeding if needed) the database, unless the backend is down."""
    backend = load_settings()
    if backend.mode != "down":
        path = db_path(DB_ENV_VAR, "metrics.sqlite")
        ensure_database(path)
        backend.conn = connect(path)
    try:
        yield backend
    finally:
        if backend.conn is not None:
            backend.conn.close()


mcp = FastMCP("metrics", log_level="WARNING", lifespan=lifespan)
MetricsContext = Context[ServerSession, MetricsBackend]


async def _backend(ctx: MetricsContext) -> sqlite3.Connection:
    """Play the failure mode, then return the database connection."""
    backend = ctx.request_context.lifespan_context
    backend.calls += 1
    if backend.mode == "down":
        raise ConnectionError("metrics backend unreachable: connection refused (tsdb at "
                              "metrics-db:9090); report metrics as unavailable, do not guess")
    if backend.mode == "slow":
        await anyio.sleep(backend.slow_s)
    if backend.mode == "dies_mid_run" and backend.calls > backend.die_after:
        sys.stderr.write(f"metrics server: dies_mid_run mode, exiting on call {backend.calls}\n")
        sys.stderr.flush()
        os._exit(3)
    assert backend.conn is not None
    return backend.conn


def _metric(metric: str) -> str:
    name = metric.strip().lower()
    if name not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; known metrics: {', '.join(METRICS)}")
    return name


def _rows(conn: sqlite3.Connection, service: str, metric: str, span: Window) -> list[
        tuple[int, float]]:
    # `metric` is a key of METRICS (checked by _metric), never raw input.
    rows = conn.execute(
        f"SELECT minute, {metric} FROM samples WHERE service = ? AND minute >= ? AND minute < ?"
        " ORDER BY minute",
        (service, minute_of(span.since), math.ceil(span.until.timestamp() / 60)),
    ).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]


def _round(metric: str, value: float) -> float:
    return round(value, 1) if METRICS[metric][0] in ("ms", "req/min") else round(value, 4)


def _at(minute: int) -> str:
    return iso(datetime.fromtimestamp(minute * 60, tz=METRICS_START.tzinfo))


def _summary(metric: str, rows: list[tuple[int, float]]) -> dict[str, Any]:
    values = [v for _, v in rows]
    top = max(rows, key=lambda r: r[1])
    low = min(rows, key=lambda r: r[1])
    return {
        "count": len(values), "mean": _round(metric, sum(values) / len(values)),
        "min": _round(metric, low[1]), "min_at": _at(low[0]),
        "max": _round(metric, top[1]), "max_at": _at(top[0]),
        "first": _round(metric, values[0]), "last": _round(metric, values[-1]),
    }


def _no_data(service: str, span: Window) -> ValueError:
    return ValueError(f"no samples for {service} between {iso(span.since)} and {iso(span.until)}"
                      f"; metrics cover {iso(METRICS_START)} to {iso(DATA_AS_OF)}")


# structured_output=False: tools return JSON text. Otherwise FastMCP adds an output schema
# that the client re-validates with jsonschema on every call (about 0.4 ms each).
@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
async def list_metrics(ctx: MetricsContext) -> str:
    """List the services and metrics (with units) and the time span the data covers."""
    record(SERVER, "list_metrics", {})
    await _backend(ctx)
    return json.dumps({
        "services": list(SERVICE_NAMES),
        "metrics": {name: {"unit": unit, "description": text}
                    for name, (unit, text) in METRICS.items()},
        "resolution_minutes": 1,
        "data": {"since": iso(METRICS_START), "until": iso(DATA_AS_OF)},
    })


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
async def query_metric(
    service: str, metric: str, ctx: MetricsContext, since: str = "", until: str = ""
) -> str:
    """One metric of one service over [since, until) (ISO UTC; default: the hour before the
    data's end): up to 120 points, oldest first, and summary stats over every minute."""
    record(SERVER, "query_metric",
           {"service": service, "metric": metric, "since": since, "until": until})
    conn = await _backend(ctx)
    name, svc = _metric(metric), check_service(service, SERVICE_NAMES)
    span = window(since, until, now=DATA_AS_OF, default_span=DEFAULT_SPAN, max_span=MAX_SPAN)
    rows = _rows(conn, svc, name, span)
    if not rows:
        raise _no_data(svc, span)
    step = max(1, math.ceil(len(rows) / MAX_POINTS))
    points = []
    for i in range(0, len(rows), step):
        bucket = rows[i:i + step]
        points.append({"t": _at(bucket[0][0]),
                       "value": _round(name, sum(v for _, v in bucket) / len(bucket))})
    return json.dumps({
        "service": svc, "metric": name, "unit": METRICS[name][0], **span.as_json(),
        "step_minutes": step, "points": points, "summary": _summary(name, rows),
    })


def _verdict(metric: str, now: float, before: float) -> tuple[float | None, str]:
    ratio = now / before if before > 0 else None
    delta = abs(now - before)
    if delta < MIN_DELTA.get(metric, 0.0):
        return ratio, "similar"
    if before <= 0:
        return ratio, "higher" if now > 0 else "similar"
    if now >= before * CHANGE_RATIO:
        return ratio, "higher"
    if now * CHANGE_RATIO <= before:
        return ratio, "lower"
    return ratio, "similar"


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
async def compare_week_over_week(
    service: str, ctx: MetricsContext, metric: str = "", since: str = "", until: str = ""
) -> str:
    """Compare a service's metrics over [since, until) with the same window 7 days before
    (metric: one name, or empty for all): means, maxima, ratio and a higher/lower/similar call."""
    record(SERVER, "compare_week_over_week",
           {"service": service, "metric": metric, "since": since, "until": until})
    conn = await _backend(ctx)
    svc = check_service(service, SERVICE_NAMES)
    names = [_metric(metric)] if metric.strip() else list(METRICS)
    span = window(since, until, now=DATA_AS_OF, default_span=DEFAULT_SPAN, max_span=WEEK)
    before = Window(since=span.since - WEEK, until=span.until - WEEK)
    if before.since < METRICS_START:
        raise ValueError(f"no data a week before {iso(span.since)}: metrics start at "
                         f"{iso(METRICS_START)}; pick a window from {iso(METRICS_START + WEEK)}")
    results = []
    for name in names:
        now_rows, old_rows = _rows(conn, svc, name, span), _rows(conn, svc, name, before)
        if not now_rows or not old_rows:
            raise _no_data(svc, span if not now_rows else before)
        now, old = _summary(name, now_rows), _summary(name, old_rows)
        ratio, change = _verdict(name, now["mean"], old["mean"])
        results.append({
            "metric": name, "unit": METRICS[name][0],
            "current": {k: now[k] for k in ("mean", "min", "max", "max_at", "last")},
            "week_before": {k: old[k] for k in ("mean", "min", "max", "max_at", "last")},
            "mean_ratio": None if ratio is None else round(ratio, 2), "change": change,
        })
    return json.dumps({"service": svc, "window": span.as_json(), "week_before": before.as_json(),
                       "metrics": results})


def main() -> None:
    """Check the configuration, then serve over stdio; exit 2 with a message if it is invalid."""
    try:
        load_settings()
    except ValueError as exc:
        print(f"metrics server: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    serving()
    run_stdio(mcp)
    # stdin closed (the hub went away, perhaps SIGKILLed): leave at once rather than spend
    # most of a second in interpreter shutdown while the parent is gone.
    os._exit(0)


if __name__ == "__main__":
    main()
