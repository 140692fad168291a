"""Tools are writes until proven reads, and what a server advertises has limits.

Units check the rules on plain ``Tool`` definitions; the integration tests run the hostile
fixture server (``tests/fixtures/hostile_server.py``) as a real stdio subprocess.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
import pytest_asyncio

from tests.fixtures.hostile_server import BULK, LONG_NAME, regex_length
from workers.contracts import Handoff
from workers.hub import CallOutcome, ToolHub, parse_servers_config
from workers.hub.admission import (
    MAX_DESCRIPTION_CHARS,
    MAX_SCHEMA_BYTES,
    MAX_SCHEMA_DEPTH,
    MAX_TOOL_NAME_CHARS,
    MAX_TOOLS_PER_SERVER,
    check_input_schema,
)
from workers.hub.catalogue import CatalogueEntry, register_tools
from workers.hub.servers_config import (
    DEFAULT_SERVERS_FILE,
    ServersConfigError,
    StdioServerConfig,
)
from workers.local_models import OfflineChatModel
from workers.loop import run_worker
from workers.roster import load_roster

module_loop = pytest.mark.asyncio(loop_scope="module")

HOSTILE_SERVER = str(Path(__file__).parent / "fixtures" / "hostile_server.py")
OBJ: dict[str, Any] = {"type": "object"}


def _read(name: str, description: str = "", schema: dict[str, Any] | None = None) -> types.Tool:
    return types.Tool(
        name=name,
        description=description,
        inputSchema=OBJ if schema is None else schema,
        annotations=types.ToolAnnotations(readOnlyHint=True),
    )


def _nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(levels - 1):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


# --- units ------------------------------------------------------------------------------


def test_over_limit_definitions_are_refused_one_by_one() -> None:
    catalogue: dict[str, CatalogueEntry] = {}
    tools = [
        _read("ok"),
        _read("n" * (MAX_TOOL_NAME_CHARS + 1)),
        _read("long_description", "d" * (MAX_DESCRIPTION_CHARS + 1)),
        _read("deep", schema={"type": "object", "properties": {"x": _nested(MAX_SCHEMA_DEPTH)}}),
        _read("malformed", schema={"type": "object", "properties": []}),
        _read("at_the_limits", "d" * MAX_DESCRIPTION_CHARS, _nested(MAX_SCHEMA_DEPTH // 2)),
    ]
    refused = register_tools(catalogue, "s", tools, ())
    assert sorted(catalogue) == ["s.at_the_limits", "s.ok"]
    assert len(refused) == 4
    name_line = next(line for line in refused if line.startswith("'s.nnn"))
    assert f"({len('s.') + MAX_TOOL_NAME_CHARS + 1} chars)" in name_line and len(name_line) < 300
    assert "characters long" in name_line
    assert any(line.startswith("'s.long_description': description is") for line in refused)
    assert any(line.startswith("'s.deep': input schema is nested") for line in refused)
    assert (
        "'s.malformed': input schema is malformed: $.properties must be an object, not []"
        in refused
    )


def test_tools_beyond_the_count_limit_are_refused_each() -> None:
    catalogue: dict[str, CatalogueEntry] = {}
    tools = [_read(f"t{i}") for i in range(MAX_TOOLS_PER_SERVER + 5)]
    refused = register_tools(catalogue, "s", tools, ())
    assert len(catalogue) == MAX_TOOLS_PER_SERVER and "s.t0" in catalogue
    assert [line.split(":")[0] for line in refused] == [
        f"'s.t{i}'" for i in range(MAX_TOOLS_PER_SERVER, MAX_TOOLS_PER_SERVER + 5)
    ]
    assert all(f"more than {MAX_TOOLS_PER_SERVER} tools" in line for line in refused)


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "object"}, None),
        (
            {
                "type": "object",
                "properties": {
                    "a": {"anyOf": [{"type": "string"}, {"type": ["integer", "null"]}]},
                    "b": {"type": "array", "items": {"type": "string", "pattern": "^(a+)+$"}},
                    "c": True,
                },
                "required": ["a"],
                "additionalProperties": False,
                "$defs": {"d": {"type": "object"}},
            },
            None,
        ),
        ({"type": "string"}, 'type must be "object"'),
        ({"properties": {}}, 'type must be "object"'),
        ({"type": "object", "properties": []}, "$.properties must be an object"),
        ({"type": "object", "properties": {"a": 5}}, "$.properties.a must be a schema"),
        ({"type": "object", "required": "a"}, "$.required must be a list"),
        ({"type": "object", "properties": {"a": {"type": "str"}}}, "$.properties.a.type"),
        ({"type": "object", "anyOf": []}, "$.anyOf must be a non-empty list"),
        ({"type": "object", "items": [{"type": 1}]}, "$.items[0].type"),
        ({"type": "object", "description": {"x": 1}}, "$.description must be a string"),
        (_nested(MAX_SCHEMA_DEPTH + 1), f"nested more than {MAX_SCHEMA_DEPTH} levels"),
        ({"type": "object", "default": [[[[[[[[]]]]]]]] * 1}, None),
        ({"type": "object", "description": "z" * MAX_SCHEMA_BYTES}, "bytes of JSON"),
    ],
)
def test_input_schema_checks(schema: dict[str, Any], problem: str | None) -> None:
    found = check_input_schema(schema)
    assert (found is None) if problem is None else (found is not None and problem in found)


def test_a_deep_schema_does_not_recurse() -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    assert check_input_schema({"type": "object", "default": deep}) == (
        f"is nested more than {MAX_SCHEMA_DEPTH} levels deep"
    )


def test_a_tool_in_both_lists_is_a_config_error() -> None:
    both = {"command": "x", "writeTools": ["t"], "readOnlyTools": ["t"]}
    with pytest.raises(ServersConfigError, match="both writeTools and readOnlyTools"):
        parse_servers_config({"mcpServers": {"a": both}})
    cfg = parse_servers_config({"mcpServers": {"a": {"command": "x", "readOnlyTools": ["t"]}}})
    assert cfg.mcp_servers["a"].read_only_tools == ["t"]


# --- the hostile server, for real --------------------------------------------------------


def hostile(log: Path, **env: str) -> dict[str, Any]:
    return {
        "command": "python",
        "args": [HOSTILE_SERVER],
        "env": {"HOSTILE_CALL_LOG": str(log), **env},
        "readOnlyTools": ["shout"],
    }


def calls(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hub(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[ToolHub]:
    log = tmp_path_factory.mktemp("hostile") / "calls.txt"
    cfg = parse_servers_config({"mcpServers": {"hostile": hostile(log)}})
    async with await ToolHub.connect(cfg, call_timeout_s=10.0) as h:
        yield h


def _log(hub: ToolHub) -> Path:
    server = hub.config.mcp_servers["hostile"]
    assert isinstance(server, StdioServerConfig)
    return Path(server.env["HOSTILE_CALL_LOG"])


@module_loop
@pytest.mark.integration
async def test_an_unannotated_tool_is_never_offered_nor_run_for_a_worker(hub: ToolHub) -> None:
    offered = [spec.name for spec in hub.specs(["hostile."])]
    assert offered == ["hostile.lookup", "hostile.regex", "hostile.shout"]  # shout: vouched for
    assert [spec.name for spec in hub.action_specs()] == ["hostile.drop_table"]
    for allow in (["hostile."], ["hostile.drop_table"]):
        args = {"text": "DROP TABLE customers"}
        result = await hub.call("hostile.drop_table", args, allow)
        assert result.outcome == CallOutcome.NOT_ALLOWED
        assert "not marked read-only" in result.text
    assert "drop_table" not in calls(_log(hub))
    assert (await hub.call("hostile.shout", {"text": "hi"}, ["hostile."])).text == "HI"


@module_loop
@pytest.mark.integration
async def test_over_limit_and_malformed_definitions_are_refused_per_tool(hub: ToolHub) -> None:
    why = {line.split("': ", 1)[0] + "'": line.split("': ", 1)[1] for line in hub.refused}
    assert len(why) == 6
    assert why["'hostile.huge_description'"].startswith("description is 1000000 characters")
    assert why["'hostile.deep_schema'"].startswith("input schema is nested more than")
    assert why["'hostile.huge_schema'"].startswith("input schema is ")
    assert "bytes of JSON" in why["'hostile.huge_schema'"]
    assert why["'hostile.malformed_schema'"] == (
        "input schema is malformed: $.properties must be an object, not []"
    )
    assert why["'hostile.not_an_object'"].startswith("input schema is malformed: type must be")
    [long_name] = [key for key in why if key.startswith("'hostile.nnnn")]
    assert f"({len('hostile.') + len(LONG_NAME)} chars)" in long_name
    assert "characters long" in why[long_name]
    assert all(len(line) <= 300 for line in hub.refused)
    assert hub.health()["hostile"].up


@module_loop
@pytest.mark.integration
async def test_a_hostile_output_schema_cannot_stall_the_event_loop(hub: ToolHub) -> None:
    beats: list[float] = []

    async def heartbeat() -> None:
        while True:
            beats.append(time.monotonic())
            await asyncio.sleep(0.01)

    ticking = asyncio.create_task(heartbeat())
    try:
        await asyncio.sleep(0.05)
        result = await hub.call("hostile.regex", {}, ["hostile."])
        await asyncio.sleep(0.05)
    finally:
        ticking.cancel()
        await asyncio.gather(ticking, return_exceptions=True)
    assert result.ok and result.text == "a" * regex_length() + "!"
    longest_gap = max(b - a for a, b in zip(beats, beats[1:], strict=False))
    # Validating that result against its schema's ^(a+)+$ on the loop stalls it for seconds.
    assert longest_gap < 0.5, f"the event loop stalled for {longest_gap:.2f}s"


@pytest.mark.asyncio
@pytest.mark.integration
async def test_a_server_listing_thousands_of_tools_keeps_only_the_first(tmp_path: Path) -> None:
    cfg = parse_servers_config(
        {"mcpServers": {"hostile": hostile(tmp_path / "calls.txt", HOSTILE_TOOLS="many")}}
    )
    async with await ToolHub.connect(cfg, call_timeout_s=10.0) as hub:
        too_many = [line for line in hub.refused if f"more than {MAX_TOOLS_PER_SERVER}" in line]
        assert len(too_many) == 10 + BULK - MAX_TOOLS_PER_SERVER  # every one, by name
        assert too_many[-1].startswith(f"'hostile.t{BULK - 1:04d}'")
        offered = [spec.name for spec in hub.specs(["hostile."])]
        assert len(offered) == 3 + (MAX_TOOLS_PER_SERVER - 10)  # 6 refused, 1 write
        last = f"hostile.t{BULK - 1:04d}"
        assert (await hub.call(last, {}, ["hostile."])).outcome == CallOutcome.UNKNOWN_TOOL
        assert (await hub.call("hostile.t0000", {"text": "x"}, ["hostile."])).ok


@pytest.mark.asyncio
@pytest.mark.integration
async def test_the_reference_time_server_marks_its_reads() -> None:
    time_server = json.loads(DEFAULT_SERVERS_FILE.read_text())["mcpServers"]["time"]
    cfg = parse_servers_config({"mcpServers": {"time": time_server}})
    async with await ToolHub.connect(cfg) as hub:
        assert [s.name for s in hub.specs(["time."])] == [
            "time.convert_time",
            "time.get_current_time",
        ]
        assert hub.refused == []


@module_loop
@pytest.mark.integration
async def test_a_worker_granted_the_hostile_server_still_works(hub: ToolHub) -> None:
    # One malformed schema once failed the whole comms worker; now that tool is just absent.
    packet = Handoff(
        id="p-1",
        recipient="comms",
        objective="Look the record up.",
        inputs={"text": "customers"},
        tool_allow=("hostile.",),
    )
    spec = load_roster().workers["comms"]
    report = await run_worker(packet, spec=spec, hub=hub, model=OfflineChatModel())
    assert report.status == "ok", report.note
    used = {finding.tool for finding in report.findings}
    assert "hostile.lookup" in used and "hostile.drop_table" not in used
    assert "drop_table" not in calls(_log(hub))
