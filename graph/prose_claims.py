"""Claims about a subject's state in a model's prose, held to the observations.

`graph.verify` checks the ids, amounts and dates a sentence states. A model also states what
*is*: "the order has not yet been shipped", "your refund has been issued", "the service is
healthy again". Such a claim is read here as a state and a polarity, and checked against
what the tools observed (and what the graph itself did, in the composed resolution steps):

- a denial ("not shipped") is contradicted when the evidence shows the state;
- an assertion ("has shipped") is unsupported when nothing observed or done shows the
  state (a status that implies it, its timestamp, a refunded amount).

The evidence is read structurally where it is JSON (status-like fields, `refunded_cents`,
`*_at` timestamps), as words with their negation where it is prose. The vocabulary is
English: it is what the provider models are asked to write in, and a claim in words this
module does not know is simply not a state claim (the id, amount and date checks still
apply to it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

NEGATION = re.compile(
    r"\b(?:not|never|no|nothing|none|yet to|pending|awaiting|without)\b|n['’]t\b", re.IGNORECASE
)
"""A word that denies the state word after it, within its clause."""
NOT_A_FACT = re.compile(
    r"\b(?:will|would|should|shall|can|could|may|might|once|if|when|after|as soon as|"
    r"expected|scheduled|going to|about to|hope|please)\b|\?",
    re.IGNORECASE,
)
"""A promise, a condition or a question: the clause states no fact about the present."""
CLAUSE_BREAK = re.compile(r"[.;:!?,]|\b(?:but|and|although|however|while)\b", re.IGNORECASE)


@dataclass(frozen=True)
class State:
    """One state a subject can be in, the words that claim it, and what implies it."""

    name: str
    words: re.Pattern[str]
    """The state as prose says it (a past or present-perfect form, not a promise)."""
    statuses: frozenset[str]
    """Status values (in a status-like JSON field) that mean the subject is in this state."""
    timestamp_keys: tuple[str, ...] = ()
    """JSON keys whose non-empty value means the state happened."""


STATES = (
    State(
        "shipped",
        re.compile(r"\b(?:shipped|dispatched|sent out|in transit|on (?:its|the) way)\b", re.I),
        frozenset({"shipped", "delivered", "delayed", "in_transit", "returned"}),
        ("shipped_at", "delivered_at"),
    ),
    State(
        "delivered",
        re.compile(r"\b(?:delivered|arrived)\b", re.I),
        frozenset({"delivered", "returned"}),
        ("delivered_at",),
    ),
    State(
        "refunded",
        re.compile(r"\b(?:refunded|refund (?:has|had|was) been (?:issued|made|processed))\b", re.I),
        frozenset({"refunded", "partially refunded", "partially_refunded"}),
        ("refunded_at",),
    ),
    State(
        "cancelled",
        re.compile(r"\b(?:cancell?ed)\b", re.I),
        frozenset({"cancelled", "canceled"}),
        ("cancelled_at",),
    ),
    State(
        "rolled back",
        re.compile(r"\b(?:rolled back|reverted)\b", re.I),
        frozenset({"rolled_back", "rolled back", "reverted"}),
        ("rolled_back_at",),
    ),
    State(
        "healthy",
        re.compile(r"\b(?:healthy|recovered|back to normal)\b", re.I),
        frozenset({"healthy", "resolved", "normal"}),
    ),
)
STATUS_KEYS = ("status", "state", "health", "order_status")


@dataclass(frozen=True)
class StateClaim:
    """A sentence's claim that something is, or is not, in a state."""

    state: str
    negated: bool
    text: str
    """The words of the claim, for the reason a removal gives."""


def state_claims(text: str) -> list[StateClaim]:
    """The state claims in `text`: each state word, denied if a negation precedes it in
    its clause ("has not yet been shipped", "no refund was issued")."""
    claims = []
    for state in STATES:
        for match in state.words.finditer(text):
            before = text[: match.start()]
            breaks = list(CLAUSE_BREAK.finditer(before))
            clause = before[breaks[-1].end() :] if breaks else before
            start = breaks[-1].end() if breaks else 0
            end = match.end() + (text[match.end() :] + ".").find(".")
            if NOT_A_FACT.search(clause) or "?" in text[match.end() : end + 1]:
                continue
            negated = bool(NEGATION.search(clause))
            claims.append(StateClaim(state.name, negated, text[start : match.end()].strip()))
    return claims


@dataclass
class Evidence:
    """What the observations show about states: the states shown, and the statuses named."""

    shown: set[str]
    statuses: set[str]


def _walk(value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key), item
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


def evidence_of(texts: Iterable[str]) -> Evidence:
    """The states the observations and steps show, read as JSON where they are JSON."""
    shown: set[str] = set()
    statuses: set[str] = set()
    for text in texts:
        try:
            data = json.loads(text)
        except (ValueError, TypeError):
            data = None
        if isinstance(data, (dict, list)):
            for key, value in _walk(data):
                if key in STATUS_KEYS and isinstance(value, str):
                    statuses.add(value.lower())
                for state in STATES:
                    if key in state.timestamp_keys and value:
                        shown.add(state.name)
                if key == "refunded_cents" and isinstance(value, int) and value > 0:
                    shown.add("refunded")
            continue
        for claim in state_claims(text):  # prose (a step the graph composed): its own words
            if not claim.negated:
                shown.add(claim.state)
    for state in STATES:
        if statuses & state.statuses:
            shown.add(state.name)
    return Evidence(shown=shown, statuses=statuses)


def contradicted(claim: StateClaim, evidence: Evidence) -> str | None:
    """Why the evidence contradicts `claim`, or None when it does not."""
    state = next(s for s in STATES if s.name == claim.state)
    if claim.negated and claim.state in evidence.shown:
        return f"{claim.text!r} denies {claim.state}, which the findings show"
    if not claim.negated and claim.state not in evidence.shown:
        named = sorted(evidence.statuses - state.statuses)
        seen = f" (the statuses they show: {', '.join(named)})" if named else ""
        return f"{claim.text!r} claims {claim.state}, which no finding shows{seen}"
    return None


def prose_problems(text: str, evidence: Evidence) -> list[str]:
    """One reason per state claim in `text` the evidence contradicts or does not show."""
    return [why for claim in state_claims(text) if (why := contradicted(claim, evidence))]
