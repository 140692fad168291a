"""Back-pressure benchmark: calls a broken policy server receives for a 40-ticket batch, with
the hub's circuit breaker (the default) and without it (a threshold no run reaches).

Run: `.venv/bin/python bench/backpressure.py` (a benchmark, never a test). Each run is the real
CLI, `muster batch`, on a fresh checkpoint file and call log, with `MUSTER_POLICY_MODE=broken`
(every `check_policy` fails with "policy-db connection refused"); the count is what the policy
server itself logged, and the ratio is of the two runs measured here.

`--baseline DIR` runs both again on another checkout of Muster (e.g. `git archive HEAD | tar
-x -C DIR`), one after the other in the same run, through `PYTHONPATH=DIR` (which wins over the
editable install); the servers are this checkout's, so only Muster's own code differs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUESTS = (
    "Order #12345 was charged twice, what happened?",
    "I want a refund for order 12321",
    "Can I return order 12322?",
    "Order 12333 is late, where is it?",
    "Please cancel order 12340",
)


def run(folder: Path, breaker: bool, code: Path | None = None) -> tuple[int, float]:
    tickets = folder / "tickets.jsonl"
    tickets.write_text(
        "".join(json.dumps({"id": f"t{i}", "request": REQUESTS[i % 5]}) + "\n" for i in range(40))
    )
    log = folder / "calls.jsonl"
    env = {**os.environ, "MUSTER_CALL_LOG": str(log), "MUSTER_POLICY_MODE": "broken"}
    if not breaker:
        env["MUSTER_BREAKER_FAILURES"] = "1000000"
    if code is not None:
        env["PYTHONPATH"] = str(code)
    started = time.monotonic()
    subprocess.run(
        [str(ROOT / ".venv/bin/muster"), "batch", str(tickets), "--db", str(folder / "c.sqlite")],
        env=env,
        cwd=folder,
        capture_output=True,
        check=False,
    )
    elapsed = time.monotonic() - started
    lines = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
    return sum(1 for x in lines if x.get("server") == "policy"), elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout to measure too")
    args = parser.parse_args()
    codes: list[tuple[str, Path | None]] = [("this checkout", None)]
    if args.baseline is not None:
        codes.insert(0, (f"baseline {args.baseline}", args.baseline.resolve()))
    print("40 tickets, broken policy server, calls the server received:")
    for label, code in codes:
        results = {}
        for breaker in (True, False):
            with tempfile.TemporaryDirectory() as tmp:
                results[breaker] = run(Path(tmp), breaker, code)
        (on, on_s), (off, off_s) = results[True], results[False]
        print(f"{label}:")
        print(f"  with the circuit breaker     {on:4d} calls  ({on_s:.1f} s)")
        print(f"  without (threshold 10^6)     {off:4d} calls  ({off_s:.1f} s)")
        print(f"  ratio                        {off / max(on, 1):.1f}x fewer calls")


if __name__ == "__main__":
    sys.exit(main())
