"""A process killed after every branch of a superstep saved its report, but before the
superstep's own checkpoint, leaves a thread that is in progress, not new.

LangGraph's snapshot leaves tasks that already saved their writes out of `next`, so such a
thread has nothing `next` and no answer. Read as "new", `muster batch --resume` started it
again from its input: the plan ran again and every report was doubled (found by
bench/chaos.py). The state is made here exactly, by cutting a finished run's store back to
the checkpoint after `plan` while keeping the branches' saved writes.
"""

from __future__ import annotations

import sqlite3
from collections import Counter

import pytest

from checkpoints.threads import status_of, thread_config
from graph.app.batch_outcomes import result_from_snapshot
from graph.app.batch_tickets import Ticket
from graph.app.runtime import open_runtime, stream_run
from servers.call_log import count_calls
from tests.conftest import DEMO_TICKET, MusterEnv

pytestmark = [pytest.mark.integration]


async def test_a_superstep_whose_branches_all_saved_resumes_without_running_again(
    muster_env: MusterEnv,
) -> None:
    thread = "all-branches-saved"
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        await stream_run(runtime, thread, {"request": DEMO_TICKET})
        config = thread_config(thread)
        after_plan = None
        async for snapshot in runtime.graph.aget_state_history(config):
            if "dispatch" in snapshot.next:
                after_plan = snapshot.config["configurable"]["checkpoint_id"]
                break
        assert after_plan is not None
        workers_ran = count_calls(muster_env.call_log)

        # The kill: nothing after the post-plan checkpoint was saved except the branches'
        # own writes (pending writes of that checkpoint).
        conn = sqlite3.connect(muster_env.checkpoint_db)
        try:
            conn.execute(
                "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id > ?",
                (thread, after_plan),
            )
            conn.execute(
                "DELETE FROM writes WHERE thread_id = ? AND checkpoint_id > ?",
                (thread, after_plan),
            )
            conn.commit()
        finally:
            conn.close()

        cut = await runtime.graph.aget_state(config)
        assert not cut.next and cut.tasks and all(t.result for t in cut.tasks)
        assert status_of(cut) == "in progress"
        ticket = Ticket(id="t", request=DEMO_TICKET, line=1)
        assert result_from_snapshot(ticket, thread, cut).thread_status == "in progress"

        values = await stream_run(runtime, thread, None)  # what `resume` does
    reports = Counter((r.packet_id, r.attempt) for r in values["reports"])
    assert reports and max(reports.values()) == 1, reports
    assert values["answer"].status == "complete"
    assert count_calls(muster_env.call_log) == workers_ran  # no worker ran again
