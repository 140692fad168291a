"""What the commands that run a thread share: their options checked first, the run with
signal draining, the result printed and its exit code, the errors for an unknown thread."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

from langgraph.errors import GraphDrained
from langgraph.runtime import RunControl
from langgraph.types import Command

from checkpoints.threads import thread_config
from graph.app.hints import Carried
from graph.app.options import ExitCode, MusterOptions
from graph.app.progress import Progress
from graph.app.render import print_result
from graph.app.runtime import MusterRuntime, stream_run
from graph.app.scenarios import SCENARIOS
from graph.app.signals import SignalDrain
from graph.domains import pack_for_state
from graph.services import Services
from graph.versions import changed_versions, current_versions, resume_check
from workers.errors import MusterError
from workers.model_health import preflight

COMMAND_STARTED = time.monotonic()
"""When this command began (its modules load only once a command runs): `--json`'s
`totals.duration_s` counts from here."""


def emit_result(
    args: argparse.Namespace,
    thread_id: str,
    values: dict[str, Any],
    waiting: bool,
    interrupts: Sequence[Any] = (),
) -> ExitCode:
    """Print the answer (text or JSON) and return the exit code; a waiting thread ends with
    what waits and the command that answers it (`interrupts`: its pending interrupts)."""
    print_result(
        thread_id,
        values,
        waiting=waiting,
        as_json=args.json,
        as_markdown=getattr(args, "markdown", False),
        interrupts=interrupts,
        carried=Carried.from_args(args),
        started=COMMAND_STARTED,
    )
    code = ExitCode.for_run(values, waiting=waiting)
    refused = [
        r for r in values.get("reports") or [] if ExitCode.for_provider(str(r.reason)) is code
    ]
    if refused:  # the one line that says what to fix, where errors go
        print(f"muster: provider error: {refused[0].worker}'s {refused[0].note}", file=sys.stderr)
    return code


class UnknownThreadError(MusterError):
    """The store holds no thread by that id (`muster serve` answers 404)."""


def unknown_thread(args: argparse.Namespace, thread_id: str) -> MusterError:
    """The error for a thread the store does not hold, naming the command that lists them."""
    listing = Carried.from_args(args).command("threads", run=False)
    return UnknownThreadError(f"unknown thread {thread_id}; `{listing}` lists them")


def servers_line(runtime: MusterRuntime, started: float) -> str:
    """Which servers are up (and which are down, why), or which start on demand."""
    health = runtime.services.hub.health()
    if not any(state.started for state in health.values()):
        return f"servers start as workers need them: {', '.join(health)}"
    up = [name for name, state in health.items() if state.up]
    down = [f"{name} ({s.last_error or 'down'})" for name, s in health.items() if not s.up]
    line = f"servers up in {time.monotonic() - started:.1f} s: {', '.join(up) or '(none)'}"
    return line + (f"; DOWN: {'; '.join(down)}" if down else "")


def run_options(args: argparse.Namespace) -> MusterOptions:
    """Validate --servers, --model, --planner and --scenario before anything starts (exit 2)."""
    scenario_name = getattr(args, "scenario", None)
    if scenario_name and scenario_name not in SCENARIOS:
        raise MusterError(
            f"unknown scenario {scenario_name!r}; known: {', '.join(sorted(SCENARIOS))}"
        )
    if scenario_name:
        SCENARIOS[scenario_name].prepare(args)  # its --domain and backend failure modes
    scripted = SCENARIOS[scenario_name].models() if scenario_name else None
    return MusterOptions.from_args(args, models=scripted)


async def finish_run(
    args: argparse.Namespace,
    runtime: MusterRuntime,
    thread_id: str,
    payload: dict[str, Any] | Command | None,
    progress: Progress,
    *,
    services: Services | None = None,
) -> int:
    """Run the thread on from `payload` with signal draining and live `progress`, print the
    result and return its exit code (`ExitCode.DRAINED` when a signal stopped it cleanly)."""
    # A refused key, no quota, an unknown model or an endpoint that cannot be reached is one
    # line at once (exit 7 to 10), not a run of failures.
    await preflight(runtime.services.models("worker"))
    control = RunControl()
    # Installed for the rest of the process: a signal after the run is a no-op drain.
    drain = SignalDrain(progress.line, in_flight="work in flight")
    drain.controls.add(control)
    drain.install()
    try:
        async with progress.ticking():
            values = await stream_run(
                runtime, thread_id, payload, on_update=progress, control=control, services=services
            )
    except GraphDrained as drained:
        print(
            f"stopped cleanly ({drained.reason}); state is saved. "
            f"Continue with: {Carried.from_args(args).command('resume', thread_id)}",
            file=sys.stderr,
        )
        return ExitCode.DRAINED
    snapshot = await runtime.graph.aget_state(thread_config(thread_id))
    interrupts = [i.value for i in snapshot.interrupts]
    return emit_result(args, thread_id, values, bool(interrupts), interrupts)


def version_check(thread: str, values: Any, out: Any) -> None:
    """Before a thread runs on: compare the versions it started on with these, for the pack
    it runs under (`graph.versions`); warn on `out`, or refuse (`MUSTER_VERSION_POLICY`)."""
    pack = pack_for_state(values)
    now = current_versions(str(pack.folder), pack.name)
    warning = resume_check(thread, changed_versions(values.get("versions"), now))
    if warning:
        print(warning, file=out)
