"""A server nobody here wrote: the reference `mcp-server-time` from PyPI, started from the
standard mcpServers config and granted to the "scheduling" worker by the roster alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph.app.runtime import open_runtime, stream_run
from tests.conftest import MusterEnv, by_worker, run_ticket
from workers.hub.servers_config import DEFAULT_SERVERS_FILE, load_servers_config
from workers.roster import DEFAULT_ROSTER_FILE, load_roster

TICKET = "Please schedule a callback, I am in Europe/Berlin. What time is it there now?"


@pytest.mark.integration
async def test_scheduling_worker_uses_the_reference_time_server(muster_env: MusterEnv) -> None:
    values, belts = await run_ticket(muster_env, TICKET)
    scheduling = by_worker(values["reports"])["scheduling"][0]
    assert scheduling.status == "ok"
    [finding] = scheduling.findings
    assert finding.tool == "time.get_current_time"
    assert json.loads(finding.observation)["timezone"] == "Europe/Berlin"
    assert belts["scheduling"] == ["time.convert_time", "time.get_current_time"]
    others = [tool for worker, tools in belts.items() if worker != "scheduling" for tool in tools]
    assert not any(tool.startswith("time.") for tool in others)


@pytest.mark.integration
async def test_a_renamed_server_is_granted_by_configuration_alone(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Same package, registered under another name, granted through a roster file: no code.
    servers = json.loads(DEFAULT_SERVERS_FILE.read_text())
    servers["mcpServers"]["clock"] = servers["mcpServers"].pop("time")
    servers_file = tmp_path / "servers.json"
    servers_file.write_text(json.dumps(servers))
    roster = json.loads(DEFAULT_ROSTER_FILE.read_text())
    roster["workers"]["scheduling"]["privileges"] = ["clock.get_current_time"]
    roster_file = tmp_path / "roster.json"
    roster_file.write_text(json.dumps(roster))
    monkeypatch.setenv("MUSTER_ROSTER", str(roster_file))

    assert load_roster().workers["scheduling"].privileges == ("clock.get_current_time",)

    async with open_runtime(
        db=muster_env.checkpoint_db, servers=load_servers_config(servers_file)
    ) as runtime:
        values = await stream_run(runtime, "clock-1", {"request": TICKET})
        assert [s.name for s in runtime.services.hub.specs(("clock.",))] == [
            "clock.convert_time",
            "clock.get_current_time",
        ]
    scheduling = by_worker(values["reports"])["scheduling"][0]
    assert [f.tool for f in scheduling.findings] == ["clock.get_current_time"]


def process_environment(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


@pytest.mark.integration
async def test_servers_see_only_the_environment_they_are_granted(
    muster_env: MusterEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-servers")
    # Every server at once (as Studio and the fleet start them), to read each one's environment.
    async with open_runtime(db=muster_env.checkpoint_db, servers_on_demand=False) as runtime:
        pids = runtime.services.hub.server_pids()
        envs = {name: process_environment(pid) for name, pid in pids.items() if pid}
    assert set(envs) == {"orders", "kb", "policy", "time"}
    assert "MUSTER_APPROVAL_SECRET" in envs["orders"]  # the one server that verifies tokens
    for name in ("kb", "policy", "time"):
        assert "MUSTER_APPROVAL_SECRET" not in envs[name], name
    assert not any("OPENAI_API_KEY" in env for env in envs.values())
    assert not any(key.startswith("MUSTER_") for key in envs["time"])  # third party: nothing
    assert envs["policy"]["MUSTER_POLICY_MODE"] == "healthy"
