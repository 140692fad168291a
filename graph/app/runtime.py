"""Running a thread: build what a run needs, stream a run, read it back.

`open_services` (graph/app/run_services.py) is the one runtime builder: the approval secret,
the audit log, the hub (every MCP server started) and the `Services` the nodes receive.
`open_runtime` adds the checkpoint store and the compiled graph for the CLI, the batch runner,
the notebook, the benchmarks and the tests; Studio (graph/app/studio.py) uses `open_services`
alone, because the LangGraph server brings its own checkpointer. `stream_run` starts, resumes
or answers a thread, so a run behaves the same from every entry point.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langgraph.errors import GraphDrained
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import RunControl
from langgraph.types import Command, StateSnapshot

from checkpoints.store import CheckpointStore, Saver, checkpoint_store
from checkpoints.threads import thread_config
from graph.app.options import MusterOptions
from graph.app.run_services import open_services
from graph.app.webhooks import run_stopped
from graph.build import build_graph
from graph.limits import RunLimits
from graph.planners import Planner
from graph.services import Services
from graph.trace import TraceWriter, trace_path
from workers.contracts import CHECKPOINTED_TYPES
from workers.models import ModelFactory
from workers.roster import Roster

if TYPE_CHECKING:  # the hub loads the MCP SDK: only a run needs it, not reading a thread
    from workers.hub import ServersConfig

Graph = CompiledStateGraph[Any, Any, Any, Any]
"""A compiled supervisor graph."""

UpdateListener = Callable[[str, dict[str, Any]], Awaitable[None] | None]
"""Receives (node, update) for every node that finishes, for live progress."""


DRAINED_EVENT = "drained"
"""The trace event a run writes when a signal stopped it cleanly (`stream_run`)."""


def stopped_by(thread_id: str) -> str | None:
    """The signal that stopped `thread_id`'s last run cleanly (e.g. `SIGINT`), if its trace
    ends with a drain; None if the trace ends otherwise (a run still going, one that was
    killed, one that finished) or there is none."""
    path = trace_path(thread_id)
    try:
        with path.open("rb") as handle:
            handle.seek(max(0, path.stat().st_size - 4096))
            last = handle.read().decode("utf-8", "replace").strip().splitlines()[-1:]
    except OSError:
        return None
    if not last or f'"event": "{DRAINED_EVENT}"' not in last[0]:
        return None
    try:
        return str(json.loads(last[0]).get("reason") or "a signal")
    except json.JSONDecodeError:
        return None


@cache
def compiled_graph() -> Graph:
    """The supervisor graph, compiled once per process, without a checkpointer: compiling
    costs ~20-35 ms, and the compiled graph holds no per-run state (services come in as the
    run's context), so every runtime and lane shares it through `with_checkpointer`."""
    return build_graph()


def with_checkpointer(graph: Graph, saver: Saver) -> Graph:
    """`graph` bound to `saver`: a shallow copy (~0.1 ms), not a recompile. `Pregel.copy()`
    drops the strict-msgpack allowlist `compile()` recorded, so carry it over, as
    `StudioGraph.copy` does (graph/app/studio.py); a run applies it to `saver` when
    `LANGGRAPH_STRICT_MSGPACK` is on, exactly as for a graph compiled with `saver`."""
    bound = graph.copy(update={"checkpointer": saver})
    # Private, pinned: tests/test_pinned_internals.py.
    bound._serde_allowlist = graph._serde_allowlist
    return bound


@dataclass
class MusterRuntime:
    """Everything a run needs, opened together and closed together."""

    graph: Graph
    """The supervisor graph, compiled with `saver`."""
    saver: Saver
    """The checkpoint saver (SQLite or PostgreSQL)."""
    services: Services
    """The hub, models, roster, planner, limits and audit log every run shares."""
    store: CheckpointStore
    """The checkpoint store: its saver, audit log and per-thread leases."""

    @property
    def db(self) -> Path | str:
        """The checkpoint database: a SQLite file, or a PostgreSQL URL."""
        return self.store.location

    @asynccontextmanager
    async def lanes(self, count: int) -> AsyncIterator[asyncio.Queue[Graph]]:
        """`count` graphs to share out among concurrent threads, each with a saver the store
        gives it (`CheckpointStore.open_lane_savers`).

        SQLite: `AsyncSqliteSaver` serialises every read and write of one connection behind
        one lock; with 16 threads in flight that lock, not SQLite, is the bottleneck (held
        ~50% of the wall time, 6–10 ms waits). SQLite in WAL mode takes concurrent
        connections, so each lane gets a connection of its own. PostgreSQL: every lane shares
        the one pooled saver. The hub's sessions stay shared. Each lane is `self.graph` bound
        to its saver (`with_checkpointer`), not a graph compiled again."""
        async with self.store.open_lane_savers(
            self.saver, count - 1, allowed_types=CHECKPOINTED_TYPES
        ) as savers:
            pool: asyncio.Queue[Graph] = asyncio.Queue()
            pool.put_nowait(self.graph)
            for saver in savers:
                pool.put_nowait(
                    self.graph if saver is self.saver else with_checkpointer(self.graph, saver)
                )
            yield pool

    def for_thread(
        self, thread_id: str, *, run_id: str | None = None, trace_dir: Path | None = None
    ) -> Services:
        """Services for one thread: the shared hub and models, and a trace file of its own."""
        return replace(
            self.services, trace=TraceWriter(thread_id, directory=trace_dir, run_id=run_id)
        )


@asynccontextmanager
async def open_runtime(
    options: MusterOptions | None = None,
    *,
    db: str | Path | None = None,
    servers: ServersConfig | Path | None = None,
    models: ModelFactory | None = None,
    roster: Roster | None = None,
    planner: Planner | None = None,
    limits: RunLimits | None = None,
    must_exist: bool = False,
    servers_on_demand: bool = True,
) -> AsyncIterator[MusterRuntime]:
    """Open the checkpoint store, start the MCP servers, and build the graph.

    The CLI and the batch runner pass the `options` they validated; the notebook, tests and
    benchmarks pass only the parts they set, as keywords (`MusterOptions.resolve` fills in the
    rest). `must_exist`: refuse a checkpoint database that is not there yet (resuming).
    `servers_on_demand`: see `open_services`."""
    parts = (db, servers, models, roster, planner, limits)
    if options is None:
        options = MusterOptions.resolve(
            db=db, servers=servers, models=models, roster=roster, planner=planner, limits=limits
        )
    elif any(part is not None for part in parts):
        raise TypeError("open_runtime: pass either options or its parts, not both")
    store = options.store
    async with (
        store.open_saver(must_exist=must_exist, allowed_types=CHECKPOINTED_TYPES) as saver,
        open_services(options, audit_db=store, servers_on_demand=servers_on_demand) as services,
    ):
        yield MusterRuntime(
            graph=with_checkpointer(compiled_graph(), saver),
            saver=saver,
            services=services,
            store=store,
        )


@asynccontextmanager
async def open_store(
    db: str | Path | CheckpointStore | None = None,
) -> AsyncIterator[tuple[Graph, Saver]]:
    """The graph bound to an existing checkpoint store (a SQLite file, a PostgreSQL URL; see
    `checkpoint_store`), for reading threads: no servers start."""
    store = checkpoint_store(db)
    async with store.open_saver(must_exist=True, allowed_types=CHECKPOINTED_TYPES) as saver:
        yield with_checkpointer(compiled_graph(), saver), saver


async def stream_run(
    runtime: MusterRuntime,
    thread_id: str,
    payload: dict[str, Any] | Command | None,
    *,
    on_update: UpdateListener | None = None,
    services: Services | None = None,
    control: RunControl | None = None,
    graph: Graph | None = None,
) -> dict[str, Any]:
    """Start (`payload` = input), resume (`None`) or answer (`Command`) a thread, streaming
    node updates to `on_update`; returns the thread's state values afterwards.

    The thread's lease (checkpoints/lease.py) is held for the whole run, so no other process
    advances it meanwhile (`ThreadBusyError`); a caller that reads the state first (what an
    approval answers) takes it before that read, with `store.hold_thread`, and this nests."""
    snapshot = await stream_run_snapshot(
        runtime,
        thread_id,
        payload,
        on_update=on_update,
        services=services,
        control=control,
        graph=graph,
    )
    return dict(snapshot.values)


async def stream_run_snapshot(
    runtime: MusterRuntime,
    thread_id: str,
    payload: dict[str, Any] | Command | None,
    *,
    on_update: UpdateListener | None = None,
    services: Services | None = None,
    control: RunControl | None = None,
    graph: Graph | None = None,
) -> StateSnapshot:
    """`stream_run`, returning the thread's whole snapshot afterwards (what is next, its
    interrupts and tasks), for a caller that needs more than the values: reading it again
    would replay the thread's incremental channels a second time."""
    async with runtime.store.hold_thread(thread_id):
        snapshot = await _stream_leased(
            runtime,
            thread_id,
            payload,
            on_update=on_update,
            services=services or runtime.for_thread(thread_id),
            control=control,
            graph=graph,
        )
    assert snapshot is not None  # read back: `read_back` is on
    return snapshot


@dataclass(frozen=True)
class RunOutcome:
    """How a run that returned ended, as its own streamed updates tell (`stream_run_outcome`)."""

    interrupted: bool
    """It stopped at an interrupt (waiting for a human); otherwise it reached its end."""
    answer_status: str | None
    """The status of the answer it wrote, if it wrote one."""

    @property
    def status(self) -> str:
        """The thread's status now, in `status_of`'s words."""
        return "interrupted" if self.interrupted else "done"


async def stream_run_outcome(
    runtime: MusterRuntime,
    thread_id: str,
    payload: dict[str, Any] | Command | None,
    *,
    control: RunControl | None = None,
) -> RunOutcome:
    """`stream_run` for a caller that only needs to know how the run ended (a fleet worker
    logging a job): told by the run's own updates, so the thread is not read back after
    (the read and the replay of its incremental channels were about 2 ms of CPU a ticket,
    in the worker and in PostgreSQL). A run that returns has reached its end or an
    interrupt: a failure or a drain raises, as from `stream_run`."""
    interrupted = False
    answer_status: str | None = None

    def note(node: str, update: dict[str, Any]) -> None:
        nonlocal interrupted, answer_status
        if node == "__interrupt__":
            interrupted = True
        answer = update.get("answer")
        if answer is not None:
            answer_status = getattr(answer, "status", None)

    async with runtime.store.hold_thread(thread_id):
        await _stream_leased(
            runtime,
            thread_id,
            payload,
            on_update=note,
            services=runtime.for_thread(thread_id),
            control=control,
            graph=None,
            read_back=False,
        )
    return RunOutcome(interrupted, answer_status)


async def _stream_leased(
    runtime: MusterRuntime,
    thread_id: str,
    payload: dict[str, Any] | Command | None,
    *,
    on_update: UpdateListener | None,
    services: Services,
    control: RunControl | None,
    graph: Graph | None,
    read_back: bool = True,
) -> StateSnapshot | None:
    config = thread_config(thread_id)
    interrupts: list[Any] = []  # what the run stopped at, for the webhook (graph/app/webhooks.py)
    answer_status: str | None = None
    try:
        async for chunk in (graph or runtime.graph).astream(
            payload,
            config,
            context=services,
            stream_mode="updates",
            # "sync": each superstep's checkpoint is on disk before the next step starts, so
            # a SIGKILL never loses a finished step (an approval, a branch's report).
            durability="sync",
            control=control,
        ):
            for node, update in chunk.items():
                if node == "__interrupt__":
                    interrupts = list(update) if isinstance(update, tuple | list) else [update]
                elif isinstance(update, dict) and update.get("answer") is not None:
                    answer_status = getattr(update["answer"], "status", None)
                if on_update is not None:
                    maybe = on_update(
                        node, update if isinstance(update, dict) else {"value": update}
                    )
                    if maybe is not None:
                        await maybe
    except GraphDrained as drained:
        # The last event of a stopped run: `muster threads` tells "stopped by SIGINT" from
        # a run still going (or killed) by it (`stopped_by`).
        if services.trace is not None:
            services.trace.emit(DRAINED_EVENT, reason=drained.reason)
        raise
    finally:
        if services.trace is not None:
            services.trace.close()
    run_stopped(thread_id, interrupts=interrupts, answer_status=answer_status)  # returns at once
    return await (graph or runtime.graph).aget_state(config) if read_back else None
