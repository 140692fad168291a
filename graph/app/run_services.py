"""`open_services`, the one runtime builder: the approval secret, the audit log, the hub (its
MCP servers) and the `Services` the nodes receive, for a run with or without our checkpointer."""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from checkpoints.breakers import breaker_board
from checkpoints.store import CheckpointStore, checkpoint_store
from graph.app.options import MusterOptions
from graph.app.server_logs import limit_server_logs
from graph.services import Services
from workers.model_health import ModelHealth
from workers.redaction import install_log_redaction

if TYPE_CHECKING:  # the hub loads the MCP SDK: only a run needs it, not reading a thread
    from workers.hub import ToolHub


def ensure_approval_secret() -> None:
    """Give this process (and the servers it starts) an approval secret if none is set, so
    approval tokens minted by the graph verify in the orders server it spawned."""
    os.environ.setdefault("MUSTER_APPROVAL_SECRET", secrets.token_hex(32))


SERVER_START_TIMEOUT_S = 15.0
"""How long a server may take to start, unless the run's deadline leaves less."""
TOOL_CALL_TIMEOUT_S = 20.0
"""How long one tool call may take, unless the run's deadline leaves less at start."""


@asynccontextmanager
async def open_services(
    options: MusterOptions,
    *,
    audit_db: str | Path | CheckpointStore,
    servers_on_demand: bool = True,
    sqlite_on_loop: bool = True,
    hub_type: type[ToolHub] | None = None,
) -> AsyncIterator[Services]:
    """Open the audit log in the store `audit_db` (a SQLite file, a PostgreSQL URL) and the
    hub for `options.servers`; on exit, stop every server the hub started, then close the
    audit log.

    `servers_on_demand` (the default): each server starts when a worker that needs it runs,
    so a ticket that never reads the clock never starts the `time` server (each Python MCP
    server costs 1.2-1.5 s of CPU to start, mostly importing the SDK). Otherwise (Studio and
    the fleet's workers, long-lived) every server starts here. A server's start counts against
    the run's deadline: one that has not started when it passes is down. `hub_type`: another
    `ToolHub` (a replay's, which answers from a recording)."""
    from workers.hub import ToolHub

    ensure_approval_secret()  # the orders server started below verifies tokens we mint
    limit_server_logs()
    install_log_redaction()  # every log line of the process, redacted (workers/redaction.py)
    # `sqlite_on_loop`: see `AuditLog.open`; off for Studio's server, which refuses blocking
    # calls on its loop (and has no inline checkpointer or lease of ours to wait on).
    audit = await checkpoint_store(audit_db).open_audit(on_loop=sqlite_on_loop)
    try:
        hub = await (hub_type or ToolHub).connect(
            options.servers,
            start_timeout_s=options.limits.cut(SERVER_START_TIMEOUT_S),
            call_timeout_s=options.limits.cut(TOOL_CALL_TIMEOUT_S),
            on_demand=servers_on_demand,
        )
        # Open circuits, servers' and models', are shared with every process on the store
        # (checkpoints/breakers.py).
        board = hub.backpressure.board = breaker_board(checkpoint_store(audit_db).location)
        try:
            yield Services(
                hub=hub,
                models=options.models,
                roster=options.roster,
                planner=options.planner,
                limits=options.limits,
                audit=audit,
                model_health=ModelHealth(board=board),
            )
        finally:
            await hub.aclose()
            await board.aclose()
    finally:
        await audit.close()  # its worker thread would keep the process alive
