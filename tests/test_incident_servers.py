"""The incident servers (logs, metrics, deploys) and their data: the labelled queue must agree
with what the servers serve, and the servers must behave over real stdio, failure modes
included.

The logs and metrics databases are read-only, so one seeded copy serves the whole module;
each test gets its own deploys database (rollbacks write to it) and call log.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError
from mcp.types import CallToolResult, TextContent

from graph.app.batch_tickets import load_tickets
from servers import deploys, incident_store, logs, metrics
from servers.approval import action_digest, mint_token
from servers.call_log import read_calls
from servers.incident_changes import Change, build_changes
from servers.incident_series import ServiceModel, minute_of, samples
from servers.incident_world import PROFILES, SERVICE_NAMES
from tests.conftest import HANG_TIMEOUT_S

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = ROOT / "domains" / "incidents"
SECRET = "test-secret-incidents"
ROLLBACK = "deploys.rollback"
DEMO_CHANGE = "dep-checkout-20250612-1402"
CATEGORIES = {"bad_deploy", "config_change", "dependency_outage", "traffic_spike", "slow_leak",
              "false_alarm"}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One seeded copy of the read-only logs and metrics databases for the module."""
    root = tmp_path_factory.mktemp("incident-data")
    paths = {"logs": root / "logs.sqlite", "metrics": root / "metrics.sqlite"}
    logs.ensure_database(paths["logs"])
    metrics.ensure_database(paths["metrics"])
    return paths


@pytest.fixture
def env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seeded: dict[str, Path]
) -> dict[str, Path]:
    paths = {**seeded, "deploys": tmp_path / "deploys.sqlite", "log": tmp_path / "calls.jsonl"}
    monkeypatch.setenv("MUSTER_LOGS_DB", str(paths["logs"]))
    monkeypatch.setenv("MUSTER_METRICS_DB", str(paths["metrics"]))
    monkeypatch.setenv("MUSTER_DEPLOYS_DB", str(paths["deploys"]))
    monkeypatch.setenv("MUSTER_CALL_LOG", str(paths["log"]))
    monkeypatch.setenv("MUSTER_APPROVAL_SECRET", SECRET)
    for name in ("MODE", "SLOW_S", "DIE_AFTER"):
        monkeypatch.delenv(f"MUSTER_METRICS_{name}", raising=False)
    return paths


@asynccontextmanager
async def stdio(module: str, errlog: Path, **extra_env: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", f"servers.{module}"],
        env={**os.environ, **extra_env}, cwd=ROOT,
    )
    with anyio.fail_after(HANG_TIMEOUT_S), errlog.open("w") as err:  # server start included
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.isError, text(result)
    data = json.loads(text(result))
    assert isinstance(data, dict)
    return data


def error(result: CallToolResult) -> str:
    assert result.isError, text(result)
    return text(result)


# --- the queue, the labels and the data agree (no servers) ------------------------------------


@pytest.fixture(scope="module")
def changes() -> dict[str, Change]:
    return {c.change_id: c for c in build_changes()}


def test_queue_is_a_batch_tickets_file_with_labels_for_every_incident() -> None:
    tickets = load_tickets(DOMAIN / "incidents.jsonl")
    incidents = read_jsonl(DOMAIN / "incidents.jsonl")
    labels = read_jsonl(DOMAIN / "labels.jsonl")
    assert len(tickets) >= 20
    assert [t.id for t in tickets] == [i["id"] for i in incidents] == [x["id"] for x in labels]
    for incident in incidents:
        paged = at(incident["paged_at"])
        assert f"[{paged:%Y-%m-%d %H:%M} UTC]" in incident["request"]  # the page carries its time
    assert {x["labels"]["category"] for x in labels} == CATEGORIES


def test_labels_follow_from_the_data(changes: dict[str, Change]) -> None:
    incidents = {i["id"]: i for i in read_jsonl(DOMAIN / "incidents.jsonl")}
    for label in read_jsonl(DOMAIN / "labels.jsonl"):
        lab, paged = label["labels"], at(incidents[label["id"]]["paged_at"])
        where = f"{label['id']} ({lab['category']})"
        assert lab["paged_service"] in incidents[label["id"]]["request"], where
        # What is ruled out: exactly the other changes of the two hours before the page.
        recent = {c.change_id for c in changes.values() if paged - timedelta(hours=2) <= c.at
                  < paged} - {lab["change_id"]}
        assert set(lab["ruled_out_changes"]) == recent, where
        if lab["category"] == "false_alarm":
            assert lab["service"] is None and lab["change_id"] is None and not lab["actions"]
            model = ServiceModel(PROFILES[lab["paged_service"]])
            assert not model.active(minute_of(paged)) and model.leak is None, where
            continue
        onset, model = at(lab["onset"]), ServiceModel(PROFILES[lab["service"]])
        before, after = model.values(minute_of(onset) - 2), model.values(minute_of(onset) + 10)
        if lab["category"] == "slow_leak":
            assert before[6] == model.profile.memory < after[6], where  # climbs from the deploy
            assert model.leak_extra(minute_of(paged)) > 0.4, where
        elif lab["category"] == "traffic_spike":
            assert after[0] > 2 * before[0] and after[3] > 10 * before[3], where
        else:  # 5xx jump in the causal service at the onset (a spike's requests do not move)
            assert after[3] > 10 * before[3] and after[0] < 1.2 * before[0], where
        if lab["change_id"] is None:
            assert not lab["actions"], where
            quiet = {lab["service"], lab["paged_service"]}
            assert not [c for c in changes.values() if c.service in quiet
                        and onset - timedelta(hours=6) <= c.at <= onset
                        and c.change_id not in lab["ruled_out_changes"]], where
            continue
        change = changes[lab["change_id"]]
        assert change.service == lab["service"] and change.at <= onset, where
        if lab["category"] in ("bad_deploy", "config_change"):  # 14:02 deploy, 5xx from 14:03
            assert onset - change.at == timedelta(minutes=1), where
            assert change.kind == ("deploy" if lab["category"] == "bad_deploy" else "config")
        else:
            assert onset == change.at and change.kind == "deploy", where
        later = [c for c in changes.values() if (c.service, c.target) == (change.service,
                 change.target) and c.at > change.at]
        assert not later, f"{where}: {change.change_id} must still be live"
        assert lab["actions"] == [{"tool": ROLLBACK, "args": {"change_id": change.change_id}}]


def test_generation_is_deterministic(changes: dict[str, Change], tmp_path: Path) -> None:
    assert {c.change_id: c for c in build_changes()} == changes
    dumps = []
    for name in ("a.sqlite", "b.sqlite"):
        deploys.ensure_database(tmp_path / name)
        deploys.ensure_database(tmp_path / name)  # a second start seeds nothing
        with closing(sqlite3.connect(tmp_path / name)) as conn:
            dumps.append(list(conn.iterdump()))
    assert dumps[0] == dumps[1] and len(dumps[0]) > len(changes)
    profile = PROFILES["checkout"]
    assert list(samples(profile)) == list(samples(profile))
    first = list(logs._lines(profile, list(changes.values())))
    assert first == list(logs._lines(profile, list(changes.values())))
    assert len({c.service for c in changes.values()}) == len(SERVICE_NAMES)


def test_servers_json_names_the_incident_servers() -> None:
    config = json.loads((DOMAIN / "servers.json").read_text())["mcpServers"]
    assert set(config) == {"logs", "metrics", "deploys"}
    for name, spec in config.items():
        assert spec["command"] == "python" and spec["args"] == ["-m", f"servers.{name}"]
        assert spec["env"] == {} and "MUSTER_CALL_LOG" in spec["inheritEnv"]
    assert "MUSTER_APPROVAL_SECRET" in config["deploys"]["inheritEnv"]  # only the writer has it
    assert all("MUSTER_APPROVAL_SECRET" not in config[n]["inheritEnv"] for n in ("logs", "metrics"))
    assert "MUSTER_METRICS_*" in config["metrics"]["inheritEnv"]  # the mode comes from outside


def test_metrics_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MODE", "SLOW_S", "DIE_AFTER"):
        monkeypatch.delenv(f"MUSTER_METRICS_{name}", raising=False)
    settings = metrics.load_settings()
    assert (settings.mode, settings.slow_s, settings.die_after) == ("healthy", 90.0, 2)
    assert settings.slow_s > 60  # longer than a worker's default deadline (60 s)
    monkeypatch.setenv("MUSTER_METRICS_DIE_AFTER", "-1")
    with pytest.raises(ValueError, match="must not be negative"):
        metrics.load_settings()


# --- over stdio -------------------------------------------------------------------------------


@pytest.mark.integration
async def test_logs_search_and_error_summary(env: dict[str, Path], tmp_path: Path) -> None:
    async with stdio("logs", tmp_path / "err.txt") as s:
        assert {t.name for t in (await s.list_tools()).tools} == {"search_logs", "error_summary"}
        window = {"since": "2025-06-12T13:30:00Z", "until": "2025-06-12T14:30Z"}
        found = ok(await s.call_tool("search_logs", {
            **window, "service": "checkout", "level": "error", "text": "currency TypeError",
            "limit": 5}))
        assert found["returned"] == 5 and found["total"] > 100 and found["truncated"]
        lines = found["lines"]
        assert [x["ts"] for x in lines] == sorted((x["ts"] for x in lines), reverse=True)
        assert all(x["service"] == "checkout" and x["level"] == "ERROR" and x["status"] == 500
                   and x["version"] == "4.13.0" and "'currency'" in x["message"] for x in lines)
        deploy = ok(await s.call_tool("search_logs", {**window, "text": DEMO_CHANGE}))
        assert deploy["total"] == 1 and deploy["lines"][0]["ts"] == "2025-06-12T14:02:00Z"
        assert "4.12.7 -> 4.13.0" in deploy["lines"][0]["message"]
        early = ok(await s.call_tool("search_logs", {
            "service": "checkout", "text": "currency", "since": "2025-06-12T13:00Z",
            "until": "2025-06-12T14:03Z"}))
        assert early["total"] == 0  # nothing before the onset
        several = ok(await s.call_tool("search_logs", {**window, "level": "WARN,ERROR",
                                                       "limit": 100}))
        assert {x["level"] for x in several["lines"]} == {"WARN", "ERROR"}
        assert ok(await s.call_tool("search_logs", {**window, "text": "100%_"}))["total"] == 0
        summary = ok(await s.call_tool("error_summary", {
            "since": "2025-06-12T13:07Z", "until": "2025-06-12T14:07Z"}))
        top = summary["services"][0]
        assert top["service"] == "checkout" and len(summary["services"]) == len(SERVICE_NAMES)
        worst = top["top_errors"][0]
        assert worst["first_seen"].startswith("2025-06-12T14:03") and worst["versions"] == [
            "4.13.0"]
        assert "unknown level" in error(await s.call_tool("search_logs", {"level": "LOUD"}))
        assert "unknown service" in error(await s.call_tool("search_logs", {"service": "x"}))
        assert "limit must be between" in error(await s.call_tool("search_logs", {"limit": 0}))
        assert "ISO-8601" in error(await s.call_tool("error_summary", {"since": "noon"}))
        assert "must be before" in error(await s.call_tool("error_summary", {
            "since": "2025-06-12T14:00Z", "until": "2025-06-12T13:00Z"}))
    calls = read_calls(env["log"])
    assert len(calls) == 11 and {c["server"] for c in calls} == {"logs"}
    assert {c["pid"] for c in calls} != {os.getpid()}


@pytest.mark.integration
async def test_metrics_show_the_bad_deploy_week_over_week(
    env: dict[str, Path], tmp_path: Path
) -> None:
    async with stdio("metrics", tmp_path / "err.txt") as s:
        names = {t.name for t in (await s.list_tools()).tools}
        assert names == {"list_metrics", "query_metric", "compare_week_over_week"}
        listing = ok(await s.call_tool("list_metrics", {}))
        assert listing["services"] == list(SERVICE_NAMES)
        assert listing["data"]["until"] == "2025-06-12T15:00:00Z"
        series = ok(await s.call_tool("query_metric", {
            "service": "checkout", "metric": "error_rate", "since": "2025-06-12T13:50Z",
            "until": "2025-06-12T14:10Z"}))
        values = {p["t"][11:16]: p["value"] for p in series["points"]}
        assert series["step_minutes"] == 1 and len(values) == 20
        assert values["14:02"] < 0.01 < 0.15 < values["14:03"]  # deploy 14:02, 5xx from 14:03
        assert series["summary"]["max"] > 0.15 and series["summary"]["first"] < 0.01
        wide = ok(await s.call_tool("query_metric", {
            "service": "checkout", "metric": "latency_p95", "since": "2025-06-05T15:00Z"}))
        assert wide["step_minutes"] > 1 and len(wide["points"]) <= 120
        wow = ok(await s.call_tool("compare_week_over_week", {
            "service": "checkout", "since": "2025-06-12T14:03Z", "until": "2025-06-12T14:33Z"}))
        by_metric = {m["metric"]: m for m in wow["metrics"]}
        assert wow["week_before"]["since"] == "2025-06-05T14:03:00Z"
        assert by_metric["error_rate"]["change"] == "higher"
        assert by_metric["error_rate"]["mean_ratio"] > 50
        assert by_metric["requests"]["change"] == "similar"  # not a traffic spike
        quiet = ok(await s.call_tool("compare_week_over_week", {
            "service": "cart", "metric": "latency_p95", "since": "2025-06-12T08:35Z",
            "until": "2025-06-12T09:05Z"}))  # the false alarm of inc-23
        assert [m["change"] for m in quiet["metrics"]] == ["similar"]
        msg = error(await s.call_tool("compare_week_over_week", {
            "service": "checkout", "since": "2025-05-30T10:00Z", "until": "2025-05-30T11:00Z"}))
        assert "no data a week before" in msg
        assert "unknown metric" in error(await s.call_tool("query_metric", {
            "service": "checkout", "metric": "vibes"}))
    assert (tmp_path / "err.txt").read_text() == ""  # WARNING level: nothing logged


def rollback_args(change_id: str, key: str, *, approved: bool = True, ttl: float = 300.0,
                  for_change: str | None = None) -> dict[str, Any]:
    digest = action_digest(ROLLBACK, {"change_id": for_change or change_id,
                                      "idempotency_key": key})
    token = mint_token(digest, secret=SECRET, expires_at=time.time() + ttl) if approved else ""
    return {"change_id": change_id, "idempotency_key": key, "approval": token}


def rows(db: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    with closing(sqlite3.connect(db)) as conn:
        return (conn.execute("SELECT rollback_id, change_id, idempotency_key, requested_by"
                             " FROM rollbacks").fetchall(),
                conn.execute("SELECT change_id, reverts, from_value, to_value FROM changes"
                             " WHERE kind = 'rollback'").fetchall())


@pytest.mark.integration
async def test_rollback_needs_approval_and_happens_once(
    env: dict[str, Path], tmp_path: Path
) -> None:
    db = env["deploys"]
    async with stdio("deploys", tmp_path / "err.txt") as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert set(tools) == {"list_changes", "get_change", "rollback"}
        write = tools["rollback"].annotations
        assert write is not None and write.readOnlyHint is False and write.idempotentHint
        assert all((tools[n].annotations or write).readOnlyHint for n in ("list_changes",
                                                                          "get_change"))
        listed = ok(await s.call_tool("list_changes", {"service": "checkout",
                                                       "since": "2025-06-11T00:00Z"}))
        assert listed["changes"][0]["change_id"] == DEMO_CHANGE
        assert listed["changes"][0]["status"] == "live"
        assert [c["change_id"] for c in listed["changes"]][1:] == ["dep-checkout-20250611-1226"]
        assert listed["changes"][1]["status"] == "superseded"
        assert ok(await s.call_tool("get_change", {"change_id": DEMO_CHANGE}))["rollback"] == {
            "allowed": True, "refusal": None, "would_restore": "4.12.7"}

        refused = error(await s.call_tool("rollback", rollback_args(DEMO_CHANGE, "k1",
                                                                    approved=False)))
        assert "missing approval" in refused
        other = rollback_args(DEMO_CHANGE, "k1", for_change="dep-checkout-20250611-1226")
        assert "approval does not match" in error(await s.call_tool("rollback", other))
        late = rollback_args(DEMO_CHANGE, "k1", ttl=-5)
        assert "approval expired" in error(await s.call_tool("rollback", late))
        assert rows(db) == ([], [])

        first = ok(await s.call_tool("rollback", {**rollback_args(DEMO_CHANGE, "k1"),
                                                  "requested_by": "thread-1"}))
        assert first["replayed"] is False and first["status"] == "rolled_back"
        assert (first["restored"], first["replaced"]) == ("4.12.7", "4.13.0")
        done = rows(db)
        assert done == ([(first["rollback_id"], DEMO_CHANGE, "k1", "thread-1")],
                        [(first["rollback_id"], DEMO_CHANGE, "4.13.0", "4.12.7")])
        again = ok(await s.call_tool("rollback", rollback_args(DEMO_CHANGE, "k1")))
        assert again == {**first, "replayed": True}
        expired = ok(await s.call_tool("rollback", rollback_args(DEMO_CHANGE, "k1", ttl=-5)))
        assert expired == {**first, "replayed": True}  # a replay needs no fresh approval
        twice = error(await s.call_tool("rollback", rollback_args(DEMO_CHANGE, "k2")))
        assert "already rolled back" in twice and first["rollback_id"] in twice
        reused = rollback_args("dep-search-20250610-1315", "k1")
        assert "idempotency key reused" in error(await s.call_tool("rollback", reused))
        superseded = rollback_args("dep-checkout-20250611-1226", "k3")
        assert "no longer live" in error(await s.call_tool("rollback", superseded))
        of_rollback = rollback_args(first["rollback_id"], "k4")
        assert "is itself a rollback" in error(await s.call_tool("rollback", of_rollback))
        assert rows(db) == done

        state = ok(await s.call_tool("get_change", {"change_id": DEMO_CHANGE}))
        assert state["status"] == "rolled_back" and state["rolled_back_by"] == first[
            "rollback_id"]
        assert state["rollback"]["allowed"] is False
        latest = ok(await s.call_tool("list_changes", {"service": "checkout", "kind": "rollback"}))
        assert [c["reverts"] for c in latest["changes"]] == [DEMO_CHANGE]
    logged = [c for c in read_calls(env["log"]) if c["tool"] == "rollback"]
    assert len(logged) == 10 and {c["args"]["approval"] for c in logged} == {"", "<redacted>"}


@pytest.mark.integration
async def test_metrics_down(env: dict[str, Path], tmp_path: Path) -> None:
    async with stdio("metrics", tmp_path / "err.txt", MUSTER_METRICS_MODE="down") as s:
        assert len((await s.list_tools()).tools) == 3
        for tool, args in (("list_metrics", {}), ("query_metric", {"service": "checkout",
                                                                   "metric": "cpu"})):
            assert "metrics backend unreachable" in error(await s.call_tool(tool, args))
    assert len(read_calls(env["log"])) == 2


@pytest.mark.integration
async def test_metrics_slow_outlasts_a_deadline(env: dict[str, Path], tmp_path: Path) -> None:
    async with stdio("metrics", tmp_path / "err.txt", MUSTER_METRICS_MODE="slow",
                     MUSTER_METRICS_SLOW_S="0.5") as s:
        start = time.monotonic()
        with pytest.raises(McpError):  # a caller's deadline passes before the answer
            await s.call_tool("list_metrics", {}, read_timeout_seconds=timedelta(seconds=0.1))
        data = ok(await s.call_tool("list_metrics", {}))  # the answer does come, late
        assert time.monotonic() - start >= 0.5 and data["services"]


def _has_exited(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")  # zombie: exited, not yet reaped


@pytest.mark.integration
async def test_metrics_dies_mid_run(env: dict[str, Path], tmp_path: Path) -> None:
    errlog = tmp_path / "err.txt"
    async with stdio("metrics", errlog, MUSTER_METRICS_MODE="dies_mid_run",
                     MUSTER_METRICS_DIE_AFTER="2") as s:
        assert ok(await s.call_tool("list_metrics", {}))["services"]
        ok(await s.call_tool("query_metric", {"service": "search", "metric": "cpu"}))
        with pytest.raises(McpError, match="Connection closed"):
            await s.call_tool("list_metrics", {})
        pid = read_calls(env["log"])[-1]["pid"]
        with anyio.fail_after(HANG_TIMEOUT_S):  # the server process exits: wait for that
            while True:
                if _has_exited(pid):
                    break
                await anyio.sleep(0.02)
    assert "dies_mid_run mode, exiting on call 3" in errlog.read_text()
    assert len(read_calls(env["log"])) == 3


@pytest.mark.integration
def test_metrics_unknown_mode_exits(env: dict[str, Path]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "servers.metrics"],
        env={**os.environ, "MUSTER_METRICS_MODE": "sideways"}, cwd=ROOT,
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=HANG_TIMEOUT_S,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert "unknown MUSTER_METRICS_MODE='sideways'" in proc.stderr


def test_a_file_seeded_from_another_world_is_seeded_again_and_a_rollback_stays_otherwise(
    tmp_path: Path,
) -> None:
    """An old `var/deploys.sqlite` (another version of the stories) must not serve stale
    evidence; the same world's file keeps what happened to it (a rollback)."""
    path = tmp_path / "deploys.sqlite"
    deploys.ensure_database(path)
    with closing(sqlite3.connect(path)) as conn:
        [change] = conn.execute("SELECT change_id FROM changes LIMIT 1").fetchone()
        count = conn.execute("SELECT COUNT(*) FROM changes").fetchone()[0]
        conn.execute(
            "INSERT INTO rollbacks (rollback_id, change_id, idempotency_key, args_digest,"
            " created_at, result_json) VALUES ('rb-x', ?, 'k', 'd', 't', '{}')",
            (change,),
        )
        conn.execute("DELETE FROM changes WHERE change_id != ?", (change,))  # stale data
        conn.commit()
    deploys.ensure_database(path)  # the same world: nothing is seeded again
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT COUNT(*) FROM changes").fetchone()[0] == 1
        assert conn.execute("SELECT COUNT(*) FROM rollbacks").fetchone()[0] == 1
        conn.execute("UPDATE seeded_from SET world = 'an older world'")
        conn.commit()
    deploys.ensure_database(path)
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT COUNT(*) FROM changes").fetchone()[0] == count
        assert conn.execute("SELECT COUNT(*) FROM rollbacks").fetchone()[0] == 0
        [world] = conn.execute("SELECT world FROM seeded_from").fetchone()
    assert world == incident_store.world_version()
