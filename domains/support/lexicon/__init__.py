"""The intents' phrase lexicons by language family, merged into the intent table
(`domains/support/intents.py`): English (`en`), French and Spanish (`fr_es`), Portuguese
(`pt`), German, Dutch and Italian (`germanic_it`). Each module is data: `PHRASES`, intent name
to regex fragments over folded text, written from how customers write, never from the
labelled tickets (LABELS.md, README "How Muster reads a ticket")."""

from __future__ import annotations

from . import en, fr_es, germanic_it, pt

FAMILIES = (en.PHRASES, fr_es.PHRASES, pt.PHRASES, germanic_it.PHRASES)


def phrases_for(intent: str) -> tuple[str, ...]:
    """Every lexicon's phrases for one intent, in family order, without repeats."""
    return tuple(dict.fromkeys(p for family in FAMILIES for p in family.get(intent, ())))
