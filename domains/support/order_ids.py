"""Order ids: the one parser for how customers write them, and the one normaliser.

An order id is a run of 4 to 8 digits *introduced* as an order: by `#`, `n°`/`no.`/`nr.`, or
the word for an order in the languages customers write in (order, commande, Bestellung,
pedido, ordine, bestelling, encomenda, zamówienie), and the ids joined to one ("orders 12345
and 12350", "#12345 + #12350"). A bare five-digit number counts only in a sentence about an
order (its words: "charged twice on 12345", "the parcel (12342)") and never where it reads as
a phone number, a date, an amount, a postcode or part of a code with letters.

The orders server normalises ids the same way (`servers/orders.py` cannot import this module:
servers are reached only over MCP); `tests/test_plan.py` checks that the two agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

ORDER_WORDS: tuple[str, ...] = (
    r"orders?",
    r"commandes?",
    r"bestellung(?:en)?",
    r"bestellnummer",
    r"pedidos?",
    r"ordine",
    r"ordini",
    r"bestelling(?:en)?",
    r"encomendas?",
    r"zam[oó]wienie",
    r"auftrag",
    r"bestellnr",
    r"bestelnummer",
    r"ordem",
    r"orden(?:es)?",
    r"ordre",
    r"ord",
    # Typed in a hurry: "ordr 12370", "odrer 12355".
    r"ordr",
    r"odrer",
    # Abbreviations customers write: "cde 12348", "cmd 12350", "Best.-Nr. 12323".
    r"cde",
    r"cmde?",
    r"best\.?\s?-?\s?nr",
    # Swiss German: "Bstellnummer 12354", "Bstellig 12358"; a purchase: "den Einkauf 12340".
    r"bstell\w*",
    r"einkauf",
)
"""The word for an order, in the languages the rules planner reads."""

_NUMBER_SIGN = (
    r"(?:#|n[°º]\.?|n\.\s?[°º]|n\.|no\.?|nr\.?|num(?:ber|[eé]ro)?\.?|number|id|nummer|n[uú]mero)"
)
_INTRO = (
    r"(?:\b(?:cancel|refund|return|track|check|annuler|stornieren|cancelar)\s+(?=\d)|"
    rf"#\s*|\b(?:{'|'.join(ORDER_WORDS)})\b(?:\s+(?:{_NUMBER_SIGN}|de|du|number))*"
    rf"\s*(?:[:#]|{_NUMBER_SIGN})?\s*|\bn[°º]\s*)"
)
ORDER_ID = re.compile(
    rf"(?:{_INTRO}|\b(?:{'|'.join(ORDER_WORDS)})\.?\s*(?:[:#]\s*)?)(\d{{4,8}})\b(?![-/.,]\d)",
    re.IGNORECASE,
)
"""An order id as customers write it: `#12345`, `order 12345`, `order no. 12345`,
`Order ID: 12324`, `order#12369`, `commande n°12345`, `Bestellung 12345`, `pedido 12345`, or
right after a verb that takes an order (`cancel 12345`); group 1 is the digits."""
JOINED_ID = re.compile(
    r"\s*(?:,|\+|&|/|and|et|und|y|e|en|ou|or|oder|o|of)\s*(?:#|n[°º]\.?\s*)?(\d{4,8})\b(?![-/.,]\d)",
    re.IGNORECASE,
)
"""An id joined to the one before it: "#12345 and 12350", "12345 + 12350", "12345, 12346"."""
BARE_NUMBER = re.compile(
    # Not after a US state ("Springfield, IL 62704": a ZIP code).
    r"(?<![\w$€£+/.,:#-])(?<!\d )(?<![A-Z][A-Z] )(?!0)(\d{5})"
    r"(?![\w%€$£]|[-/.,:]\d|\s?(?:€|eur\b|usd\b)|\s+[A-Z][a-zà-ÿ]{2,}|\s\d{2,}"
    r"|\s?(?:points?|punkte|pontos|punti|punten|pts)\b)"
)
"""A bare five-digit number: not inside a date, an amount, a phone number or a code. One
beside another group of digits ("07911 123456") or with a leading zero is a phone number's
or a postcode's part."""
ORDER_CONTEXT = re.compile(
    r"\b(?:orders?|ordered|purchases?|bought|parcels?|packages?|deliver(?:y|ies)|shipments?"
    r"|charged?|charges|refund\w*"
    r"|cancel\w*|return\w*|items?|arrived|late|delayed|shipped|tracking|invoices?|receipts?|bill\w*"
    r"|debit\w*|paid|pay|payment|twice|faulty|broken|damaged|wrong|status"
    # What came damaged, in the words people use: "came w a massive dent", "lid cracked".
    r"|dent\w*|crack\w*|smash\w*|crush\w*|scratch\w*|shatter\w*|leak\w*|rattl\w*"
    r"|commande|colis|achat|livraison|bestellung|bestellt|paket|lieferung|pedido|paquete"
    r"|compra|envío|envio|ordine|pacco|spedizione|bestelling|pakket|levering|encomenda"
    r"|pacote|entrega"
    # Late, in each language: "12333 ta atrasado faz semanas".
    r"|atrasad\w*|retard\w*|verspaet\w*|verspät\w*|vertraag\w*|ritard\w*"
    # The same words' other forms in the other languages (stems: any ending).
    r"|command\w*|livr(?:aison|e|ee|es|ees|é|ée|és|ées)|rembours\w*|annul\w*|achet\w*|factur\w*"
    r"|bestell\w*|storn\w*|erstatt\w*|geliefert|zugestellt|versand\w*|sendung|rechnung|abgebucht"
    r"|pedid[oa]s?|reembols\w*|devol\w*|cobr\w*|llegó|llego|recibí|recibi|enviad[oa]s?"
    r"|ordin[ei]|annull\w*|rimbors\w*|spedit\w*|consegn\w*|addebit\w*|fattur\w*"
    r"|bestel\w*|annuleer\w*|annuleren|terugbeta\w*|bezorg\w*|geleverd|verzonden|factuur"
    r"|afgeschreven|encomend\w*|estorn\w*|chegou|recebi|fatura|cobrad[oa]s?)\b",
    re.IGNORECASE,
)
"""Words that make a sentence about an order, so a bare number in it is read as its id."""
NOT_AN_ORDER = re.compile(
    r"(?:\b(?:phone|tel|telephone|mobile|cell|call|ring|fax|whatsapp|zip|post ?code|postal"
    r"|address|street|rue|straße|strasse|calle|via|straat|rua|plz|cep|cap|iban"
    r"|téléphone|telefon|teléfono|telefono|telefoon|adresse|direcci[oó]n"
    r"|indirizzo|adres|endereço|morada)\b"
    # "change the address on 12334": the address of an order, not a number of the address.
    r"(?!\s+(?:on|for|of|in|de|du|der|des|fuer|für|van|voor|do|da|del|della|dell'ordine)"
    r"\s+(?:(?:my|the|order|mijn|la|le|meiner|meine|die|den|o|a|el|il)\s+)*(?:#?\d{5}\b|$))"
    r"[^.\n]{0,25}$"
    r"|\b(?:account|card|tracking|konto|karte|compte|carte|cuenta|tarjeta|conto|carta"
    r"|kunden|kunde|customer|client|cliente|member|membership|klant|mitglied\w*|kd"
    r"|rekening|kaart|conta|cartao|cartão"
    # "it throws error code 40521": a code the payment page shows, never an order.
    r"|code|codes|codigo|código|codice|fehlercode|foutcode|pin|otp|error|fehler|erreur"
    r"|errore|erro|fout)\b\s*(?:number|no\.?|nr\.?|n[°º]|id|#|nummer"
    r"|num[eé]ro|n[uú]mero|numero)?\s*[:#]?\s*$)",
    re.IGNORECASE,
)
"""Words right before a number that make it a phone, a postcode, an address or a card."""
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


INTRODUCED = re.compile(
    r"(?:\(|\b(?:where'?s|where is|wheres|where are|wo ist|wo sind|ou est|ou sont|donde esta"
    r"|donde estan|dov'?e|dove sono|waar is|waar zijn|onde esta|onde estao|cade|status of"
    r"|status for|status on|where"
    r"|on|for|about|re|regarding|from|with|pour|sur|von|bei|zu|aus|uit|dalla|para|sobre|del|per|dal"
    r"|sull|voor|van|bij|do|da|no|na|frm|fr)\b:?\s*)$",
    re.IGNORECASE,
)
"""What right before a bare five-digit number makes it an order in any sentence: a bracket
("the camera (12372)") or a preposition ("check on 12345", "a refund for 12350")."""


LABEL_BEFORE = re.compile(
    r"\b(?:\w*nr|no|nummer|number|n[º°]|ref|tel|mob|fax)\.?\s*$", re.IGNORECASE
)
"""A label ending right before a sentence that is only a number: the number is its value."""
ALONE = re.compile(
    r"^\W*(?:(?:it'?s|its|it is|this is|that'?s|ist|es ist|das ist|die|das|c'?est|es|el|la"
    r"|e|é|è|het is|is|number|nummer|numero|número|nr)\s+){0,3}#?(\d{5})\s*[.!]?\s*$",
    re.IGNORECASE,
)
"""A sentence that is only a five-digit number, perhaps after "it's" ("Ist die 12369."): the
order the ticket is about, said on its own."""


def _bare_ids(text: str) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for match in BARE_NUMBER.finditer(text):
        before = text[max(0, match.start() - 30) : match.start()]
        if INTRODUCED.search(before) and not NOT_AN_ORDER.search(before):
            found.append((match.start(), match.group(1)))
            end = match.end()
            while joined := JOINED_ID.match(text, end):  # "where are 12347 and 12399?"
                found.append((joined.start(1), joined.group(1)))
                end = joined.end()
    for sentence in _SENTENCE.finditer(text):
        body = sentence.group(0)
        if alone := ALONE.match(body):
            before = text[max(0, sentence.start() - 30) : sentence.start()]
            # "Kundennr. 12388": the sentence break is the abbreviation's dot, the label before it.
            if not (NOT_AN_ORDER.search(before + " ") or LABEL_BEFORE.search(before)):
                found.append((sentence.start() + alone.start(1), alone.group(1)))
        if not ORDER_CONTEXT.search(body):
            continue
        for match in BARE_NUMBER.finditer(body):
            before = body[: match.start()]
            if NOT_AN_ORDER.search(before):
                continue
            found.append((sentence.start() + match.start(), match.group(1)))
    return sorted(set(found))


def find_order_ids(text: str) -> list[str]:
    """Order ids mentioned in `text`, in order, without repeats."""
    found: list[tuple[int, str]] = []
    for match in ORDER_ID.finditer(text):
        found.append((match.start(1), match.group(1)))
        end = match.end()
        while joined := JOINED_ID.match(text, end):
            found.append((joined.start(1), joined.group(1)))
            end = joined.end()
    taken = {position for position, _ in found}
    found += [(at, number) for at, number in _bare_ids(text) if at not in taken]
    return list(dict.fromkeys(number for _, number in sorted(found)))


def ids_in(text: str, ids: Iterable[str]) -> list[str]:
    """Those of `ids` (already found in the whole ticket) that stand in `text` as numbers of
    their own, in the order they do: an id is told from a number by its sentence, so a clause
    cut from it ("but DON'T touch 12344") is searched for the ticket's ids, not parsed again."""
    at = {i: m.start() for i in ids if (m := re.search(rf"(?<!\d){re.escape(i)}(?!\d)", text))}
    return sorted(at, key=at.__getitem__)


def normalize_order_id(value: object) -> str:
    """An order id as the orders server keys it: spaces and one leading '#' removed."""
    text = str(value).strip()
    return text[1:] if text.startswith("#") else text
