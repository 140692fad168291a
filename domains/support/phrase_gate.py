"""A cheap, exact pre-check of whether an intent's phrase pattern can match a clause at all.

Why: an intent's phrases are one alternation of a few hundred regular expressions
(`intents.pattern`), and Python's `re` tries every alternative at every word start, so the
22 intents' patterns were half of the reader's CPU (1.47 of 3.1 ms a ticket over the corpus).
Most clauses cannot match most intents: none of their words even starts like one of the
intent's phrases. This module works out, once per intent, every way the intent's phrases can
begin (their first `WIDTH` characters, read from the compiled pattern's own parse tree), and
per clause the first `WIDTH` characters at every place a phrase may start. An intent whose
beginnings the clause does not hold cannot match there, so its pattern is not run.

The pre-check never changes a reading: it only says "cannot match" when no match is
possible. Phrases whose beginnings cannot be listed (a `\\w+`, a `.`, a negated class, or too
many ways to begin) go into a small pattern of their own that is searched instead, so a gate
is always a superset of the real matches (tests/test_phrase_gate.py holds that over every
clause of the corpus, and that the gate rejects most of them).

It reads patterns with `re._parser`, the standard library's own regular expression parser
(`sre_parse` warns on import since 3.11). It is private, so a pattern it cannot read, or a
parse tree of a shape it does not know, makes the phrase ungated: the worst an upstream
change can do is take the speed away, never a match.
"""

from __future__ import annotations

import hashlib
import json
import re
import re._constants as sre  # private stdlib, checked by tests/test_pinned_internals.py
import re._parser as sre_parse
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

WIDTH = 4
"""How many leading characters the gate compares. 3 rejects most intents of a clause; 2
lets common two-letter starts ("th", "in") through far more often."""

MOST_BEGINNINGS = 2048
"""A phrase with more ways to begin than this is left ungated (its listing would cost more
than it saves)."""

_FOLD = str.maketrans("123456789\t\n\r\f\v", "000000000     ")
"""Digits compare as '0' and every space as ' ' on both sides, so `\\d` and `\\s` list one
beginning each instead of ten or six."""

PHRASE_START = r"(?:(?<![\w-])|(?<=[\d€$£]-)|(?<=dollar-)|(?<=euro-))"
"""Where a phrase may start, before every phrase (`intents.pattern`) and in the gate: at a
word start, not inside a hyphenated word ("noise-cancelling" is no cancellation), except
after an amount joined to the noun ("ein 50-€-Gutschein", "50-Dollar-Geschenkgutschein")."""
_START = re.compile(PHRASE_START)


class _Unlisted(Exception):
    """A piece of pattern whose beginnings cannot be listed."""


def _fold_char(code: int) -> str:
    return chr(code).translate(_FOLD)


def _chars_of_class(items: Iterable[tuple[Any, Any]]) -> set[str]:
    chars: set[str] = set()
    for op, arg in items:
        if op is sre.LITERAL:
            chars.add(_fold_char(arg))
        elif op is sre.RANGE:
            low, high = arg
            if high - low > 26:
                raise _Unlisted
            chars.update(_fold_char(c) for c in range(low, high + 1))
        elif op is sre.CATEGORY and arg is sre.CATEGORY_DIGIT:
            chars.add("0")
        elif op is sre.CATEGORY and arg is sre.CATEGORY_SPACE:
            chars.add(" ")
        else:  # a negated class, \w, ...: too many characters to list
            raise _Unlisted
    return chars


def _beginnings(items: list[tuple[Any, Any]], width: int) -> set[str]:
    """Every string of at most `width` characters a match of `items` can begin with (shorter
    only where the match itself is shorter)."""
    partial = {""}
    complete: set[str] = set()
    for op, arg in items:
        grown: set[str] = set()
        for head in partial:
            for piece in _one(op, arg, width - len(head)):
                (complete if len(head + piece) >= width else grown).add((head + piece)[:width])
        partial = grown
        if len(partial) + len(complete) > MOST_BEGINNINGS:
            raise _Unlisted
        if not partial:
            break
    return complete | partial


def _one(op: Any, arg: Any, width: int) -> set[str]:
    if op is sre.LITERAL:
        return {_fold_char(arg)}
    if op is sre.IN:
        return _chars_of_class(arg)
    if op is sre.CATEGORY:
        return _chars_of_class([(op, arg)])
    if op is sre.SUBPATTERN:
        _group, add_flags, del_flags, body = arg
        if add_flags or del_flags:
            raise _Unlisted  # an inline flag ((?i:...)) changes what a literal matches
        return _beginnings(list(body), width)
    if op is sre.BRANCH:
        return set().union(*(_beginnings(list(alt), width) for alt in arg[1]))
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, high, body = arg
        if high > 4:
            # "x+" / "x{2,}": as many copies as could fill the width stand for the rest.
            high = max(low, width)
        return set().union(*(_beginnings(list(body) * n, width) for n in range(low, high + 1)))
    if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
        return {""}  # consumes nothing: the beginning is whatever follows
    raise _Unlisted


_COMMON = frozenset(
    "the and you your for not but was have this that with can please order its it's "
    "ich die der das und ist mit nicht bitte ein eine meine mein bestellung "
    "le la les de des je et est pas mon ma une commande "
    "el los que por para una mi pedido "
    "il di che non per ordine "
    "het een ik mijn niet van bestelling "
    "os da do nao meu minha com um uma encomenda".split()
)
"""Words every language's tickets are full of: a phrase's beginning that starts one of them
lets nearly every clause through, so a later word of the phrase is a better anchor."""


def _cost(beginnings: set[str]) -> float:
    """Roughly how many clauses the beginnings let through (lower is better): one letter or
    two start something in nearly every clause, a number is in most (order ids), a common
    word in many."""

    def one(begin: str) -> float:
        if len(begin) == 1:
            return 200.0
        if len(begin) == 2:
            return 50.0
        if begin[0] == "0" or any(word.startswith(begin) for word in _COMMON):
            return 40.0
        if " " in begin:
            return 15.0
        return 1.0

    return sum(one(b) for b in beginnings)


def _leaves_start(item: tuple[Any, Any], entered_at_start: bool) -> bool:
    """Whether every match of `item` (entered at a phrase start or not) ends where a phrase
    may start: after a character that is neither a word character nor a hyphen (`_START`),
    or, having matched nothing, where it was entered."""
    op, arg = item
    if op is sre.LITERAL:
        return not (chr(arg).isalnum() or chr(arg) in "_-")
    if op is sre.CATEGORY:
        return arg is sre.CATEGORY_SPACE
    if op is sre.IN:
        return all(
            (o is sre.LITERAL and not (chr(a).isalnum() or chr(a) in "_-"))
            or (o is sre.CATEGORY and a is sre.CATEGORY_SPACE)
            for o, a in arg
        )
    if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
        return entered_at_start
    if op is sre.SUBPATTERN:
        return _sequence_leaves_start(list(arg[3]), entered_at_start)
    if op is sre.BRANCH:
        return all(_sequence_leaves_start(list(alt), entered_at_start) for alt in arg[1])
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, _high, body = arg
        # A copy may follow another copy, so its own entry is not counted as a start.
        return (low > 0 or entered_at_start) and _sequence_leaves_start(list(body), False)
    return False


def _sequence_leaves_start(items: list[tuple[Any, Any]], entered_at_start: bool) -> bool:
    at_start = entered_at_start
    for item in items:
        at_start = _leaves_start(item, at_start)
    return at_start


def _anchors(items: list[tuple[Any, Any]], at_start: bool) -> tuple[float, set[str]]:
    """The cheapest set of beginnings one of which every match of `items` holds at a phrase
    start: the match's own beginning (when `items` starts at a phrase start), or that of any
    later word of it, or, inside a group every match passes through, the group's own
    anchors. Raises _Unlisted when there is none."""
    best: tuple[float, set[str]] | None = None

    def offer(candidate: tuple[float, set[str]]) -> None:
        nonlocal best
        if best is None or candidate[0] < best[0]:
            best = candidate

    starts_here = at_start
    for index, (op, arg) in enumerate(items):
        if index:
            starts_here = _leaves_start(items[index - 1], starts_here)
        if starts_here:
            try:
                found = _beginnings(items[index:], WIDTH)
            except _Unlisted:
                found = set()
            if found and "" not in found:
                offer((_cost(found), found))
        try:
            if op is sre.SUBPATTERN and not (arg[1] or arg[2]):
                offer(_anchors(list(arg[3]), starts_here))
            elif op is sre.BRANCH:
                parts = [_anchors(list(alt), starts_here) for alt in arg[1]]
                offer((sum(c for c, _ in parts), set().union(*(b for _, b in parts))))
        except _Unlisted:
            pass
    if best is None:
        raise _Unlisted
    return best


@dataclass(frozen=True)
class PhraseGate:
    """Whether one intent's phrases can match a clause."""

    beginnings: frozenset[str]
    """How the listed phrases can begin, folded (`_FOLD`)."""
    unlisted: re.Pattern[str] | None
    """The phrases whose beginnings cannot be listed, searched as they are."""

    def may_match(self, starts: frozenset[str], text: str) -> bool:
        """False only when no phrase can match `text`, whose `clause_starts` are `starts`."""
        if not self.beginnings.isdisjoint(starts):
            return True
        return bool(self.unlisted and self.unlisted.search(text))


def clause_starts(text: str) -> frozenset[str]:
    """The first 1 to `WIDTH` characters at every place in `text` a phrase may start."""
    folded = text.translate(_FOLD)
    return frozenset(
        folded[m.start() : m.start() + n]
        for m in _START.finditer(folded)
        for n in range(1, WIDTH + 1)
    )


def digest(folded_phrases: tuple[str, ...]) -> str:
    """What a stored gate was built from: the phrases and the width."""
    text = "\n".join((str(WIDTH), *folded_phrases))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@cache
def _stored() -> dict[str, Any]:
    """Gates built ahead (`scripts/build_phrase_gates.py`): listing the beginnings of some
    4,000 phrases takes about a second, which every process would pay at its first ticket.
    Keyed by `digest`, so a changed phrase table is never answered from a stale entry; it is
    built here instead (slower to start, never wrong) and a test asks for a rebuild."""
    try:
        loaded: dict[str, Any] = json.loads(STORED.read_text())
    except (OSError, ValueError):
        return {}
    return loaded


STORED = Path(__file__).with_name("phrase_gates.json")


def built(folded_phrases: tuple[str, ...]) -> dict[str, list[str]]:
    """A gate's stored form (what `scripts/build_phrase_gates.py` writes): the beginnings of
    the phrases that can be listed, and the phrases that cannot."""
    beginnings: set[str] = set()
    unlisted: list[str] = []
    for phrase in folded_phrases:
        try:
            beginnings |= _anchors(list(sre_parse.parse(phrase)), at_start=True)[1]
        except (_Unlisted, re.error, AttributeError, TypeError, ValueError, IndexError):
            unlisted.append(phrase)
    return {"beginnings": sorted(beginnings), "unlisted": unlisted}


@cache
def gate(folded_phrases: tuple[str, ...]) -> PhraseGate:
    """The gate for phrases already folded like the text (`intents._fold_phrase`)."""
    entry = _stored().get(digest(folded_phrases)) or built(folded_phrases)
    unlisted = entry["unlisted"]
    return PhraseGate(
        beginnings=frozenset(entry["beginnings"]),
        unlisted=(
            re.compile(PHRASE_START + "(?:" + "|".join(unlisted) + ")")
            if unlisted
            else None
        ),
    )
