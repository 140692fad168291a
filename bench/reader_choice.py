"""Why the support reader is a lexicon and not a learned classifier: both scored on dev.

    pip install scikit-learn        # only this benchmark needs it
    python bench/reader_choice.py

Trains one-vs-rest logistic regressions over TF-IDF word (1-2) and character (2-5) n-grams
of the customer's own words on the train split, and prints, for several decision
thresholds, how many dev tickets get exactly their labelled intents from the classifier
alone, from the rules alone, and from the union of the two. The test split is never read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7)


def _load(split: str) -> list[dict[str, object]]:
    path = ROOT / "domains/support/splits" / f"{split}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> None:
    try:
        from scipy.sparse import hstack
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import MultiLabelBinarizer
    except ImportError:
        raise SystemExit("this benchmark needs scikit-learn: pip install scikit-learn") from None
    import numpy as np

    from domains.support.own_words import own_words
    from domains.support.rules import read_ticket
    from domains.support.text_norm import normalize

    train, dev = _load("train"), _load("dev")

    def texts(rows: list[dict[str, object]]) -> list[str]:
        return [normalize(own_words(str(r["request"]))) for r in rows]

    def labels(rows: list[dict[str, object]]) -> list[list[str]]:
        return [list(r["labels"]["intents"]) for r in rows]  # type: ignore[index]

    binarizer = MultiLabelBinarizer()
    y = binarizer.fit_transform(labels(train))
    chars = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True)
    words = TfidfVectorizer(analyzer="word", ngram_range=(1, 2), sublinear_tf=True)
    x_train = hstack([chars.fit_transform(texts(train)), words.fit_transform(texts(train))])
    x_dev = hstack([chars.transform(texts(dev)), words.transform(texts(dev))])
    scores = np.zeros((len(dev), len(binarizer.classes_)))
    for j in range(len(binarizer.classes_)):
        if y[:, j].sum():
            model = LogisticRegression(C=10.0, class_weight="balanced", max_iter=2000)
            scores[:, j] = model.fit(x_train.tocsr(), y[:, j]).predict_proba(x_dev.tocsr())[:, 1]
    expected = [sorted(e) for e in labels(dev)]
    rules = [sorted(read_ticket(str(r["request"])).intents) for r in dev]
    rules_right = sum(r == e for r, e in zip(rules, expected, strict=True))
    print(f"dev tickets: {len(dev)}; rules alone: {rules_right} right")
    print("threshold  classifier  union")
    for threshold in THRESHOLDS:
        learned = [sorted(binarizer.classes_[row >= threshold]) for row in scores]
        alone = sum(c == e for c, e in zip(learned, expected, strict=True))
        union = sum(
            sorted(set(c) | set(r)) == e for c, r, e in zip(learned, rules, expected, strict=True)
        )
        print(f"{threshold:>9}  {alone:>10}  {union:>5}")


if __name__ == "__main__":
    main()
