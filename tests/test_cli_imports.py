"""Structural, not a timing (bench/cli_start.py times it): `muster threads` and `muster show`
read a thread without loading what only running one needs (issue 13: both within 1 s).

The MCP SDK alone is about a second of imports; it loads with the hub (`workers.hub.hub`),
which the reading commands never start. Batch, eval and replay (pydantic-evals, pydantic-ai)
and the fleet (Procrastinate) load only when they run. `muster --help` loading no LangGraph
at all is held by tests/test_first_hour.py.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

from checkpoints.threads import thread_config
from graph.app.runtime import open_store
from tests.conftest import HANG_TIMEOUT_S, PROJECT_ROOT, MusterEnv

LOADED_ONLY_TO_RUN = (
    "mcp",
    "langchain_mcp_adapters",
    "workers.hub.hub",
    "pydantic_ai",
    "pydantic_evals",
    "procrastinate",
    "graph.app.batch",
    "graph.app.eval",
    "graph.app.replay",
    "graph.app.fleet",
)
"""Modules (and their submodules) that `threads` and `show` must not import."""

THREAD = "t-imports"

PROBE = """
import contextlib, io, json, sys
from graph.app.cli import main

with contextlib.redirect_stdout(io.StringIO()) as out:
    codes = [main(["threads"]), main(["show", {thread!r}])]
heavy = {heavy!r}
loaded = sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy))
print(json.dumps({{"codes": codes, "loaded": loaded, "out": out.getvalue()}}))
"""


async def seed_thread(thread_id: str) -> None:
    """A thread holding a ticket and nothing else (no server starts): enough to list and
    show, through the same compiled graph the commands read with."""
    async with open_store() as (graph, _saver):
        await graph.aupdate_state(
            thread_config(thread_id),
            {"request": "Order #12345 was charged twice"},
            as_node="__start__",
        )


def test_threads_and_show_load_no_mcp_sdk(muster_env: MusterEnv) -> None:
    muster_env.checkpoint_db.touch()  # `open_store` reads an existing store only
    asyncio.run(seed_thread(THREAD))
    probe = PROBE.format(thread=THREAD, heavy=LOADED_ONLY_TO_RUN)
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        timeout=HANG_TIMEOUT_S,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.splitlines()[-1])
    assert report["codes"] == [0, 0], report["out"]
    assert THREAD in report["out"] and "charged twice" in report["out"]  # it read the thread
    assert report["loaded"] == []
