"""Pinned internals (issue 26): every private API of an upstream package Muster relies on,
checked against the exact version it was checked on.

Each use in Muster's code points here. For each one this module asserts what Muster relies
on: the installed version is the one pyproject.toml pins (`==`), the private attribute is
there with the signature Muster calls it with, and the source of upstream code Muster copied
(or whose behaviour it patches around) still hashes to what it was when checked. Any upstream
change fails here, loudly, naming the Muster code to re-check; a new pin then means reading
the new upstream code, adjusting Muster's, and recording the new version and hashes below.
The list, with why no public API does the job, is in docs/operations.md ("Pinned internals").
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import re
import sqlite3
import tomllib
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any, TypedDict

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent

PINS = {
    "langgraph": "1.2.24",
    "langgraph-checkpoint": "4.3.2",
    "langgraph-checkpoint-sqlite": "3.1.2",
    "langgraph-checkpoint-postgres": "3.2.0",
    "aiosqlite": "0.22.1",
    "mcp": "1.30.0",
    "procrastinate": "3.10.0",
    "psycopg-pool": "3.3.3",
}
"""Each package whose private API Muster uses, and the version it was checked on."""

RECORDED = {
    "langgraph.checkpoint.postgres.aio.AsyncPostgresSaver.aput": (
        "c685c7a8c88b7431eea041e93c32a48238d2797bf761df001f9c64c3c3ec49d0"
    ),
    "langgraph.checkpoint.postgres.aio.AsyncPostgresSaver.aput_writes": (
        "a2970ab04a7d7d5d93e137bc294fbe4602dca925537fbc3187e4bd0f40f1835f"
    ),
    "langgraph.checkpoint.postgres.aio.AsyncPostgresSaver.__init__": (
        "bb718c00f468c3ca5c842e1e6a253a03f15b3d1dfa987c6cf98181f587e4991a"
    ),
    "langgraph.checkpoint.postgres.aio.AsyncPostgresSaver._cursor": (
        "217e0ac4b09b8778932a99010dabf9f3add7b103e06c39b23606d52523a25bc3"
    ),
    "langgraph.checkpoint.serde.types._DeltaSnapshot": (
        "fdd2bd492fb148d48aba9eea8419387d65bc615479b5d4938db2e081845862e2"
    ),
    "aiosqlite.core.Connection": (
        "648644bef40ab600edf63b2cf3a5e907f7bbef06f8378a50d12d0a72d82497ee"
    ),
    "aiosqlite.cursor.Cursor": (
        "8399bf7a6c292516854b6e2f0f8f49e5414370fbde694c4721643e0a7a232306"
    ),
    "langgraph.checkpoint.sqlite.aio._build_conn_started_check": (
        "78790fddfc31f9f693b8675105308efc6783b9b3bd849d70c0c7e31086b15df3"
    ),
    "langgraph.checkpoint.sqlite.aio._ensure_connected": (
        "c46bf76994afcbb9663595cc135bfbbc1c14b64bddeb250742c766164e836abf"
    ),
    "langgraph.pregel.main.Pregel.copy": (
        "7d94ed8575ded45df91174ac39930593d916d2feeed93ff8f39c441d9240133b"
    ),
    "langgraph.pregel.main.Pregel._apply_checkpointer_allowlist": (
        "9187c2d30d276139fe0954633a72119e934892cca728e640a787ab3031ed804f"
    ),
    "mcp.client.stdio._create_platform_compatible_process": (
        "b99dde13cec519719496561c32fe04ea08a66e33c35ef96ada2328232c1823b0"
    ),
    "mcp.server.fastmcp.server.FastMCP.run_stdio_async": (
        "89c43cb41714e9cc2f246522144517b1f5a229acc8e022f1efdad44b98b71ac6"
    ),
    "procrastinate.worker.Worker._start_side_tasks": (
        "2623df64cb23ce264ccafa10124fd232f3f6997572744e7f180d55dc28bb6abe"
    ),
    "procrastinate.worker.Worker._run_loop": (
        "c92ccad5fa07f7a1dfd89ea0dd96fb41cebc7fe39f9d538d4ea28a97a735ec7c"
    ),
    "procrastinate.worker.Worker._fetch_and_process_jobs": (
        "2963aa354dfda4d6bc639d907cbabb23c69d1381382b2560fb7735b0429117cb"
    ),
    "procrastinate.worker.Worker._update_heartbeat": (
        "a45b4b3b030e082771389dcaea574bd5c49fff793feeb4cf7171bb332f3ea309"
    ),
    "procrastinate.worker.Worker._persist_job_status": (
        "821921c86130d1517f51144cd8cb839b7d9426dd98832bebe885b9efc0b5d005"
    ),
    "psycopg_pool.pool_async.AsyncConnectionPool._add_connection": (
        "9e6e6b04f2b0984b8c098989f07eeea858522be1e5225b3f4627040443752085"
    ),
    "psycopg_pool.base.AttemptWithBackoff": (
        "a8dd4e8928ad02040101c57656cb4a5f623cd07ffbd32def8ad524413ce1e938"
    ),
}
"""sha256 of `inspect.getsource` of each upstream object Muster copied or builds on, at the
pinned versions above: read against Muster's code when recorded."""


def _digest(obj: Any) -> str:
    return hashlib.sha256(inspect.getsource(obj).encode()).hexdigest()


def assert_unchanged(obj: Any, *, where: str) -> None:
    """`obj`'s upstream source still hashes to its sha256 in `RECORDED`, taken when it was
    checked."""
    name = f"{obj.__module__}.{obj.__qualname__}"
    assert _digest(obj) == RECORDED[name], f"upstream {name} changed: re-check the copy in {where}"


def assert_signature(obj: Callable[..., Any], expected: str, *, where: str) -> None:
    name = f"{obj.__module__}.{obj.__qualname__}"
    found = str(inspect.signature(obj))
    assert found == expected, (
        f"upstream {name} has signature {found}, not {expected}: re-check {where}"
    )


# --- versions ---------------------------------------------------------------------------------


def _pyproject_requirements() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = [Requirement(line) for line in project["dependencies"]]
    return {r.name.lower(): r for r in requirements}


@pytest.mark.parametrize("package", sorted(PINS))
def test_the_package_is_pinned_to_the_version_its_internals_were_checked_on(package: str) -> None:
    requirement = _pyproject_requirements().get(package)
    assert requirement is not None, f"pyproject.toml does not pin {package}"
    assert str(requirement.specifier) == f"=={PINS[package]}", (
        f"pyproject.toml has {package}{requirement.specifier}, not =={PINS[package]}: "
        "its private API is checked on that version only (tests/test_pinned_internals.py)"
    )
    installed = version(package)
    assert installed == PINS[package], (
        f"{package} {installed} is installed, but its internals were checked on "
        f"{PINS[package]}: re-check every use listed in docs/operations.md (Pinned internals), "
        "then update the pin, this module's hashes and the list"
    )


def test_the_installed_packages_satisfy_every_dependency_of_pyproject() -> None:
    """What a fresh `pip install -e .` resolves is what this venv runs: no pin conflicts."""
    unmet = [
        f"{name}{r.specifier} (installed {version(name)})"
        for name, r in _pyproject_requirements().items()
        if not r.specifier.contains(version(name), prereleases=True)
    ]
    assert not unmet, f"installed versions outside pyproject.toml's: {unmet}"


# --- langgraph-checkpoint-postgres: the saver's `aput`/`aput_writes` (copied) and its lock ------


def test_the_postgres_saver_writes_muster_copied_are_upstreams() -> None:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    where = "checkpoints/postgres.py (_GroupCommitWrites.aput / aput_writes)"
    assert_unchanged(AsyncPostgresSaver.aput, where=where)
    assert_unchanged(AsyncPostgresSaver.aput_writes, where=where)
    assert_signature(
        AsyncPostgresSaver._dump_blobs,
        "(self, thread_id: 'str', checkpoint_ns: 'str', values: 'dict[str, Any]', "
        "versions: 'ChannelVersions') -> 'list[tuple[str, str, str, str, str, bytes | None]]'",
        where=where,
    )
    assert_signature(
        AsyncPostgresSaver._dump_writes,
        "(self, thread_id: 'str', checkpoint_ns: 'str', checkpoint_id: 'str', task_id: 'str', "
        "task_path: 'str', writes: 'Sequence[tuple[str, Any]]') "
        "-> 'list[tuple[str, str, str, str, str, int, str, str, bytes]]'",
        where=where,
    )
    for sql in (
        "UPSERT_CHECKPOINT_BLOBS_SQL",
        "UPSERT_CHECKPOINTS_SQL",
        "UPSERT_CHECKPOINT_WRITES_SQL",
        "INSERT_CHECKPOINT_WRITES_SQL",
    ):
        assert isinstance(getattr(AsyncPostgresSaver, sql, None), str), (
            f"upstream AsyncPostgresSaver.{sql} is gone: re-check {where}"
        )


def test_the_postgres_saver_serialises_its_queries_on_the_lock_muster_replaces() -> None:
    """`MusterPostgresSaver` replaces `self.lock` (an `asyncio.Lock` `__init__` makes) by a
    semaphore the size of the pool; `_cursor` is where every query enters it."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    where = "checkpoints/postgres.py (MusterPostgresSaver.__init__, athread_ids)"
    assert AsyncPostgresSaver.__annotations__.get("lock") in ("asyncio.Lock", asyncio.Lock), where
    assert_unchanged(AsyncPostgresSaver.__init__, where=where)
    assert_unchanged(inspect.unwrap(AsyncPostgresSaver._cursor), where=where)


def test_a_delta_channels_snapshot_is_upstreams_private_named_tuple() -> None:
    """`_DeltaSnapshot` marks a DeltaChannel's snapshot in a checkpoint's values: the copied
    `aput` stores it as a blob, as upstream's does (it imports the same class)."""
    from langgraph.checkpoint.postgres import aio
    from langgraph.checkpoint.serde.types import _DeltaSnapshot

    where = "checkpoints/postgres.py (_GroupCommitWrites.aput)"
    assert aio._DeltaSnapshot is _DeltaSnapshot, f"upstream's aput no longer uses it: {where}"
    assert issubclass(_DeltaSnapshot, tuple), where
    assert_unchanged(_DeltaSnapshot, where=where)


# --- aiosqlite: the worker thread `InlineConnection` never starts --------------------------------


def test_aiosqlite_runs_every_call_through_the_execute_inline_connection_replaces() -> None:
    """`InlineConnection` overrides `_execute` (every call of a connection and its cursors
    goes through it), `_connect` and `__await__` (which start the worker thread), and reads
    `_running`, `_connection` and `_connector`; the whole class is checked, as a new method
    that bypassed `_execute` would run on a thread that never starts."""
    import aiosqlite
    from aiosqlite.core import Connection
    from aiosqlite.cursor import Cursor

    where = "checkpoints/inline_sqlite.py (InlineConnection)"
    assert aiosqlite.Connection is Connection
    assert_unchanged(Connection, where=where)
    assert_unchanged(Cursor, where=where)


def test_the_sqlite_saver_awaits_a_connection_whose_worker_thread_is_not_alive() -> None:
    """LangGraph's SQLite saver awaits its connection before use when aiosqlite's `_thread`
    is not alive (or `is_alive()`, once aiosqlite has one, says so); `InlineConnection`'s
    thread never starts, and awaiting it is a no-op once connected."""
    import aiosqlite
    from langgraph.checkpoint.sqlite import aio

    where = "checkpoints/inline_sqlite.py (InlineConnection)"
    assert not hasattr(aiosqlite.Connection, "is_alive"), (
        f"aiosqlite.Connection has is_alive(), which the saver asks instead: re-check {where}"
    )
    assert_unchanged(aio._build_conn_started_check, where=where)
    assert_unchanged(aio._ensure_connected, where=where)


# --- the savers' tables, read by Muster's own SQL ------------------------------------------------


async def test_the_sqlite_savers_tables_have_the_columns_muster_reads(tmp_path: Path) -> None:
    """checkpoints/threads.py (`thread_ids`) and graph/app/serve/thread_index.py read the
    saver's `checkpoints` and `writes` tables (thread_id, checkpoint_ns, checkpoint_id,
    rowid): no public call lists a store's threads."""
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    db = tmp_path / "c.sqlite"
    async with aiosqlite.connect(db) as conn:
        await AsyncSqliteSaver(conn).setup()
    with sqlite3.connect(db) as plain:
        for table in ("checkpoints", "writes"):
            columns = {row[1] for row in plain.execute(f"PRAGMA table_info({table})")}
            assert {"thread_id", "checkpoint_ns", "checkpoint_id"} <= columns, (
                f"upstream's SQLite table {table} changed ({sorted(columns)}): re-check "
                "checkpoints/threads.py and graph/app/serve/thread_index.py"
            )
    plain.close()


def test_the_postgres_savers_checkpoints_table_has_the_columns_muster_reads() -> None:
    """`MusterPostgresSaver.athread_ids` reads the saver's `checkpoints` table."""
    from langgraph.checkpoint.postgres.base import BasePostgresSaver

    created = "\n".join(BasePostgresSaver.MIGRATIONS)
    table = re.search(r"CREATE TABLE IF NOT EXISTS checkpoints \((.*?)\);", created, re.S)
    assert table is not None, "upstream's Postgres checkpoints table: re-check athread_ids"
    for column in ("thread_id", "checkpoint_ns", "checkpoint_id"):
        assert re.search(rf"\b{column}\b", table.group(1)), (
            f"upstream's Postgres checkpoints table has no {column}: re-check "
            "checkpoints/postgres.py (MusterPostgresSaver.athread_ids)"
        )


# --- langgraph: a compiled graph's `_serde_allowlist`, `Pregel.copy`, the checkpointer key ------


def _tiny_graph() -> Any:
    from langgraph.graph import END, START, StateGraph

    class State(TypedDict):
        n: int

    builder = StateGraph(State)
    builder.add_node("one", lambda state: {"n": state["n"] + 1})
    builder.add_edge(START, "one")
    builder.add_edge("one", END)
    return builder


def test_a_compiled_graphs_allowlist_is_dropped_by_copy_and_read_when_it_runs() -> None:
    """graph/app/runtime.py (`with_checkpointer`) and graph/app/studio.py (`StudioGraph`)
    carry `_serde_allowlist` over `copy()`, which drops it (it makes a new graph from
    `__dict__`, and `__init__` resets it); `studio_graph` does what `copy()` does."""
    from langgraph.graph.state import StateGraph
    from langgraph.pregel.main import Pregel

    where = "graph/app/runtime.py (with_checkpointer) and graph/app/studio.py"
    compiled = _tiny_graph().compile()
    assert hasattr(compiled, "_serde_allowlist"), f"compile() records no allowlist: {where}"
    compiled._serde_allowlist = {("tests", "Allowed")}
    assert compiled.copy()._serde_allowlist is None, (
        f"upstream Pregel.copy() now keeps _serde_allowlist: the carry-over in {where} may go"
    )
    assert "compiled._serde_allowlist = serde_allowlist" in inspect.getsource(
        StateGraph.compile
    ), f"upstream StateGraph.compile no longer records _serde_allowlist: re-check {where}"
    assert_unchanged(Pregel.copy, where=where)
    assert_unchanged(Pregel._apply_checkpointer_allowlist, where=where)


def test_a_node_finds_the_graphs_checkpointer_under_config_key_checkpointer() -> None:
    """graph/dispatch.py reads the running graph's saver from the node's config under the
    private `CONFIG_KEY_CHECKPOINTER` (re-exported by `langgraph.constants` "for backwards
    compatibility" until v2): the saver's mix-in announces a task's saved writes."""
    import warnings

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.config import get_config

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # it must import without a deprecation warning
        from langgraph.constants import CONFIG_KEY_CHECKPOINTER

    where = "graph/dispatch.py"
    assert CONFIG_KEY_CHECKPOINTER == "__pregel_checkpointer", where
    seen: list[Any] = []

    def look(state: dict[str, int]) -> dict[str, int]:
        seen.append(get_config()["configurable"].get(CONFIG_KEY_CHECKPOINTER))
        return {"n": state["n"]}

    builder = _tiny_graph()
    builder.add_node("look", look)
    builder.add_edge("one", "look")
    saver = InMemorySaver()
    builder.compile(checkpointer=saver).invoke({"n": 0}, {"configurable": {"thread_id": "t"}})
    assert seen == [saver], f"a node no longer sees the checkpointer there: re-check {where}"


# --- mcp: the stdio spawn hook, FastMCP's low-level server, the HTTP defaults ------------------


def test_the_sdks_stdio_client_spawns_through_the_function_the_hub_patches() -> None:
    """workers/hub/transports.py replaces `_create_platform_compatible_process` (to get the
    process and route its stderr), passes `errlog` by keyword, and shortens the SDK's log
    record for a non-protocol line, found by its text."""
    import mcp.client.stdio as mcp_stdio

    from workers.hub import transports

    where = "workers/hub/transports.py (install, _capturing_create, _OneLineTransportErrors)"
    spawn = mcp_stdio._create_platform_compatible_process
    if spawn is transports._capturing_create:  # a hub in this process already installed it
        spawn = transports._original_create
    parameters = inspect.signature(spawn).parameters
    assert list(parameters) == ["command", "args", "env", "errlog", "cwd"], (
        f"upstream {spawn.__qualname__} takes {list(parameters)}: re-check {where}"
    )
    assert_unchanged(spawn, where=where)
    client = inspect.getsource(mcp_stdio.stdio_client)
    assert "await _create_platform_compatible_process(" in client, where
    assert "errlog=errlog" in client, where
    assert "Failed to parse JSONRPC message" in client, where


def test_the_http_client_defaults_the_hub_copied_are_the_sdks() -> None:
    from mcp.shared import _httpx_utils

    from workers.hub.transports import _HTTP_TIMEOUT

    where = "workers/hub/transports.py (_HTTP_TIMEOUT)"
    assert _HTTP_TIMEOUT.connect == _httpx_utils.MCP_DEFAULT_TIMEOUT, where
    assert _HTTP_TIMEOUT.read == _httpx_utils.MCP_DEFAULT_SSE_READ_TIMEOUT, where


def test_fastmcps_stdio_run_is_what_muster_runs_on_its_own_streams() -> None:
    """servers/stdio_pipes.py runs `FastMCP.run_stdio_async`'s body on asyncio pipes: the
    low-level server is `FastMCP._mcp_server` (no public accessor)."""
    from mcp.server.fastmcp import FastMCP
    from mcp.server.lowlevel import Server

    where = "servers/stdio_pipes.py (_serve)"
    server = FastMCP("pinned")._mcp_server
    assert isinstance(server, Server), where
    assert callable(server.run) and callable(server.create_initialization_options), where
    assert_unchanged(FastMCP.run_stdio_async, where=where)


# --- procrastinate: the worker's loop, side tasks and state --------------------------------------


def test_the_procrastinate_worker_internals_muster_worker_builds_on() -> None:
    """graph/app/fleet_procrastinate.py: `MusterWorker` overrides `_fetch_and_process_jobs`,
    `_update_heartbeat`, `_persist_job_status` and `_start_side_tasks` (a copy, with its own
    listener), and reads `_running_jobs`, `_stop_event`, `_new_job_event`."""
    from procrastinate import App
    from procrastinate.testing import InMemoryConnector
    from procrastinate.worker import Worker

    where = "graph/app/fleet_procrastinate.py (MusterWorker)"
    assert not hasattr(Worker, "_listen"), f"upstream Worker has a _listen: rename ours ({where})"
    for method in (
        "_start_side_tasks",
        "_run_loop",
        "_fetch_and_process_jobs",
        "_update_heartbeat",
        "_persist_job_status",
    ):
        assert_unchanged(getattr(Worker, method), where=where)
    assert_signature(
        Worker._handle_notification, "(self, *, channel: 'str', notification: 'jobs.Notification')",
        where=where,
    )
    for method in ("_periodic_deferrer", "_poll_jobs_to_abort"):
        assert inspect.iscoroutinefunction(getattr(Worker, method)), f"{method}: {where}"
        assert_signature(getattr(Worker, method), "(self)", where=where)

    worker = Worker(App(connector=InMemoryConnector()))
    assert worker._running_jobs == {}, where
    assert isinstance(worker._stop_event, asyncio.Event), where
    assert isinstance(worker._new_job_event, asyncio.Event), where


def test_procrastinates_tables_have_the_columns_muster_queries() -> None:
    """graph/app/fleet_queue.py and graph/app/fleet_sweep.py query Procrastinate's tables."""
    import procrastinate

    schema = (Path(procrastinate.__file__).parent / "sql" / "schema.sql").read_text()
    for table, columns in {
        "procrastinate_jobs": ("id", "queue_name", "task_name", "lock", "status", "attempts",
                               "worker_id"),
        "procrastinate_workers": ("id", "last_heartbeat"),
    }.items():  # fmt: skip
        found = re.search(rf"CREATE TABLE {table}\s*\((.*?)\n\);", schema, re.S)
        assert found is not None, f"upstream's {table}: re-check fleet_queue.py, fleet_sweep.py"
        names = {line.split()[0] for line in found.group(1).strip().splitlines()}
        missing = set(columns) - names
        assert not missing, f"upstream's {table} has no {missing}: re-check fleet_queue/sweep"


# --- psycopg_pool: the reconnect backoff -------------------------------------------------------


def test_the_pool_reconnects_with_the_backoff_muster_pool_caps() -> None:
    """checkpoints/postgres_connect.py: `MusterPool._add_connection` hands psycopg_pool's
    private `_add_connection` a `CappedBackoff` (a subclass of `AttemptWithBackoff`, with a
    lower `INITIAL_DELAY` and a ceiling on `delay`) where it would make its own."""
    from psycopg_pool import AsyncConnectionPool
    from psycopg_pool.base import AttemptWithBackoff

    where = "checkpoints/postgres_connect.py (CappedBackoff, MusterPool)"
    assert_signature(
        AsyncConnectionPool._add_connection,
        "(self, attempt: 'AttemptWithBackoff | None', growing: 'bool' = False) -> 'None'",
        where=where,
    )
    assert_unchanged(AsyncConnectionPool._add_connection, where=where)
    assert_unchanged(AttemptWithBackoff, where=where)


# --- not pinned: documented hooks, and the standard library -------------------------------------


def test_the_chat_model_hooks_muster_implements_are_langchains_documented_ones() -> None:
    """Muster's chat models (workers/local_models.py, graph/app/replay_record.py) implement
    `_generate`, `_agenerate` and `_llm_type`, the hooks LangChain documents for a custom
    chat model, and workers/models.py reads `_llm_type` (falling back to the class name).
    Documented, so langchain-core is not pinned; this still fails if they change."""
    from langchain_core.language_models import BaseChatModel

    where = "workers/local_models.py, graph/app/replay_record.py, workers/models.py"
    assert "_generate" in BaseChatModel.__abstractmethods__, where
    assert "_llm_type" in BaseChatModel.__abstractmethods__, where
    assert isinstance(inspect.getattr_static(BaseChatModel, "_llm_type"), property), where
    hooks = "(self, messages: 'list[BaseMessage]', stop: 'list[str] | None' = None, "
    assert_signature(
        BaseChatModel._generate,
        hooks + "run_manager: 'CallbackManagerForLLMRun | None' = None, **kwargs: 'Any') "
        "-> 'ChatResult'",
        where=where,
    )
    assert_signature(
        BaseChatModel._agenerate,
        hooks + "run_manager: 'AsyncCallbackManagerForLLMRun | None' = None, "
        "**kwargs: 'Any') -> 'ChatResult'",
        where=where,
    )


def test_the_regular_expression_parser_the_phrase_gate_reads() -> None:
    """domains/support/phrase_gate.py reads patterns' parse trees with the standard library's
    private `re._parser` (its fallback: a phrase it cannot read is left ungated, so a change
    costs speed, never a match). Tied to the Python version, not to a package pin."""
    import re._constants as sre
    import re._parser as sre_parse

    where = "domains/support/phrase_gate.py"
    tree = list(sre_parse.parse(r"(ab|c)[d-e]\d\s+x*?(?!y)\b"))
    opcodes = {op for op, _ in tree}
    assert {sre.SUBPATTERN, sre.IN, sre.MAX_REPEAT, sre.MIN_REPEAT, sre.ASSERT_NOT, sre.AT} <= (
        opcodes
    ), f"re._parser's tree changed ({opcodes}): re-check {where}"
    for name in ("ASSERT", "BRANCH", "CATEGORY", "CATEGORY_DIGIT", "CATEGORY_SPACE", "LITERAL",
                 "POSSESSIVE_REPEAT", "RANGE"):  # fmt: skip
        assert hasattr(sre, name), f"re._constants.{name} is gone: re-check {where}"
