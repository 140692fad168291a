"""A second, learned reader of intents: a linear model over character and word n-grams.

Why a learned model beside the phrase tables (`intents.py`): the tables read what their
phrases hold and nothing else, and on tickets written after them they miss plain requests
said another way. A linear model over character n-grams (which share stems across spellings,
inflections and the Romance and Germanic languages) and word n-grams reads by resemblance
to the labelled training tickets instead. Alone it is weaker (about 70% of intents exactly
right on the dev sets, below the tables), but its mistakes are different ones, so the two
are used together (`reading.py`): where they agree the reading is trusted, where they
disagree a person checks it, and where the tables find nothing the model's confident
reading is a proposal.

The model is trained offline by `scripts/train_intent_model.py` on the train split only, with
scikit-learn (TF-IDF + one-vs-rest linear SVM), and shipped as plain arrays in
`intent_model.npz`. This module reproduces scikit-learn's feature extraction exactly (a test
checks the scores against scikit-learn's own) with numpy and the standard library: importing
scikit-learn costs about 0.9 s, this costs a few milliseconds, and arrays do not break when
scikit-learn's pickles change between versions. Deterministic: same text, same scores.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

MODEL_FILE = Path(__file__).with_name("intent_model.npz")
"""The trained intent model's arrays (written by scripts/train_intent_model.py)."""
FOLLOW_UP_FILE = Path(__file__).with_name("follow_up_model.npz")
"""The follow-up clause model's arrays (same script): one class, `follow_up`, whether an
asking clause with no intent is a follow-up on the ticket's stated problem ("Wie geht's
weiter?", "Merci de me revenir là-dessus") rather than a request of its own."""
CHAR_RANGE = (3, 5)
"""Character n-gram lengths, inside word boundaries (scikit-learn's `char_wb`)."""
WORD_RANGE = (1, 2)
"""Word n-gram lengths."""
TERM_SEPARATOR = "\x00"
"""Joins the vocabulary in the file (n-grams hold spaces, never a NUL)."""

_WORD = re.compile(r"(?u)\b\w\w+\b")  # scikit-learn's default token pattern
_SPACES = re.compile(r"\s\s+")


def char_ngrams(text: str) -> list[str]:
    """Character n-grams of each word padded with a space, as scikit-learn's `char_wb`."""
    text = _SPACES.sub(" ", text.lower())
    grams: list[str] = []
    low, high = CHAR_RANGE
    for word in text.split():
        padded = f" {word} "
        size = len(padded)
        if size <= low:
            # A word no longer than n is one n-gram, counted once (as scikit-learn does).
            grams.append(padded)
            continue
        top = min(high, size)
        grams += [padded[i : i + n] for n in range(low, top + 1) for i in range(size - n + 1)]
    return grams


def word_ngrams(text: str) -> list[str]:
    """Word unigrams and bigrams, as scikit-learn's `word` analyzer with its token pattern."""
    tokens = _WORD.findall(text.lower())
    grams = list(tokens)
    grams.extend(f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False))
    return grams


@dataclass(frozen=True)
class _Block:
    """One vectorizer's part of the model: its vocabulary, idf and idf-scaled weights."""

    index: dict[str, int]
    idf: np.ndarray
    weights: np.ndarray  # (terms, classes): idf times the classifier's coefficients

    def score(self, grams: list[str]) -> np.ndarray:
        """This block's share of each class's decision: the l2-normalised sublinear TF-IDF
        vector of `grams` times the weights."""
        index = self.index
        # Count every n-gram in C first, then look up only the distinct ones.
        counts = Counter(grams)
        known = list(counts.keys() & index.keys())  # a set intersection, in C
        if not known:
            return np.zeros(self.weights.shape[1], dtype=np.float64)
        rows = np.fromiter(map(index.__getitem__, known), dtype=np.int64, count=len(known))
        tf = 1.0 + np.log(
            np.fromiter(map(counts.__getitem__, known), dtype=np.float64, count=len(known))
        )
        norm = float(np.sqrt(np.sum((tf * self.idf[rows]) ** 2)))
        return np.asarray((tf / norm) @ self.weights[rows], dtype=np.float64)


@dataclass(frozen=True)
class IntentModel:
    """A trained linear text model: two blocks, the intercepts and the class names (the
    intents; for the follow-up model, the one class `follow_up`)."""

    classes: tuple[str, ...]
    chars: _Block
    words: _Block
    intercepts: np.ndarray
    train_digest: str
    """sha256 of the train split it was trained on (a test checks it is current)."""

    def scores(self, text: str) -> dict[str, float]:
        """Each intent's decision value for normalised text (> 0: the model reads it)."""
        total = (
            self.chars.score(char_ngrams(text))
            + self.words.score(word_ngrams(text))
            + self.intercepts
        )
        return {name: float(value) for name, value in zip(self.classes, total, strict=True)}

    def predict(self, text: str) -> tuple[str, ...]:
        """The intents the model reads in normalised text (see `predicted`)."""
        return predicted(self.scores(text))


def predicted(scores: dict[str, float]) -> tuple[str, ...]:
    """The intents a model's scores read: every positive decision, the best one if none is."""
    found = tuple(name for name, value in scores.items() if value > 0)
    return found or (max(scores, key=lambda name: scores[name]),)


def _block(data: np.lib.npyio.NpzFile, prefix: str) -> _Block:
    terms = str(data[f"{prefix}_terms"]).split(TERM_SEPARATOR)
    return _Block(
        index={term: n for n, term in enumerate(terms)},
        idf=data[f"{prefix}_idf"].astype(np.float64),
        weights=data[f"{prefix}_weights"].astype(np.float64),
    )


def load_follow_up_model() -> IntentModel:
    """The follow-up clause model (`FOLLOW_UP_FILE`), read once per process."""
    return load_model(FOLLOW_UP_FILE)


@cache
def load_model(path: Path = MODEL_FILE) -> IntentModel:
    """The model in `path`, read once per process (about 10 ms)."""
    with np.load(path, allow_pickle=False) as data:
        return IntentModel(
            classes=tuple(str(c) for c in data["classes"]),
            chars=_block(data, "char"),
            words=_block(data, "word"),
            intercepts=data["intercepts"].astype(np.float64),
            train_digest=str(data["train_digest"]),
        )
