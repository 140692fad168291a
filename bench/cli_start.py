"""How long `muster` takes to answer: `--help`, `threads` and `show`, as whole processes.

Never run as a test. Each command runs `--runs` times (after one warm-up) on a temporary
store holding one finished thread, and the script prints min, median and max wall time per
command, next to a bare interpreter start (`python -c pass`) measured in the same rounds,
commands interleaved so a change in the machine's load touches them all alike; the CPU
seconds (user + system) move less with the load than the wall time does. Targets
(issue 13): `--help` ≤ 0.3 s, `threads` and `show` ≤ 1 s on a quiet machine.

`--baseline DIR` adds `threads` and `show` as another checkout of Muster (e.g. an older
commit, `git archive` into DIR) runs them on the same store, in the same rounds, for a
before/after pair. Last, the CPU of one `threads` and one `show` is split, in one process
each, into what the imports, the graph's compile and the command itself cost.

    python bench/cli_start.py [--runs 10] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import ROOT, timed  # bench/, beside this script

MUSTER = Path(sys.executable).parent / "muster"
TICKET = "Customer says order #12333 was charged twice. What happened and what can we do?"
TARGETS = {"muster --help": 0.3, "muster threads": 1.0, "muster show THREAD": 1.0}
ENTRY = "import sys; from graph.app.cli import main; sys.exit(main())"
"""What the `muster` console script runs, for a checkout without one (`--baseline`)."""
PHASES = """
import resource, sys
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
start = cpu()
import graph.app.cli
graph.app.cli.load_command(sys.argv[1], whole_process=True)  # what `main` imports
from graph.app.runtime import compiled_graph
imported = cpu()
compiled_graph()  # cached: the command below reuses it
compiled = cpu()
code = graph.app.cli.main()  # reads sys.argv, as the console script's does
done = cpu()
print(f"{start:.3f} {imported - start:.3f} {compiled - imported:.3f} {done - compiled:.3f}",
      file=sys.stderr)
"""
"""One command in one process, printing the CPU of: interpreter start, the imports, the
graph's compile, the command (the reads, the printing) on stderr."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="counted runs per command")
    parser.add_argument(
        "--baseline", type=Path, help="another checkout whose threads and show to pair"
    )
    options = parser.parse_args()
    runs, baseline = options.runs, options.baseline
    with tempfile.TemporaryDirectory(prefix="muster-cli-start-") as tmp:
        env = {
            **os.environ,
            "MUSTER_DB": str(Path(tmp) / "muster.sqlite"),
            "MUSTER_ORDERS_DB": str(Path(tmp) / "orders.sqlite"),
            "MUSTER_TRACE_DIR": str(Path(tmp) / "traces"),
        }
        subprocess.run(
            [str(MUSTER), "run", TICKET, "--thread", "bench-1"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            check=False,  # 0 or 3: a finished thread either way
        )
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "muster --help": [str(MUSTER), "--help"],
            "muster threads": [str(MUSTER), "threads"],
            "muster show THREAD": [str(MUSTER), "show", "bench-1"],
        }
        if baseline is not None:
            commands["baseline threads"] = [sys.executable, "-c", ENTRY, "threads"]
            commands["baseline show THREAD"] = [sys.executable, "-c", ENTRY, "show", "bench-1"]
        times: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for round_ in range(runs + 1):
            for name, argv in commands.items():
                # `python -c` puts its working directory first on sys.path: the baseline's code.
                in_baseline = baseline is not None and name.startswith("baseline ")
                wall, used = timed(argv, env, cwd=baseline if in_baseline else ROOT)
                if round_:  # the first round warms the disk cache and .pyc files
                    times[name].append(wall)
                    cpu[name].append(used)
        phases = {name: split_cpu(argv, env) for name, argv in PHASE_COMMANDS.items()}
    load = os.getloadavg()[0]
    print(f"{runs} runs each, {os.cpu_count()} CPUs, load average {load:.1f} after the runs")
    print(f"{'command':<20} {'min':>7} {'median':>7} {'max':>7} {'CPU med':>8}  target (wall)")
    for name, values in times.items():
        target = TARGETS.get(name)
        median = statistics.median(values)
        verdict = (
            "" if target is None else f"≤ {target:.1f} s: {'met' if median <= target else 'MISSED'}"
        )
        print(
            f"{name:<20} {min(values):>6.3f}s {median:>6.3f}s {max(values):>6.3f}s "
            f"{statistics.median(cpu[name]):>7.3f}s  {verdict}"
        )
    print("CPU of one run, split (s): start-up, imports, graph compile, the command")
    for name, (start, imported, compiled, command) in phases.items():
        print(f"{name:<20} {start:>6.3f}  {imported:>6.3f}  {compiled:>6.3f}  {command:>6.3f}")


PHASE_COMMANDS = {"muster threads": ["threads"], "muster show THREAD": ["show", "bench-1"]}


def split_cpu(argv: list[str], env: dict[str, str]) -> tuple[float, float, float, float]:
    """The median, over three runs, of each phase's CPU seconds (see `PHASES`)."""
    runs = []
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-c", PHASES, *argv],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=True,
        )
        runs.append([float(x) for x in done.stderr.split()[-4:]])
    start, imported, compiled, command = (
        statistics.median(column) for column in zip(*runs, strict=True)
    )
    return start, imported, compiled, command


if __name__ == "__main__":
    main()
