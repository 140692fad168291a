"""The fault matrix (issue 24): every worker of both packs failing in turn, by each way a
worker fails (a tool error, a timeout, an unavailable model, a spent budget), on every
ticket of both packs' small eval sets: no step raises, and every stop of every thread has
an answer (the answer so far while it waits, the final one at its end), never `failed` by
its own answer step; a degraded answer always asks for a human.

One runtime per pack and fault (real stdio MCP servers and the SQLite checkpointer, shared
by all of its threads), threads run concurrently. Which worker fails is read from the
thread id (`fm.<worker>.<n>`) by its model and by the planner, through LangGraph's own
`get_config()`; the faults are the ones a real model and real tools give: a model that calls
its tool with arguments the server refuses, a model slower than its packet's timeout, a
provider that cannot be reached, a model that never stops calling tools.
"""

from __future__ import annotations

import asyncio
import json
import os
import traceback
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from langgraph.config import get_config
from langgraph.types import Command

from checkpoints.threads import status_of, thread_config
from graph.app.runtime import MusterRuntime, open_runtime, stream_run
from graph.domains import load_domain
from graph.synthesize import compose_answer
from tests.conftest import PROJECT_ROOT, MusterEnv
from workers.contracts import Answer, Handoff
from workers.control_tools import CONTROL_TOOL_NAMES
from workers.local_models import OfflineChatModel
from workers.roster import Roster

pytestmark = pytest.mark.integration

FAULTS = ("tool_error", "timeout", "unavailable", "budget")
PACKS = {
    "support": PROJECT_ROOT / "domains" / "support" / "tickets.jsonl",
    "incidents": PROJECT_ROOT / "domains" / "incidents" / "incidents.jsonl",
}
CLARIFICATION = {"support": "It is order #12345", "incidents": "It is checkout"}
"""How a human answers a worker's question in each pack."""
TIMEOUT_S = 0.3
"""The failing worker's packet timeout in the timeout fault (its model takes longer)."""
CONCURRENCY = 16
MAX_STOPS = 8
"""More stops than any thread of the sets has: a thread still waiting after them loops."""


def fault_of_thread() -> tuple[str, str]:
    """The worker this thread's fault hits and the fault, from its id
    (`fm.<worker>.<fault>.<n>`); two empty strings on any other thread."""
    thread = str(get_config().get("configurable", {}).get("thread_id", ""))
    parts = thread.split(".")
    return (parts[1], parts[2]) if thread.startswith("fm.") and len(parts) == 4 else ("", "")


def junk_call(tools: list[dict[str, Any]], turn: int) -> AIMessage:
    """A call of the first offered tool with arguments no server knows (turn-numbered, so
    the loop guard does not end it first)."""
    offered = [t for t in tools if t["function"]["name"] not in CONTROL_TOOL_NAMES]
    if not offered:
        return AIMessage(content="nothing to call")
    function = offered[0]["function"]
    properties = (function.get("parameters") or {}).get("properties") or {}
    args = {
        name: (-1 - turn if spec.get("type") == "integer" else f"zz-none-{turn}")
        for name, spec in properties.items()
    }
    return AIMessage(
        content="", tool_calls=[{"name": function["name"], "args": args, "id": f"j{turn}"}]
    )


class FaultyModel(OfflineChatModel):
    """The offline model, failing as the thread's fault says when it is the thread's target
    worker's model."""

    worker: str

    def fault(self) -> str:
        target, fault = fault_of_thread()
        return fault if target == self.worker else ""

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        if self.fault() == "unavailable":
            raise ConnectionError("the model provider cannot be reached (fault matrix)")
        if self.fault() == "timeout":
            await asyncio.sleep(TIMEOUT_S * 10)
        return await super()._agenerate(messages, stop, run_manager, **kw)

    def _reply(self, messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
        fault = self.fault()
        if fault not in ("tool_error", "budget"):
            return super()._reply(messages, tools)
        turn = sum(isinstance(m, AIMessage) for m in messages)
        if fault == "tool_error" and turn >= 1:
            return AIMessage(content="The lookup failed; nothing was found.")
        return junk_call(tools, turn)


def faulty_planner(base: Any) -> Any:
    """The pack's planner, with the target worker's packets cut to fail as the thread's
    fault needs: a short timeout (its model is slower), or a one-step budget."""

    def plan(request: str, roster: Roster) -> list[Handoff]:
        packets: list[Handoff] = base(request, roster)
        target, fault = fault_of_thread()
        cut = {"timeout": {"timeout_s": TIMEOUT_S}, "budget": {"max_steps": 1}}.get(fault)
        if not cut:
            return packets
        return [p.model_copy(update=cut) if p.recipient == target else p for p in packets]

    return plan


def targets(packets: list[Handoff], n: int, fault: str) -> list[str]:
    """The workers that fail on ticket `n`: in the default matrix one of its plan's workers,
    in turn (ticket by ticket, shifted per fault), so every worker of a pack fails by every
    fault on many tickets and every ticket sees every fault; with `MUSTER_FAULT_MATRIX=full`
    every worker of its plan, each on its own thread (about four times the runs). A ticket
    with no plan still runs, with nothing to fail."""
    planned = sorted({p.recipient for p in packets})
    if not planned:
        return ["none"]
    if os.environ.get("MUSTER_FAULT_MATRIX") == "full":
        return planned
    return [planned[(n + FAULTS.index(fault)) % len(planned)]]


def requests(pack: str) -> list[str]:
    lines = PACKS[pack].read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["request"] for line in lines if line.strip()]


def check_answer(answer: Any, where: str) -> None:
    assert isinstance(answer, Answer) and answer.text.strip(), f"{where}: no answer"
    if answer.degraded or answer.status == "failed":
        assert answer.needs_human, f"{where}: degraded without a human"


async def drive(runtime: MusterRuntime, pack: str, thread: str, request: str) -> int:
    """Run one thread to its end, answering every stop; return how many stops it made."""
    await stream_run(runtime, thread, {"request": request})
    for stops in range(MAX_STOPS):
        snapshot = await runtime.graph.aget_state(thread_config(thread))
        if not snapshot.interrupts:
            assert status_of(snapshot) == "done", f"{thread}: {status_of(snapshot)}"
            check_answer(snapshot.values.get("answer"), f"{thread} at its end")
            return stops
        check_answer(compose_answer(dict(snapshot.values)), f"{thread} at stop {stops}")  # type: ignore[arg-type]
        pending = snapshot.interrupts[0]
        value: Any = CLARIFICATION[pack]
        if pending.value.get("kind") == "approval":
            value = {"approved": True, "digest": pending.value["digest"], "by": "lead"}
        await stream_run(runtime, thread, Command(resume={pending.id: value}))
    raise AssertionError(f"{thread}: still waiting after {MAX_STOPS} stops")


@pytest.mark.parametrize(
    ("pack", "faults"),
    [
        ("support", ("tool_error", "timeout")),
        ("support", ("unavailable", "budget")),
        ("incidents", FAULTS),
    ],
)
async def test_every_worker_failing_in_turn_leaves_an_answer_at_every_stop(
    muster_env: MusterEnv,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    pack: str,
    faults: tuple[str, ...],
) -> None:
    monkeypatch.setenv("MUSTER_DOMAIN", pack)
    monkeypatch.setenv("MUSTER_DEPLOYS_DB", str(tmp_path / "deploys.sqlite"))
    domain = load_domain(pack)
    roster = domain.roster
    models: dict[str, FaultyModel] = {}

    def factory(worker: str) -> FaultyModel:
        return models.setdefault(worker, FaultyModel(worker=worker))

    runs = [
        (f"fm.{worker}.{fault}.{n}", request)
        for fault in faults
        for n, request in enumerate(requests(pack))
        for worker in targets(domain.planner(request, roster), n, fault)
    ]
    assert len(runs) >= len(requests(pack)) * len(faults)
    failures: list[str] = []
    stops: list[int] = []
    failed_reports = [0]
    gate = asyncio.Semaphore(CONCURRENCY)
    async with open_runtime(
        db=muster_env.checkpoint_db,
        models=factory,
        planner=faulty_planner(domain.planner),
        roster=roster,
    ) as runtime:

        async def one(thread: str, request: str) -> None:
            async with gate:
                try:
                    stops.append(await drive(runtime, pack, thread, request))
                    values = (await runtime.graph.aget_state(thread_config(thread))).values
                    failed_reports[0] += any(
                        r.status == "failed" for r in values.get("reports") or []
                    )
                except Exception:
                    failures.append(f"{thread} ({request[:60]}): {traceback.format_exc()}")

        await asyncio.gather(*(one(thread, request) for thread, request in runs))
    assert not failures, f"{len(failures)} of {len(runs)} threads:\n" + "\n".join(failures[:3])
    assert len(stops) == len(runs)
    # The faults did hit: the failing workers' reports failed (or a cached fallback, a
    # reassignment or an escalation stood in for them).
    assert failed_reports[0] >= len(runs) // 2, failed_reports
