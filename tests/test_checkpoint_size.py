"""Small checkpoints: a checkpoint stores what a step changed, not everything so far.

The growing lists (`reports`, `recoveries`, `actions`) and the plan (`packets`) are LangGraph
`DeltaChannel`s (graph/state.py): no checkpoint row repeats them, and every read (the latest
state, time travel through the history) rebuilds them from the saved writes. Blobs are
zlib-compressed through LangGraph's `EncryptedSerializer` (checkpoints/compression.py) with the
strict msgpack allowlist intact. The bound is issue 15's: at most 4 KB of checkpoint store per
packet of a fan-out (it was about 15 KB). A size, not a timing.
"""

from __future__ import annotations

import operator
import sqlite3
import uuid
import zlib
from pathlib import Path
from typing import Annotated, Any, TypedDict

import aiosqlite
import pytest
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import _with_msgpack_allowlist
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel

from checkpoints.compression import ZlibCipher
from checkpoints.saver import strict_serializer
from checkpoints.serde import compressed
from checkpoints.threads import thread_config
from graph.app.runtime import open_runtime, open_store, stream_run
from graph.limits import RunLimits
from graph.state import concat
from tests.conftest import MusterEnv
from workers.contracts import CHECKPOINTED_TYPES, Handoff, Report
from workers.models import offline_factory
from workers.roster import Roster

FANOUT = 40
"""Packets in the fan-out: enough that per-packet bytes are not dominated by fixed costs."""
BYTES_PER_PACKET = 4096
"""Issue 15's bound on checkpoint store bytes (checkpoints, metadata and writes) per packet."""


def fanout_plan(request: str, roster: Roster) -> list[Handoff]:
    """FANOUT comms packets, each searching the knowledge base for its own query."""
    return [
        Handoff(
            id=f"comms-{i}",
            recipient="comms",
            objective="Find the knowledge-base articles that answer the customer.",
            inputs={"query": f"refund timing case {i}"},
            tool_allow=("kb.",),
            max_steps=3,
        )
        for i in range(1, FANOUT + 1)
    ]


async def run_fanout(env: MusterEnv) -> tuple[str, dict[str, Any]]:
    thread = f"fan-{uuid.uuid4().hex[:8]}"
    async with open_runtime(
        db=env.checkpoint_db,
        models=offline_factory(),
        planner=fanout_plan,
        limits=RunLimits(max_steps=10_000, max_tokens=10**9),
    ) as runtime:
        values = await stream_run(runtime, thread, {"request": "fan out"})
    return thread, values


def stored_rows(db: Path, thread: str) -> tuple[list[tuple[str, bytes, bytes]], list[bytes]]:
    """(checkpoint rows as (type, checkpoint, metadata), write values) of one thread."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT type, checkpoint, metadata FROM checkpoints WHERE thread_id = ?", (thread,)
        ).fetchall()
        writes = [
            v for (v,) in conn.execute("SELECT value FROM writes WHERE thread_id = ?", (thread,))
        ]
    conn.close()
    return rows, writes


@pytest.mark.integration
async def test_fanout_checkpoints_hold_no_reports_yet_every_read_has_them(
    muster_env: MusterEnv,
) -> None:
    thread, values = await run_fanout(muster_env)
    assert [r.status for r in values["reports"]] == ["ok"] * FANOUT
    serde = strict_serializer(CHECKPOINTED_TYPES)
    rows, _ = stored_rows(muster_env.checkpoint_db, thread)
    assert len(rows) >= 5
    for type_tag, blob, _ in rows:
        stored = serde.loads_typed((type_tag, blob))["channel_values"]
        # A DeltaChannel stores a value only as a periodic snapshot (every 100 updates).
        assert not {"reports", "packets", "recoveries", "actions"} & stored.keys()

    async with open_store(muster_env.checkpoint_db) as (graph, _):
        latest = (await graph.aget_state(thread_config(thread))).values
        history = [s async for s in graph.aget_state_history(thread_config(thread))]
    assert latest["reports"] == values["reports"]
    assert sorted(r.packet_id for r in latest["reports"]) == sorted(
        f"comms-{i}" for i in range(1, FANOUT + 1)
    )
    assert [p.id for p in latest["packets"]] == [f"comms-{i}" for i in range(1, FANOUT + 1)]
    assert latest["recoveries"] == [] and latest["actions"] == []
    # Time travel: every checkpoint's reports are rebuilt, growing from none to all of them.
    counts = [len(s.values.get("reports") or []) for s in reversed(history)]
    assert counts == sorted(counts) and counts[0] == 0 and counts[-1] == FANOUT
    # The answer was written from the live state; the rebuilt list has the same order.
    cited = list(dict.fromkeys(line.split("/")[0].strip("[") for line in latest["answer"].evidence))
    assert cited == [r.packet_id for r in latest["reports"] if r.findings]


@pytest.mark.integration
async def test_fanout_stores_at_most_4kb_per_packet(muster_env: MusterEnv) -> None:
    thread, _ = await run_fanout(muster_env)
    rows, writes = stored_rows(muster_env.checkpoint_db, thread)
    total = sum(len(blob) + len(meta) for _, blob, meta in rows) + sum(map(len, writes))
    assert total / FANOUT <= BYTES_PER_PACKET, f"{total / FANOUT:.0f} bytes per packet"
    assert all(type_tag.endswith(("+zlib", "+raw")) for type_tag, _, _ in rows)


def test_compressed_serializer_round_trips_and_stays_strict(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store_serde: SerializerProtocol = strict_serializer(CHECKPOINTED_TYPES)
    serde = store_serde if isinstance(store_serde, EncryptedSerializer) else compressed(store_serde)
    report = Report(packet_id="p-1", worker="comms", objective="o", status="ok", note="x" * 500)
    type_tag, blob = serde.dumps_typed(_DeltaSnapshot([report]))
    assert type_tag == "msgpack+zlib" and len(blob) < 300
    assert serde.loads_typed((type_tag, blob)) == _DeltaSnapshot([report])
    assert serde.loads_typed(serde.dumps_typed(None)) is None
    # A blob written before compression (no `+` suffix) still loads.
    assert serde.loads_typed(serde.serde.dumps_typed([report])) == [report]

    class NotAllowed(BaseModel):
        x: int = 1

    assert not isinstance(serde.loads_typed(serde.dumps_typed(NotAllowed())), NotAllowed)
    assert "Blocked deserialization" in caplog.text
    # LangGraph's own allowlist plumbing sees through the wrapper (a custom class would not).
    widened = _with_msgpack_allowlist(serde, [("tests", "Extra")])
    assert isinstance(widened, EncryptedSerializer)
    assert isinstance(widened.serde, JsonPlusSerializer)
    with pytest.raises(ValueError, match="only zlib and raw"):
        ZlibCipher().decrypt("aes", zlib.compress(b"x"))


def test_concat_is_operator_add_folded_and_batching_invariant() -> None:
    a, b, c = [1], [2, 3], [4]
    assert concat([0], [a, b, c]) == [0, 1, 2, 3, 4]
    assert concat(concat([0], [a]), [b, c]) == concat([0], [a, b, c])
    with pytest.raises(TypeError):
        concat([0], [(1,)])  # type: ignore[list-item]  # operator.add refuses it too


class OldState(TypedDict, total=False):
    reports: Annotated[list[str], operator.add]


class NewState(TypedDict, total=False):
    reports: Annotated[list[str], DeltaChannel(concat)]


def _two_step_graph(state: type[Any], saver: AsyncSqliteSaver) -> Any:
    builder = StateGraph(state)
    builder.add_node("first", lambda s: {"reports": ["a"]})
    builder.add_node("second", lambda s: {"reports": ["b"]})
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", END)
    return builder.compile(checkpointer=saver, interrupt_before=["second"])


async def test_threads_written_before_the_change_still_load_and_resume(tmp_path: Path) -> None:
    """A thread saved with `operator.add` lists (a run paused for approval before this
    change) reads and resumes under the `DeltaChannel` state."""
    config = thread_config("old")
    async with aiosqlite.connect(str(tmp_path / "old.sqlite")) as conn:
        saver = AsyncSqliteSaver(conn, serde=strict_serializer(CHECKPOINTED_TYPES))
        await _two_step_graph(OldState, saver).ainvoke({"reports": ["start"]}, config)
        new = _two_step_graph(NewState, saver)
        assert (await new.aget_state(config)).values["reports"] == ["start", "a"]
        assert (await new.ainvoke(None, config))["reports"] == ["start", "a", "b"]
        assert (await new.aget_state(config)).values["reports"] == ["start", "a", "b"]
