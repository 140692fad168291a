"""Split a pack's labelled corpus into train, dev and test, once, by a fixed seed.

    python scripts/split_corpus.py support     # domains/support/splits/{train,dev,test}.jsonl
    python scripts/split_corpus.py incidents

Each new ticket's split is drawn from a hash of the seed and its id (or, for incident pages,
of the story it is about: pages of one incident stay in one split), so adding tickets never
moves one already placed: 50% train, 20% dev, 30% test. The pack's first eval set (the
tickets the rules were written from) and the tickets written for training after the freeze
(`corpus_train/`; for incidents every `pages*.jsonl` there with its `*_labels.jsonl`
partner) all go to train. The test split is frozen: its digest
is in `splits/FROZEN` and `tests/test_corpus.py` fails when it changes; it is scored, never
read while writing rules.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = "muster-corpus-split-2026-12-01"
SHARES = (("train", 50), ("dev", 20), ("test", 30))


def split_of(key: str) -> str:
    """The split a ticket (or a story's pages) belongs to, from the seed and its key."""
    bucket = int(hashlib.sha256(f"{SEED}:{key}".encode()).hexdigest(), 16) % 100
    for name, share in SHARES:
        if bucket < share:
            return name
        bucket -= share
    raise AssertionError("shares add up to 100")


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(out: Path, rows: list[dict[str, object]]) -> None:
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def split_support() -> dict[str, int]:
    pack = ROOT / "domains" / "support"
    splits: dict[str, list[dict[str, object]]] = {name: [] for name, _ in SHARES}
    for row in _lines(pack / "tickets.jsonl"):
        splits["train"].append({"language": row.get("language", "en"), **row})
    for path in sorted((pack / "corpus").glob("*.jsonl")):
        for row in _lines(path):
            splits[split_of(str(row["id"]))].append(row)
    # Written after the test split was frozen, for training only: never drawn into dev or test.
    for path in sorted((pack / "corpus_train").glob("*.jsonl")):
        splits["train"] += _lines(path)
    (pack / "splits").mkdir(exist_ok=True)
    for name, rows in splits.items():
        _write(pack / "splits" / f"{name}.jsonl", rows)
    return {name: len(rows) for name, rows in splits.items()}


def train_page_files(pack: Path) -> list[Path]:
    """The train-only page files of `corpus_train/`: each `pages*.jsonl` (not a labels file)
    that has its `<name>_labels.jsonl` partner beside it."""
    return [path for path in sorted((pack / "corpus_train").glob("pages*.jsonl"))
            if not path.stem.endswith("_labels")
            and path.with_name(f"{path.stem}_labels.jsonl").is_file()]


def split_incidents() -> dict[str, int]:
    pack = ROOT / "domains" / "incidents"
    pages: dict[str, list[dict[str, object]]] = {name: [] for name, _ in SHARES}
    labels: dict[str, list[dict[str, object]]] = {name: [] for name, _ in SHARES}
    for first, first_labels in (("incidents", "labels"), ("heldout", "heldout_labels")):
        pages["train"] += _lines(pack / f"{first}.jsonl")
        labels["train"] += _lines(pack / f"{first_labels}.jsonl")
    corpus = pack / "corpus"
    by_id = {str(r["id"]): r for r in _lines(corpus / "pages_labels.jsonl")}
    for page in _lines(corpus / "pages.jsonl"):
        name = split_of(str(page.get("group") or page["id"]))
        pages[name].append({k: v for k, v in page.items() if k != "group"})
        labels[name].append(by_id[str(page["id"])])
    # Written after the test split was frozen, for training only (ids tr-001..): every page
    # goes to train, whatever its story, and none is drawn into dev or test.
    # Every `corpus_train/pages*.jsonl` with its `*_labels.jsonl` partner (pages.jsonl,
    # pages_b.jsonl, ...), in name order.
    for extra in train_page_files(pack):
        partner = extra.with_name(f"{extra.stem}_labels.jsonl")
        extra_labels = {str(r["id"]): r for r in _lines(partner)}
        for page in _lines(extra):
            pages["train"].append({k: v for k, v in page.items() if k != "group"})
            labels["train"].append(extra_labels[str(page["id"])])
    (pack / "splits").mkdir(exist_ok=True)
    for name in pages:
        _write(pack / "splits" / f"{name}.jsonl", pages[name])
        _write(pack / "splits" / f"{name}_labels.jsonl", labels[name])
    return {name: len(rows) for name, rows in pages.items()}


if __name__ == "__main__":
    which = sys.argv[1:] or ["support"]
    for pack_name in which:
        counts = split_support() if pack_name == "support" else split_incidents()
        print(pack_name, counts)
