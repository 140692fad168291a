"""CPU per ticket of the support reader (issue 22: at most 3 ms), over the labelled corpus.

    python bench/reader_cpu.py [--repeats N]

Reads every ticket of the corpus (train, dev and test: only the time is taken, nothing is
shown) with the reading's cache cleared, N times, and prints the mean and the worst ticket's
CPU time, and the one-off cost of compiling the phrase tables (paid at the first ticket).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    started = time.process_time()
    from domains.support import rules
    from domains.support.intents import INTENTS, pattern, phrase_gate
    from domains.support.text_norm import normalize

    rules.read_ticket("warm the phrase tables up: order 12345 was charged twice")
    for intent in INTENTS:  # the gate skips most of them on one ticket: compile them all here
        pattern(intent.phrases)
        phrase_gate(intent.phrases)
    start_cost = time.process_time() - started
    requests = [
        json.loads(line)["request"]
        for split in ("train", "dev", "test")
        for line in (ROOT / "domains/support/splits" / f"{split}.jsonl").read_text().splitlines()
        if line.strip()
    ]
    per_ticket: list[float] = []
    for _ in range(args.repeats):
        for request in requests:
            rules.read_ticket.cache_clear()
            rules._understood.cache_clear()  # noqa: SLF001 (the bench times an uncached read)
            normalize.cache_clear()  # the per-text spelling cache too
            t0 = time.process_time()
            rules.read_ticket(request)
            per_ticket.append(time.process_time() - t0)
    mean_ms = 1000 * sum(per_ticket) / len(per_ticket)
    print(f"tickets: {len(requests)} x {args.repeats}")
    print(f"import + first reading (phrase tables compiled): {1000 * start_cost:.0f} ms CPU")
    print(f"reader CPU per ticket: mean {mean_ms:.2f} ms, worst {1000 * max(per_ticket):.2f} ms")


if __name__ == "__main__":
    main()
