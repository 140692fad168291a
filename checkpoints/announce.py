"""Say a task finished only once its writes are in the store.

A branch's report is saved by the checkpointer's `aput_writes`, which LangGraph submits in the
background right after the node returns; a trace line written by the node itself could land
before that write, and a process killed in between would have said "finished" about work a
resume then runs again. So the node hands its announcement to `when_saved`, and a saver that
mixes in `AnnouncesSavedWrites` runs it right after that task's writes are committed: a trace
line that says "finished" is never ahead of the store. A saver without the mix-in (the
LangGraph server's, under Studio) announces at once, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

Announcement = Callable[[], None]

_pending: dict[str, list[Announcement]] = {}
"""Announcements waiting for their task's writes, by LangGraph task id (unique per task)."""


class AnnouncesSavedWrites:
    """Mix-in for a LangGraph saver: after a task's writes are committed, run what
    `when_saved` queued for that task. Put it before the saver class in the bases."""

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        # task_path is in the signature because LangGraph passes it only to savers whose
        # aput_writes names it (it inspects the signature).
        await super().aput_writes(config, writes, task_id, task_path)  # type: ignore[misc]
        for announce in _pending.pop(task_id, ()):
            announce()


def when_saved(checkpointer: BaseCheckpointSaver[Any] | None, task_id: str | None,
               announce: Announcement) -> None:
    """Run `announce` once the writes of task `task_id` are in `checkpointer`'s store, or at
    once if that saver cannot say (no saver, no task id, or a saver without the mix-in)."""
    if task_id and isinstance(checkpointer, AnnouncesSavedWrites):
        _pending.setdefault(task_id, []).append(announce)
    else:
        announce()
