"""One spelling for matching: lower case, German umlauts spelled out, other accents dropped,
and common misspellings of the words the intents hinge on put right.

Customers type "remboursement" and "remboursé", "zurück" and "zurueck", "recieved" and
"cancle". The intent phrases (`intents.py`) are normalised by the same function, so a phrase
written with accents matches a ticket typed without them. Misspellings are corrected against
a short list of key words by one edit (SymSpell's symmetric deletes: a word and a key word
that share a string after deleting at most one letter each are one insertion, deletion,
substitution or adjacent swap apart), which costs a few dictionary lookups per word.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache

_SPELLED_OUT = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss", "’": "'", "‘": "'"})

KEY_WORDS = (
    "account arrived broken cancel cancellation cancelled charge charged damaged defective "
    "delivered delivery duplicate exchange faulty invoice missing package parcel payment "
    "received receipt refund refunded replacement return subscription tracking twice "
    "warranty wrong declined address credit compensation loyalty points voucher "
    "unauthorized hacked stopped working broken shipping ordered order still waiting "
    "cracked smashed dented shattered crushed scratched leaking delayed "
    "rembourser remboursement annuler commande livraison endommage defectueux "
    "erstattung rueckerstattung stornieren bestellung beschaedigt lieferung "
    "reembolso cancelar pedido devolucion rimborso annullare ordine "
    "terugbetaling annuleren bestelling reembolso encomenda cancelamento"
).split()
"""Words whose misspelling would hide an intent; corrected when a ticket's word is one edit
away and is not itself a word we know."""
REAL_WORDS = frozenset(
    "charger chargers change changed parcel parcels orders border charity cancer "
    "created credit credits accounts payments points pointe twice twine writing wanting "
    "checked chased worked waited annulee annulees annulez remboursee remboursees".split()
)
"""Real words one edit from a key word, never "corrected" into it."""
MIN_LENGTH = 5
"""Shorter words are left alone: at one edit, short words collide with other real words."""


def _one_edit(a: str, b: str) -> bool:
    """True when `a` and `b` are one insertion, deletion, substitution or adjacent swap apart
    (two deletes at different places can be two edits: "writing", "waiting")."""
    if len(a) > len(b):
        a, b = b, a
    i = next((k for k in range(len(a)) if a[k] != b[k]), len(a))
    if len(a) < len(b):
        return a[i:] == b[i + 1 :]
    swapped = a[i : i + 2] == b[i : i + 2][::-1] and a[i + 2 :] == b[i + 2 :]
    return a[i + 1 :] == b[i + 1 :] or swapped


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


@cache
def _neighbours() -> dict[str, str]:
    index: dict[str, str] = {}
    for key in KEY_WORDS:
        for variant in {key, *_deletes(key)}:
            index.setdefault(variant, key)
    return index


_KNOWN = frozenset(KEY_WORDS)
_WORD = re.compile(rf"[a-z]{{{MIN_LENGTH},}}")


def _correct(match: re.Match[str]) -> str:
    word = match.group(0)
    if word in _KNOWN:
        return word
    index = _neighbours()
    for variant in (word, *_deletes(word)):
        key = index.get(variant)
        if key is None or key[0] != word[0] or not _one_edit(key, word):
            continue
        if word.startswith(key) or key.startswith(word) or word in REAL_WORDS:
            return word  # an inflection ("refunds") or a word of its own ("charger")
        return key
    return word


@cache
def _without_combining() -> dict[int, None]:
    """A translation table deleting every combining mark (what NFKD splits accents into):
    one C-level `translate` instead of a Python test per character."""
    return {cp: None for cp in range(0x110000) if unicodedata.combining(chr(cp))}


def fold(text: str) -> str:
    """Lower case, umlauts spelled out, other accents dropped (no spelling correction)."""
    lowered = text.lower().translate(_SPELLED_OUT)
    if lowered.isascii():
        return lowered  # nothing to decompose
    return unicodedata.normalize("NFKD", lowered).translate(_without_combining())


TEXTING = {
    "q": "que",
    "vc": "voce",
    "vcs": "voces",
    "pq": "porque",
    "tb": "tambem",
    "tbm": "tambem",
    "msm": "mesmo",
    "td": "tudo",
    "pfv": "por favor",
    "pfvr": "por favor",
    "obg": "obrigado",
    "obgd": "obrigado",
    "obgda": "obrigada",
    "blz": "beleza",
    "hj": "hoje",
    "qdo": "quando",
    "qnd": "quando",
    "cmg": "comigo",
    "ngm": "ninguem",
}
"""Portuguese texting abbreviations ("o filtro q chegou não é o modelo q eu pedi", "obg!"),
written out so the phrase tables read them; none is a word in the other six languages."""
_TEXTING = re.compile(
    r"(?<![\w'-])(?:"
    + "|".join(sorted((k for k in TEXTING if k != "q"), key=len, reverse=True))
    + r")(?![\w'-])"
    # A lone "q" only before a word: English "Quick q: ..." keeps it.
    r"|(?<![\w'-])q(?= [a-z])"
)


@lru_cache(maxsize=4096)
def normalize(text: str) -> str:
    """The ticket as the intent phrases are matched against it (see the module docstring).
    Cached: a reading normalises the same clause for the tables, the learned model and the
    negation checks."""
    folded = _TEXTING.sub(lambda m: TEXTING[m.group(0)], fold(text))
    return _WORD.sub(_correct, folded)
