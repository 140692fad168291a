"""Deploys MCP server: deploy and config-change history per service, and approval-gated rollbacks.

Run with ``python -m servers.deploys`` (stdio). The history lives in SQLite at
``MUSTER_DEPLOYS_DB`` (default ``<project>/var/deploys.sqlite``), seeded on first start from
``servers.incident_changes`` (two weeks, every service). A change is a deploy (``target`` is
``version``, from -> to are versions) or a config change (``target`` is the setting's key, from
-> to its values); a rollback is recorded as a change of kind ``rollback`` that ``reverts`` it.

The one write is ``rollback``, gated exactly like ``orders.issue_refund``: it needs an approval
token bound to the exact tool and arguments (``deploys.rollback`` with ``change_id`` and
``idempotency_key``; see ``servers.approval``) and an idempotency key. A repeat with the same key
returns the first result (``replayed: true``) and changes nothing, even after the approval has
expired. The business rule lives here too, whichever thread asks: a change is rolled back at
most once, a rollback is never rolled back, and a change that a later change to the same
service and target has superseded is not rolled back (that would silently undo the later one).

Every tool returns JSON text; times are ISO-8601 UTC (see ``servers.incident_store``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.session import ServerSession
from mcp.types import ToolAnnotations

from servers import serving
from servers.approval import EXPIRED, secret_from_env, verify_token
from servers.call_log import record
from servers.digests import action_digests
from servers.incident_changes import build_changes
from servers.incident_store import check_service, connect, db_path, ensure_seeded, iso, parse_time
from servers.incident_world import DATA_AS_OF, SERVICE_NAMES
from servers.stdio_pipes import run_stdio

SERVER = "deploys"
ROLLBACK_TOOL = "deploys.rollback"
DB_ENV_VAR = "MUSTER_DEPLOYS_DB"
KINDS = ("deploy", "config", "rollback")
DEFAULT_SPAN = timedelta(hours=24)
MAX_LIMIT = 200

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS changes (
        change_id TEXT PRIMARY KEY, service TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('deploy', 'config', 'rollback')),
        at TEXT NOT NULL, author TEXT NOT NULL, target TEXT NOT NULL,
        from_value TEXT NOT NULL, to_value TEXT NOT NULL, summary TEXT NOT NULL,
        reverts TEXT REFERENCES changes(change_id))""",
    """CREATE TABLE IF NOT EXISTS rollbacks (
        rollback_id TEXT PRIMARY KEY,
        change_id TEXT NOT NULL UNIQUE REFERENCES changes(change_id),
        idempotency_key TEXT NOT NULL UNIQUE, args_digest TEXT NOT NULL,
        created_at TEXT NOT NULL, result_json TEXT NOT NULL,
        requested_by TEXT NOT NULL DEFAULT '')""",
    "CREATE INDEX IF NOT EXISTS changes_by_service ON changes(service, at)",
)
_CHANGE_ID_RE = re.compile(r"(dep|cfg|rb)-[a-z0-9][a-z0-9-]{2,80}")


def seed(conn: sqlite3.Connection) -> None:
    """Insert the world's change history (deterministic)."""
    conn.executemany(
        "INSERT INTO changes (change_id, service, kind, at, author, target, from_value,"
        " to_value, summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(c.change_id, c.service, c.kind, iso(c.at), c.author, c.target, c.from_value,
          c.to_value, c.summary) for c in build_changes()])


def ensure_database(path: Path) -> None:
    """Create and seed the deploys database at path, once."""
    ensure_seeded(path, SCHEMA, marker_table="changes", seed=seed)


@dataclass
class DeploysDB:
    """Lifespan resources: one connection to the deploys database."""

    conn: sqlite3.Connection


@asynccontextmanager
async def lifespan(server: FastMCP) -> AsyncIterator[DeploysDB]:
    """Open (creating and seeding if needed) the database for the server's lifetime."""
    path = db_path(DB_ENV_VAR, "deploys.sqlite")
    ensure_database(path)
    conn = connect(path)
    try:
        yield DeploysDB(conn=conn)
    finally:
        conn.close()


mcp = FastMCP("deploys", log_level="WARNING", lifespan=lifespan)
DeploysContext = Context[ServerSession, DeploysDB]


def normalize_change_id(change_id: str) -> str:
    """Trim and lower-case a change id; reject anything not shaped like one."""
    cid = change_id.strip().lower()
    if not _CHANGE_ID_RE.fullmatch(cid):
        raise ValueError("change id must look like dep-checkout-20250612-1402 or "
                         f"cfg-gateway-20250609-1610 (got {change_id!r}); list_changes shows them")
    return cid


def _conn(ctx: DeploysContext) -> sqlite3.Connection:
    return ctx.request_context.lifespan_context.conn


def _change(conn: sqlite3.Connection, cid: str) -> sqlite3.Row:
    row = conn.execute("SELECT * FROM changes WHERE change_id = ?", (cid,)).fetchone()
    if row is None:
        raise ValueError(f"no change {cid}; list_changes shows the changes of a service")
    return row


def _state(conn: sqlite3.Connection, row: sqlite3.Row) -> dict[str, Any]:
    """status (live, superseded, rolled_back or rollback) and what decided it."""
    if row["kind"] == "rollback":
        return {"status": "rollback", "rolled_back_by": None, "superseded_by": None}
    rollback = conn.execute("SELECT rollback_id FROM rollbacks WHERE change_id = ?",
                            (row["change_id"],)).fetchone()
    later = conn.execute(
        "SELECT change_id FROM changes WHERE service = ? AND target = ? AND change_id != ?"
        " AND (at > ? OR (at = ? AND change_id > ?)) AND COALESCE(reverts, '') != ?"
        " ORDER BY at, change_id LIMIT 1",
        (row["service"], row["target"], row["change_id"], row["at"], row["at"],
         row["change_id"], row["change_id"])).fetchone()
    status = "rolled_back" if rollback else "superseded" if later else "live"
    return {"status": status, "rolled_back_by": rollback[0] if rollback else None,
            "superseded_by": later[0] if later else None}


def _json(conn: sqlite3.Connection, row: sqlite3.Row) -> dict[str, Any]:
    return {
        "change_id": row["change_id"], "service": row["service"], "kind": row["kind"],
        "at": row["at"], "author": row["author"], "target": row["target"],
        "from": row["from_value"], "to": row["to_value"], "summary": row["summary"],
        "reverts": row["reverts"], **_state(conn, row),
    }


def _refusal(conn: sqlite3.Connection, row: sqlite3.Row) -> str | None:
    """Why this change may not be rolled back now (None: it may)."""
    cid = row["change_id"]
    if row["kind"] == "rollback":
        return (f"rollback refused: {cid} is itself a rollback (of {row['reverts']}); a rollback "
                "is not rolled back: deploy forward instead")
    prior = conn.execute("SELECT rollback_id, created_at, requested_by FROM rollbacks"
                         " WHERE change_id = ?", (cid,)).fetchone()
    if prior is not None:
        by = f" by {prior['requested_by']}" if prior["requested_by"] else ""
        return (f"rollback refused: {cid} was already rolled back ({prior['rollback_id']} at "
                f"{prior['created_at']}{by}); nothing to do")
    later = _state(conn, row)["superseded_by"]
    if later is not None:
        return (f"rollback refused: {cid} is no longer live: {later} changed {row['service']} "
                f"{row['target']} after it, so rolling {cid} back would also undo {later}; "
                "ask a human to decide")
    return None


# structured_output=False: tools return JSON text. Otherwise FastMCP adds an output schema
# that the client re-validates with jsonschema on every call (about 0.4 ms each).
@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def list_changes(
    ctx: DeploysContext, service: str = "", kind: str = "", since: str = "", until: str = "",
    limit: int = 50,
) -> str:
    """List deploys, config changes and rollbacks, newest first, by service, kind and window
    [since, until) (ISO UTC; default since: 24 h before the data's end; no until: up to now)."""
    record(SERVER, "list_changes", {"service": service, "kind": kind, "since": since,
                                    "until": until, "limit": limit})
    if limit < 1 or limit > MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT} (got {limit})")
    end = parse_time(until, name="until") if until.strip() else None
    start = (parse_time(since, name="since") if since.strip()
             else (end or DATA_AS_OF) - DEFAULT_SPAN)
    if end is not None and start >= end:
        raise ValueError(f"since ({iso(start)}) must be before until ({iso(end)})")
    where, params = ["at >= ?"], [iso(start)]
    if end is not None:
        where.append("at < ?")
        params.append(iso(end))
    svc = check_service(service, SERVICE_NAMES) if service.strip() else ""
    if svc:
        where.append("service = ?")
        params.append(svc)
    wanted = kind.strip().lower()
    if wanted:
        if wanted not in KINDS:
            raise ValueError(f"unknown kind {kind!r}; use one of: {', '.join(KINDS)}")
        where.append("kind = ?")
        params.append(wanted)
    clause = " AND ".join(where)
    conn = _conn(ctx)
    total = conn.execute(f"SELECT COUNT(*) FROM changes WHERE {clause}", params).fetchone()[0]
    rows = conn.execute(
        f"SELECT * FROM changes WHERE {clause} ORDER BY at DESC, change_id DESC LIMIT ?",
        [*params, limit]).fetchall()
    return json.dumps({
        "since": iso(start), "until": iso(end) if end else None,
        "filters": {"service": svc, "kind": wanted}, "total": total, "returned": len(rows),
        "changes": [_json(conn, r) for r in rows],
    })


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def get_change(change_id: str, ctx: DeploysContext) -> str:
    """Read one change: who, when, from -> to, its status (live, superseded, rolled_back) and
    whether a rollback of it would be allowed now."""
    record(SERVER, "get_change", {"change_id": change_id})
    conn = _conn(ctx)
    row = _change(conn, normalize_change_id(change_id))
    refusal = _refusal(conn, row)
    return json.dumps({**_json(conn, row), "rollback": {
        "allowed": refusal is None, "refusal": refusal,
        "would_restore": row["from_value"] if row["kind"] != "rollback" else None,
    }})


_REFUSAL_HINTS = {
    "missing approval": "ask a human to approve this exact rollback and pass the approval token",
    "malformed approval": "pass the token exactly as minted by the graph",
    "approval does not match this action": (
        "the token was minted for a different change or key; request a new approval"),
    "approval expired": "request a fresh approval for this rollback",
}


def _rollback_id(idempotency_key: str) -> str:
    return "rb-" + hashlib.sha256(idempotency_key.encode("utf-8")).hexdigest()[:16]


def _refused(reason: str) -> ValueError:
    return ValueError(f"rollback refused: {reason}; {_REFUSAL_HINTS.get(reason, '')}".rstrip())


@mcp.tool(
    structured_output=False,
    annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True),
)
def rollback(
    change_id: str, idempotency_key: str, ctx: DeploysContext, approval: str = "",
    requested_by: str = "",
) -> str:
    """Roll back one deploy or config change (restore its from value); needs an approval token
    and a unique idempotency key. requested_by names the caller."""
    # The approval covers {"change_id", "idempotency_key"} under "deploys.rollback";
    # requested_by (the thread that asks) is bookkeeping, not something the approval covers.
    record(SERVER, "rollback", {
        "change_id": change_id, "idempotency_key": idempotency_key,
        "approval": "<redacted>" if approval else "",
        **({"requested_by": requested_by} if requested_by else {}),
    })
    if not approval.strip():
        raise _refused("missing approval")
    cid = normalize_change_id(change_id)
    if not idempotency_key.strip():
        raise ValueError("rollback refused: idempotency_key must be a non-empty string")
    args = {"change_id": cid, "idempotency_key": idempotency_key}
    digests = action_digests(ROLLBACK_TOOL, args)
    digest = digests[0]
    secret = secret_from_env()
    if secret is None:
        raise ValueError("rollbacks are disabled: the server has no MUSTER_APPROVAL_SECRET; "
                         "start it with the same secret the graph uses")
    reason = verify_token(approval, digests, secret=secret, now=time.time())
    # An expired token still proves what was approved: it may replay a rollback that already
    # happened under that approval, never start a new one.
    if reason is not None and reason != EXPIRED:
        raise _refused(reason)
    conn = _conn(ctx)
    conn.execute("BEGIN IMMEDIATE")
    try:
        prior = conn.execute("SELECT args_digest, result_json FROM rollbacks"
                             " WHERE idempotency_key = ?", (idempotency_key,)).fetchone()
        if prior is not None:
            # A row written before the one JSON encoding may hold the legacy digest.
            if prior["args_digest"] not in digests:
                raise ValueError("idempotency key reused with different arguments; use a new "
                                 "idempotency_key for a different rollback")
            conn.execute("ROLLBACK")
            return json.dumps({**json.loads(prior["result_json"]), "replayed": True})
        if reason is not None:
            raise _refused(reason)
        row = _change(conn, cid)
        refusal = _refusal(conn, row)
        if refusal is not None:
            raise ValueError(refusal)
        rid, now = _rollback_id(idempotency_key), iso(datetime.now(UTC))
        result = {
            "rollback_id": rid, **args, "service": row["service"], "kind": row["kind"],
            "target": row["target"], "restored": row["from_value"],
            "replaced": row["to_value"], "status": "rolled_back", "rolled_back_at": now,
            "replayed": False,
        }
        by = requested_by.strip()[:200]
        conn.execute(
            "INSERT INTO changes (change_id, service, kind, at, author, target, from_value,"
            " to_value, summary, reverts) VALUES (?, ?, 'rollback', ?, ?, ?, ?, ?, ?, ?)",
            (rid, row["service"], now, by or "muster", row["target"], row["to_value"],
             row["from_value"], f"rollback of {cid}: {row['target']} {row['to_value']} -> "
             f"{row['from_value']}", cid))
        conn.execute(
            "INSERT INTO rollbacks (rollback_id, change_id, idempotency_key, args_digest,"
            " created_at, result_json, requested_by) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (rid, cid, idempotency_key, digest, now, json.dumps(result), by))
        conn.execute("COMMIT")
        return json.dumps(result)
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


if __name__ == "__main__":
    serving()
    run_stdio(mcp)
    # stdin closed (the hub went away, perhaps SIGKILLed): leave at once rather than spend
    # most of a second in interpreter shutdown while the parent is gone. Every protocol
    # message was flushed as it was written; the database connection closed in the lifespan.
    os._exit(0)
