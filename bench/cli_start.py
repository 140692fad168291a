"""How long `muster` takes to answer: `--help`, `threads` and `show`, as whole processes.

Never run as a test. Each command runs `--runs` times (after one warm-up) on a temporary
store holding one finished thread, and the script prints min, median and max wall time per
command, next to a bare interpreter start (`python -c pass`) measured in the same rounds,
commands interleaved so a change in the machine's load touches them all alike; the CPU
seconds (user + system) move less with the load than the wall time does. Targets
(issue 13): `--help` ≤ 0.3 s, `threads` and `show` ≤ 1 s on a quiet machine.

    python bench/cli_start.py [--runs 10]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUSTER = Path(sys.executable).parent / "muster"
TICKET = "Customer says order #12333 was charged twice. What happened and what can we do?"
TARGETS = {"muster --help": 0.3, "muster threads": 1.0, "muster show THREAD": 1.0}


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the process and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="counted runs per command")
    runs = parser.parse_args().runs
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
        times: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for round_ in range(runs + 1):
            for name, argv in commands.items():
                wall, used = timed(argv, env)
                if round_:  # the first round warms the disk cache and .pyc files
                    times[name].append(wall)
                    cpu[name].append(used)
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


if __name__ == "__main__":
    main()
