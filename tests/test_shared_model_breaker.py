"""A model's circuit breaker the whole fleet sees: the same board in the store as the
servers' (checkpoints/breakers.py), the model's row keyed `model:<label>`.

Process A, a real `muster run` in a subprocess, asks a model the loopback OpenAI-compatible
server answers 503 (tests/fixtures/openai_server.py) until that model's breaker opens; its
fallback answers. Then runtimes in this process (each as another `muster worker` or `batch`
on the same SQLite store would be, with a model health and a board of their own) run
tickets: while A's cool-down lasts they never ask the down model (the loopback server's
record of requests says so), and their reports say which model answered for it. Once the
cool-down is over, two runtimes at once send exactly one probe for both of them; its 503
reopens the circuit with a doubled cool-down for everyone.

No wait is a fixed sleep: A is waited for to exit, and the cool-down's end is the board's
row moved back by one cool-down (what any process reads as "the cool-down is over").
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import uuid
from typing import Any

import pytest

from checkpoints.breakers import breaker_board
from graph.app.runtime import MusterRuntime, open_runtime, stream_run
from tests.conftest import MusterEnv
from tests.fixtures.openai_server import RunningServer
from tests.test_model_fallbacks import DOWN
from tests.test_provider import PROVIDER_TICKET, WORKERS
from workers.model_health import ModelHealth
from workers.models import load_model_factory

ENV = {
    "MUSTER_MODEL_FALLBACKS": "openai:gpt-up",
    "MUSTER_ANSWER_WRITER": "composed",
    "MUSTER_BREAKER_FAILURES": "2",
    "MUSTER_BREAKER_COOLDOWN_S": "600",
}
KEY = "model:gpt-down"


@pytest.fixture
def provider(
    openai_server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> RunningServer:
    """The loopback server as the `openai` provider (here and in A's process): gpt-down
    answers 503, gpt-up the workers' scripted turns."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    openai_server.script.workers = WORKERS
    openai_server.script.fail_models["gpt-down"] = DOWN
    return openai_server


def _down_requests(server: RunningServer, since: int) -> list[int]:
    """The status of each request naming gpt-down the server saw after the `since`-th."""
    return [e.status for e in server.script.exchanges[since:] if e.model == "gpt-down"]


async def _ticket(runtime: MusterRuntime) -> dict[str, Any]:
    return await stream_run(runtime, f"t-{uuid.uuid4().hex[:8]}", {"request": PROVIDER_TICKET})


def _answered_by_the_fallback(values: dict[str, Any]) -> None:
    reports = values["reports"]
    assert reports and all(r.status == "ok" for r in reports), [r.note for r in reports]
    assert {(r.model, r.fallback_for) for r in reports} == {("gpt-up", "gpt-down")}
    assert values["answer"].status == "complete"


def _health(runtime: MusterRuntime) -> ModelHealth:
    return runtime.services.model_health


@pytest.mark.slow
@pytest.mark.integration
async def test_a_model_opened_by_one_process_is_skipped_by_the_others_and_probed_once(
    muster_env: MusterEnv, provider: RunningServer
) -> None:
    db = muster_env.checkpoint_db
    board = breaker_board(db)  # what any other process on the store reads
    try:
        # A: a real process; gpt-down fails twice, its breaker opens and goes on the board.
        ran = await asyncio.to_thread(
            muster_env.cli, "run", PROVIDER_TICKET, "--model", "openai:gpt-down", "--json"
        )
        assert ran.returncode in (0, 5), ran.stderr  # 5: waits for an approval
        assert {r["model"] for r in json.loads(ran.stdout)["reports"]} == {"gpt-up"}
        assert 2 <= len(_down_requests(provider, 0))
        row = await board.read(KEY)
        assert row is not None and row.remaining_s > 0 and row.reopened >= 1
        assert "unavailable" in row.last_failure, row.last_failure
        assert await board.read("gpt-down") is None  # beside the servers' keys, not on them

        models = load_model_factory("openai:gpt-down")
        async with (
            open_runtime(db=db, models=models) as b,
            open_runtime(db=db, models=models) as c,
        ):
            # B never asked gpt-down, yet skips it for every worker: no request reaches it.
            mark = len(provider.script.exchanges)
            values = await _ticket(b)
            assert _down_requests(provider, mark) == []
            _answered_by_the_fallback(values)
            skipped = _health(b).breaker("gpt-down")
            assert skipped.is_open and skipped.shed >= 3  # one per worker, at least

            # The cool-down over (for the board: every process reads it so), B's and C's
            # tickets at once send one probe between them; its 503 reopens the circuit.
            with sqlite3.connect(db) as conn:
                conn.execute(
                    "UPDATE muster_breakers SET opened_at = opened_at - cooldown_s - 1"
                    " WHERE server = ?",
                    (KEY,),
                )
            _health(b).breaker("gpt-down").open_until = 0.0  # B's own copy of the window
            mark = len(provider.script.exchanges)
            both = await asyncio.gather(_ticket(b), _ticket(c))
            assert _down_requests(provider, mark) == [503]  # the one probe, for both
            for values in both:
                _answered_by_the_fallback(values)
            reopened = await board.read(KEY)
            assert reopened is not None and reopened.remaining_s > 0
            assert reopened.reopened > row.reopened  # the failed probe doubled it
            assert reopened.cooldown_s > row.cooldown_s / 2

            # Within the new cool-down, nobody asks gpt-down again.
            mark = len(provider.script.exchanges)
            _answered_by_the_fallback(await _ticket(c))
            assert _down_requests(provider, mark) == []
    finally:
        await board.aclose()


async def test_without_a_board_a_models_breaker_is_this_processs_alone(tmp_path: Any) -> None:
    """No store board: the model's breaker opens, refuses and probes as it always did; with
    one, the same failures put `model:<label>` on the board and another health sees it."""
    from workers.hub.backpressure import BackpressureSettings

    settings = BackpressureSettings(threshold=2, cooldown_s=60.0)
    alone = ModelHealth(settings=settings)
    for _ in range(2):
        await alone.settle_call("m", "unavailable", "503")
    assert alone.breaker("m").is_open
    assert (await alone.admit("m") or "").startswith("circuit open after 2 failed calls")

    board = breaker_board(tmp_path / "store.sqlite")
    other = breaker_board(tmp_path / "store.sqlite")
    try:
        here, there = ModelHealth(settings=settings, board=board), ModelHealth(board=other)
        for _ in range(2):
            await here.settle_call("m", "unavailable", "503")
        seen = await other.read("model:m")
        assert seen is not None and seen.remaining_s > 0
        assert await there.admit("m") is not None  # never failed here, skipped all the same
        await here.settle_call("m", None, "")  # an answer closes it for everyone
        assert await other.read("model:m") is None
    finally:
        await board.aclose()
        await other.aclose()
