"""Order ids: the one parser for how customers write them, and the one normaliser.

An order id is a run of 4 to 8 digits *introduced* as an order: by `#`, `n°`/`no.`/`nr.`, or
the word for an order in the languages customers write in (order, commande, Bestellung,
pedido, ordine, bestelling, encomenda, zamówienie). A bare number may be a date, a year, an
amount or a phone number, so it is never taken on its own.

The orders server normalises ids the same way (`servers/orders.py` cannot import this module:
servers are reached only over MCP); `tests/test_plan.py` checks that the two agree.
"""

from __future__ import annotations

import re

ORDER_WORDS = (
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
)
"""The word for an order, in the languages the rules planner reads."""

_NUMBER_SIGN = r"(?:#|n[°º]\.?|n\.|no\.?|nr\.?|num(?:ber|[eé]ro)?\.?|number|id|nummer|n[uú]mero)"
_INTRO = (
    r"(?:\b(?:cancel|refund|return|track|check|annuler|stornieren|cancelar)\s+(?=\d)|"
    rf"#\s*|\b(?:{'|'.join(ORDER_WORDS)})\b(?:\s+(?:{_NUMBER_SIGN}|de|du|number))*"
    rf"\s*(?:[:#]|{_NUMBER_SIGN})?\s*|\bn[°º]\s*)"
)
ORDER_ID = re.compile(rf"{_INTRO}(\d{{4,8}})\b(?![-/.,]\d)", re.IGNORECASE)
"""An order id as customers write it: `#12345`, `order 12345`, `order no. 12345`,
`commande n°12345`, `Bestellung 12345`, `pedido 12345`, or right after a verb that takes an
order (`cancel 12345`); group 1 is the digits."""


def find_order_ids(text: str) -> list[str]:
    """Order ids mentioned in `text`, in order, without repeats."""
    return list(dict.fromkeys(ORDER_ID.findall(text)))


def normalize_order_id(value: object) -> str:
    """An order id as the orders server keys it: spaces and one leading '#' removed."""
    text = str(value).strip()
    return text[1:] if text.startswith("#") else text
