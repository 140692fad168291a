"""A worker is reported finished in the trace only once its report is in the store.

The store's write of one branch is held back here (a saver whose `aput_writes` waits on an
event for the billing branch): while it is held, the trace must not say billing finished;
once it lands, the line follows. A process killed in between has said nothing it cannot keep,
so a resume that runs billing again contradicts no trace line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import aiosqlite
import pytest
from langchain_core.runnables import RunnableConfig

from checkpoints.saver import MusterSqliteSaver, strict_serializer
from graph.app.runtime import open_runtime, stream_run, with_checkpointer
from graph.trace import read_trace, trace_path
from tests.conftest import DEMO_TICKET, HANG_TIMEOUT_S, MusterEnv
from workers.contracts import CHECKPOINTED_TYPES, Report

pytestmark = [pytest.mark.integration]


class HeldBillingWrites(MusterSqliteSaver):
    """Holds the billing branch's report write until `release` is set."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.held = asyncio.Event()
        self.release = asyncio.Event()

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        if any(
            channel == "reports"
            and any(isinstance(r, Report) and r.worker == "billing" for r in value)
            for channel, value in writes
        ):
            self.held.set()
            await self.release.wait()
        await super().aput_writes(config, writes, task_id, task_path)


def dispatch_lines(env: MusterEnv, thread: str, worker: str) -> list[dict[str, Any]]:
    return [
        e
        for e in read_trace(trace_path(thread, env.trace_dir))
        if e.get("node") == "dispatch" and e.get("worker") == worker and e.get("outcome")
    ]


async def test_the_trace_says_finished_only_after_the_report_is_saved(
    muster_env: MusterEnv,
) -> None:
    thread = "announce-after-save"
    async with (
        open_runtime(db=muster_env.checkpoint_db) as runtime,
        aiosqlite.connect(str(muster_env.checkpoint_db), timeout=30) as conn,
    ):
        saver = HeldBillingWrites(conn, serde=strict_serializer(CHECKPOINTED_TYPES))
        graph = with_checkpointer(runtime.graph, saver)
        run = asyncio.create_task(
            stream_run(runtime, thread, {"request": DEMO_TICKET}, graph=graph)
        )
        async with asyncio.timeout(HANG_TIMEOUT_S):
            await saver.held.wait()
        # billing's worker is done and its write is on its way, not in the store yet.
        assert dispatch_lines(muster_env, thread, "billing") == []
        saver.release.set()
        async with asyncio.timeout(HANG_TIMEOUT_S):
            values = await run
    (line,) = dispatch_lines(muster_env, thread, "billing")
    assert line["outcome"] == "ok"
    assert values["answer"].status == "complete"
