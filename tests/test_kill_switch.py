"""The operator's stops, through the CLI users run: `muster pause` holds every approved action
(the thread waits with its approval intact), `muster resume-all` then `muster resume` lets it
run once; `muster cancel` ends a thread cleanly with nothing executed."""

from __future__ import annotations

import pytest

from checkpoints.audit import AuditLog
from graph.kill_switch import SWITCH_THREAD
from tests.conftest import MusterEnv
from tests.test_actions import CLI_TIMEOUT_S, REFUND_TICKET, all_run_refunds

EXIT_OK, EXIT_BAD_INPUT, EXIT_DEGRADED, EXIT_WAITING = 0, 2, 3, 5


@pytest.mark.slow
@pytest.mark.integration
async def test_pause_holds_an_approved_refund_until_resume_all(muster_env: MusterEnv) -> None:
    cli = muster_env.cli
    assert cli("run", REFUND_TICKET, "--thread", "p1", timeout=CLI_TIMEOUT_S).returncode == 5
    paused = cli("pause", "--by", "lead", "--reason", "incident review", timeout=CLI_TIMEOUT_S)
    assert paused.returncode == EXIT_OK and "paused by lead" in paused.stdout

    approved = cli("approve", "p1", "--by", "lead", timeout=CLI_TIMEOUT_S)
    assert approved.returncode == EXIT_WAITING, approved.stdout + approved.stderr
    assert (
        "side effects are paused by lead" in approved.stdout
        and "incident review" in approved.stdout
    )
    assert all_run_refunds(muster_env) == []
    again = cli("resume", "p1", timeout=CLI_TIMEOUT_S)  # still paused: it waits again
    assert again.returncode == EXIT_WAITING and all_run_refunds(muster_env) == []

    assert cli("resume-all", "--by", "lead", timeout=CLI_TIMEOUT_S).returncode == EXIT_OK
    done = cli("resume", "p1", timeout=CLI_TIMEOUT_S)
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    assert all_run_refunds(muster_env) == [{"order_id": "12345", "amount_cents": 12900}]
    async with await AuditLog.open(muster_env.checkpoint_db) as audit:
        events = [(r.event, r.actor) for r in await audit.rows(SWITCH_THREAD)]
    assert events == [("pause", "lead"), ("unpause", "lead")]


@pytest.mark.slow
@pytest.mark.integration
def test_cancel_ends_a_waiting_thread_with_nothing_executed(muster_env: MusterEnv) -> None:
    cli = muster_env.cli
    assert cli("run", REFUND_TICKET, "--thread", "c1", timeout=CLI_TIMEOUT_S).returncode == 5
    cancelled = cli(
        "cancel", "c1", "--by", "lead", "--reason", "customer withdrew", timeout=CLI_TIMEOUT_S
    )
    assert cancelled.returncode == EXIT_DEGRADED, cancelled.stdout + cancelled.stderr
    assert "cancellation by lead: customer withdrew" in cancelled.stdout
    assert "waiting for" not in cancelled.stdout
    approve = cli("approve", "c1", "--by", "lead", timeout=CLI_TIMEOUT_S)
    assert approve.returncode == EXIT_BAD_INPUT and "no pending approval" in approve.stderr
    assert all_run_refunds(muster_env) == []
    unknown = cli("cancel", "nope", "--by", "lead", timeout=CLI_TIMEOUT_S)
    assert unknown.returncode == EXIT_BAD_INPUT and "unknown thread nope" in unknown.stderr


async def test_a_fleet_worker_takes_no_job_while_side_effects_are_paused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker's fetch reads the kill switch first: while it is on, Procrastinate's own
    fetch is never called, and the worker says so once; when it is off, fetching resumes."""
    from procrastinate import App, testing
    from procrastinate.worker import Worker

    from graph.app.fleet_procrastinate import MusterWorker
    from graph.kill_switch import Paused

    fetched: list[int] = []

    async def counting_fetch(self: Worker) -> None:
        fetched.append(1)

    monkeypatch.setattr(Worker, "_fetch_and_process_jobs", counting_fetch)
    state: dict[str, Paused | None] = {"now": Paused(by="lead", since=0.0, reason="drill")}

    async def switch() -> Paused | None:
        return state["now"]

    said: list[str] = []
    app = App(connector=testing.InMemoryConnector())
    worker = MusterWorker(app, say=said.append, paused=switch, queues=["muster"])
    for _ in range(3):
        await worker._fetch_and_process_jobs()
    assert fetched == [] and len(said) == 1 and "taking no jobs" in said[0]
    state["now"] = None
    await worker._fetch_and_process_jobs()
    assert fetched == [1] and said[-1] == "side effects resumed: taking jobs again"
