"""Listing and inspecting threads in a checkpoint store.

A thread's status is read from its latest state snapshot: `done` (an answer and nothing
next), `interrupted` (waiting for a human), `failed` (a task raised), or `in progress`
(work left, e.g. after a crash: resume it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import StateSnapshot

from workers.errors import ConfigError

ThreadStatus = Literal["done", "interrupted", "failed", "in progress", "new"]


@dataclass(frozen=True)
class ThreadInfo:
    """One line of `muster threads`."""

    thread_id: str
    status: ThreadStatus
    updated_at: str
    request: str
    answer_status: str | None
    waiting_on: list[str]
    """What the thread waits for (interrupt kinds, e.g. `approval`)."""


def thread_config(thread_id: str) -> RunnableConfig:
    """The config that addresses one thread. An id with a control character (a newline, a
    tab, an escape) is refused here, where every read and run of a thread starts: it can
    name no thread Muster made (`graph.trace.THREAD_ID`), and printed in a message it would
    split the line or drive the terminal."""
    if any(not ch.isprintable() for ch in thread_id):
        raise ConfigError(
            f"thread id {thread_id!r} has a control character; a thread id is one line of "
            "letters, digits, '.', '_' and '-'"
        )
    return {"configurable": {"thread_id": thread_id}}


def status_of(snapshot: StateSnapshot) -> ThreadStatus:
    """The thread status shown to users, from a state snapshot."""
    if snapshot.interrupts:
        return "interrupted"
    if any(task.error for task in snapshot.tasks):
        return "failed"
    # `next` leaves out tasks that already saved their writes: a process killed after every
    # branch of a superstep finished, but before that superstep's checkpoint, leaves a
    # snapshot with nothing `next` and every task done. It is in progress (a resume applies
    # those writes and goes on), not new: starting it again from its input would run the
    # plan again and double every report.
    if snapshot.next or snapshot.tasks:
        return "in progress"
    if snapshot.values.get("answer") is not None:
        return "done"
    return "new"


def waiting_on(snapshot: StateSnapshot) -> list[str]:
    """The kinds of pending interrupts (`approval`, `clarification`…)."""
    kinds = []
    for interrupt in snapshot.interrupts:
        value: Any = interrupt.value
        kinds.append(str(value.get("kind", "input")) if isinstance(value, dict) else "input")
    return kinds


@runtime_checkable
class ListsThreads(Protocol):
    """A saver that lists its threads itself (`MusterPostgresSaver`)."""

    async def athread_ids(self) -> list[str]:
        """Every thread id in the store, most recently written first."""
        ...


async def thread_ids(saver: BaseCheckpointSaver[Any]) -> list[str]:
    """Every thread id in the store, most recently written first."""
    if isinstance(saver, ListsThreads):
        return await saver.athread_ids()
    if not isinstance(saver, AsyncSqliteSaver):
        raise TypeError(f"cannot list the threads of a {type(saver).__name__}")
    # Upstream's `checkpoints` table (no public call lists threads): tests/test_pinned_internals.py.
    async with saver.conn.execute(
        "SELECT thread_id, MAX(checkpoint_id) AS last FROM checkpoints "
        "WHERE checkpoint_ns = '' GROUP BY thread_id ORDER BY last DESC"
    ) as cursor:
        return [str(row[0]) async for row in cursor]


async def describe_threads(graph: Any, saver: BaseCheckpointSaver[Any]) -> list[ThreadInfo]:
    """One `ThreadInfo` per thread; `graph` is the compiled graph bound to `saver`."""
    infos = []
    for thread_id in await thread_ids(saver):
        snapshot: StateSnapshot = await graph.aget_state(thread_config(thread_id))
        answer = snapshot.values.get("answer")
        infos.append(
            ThreadInfo(
                thread_id=thread_id,
                status=status_of(snapshot),
                updated_at=str(snapshot.created_at or ""),
                request=" ".join(str(snapshot.values.get("request", "")).split())[:60],
                answer_status=getattr(answer, "status", None),
                waiting_on=waiting_on(snapshot),
            )
        )
    return infos


async def thread_exists(saver: BaseCheckpointSaver[Any], thread_id: str) -> bool:
    """True if the store holds any checkpoint for `thread_id`."""
    return await saver.aget_tuple(thread_config(thread_id)) is not None
