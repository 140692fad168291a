"""What a support ticket asks for: its intents, read by rules in the languages customers write.

Every intent found is planned for and must be resolved before an answer is `complete`
(principle 10). Each intent names the policy topics and knowledge-base articles that fit it;
the rules planner turns those into `policy` and `comms` packets. The table is data: adding an
intent or a language's phrases is an edit here, not in the graph.

Phrases are matched on the lower-cased ticket with accents kept, as whole-word prefixes
(`refund` matches "refunded", not "prefund"), so short stems are safe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache


@dataclass(frozen=True)
class Intent:
    """One thing a customer can ask for, and where its answer comes from."""

    name: str
    """Stable label, e.g. `duplicate_charge`."""
    phrases: tuple[str, ...]
    """Phrases (any language) that signal it; regex fragments, matched from a word start."""
    policy_topics: tuple[str, ...] = ()
    """Policy topics (`policy.check_policy(topic)`) whose rules decide it."""
    kb_articles: tuple[str, ...] = ()
    """Knowledge-base articles whose customer-facing wording answers it."""
    needs_order: bool = True
    """True when it cannot be resolved without knowing which order it is about."""
    label: str = ""
    """How the answer names it ("duplicate charge")."""
    unless: tuple[str, ...] = field(default=())
    """Intents that, when also present, make this one redundant (a more specific reading)."""
    kb_if: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = field(default=())
    """(phrases, articles): when these phrases are in the ticket, these articles answer it
    instead of `kb_articles` (late_delivery: tracking → KB-101, late → KB-102)."""

    def articles_for(self, text: str) -> tuple[str, ...]:
        """The articles that answer this intent in this ticket."""
        for phrases, articles in self.kb_if:
            if _pattern(phrases).search(text.lower()):
                return articles
        return self.kb_articles


INTENTS: tuple[Intent, ...] = (
    Intent(
        "duplicate_charge",
        (
            r"charged (?:me |my card |us )?twice",
            r"(?:money|payment|paid|charge)\b[^.?!]{0,40}\btwice",
            r"two (?:\w+ )?charges",
            r"dos cargos",
            r"charged (?:me )?twice",
            r"double[- ]?charged?",
            r"charged double",
            r"duplicate",
            r"two charges",
            r"2 charges",
            r"charged two times",
            r"billed twice",
            r"taken twice",
            r"debited twice",
            r"second charge",
            r"deux fois",
            r"double (?:prélèvement|débit|paiement|facturation)",
            r"débité deux",
            r"prélevé deux",
            r"factur\w* deux fois",
            r"doppelt",
            r"zweimal (?:abgebucht|belastet|berechnet)",
            r"zwei abbuchungen",
            r"dos veces",
            r"cobro doble",
            r"cobrado dos",
            r"doble cargo",
            r"cargo duplicado",
            r"due volte",
            r"addebit\w* due",
            r"doppio addebito",
            r"dubbel",
            r"twee keer",
            r"tweemaal",
            r"duas vezes",
            r"cobrança duplicada",
            r"cobrado duas",
        ),
        policy_topics=("duplicate_charge",),
        kb_articles=("KB-201",),
        label="duplicate charge",
    ),
    Intent(
        "refund_request",
        (
            r"want (?:\$?[\d.,]+ |it |them )?back",
            r"\$[\d.,]+ back",
            r"difference back",
            r"devolver (?:uno|el cobro|los cobros|el dinero)",
            r"refund(?!ed)",
            r"money back",
            r"reimburs",
            r"pay me back",
            r"credit it back",
            r"rembours",
            r"erstatt",
            r"rückerstatt",
            r"geld zurück",
            r"reembols",
            r"devolución del dinero",
            r"devuelvan (?:el|mi) dinero",
            r"rimbors",
            r"terugbetal",
            r"geld terug",
            r"reembolso",
            r"devolução do dinheiro",
        ),
        policy_topics=("refunds",),
        kb_articles=("KB-202",),
        label="refund",
        unless=("acknowledgement",),
    ),
    Intent(
        "cancellation",
        (
            r"cancel(?!led (?:order|orders)\b)",
            r"annul",
            r"stornier",
            r"storno",
            r"cancelar",
            r"cancela",
            r"annuller",
            r"cancellare",
            r"annullare",
        ),
        policy_topics=("cancellation",),
        kb_articles=("KB-104",),
        label="cancellation",
    ),
    Intent(
        "late_delivery",
        (
            r"(?:hasn'?t|hasnt|has not|haven'?t|havent) (?:shown up|turned up|arrived|come)",
            r"(?:question|questions|asking) about the (?:delivery|shipping)",
            r"delivery of (?:my )?order",
            r"order #?\d+ (?:shipping|delivery)",
            r"no han? llegado",
            r"retras",
            r"late\b",
            r"delayed",
            r"delay",
            r"not (?:yet )?(?:arrived|delivered|received)",
            r"never (?:arrived|came|received|showed up)",
            r"hasn'?t (?:arrived|come)",
            r"has not (?:arrived|come|moved)",
            r"still not delivered",
            r"where is my",
            r"where is order",
            r"tracking",
            r"lost (?:parcel|package)",
            r"missing (?:parcel|package)",
            r"still waiting",
            r"not received",
            r"pas (?:encore )?(?:reçu|arrivé|livré)",
            r"jamais (?:reçu|arrivé)",
            r"en retard",
            r"colis (?:perdu|manquant)",
            r"toujours pas",
            r"nicht (?:angekommen|geliefert|erhalten)",
            r"verspät",
            r"noch nicht da",
            r"no (?:ha )?llegad",
            r"no me ha llegado",
            r"retrasad",
            r"non (?:è )?(?:arrivat|consegnat)",
            r"in ritardo",
            r"niet (?:aangekomen|ontvangen|geleverd)",
            r"vertraagd",
            r"te laat",
            r"não (?:chegou|recebi)",
            r"atrasad",
            r"encomenda não",
        ),
        policy_topics=("shipping",),
        kb_articles=("KB-101",),
        kb_if=(
            (
                (
                    r"late\b",
                    r"delay",
                    r"not (?:yet )?(?:arrived|delivered|received|moved)",
                    r"never (?:arrived|came)",
                    r"still not",
                    r"still waiting",
                    r"hasn'?t",
                    r"hasnt",
                    r"has not",
                    r"haven'?t",
                    r"retard",
                    r"verspät",
                    r"retras",
                    r"no han? llegado",
                    r"ritardo",
                    r"vertraagd",
                    r"te laat",
                    r"atrasad",
                    r"toujours pas",
                    r"pas (?:encore )?(?:reçu|arrivé|livré)",
                    r"nicht (?:angekommen|geliefert|erhalten)",
                    r"noch nicht",
                    r"non (?:è )?arriv",
                    r"niet (?:aangekomen|ontvangen|geleverd)",
                    r"não (?:chegou|recebi)",
                    r"lost",
                    r"missing",
                ),
                ("KB-102",),
            ),
        ),
        label="late or missing delivery",
    ),
    Intent(
        "damaged_item",
        (
            r"damaged",
            r"arrived broken",
            r"broken on arrival",
            r"came broken",
            r"smashed",
            r"cracked",
            r"dented",
            r"crushed",
            r"endommag",
            r"abîm",
            r"cassé",
            r"beschädigt",
            r"kaputt angekommen",
            r"dañad",
            r"llegó roto",
            r"danneggiat",
            r"arrivato rotto",
            r"beschadigd",
            r"danificad",
            r"chegou partid",
        ),
        policy_topics=("returns",),
        kb_articles=("KB-106",),
        label="damaged item",
    ),
    Intent(
        "defective_item",
        (
            r"has died",
            r"stopped charging",
            r"defeito",
            r"deixou de funcionar",
            r"não liga",
            r"defect",
            r"faulty",
            r"stopped working",
            r"stops working",
            r"doesn'?t work",
            r"does not work",
            r"not working",
            r"won'?t (?:turn|switch|power|charge)",
            r"does not turn on",
            r"doesn'?t turn on",
            r"dead on arrival",
            r"malfunction",
            r"broke after",
            r"died after",
            r"défectueu",
            r"ne fonctionne (?:pas|plus)",
            r"en panne",
            r"marche plus",
            r"funktioniert nicht",
            r"defekt",
            r"geht nicht mehr",
            r"no funciona",
            r"defectuos",
            r"dejó de funcionar",
            r"non funziona",
            r"difettos",
            r"werkt niet",
            r"kapot",
            r"não funciona",
            r"defeituos",
            r"parou de funcionar",
        ),
        policy_topics=("returns", "warranty"),
        kb_articles=("KB-106", "KB-107"),
        label="defective item",
    ),
    Intent(
        "wrong_item",
        (
            r"not the [^.?!]{0,40} i ordered",
            r"right (?:thing|item|one) sent",
            r"wrong (?:item|product|model|thing|article)",
            r"(?:received|sent|got|delivered|shipped|arrived with|came with) (?:me )?(?:the |a )?"
            r"(?:wrong|different)",
            r"not what i ordered",
            r"different item",
            r"instead of (?:the|my)",
            r"isn'?t what i ordered",
            r"mauvais (?:article|produit)",
            r"pas (?:le bon|ce que j'ai commandé)",
            r"falsch\w* (?:artikel|produkt)",
            r"nicht (?:das|den|die) bestellt",
            r"artículo (?:equivocado|incorrecto)",
            r"producto equivocado",
            r"articolo sbagliato",
            r"verkeerde? (?:artikel|product)",
            r"produto errado",
            r"item errado",
        ),
        policy_topics=("returns",),
        kb_articles=("KB-103",),
        label="wrong item",
    ),
    Intent(
        "return_request",
        (
            r"send back",
            r"return",
            r"send (?:it|them|this) back",
            r"exchange",
            r"doesn'?t fit",
            r"don'?t fit",
            r"do not fit",
            r"too (?:small|big|large)",
            r"retourn",
            r"renvoyer",
            r"zurücksenden",
            r"zurückschicken",
            r"rücksend",
            r"umtausch",
            r"quiero devolver(?! el dinero| uno| el cobro)",
            r"devolución(?! del dinero)",
            r"restituire",
            r"reso\b",
            r"terugsturen",
            r"retour",
            r"devolução",
        ),
        policy_topics=("returns",),
        kb_articles=("KB-103",),
        label="return",
        unless=("damaged_item", "defective_item", "wrong_item"),
    ),
    Intent(
        "price_error",
        (
            r"price match",
            r"price (?:looks |is |was )?wrong",
            r"wrong price",
            r"price (?:dropped|drop|went down)",
            r"cheaper",
            r"discount (?:was not|wasn'?t|not)",
            r"discount applied",
            r"overcharged",
            r"charged more than",
            r"price difference",
            r"prix",
            r"preis",
            r"precio",
            r"prezzo",
            r"prijs",
            r"preço",
        ),
        policy_topics=("price_match",),
        kb_articles=("KB-109",),
        label="price",
    ),
    Intent(
        "gift_card",
        (
            r"gift ?cards?",
            r"voucher",
            r"carte[- ]cadeau",
            r"gutschein",
            r"geschenkkarte",
            r"tarjeta regalo",
            r"buono regalo",
            r"carta regalo",
            r"cadeaubon",
            r"cadeaukaart",
            r"cartão presente",
            r"vale[- ]presente",
        ),
        policy_topics=("gift_cards",),
        kb_articles=("KB-203",),
        needs_order=False,
        label="gift card",
    ),
    Intent(
        "callback",
        (
            r"give me a ring",
            r"call ?back",
            r"call me",
            r"phone me",
            r"ring me",
            r"give me a call",
            r"rappel",
            r"rappelez",
            r"rückruf",
            r"zurückrufen",
            r"llamad(?:a|me)",
            r"devolver la llamada",
            r"richiam",
            r"terugbel",
            r"ligue-me",
            r"ligar de volta",
        ),
        needs_order=False,
        label="callback",
    ),
    Intent(
        "complaint",
        (
            r"furious",
            r"angry",
            r"lawyer",
            r"legal action",
            r"sue\b",
            r"court",
            r"unacceptable",
            r"speak to (?:a |an |your )?(?:human|person|manager|supervisor)",
            r"talk to (?:a |an |your )?(?:human|person|manager|supervisor)",
            r"manager",
            r"complaint",
            r"chargeback",
            r"disgusted",
            r"ridiculous",
            r"outrageous",
            r"worst",
            r"scam",
            r"trading standards",
            r"consumer protection",
            r"inacceptable",
            r"avocat",
            r"plainte",
            r"furieux",
            r"unverschämt",
            r"anwalt",
            r"beschwerde",
            r"inaceptable",
            r"abogado",
            r"denuncia",
            r"inaccettabile",
            r"avvocato",
            r"reclamo",
            r"onacceptabel",
            r"advocaat",
            r"klacht",
            r"inaceitável",
            r"advogado",
            r"reclamação",
        ),
        policy_topics=("escalation",),
        kb_articles=("KB-112",),
        needs_order=False,
        label="complaint",
    ),
    Intent(
        "acknowledgement",
        (
            r"thanks?,? (?:all|it'?s|that'?s|everything)",
            r"thank you,? (?:all|it'?s|that'?s|everything)",
            r"all (?:sorted|good|resolved|fine)",
            r"problem (?:is )?(?:solved|resolved)",
            r"(?:it|that|everything) (?:has been|is|was) (?:sorted|resolved|fixed)",
            r"no (?:further|more) (?:action|help) (?:is )?needed",
            r"got (?:it|my refund|the refund)",
            r"merci,? (?:c'est|tout)",
            r"problème résolu",
            r"danke,? (?:alles|hat sich)",
            r"gracias,? (?:todo|ya)",
            r"grazie,? (?:tutto|risolto)",
            r"bedankt,? (?:alles|het)",
            r"obrigad[oa],? (?:tudo|já)",
        ),
        needs_order=False,
        label="thanks",
    ),
)
"""Every intent the rules planner reads, in the order the answer lists them."""

BY_NAME: dict[str, Intent] = {intent.name: intent for intent in INTENTS}


TIMEZONE = re.compile(r"\b(?:UTC|[A-Z][a-z]+(?:/[A-Z][A-Za-z_]+)+)\b")
"""An IANA time-zone name such as Europe/Berlin or America/New_York, or UTC."""

ENGLISH_WORDS = frozenset(
    "the and my was is it i you to a of for on not have has please what can order charged "
    "with this that me be are your we".split()
)
FOREIGN_WORDS: dict[str, frozenset[str]] = {
    "French": frozenset(
        "le la les je mon ma mes est et pas une un des pour vous avec commande "
        "été merci bonjour svp".split()
    ),
    "German": frozenset(
        "der die das ich mein meine ist und nicht ein eine für sie mit bitte "
        "bestellung habe wurde danke hallo".split()
    ),
    "Spanish": frozenset(
        "el la los las mi mis es y no un una para usted con pedido he sido "
        "gracias hola por favor".split()
    ),
    "Italian": frozenset(
        "il lo la gli le mio mia è e non un una per con ordine ho stato grazie ciao".split()
    ),
    "Dutch": frozenset(
        "de het een ik mijn is en niet voor u met bestelling heb werd bedankt "
        "hallo alstublieft".split()
    ),
    "Portuguese": frozenset(
        "o a os as meu minha é e não um uma para você com encomenda pedido "
        "foi obrigado obrigada olá".split()
    ),
}
"""Common words of the languages the planner reads, to tell which one a ticket is in."""


@cache
def _pattern(phrases: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(?<![\w])(?:" + "|".join(phrases) + ")", re.IGNORECASE)


def find_intents(text: str) -> tuple[str, ...]:
    """Every intent the ticket expresses, in table order; redundant readings dropped."""
    lowered = text.lower()
    found = [intent.name for intent in INTENTS if _pattern(intent.phrases).search(lowered)]
    return tuple(
        name for name in found if not any(other in found for other in BY_NAME[name].unless)
    )


def detect_language(text: str) -> str:
    """The ticket's language, by its most common function words (English when unsure)."""
    words = re.findall(r"[^\W\d_]+", text.lower())
    english = sum(w in ENGLISH_WORDS for w in words)
    best, score = "English", english
    for language, vocabulary in FOREIGN_WORDS.items():
        hits = sum(w in vocabulary for w in words)
        if hits > score:
            best, score = language, hits
    return best


PERSONAL = (
    r"my (?:order|parcel|package|purchase|item|card|gift ?card|refund|money|statement|delivery)",
    r"i (?:ordered|bought|paid|purchased|was charged|have one)",
    r"you charged",
    r"charged me",
    r"ma commande",
    r"mon colis",
    r"meine bestellung",
    r"mein paket",
    r"mi pedido",
    r"il mio ordine",
    r"mijn bestelling",
    r"minha encomenda",
    r"meu pedido",
)
"""Phrases that make a ticket about the customer's own order, not a general question."""
NOT_ORDER_BOUND = ("acknowledgement", "callback", "complaint")


def is_about_an_order(text: str, intents: tuple[str, ...]) -> bool:
    """True when the ticket concerns the customer's own order, even if it names none; a
    general question ("What is your returns policy?") is answered from the policy alone."""
    if not any(name not in NOT_ORDER_BOUND for name in intents):
        return False
    return bool(_pattern(PERSONAL).search(text.lower()))
