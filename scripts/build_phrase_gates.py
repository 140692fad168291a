"""Write (or with --check, verify) domains/support/phrase_gates.json: every intent's phrase
gate (domains/support/phrase_gate.py), built ahead so a process does not list the beginnings
of some 4,000 phrases at its first ticket. Rerun after changing an intent's phrases; a test
fails while the file is stale (the reader stays right meanwhile, only slower to start).

    python scripts/build_phrase_gates.py [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from domains.support.intents import INTENTS, folded_phrases  # noqa: E402
from domains.support.phrase_gate import STORED, built, digest  # noqa: E402


def expected() -> str:
    table = {}
    for intent in INTENTS:
        folded = folded_phrases(intent.phrases)
        table[digest(folded)] = {"intent": intent.name, **built(folded)}
    return json.dumps(table, indent=0, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args()
    text = expected()
    if args.check:
        current = STORED.read_text() if STORED.exists() else ""
        if current != text:
            print(f"{STORED.relative_to(ROOT)} is stale: run python scripts/build_phrase_gates.py")
            return 1
        print(f"{STORED.relative_to(ROOT)} is current")
        return 0
    STORED.write_text(text)
    print(f"wrote {STORED.relative_to(ROOT)} ({len(INTENTS)} intents)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
