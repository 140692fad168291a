"""Train support's learned intent reader on the train split, and write it as plain arrays.

    .venv/bin/python scripts/train_intent_model.py          # domains/support/intent_model.npz
    .venv/bin/python scripts/train_intent_model.py --check  # exit 1 if the file is stale

Only `domains/support/splits/train.jsonl` is read: dev and dev_b choose how the model is used
and the test split is only scored. The features are those `domains/support/intent_model.py`
reproduces at run time: sublinear TF-IDF over character n-grams (3-5, inside word
boundaries, seen in at least two tickets) and word uni- and bigrams (seen in at least two),
each block l2-normalised, of the customer's own words as the phrase tables see them
(`own_words`, then `normalize`). The classifier is one linear SVM per intent with balanced
class weights (C=1; a 5-fold cross-validation over the labelled sets put LinearSVC C=1 at
68.6% of tickets with every intent right, logistic regression at 65.7%). Training is
deterministic: liblinear's dual solver with a fixed seed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from domains.support.intent_model import (  # noqa: E402
    CHAR_RANGE,
    FOLLOW_UP_FILE,
    MODEL_FILE,
    TERM_SEPARATOR,
    WORD_RANGE,
)
from domains.support.own_words import own_words  # noqa: E402
from domains.support.text_norm import normalize  # noqa: E402

TRAIN = ROOT / "domains/support/splits/train.jsonl"
MIN_DF = 2
C = 1.0
SEED = 0


def model_text(request: str) -> str:
    """What the model reads of a ticket: the customer's own words, normalised."""
    return normalize(own_words(request))


def train_digest(path: Path = TRAIN) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fit(path: Path = TRAIN) -> tuple[Any, Any, Any]:
    """The fitted (char vectorizer, word vectorizer, classifier) and the label binarizer's
    classes, from the tickets in `path`."""
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.preprocessing import MultiLabelBinarizer
    from sklearn.svm import LinearSVC

    tickets = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    texts = [model_text(t["request"]) for t in tickets]
    binarizer = MultiLabelBinarizer()
    labels = binarizer.fit_transform([t["labels"]["intents"] for t in tickets])
    chars = TfidfVectorizer(
        analyzer="char_wb", ngram_range=CHAR_RANGE, sublinear_tf=True, min_df=MIN_DF
    )
    words = TfidfVectorizer(
        analyzer="word", ngram_range=WORD_RANGE, sublinear_tf=True, min_df=MIN_DF
    )
    features = hstack([chars.fit_transform(texts), words.fit_transform(texts)]).tocsr()
    classifier = OneVsRestClassifier(
        LinearSVC(C=C, class_weight="balanced", random_state=SEED, max_iter=5000)
    )
    classifier.fit(features, labels)
    classifier.classes_names = list(binarizer.classes_)
    return chars, words, classifier


def _terms(vectorizer: Any) -> list[str]:
    vocabulary: dict[str, int] = vectorizer.vocabulary_
    return sorted(vocabulary, key=vocabulary.__getitem__)


def arrays(chars: Any, words: Any, classifier: Any, digest: str) -> dict[str, np.ndarray]:
    """The fitted intent model as the arrays `intent_model.load_model` reads."""
    coef = np.vstack([e.coef_.ravel() for e in classifier.estimators_]).T  # (features, classes)
    intercepts = np.array([e.intercept_[0] for e in classifier.estimators_])
    return _arrays(chars, words, coef, intercepts, classifier.classes_names, digest)


def _arrays(
    chars: Any, words: Any, coef: np.ndarray, intercepts: np.ndarray, classes: list[str],
    digest: str,
) -> dict[str, np.ndarray]:
    split = len(chars.vocabulary_)
    out: dict[str, np.ndarray] = {
        "classes": np.array(classes),
        "intercepts": intercepts.astype(np.float64),
        "train_digest": np.array(digest),
    }
    for prefix, vectorizer, block in (
        ("char", chars, coef[:split]),
        ("word", words, coef[split:]),
    ):
        for term in _terms(vectorizer):
            if TERM_SEPARATOR in term:
                raise ValueError(f"an n-gram holds the separator: {term!r}")
        out[f"{prefix}_terms"] = np.array(TERM_SEPARATOR.join(_terms(vectorizer)))
        out[f"{prefix}_idf"] = vectorizer.idf_.astype(np.float32)
        out[f"{prefix}_weights"] = (vectorizer.idf_[:, None] * block).astype(np.float32)
    return out


def follow_up_clauses(path: Path = TRAIN) -> tuple[list[str], list[int]]:
    """Clauses that ask for something, labelled from their ticket's hand labels: 1 for a
    follow-up (an asking clause the phrase tables give no intent, in a ticket labelled
    complete: it asked nothing the labels did not cover), 0 for a request (an asking clause
    the tables give an intent the labels confirm). Tickets with no intent give neither."""
    from domains.support.reading import COURTESY
    from domains.support.rules import _understood
    from domains.support.text_norm import fold

    texts: list[str] = []
    labels: list[int] = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        ticket = json.loads(line)
        gold = set(ticket["labels"]["intents"])
        if not gold:
            continue
        for clause in _understood(ticket["request"]).clauses:
            if not clause.asks or COURTESY.match(fold(clause.text)):
                continue
            if clause.intents and set(clause.intents) & gold:
                texts.append(normalize(clause.text))
                labels.append(0)
            elif not clause.intents and ticket["labels"]["status"] == "complete":
                texts.append(normalize(clause.text))
                labels.append(1)
    return texts, labels


def fit_follow_up(path: Path = TRAIN) -> tuple[Any, Any, Any]:
    """The follow-up clause model: the same features, a logistic regression (C=10, balanced:
    about one follow-up for two requests)."""
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    texts, labels = follow_up_clauses(path)
    chars = TfidfVectorizer(
        analyzer="char_wb", ngram_range=CHAR_RANGE, sublinear_tf=True, min_df=MIN_DF
    )
    words = TfidfVectorizer(analyzer="word", ngram_range=WORD_RANGE, sublinear_tf=True)
    features = hstack([chars.fit_transform(texts), words.fit_transform(texts)]).tocsr()
    classifier = LogisticRegression(C=10, max_iter=5000, class_weight="balanced")
    classifier.fit(features, labels)
    return chars, words, classifier


def follow_up_arrays(chars: Any, words: Any, classifier: Any, digest: str) -> dict[str, np.ndarray]:
    coef = classifier.coef_.reshape(-1, 1)
    return _arrays(chars, words, coef, classifier.intercept_, ["follow_up"], digest)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the model is stale")
    args = parser.parse_args()
    digest = train_digest()
    if args.check:
        stale = False
        for path in (MODEL_FILE, FOLLOW_UP_FILE):
            with np.load(path, allow_pickle=False) as data:
                stale = stale or str(data["train_digest"]) != digest
        print("stale: retrain" if stale else "current")
        return 1 if stale else 0
    chars, words, classifier = fit()
    np.savez_compressed(MODEL_FILE, allow_pickle=False, **arrays(chars, words, classifier, digest))
    chars_f, words_f, follow_up = fit_follow_up()
    np.savez_compressed(
        FOLLOW_UP_FILE, allow_pickle=False, **follow_up_arrays(chars_f, words_f, follow_up, digest)
    )
    for path, vectorizers in ((MODEL_FILE, (chars, words)), (FOLLOW_UP_FILE, (chars_f, words_f))):
        size = path.stat().st_size
        print(f"wrote {path.relative_to(ROOT)} ({size // 1024} KiB, "
              f"{len(vectorizers[0].vocabulary_)} + {len(vectorizers[1].vocabulary_)} n-grams)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
