"""The support pack's learned intent reader: the shipped arrays are current and score exactly
as scikit-learn's fitted pipeline does, and its second opinion prunes and gates the tables'
reading as documented (domains/support/second_opinion.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from domains.support import second_opinion
from domains.support.intent_model import char_ngrams, load_model, predicted, word_ngrams
from domains.support.rules import read_ticket

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import train_intent_model  # noqa: E402


def test_the_shipped_model_was_trained_on_todays_train_split() -> None:
    assert load_model().train_digest == train_intent_model.train_digest(), (
        "domains/support/splits/train.jsonl changed: run scripts/train_intent_model.py"
    )


def test_char_and_word_ngrams_match_scikit_learns_analyzers() -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    text = "Hi  I was charged twice for order 12345, pls refund é a x"
    chars = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5)).build_analyzer()
    words = TfidfVectorizer(analyzer="word", ngram_range=(1, 2)).build_analyzer()
    assert char_ngrams(text) == chars(text)
    assert word_ngrams(text) == words(text)


def test_the_shipped_arrays_score_as_the_fitted_pipeline_does() -> None:
    from scipy.sparse import hstack

    chars, words, classifier = train_intent_model.fit()
    dev = ROOT / "domains/support/splits/dev.jsonl"
    texts = [
        train_intent_model.model_text(json.loads(line)["request"])
        for line in dev.read_text().splitlines()[:40]
    ]
    expected = classifier.decision_function(
        hstack([chars.transform(texts), words.transform(texts)]).tocsr()
    )
    model = load_model()
    got = np.array([[model.scores(t)[c] for c in model.classes] for t in texts])
    assert list(model.classes) == classifier.classes_names
    assert np.abs(expected - got).max() < 1e-4


def test_an_intent_the_model_finds_implausible_is_dropped_when_several_were_read() -> None:
    scores = {"wrong_item": 1.2, "late_delivery": -1.5, "refund_request": -0.2}
    assert second_opinion.pruned(("wrong_item", "late_delivery"), scores) == ("wrong_item",)
    # One intent is never dropped: a person sees the disagreement instead.
    assert second_opinion.pruned(("late_delivery",), scores) == ("late_delivery",)
    # When the model would drop every one, the best scored stays.
    assert second_opinion.pruned(
        ("late_delivery", "cancellation"), {"late_delivery": -1.0, "cancellation": -2.0}
    ) == ("late_delivery",)
    # An intent the model was never trained on is kept.
    assert second_opinion.pruned(("wrong_item", "new_intent"), scores) == (
        "wrong_item",
        "new_intent",
    )


def test_a_disagreement_with_the_model_lowers_confidence_below_review() -> None:
    from graph.abstain import REVIEW_BELOW

    assert second_opinion.agreement(("refund_request",), ("refund_request",)) == 1.0
    assert second_opinion.agreement(("refund_request",), ("cancellation",)) < REVIEW_BELOW
    assert second_opinion.agreement((), ("cancellation",)) == 1.0  # already partial


@pytest.mark.parametrize(
    ("request_text", "intent"),
    [
        ("I was charged twice for order 12345, both charges posted.", "duplicate_charge"),
        ("Please cancel order 12324 before it ships.", "cancellation"),
    ],
)
def test_a_plain_request_is_read_with_the_models_agreement(request_text: str, intent: str) -> None:
    reading = read_ticket(request_text)
    assert intent in reading.intents
    assert intent in predicted(load_model().scores(request_text.lower()))
    assert reading.confidence >= 0.85


def test_the_follow_up_model_was_trained_on_todays_train_split() -> None:
    from domains.support.intent_model import load_follow_up_model

    assert load_follow_up_model().train_digest == train_intent_model.train_digest()


def test_a_generic_follow_up_is_accounted_for_and_a_new_question_is_not() -> None:
    stated = (
        "Die Actioncam aus Bestellung 12372 kam mit gesprungenem Display und einer Delle an. "
        "Das Paket war aussen aufgerissen. Wie geht's weiter?"
    )
    assert read_ticket(stated).unaccounted == ()
    other = (
        "Die Actioncam aus Bestellung 12372 kam mit gesprungenem Display und einer Delle an. "
        "Mit welcher Karte habe ich eigentlich die Bestellung 12339 bezahlt?"
    )
    assert read_ticket(other).unaccounted != ()


def test_negation_ends_at_a_dash_or_a_fresh_request() -> None:
    text = "No, I don't want to return anything - I want to CANCEL order 12354."
    assert "cancellation" in read_ticket(text).intents
    assert "cancellation" not in read_ticket("I don't need to cancel order 12354").intents


def test_resembling_a_read_intent_is_not_enough_when_the_follow_up_model_rules_it_out() -> None:
    reading = read_ticket(
        "Can you send me a VAT invoice for order 12375? Also, could you engrave my initials "
        "on the lid?"
    )
    assert reading.intents == ("invoice",)
    assert reading.unaccounted == ("Also, could you engrave my initials on the lid?",)
