"""What a collector that is down adds to a command (issue 28: at most 50 ms).

Never run as a test. Each round runs the same `muster run` of a ticket three ways, in an
order that rotates round to round, on a temporary store of its own:

- `up`: `OTEL_EXPORTER_OTLP_ENDPOINT` is a live collector on loopback (a sink in this
  process that answers every export with 200 and counts the bytes);
- `down`: the endpoint is a loopback port nothing listens on (connections are refused);
- `off`: no OpenTelemetry environment at all, for scale.

Each command runs through `graph.app.cli.main` in its own process, which then times
`graph.telemetry.shutdown()` (what the end of every command waits on, registered at exit)
and prints it; the script prints, per mode, the median wall time of the whole process and of
that shutdown, and the median of the paired differences `down - up` (wall and shutdown), with
their ratio. The shutdown figure is the one the target is about: the whole process's wall
time moves by more than 50 ms from one run to the next on a loaded machine.

    python bench/otel_down.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TICKET = "Customer says order #12333 was charged twice. What happened and what can we do?"
ENTRY = """
import sys, time
from graph.app.cli import main
from graph import telemetry
code = main()
started = time.perf_counter()
outcome = telemetry.shutdown()
print(f"OTEL_SHUTDOWN {outcome} {(time.perf_counter() - started) * 1000:.2f}", file=sys.stderr)
sys.exit(code)
"""
MODES = ("up", "down", "off")


class Sink(BaseHTTPRequestHandler):
    """A collector that takes every export."""

    received = 0

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        length = int(self.headers.get("Content-Length") or 0)
        Sink.received += len(self.rfile.read(length))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_once(mode: str, endpoint: dict[str, str], work: Path, n: int) -> tuple[float, float]:
    """Wall ms of one whole command, and the ms its telemetry shutdown took (0 when off)."""
    sandbox = work / f"{mode}-{n}"
    sandbox.mkdir()
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("OTEL_")
    } | {
        "MUSTER_DB": str(sandbox / "checkpoints.sqlite"),
        "MUSTER_ORDERS_DB": str(sandbox / "orders.sqlite"),
        "MUSTER_TRACE_DIR": str(sandbox / "traces"),
        "MUSTER_CALL_LOG": str(sandbox / "calls.jsonl"),
        "MUSTER_SEAL_KEY_FILE": str(work / "seal.key"),
        "MUSTER_POLICY_MODE": "healthy",
    }
    if mode != "off":
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint[mode]
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, "run", TICKET, "--thread", f"bench-{n}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    wall = (time.perf_counter() - started) * 1000
    if done.returncode not in (0, 3, 5):
        raise SystemExit(f"{mode}: exit {done.returncode}\n{done.stderr[-2000:]}")
    # The SDK's own warning about a refused export may share the line (another thread).
    found = re.search(r"OTEL_SHUTDOWN (\S+) ([\d.]+)", done.stderr)
    if found is None:
        raise SystemExit(f"{mode}: no OTEL_SHUTDOWN line\n{done.stderr[-2000:]}")
    outcome, shutdown = found.group(1), float(found.group(2))
    expected = {"up": "flushed", "down": "refused", "off": "None"}[mode]
    if outcome != expected:
        raise SystemExit(f"{mode}: telemetry shutdown ended {outcome}, not {expected}")
    return wall, shutdown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = {
        "up": f"http://127.0.0.1:{server.server_address[1]}",
        "down": f"http://127.0.0.1:{closed_port()}",
    }
    walls: dict[str, list[float]] = {m: [] for m in MODES}
    shutdowns: dict[str, list[float]] = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory(prefix="muster-otel-") as tmp:
        work = Path(tmp)
        run_once("off", endpoint, work, -1)  # warm-up: the seal key, the file cache
        for n in range(args.rounds):
            order = MODES[n % 3 :] + MODES[: n % 3]
            for mode in order:
                wall, shutdown = run_once(mode, endpoint, work, n)
                walls[mode].append(wall)
                shutdowns[mode].append(shutdown)
            print(
                f"round {n + 1}: "
                + ", ".join(f"{m} {walls[m][-1]:.0f} ms (shutdown {shutdowns[m][-1]:.1f})"
                            for m in MODES),
                flush=True,
            )
    server.shutdown()
    print(f"\n{args.rounds} rounds of `muster run` (the collector received {Sink.received} bytes)")
    for mode in MODES:
        print(
            f"  {mode:4}  wall median {statistics.median(walls[mode]):7.0f} ms   "
            f"telemetry shutdown median {statistics.median(shutdowns[mode]):6.1f} ms "
            f"(max {max(shutdowns[mode]):.1f})"
        )
    wall_diff = [d - u for d, u in zip(walls["down"], walls["up"], strict=True)]
    shut_diff = [d - u for d, u in zip(shutdowns["down"], shutdowns["up"], strict=True)]
    print(
        f"  down - up, paired: wall median {statistics.median(wall_diff):+.0f} ms "
        f"(ratio {statistics.median(walls['down']) / statistics.median(walls['up']):.3f}); "
        f"shutdown median {statistics.median(shut_diff):+.1f} ms, max {max(shut_diff):+.1f} ms "
        "(target: a collector that is down adds <= 50 ms)"
    )


if __name__ == "__main__":
    main()
