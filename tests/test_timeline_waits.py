"""The human waits of a timeline (graph/app/timeline_waits.py), found from a thread's
checkpoints and trace, and drawn as breaks (issue 27, item 3).

A checkpoint whose tasks hold interrupts is where the thread paused; the trace says when
the paused run stopped and when the resumed one began. Built by hand first, as an older
trace wrote it (supervisor nodes without their own duration), where the resumed recover
node used to be guessed to start at the checkpoint before the pause: a 4.2 s bar for a
human's wait. Then end to end, on a real clarification.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from langgraph.types import Command, Interrupt, PregelTask, StateSnapshot

from checkpoints.threads import thread_config
from graph.app.runtime import open_runtime, stream_run
from graph.app.timeline_build import build_timeline, thread_timeline
from tests.conftest import MusterEnv
from tests.test_timeline_geometry import (
    T0,
    assert_no_bar_through,
    assert_no_label_on_a_band,
    human_break,
    picture_of,
)


def checkpoint(step: int, at: float, *, asked: dict[str, Any] | None = None) -> StateSnapshot:
    tasks: tuple[PregelTask, ...] = ()
    if asked is not None:
        tasks = (PregelTask("task-1", "recover", (), None, (Interrupt(asked, "i-1"),)),)
    return StateSnapshot(
        values={"request": "I was charged twice for my order"},
        next=("recover",) if asked is not None else (),
        config={"configurable": {"thread_id": "t-old", "checkpoint_id": f"c{step}"}},
        metadata={"step": step, "source": "loop"},
        created_at=datetime.fromtimestamp(T0 + at, tz=UTC).isoformat(),
        parent_config=None,
        tasks=tasks,
        interrupts=(),
    )


def event(run: str, at: float, superstep: int, **fields: Any) -> dict[str, Any]:
    return {"ts": T0 + at, "run_id": run, "thread_id": "t-old", "superstep": superstep, **fields}


def test_the_builder_finds_the_wait_and_never_guesses_a_node_across_it() -> None:
    question = {"kind": "clarification", "worker": "billing", "packet_id": "billing-1",
                "question": "Which order is it?"}  # fmt: skip
    history = [
        checkpoint(-1, -0.001),
        checkpoint(0, 0.0),
        checkpoint(1, 0.004),
        checkpoint(2, 0.018),
        checkpoint(3, 0.031, asked=question),  # paused here for the human
        checkpoint(4, 4.232),
        checkpoint(5, 4.267),
    ]
    events = [
        event("r1", 0.003, 1, event="node", node="plan", outcome="ok", duration_ms=2.9,
              packets=["billing-1"]),
        event("r1", 0.011, 2, event="worker_step", worker="billing", packet_id="billing-1",
              kind="model", step=1, outcome="tool_calls", duration_ms=3.0),
        event("r1", 0.017, 2, event="node", node="dispatch", worker="billing",
              packet_id="billing-1", outcome="failed", reason="ambiguous", duration_ms=9.0),
        # An older trace: supervisor nodes without their own duration.
        event("r1", 0.029, 3, event="node", node="collect", outcome="recover", reports=1),
        event("r2", 4.231, 4, event="node", node="recover", outcome="clarify",
              packet_id="billing-1", worker="billing", reason="ambiguous"),
        event("r2", 4.256, 5, event="worker_step", worker="billing", packet_id="billing-1",
              kind="model", step=1, outcome="final", duration_ms=2.0),
        event("r2", 4.266, 5, event="node", node="dispatch", worker="billing",
              packet_id="billing-1", outcome="ok", duration_ms=12.0),
    ]  # fmt: skip
    built = build_timeline("t-old", history[-1], history, events)
    # It was guessed to start at the checkpoint before the pause: a 4.2 s bar.
    (recover,) = [s for s in built.supervisor.spans if s.label.startswith("recover")]
    assert recover.start - T0 >= 4.231 - 1e-6, "the recover node is drawn from the answer on"
    (wait,) = built.waits
    assert wait.kind == "clarification" and "Which order is it?" in wait.detail
    assert (round(wait.start - T0, 3), round(wait.end - T0, 3)) == (0.031, 4.231)
    # No bar of the supervisor's lasts through the wait.
    assert all(s.end <= wait.start or s.start >= wait.end for s in built.supervisor.spans)
    picture = picture_of(built)
    group, band = human_break(picture)
    assert group.attrs["data-wait-seconds"] == "4.2"
    assert_no_bar_through(picture, band)
    assert_no_label_on_a_band(picture)


# --- end to end: a real clarification ----------------------------------------------------------


@pytest.mark.integration
async def test_a_real_clarification_is_drawn_as_a_break(muster_env: MusterEnv) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        await stream_run(runtime, thread, {"request": "I was charged twice for my order"})
        config = thread_config(thread)
        (pending,) = (await runtime.graph.aget_state(config)).interrupts
        await stream_run(runtime, thread, Command(resume={pending.id: "It is order #12333"}))
        history = [s async for s in runtime.graph.aget_state_history(config)]
        snapshot = await runtime.graph.aget_state(config)
    built = thread_timeline(thread, snapshot, history)
    (wait,) = built.waits
    assert wait.kind == "clarification" and "order_id" in wait.detail
    picture = picture_of(built)
    group, band = human_break(picture)
    assert group.attrs["data-kind"] == "clarification"
    assert_no_bar_through(picture, band)
    assert_no_label_on_a_band(picture)
