"""Back-pressure on a failing server: the hub's circuit breaker and in-flight cap, as a unit
(with a clock the test moves) and against a real broken policy server over stdio."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from servers.call_log import count_calls
from workers.hub import CallOutcome, ToolHub
from workers.hub.backpressure import Backpressure, BackpressureSettings, Breaker
from workers.hub.servers_config import DEFAULT_SERVERS_FILE, parse_servers_config


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_circuit_opens_after_failures_in_a_row_and_a_probe_closes_it() -> None:
    clock = Clock()
    breaker = Breaker(BackpressureSettings(threshold=3, cooldown_s=10, jitter=0), clock)
    for _ in range(2):
        assert breaker.refusal() is None
        breaker.record(CallOutcome.TOOL_ERROR, "ERROR: policy-db connection refused")
    assert breaker.refusal() is None
    breaker.record(CallOutcome.TIMEOUT, "ERROR: timed out")
    refusal = breaker.refusal()
    assert refusal is not None and "3 failed calls in a row" in refusal
    assert "next try in 10.0s" in refusal and breaker.shed == 1
    clock.now += 10
    assert breaker.refusal() is None  # the one probe
    assert breaker.refusal() is not None  # others wait while it is out
    breaker.record(CallOutcome.OK, "{}")
    assert breaker.refusal() is None and breaker.failures == 0


def test_a_failed_probe_reopens_for_twice_as_long_capped() -> None:
    clock = Clock()
    settings = BackpressureSettings(threshold=1, cooldown_s=10, max_cooldown_s=25, jitter=0)
    breaker = Breaker(settings, clock)
    breaker.record(CallOutcome.UNAVAILABLE, "down")
    waits = []
    for _ in range(3):
        clock.now = breaker.open_until
        assert breaker.refusal() is None  # the probe
        breaker.record(CallOutcome.UNAVAILABLE, "still down")
        waits.append(breaker.open_until - clock.now)
    assert waits == [20, 25, 25]


def test_a_callers_mistake_does_not_count_against_the_server() -> None:
    breaker = Breaker(BackpressureSettings(threshold=2, jitter=0), Clock())
    for outcome in (CallOutcome.BAD_ARGUMENTS, CallOutcome.NOT_ALLOWED, CallOutcome.UNKNOWN_TOOL):
        breaker.record(outcome, "ERROR: yours")
        breaker.record(outcome, "ERROR: yours")
    assert breaker.refusal() is None and breaker.failures == 0


def test_jitter_spreads_the_reopening() -> None:
    opens = set()
    for _ in range(20):
        breaker = Breaker(BackpressureSettings(threshold=1, cooldown_s=10, jitter=0.2), Clock())
        breaker.record(CallOutcome.TIMEOUT, "slow")
        opens.add(round(breaker.open_until - 100.0, 3))
        assert 8.0 <= breaker.open_until - 100.0 <= 12.0
    assert len(opens) > 1


async def test_the_in_flight_cap_holds_calls_back() -> None:
    pressure = Backpressure(BackpressureSettings(max_in_flight=2))
    gate, running, peak = pressure.gate("orders"), 0, 0
    release, two_running = asyncio.Event(), asyncio.Event()

    async def call() -> None:
        nonlocal running, peak
        async with gate:
            running += 1
            peak = max(peak, running)
            if running == 2:
                two_running.set()
            await release.wait()
            running -= 1

    tasks = [asyncio.create_task(call()) for _ in range(5)]
    await asyncio.wait_for(two_running.wait(), 5)
    for _ in range(5):  # let every other task reach the gate
        await asyncio.sleep(0)
    assert running == 2
    release.set()
    await asyncio.gather(*tasks)
    assert peak == 2


def _policy_only(tmp: Path, **env: str) -> dict[str, object]:
    base = json.loads(DEFAULT_SERVERS_FILE.read_text(encoding="utf-8"))["mcpServers"]["policy"]
    return {
        "mcpServers": {
            "policy": {
                **base,
                "env": {**base.get("env", {}), "MUSTER_CALL_LOG": str(tmp / "calls.jsonl"), **env},
            }
        }
    }


@pytest.mark.integration
async def test_a_broken_server_is_asked_only_until_its_circuit_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twenty calls to a broken policy server: the first `threshold` reach it, the rest
    are answered at once as unavailable, naming the open circuit."""
    monkeypatch.setenv("MUSTER_BREAKER_FAILURES", "4")
    monkeypatch.setenv("MUSTER_BREAKER_COOLDOWN_S", "600")
    cfg = parse_servers_config(_policy_only(tmp_path, MUSTER_POLICY_MODE="broken"))
    async with await ToolHub.connect(cfg) as hub:
        results = [
            await hub.call("policy.check_policy", {"topic": "refunds"}, ["policy."])
            for _ in range(20)
        ]
        assert [r.outcome for r in results[:4]] == [CallOutcome.TOOL_ERROR] * 4
        assert {r.outcome for r in results[4:]} == {CallOutcome.UNAVAILABLE}
        assert "circuit open after 4 failed calls in a row" in results[-1].text
        assert "policy-db connection refused" in results[-1].text
        assert hub.backpressure.breaker("policy").shed == 16
    assert count_calls(tmp_path / "calls.jsonl", server="policy") == 4


@pytest.mark.integration
async def test_a_worker_whose_only_server_is_shut_is_skipped_before_any_model_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workers.contracts import Handoff
    from workers.local_models import ScriptedChatModel
    from workers.loop import run_worker
    from workers.roster import load_roster

    monkeypatch.setenv("MUSTER_BREAKER_FAILURES", "2")
    monkeypatch.setenv("MUSTER_BREAKER_COOLDOWN_S", "600")
    cfg = parse_servers_config(_policy_only(tmp_path, MUSTER_POLICY_MODE="broken"))
    spec = load_roster().workers["policy"]
    packet = Handoff(
        id="policy-1",
        recipient="policy",
        objective="Find the refunds policy.",
        inputs={"topic": "refunds"},
        tool_allow=spec.privileges,
        max_steps=3,
    )
    async with await ToolHub.connect(cfg) as hub:
        for _ in range(2):
            await hub.call("policy.check_policy", {"topic": "refunds"}, ["policy."])
        model = ScriptedChatModel(turns=["never asked"])
        report = await run_worker(packet, spec=spec, hub=hub, model=model)
    assert (report.status, report.reason) == ("failed", "unavailable")
    assert report.note.startswith("skipped: the circuit is open for policy")
    assert model.calls == 0 and report.steps_used == 0


def test_the_servers_file_sets_a_servers_in_flight_cap() -> None:
    cfg = parse_servers_config(
        {"mcpServers": {"slow": {"command": "python", "args": ["-V"], "maxInFlight": 3}}}
    )
    assert cfg.mcp_servers["slow"].max_in_flight == 3
    with pytest.raises(Exception, match="maxInFlight|max_in_flight"):
        parse_servers_config(
            {"mcpServers": {"slow": {"command": "python", "args": ["-V"], "maxInFlight": 0}}}
        )
    pressure = Backpressure(BackpressureSettings(max_in_flight=16), limits={"slow": 3})
    assert pressure.gate("slow")._value == 3 and pressure.gate("fast")._value == 16


def test_a_look_at_an_open_circuit_does_not_take_its_probe() -> None:
    # The worker loop looks before a model turn; the call itself takes the probe. A look that
    # took it left a model with no fallbacks refused for good after its first cool-down.
    now = [0.0]
    breaker = Breaker(BackpressureSettings(threshold=1, cooldown_s=10, jitter=0), lambda: now[0])
    breaker.record(CallOutcome.UNAVAILABLE, "503")
    assert breaker.waiting() is not None and breaker.refusal() is not None  # cooling down
    now[0] = 11.0
    assert breaker.waiting() is None and breaker.waiting() is None  # looks take nothing
    assert breaker.refusal() is None  # the call is the probe
    assert breaker.waiting() is not None and breaker.refusal() is not None  # one at a time
