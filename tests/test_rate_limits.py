"""Rate limits for MCP servers and provider models, besides their in-flight caps.

A server's `requests_per_s` (and `burst`) in the servers file is enforced by the hub before
its in-flight gate; a model's `MUSTER_MODEL_REQUESTS_PER_S` / `MUSTER_<ROLE>_REQUESTS_PER_S`
(and `_BURST`) becomes the chat model's LangChain `InMemoryRateLimiter`. Unset: no limit.

Spacing is asserted as a lower bound, which load only makes larger: exactly where it is
measured in this process (right as the limiter lets a call go), and with half an interval of
slack where it is read from the far side (the real policy server's own call log, the
loopback provider's own arrival times), since delivery to another process may delay one call
more than the next. Nothing here sleeps or asserts that anything was fast.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from servers.call_log import read_calls
from tests.fixtures.openai_server import RunningServer
from workers.errors import ConfigError
from workers.hub import ToolHub
from workers.hub.backpressure import Backpressure
from workers.hub.servers_config import (
    DEFAULT_SERVERS_FILE,
    ServersConfigError,
    load_servers_config,
    parse_servers_config,
)
from workers.models import load_model_factory

TOPICS = ("refunds", "duplicate_charge", "goodwill_credit", "returns", "shipping", "gift_cards")
"""Six topics the policy server knows."""


def _gaps(times: list[float]) -> list[float]:
    ordered = sorted(times)
    return [b - a for a, b in zip(ordered, ordered[1:], strict=False)]


async def test_a_rate_limited_server_lets_one_call_start_per_interval() -> None:
    """Six concurrent calls, each start read as LangChain's limiter hands out its token (its
    own clock reading, `last`, taken as it refills): with a burst of 1 every start is at
    least 1/rate after the one before; with a burst of 3 the first three start together and
    each later one waits a whole interval after the one before."""
    for rate, burst in ((20.0, 1), (10.0, 3)):
        pressure = Backpressure(rates={"policy": (rate, burst)})
        starts: list[float] = []

        async def call(pressure: Backpressure = pressure, starts: list[float] = starts) -> None:
            await pressure.pace("policy")
            # No await since the token was taken: no other call has been let through yet.
            limiter = pressure._pacers["policy"]
            assert limiter.last is not None
            starts.append(limiter.last)

        await asyncio.gather(*(call() for _ in range(6)))
        assert len(starts) == 6 and sorted(starts) == starts  # let through in turn
        gaps = _gaps(starts)
        assert all(gap == 0 for gap in gaps[: burst - 1])  # the burst: one refill time
        assert all(gap >= 1 / rate - 1e-9 for gap in gaps[burst - 1 :]), (rate, burst, gaps)


async def test_a_server_without_a_rate_is_not_paced() -> None:
    pressure = Backpressure(rates={"policy": (1.0, 1)})
    await pressure.pace("kb")  # no limit: never waits, never makes a limiter
    await pressure.pace("policy")  # the bucket starts full: the first call goes at once
    assert list(pressure._pacers) == ["policy"]


def _servers(tmp: Path, **policy: Any) -> dict[str, Any]:
    """The real policy and kb servers, both logging their calls; `policy` is set on the
    policy server's entry (its rate limit)."""
    servers = json.loads(DEFAULT_SERVERS_FILE.read_text(encoding="utf-8"))["mcpServers"]
    log = {"MUSTER_CALL_LOG": str(tmp / "calls.jsonl")}
    return {
        "mcpServers": {
            "policy": {**servers["policy"], "env": log, **policy},
            "kb": {**servers["kb"], "env": {**servers["kb"].get("env", {}), **log}},
        }
    }


@pytest.mark.integration
async def test_a_server_limited_to_n_requests_a_second_sees_them_spaced(tmp_path: Path) -> None:
    """Six concurrent calls to a policy server limited to 4 a second (after one call that
    empties its bucket): the server's own call log shows all six, each arriving in turn,
    spread over at least five intervals (less half a one for delivery to its process). The
    kb server, with no limit in the same file, is not paced at all."""
    rate, calls = 4.0, len(TOPICS)
    cfg = parse_servers_config(_servers(tmp_path, requests_per_s=rate))
    async with await ToolHub.connect(cfg) as hub:
        assert hub.backpressure.rates == {"policy": (rate, 1)}
        first = await hub.call("policy.check_policy", {"topic": "refunds"}, ["policy."])
        assert first.ok, first.text
        results = await asyncio.gather(
            *(hub.call("policy.check_policy", {"topic": t}, ["policy."]) for t in TOPICS)
        )
        assert all(r.ok for r in results), [r.text for r in results]
        kb = await hub.call("kb.search_kb", {"query": "refund"}, ["kb."])
        assert kb.ok, kb.text
    logged = [c for c in read_calls(tmp_path / "calls.jsonl") if c["server"] == "policy"]
    assert len(logged) == calls + 1
    paced = sorted(c["ts"] for c in logged[1:])
    assert paced[-1] - paced[0] >= (calls - 1) / rate - 0.5 / rate, _gaps(paced)
    assert paced[0] - logged[0]["ts"] >= 0.5 / rate  # the bucket was empty after the first
    assert list(hub.backpressure._pacers) == ["policy"]


def test_a_bad_rate_in_the_servers_file_is_one_clear_config_error(tmp_path: Path) -> None:
    cases = {
        "0": (0, None, "requests_per_s: Input should be greater than 0"),
        "word": ("fast", None, "requests_per_s: Input should be a valid number"),
        "burst0": (5, 0, "burst: Input should be greater than or equal to 1"),
        "alone": (None, 3, "'burst' needs 'requests_per_s'"),
    }
    for name, (rate, burst, message) in cases.items():
        entry: dict[str, Any] = {"command": "python", "args": ["-m", "servers.policy"]}
        entry.update({"requests_per_s": rate} if rate is not None else {})
        entry.update({"burst": burst} if burst is not None else {})
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"mcpServers": {"policy": entry}}), encoding="utf-8")
        with pytest.raises(ServersConfigError) as failed:
            load_servers_config(path)
        text = str(failed.value)
        assert text.startswith(f"{path}: mcpServers.policy") and message in text, text
        assert "\n" not in text
    unset = parse_servers_config({"mcpServers": {"policy": {"command": "python"}}})
    assert unset.mcp_servers["policy"].requests_per_s is None  # the default: no limit


def test_model_rate_limits_are_read_from_the_model_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One limiter per model and rate, shared by the roles that ask it at that rate; a role
    with its own rate gets its own; fallbacks are limited too; unset, none."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    assert load_model_factory("openai:gpt-a")("billing").rate_limiter is None
    monkeypatch.setenv("MUSTER_MODEL_REQUESTS_PER_S", "2")
    monkeypatch.setenv("MUSTER_WRITER_REQUESTS_PER_S", "0.5")
    monkeypatch.setenv("MUSTER_WRITER_BURST", "3")
    monkeypatch.setenv("MUSTER_MODEL_FALLBACKS", "openai:gpt-b")
    factory = load_model_factory("openai:gpt-a")
    worker, planner, writer = factory("billing"), factory("planner"), factory("synthesizer")
    shared = worker.rate_limiter
    assert shared is not None and shared is planner.rate_limiter
    assert (shared.requests_per_second, shared.max_bucket_size) == (2.0, 1)
    assert writer.rate_limiter is not None and writer.rate_limiter is not shared
    assert (writer.rate_limiter.requests_per_second, writer.rate_limiter.max_bucket_size) == (
        0.5,
        3,
    )
    from workers.models import fallbacks_of

    (fallback,) = fallbacks_of(worker)
    assert fallback.rate_limiter is not None and fallback.rate_limiter is not shared
    for bad, message in (
        ("0", "MUSTER_MODEL_REQUESTS_PER_S or MUSTER_WORKER_REQUESTS_PER_S must be > 0"),
        ("-1", "must be a finite number >= 0"),
        ("often", "is not a float"),
    ):
        monkeypatch.setenv("MUSTER_MODEL_REQUESTS_PER_S", bad)
        with pytest.raises(ConfigError, match=message):
            load_model_factory("openai:gpt-a")


@pytest.mark.integration
async def test_a_rate_limited_model_is_sent_requests_spaced(
    openai_server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five concurrent requests to a model limited to 4 a second, after one that empties its
    bucket: the provider (the loopback server) sees all five, arriving in turn over at least
    four intervals (less half a one for delivery)."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("MUSTER_MODEL_REQUESTS_PER_S", "4")
    rate, calls = 4.0, 5
    model = load_model_factory("openai:gpt-test")("billing")
    await model.ainvoke("ping")
    await asyncio.gather(*(model.ainvoke(f"ping {i}") for i in range(calls)))
    arrived = [e.at for e in openai_server.script.exchanges]
    assert len(arrived) == calls + 1
    paced = sorted(arrived[1:])
    assert paced[-1] - paced[0] >= (calls - 1) / rate - 0.5 / rate, _gaps(paced)
    assert all(e.status == 200 for e in openai_server.script.exchanges)
