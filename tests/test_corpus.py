"""The labelled corpora and their splits: big enough, labelled by the table's rules, split
once by the fixed seed, and the test splits frozen (scored, never read or rewritten).

Only the label files' shapes and digests are checked here; no ticket text of a test split is
looked at."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from collections import Counter
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = ROOT / "domains" / "support"
INCIDENTS = ROOT / "domains" / "incidents"
LANGUAGES = {"en", "fr", "de", "es", "it", "nl", "pt"}


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _split_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("split_corpus", ROOT / "scripts/split_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _frozen(folder: Path) -> dict[str, str]:
    lines = (folder / "splits" / "FROZEN").read_text().split("\n")
    return {name: digest for digest, name in (line.split() for line in lines if line.strip())}


def test_the_test_splits_are_frozen() -> None:
    for folder in (SUPPORT, INCIDENTS):
        for name, digest in _frozen(folder).items():
            path = folder / "splits" / name
            assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, path


def test_the_support_corpus_is_large_and_covers_seven_languages() -> None:
    rows = [
        r
        for split in ("train", "dev", "test")
        for r in _rows(SUPPORT / "splits" / f"{split}.jsonl")
    ]
    assert len(rows) >= 400
    languages = Counter(str(r["language"]) for r in rows)
    assert set(languages) == LANGUAGES
    assert min(languages.values()) >= 30, languages
    assert len({r["id"] for r in rows}) == len(rows)


def test_the_incident_corpus_has_at_least_80_pages() -> None:
    pages = [
        p for s in ("train", "dev", "test") for p in _rows(INCIDENTS / "splits" / f"{s}.jsonl")
    ]
    labels = [
        x
        for s in ("train", "dev", "test")
        for x in _rows(INCIDENTS / "splits" / f"{s}_labels.jsonl")
    ]
    assert len(pages) >= 80
    assert [p["id"] for p in pages] == [x["id"] for x in labels]


def test_the_splits_are_drawn_from_the_fixed_seed_and_the_first_sets_are_train() -> None:
    script = _split_script()
    assert script.split_of("enp-001") == script.split_of("enp-001")  # a pure function of the id
    shares = Counter(script.split_of(f"x-{i}") for i in range(4000))
    assert abs(shares["train"] / 4000 - 0.5) < 0.03 and abs(shares["test"] / 4000 - 0.3) < 0.03
    train_ids = {r["id"] for r in _rows(SUPPORT / "splits" / "train.jsonl")}
    assert {r["id"] for r in _rows(SUPPORT / "tickets.jsonl")} <= train_ids
    for split in ("dev", "test"):
        for row in _rows(SUPPORT / "splits" / f"{split}.jsonl"):
            assert script.split_of(str(row["id"])) == split


def _table() -> dict[str, tuple[set[str], set[str]]]:
    """intent -> (policy ids, kb ids), read from LABELS.md's intents table."""
    table: dict[str, tuple[set[str], set[str]]] = {}
    for line in (SUPPORT / "LABELS.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"[a-z_]+", cells[0]) and cells[0] != "intent":
            table[cells[0]] = (
                set(re.findall(r"POL-[A-Z]+-\d+", cells[2])),
                set(re.findall(r"KB-\d+", cells[3])),
            )
    return table


def test_every_label_cites_the_policies_and_articles_its_intents_name() -> None:
    """The labels follow LABELS.md's table (checked on label fields only, every split)."""
    table = _table()
    assert len(table) == 22
    for split in ("train", "dev", "test"):
        for row in _rows(SUPPORT / "splits" / f"{split}.jsonl"):
            labels = row["labels"]
            assert isinstance(labels, dict)
            intents = labels["intents"]
            assert set(intents) <= set(table), row["id"]
            policies = set().union(*(table[i][0] for i in intents)) if intents else set()
            assert set(labels["policy_ids"]) == policies, row["id"]
            articles = set().union(*(table[i][1] for i in intents)) if intents else set()
            late = {"KB-101", "KB-102"}
            if "late_delivery" in intents:  # exactly one of the two
                assert len(set(labels["kb_ids"]) & late) == 1, row["id"]
                articles -= late
            assert articles <= set(labels["kb_ids"]), row["id"]
            if row["language"] != "en":
                assert labels["needs_human"] is True, row["id"]
            if labels["actions"]:
                assert labels["needs_human"] is True, row["id"]


def test_the_frozen_split_is_not_written_out_case_by_case() -> None:
    # Scored, never read: --json would write every test ticket's labels and results.
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "graph.app.cli", "eval", "--split", "test", "--json", "x.json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "scored, never read" in done.stderr
    assert not (ROOT / "x.json").exists()
