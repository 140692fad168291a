"""Shared fixtures: every test gets its own databases, call log and traces under tmp_path.

Real parts only: servers run as stdio subprocesses, orders live in a SQLite file, and the
checkpointer is `AsyncSqliteSaver` on a file. Nothing here mocks them.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from checkpoints.threads import thread_config
from domains.support.rules import plan_ticket
from graph.app.runtime import open_runtime, open_store, stream_run
from graph.limits import RunLimits
from graph.planners import Planner
from tests.fixtures.openai_server import RunningServer, serve_openai
from workers.contracts import Report
from workers.models import ModelFactory

PROJECT_ROOT = Path(__file__).resolve().parent.parent
# Order 12333 was charged twice and the duplicate is already refunded: the full three-worker
# plan, and an answer that needs no approval (order 12345 would pause for its refund).
DEMO_TICKET = "Customer says order #12333 was charged twice. What happened and what can we do?"

HANG_TIMEOUT_S = 300.0
"""The one safety bound for waits in tests: subprocesses to exit, a server to answer, an event
to show up in a file or the store. Tests wait for the event itself, never for a fixed time; this
bound only matters if something hangs, so it is generous enough for a loaded machine."""

T = TypeVar("T")

SHELL_ENV_CLEARED = (
    "MUSTER_ACCOUNTS",  # set, authentication is on (graph/app/serve/accounts.py)
    "MUSTER_TOKEN",  # the CLI's API token when it is on
    "MUSTER_API_TOKENS",  # muster serve's plain tokens file (graph/app/serve/auth.py)
    "MUSTER_APPROVERS",  # who may decide, with which roles (graph/approvers.py)
    "MUSTER_INBOX_APPROVER",  # who an Agent Inbox answer speaks for (graph/agent_inbox.py)
    "MUSTER_APPROVAL_TTL_S",  # how long an approval stays valid (graph/approval.py)
    "MUSTER_SEAL_KEY",  # would win over the test's MUSTER_SEAL_KEY_FILE (graph/action_seal.py)
    "MUSTER_WEBHOOK_URL",  # a developer's receiver would get the tests' threads
    "MUSTER_WEBHOOK_SECRET",
)
"""Who-decides settings a developer's shell may carry: every test starts without them (as in
CI), and a test that wants one sets it itself."""


@pytest.fixture(scope="session", autouse=True)
def _no_shell_auth_session() -> Iterator[None]:
    """Clear `SHELL_ENV_CLEARED` for the whole session, before any module's fixtures run."""
    with pytest.MonkeyPatch.context() as patch:
        for var in SHELL_ENV_CLEARED:
            patch.delenv(var, raising=False)
        yield


@pytest.fixture(autouse=True)
def _no_shell_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    """And again for every test (and the subprocesses it starts), should one have leaked."""
    for var in SHELL_ENV_CLEARED:
        monkeypatch.delenv(var, raising=False)


NOTE = "muster: note:"
"""How a command's notice starts (`muster approve` without $MUSTER_ACCOUNTS says identities
are not checked): not an error line."""


def error_lines(stderr: str) -> list[str]:
    """The non-blank lines of a command's stderr, its notices (`NOTE`) left out."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith(NOTE)]


def wait_until(
    condition: Callable[[], T],
    what: str,
    *,
    proc: subprocess.Popen[Any] | None = None,
    timeout_s: float = HANG_TIMEOUT_S,
) -> T:
    """Poll `condition` until it returns something truthy, and return that. Fails the test if
    `proc` exits first, or if nothing happens within `timeout_s` (a hang)."""
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the process exited (rc={proc.returncode}) before {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"no sign of {what} after {timeout_s:g}s")
        time.sleep(0.02)
    return value


def calls_so_far(call_log: Path, *, server: str, tool: str | None = None) -> int:
    """Calls a server has logged so far, read while servers may still be appending (a line
    being written is not counted yet)."""
    if not call_log.exists():
        return 0
    count = 0
    for line in call_log.read_text(encoding="utf-8").splitlines():
        try:
            call = json.loads(line)
        except json.JSONDecodeError:
            continue
        count += call.get("server") == server and tool in (None, call.get("tool"))
    return count


def saved_branch_workers(db: Path, thread: str) -> set[str]:
    """Workers with a report saved in the thread's checkpoint store, as a reader of the SQLite
    file sees it now: in the latest checkpoint, or as a pending write of the superstep in flight.
    A branch's write lands just after its trace line, so a test that kills a run mid-superstep
    waits for this, not for a grace time."""
    if not db.exists():
        return set()

    async def read() -> set[str]:
        async with open_store(db) as (_, saver):
            saved = await saver.aget_tuple(thread_config(thread))
        if saved is None:
            return set()
        values: list[Any] = [saved.checkpoint["channel_values"].get("reports")]
        values += [v for _, channel, v in saved.pending_writes or [] if channel == "reports"]
        return {
            report.worker
            for value in values
            if isinstance(value, list)
            for report in value
            if isinstance(report, Report)
        }

    return asyncio.run(read())


@dataclass(frozen=True)
class MusterEnv:
    """Paths of one test's run data."""

    root: Path
    orders_db: Path
    call_log: Path
    trace_dir: Path
    checkpoint_db: Path

    def cli(
        self,
        *args: str,
        timeout: float = HANG_TIMEOUT_S,
        extra_env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run the real `muster` CLI in a subprocess with this environment."""
        return subprocess.run(
            [sys.executable, "-m", "graph.app.cli", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=PROJECT_ROOT,
            env={**os.environ, **(extra_env or {})},
        )


@pytest.fixture
def muster_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MusterEnv:
    """Point every server and store at tmp_path (the env is inherited by subprocesses)."""
    env = MusterEnv(
        root=tmp_path,
        orders_db=tmp_path / "orders.sqlite",
        call_log=tmp_path / "calls.jsonl",
        trace_dir=tmp_path / "traces",
        checkpoint_db=tmp_path / "checkpoints.sqlite",
    )
    monkeypatch.setenv("MUSTER_ORDERS_DB", str(env.orders_db))
    monkeypatch.setenv("MUSTER_CALL_LOG", str(env.call_log))
    monkeypatch.setenv("MUSTER_TRACE_DIR", str(env.trace_dir))
    monkeypatch.setenv("MUSTER_DB", str(env.checkpoint_db))
    monkeypatch.setenv("MUSTER_APPROVAL_SECRET", "test-secret-" + tmp_path.name)
    # Seals of proposed actions (graph/action_seal.py): this test's key, not the user's.
    monkeypatch.setenv("MUSTER_SEAL_KEY_FILE", str(tmp_path / "seal.key"))
    monkeypatch.setenv("MUSTER_POLICY_MODE", "healthy")
    return env


def by_worker(reports: list[Report]) -> dict[str, list[Report]]:
    grouped: dict[str, list[Report]] = {}
    for report in reports:
        grouped.setdefault(report.worker, []).append(report)
    return grouped


async def run_ticket(
    env: MusterEnv,
    request: str = DEMO_TICKET,
    *,
    models: ModelFactory | None = None,
    planner: Planner = plan_ticket,
    limits: RunLimits | None = None,
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """One ticket on a new thread; returns the final state and each packet's visible tools."""
    async with open_runtime(
        db=env.checkpoint_db, models=models, planner=planner, limits=limits
    ) as runtime:
        values = await stream_run(runtime, f"t-{uuid.uuid4().hex[:8]}", {"request": request})
        belts = {
            p.recipient: [s.name for s in runtime.services.hub.specs(p.tool_allow)]
            for p in values["packets"]
        }
    return values, belts


# --- PostgreSQL: a fresh database per test session and xdist worker ---------------------------

DEFAULT_TEST_PG = "postgresql://postgres@127.0.0.1:5432/postgres"
"""The server the PostgreSQL tests use unless `MUSTER_TEST_PG` names another (a URL whose
user may create databases)."""


@pytest.fixture
def postgres_url(postgres_database: str) -> str:
    """The session's PostgreSQL database (`postgres_database`), with no action claims left
    by an earlier test: each test has its own orders database, but the claims (one refund of
    an order waits at a time, graph/approval_settled.py) live in this shared one, so a refund of
    order 12345 still pending in an earlier test's thread would hold this test's. Nor any
    circuit an earlier test's broken server opened on the store's breaker board
    (checkpoints/breakers.py): every process on the store would skip that server."""
    import psycopg

    with psycopg.connect(postgres_database, autocommit=True, connect_timeout=10) as conn:
        conn.execute(
            "DO $$ BEGIN IF to_regclass('muster_action_claim') IS NOT NULL"
            " THEN DELETE FROM muster_action_claim; END IF;"
            " IF to_regclass('muster_breakers') IS NOT NULL"
            " THEN DELETE FROM muster_breakers; END IF; END $$"
        )
    return postgres_database


@pytest.fixture(scope="session")
def postgres_database() -> Any:  # yields the URL (a str)
    """The URL of a PostgreSQL database created for this test session (one per xdist worker,
    random name) and dropped afterwards. Unreachable server: the tests fail when
    `MUSTER_REQUIRE_PG` or `CI` is set (.ci/run sets it), else they skip with one line."""
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    from checkpoints.postgres_connect import one_line, redacted

    server = os.environ.get("MUSTER_TEST_PG") or DEFAULT_TEST_PG
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    name = f"muster_test_{worker}_{os.getpid()}_{uuid.uuid4().hex[:8]}"

    def create() -> bool:
        try:
            with psycopg.connect(server, autocommit=True, connect_timeout=10) as admin:
                admin.execute(f'CREATE DATABASE "{name}"')
        except psycopg.errors.ObjectInUse:  # someone is connected to template1 right now
            return False
        return True

    try:
        wait_until(create, f"creating database {name}")
    except psycopg.OperationalError as error:
        why = f"PostgreSQL at {redacted(server)} is unreachable ({one_line(error)})"
        if os.environ.get("MUSTER_REQUIRE_PG") or os.environ.get("CI"):
            pytest.fail(f"{why}; MUSTER_REQUIRE_PG/CI is set, so the PostgreSQL tests must run")
        pytest.skip(f"{why}; set MUSTER_TEST_PG to a server URL to run the PostgreSQL tests")
    try:
        yield urlunsplit(urlsplit(server)._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(server, autocommit=True, connect_timeout=10) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[RunningServer]:
    # Loopback must never go through a proxy a developer machine may have configured.
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(var, "127.0.0.1,localhost")
    for var in ("OPENAI_API_BASE", "OPENAI_ORGANIZATION", "OPENAI_PROJECT"):
        monkeypatch.delenv(var, raising=False)
    with serve_openai(api_key="test") as server:
        yield server
