"""The rules planner: the deterministic, offline planner for support tickets.

It reads the ticket (`intents.py` beside it: every intent, the order ids as customers write
them, the language, a time zone) and writes the packets each intent needs:

- `billing`, once per order named, with the ticket's intents: it reads the order's charges
  and refunds and proposes what the policies allow (a duplicate refund, a cancellation, a
  refund for a defective item inside the window); an order-related ticket that names no order
  still gets a billing packet, and billing asks which order (a clarification) rather than guess;
- `policy`, once per policy topic the intents need;
- `comms`, once per knowledge-base article whose customer-facing wording answers an intent;
- `scheduling` for a callback in a named time zone, `escalation` for a complaint.

A ticket with no intent it can read gets no packets: the answer says it was not understood
and hands it to a human. Its output is validated like any planner's (`graph.plan`).
The support pack's plug-in gives it to the loader (`graph.domains`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

from graph.planners.base import DEFAULT_TIMEOUT_S, TicketReading
from workers.contracts import Handoff
from workers.roster import Roster

from . import second_opinion
from .intent_model import load_model, predicted
from .intents import BY_NAME, INTENTS, find_timezone, pattern
from .language import detect_language
from .order_ids import ORDER_ID, find_order_ids, ids_in
from .reading import (
    BUT,
    CLAUSE,
    PROBLEM,
    ClauseReading,
    Understanding,
    is_other_persons,
    understand,
    written_on_behalf,
)
from .text_norm import normalize

PERSONAL = (
    r"(?:card|voucher|gift ?card) (?:that |which )?i (?:got|was given|received|have)",
    r"my (?:\w+ )?(?:order|parcel|package|purchase|item|card|gift ?card|refund|money|statement"
    r"|delivery|account|invoice|receipt|points|subscription|box|shipment|payment)",
    r"i (?:\w+ )?(?:ordered|bought|paid|purchased|was charged|have one|received"
    r"|placed)",
    r"(?:you|they) (?:charged|sent|shipped|delivered)",
    r"charged me",
    r"i'?ve been (?:charged|billed|sent)",
    # Charged without a subject: "just got billed $24.99", "we were charged twice".
    r"(?:got|get|getting|was|were|been) (?:\w+ )?(?:billed|charged|debited)\b",
    r"(?:billed|debited) (?:me|us|my)\b",
    r"(?:the|my) order number",
    r"(?:ma|mon|mes) (?:\w+ )?(?:commande|colis|carte|achat|facture|remboursement|paiement"
    r"|abonnement)",
    r"j'ai (?:commande|achete|paye|recu)",
    r"(?:meine|mein|meinen) (?:\w+ )?(?:bestellung|paket|karte|rechnung|geld|lieferung|abo"
    r"|zahlung|erstattung|rueckerstattung)",
    r"ich habe (?:\w+ )?(?:bestellt|gekauft|bezahlt|erhalten)",
    r"(?:mi|mis) (?:pedido|paquete|tarjeta|factura|compra|reembolso|dinero|suscripcion)",
    r"(?:he|hice) (?:pedido|comprado|pagado|recibido)",
    r"(?:il mio|la mia|i miei) (?:ordine|pacco|carta|fattura|acquisto|rimborso|abbonamento)",
    r"ho (?:ordinato|comprato|pagato|ricevuto)",
    r"(?:mijn) (?:\w+ )?(?:bestelling|pakket|kaart|factuur|aankoop|geld|abonnement"
    r"|bestelnummer)",
    r"ik heb (?:\w+ )?(?:besteld|gekocht|betaald|ontvangen)",
    r"(?:minha|meu|o meu|a minha) (?:encomenda|pedido|pacote|cartao|fatura|compra|dinheiro|vale"
    r"|assinatura)",
    r"(?:encomendei|comprei|paguei|recebi)",
    # Chatty English drops the "I": "ordered trail shoes and got a raincoat", "got charged twice".
    r"(?:^|(?<=[.!?,;\n] ))(?:just |recently )?(?:ordered|bought|purchased|received|got charged"
    r"|was charged|paid for)\b",
)
"""Phrases that make a ticket about the customer's own order, not a general question."""


GENERAL = (
    r"do (?:you|u|ya)(?: guys)?",
    r"does (?:your|the)",
    r"are (?:your|gift)",
    r"(?:can|could|may) (?:i|one|you|we|customers)",
    r"what(?:'s| is| are) (?:your|the)",
    r"how (?:long|many|much|do|does|can|soon)",
    r"is (?:it|there) (?:possible|a way)",
    r"what happens",
    # "Can an order still be cancelled once it has shipped?": any order, none of theirs.
    r"(?:can|could|may|will|do|does|is|are) (?:an?|any) (?:order|item|parcel|purchase|gift card"
    r"|product|refund|package)s?\b",
    r"if (?:i|you|an?|my|the|someone)",
    r"in general",
    r"generally",
    r"polic(?:y|ies)",
    r"for the future",
    r"(?:just )?wondering",
    r"hypothetical",
    r"combien de (?:temps|jours)",
    # French inversion with an impersonal or a thing for subject ("peut-on", "ont-elles").
    r"\w-(?:on|ils|elles)\b",
    r"est-ce (?:que|qu')",
    r"puis-je",
    r"quel(?:le)?s? (?:est|sont)",
    r"si (?:je|on|vous|j')",
    r"wie (?:lange|viele)",
    r"kann man",
    r"gibt es",
    r"ist es moeglich",
    r"wenn (?:ich|man)",
    r"cuanto(?:s)? (?:tiempo|dias)",
    r"se puede",
    r"es posible",
    r"si (?:compro|pido|quiero)",
    r"quanto tempo",
    r"quanti giorni",
    r"e possibile",
    r"si puo",
    r"se (?:compro|ordino|voglio)",
    r"hoe ?(?:lang|veel)",
    r"kan (?:ik|je|men)",
    r"is het mogelijk",
    r"doen jullie",
    r"als (?:ik|je)",
    r"quantos dias",
    r"e possivel",
    r"da pra",
    r"voces (?:fazem|aceitam|tem|vendem)",
    r"se eu",
)
"""What a general question sounds like ("Do you price match?", "How long does a refund take?")."""
HYPOTHETICAL = (
    r"general(?:ly)? question",
    r"question generale",
    r"(?:allgemeine|generelle) frage",
    r"pregunta general",
    r"domanda general",
    r"(?:algemene|even algemeen)",
    r"pergunta geral",
    r"before (?:i |we )?(?:buy|order|purchas|decide)",
    r"(?:thinking|considering|planning) (?:of|about|on) (?:getting|buying|ordering|purchasing)",
    r"deciding whether to (?:buy|order|get)",
    r"not for anything specific",
    r"haven'?t (?:bought|ordered) anything",
    r"avant (?:d'acheter|de commander|mon achat)",
    r"je (?:pense|pensais|voudrais|compte) (?:en )?(?:offrir|acheter|commander)",
    r"(?:bevor ich|vor dem) (?:\w+ )?(?:bestell|kauf)",
    r"(?:wuerde|moechte)\b[^.?!]{0,60}\b(?:schenken|verschenken)\b",
    r"(?:ueberlege|denke darueber nach)\b[^.?!]{0,60}\b(?:schenken|verschenken|kaufen|bestellen)\b",
    r"(?:to|estou|tou|ando) (?:pensando|a pensar) em (?:comprar|encomendar|pedir|oferecer)",
    r"antes de (?:comprar|pedir|encomendar)",
    r"(?:todavia|aun) no he (?:comprado|pedido)",
    r"(?:quiero|quisiera) regalar",
    r"prima di (?:comprare|acquistare|ordinare)",
    r"(?:ne )?vorrei regalar",
    r"ik twijfel (?:nog )?(?:of|om)",
    r"voordat ik (?:bestel|koop|iets bestel)",
    r"ainda nao (?:comprei|encomendei)",
    r"(?:quero|queria) (?:oferecer|dar de presente|dar (?:um|uma) de presente)",
    r"(?:generic|generique|generica|generico|generisch)\w* "
    r"(?:question|frage|pregunta|domanda|pergunta|vraag)",
    r"(?:question|frage|pregunta|domanda|pergunta|vraag) "
    r"(?:generic|generique|generica|generico|generisch)\w*",
    r"(?:estoy|estaba) pensando en (?:comprar|pedir|encargar)",
    r"sto pensando di (?:comprare|ordinare|acquistare)",
    r"ik denk erover (?:na )?(?:om )?(?:\w+ ){0,3}te (?:kopen|bestellen)",
)
"""What a question asked before buying, or said to be general, sounds like ("Simple question
avant d'acheter", "thinking of getting an e-gift card", "Ne vorrei regalare una a mia
madre"): it is general even when the customer speaks of themselves, since there is no order
of theirs to look up yet. Read from the train split's general questions the phrase tables
took for a claim about an order (15 of 116 order-bound tickets with no id)."""
FIRST_PERSON = re.compile(
    r"(?<![\w])(?:i|i'm|i've|i'd|me|my|mine|we|our|us|je|j'|mon|ma|mes|moi|nous|notre|ich|mein"
    r"\w*|mir|mich|wir|unser\w*|yo|mi|mis|me|nos|nuestr\w*|io|mio|mia|miei|noi|nostr\w*|ik"
    r"|mijn|mij|wij|we|ons|onze|eu|meu|minha|meus|minhas|nos|nosso\w*|nossa\w*)(?![\w])"
)
"""A word by which the customer speaks of themselves: a question without one, and without an
order id, asks about the shop in general ("Do gift cards expire?")."""


CONDITIONAL = (
    r"if (?:i|we) (?:ever )?(?:find|see|spot|buy|order|purchase)",
    r"if (?:something|anything|an item|a parcel|an order|a product)\b[^.?!]{0,30}"
    r"\b(?:turns up|arrives|comes|is|gets|goes)",
    r"si (?:je|on) (?:trouve|vois|commande|achete)",
    r"wenn (?:ich|man) (?:\w+ ){0,3}(?:finde|findet|sehe|bestelle|bestellt|kaufe|kauft)",
    r"si (?:encuentro|veo|compro|pido)",
    r"se (?:trovo|vedo|compro|ordino|acquisto)",
    r"als (?:ik|je) (?:\w+ ){0,3}(?:vind|zie|bestel|koop)",
    r"se (?:eu )?(?:encontrar|achar|vir|comprar|encomendar)",
)
"""A question about what would happen if the customer bought or found something ("se trovo lo
stesso prodotto a meno su Amazon, mi fate il prezzo uguale?"): general, unless the ticket
also speaks of a purchase of theirs (`PERSONAL`). Read from the dev_d tickets."""


def is_about_an_order(own_text: str, intents: tuple[str, ...]) -> bool:
    """True when the ticket concerns the customer's own order, even if it names none. Only a
    ticket that sounds like a general question ("What is your returns policy?") and says
    nothing of a purchase of the customer's is answered from the policy alone; in doubt it is
    about an order, and billing asks which (a human then reads it)."""
    if not any(BY_NAME[name].order_bound for name in intents):
        return False
    text = normalize(own_text)
    if pattern(HYPOTHETICAL).search(text):
        return False
    if pattern(PERSONAL).search(text):
        return True
    if pattern(CONDITIONAL).search(text):
        return False
    asks_without_a_self = "?" in text and not FIRST_PERSON.search(text) and not PROBLEM.search(text)
    return not (pattern(GENERAL).search(text) or asks_without_a_self)


RETRACTED = re.compile(
    r"\b(\d{4,8})\b[\s.,;:!-]{0,6}(?:sorry|i mean|i meant|correction|oops|pardon|je veux dire"
    r"|ich meine|quiero decir|perd[oó]n|scusa(?:te)?|intendo|ik bedoel|quer dizer|desculp[ae])"
    r"[\s.,;:!-]{1,6}(?:i mean |it'?s |order |#)?(\d{4,8})\b",
    re.IGNORECASE,
)
"""An id the customer takes back at once ("the speaker from 12379... sorry, 12369")."""


def _own_order_ids(own_text: str) -> tuple[str, ...]:
    """Order ids in the customer's own words, less those of somebody else's order and those
    the customer corrected."""
    parts = [p for c in CLAUSE.finditer(own_text) for p in BUT.split(c.group(0))]
    behalf = written_on_behalf(own_text)
    others = {i for p in parts if not behalf and is_other_persons(p) for i in find_order_ids(p)}
    corrected = {m.group(1): m.group(2) for m in RETRACTED.finditer(own_text)}
    # Ids read over the whole text too: an id joined across a clause break ("12345; 12350").
    found = [corrected.get(i, i) for i in find_order_ids(own_text)]
    return tuple(i for i in dict.fromkeys(found) if i not in others)


@lru_cache(maxsize=256)
def _understood(request: str) -> Understanding:
    return understand(request, mentions_order=ORDER_ID)


def _asked_of_a_named_order(understood: Understanding, intents: tuple[str, ...]) -> frozenset[str]:
    """The order-bound intent an asking clause asks alone, naming its order itself, beside
    intents about no order ("has order 12321 been sent out yet? And do points expire?"): a
    question in its own right, not a phrase used in passing. Wider (any asking clause's one
    intent) it kept 9 intents read in passing for 4 it saved, over the train and dev sets."""
    if all(BY_NAME[i].order_bound for i in intents):
        return frozenset()
    return frozenset(
        c.intents[0]
        for c in understood.clauses
        if c.asks
        and len(c.intents) == 1
        and BY_NAME[c.intents[0]].order_bound
        and ORDER_ID.search(c.text)
    )


@lru_cache(maxsize=256)
def read_ticket(request: str) -> TicketReading:
    """Everything the rules read from a ticket (cached: the planner and `plan` both read
    it, and a reading is pure)."""
    understood = _understood(request)
    language = detect_language(understood.own_text or request)
    intents = understood.intents
    confidence = understood.confidence
    # The learned model's second opinion (second_opinion.py): it drops an intent the
    # tables read in passing, and a disagreement lowers the confidence. It is asked only
    # where it can change the outcome: several intents to prune, or an English ticket whose
    # answer could go out with no human (every other language's answer asks a person to
    # reply in it, answer.py), which saves a model call on most of the other tickets.
    scores: dict[str, float] | None = None
    if len(intents) > 1 or language == "English":
        scores = load_model().scores(normalize(understood.own_text))
        # An intent that is the one thing an asking clause asks ("has order 12321 been sent
        # out yet?") was not read in passing, whatever the whole ticket looks like.
        asked = _asked_of_a_named_order(understood, intents)
        intents = second_opinion.pruned(intents, scores, keep=asked)
        confidence *= second_opinion.agreement(intents, predicted(scores))
    unaccounted = understood.unaccounted
    may_propose = True
    if not intents and understood.own_text.strip():
        # Nothing the tables hold: the model's own reading, for a person to check.
        if scores is None:
            scores = load_model().scores(normalize(understood.own_text))
        read = second_opinion.filled(scores)
        # Never what the customer said they do not want ("I don't need to cancel 12354").
        read -= {name for clause in understood.clauses for name in clause.negated}
        if read:
            intents = tuple(i.name for i in INTENTS if i.name in read)
            unaccounted = ()
            confidence = second_opinion.MODEL_ONLY
            may_propose = False  # a model's guess cancelled an order whose address was wrong
    timezone = find_timezone(understood.own_text)
    reading = TicketReading(
        intents=intents,
        order_ids=_own_order_ids(understood.own_text),
        language=language,
        timezone=timezone,
        about_an_order=is_about_an_order(understood.own_text, intents),
        action_intents=tuple(i for i in intents if BY_NAME[i].needs_order),
        unaccounted=unaccounted,
        confidence=round(confidence, 2),
        may_propose=may_propose,
    )
    if len(reading.order_ids) > 1 and orders_asked_nothing(request, reading):
        reading = replace(
            reading, confidence=round(confidence * second_opinion.DISAGREEING, 2)
        )
    return reading


FINE = re.compile(
    r"\b(?:is|was|are|were|works?|working|arrived|came)\b[^.?!]{0,20}\b(?:great|fine|perfect"
    r"|lovely|brilliant|spot on|all good|ok|okay|just right|in perfect condition)\b"
    r"|\b(?:love|loving|happy with|pleased with)\b"
    r"|\b(?:ist|war|sind|funktioniert)\b[^.?!]{0,20}\b(?:super|toll|perfekt|prima|in ordnung|top)\b"
    r"|\b(?:est|etait|fonctionne)\b[^.?!]{0,20}\b(?:super|parfait|nickel|genial)\b"
    r"|\b(?:esta|estaba|funciona|chegou|llego)\b[^.?!]{0,20}\b(?:perfect[oa]|genial|otim[oa]|bien|bem)\b"
    r"|\b(?:e|era|funziona|arrivat[oa])\b[^.?!]{0,20}\b(?:perfett[oa]|ottim[oa]|benissimo)\b"
    r"|\b(?:is|werkt|kwam)\b[^.?!]{0,20}\b(?:prima|perfect|top|goed)\b"
)
"""A clause saying an order is fine ("the speaker from 12369 is great, thanks") (normalised
text)."""


def orders_asked_nothing(request: str, reading: TicketReading) -> tuple[str, ...]:
    """The orders the ticket names that no clause reads an intent for (nor calls fine),
    beside one that a clause does ("Order 12332 - they're a size 9, I ordered a 10. Order
    12340 - came without the lid": a problem the tables did not read): a part of the request
    the reading may have missed, so a person checks the answer."""
    asked: set[str] = set()
    for clause, _, about in _clauses_with_orders(request, reading):
        if clause.intents or FINE.search(normalize(clause.text)):
            asked.update(about)
    if not asked:
        return ()
    return tuple(order_id for order_id in reading.order_ids if order_id not in asked)


def _clauses_with_orders(
    request: str, reading: TicketReading
) -> list[tuple[ClauseReading, list[str], list[str]]]:
    """Each clause with the orders it names and the orders it is about: those it names,
    else those the next clause names when it reads no order-bound intent of its own ("je
    préfère annuler | ma commande 12344 qui n'est pas encore expédiée"), else the last ones
    named before it."""
    wanted = {i for i in reading.intents if BY_NAME[i].needs_order}
    known = set(reading.order_ids)
    clauses = _understood(request).clauses
    current: list[str] = []
    about: list[tuple[ClauseReading, list[str], list[str]]] = []
    for n, clause in enumerate(clauses):
        # The ticket's ids, as they stand in this clause: an id is told from a number by its
        # sentence ("cancel 12374 but DON'T touch 12344": that clause alone has no order word).
        named = ids_in(clause.text, known)
        subject = named
        following = clauses[n + 1] if n + 1 < len(clauses) else None
        if not named and clause.intents and following is not None:
            if not any(i in wanted for i in following.intents):
                subject = ids_in(following.text, known)
        current = subject or current
        about.append((clause, named, current))
    return about


def intents_per_order(request: str, reading: TicketReading) -> dict[str, str]:
    """Which order-bound intents each named order is the subject of: those read in the
    clauses about it (`_clauses_with_orders`: "Cancel 12354. 12374 stays, I just need its
    address changed" cancels one order, not both). When no clause gives any order an intent,
    every order falls back to all of them (the caller's default)."""
    wanted = {i for i in reading.intents if BY_NAME[i].needs_order}
    known = set(reading.order_ids)
    found: dict[str, list[str]] = {}
    fine: set[str] = set()
    for clause, named, current in _clauses_with_orders(request, reading):
        if named and not clause.intents and FINE.search(normalize(clause.text)):
            fine.update(named)
        for order_id in current:
            found.setdefault(order_id, []).extend(i for i in clause.intents if i in wanted)
    ordered = [i for i in reading.intents if i in wanted]
    per_order = {
        order_id: ",".join(i for i in ordered if i in names)
        for order_id, names in found.items()
        if names
    }
    # An order the customer says is fine, beside another they ask about, is asked nothing
    # ("the speaker from 12369 is great, thanks. But the filter from 12379 leaks"): never
    # the other order's refund.
    if per_order:
        per_order.update({order_id: "order_enquiry" for order_id in fine - set(per_order)})
        # An order no clause asks anything of, beside one a clause does ("Could you cancel
        # 12354 please? 12324 is the one I want"), is looked up, never given the other's
        # actions: a fallback to the ticket's intents cancelled the order the customer kept.
        per_order.update({order_id: "order_enquiry" for order_id in known - set(per_order)})
    return per_order


def plan_ticket(request: str, roster: Roster) -> list[Handoff]:
    """The deterministic support-ticket planner (see the module docstring)."""
    reading = read_ticket(request)
    packets: list[Handoff] = []

    def add(recipient: str, objective: str, inputs: dict[str, str]) -> None:
        spec = roster.get(recipient)
        if spec is None:
            return
        packets.append(
            Handoff(
                id=f"{recipient}-{len(packets) + 1}",
                recipient=recipient,
                objective=objective,
                inputs=inputs,
                tool_allow=spec.privileges,
                max_steps=spec.max_steps,
                timeout_s=DEFAULT_TIMEOUT_S,
            )
        )

    intents = list(reading.intents)
    if not intents or intents == ["acknowledgement"]:
        return []
    labels = ", ".join(BY_NAME[i].label for i in intents)
    order_intents = ",".join(i for i in intents if BY_NAME[i].needs_order) or "order_enquiry"
    if not reading.may_propose:
        order_intents = "order_enquiry"  # look the order up for the person; propose nothing
    per_order = intents_per_order(request, reading)
    for order_id in reading.order_ids:
        mine = (reading.may_propose and per_order.get(order_id)) or order_intents
        add(
            "billing",
            f"Establish the charges, refunds and delivery of order {order_id} and what the "
            f"customer's {labels} allows.",
            {"order_id": order_id, "intents": mine},
        )
    if not reading.order_ids and reading.about_an_order:
        # About an order, but which? Billing will ask (reason `ambiguous`) rather than guess.
        add(
            "billing",
            "Establish the charges and refund status of the customer's order.",
            {"intents": order_intents},
        )
    topics = dict.fromkeys(t for i in intents for t in BY_NAME[i].policy_topics)
    for topic in topics:
        add(
            "policy",
            f"Find the policy on {topic.replace('_', ' ')} that applies.",
            {"topic": topic},
        )
    own = normalize(_understood(request).own_text)
    articles = dict.fromkeys(a for i in intents for a in BY_NAME[i].articles_for(own))
    if not articles:
        # Nothing in the KB is known to answer it: comms searches for the wording instead.
        add(
            "comms",
            "Find the knowledge-base wording that answers the customer.",
            {"query": " ".join(BY_NAME[i].label for i in intents)},
        )
    for article in articles:
        add(
            "comms",
            f"Read knowledge-base article {article} for the customer-facing wording.",
            {"article_id": article},
        )
    if "callback" in intents and reading.timezone:
        add(
            "scheduling",
            f"Find the current local time in {reading.timezone} for the callback.",
            {"timezone": reading.timezone},
        )
    if "complaint" in intents:
        add(
            "escalation",
            "Write a hand-off summary so a human agent can take the ticket now.",
            {"request_summary": " ".join(request.split())[:300]},
        )
    return packets
