"""The `dispatch` stage: one worker on one `Send` packet, returning `{"reports": [report]}`.

`send_packets` writes the `Send`s (used by `plan` for the first wave and by the barrier for
later ones): each packet carries its prerequisites' findings, and its `Send` timeout is its
own limit cut to the time the run's deadline leaves, so work in flight is cancelled when
the deadline passes.

The worker loop turns everything a tool or model can do into a typed `Report`. Two things
escape it and are caught here by LangGraph's own node `error_handler`, so a failing branch
never cancels its siblings: the packet's `Send` timeout (`NodeTimeoutError` → `timeout`) and
a bug that raises inside a worker (→ `crashed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from langgraph.config import get_config
from langgraph.constants import CONFIG_KEY_CHECKPOINTER
from langgraph.errors import NodeError, NodeTimeoutError
from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from checkpoints.announce import when_saved
from graph.action_seal import seal_key_off_loop, sealed
from graph.retries import retries_left
from graph.services import Services, services_for, superstep
from graph.state import MusterState, current_reports, satisfying_report
from workers.contracts import Handoff, Report
from workers.loop import run_worker


def with_dependency_findings(packet: Handoff, state: MusterState) -> Handoff:
    """A dependent packet receives its prerequisites' findings in its inputs."""
    if not packet.depends_on:
        return packet
    current = current_reports(state.get("reports") or [])
    inputs = dict(packet.inputs)
    for dependency in packet.depends_on:
        report = satisfying_report(dependency, current)
        if report is None:
            continue
        for finding in report.findings:
            inputs[f"{dependency}.{finding.id}"] = f"{finding.tool}: {finding.observation[:2000]}"
    return packet.model_copy(update={"inputs": inputs})


def send_packets(
    packets: Sequence[Handoff], state: MusterState, services: Services | None
) -> list[Send]:
    """One `Send("dispatch", packet)` per packet, with dependency findings and a timeout."""
    remaining = services.limits.remaining_s(state) if services is not None else None
    return [
        Send(
            "dispatch",
            with_dependency_findings(p, state),
            timeout=p.timeout_s if remaining is None else max(0.05, min(p.timeout_s, remaining)),
        )
        for p in packets
    ]


async def dispatch(packet: Handoff, runtime: Runtime[Services]) -> dict[str, Any]:
    """Run the packet's worker and return its report for the `reports` reducer."""
    services = await services_for(runtime)
    spec = services.roster.get(packet.recipient)
    step = superstep()
    trace = services.trace
    fingerprint = packet.fingerprint()

    async def on_step(event: dict[str, Any]) -> None:
        if trace is not None:
            trace.emit(
                "worker_step",
                superstep=step,
                worker=packet.recipient,
                packet_id=packet.id,
                packet=fingerprint,
                **event,
            )

    if spec is None:  # validate_plan refuses this; a hand-built packet could still carry it
        report = Report(
            packet_id=packet.id,
            worker=packet.recipient,
            objective=packet.objective,
            status="failed",
            reason="refused",
            note=f"no worker named {packet.recipient!r} is on the roster",
        )
    else:
        report = await run_worker(
            packet,
            spec=spec,
            hub=services.hub,
            model=services.models(packet.recipient),
            on_step=on_step,
            health=services.model_health,
            # Transient model failures raise for the node's RetryPolicy, but on its last
            # attempt, which reports them (graph/retries.py).
            retry_transient=retries_left(_attempt(runtime)),
        )
    # "Finished" goes to the trace only once the report is in the store: a process killed
    # after that line never runs this worker again (checkpoints/announce.py).
    if trace is not None:
        info = runtime.execution_info
        when_saved(
            # The running graph's saver, under a private key: tests/test_pinned_internals.py.
            get_config().get("configurable", {}).get(CONFIG_KEY_CHECKPOINTER),
            info.task_id if info is not None else None,
            partial(
                trace.emit,
                "node",
                node="dispatch",
                superstep=step,
                worker=packet.recipient,
                packet_id=packet.id,
                packet=fingerprint,
                outcome=report.status,
                reason=report.reason,
                duration_ms=report.duration_ms,
            ),
        )
    if trace is not None:  # which traced run wrote it: a report reads back to its trace
        report = report.model_copy(update={"run_id": trace.run_id})
    if report.proposed_actions:  # sealed as they enter the state (graph/action_seal.py)
        thread = str(get_config().get("configurable", {}).get("thread_id", ""))
        key = await seal_key_off_loop()
        report = report.model_copy(
            update={"proposed_actions": [sealed(thread, a, key) for a in report.proposed_actions]}
        )
    return {"reports": [report]}


def _attempt(runtime: Runtime[Services]) -> int:
    """Which run of this task this is (1-based), as LangGraph's retry counts it."""
    info = runtime.execution_info
    return info.node_attempt if info is not None else 1


def timeout_note(limit_s: float, packet_timeout_s: float) -> str:
    """Why a branch stopped, and after how long (rounded): its own timeout, or the run's
    deadline when that came first (the branch's wait is cut to it: `RunLimits.cut`)."""
    if limit_s < packet_timeout_s - 0.05:
        return f"stopped after {limit_s:.1f}s: the run's deadline passed first"
    return f"stopped after {limit_s:.1f}s: its {packet_timeout_s:g}s packet timeout"


async def dispatch_failed(
    packet: Handoff, error: NodeError, runtime: Runtime[Services]
) -> Command[str]:
    """The `dispatch` error handler: the branch's failure becomes its report.

    It routes to `collect` itself: the handler replaces the failed node, whose own
    `dispatch → collect` edge is not followed, so a lone failing branch would otherwise end
    the run without an answer."""
    cause = error.error
    timed_out = isinstance(cause, NodeTimeoutError)
    report = Report(
        packet_id=packet.id,
        worker=packet.recipient,
        objective=packet.objective,
        status="failed",
        reason="timeout" if timed_out else "crashed",
        note=(
            timeout_note(float(getattr(cause, "timeout", packet.timeout_s)), packet.timeout_s)
            if timed_out
            else f"worker raised {type(cause).__name__}: {cause}"
        ),
        duration_ms=round(getattr(cause, "elapsed", 0.0) * 1000, 1),
        attempt=packet.attempt,
    )
    services = await services_for(runtime)
    services.trace_node(
        "dispatch",
        worker=packet.recipient,
        packet_id=packet.id,
        packet=packet.fingerprint(),
        outcome="failed",
        reason=report.reason,
    )
    return Command(update={"reports": [report]}, goto="collect")
