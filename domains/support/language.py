"""Which of the seven languages a ticket is written in, by its most common small words.

The reply must go out in the customer's language, so a non-English ticket always needs a
human (LABELS.md); the words are folded like the intent phrases (`text_norm.fold`), so a
ticket typed without accents reads the same.
"""

from __future__ import annotations

import re

from .text_norm import fold

ENGLISH = "English"
WORDS: dict[str, frozenset[str]] = {
    ENGLISH: frozenset(
        "the and my was is it i you to a of for on not have has please what can order charged "
        "with this that me be are your we hi hello thanks would could did got still just but "
        "when where why how its im ive dont do does you gift if in at from an any more "
        "it's i'm i've don't doesn't didn't can't won't isn't".split()
    ),
    "French": frozenset(
        "le la les je mon ma mes est et pas une un des pour vous avec commande ete merci "
        "bonjour svp j'ai ai du au ce cette qui que mais toujours deja aussi tres votre nous "
        "colis suis avez fait bjr bonsoir voudrais j'aimerais pouvez hier aujourd'hui "
        "argent".split()
    ),
    "German": frozenset(
        "der die das ich mein meine ist und nicht ein eine fuer sie mit bitte bestellung habe "
        "wurde danke hallo auch noch schon aber wie wo was mir mich es ihr ihre wir haben bei "
        "sehr zu von dem den kann bin obwohl dass weil wenn oder wird sind keine kein leider "
        "heute gestern paket wann warum uhr unter bis nur nichts euch ihnen "
        # Austrian, Bavarian and Swiss forms: "mei Rucksack is no imma ned do"
        "mei ned net nix imma hob hab griass gruess servus gruezi grueezi isch ha nid nod "
        "chunnt bstellig scho wieda".split()
    ),
    "Spanish": frozenset(
        "el la los las mi mis es y no un una para usted con pedido he sido gracias hola por "
        "favor que pero me lo se del al muy ya todavia esta han hace holaa holaaa buenas quiero "
        "necesito dinero llego ayer hoy tengo puedo pueden saludos abris".split()
    ),
    "Italian": frozenset(
        "il lo la gli le mio mia e non un una per con ordine ho stato grazie ciao che sono "
        "del della ma mi ancora gia buongiorno vorrei perche anche questo di ci domanda quanto "
        "salve buonasera soldi arrivato ieri oggi devo posso potete fate nun sto".split()
    ),
    "Dutch": frozenset(
        "de het een ik mijn is en niet voor u met bestelling heb werd bedankt hallo "
        "alstublieft dat maar nog al wel ook mij graag jullie zijn wat waar hoe geen zie bijlage "
        "goedemiddag goedemorgen groetjes gisteren vandaag kunnen moet annuleer besteld".split()
    ),
    "Portuguese": frozenset(
        "o a os as meu minha e nao um uma para voce com encomenda pedido foi obrigado obrigada "
        "ola que mas ainda ja do da no na eu me por favor esta tenho oi bom boa dia tarde tudo bem "
        "vou entao entendi aguardar aguardo obg blz valeu voces vcs vc pra isso isto queria "
        "quero preciso podem chegou recebi dinheiro compra".split()
    ),
}
"""Common words of each language the planner reads (folded)."""
MIN_FOREIGN_WORDS = 2
"""A ticket with English words is read as another language only on two of its small words at
least: one shared word ("do", "me", "a") is no evidence in a short English ticket."""
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def detect_language(text: str) -> str:
    """The ticket's language, by its most common small words. English when nothing else has
    `MIN_FOREIGN_WORDS`; a tie with English goes to the other language, since a reply that
    must be in another language needs a person ("Il tavolo dell'ordine ... in ufficio invece
    che a casa?" has as many English small words, "in" and "a", as Italian ones)."""
    words = _WORD.findall(fold(text))
    # An elided article or preposition is a word of its own ("dell'ordine", "l'adresse").
    pieces = words + [p for w in words if "'" in w for p in w.split("'") if p]
    english = sum(w in WORDS[ENGLISH] for w in words)
    best, score = ENGLISH, english
    for language, vocabulary in WORDS.items():
        if language == ENGLISH:
            continue
        hits = sum(w in vocabulary for w in pieces)
        beats = hits > score or (hits == score and best == ENGLISH)
        if beats and (hits >= MIN_FOREIGN_WORDS or english == 0) and hits > 0:
            best, score = language, hits
    return best
