"""What a support ticket can ask for: the intents, each with the phrases that signal it in the
seven languages customers write, and where its answer comes from.

Every intent found is planned for and must be resolved before an answer is `complete`
(principle 10). Each names the policy topics and knowledge-base articles that fit it; the
rules planner turns those into `policy` and `comms` packets. The table is data: adding an
intent or a language's phrases is an edit here, not in the graph.

Phrases are regex fragments matched from a word start on the ticket as `text_norm.normalize`
spells it (lower case, umlauts spelled out, accents dropped, key words' typos corrected), and
are normalised the same way, so `remboursé` also matches a ticket typed `rembourse`. Short
stems are safe: `refund` matches "refunded", not "prefund". How phrases are read in context
(quoted text, negation, clauses nobody accounts for) is `reading.py`'s work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .lexicon import phrases_for
from .phrase_gate import PHRASE_START, PhraseGate, gate
from .text_norm import fold


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
    """(phrases, articles), in order: the first whose phrases are in the ticket gives the
    articles that answer it instead of `kb_articles` (late_delivery: lateness → KB-102, else
    a tracking or status question → KB-101, else KB-102)."""
    negatable: bool = False
    """True when "don't …", "no need to …" in front of a phrase means the customer does not
    ask for it (cancellation, refund); for the others a negation is part of the phrase
    ("has not arrived")."""
    not_after: tuple[str, ...] = ()
    """Phrases that, right before one of this intent's phrases, mean it is not asked for
    ("I picked the *wrong colour*" is the customer's slip, not a wrong item sent)."""
    only_with: tuple[str, ...] = ()
    """Phrases one of which must be somewhere in the ticket (quoted text included) for this
    intent to be read at all: "I'll keep it" is keeping an order only where a cancellation
    was in the air."""
    not_before: tuple[str, ...] = ()
    """Phrases that, right after one of this intent's phrases, mean it is not asked for
    ("still waiting *for the refund*" waits for money, not for a parcel)."""
    not_in_questions: bool = False
    """True when a clause that asks something cannot express it ("is it resolved?" is not
    thanks for a resolution)."""
    to_human: bool = False
    """Resolved by handing the ticket to a person under the policy or article that applies
    (no tool can act on it): the answer always needs a human."""
    order_bound: bool = True
    """Whether a ticket with only this intent is about one of the customer's orders (billing
    runs for it even without an id, and asks which order)."""

    def articles_for(self, text: str) -> tuple[str, ...]:
        """The articles that answer this intent in this ticket (`text` normalised)."""
        for phrases, articles in self.kb_if:
            if pattern(phrases).search(text):
                return articles
        return self.kb_articles


INTENTS: tuple[Intent, ...] = (
    Intent(
        "duplicate_charge",
        (
            r"charged (?:me |my card |us |my account )?(?:twice|two times|2 times|double)",
            # Not "my card got declined two times": tries that failed charged nothing.
            r"(?:money|payment|paid|charge|charged|billed|debited)\b"
            r"(?:(?!declin|fail|reject|refus|bounc)[^.?!]){0,40}\b"
            r"(?:twice|two times|2x|2 times)",
            # Money taken twice: "you've taken $129.00 twice", "deducted 54,50 € two times".
            r"(?:taken|took|deducted|withdrawn|pulled|collected|removed|processed)\b[^.?!\d$£€]{0,12}"
            r"(?:\$|£|€)?\s?\d[\d.,]*\s?(?:€|eur\w*|usd|dollars?|pounds?)?[^.?!]{0,25}\b"
            r"(?:twice|two times|2x|2 times)",
            r"(?:two|2|multiple|double|duplicated?) (?:\w+ )?(?:charges|payments|transactions"
            r"|debits|deductions)",
            r"double[- ]?(?:charged?|billed|payment|debit)",
            r"charged double",
            r"duplicat\w* (?:charge|payment|transaction|debit|billing|authori[sz]ation|amount|entry)",
            r"(?:charge|payment|transaction|debit)s? (?:\w+ )?duplicat",
            r"2 ?x ?(?:\$|€|eur)? ?\d",
            r"(?:then |and )?again,? (?:for )?(?:the )?same amount",
            r"(?:zwei|twee|deux|dos|due|duas) (?:identische|identieke|identiques|identicos|identici|identicas|identiche)",
            r"(?:billed|taken|debited|deducted|paid|hit) (?:me )?twice",
            r"second (?:charge|payment|debit|transaction)",
            r"(?:two|2|double|multiple) (?:\w+ )?(?:authori[sz]ations|holds|pending (?:charges|payments))",
            r"(?:only|just) (?:checked out|paid|ordered) once",
            r"same (?:amount|charge|payment) (?:twice|two times|again)",
            r"charged (?:again|a second time)",
            r"deux (?:prelevements|debits|paiements)",
            r"(?:debit|preleve|factur|pay|paie|encaiss|charg)\w*[^.?!]{0,30}deux fois",
            r"double (?:prelevement|debit|paiement|facturation)",
            r"(?:debite|preleve|facture|paye)\w* deux",
            r"deux prelevements",
            # Ordered twice is no double charge, nor is owning one twice ("hab den Lautsprecher
            # jetzt doppelt"): money is named in the clause.
            r"doppelt(?! nicht)(?!(?: \w+){0,4} (?:bestellt|gekauft|geordert))(?! (?:bestellt|gekauft|geordert|aufgegeben))(?!(?: \w+){0,3} (?:im|in den) warenkorb)"
            r"(?=[^.?!]*(?:abgebucht|belastet|berechnet|bezahlt|gezahlt|eingezogen|abgezogen"
            r"|kassiert|gebucht|abbuchung|belastung|zahlung|betrag|geld|konto|karte|paypal|rechnung"
            r"|lastschrift|€|eur|\$))",
            r"(?:abgebucht|belastet|berechnet|bezahlt|gezahlt|eingezogen|abgezogen|kassiert|gebucht"
            r"|abbuchung|belastung|zahlung|betrag|geld|konto|karte|paypal|rechnung|lastschrift"
            r"|€|\$)[^.?!]*\bdoppelt(?! nicht)(?! (?:bestellt|gekauft|geordert|aufgegeben))",
            r"zweimal (?:abgebucht|belastet|berechnet|bezahlt|eingezogen)",
            r"zwei (?:abbuchungen|belastungen|zahlungen)",
            r"(?:abgebucht|belastet|berechnet)[^.?!]{0,30}zweimal",
            r"dos (?:cargos|cobros|pagos)",
            r"(?:cobr|carg|pag|factur|debit)\w*[^.?!]{0,30}dos veces",
            r"cobro (?:doble|duplicado)",
            r"(?:cobrado|cargado|cobraron|cargaron)\w*[^.?!]{0,20}dos",
            r"doble (?:cargo|cobro)",
            r"cargo duplicado",
            r"due (?:addebiti|pagamenti)",
            r"(?:addebit|pagat|fattur|prelev)\w*[^.?!]{0,30}due volte",
            r"addebit\w*[^.?!]{0,20}due",
            r"doppi[oa] (?:addebito|pagamento)",
            r"dubbel",
            r"a deux reprises",
            r"en double",
            r"deux reprises",
            r"twee (?:afschrijvingen|betalingen)",
            r"(?:afgeschreven|betaald|gefactureerd)[^.?!]{0,30}(?:twee keer|tweemaal)",
            r"(?:twee keer|tweemaal)[^.?!]{0,30}(?:afgeschreven|betaald|gefactureerd)",
            r"(?:afgeschreven|betaald)[^.?!]{0,30}twee",
            r"duas cobrancas",
            r"(?:cobr|debit|pag|factur)\w*[^.?!]{0,30}duas vezes",
            r"cobranca (?:duplicada|dupla|em dobro)",
            r"cobrad[oa]s? (?:duas|em dobro|duplicad)",
            r"em dobro",
        ),
        policy_topics=("duplicate_charge",),
        kb_articles=("KB-201",),
        label="duplicate charge",
        unless=("subscription",),
        # A fear, not a charge: "if I try again will I end up charged twice?"
        not_after=(
            r"\b(?:will|would|could|might|am|won'?t) (?:i|we|it|you|this) (?:\w+ ){0,2}"
            r"(?:be |get |end up |being )?$",
            r"\b(?:going to|gonna|afraid (?:i'?ll|of being|to be)|worried (?:i'?ll|about being))"
            r" (?:be |get )?$",
        ),
    ),
    Intent(
        "refund_request",
        (
            r"want (?:\$?[\d.,]+ |it |them |my money |the money )?back",
            r"\$[\d.,]+ back",
            r"difference back",
            r"refund(?!ed)",
            r"money back",
            r"(?:want|need|like|expect)\b[^.?!]{0,40}\brefunded\b",
            # When the refund shows ("how many days until I actually see it on my card?")
            r"(?:until|till|before|when|how soon) (?:will )?(?:i |we )?(?:\w+ )?(?:see|get|have|find) (?:it|the money|the refund|my money|the credit) (?:back )?(?:on|in|to) my (?:card|account|bank|statement)",
            r"reverse (?:the|this|that) (?:[\w-]+ ){0,2}(?:charge|debit|payment|transaction)",
            r"want \$[\d.,]+",
            r"(?<!charged )(?<!paid )(?<!cost )(?<!costs )(?<!was )\$[\d.,]+ (?:for|to cover) (?:the|my|all)",
            r"my money",
            r"reimburs(?!\w* (?:by|from|through|via|par|de la part de|von|durch|door|van|da|dalla|dall\'|de|de la|del|pela|pelo|por|por parte de|por parte da|na|no|junto da|junto do|com a|com o|a|ao|en la|en el|con la|con el|bei|beim|presso|bij) (?:my |mon |ma |mein\w* |den |der |mijn |de |mi |la |el |a |o |meu |minha |il |l\')?(?:employer|company|firm|insurer|insurance|employeur|entreprise|societe|assurance|arbeitgeber|firma|versicherung|werkgever|bedrijf|verzekering|empresa|seguro|aseguradora|seguradora|patrao|jefe|azienda|ditta|assicurazione))",
            r"pay me back",
            r"credit (?:it |me )?back",
            r"return (?:my|the) (?:money|payment)",
            r"get (?:my |the )?(?:money|cash|payment) back",
            r"(?:get|have|receive) (?:the |my |that )?(?:extra|double|duplicate|second|overcharged|other) (?:payment|charge|money|amount) (?:back|refunded|returned)",
            r"where is (?:my|the) (?:refund|money)",
            r"rembours(?!\w* (?:by|from|through|via|par|de la part de|von|durch|door|van|da|dalla|dall\'|de|de la|del|pela|pelo|por|por parte de|por parte da|na|no|junto da|junto do|com a|com o|a|ao|en la|en el|con la|con el|bei|beim|presso|bij) (?:my |mon |ma |mein\w* |den |der |mijn |de |mi |la |el |a |o |meu |minha |il |l\')?(?:employer|company|firm|insurer|insurance|employeur|entreprise|societe|assurance|arbeitgeber|firma|versicherung|werkgever|bedrijf|verzekering|empresa|seguro|aseguradora|seguradora|patrao|jefe|azienda|ditta|assicurazione))",
            r"(?:argent|sous)[^.?!]{0,20}(?:rendre|rendez|retour|rembours)",
            r"rendre (?:mon|l') ?argent",
            r"erstatt(?!et\b)",
            r"zurueck\w*erstatt",
            r"verschil terug",
            r"terug ?krijgen",
            r"rueckerstatt",
            r"ruckerstatt",
            r"geld (?:zurueck|wieder)(?!buch)",
            r"zurueckzahl",
            # The difference paid back, in each language ("Bekomme ich die Differenz erstattet?").
            r"(?:differenz|preisunterschied|unterschied)\w* (?:\w+ ){0,2}(?:erstattet|zurueck|gutgeschrieben)",
            r"devol\w*(?:-me|-nos)? (?:\w+ )?(?:la |a )?diferen(?:cia|ca)",
            r"diferen(?:cia|ca) (?:\w+ ){0,2}de volta",
            r"(?<!bank )zurueckbuch",
            # A credit to the shop account is a goodwill credit, not the money back.
            r"gutschrift(?! auf (?:mein|das|unser) (?:\w+)?konto)",
            r"reembols(?!\w* (?:by|from|through|via|par|de la part de|von|durch|door|van|da|dalla|dall\'|de|de la|del|pela|pelo|por|por parte de|por parte da|na|no|junto da|junto do|com a|com o|a|ao|en la|en el|con la|con el|bei|beim|presso|bij) (?:my |mon |ma |mein\w* |den |der |mijn |de |mi |la |el |a |o |meu |minha |il |l\')?(?:employer|company|firm|insurer|insurance|employeur|entreprise|societe|assurance|arbeitgeber|firma|versicherung|werkgever|bedrijf|verzekering|empresa|seguro|aseguradora|seguradora|patrao|jefe|azienda|ditta|assicurazione))",
            r"devolu\w* (?:del |de mi |mi |do |o )?dinero",
            r"devuelvan (?:el|mi) dinero",
            r"devolver (?:uno|el cobro|los cobros|el dinero|mi dinero)",
            r"(?:mi|el) dinero",
            r"rimbors(?!\w* (?:by|from|through|via|par|de la part de|von|durch|door|van|da|dalla|dall\'|de|de la|del|pela|pelo|por|por parte de|por parte da|na|no|junto da|junto do|com a|com o|a|ao|en la|en el|con la|con el|bei|beim|presso|bij) (?:my |mon |ma |mein\w* |den |der |mijn |de |mi |la |el |a |o |meu |minha |il |l\')?(?:employer|company|firm|insurer|insurance|employeur|entreprise|societe|assurance|arbeitgeber|firma|versicherung|werkgever|bedrijf|verzekering|empresa|seguro|aseguradora|seguradora|patrao|jefe|azienda|ditta|assicurazione))",
            r"rivoglio",
            r"(?:i miei )?soldi (?:indietro|restituiti)",
            r"i miei soldi",
            r"(?:soldi|denaro)[^.?!]{0,20}(?:indietro|restitu)",
            r"restitu\w* (?:i soldi|il denaro|l'importo)",
            r"terugbetal",
            r"terugstort",
            r"geld terug",
            r"mijn geld",
            r"restitui\w* (?:o|do) (?:dinheiro|valor)",
            r"devol\w* (?:o|do|meu) dinheiro",
            r"(?:meu|o) dinheiro de volta",
            r"estorn",
        ),
        policy_topics=("refunds",),
        kb_articles=("KB-202",),
        label="refund",
        unless=("acknowledgement",),
        negatable=True,
        # Paid back by somebody else (an employer's expenses, an insurer): no refund from us.
        # (The stems above look ahead for "…by my employer", "reembolso da empresa".)
        not_after=(
            r"(?:employer|company|firm|boss|insurer|insurance|societe|entreprise"
            r"|employeur|boite|arbeitgeber|firma|chef|versicherung|empresa|jefe|seguro|ditta"
            r"|azienda|assicurazione|werkgever|bedrijf|baas|verzekering|patrao|seguradora)"
            r"(?: (?:qui|que|che|die|der|das|who|which|will|would|'ll|can|kann|wil|va|vai|me|mi"
            r"|mir|ils|het|les|lo|la|it|them|usually|normally|always|then|mich|uns)){0,3} $",
        ),
    ),
    Intent(
        "cancellation",
        (
            r"cancel(?!l?ed\b|ad[oa]s?\b|l?at[oaie]\b|ei\b|ou\b)",
            r"call off",
            r"dar(?:los|las|lo|la|me)? de baja",
            r"den de baja",
            r"(?:kill|scrap|ditch|void|nix|axe|bin) (?:that|the|this|my|both|it|them)(?: order| of them| orders)?\b",
            r"(?:rather|prefer|want|wish) (?:you|u) (?:just )?cancell?ed",
            r"(?:stop|halt|block) (?:it|the order|them|everything) before",
            r"abblasen",
            r"rueckgaengig mach",
            r"(?:vom|von meiner) (?:kauf|vertrag|bestellung)\w* zurueck",
            r"trete\w* [^?!\n]{0,70}?\bzurueck",
            r"schrappen",
            r"geschrapt",
            r"intrekken",
            r"blocca\w* (?:\w+ )?(?:prima|l'ordine|ordine)",
            r"ferma\w* (?:l'ordine|tutto|la spedizione)",
            r"tout arreter",
            r"arreter (?:la|ma) commande",
            r"stopper (?:la|ma) commande",
            r"(?:parar|detener) (?:el|mi) (?:pedido|envio)",
            r"parar (?:o|a) (?:pedido|encomenda)",
            r"(?:want|need|get|have|like) (?:it|this|that|them|the order|my order|order \S+) cancell?ed",
            r"cancell?ed (?:please|asap|immediately|right away|today)",
            r"stop (?:it|the order|the parcel|the shipment|the delivery|them) before",
            r"call (?:it|the order|this) off",
            r"(?:stop|halt) (?:the |my )?(?:order|shipment|delivery)",
            r"(?:don'?t|do not) (?:want|need) (?:the |this |my )?order anymore",
            r"annul(?!ee?s?\b|at[oaie]\b|e\b)",
            r"stornier(?!t\b|te[nrms]?\b)",
            r"storno(?!\w| (?:con|presso|tramite|alla|dalla|sulla) (?:la |mia )?(?:banca|carta))",
            r"(?:bestellung|auftrag) (?:zurueckziehen|widerrufen)",
            r"widerruf",
            r"cancela(?!d[oa]s?\b)",
            r"anula(?!d[oa]s?\b)",
            r"annuller",
            r"annullare",
            r"annulla",
            r"cancellare",
            r"disdire",
            r"annuleer",
            r"annuleren",
            r"cancelem",
            r"cancelamento",
        ),
        policy_topics=("cancellation",),
        kb_articles=("KB-104",),
        label="cancellation",
        negatable=True,
        not_after=(
            # "Is it too late to cancel?" asks for the cancellation all the same.
            r"(?:past the point of|(?<!is it )(?<!is it already )(?<!am i )too late (?:to|for)) $",
            # What cancelling would feel like is no request for it ("feels a bit cheeky to
            # cancel and re-order", "seems silly to cancel").
            r"(?:feels?|felt|seems?|seemed|sounds?) (?:\w+ ){0,3}to $",
            # What the customer already did ("I had already cancelled it"), never a duty or a
            # wish: "I have to cancel", "have I got to cancel", "I've got to cancel" ask for it.
            r"(?:avevo|ho|j'avais|j'ai|hatte|habe|habia|he|tinha|had|have|i'?d|i'?ve|was|were"
            r"|been|got|already|gia|deja|bereits|ya|ja|al) (?:gia |deja |already |bereits |ya |ja"
            r" |al )?(?:(?!to )(?:i |you |we )?(?:(?!to )\w+ )?)?$",
        ),
        unless=("subscription", "keep_order"),
    ),
    Intent(
        "late_delivery",
        (
            r"(?:hasn'?t|hasnt|has not|haven'?t|havent|have not|didn'?t|did not|still (?:hasn'?t|"
            r"has not|not)) (?:yet )?(?:shown up|turned up|arrived|come|got here|been delivered"
            r"|received|gotten|reached)",
            r"(?:question|questions|asking|query|update) (?:about|on) (?:the |my )?(?:delivery|"
            r"shipping|shipment|parcel|package)",
            r"delivery (?:of|for) (?:my )?order",
            r"order #?\d+ (?:shipping|delivery)",
            r"late\b",
            r"delay",
            r"overdue",
            r"wo bleibt",
            r"(?:devait|devrait) (?:\w+ )?arriv",
            r"tjr rien",
            r"(?:il|elle) est passee? ou",
            r"(?:toujours |still )?bloquee? quelque part",
            r"stuck somewhere",
            r"(?:devia|deveria) ter chegado",
            r"ate agora nada",
            r"doveva arrivare",
            r"(?:deberia|debia) (?:haber )?llegado",
            r"tenia que (?:haber )?llegado",
            r"sollte (?:\w+ ){0,4}(?:da sein|ankommen|geliefert)",
            r"had (?:\w+ ){0,3}moeten (?:zijn|komen|aankomen)",
            r"funkstille",
            r"waar blijv",
            r"(?:zit|zitten) (?:\w+ ){0,3}te wachten",
            r"a che punto",
            r"quando arriva",
            r"where (?:\w+ ){0,4}(?:are|is) on (?:their|its|the) (?:way|journey)",
            r"(?:says|said|shows|showing|stuck in) (?:'|\")?delayed",
            r"ueberfaellig",
            r"warte (?:\w+ ){0,3}(?:auf|noch|und warte)",
            r"wann (?:\w+ ){0,3}(?:ankommt|ankommen|geliefert|kommt)",
            r"(?:said|says|shows|showing|saying) (?:'|\")?in transit",
            r"(?:had|hadden) (?:\w+ ){0,2}(?:binnen|geleverd|bezorgd) moeten",
            r"waar (?:\w+ ){0,3}(?:pakket|bestelling) (?:is|blijft)",
            r"not (?:yet )?(?:arrived|delivered|received|here|shown up|turned up)",
            r"never (?:arrived|came|received|showed up|got it|turned up|got here)",
            r"still not (?:delivered|here|arrived)",
            r"still (?:no|nothing|haven'?t)(?! (?:answer|reply|response|word|news|call|callback|refund|money|email|e-mail|update from))",
            r"where(?:'s| is) (?:my|the|order|it)(?! (?:refund|money|rest|credit|points))",
            r"where (?:are|is) (?:my|the) (?:things|stuff|items?|parcel|package|order)",
            r"when (?:will|is|does|can) (?:my |the |it )?(?:order|parcel|package|item|it)?\s?"
            r"(?:arrive|be delivered|ship|come|get here)",
            r"tracking",
            # Not "had a ripped strap when it arrived": a past arrival is no question of when.
            r"when (?:will |is |does )?(?:my |the )?(?:order|parcel|package|item|it)\b[^.?!]{0,25}\b(?:ship|arrive(?!d)|be delivered|get here|come)",
            r"(?:hasn'?t|has not|not|never) (?:yet )?(?:been )?shipped",
            r"track ?(?:&|and|en|und) ?trace",
            r"verzendbevestiging",
            r"sigue sin (?:llegar|aparecer)",
            r"sin llegar",
            r"esperando (?:mi|el|los) (?:paquete|pedido)",
            r"llevo [^.?!]{0,25}esperando",
            r"(?:sto )?aspettando",
            r"aspetto (?:\w+ ){0,4}da",
            r"track (?:my|the|it|order)",
            r"lost (?:in the post|parcel|package|in transit)",
            r"(?:parcel|package|order) (?:is |was )?(?:lost|missing)",
            r"missing (?:parcel|package)",
            r"still waiting",
            r"waiting (?:for|on) (?:my|the) (?:order|parcel|package|delivery)",
            r"not received",
            r"stuck (?:in transit|at)",
            r"(?:hasn'?t|has not|not|haven'?t) (?:budged|moved|changed|been updated|updated)",
            r"(?:still |just )?(?:says|shows) (?:'|\")?in transit",
            r"has(?:n'?t| not) (?:moved|been updated)",
            r"(?:pas|jamais) (?:encore )?(?:recu|arrive|livre)",
            r"en retard",
            r"retard",
            r"colis (?:perdu|manquant|egare)",
            r"toujours (?:pas|rien)",
            r"ou (?:est|en est) (?:mon|ma) (?:colis|commande)",
            r"suivi",
            r"nicht (?:angekommen|geliefert|erhalten|zugestellt|da\b)",
            r"(?:immer )?noch nicht (?:da|angekommen|geliefert|erhalten)",
            r"verspaet",
            r"verzoeger",
            r"wo (?:bleibt|ist) (?:meine|mein|die|das)",
            r"sendungsverfolgung",
            r"paket (?:ist )?(?:verloren|verschwunden)",
            r"no (?:ha |me ha |han )?(?:llegado|recibido)",
            # "todavía no veo la plata en la tarjeta": the money, not the parcel.
            r"(?:aun|todavia) no(?! (?:\w+ ){0,2}(?:la plata|el dinero|mi dinero|el reembolso|el reintegro|la devolucion|el abono|respuesta))",
            r"retras",
            r"donde (?:esta|estan) (?:mi|el|mis)",
            r"seguimiento",
            r"non (?:e |sono |mi e )?(?:ancora )?(?:arrivat|consegnat|ricevut)",
            r"in ritardo",
            r"ritardo",
            r"dov'?e (?:il mio|finito)",
            r"ancora (?:niente|nulla|non)",
            r"niet (?:aangekomen|ontvangen|geleverd|bezorgd)",
            r"nog (?:steeds )?(?:niet|niks) (?:ontvangen|binnen|aangekomen|geleverd|bezorgd|gekregen)",
            r"nog steeds (?:niets|niks|geen)(?! (?:antwoord|reactie|bericht|mail|e-?mail|terugbetaling|geld))",
            r"vertraag",
            r"te laat",
            r"waar (?:is|blijft) (?:mijn|de)",
            r"nao (?:chegou|recebi|foi entregue)",
            r"ainda nao",
            r"atras[oa]d|atraso",
            r"onde (?:esta|anda) (?:o meu|a minha|minha|meu)",
            r"rastreio",
            # Not "a encomenda não ficou feita" (the order was never placed: checkout failed).
            r"encomenda nao(?! (?:ficou|foi|chegou a ser) (?:feita|concluida|finalizada|processada"
            r"|registada|registrada|criada))",
        ),
        policy_topics=("shipping",),
        kb_articles=("KB-102",),
        kb_if=(
            (
                (
                    r"late\b",
                    r"delay",
                    r"overdue",
                    r"not (?:yet )?(?:arrived|delivered|received|moved|here|shown up|turned up)",
                    # Not "I never got the shipping email": the e-mail is late, not the parcel.
                    r"never (?:arrived|came|received|showed up|got|turned up)(?! (?:the |a |an |any |my )?(?:shipping |dispatch |confirmation |tracking |order )?(?:e-?mails?|confirmation|notification|message|text|sms))",
                    # Marked delivered, never there; due long ago.
                    r"(?:says|said|shows|showed|marked|showing|states) (?:as |it was |it'?s |it has been )?(?:been )?delivered",
                    r"(?:was|were) (?:due|expected|promised) (?:\w+ ){0,2}ago",
                    # "site said 3-5 days and it's been 9 now"; tracking stopped updating.
                    r"(?:it'?s|it has|its) been \d+ (?:days|weeks|business days)",
                    r"(?:goes|gone|went|go|going) missing",
                    r"(?:placed|ordered) it (?:ages|weeks|months|a long time) ago",
                    r"(?:non si aggiorna|non viene aggiornato|nicht (?:mehr )?aktualisiert|ne bouge plus|no se actualiza|wordt niet (?:meer )?bijgewerkt|nao (?:se )?atualiza|hasn'?t updated|stopped updating|not been updated)",
                    r"fermo da (?:giorni|settimane|\d+)",
                    r"(?:haengt|steckt) (?:\w+ ){0,5}fest\b",
                    r"(?:bewegt sich|tut sich) (?:\w+ )?nicht(?:s)?\b",
                    r"still (?:not|no|nothing|haven'?t|waiting)",
                    # Not "if they haven't left yet": whether it went out asks its status.
                    r"(?:hasn'?t|hasnt|has not|haven'?t|have not)(?! (?:left|shipped|gone out"
                    r"|been (?:sent|shipped|dispatched|posted)))",
                    r"didn'?t (?:arrive|come|get)",
                    r"stuck",
                    r"retard",
                    r"verspaet",
                    r"verzoeger",
                    r"retras",
                    r"no (?:ha |me ha |han )?(?:llegado|recibido)",
                    r"ritardo",
                    r"vertraag",
                    r"te laat",
                    r"atras[oa]d|atraso",
                    r"toujours (?:pas|rien)",
                    r"(?:pas|jamais) (?:encore )?(?:recu|arrive|livre)",
                    r"nicht (?:angekommen|geliefert|erhalten|zugestellt|da\b)",
                    r"noch nicht",
                    r"non (?:e |sono |mi e )?(?:ancora )?(?:arriv|consegn|ricev)",
                    r"ancora (?:niente|nulla|non)",
                    r"niet (?:aangekomen|ontvangen|geleverd|bezorgd)",
                    r"nog (?:steeds )?(?:niet|niks)",
                    r"nao (?:chegou|recebi|foi entregue)",
                    r"ainda nao",
                    r"(?:aun|todavia) no",
                    # a lost parcel, not the customer's lost shipping e-mail
                    r"lost(?! (?:the|my|our) (?:shipping|tracking|confirmation|dispatch|order)"
                    r" (?:email|e-mail|mail|link|number|details))",
                    r"missing",
                    r"perdu",
                    r"verloren",
                    r"perdid",
                    r"pers[oa]",
                    r"kwijt",
                    r"extraviad",
                    r"supposed to",
                    r"should have (?:arrived|come|been)",
                    # Was due and is not here, in each language; tracking that stopped moving.
                    # "it was meant to arrive" is late; "when's it meant to arrive?" asks
                    # "It was due to arrive Monday" is late; "when is it expected to arrive?"
                    # asks the date (KB-101 below): no "when" earlier in the sentence.
                    r"(?:^|[.!?:]\s*)(?![^.!?]*\bwhen\b[^.!?]*(?:meant|due|expected|scheduled) to)"
                    r"[^.!?]*?(?<!it )(?<!they )(?<!actually )(?:meant|due|expected|scheduled) to"
                    r" (?:be|arrive|come|land|get)",
                    r"(?:was|were|had been) (?:meant|due|expected|scheduled) to",
                    r"(?:was |were )?due (?:on|by|last|yesterday|monday|tuesday|wednesday|thursday"
                    r"|friday|saturday|sunday)",
                    r"no (?:update|updates|movement|scan|news)\b",
                    r"(?:sollte|haette|hatte)\w* (?:\w+ ){0,6}(?:da sein|kommen|ankommen|geliefert)",
                    r"keine (?:aktualisierung|bewegung|neuigkeit)",
                    r"devai(?:t|ent) (?:\w+ )?(?:arriver|etre livre)",
                    r"aucune (?:mise a jour|nouvelle)",
                    r"(?:deberia|debia|tenia que) (?:haber )?(?:llegado|llegar)",
                    r"sin (?:actualizacion|novedad|movimiento)",
                    r"doveva (?:\w+ )?arrivare",
                    r"nessun (?:aggiornamento|movimento)",
                    r"had (?:\w+ ){0,4}moeten (?:komen|aankomen|zijn|bezorgd)",
                    r"geen (?:update|beweging)",
                    r"(?:deveria|devia|era para|era pra) (?:ter )?(?:chegado|chegar)",
                    r"(?:rastreio|rastreamento|tracking) (?:\w+ ){0,2}parad[oa]",
                    r"(?:quase|mais de) (?:um|uma) (?:mes|semana)",
                    r"nada de chegar",
                    r"sem (?:atualizacao|movimento|novidade)",
                    r"(?:\d+|two|three|four|five|six|several|a few|a couple of) (?:weeks|days|wochen|tage|semaines|jours|semanas|dias|settimane|giorni|weken|dagen)",
                    r"(?:a|over a|more than a) (?:week|month)",
                ),
                ("KB-102",),
            ),
            (
                (
                    r"track",
                    r"tracking",
                    r"track ?(?:&|and|en|und) ?trace",
                    r"suivi",
                    r"sendungsverfolgung",
                    r"seguimiento",
                    r"rastreio",
                    r"rastreamento",
                    r"tracciamento",
                    r"(?:order |delivery |shipping )?status",
                    r"statut",
                    r"stato (?:dell'ordine|della spedizione)",
                    r"estado (?:de|del) (?:mi )?(?:pedido|envio)",
                    r"(?:question|questions|asking|query) about",
                    r"delivery (?:of|for) (?:my )?order",
                    r"order #?\d+ (?:shipping|delivery)",
                    r"when (?:will|is|does|can)",
                    r"when\b[^.?!]{0,30}\b(?:will|'ll)\b[^.?!]{0,20}\b(?:arrive|get here|come|be delivered|ship)",
                    r"quand",
                    r"wann",
                    r"cuando",
                    r"quando",
                    r"wanneer",
                    r"verzendbevestiging",
                    r"(?:has|have|is|was) (?:it|my order|the order|my parcel) (?:been )?(?:shipped|dispatched|sent)",
                    r"shipped yet",
                    r"where(?:'s| is) (?:my|the) (?:order|parcel|package)",
                    r"dispatched yet",
                    # Asked where it is, or whether it has gone out, saying nothing of lateness.
                    r"where(?:'s| is|s) (?:order )?#?\d{4,}",
                    r"confirm (?:the )?(?:expected |estimated )?delivery (?:date|dates|day)",
                    r"when'?s (?:it|my|the|order|that)\b",
                    r"when (?:\w+ ){0,3}should (?:be delivered|arrive)",
                    r"where (?:\w+ ){0,4}(?:are|is) on (?:their|its) (?:journey|way)",
                    r"where (?:my|our) (?:\w+ ){1,2}(?:is|are)\b",
                    r"where (?:order |parcel |package )?(?:no\.? |number |#)?\d{4,8} (?:is|has got"
                    r"|has gotten|stands)\b",
                    r"been (?:sent|posted|shipped|dispatched|mailed)(?: out| off)?(?: yet|\?| and if so)",
                    r"(?:sent|posted|gone out) yet",
                    r"(?:update|updates|news) (?:on|about|regarding|for) (?:my|our|the|orders?\b|#?\d{4,8})",
                    r"how (?:long|many days) (?:does|do|will|would|should|is)",
                    r"left (?:your|the) (?:warehouse|depot|building)",
                    r"(?:been )?(?:sent|shipped|dispatched|posted) (?:out |off )?yet",
                    # Asking for the tracking number or status, in each language.
                    r"tracking (?:number|code|link|id|no)",
                    r"sendungs(?:status|nummer|verfolgung)",
                    r"tracking-?(?:nummer|code|link)",
                    r"codigo de (?:seguimento|rastreio|rastreamento|seguimiento)",
                    r"numero de (?:suivi|seguimiento|rastreio|rastreamento)",
                    r"codice (?:di )?(?:tracciamento|tracking|spedizione)",
                    r"track ?(?:&|and|en) ?trace",
                    r"when (?:they'?ll|it'?ll|(?:it|they) will) (?:\w+ )?(?:land|arrive|get here|turn up)",
                ),
                ("KB-101",),
            ),
        ),
        label="late or missing delivery",
        unless=("loyalty_points",),
        not_after=(
            r"(?:too|not|isn'?t|wasn'?t) $",
            # The money has not arrived ("the refund for order 12348 never arrived", "o
            # estorno do pedido 12348 que ainda não caiu"): a refund's status, not a parcel's.
            r"(?:refund|reimbursement|money|credit|rimborso|soldi|denaro|bonifico|accredito"
            r"|remboursement|argent|virement|reembolso|dinero|estorno|dinheiro|erstattung"
            r"|rueckerstattung|gutschrift|geld|terugbetaling|terugstorting)"
            r"(?:\s+(?:de|do|da|del|dell'\S*|della|du|des|of|for|on|from|van|voor|von|vom|fuer"
            r"|per|para|pelo|pela|the|o|a|il|la|le|el|het|der|die|das|my|mon|mi|meu|mio|mijn"
            r"|mein\w*|order|ordine|pedido|commande|bestellung|bestelling|encomenda|#?\d{4,8}"
            r"|que|che|qui|which|that|is|has|e|ist|est|esta|still|yet|non|nao|not|nicht|niet|ne"
            r"|never|nie|mai|nunca|jamais|nooit|ainda|ancora|noch|nog|toujours|todavia|aun))*\s*$",
        ),
        not_before=(
            r"\s*(?:(?:auf|for|on|a|de|du|del|la|le|el|il|die|den|the|my|mon|ma|mi|meu|minha|mijn"
            r"|mein\w*|o|het|op|pelo|pela|al|mio|mia|ao|my|your|il mio|la mia|o meu|a minha)\s+){0,3}"
            r"(?:refund|reimbursement|money|rimborso|soldi|remboursement|argent|reembolso|dinero"
            r"|estorno|dinheiro|erstattung|rueckerstattung|gutschrift|geld|terugbetaling)",
            # "nothing has come back on my card", "still no sign of the refund", "I still
            # haven't seen the 54.50 come back": the money, not a parcel.
            r" back\b",
            r"(?: [\w']+){0,4} (?:of |on |for )?(?:the |my |your |a |any )?(?:refund|money"
            r"|reimbursement|credit|cash|\$?\d+[.,]\d\d)\b",
        ),
    ),
    Intent(
        "damaged_item",
        (
            r"damaged",
            r"damage",
            r"arrived (?:broken|smashed|cracked|in pieces|shattered|dented|torn|ripped|bent)",
            r"(?:broken|cracked|smashed|shattered) (?:on arrival|when it arrived|in the box"
            r"|in transit|screen|glass|lid|handle|leg)",
            r"(?:was|were|is|are) (?:broken|cracked|bent|torn) (?:when|on) (?:it |they )?(?:came|arrived|delivery)",
            r"came (?:broken|smashed|cracked|in pieces|damaged)",
            r"in pieces",
            r"smashed",
            r"cracked",
            r"shattered",
            r"dented",
            r"crushed",
            r"scratched",
            r"torn\b",
            r"fele",
            r"piteux etat",
            r"mauvais etat",
            r"fendu",
            r"enfonce",
            r"rachad",
            r"rasgad",
            r"cabosse",
            r"(?:pris|subi) un choc",
            r"raye",
            r"abollad",
            r"golpe",
            r"aplastad",
            r"spezzat",
            r"strappat",
            r"rovinat",
            r"crepat",
            r"schiacciat",
            r"gebrochen",
            r"beim transport",
            r"transportschaden",
            r"pushed in",
            r"big dent",
            r"dent in",
            r"ripped",
            r"endommag",
            r"abim",
            r"cassee?s?\b",
            r"brise",
            r"fissur",
            r"beschaedig",
            r"kaputt (?:angekommen|geliefert|an)",
            r"zerbrochen",
            r"zerkratzt",
            r"gesprungen",
            r"(?:kam|ist) kaputt",
            r"danad",
            r"(?:llego|vino|llegaron) (?:roto|rota|rotos|danad|golpead)",
            r"roto",
            r"rota\b",
            r"golpead",
            r"danneggiat",
            r"(?:arrivat|giunt)\w* (?:rott|rovinat|danneggiat)",
            r"rott[oa]\b",
            r"ammaccat",
            r"graffiat",
            r"beschadig",
            r"gebroken",
            r"deuk",
            r"gebarsten",
            r"danificad",
            r"(?:chegou|veio) (?:partid|quebrad|estragad|amassad)",
            r"partid[oa]",
            r"quebrad",
            r"amassad",
            r"riscad",
        ),
        policy_topics=("returns",),
        kb_articles=("KB-106",),
        label="damaged item",
        unless=("defective_item",),
    ),
    Intent(
        "defective_item",
        (
            r"has died",
            r"died (?:after|on me|within|the)",
            r"stopped (?:charging|working|turning on|responding|heating|grinding|holding)",
            r"stops (?:working|charging)",
            r"quit working",
            r"defect",
            r"faulty",
            r"doesn'?t (?:work|turn on|switch on|power on|charge|connect|hold a charge|heat|grind)",
            r"does not (?:work|turn on|switch on|power on|charge|connect|heat|grind)",
            r"not working",
            r"won'?t (?:turn|switch|power|charge|connect|work|start|boot|heat|pair)",
            r"will not (?:turn|switch|power|charge|connect|work|start)",
            r"can'?t (?:get it to|turn it on)",
            r"dead on arrival",
            r"\bdoa\b",
            r"malfunction",
            r"rendu l'ame",
            r"plus moyen de l'allumer",
            r"s'allume plus",
            r"ne s'allume pas",
            r"(?:then |and )?(?:just )?dies\b",
            r"(?:seal|cartridge|tap|valve|lid|hose|gasket) (?:\w+ )?leaks?",
            r"stalls?\b",
            r"noise like",
            r"making (?:a|an) (?:\w+ )?noise",
            r"rattl",
            r"nicht mehr (?:einschalten|an|laden|starten|aufladen)",
            r"laesst sich (?:\w+ ){0,3}nicht",
            r"hinueber",
            r"schaltet sich (?:\w+ ){0,5}ab",
            r"unbrauchbar",
            r"(?:doesn'?t|don'?t|does not|do not|won'?t|no longer) (?:\w+ )?(?:turn|spin|work|heat|charge|power|connect|respond)",
            r"non si carica",
            r"(?:e )?mort[oa]\b",
            r"is dead",
            r"went dead",
            r"freez",
            r"crash",
            r"keeps (?:freezing|crashing|rebooting|restarting|cutting out|dropping)",
            r"cuts? out",
            r"crackl",
            r"(?:won'?t|doesn'?t|does not) boot",
            r"s'eteint",
            r"garantie",
            r"warranty",
            r"garantia",
            r"garanzia",
            r"reinici",
            r"se queda (?:congelad|colgad|bloquead)",
            r"is stuk",
            r"gaat stuk",
            r"slaat (?:\w+ )?af",
            r"start niet",
            r"reageert (?:\w+ )?(?:niet|nergens)",
            r"scherm (?:blijft )?zwart",
            r"kraakt",
            r"valt (?:\w+ ){0,4}uit",
            r"doet het niet",
            r"si spegne",
            r"si blocca",
            r"broke (?:after|within|down)",
            r"broken after",
            r"(?:screen|battery|button|motor|fan) (?:is )?(?:dead|flickers|flickering|failing)",
            r"keeps (?:turning off|shutting down|disconnecting|crashing|restarting)",
            r"(?:is|it'?s) dead",
            r"defectueu",
            r"(?:ne )?(?:fonctionne|marche) (?:pas|plus)",
            r"en panne",
            r"tombe en panne",
            r"s'allume (?:pas|plus)",
            r"funktioniert (?:nicht|nicht mehr|kaum)",
            r"defekt",
            r"geht nicht mehr",
            r"geht (?:nicht )?(?:mehr )?(?:an|aus)",
            r"laesst sich nicht",
            r"ist kaputt gegangen",
            r"kaputt gegangen",
            r"(?:no|ya no) (?:funciona|enciende|carga)",
            r"defectuos",
            r"dejo de funcionar",
            r"se apaga",
            r"averiad",
            r"non (?:funziona|si accende|carica)",
            r"non va\b(?! a buon fine)",
            r"(?:smesso|smette) di funzionare",
            r"difettos",
            r"guast",
            r"werkt (?:niet|niet meer)",
            r"kapot",
            r"doet het niet",
            r"gaat niet (?:meer )?aan",
            r"defecto",
            r"(?:nao|deixou de) (?:funciona|liga|carrega)",
            r"deixou de funcionar",
            r"parou de funcionar",
            r"defeit",
            r"avariad",
            r"estragou",
        ),
        policy_topics=("returns", "warranty"),
        kb_articles=("KB-106", "KB-107"),
        label="defective item",
        # A password, a login or a code that stopped working is no faulty product
        # ("a palavra-passe deixou de funcionar" after someone took over the account).
        not_after=(
            r"(?:password|passwort|palavra-passe|palavra passe|senha|mot de passe|contrasena"
            r"|wachtwoord|login|log-in|account|konto|conta|compte|cuenta|app|website|site|link"
            r"|code|codigo|coupon|cupao|cupom|gutschein|voucher|discount code"
            # the tracking, not the product ("Track & trace doet het niet")
            r"|tracking|track ?(?:&|and|en|und|n) ?trace|tracking-?link|trackinglink"
            r"|sendungsverfolgung\w*|rastreio|rastreamento|suivi|seguimiento|tracciamento"
            r"|tracking number|tracking code) (?:\w+ ){0,2}$",
            # "Apple Pay keeps failing at checkout - it throws error code 40521": the payment.
            r"\b(?:apple pay|google pay|paypal|klarna|payment|checkout|check out|my card)\b"
            r"[^.?!]{0,50}$",
        ),
    ),
    Intent(
        "wrong_item",
        (
            r"not the [^.?!]{0,40} i (?:ordered|bought|paid for)",
            r"right (?:thing|item|one|size|colou?r|model) (?:was )?(?:sent|delivered)",
            r"instead (?:it|they|there|we|i) (?:contained|got|received|was|were|had)",
            r"did(?:n'?t| not) contain (?:the|my|what)",
            r"lo que (?:me )?(?:llego|vino) (?:fue|era)",
            r"what (?:arrived|came|turned up) was",
            r"(?:ma |pero |mais |aber |maar |mas )?(?:nella|dentro la) (?:scatola|confezione|pacco)"
            r" c'era",
            r"im paket (?:war|waren|lag|lagen) (?:aber|stattdessen)",
            r"ce qui est arrive",
            r"was (?:dann )?ankam",
            r"wat er (?:kwam|binnen kwam)",
            r"quello che (?:e|mi e) arrivato",
            r"o que (?:chegou|veio) foi",
            r"(?:nel pacco|in the box|im paket|dans le colis|en el paquete|in het pakket|no pacote) (?:\w+ ){0,3}(?:ho trovato|i found|fand ich|j'ai trouve|encontre|vond ik|encontrei)",
            r"what came (?:out of|in) the (?:box|parcel|package)",
            r"i ordered (?:the |a |an )?[^.?!]{1,30} (?:one|version|colou?r)(?: and that'?s what)",
            r"(?:had|contained|was|were|came|got|received|sent|found)\b[^.?!]{0,40}\binstead of (?:the|my|a|an) (?!refund|replacement|credit|voucher|exchange|return|cash|money|repair)",
            r"au lieu (?:du|de la|des|de l') (?!rembours|avoir|echange|bon)",
            r"(?:an)?statt (?:de[rsmn]|die|das|meine[rsmn]?) (?!erstatt|rueckerstatt|gutschein|geld|umtausch)",
            r"en (?:vez|lugar) del? (?!reembols|dinero|cambio|vale)",
            r"invece (?:del|della|dei|delle|dello) (?!rimbors|soldi|cambio|buono)",
            r"in plaats van (?:de|het|mijn|een) (?!terugbetal|geld|ruil|tegoed|(?:\w+ ){0,2}(?:op te zeggen|opzeggen|te annuleren|annuleren|stop te zetten|stopzetten|te pauzeren))",
            r"(?:em vez|no lugar) (?:do|da|dos|das) (?!reembols|dinheiro|troca|vale)",
            r"(?:got|received|sent|delivered|came with|contained)\b[^.?!]{0,40}\binstead(?! of (?:a |the |my )?(?:refund|replacement|credit|voucher))",
            r"verkeerde? (?:artikel|product|maat|kleur|pakket|bestelling|item|ding)",
            r"(?:stuur|stuurde|kreeg|ontving|geleverd)\w*[^.?!]{0,30}verkeerd",
            r"le bon (?:article|produit)",
            r"(?:den )?richtigen artikel",
            r"(?:el )?articulo correcto",
            r"l'articolo giusto",
            r"(?:het )?juiste artikel",
            r"o artigo certo",
            r"wrong (?:item|product|model|thing|article|size|colou?r|one|book|order|parcel"
            r"|package|version)",
            r"(?:received|sent|got|delivered|shipped|arrived with|came with|packed|gave (?=me |us ))"
            r" (?:me |us )?(?:the |a |an )?(?:wrong|different|incorrect)",
            r"(?:isn'?t|is not|wasn'?t|was not|not) what i (?:ordered|bought|paid for)",
            r"(?:different|incorrect|someone else'?s) (?:item|product|parcel)",
            r"mauvais (?:article|produit|modele|colis|taille|couleur)",
            r"pas (?:le bon|la bonne|ce que j'ai commande)",
            r"falsch\w* (?:artikel|produkt|ware|modell|groesse|farbe|paket)",
            r"nicht (?:das|den|die) (?:bestellt|was ich bestellt)",
            r"(?:articulo|producto|modelo|talla|color|paquete) (?:equivocado|incorrecto|erroneo"
            r"|distinto|diferente)",
            r"no es (?:lo que|el que) (?:pedi|compre)",
            r"(?:articolo|prodotto|modello|taglia|colore|pacco) (?:sbagliat|errat|diverso)",
            r"non e (?:quello|cio) che ho ordinato",
            r"(?:ander|fout) (?:artikel|product)",
            r"niet wat ik (?:heb )?besteld",
            r"(?:produto|item|artigo|modelo|tamanho|cor) (?:errad|trocad|diferente|incorret)",
            r"nao e o que (?:eu )?(?:pedi|encomendei|comprei)",
        ),
        policy_topics=("returns",),
        kb_articles=("KB-103",),
        label="wrong item",
        # Part of the order not in the parcel ("statt der zwei Kartuschen war nur eine drin"):
        # what is missing, not something else sent.
        unless=("missing_item",),
        not_after=(
            r"i(?:'d| had|'ve| have)? (?:\w+ )?(?:picked|chose|chosen|ordered|selected|clicked|bought"
            r"|put|typed|gave|given|entered|wrote|written|used|input) (?:the |a |in the |in a )?$",
            # Chatty English drops the "I": "cancel it please, ordered the wrong size by accident".
            r"(?:^|(?<=[,;.!] )|(?<= and )|(?<=\d ))(?:accidentally |mistakenly )?(?:picked|chose|ordered|selected"
            r"|clicked|bought) (?:the |a )?$",
            # The customer's own slip in the other languages ("je me suis trompé de modèle",
            # "pedí la talla equivocada", "ho ordinato il modello sbagliato").
            r"(?:je me suis|je m'etais|j'ai (?:choisi|commande|pris|selectionne)|(?:elegi|pedi"
            r"|escogi|seleccione|compre)|me (?:equivoque|confundi)|ho (?:scelto|ordinato|preso"
            r"|selezionato|comprato)|mi sono|(?:escolhi|pedi|encomendei|comprei|selecionei)"
            r"|me enganei|enganei-me) (?:\w+ ){0,2}$",
        ),
    ),
    Intent(
        "return_request",
        (
            r"send (?:[\w-]+ ){0,4}back",
            r"return (?:it|them|this|these|the|my|an?|both|one|all|for)\b(?! (?:money|payment|charge))",
            r"returning (?:it|them|this|these|the|my)",
            r"(?:want|like|need|wish|able|possible|how|can i|could i|may i) (?:\w+ ){0,2}return\b",
            r"(?:a|the|my) return\b(?! (?:of|to) (?:my |the )?(?:money|payment|funds))",
            r"returns? (?:polic|label|window|form|process|request)",
            r"exchange",
            r"swap (?:it|them|for)(?! (?:for )?cash)",
            r"(?:doesn'?t|don'?t|do not|does not) (?:fit|suit|like)",
            r"too (?:small|big|large|tight|loose|short|long)",
            r"retourn",
            r"renvoyer",
            r"renvoi",
            r"echange",
            r"zuruecksend",
            r"zurueckschick",
            r"zurueckgeben",
            r"zurueck\w*schick(?!t\b)",  # "zurückgeschickt": sent back already, done
            r"zurueck\w*send",
            r"ruecksend",
            r"umtausch",
            r"umtauschen",
            r"retoure",
            r"passt (?:nicht|mir nicht)",
            # Not the money: "devolver el dinero", "devolver uma das cobranças" (a charge back).
            r"devolver(?! el dinero| uno| el cobro| mi dinero)(?!(?:-me|-nos| me| nos)? (?:a|la) diferen)"
            r"(?! (?:\w+ ){0,2}(?:cobranc|cobro|cargo|debito|pagamento|pago|dinheiro|estorno))",
            r"devolucion (?:del|de la|de los|de las) (?!dinero|importe|cobro|pago)",
            r"devuelvo",
            r"cambiar(?:lo|la)? por",
            r"restituire",
            r"restituirlo",
            r"rendere",
            r"reso\b",
            r"cambio (?:taglia|colore)",
            r"terugsturen",
            r"terug (?:te )?sturen",
            r"terugstuur",
            r"retour",
            r"ruilen",
            r"omruilen",
            r"devolucao",
            r"devolver (?:o|a|os|as) (?:produto|artigo|item|encomenda)",
            r"trocar(?! por dinheiro)",
            r"troca\b",
        ),
        policy_topics=("returns",),
        kb_articles=("KB-103",),
        label="return",
        # "Don't need it any more", "never used it" of a subscription or a gift card is about
        # that, not an item to send back.
        unless=(
            "damaged_item",
            "defective_item",
            "wrong_item",
            "cancellation",
            "keep_order",
            "subscription",
            "gift_card",
            # Points lost on an item sent back: the return is the points' story.
            "loyalty_points",
        ),
        negatable=True,
    ),
    Intent(
        "price_error",
        (
            r"price match",
            r"(?:il y a moyen|possible|peut-on|pouvez-vous) (?:d'|de l')?ajuster",
            r"adjust (?:it|the price|the charge)",
            r"je (?:les|le|la) vois (?:\w+ ){0,3}a \d",
            r"match (?:\w+ ){0,2}prices?",
            r"\$[\d.,]+ difference",
            r"identical (?:\w+ ){0,3}for \$",
            r"(?:now|currently) (?:has|sells|selling|lists) [^.?!]{0,40}for \$",
            r"difference back",
            r"(?:it'?s|now|is now) \$?[\d.,]+ (?:on|at|in) (?:your|the)",
            r"(?:said|showed|listed|advertised|was) \$[\d.,]+ (?:but|and|yet)",
            r"match (?:the|their|a) price",
            r"price (?:looks |is |was )?(?:wrong|different|higher|incorrect)",
            r"wrong price",
            r"price (?:dropped|drop|went down|reduced|was cut|is lower|changed)",
            r"(?:went|gone) on sale",
            r"cheaper",
            r"lower price",
            r"discount (?:was not|wasn'?t|not|didn'?t|code)",
            r"(?:promo|coupon|voucher) code (?:didn'?t|did not|wasn'?t|not)",
            r"discount applied",
            r"overcharged",
            r"charged (?:me )?more than",
            r"price difference",
            r"(?:more|higher) than (?:the |what was )?(?:advertised|listed|shown)",
            r"prix",
            r"moins cher",
            r"preis",
            r"billiger",
            r"guenstiger",
            r"precio",
            r"mas barato",
            r"prezzo",
            r"costa meno",
            r"prijs",
            r"goedkoper",
            r"preco",
            r"mais barato",
        ),
        policy_topics=("price_match",),
        kb_articles=("KB-109",),
        label="price",
        # "esquece a diferença de preço", "forget the price difference": waived, not asked.
        not_after=(
            r"(?:esquece|esqueca|esquecam|forget|never mind|vergesst|vergiss|oubliez|oublie"
            r"|olvida|olvide|dimentica|lascia perdere|vergeet|laat) (?:\w+ ){0,2}$",
        ),
        # A price seen elsewhere is why an order is cancelled ("found it cheaper, cancel it"),
        # and an amount a gift card shows is its balance: no price match is asked.
        unless=("cancellation", "gift_card"),
    ),
    Intent(
        "gift_card",
        (
            r"gift ?cards?",
            r"gift ?certificate",
            r"e-?gift",
            r"cartes?[- ]cadeaux?",
            r"cheque[- ]cadeau",
            r"gutschein",
            r"geschenkkarte",
            r"geschenkgutschein",
            r"tarjetas? (?:de )?regalo",
            r"buon[oi] (?:regalo|acquisto)",
            r"carta regalo",
            r"gift ?card",
            r"cadeaubon",
            r"cadeaukaart",
            r"kadobon",
            r"cart(?:ao|oes) (?:de )?presente",
            r"vale[- ]presente",
            r"cartao[- ]oferta",
        ),
        policy_topics=("gift_cards",),
        kb_articles=("KB-203",),
        needs_order=False,
        label="gift card",
        # A gift card that is only the item of an order the customer never placed (decision 6).
        unless=("goodwill_credit", "loyalty_points", "unauthorized_order"),
    ),
    Intent(
        "callback",
        (
            r"give me a (?:ring|call|bell)",
            r"call ?back",
            r"call me",
            r"phone me",
            r"ring me",
            r"(?:can|could|would) (?:someone|somebody|you|an agent) (?:please )?(?:call|phone|ring)",
            r"(?:speak|talk) (?:to|with) (?:someone|somebody) (?:on|by|over) the phone",
            r"(?:by|phone|telephone) call",
            r"by phone",
            r"rappel",
            r"m'appeler",
            r"appelez-moi",
            r"me (?:telephoner|contacter par telephone)",
            r"rueckruf",
            r"zurueckrufen",
            r"(?:rufen|ruft) sie mich",
            r"mich (?:an)?rufen",
            r"anrufen",
            r"llamad(?:a|me)",
            r"llamarme",
            r"(?:me )?(?:podeis|puede|pueden|podrian|podria) llamar",
            r"por telefono",
            r"me (?:llamen|llame|llamais)",
            r"devolver la llamada",
            r"richiam",
            r"chiamarmi",
            r"mi (?:chiami|chiamate)",
            r"telefonata",
            r"terugbel",
            r"bel me",
            r"(?<!keer )(?:opbellen|bellen)",  # "drie keer bellen!": calls made, not asked for
            r"ligue-me",
            r"me ligu",
            r"ligar(?:-me)? de volta",
            r"ligar-me",
            r"me ligar",
            r"(?:uma )?chamada",
        ),
        needs_order=False,
        label="callback",
        # Contact details offered in case they help ("you can reach me on 555-0148 if
        # needed") are no request for a call.
        not_before=(r"[^.?!]{0,40}\bif (?:needed|necessary|need be|required|you need|that helps)",),
        negatable=True,
        order_bound=False,
    ),
    Intent(
        "complaint",
        (
            r"furious",
            r"angry",
            r"livid",
            r"fed up",
            r"sick (?:of|and tired)",
            r"lawyer",
            r"solicitor",
            r"attorney",
            r"legal action",
            r"sue\b",
            r"court\b",
            r"unacceptable",
            r"(?:speak|talk) (?:to|with) (?:a |an |your )?(?:human|person|real person|manager"
            r"|supervisor|team lead|someone in charge)",
            r"(?<!office )(?<!account )(?<!project )(?<!store )(?<!our )(?<!my )manager",  # a role named in passing is no demand
            r"supervisor",
            r"escalat",
            r"complain",
            r"chargeback",
            r"dispute (?:the|this) (?:charge|transaction|payment)",
            r"disgust",
            r"ridiculous",
            r"outrag",
            r"appalling",
            r"terrible service",
            r"worst",
            r"scam",
            r"rip[- ]?off",
            r"trading standards",
            r"consumer (?:protection|rights)",
            r"never (?:again|shop|order|buy)\b",
            r"bad review",
            r"inacceptable",
            r"inadmissible",
            r"scandaleu",
            r"honteu",
            r"avocat",
            r"plainte",
            r"furieu",
            r"responsable",
            r"responsabile",
            r"parlare con (?:un|il) (?:responsabile|superiore)",
            r"contestero",
            r"contest\w* l'addebito",
            r"unverschaemt",
            r"frechheit",
            r"anwalt",
            r"beschwer",
            r"verbraucherzentrale",
            r"vorgesetzt",
            r"inaceptable",
            r"abogado",
            r"denuncia",
            r"queja",
            r"indignad",
            r"vergonzos",
            r"inaccettabile",
            r"avvocato",
            r"reclamo",
            r"vergogn",
            r"arrabbiat",
            r"onacceptabel",
            r"advocaat",
            r"klacht",
            r"schandalig",
            r"boos",
            r"inaceitavel",
            r"advogado",
            r"reclamacao",
            r"reclamac",
            r"queixa",
            # "Exijo que me devuelvan el cargo" demands the refund; a complaint demands a person.
            r"exijo (?:hablar|un responsable|una explicacion|que me atienda|un supervisor|un encargado|una solucion ya)",
            r"responsavel",
            r"absurdo",
            r"vergonha",
            r"procon",
        ),
        policy_topics=("escalation",),
        kb_articles=("KB-112",),
        needs_order=False,
        label="complaint",
        order_bound=False,
    ),
    Intent(
        "acknowledgement",
        (
            r"thanks?,? (?:all|it'?s|that'?s|everything|got it|received)",
            r"thank you,? (?:all|it'?s|that'?s|everything|it arrived|got it)",
            r"all (?:sorted|good|resolved|fine|done)",
            r"(?:problem|issue) (?:is |has been )?(?:solved|resolved|sorted|fixed)",
            r"(?:it|that|everything) (?:has been|is|was|got) (?:sorted|resolved|fixed)",
            r"no (?:further|more) (?:action|help) (?:is )?needed",
            r"(?:please )?(?:close|ignore) (?:the|this|my) (?:ticket|request|message|case)",
            r"(?:it|the parcel|the package|my order) (?:just |finally )?(?:arrived|turned up|came)"
            r"(?: today| this morning| after all)?[,.!] (?:thanks|thank you|all good)",
            r"got (?:my refund|the refund|the money)",
            # Not "about 5 weeks after I got it": received, not understood.
            r"(?<!i )(?<!we )(?<!after )(?<!since )(?<!when )(?<!before )got it\b",
            r"merci,? (?:c'est|tout|bien recu|j'ai)",
            r"(?:c'est )?bien recu",
            r"c'est parfait",
            r"merci (?:beaucoup )?pour votre (?:aide|reactivite|retour)",
            r"(?:ja )?chegou tudo",
            r"obrigad[oa] pela ajuda",
            r"assunto (?:por )?encerrado",
            r"(?:probleme|souci) (?:est )?(?:resolu|regle)",
            r"danke,? (?:alles|hat sich|ist angekommen|erledigt)",
            r"hat sich erledigt",
            r"gracias,? (?:todo|ya|resuelto|llego)",
            r"(?:ya )?(?:esta|quedo) resuelto",
            r"grazie,? (?:tutto|risolto|e arrivato)",
            r"(?:e stato )?risolto",
            r"bedankt,? (?:alles|het|is opgelost)",
            r"(?:is )?opgelost",
            r"obrigad[oa],? (?:tudo|ja|chegou|resolvido)",
            r"(?:ja )?(?:esta )?resolvido",
        ),
        needs_order=False,
        label="thanks",
        not_in_questions=True,
        order_bound=False,
    ),
    Intent(
        "goodwill_credit",
        (
            r"compensat",
            r"goodwill",
            r"(?:some|a|any|store|account) credit (?:for|as|to make up)",
            r"(?:store|account) credit",
            r"gesture",
            r"(?:voucher|credit|discount|gesture|refund) is the least",
            r"deserve (?:a|some) (?:voucher|credit|discount|compensation|something)",
            r"voucher or something",
            r"gesto",
            r"buono (?:sconto )?(?:come|per)",
            r"vale de desconto",
            r"pelo (?:incomodo|transtorno)",
            r"make (?:it|this) up to me",
            r"credit note",
            r"(?:voucher|discount|coupon) (?:for|to make up)",
            r"something (?:for|to make up for) (?:the|my) (?:trouble|inconvenience|wait)",
            r"dedommag",
            r"geste commercial",
            r"compensation",
            r"entschaedig",
            r"kulanz",
            r"wiedergutmach",
            r"compensac",
            r"indemniz",
            r"compensazion",
            r"risarc",
            r"indennizz",
            r"compensatie",
            r"tegemoetkoming",
            r"schadevergoeding",
            r"compensacao",
            r"indeniza",
        ),
        policy_topics=("goodwill_credit",),
        kb_articles=("KB-205",),
        label="goodwill credit",
        to_human=True,
        # "Do refunds go back to PayPal, or do you give store credit instead?": how a refund
        # is paid, not a gesture asked for.
        not_after=(r"\bor (?:do|will|would|can|could|is it) (?:you|they|u|it) (?:\w+ ){0,2}$",),
    ),
    Intent(
        "keep_order",
        (
            r"keep (?:it|them|the order|my order|the \w+|this order|order #?\d{4,8}|#\d{4,8})",
            r"(?:don'?t|do not) go ahead with (?:it|the cancell?ation|cancell?ing|that)",
            r"(?:i'?ll|i will|i'?d like to|i want to|we'?ll|going to) keep",
            r"(?:don'?t|do not|please don'?t|no need to|not) cancel",
            r"(?:undo|reverse|revert|withdraw|take back) (?:the|my|that) cancell?ation",
            r"un-?cancel",
            r"reinstate",
            r"(?:i )?(?:still |really |do )want (?:it|them|the \w+|that \w+)(?: after all)?",
            r"ik wil (?:\w+ ){0,3}(?:echt |toch |wel )?hebben",
            r"je (?:la|le|les) veux",
            r"(?:le|la|les) garder",
            r"garder (?:le|la|les|ca)",
            r"(?:laissez|laisse)[- ](?:la|le) (?:suivre|partir)",
            r"suivre son cours",
            r"oubliez (?:son|mon|ce|le) message",
            r"ignore (?:that|my|his|her|the) (?:message|email|request)",
            r"(?:la|lo) quiero igual",
            r"undo (?:that|it|this|the cancell?ation)",
            r"un-?cancell?ed",
            r"(?:laat|let) (?:die|de|deze|the|that|it) (?:bestelling |order )?(?:\w+ ){0,3}(?:doorgaan|go ahead|go through|ship)",
            r"keeping (?:it|the|them|this)",
            r"leave (?:the |my )?order (?:\S+ )?alone",
            r"let it ship",
            r"restore (?:my|the) order",
            r"still want (?:it|the order|them)",
            r"(?:ne|n') ?(?:l'|la |le )?annulez pas",
            r"(?:pas besoin|inutile) d'annuler",
            r"je (?:la|le|les) garde",
            r"garder (?:la|ma) commande",
            r"nicht stornier",
            r"stornier\w* (?:sie )?(?:sie |es |die bestellung )?(?:bitte )?nicht",
            r"(?:ich )?behalte",
            r"behalten",
            r"no (?:la |lo )?(?:cancele|cancelen|anule|anulen)",
            # "No quiero cancelar el pedido" keeps it; "no quiero cancelar nada, solo saber…"
            # only says what is not asked.
            r"(?:no hace falta|(?:ya )?no quiero) (?:cancelar|anular)(?! nada)"
            r"(?![^.?!]{0,40}\b(?:solo|solamente|sino|nada|unicamente)\b)",
            r"(?:me )?(?:lo|la) quedo",
            r"quedarme con",
            r"non (?:annullate|annullatelo|cancellate|annullare)",
            r"(?:lo|la) tengo",
            r"(?:voglio )?tenerl[oa]",
            r"niet annuleren",
            r"annuleer (?:hem |het |de bestelling |deze )?(?:alsjeblieft |aub )?niet",
            r"(?:ik )?(?:houd|hou) (?:hem|het|ze|de bestelling)",
            r"(?:wil )?(?:hem|het) houden",
            r"nao (?:cancelem|cancele|cancelar|quero mais cancelar)",
            r"nao (?:quero|queremos) (?:cancelar|anular)(?! nada)"
            r"(?![^.?!]{0,40}\b(?:so|apenas|somente|nada|mas sim)\b)",
            r"(?:vou|quero) ficar com",
            # The customer's own cancellation request taken back, in each language ("vergesst
            # bitte meine Stornoanfrage", "forget my cancellation request").
            r"(?:forget|ignore|disregard|scrap|withdraw|drop) (?:\w+ ){0,3}cancell?ation",
            r"(?:vergess\w*|vergiss|ignorier\w*|zurueckzieh\w*) (?:\w+ ){0,4}storn",
            r"storn\w* (?:\w+ ){0,8}(?:nicht mehr noetig|nicht mehr notig|hinfaellig|hinfallig"
            r"|ziehe ich zurueck|ziehe ich zuruck)",
            r"(?:oubliez|oublie|ignorez|ignore) (?:\w+ ){0,3}(?:demande d'annulation|annulation)",
            r"(?:olvid\w*|ignor\w*) (?:\w+ ){0,3}(?:cancelacion|anulacion|solicitud de cancel)",
            r"(?:dimentica\w*|ignora\w*) (?:\w+ ){0,3}(?:annullamento|richiesta di annull)",
            r"(?:vergeet|negeer) (?:\w+ ){0,3}(?:annulering|annuleringsverzoek)",
            r"(?:esquec\w*|ignor\w*|desconsider\w*) (?:\w+ ){0,3}(?:cancelamento|anulacao"
            r"|pedido de cancel)",
        ),
        policy_topics=("cancellation",),
        kb_articles=("KB-104",),
        label="keep the order",
        to_human=True,
        negatable=True,
        unless=("subscription",),
        only_with=(r"cancel", r"annul", r"stornier", r"anul", r"annuleer", r"annuleren", r"storno"),
    ),
    Intent(
        "missing_item",
        (
            r"(?:an? |one |the )?(?:item|part|piece|pieces|component|accessory|cable|charger"
            r"|lid|screws?|bolts?|parts) (?:is |are |was |were )?(?:missing|not in|wasn'?t in"
            r"|not included|absent)",
            r"missing (?:from|in) (?:the|my) (?:box|parcel|package|order|delivery)",
            # "opened the box for 12370 and the burr set for the grinder is missing entirely"
            r"(?:opened|unpacked|unboxed|opening|unpacking) (?:the |my |up the )?(?:box|parcel|package"
            r"|delivery)\b[^.?!]{0,60}\b(?:is|are|was|were) (?:\w+ )?missing",
            r"missing (?:an? |one |the |some )?(?:item|part|piece|component|accessory|cable"
            r"|charger|screws?|parts)",
            r"(?:box|parcel|package) (?:was |came |arrived )?(?:half )?empty",
            r"(?:only|just) (?:got|received|came with) (?:one|1|part|half|some)(?! of (?:my|the|your|our) (?:refund|money|payment))",
            r"(?:not|wasn'?t|weren'?t) in the (?:box|parcel|package)",
            r"(?:there'?s|there is|there was|there were|with|but) no [^.?!,]{1,30} in (?:the|my)"
            r" (?:box|parcel|package)",
            r"(?:en|dentro de) (?:la caja|el paquete) no (?:venia|venian|estaba|estaban|habia"
            r"|traia|traian)",
            r"no (?:venia|venian|traia|traian) (?:el|la|los|las) [^.?!,]{1,30}(?:ni|y)",
            r"incomplete",
            r"n'y a (?:ni|pas) (?:le|la|les)",
            r"(?:so|apenas) (?:vinha|veio|chegou|chegaram) um",
            r"um dos dois",
            r"uno de los dos",
            r"solo (?:venia|vino|llego) (?:uno|una)",
            r"(?:only|just) (?:one|1|half|part|some) of (?:the|my)",
            r"(?:veio|vieram) (?:so|apenas) (?:um|uma)",
            r"cade o outro",
            r"(?:isn'?t|is not|wasn'?t|was not|weren'?t|were not|aren'?t|are not) in (?:the box|it|the parcel|the package|there)",
            r"(?:il )?manque (?:un|une|le|la|les|des|deux|l')",
            r"manquant\w* (?:dans|du|de la)",
            r"incomplet",
            r"(?:fehlt|fehlen|fehlte)",
            r"unvollstaendig",
            r"(?:me |nos )?(?:falta|faltan|faltaba) (?:un|una|el|la|los|las|dos|piezas?)\b",
            r"incomplet",
            r"(?:manca|mancano|mancava)",
            r"(?:ontbreekt|ontbreken|ontbrak)",
            r"onvolledig",
            r"(?:faltou|faltava|falta|faltam) (?:um|uma|o|a|os|as|uma peca|pecas)\b",
        ),
        kb_articles=("KB-110",),
        label="missing item",
    ),
    Intent(
        "address_change",
        (
            r"typo in (?:my|the) (?:delivery |shipping )?address",
            r"typo (?:alert|in|on)\b",
            r"en la direccion",
            r"(?:na|da) morada",
            r"should be (?:flat |apt |apartment |number |no\.? )?\d+\b",
            r"(?:it|het|sie|es) (?:should|moet|sollte|muss) (?:be |zijn |sein )?\d+",
            r"(?:huisnummer|hausnummer|numero civico|numero de (?:la )?casa|numero da porta)\b",
            r"(?:postcode|zip code|zip)\b(?! \d)(?! [a-z]{1,2}\d)",  # not a postcode just given
            r"(?:spelt|spelled|misspelt|misspelled)",
            r"go to my (?:office|work|new)",
            r"send (?:it|them) to (?:my )?(?:office|work)",
            r"address (?:is|was) (?:wrong|incorrect)",
            r"(?:change|update|correct|amend|fix|edit) (?:the |my )?(?:delivery |shipping |postal )?"
            r"address",
            r"(?:wrong|old|incorrect) (?:delivery |shipping )?address",
            r"(?:new|different) (?:delivery |shipping )?address",
            r"(?:deliver|send|ship) (?:it )?to (?:my |a |another )?(?:new|different|work|office"
            r"|other)",
            r"(?:i'?ve|i have|we'?ve|we have|just) moved",
            r"redirect",
            r"(?:changer|modifier|corriger) (?:l'|mon |d')?adresse",
            r"(?:nouvelle|mauvaise) adresse",
            r"adresse (?:aendern|korrigieren|geaendert|falsch)",
            r"(?:neue|falsche) (?:liefer)?adresse",
            r"umgezogen",
            r"(?:cambiar|corregir|modificar) (?:la |mi )?direccion",
            r"(?:nueva|otra) direccion",
            r"direccion (?:equivocada|incorrecta)",
            r"(?:cambiare|modificare|correggere) (?:l'|il mio )?indirizzo",
            r"(?:nuovo|altro) indirizzo",
            r"indirizzo (?:sbagliato|errato)",
            r"adres (?:wijzigen|aanpassen|veranderen)",
            r"(?:nieuw|ander) adres",
            r"verhuisd",
            r"(?:mudar|alterar|corrigir) (?:o |a |meu )?(?:endereco|morada)",
            r"(?:novo|nova) (?:endereco|morada)",
            r"(?:endereco|morada) (?:errad|incorret)",
        ),
        kb_articles=("KB-105",),
        label="address change",
    ),
    Intent(
        "unauthorized_order",
        (
            r"(?:didn'?t|did not|never) (?:place|make|order|authori[sz]e|buy|purchase)",
            r"(?:wasn'?t|was not) me\b",
            r"not (?:placed|made|authori[sz]ed) by me",
            r"unauthori[sz]ed",
            r"(?:que )?(?:yo )?no he hecho",
            r"(?:me )?(?:la|lo) han robado",
            r"pedidos? que no (?:he|hice)",
            r"(?:never|didn'?t|did not) (?:made|make|ordered|place|placed)\b",
            r"i (?:have )?never (?:seen|ordered|made)",
            r"(?:been|got) into my account",
            r"entrato nel mio account",
            r"a (?:mio|mi) nombre",
            r"(?:hacked|compromised|taken over)",
            r"someone (?:else )?(?:has been |is |was )?(?:using|used|got into|logged into|accessed)",
            r"(?:never|didn'?t|did not) (?:bought|ordered)",
            r"(?:account|card) (?:was |has been )?(?:hacked|compromised|stolen)",
            r"fraud",
            r"suspicious (?:order|activity|charge|login)",
            r"(?:don'?t|do not) recogni[sz]e",
            r"identity theft",
            r"(?:n'ai|j'ai) (?:jamais|pas) (?:passe|commande|fait)",
            r"pirate",
            r"frauduleu",
            r"(?<!so )nicht (?:bestellt|autorisiert)",
            r"gehackt",
            r"betrug",
            r"nie bestellt",
            r"no (?:he|hice) (?:hecho|realizado|ningun) (?:este |ese )?(?:pedido|compra)",
            r"no reconozco",
            r"hackead",
            r"fraude",
            r"non ho (?:mai )?(?:fatto|effettuato|ordinato)",
            r"non riconosco",
            r"hackerat",
            r"frode",
            r"niet (?:besteld|geplaatst|herken)",
            r"gehackt",
            r"nooit besteld",
            r"niet (?:heb )?geplaatst",
            r"overgenomen",
            r"(?:vreemde|verdachte) inlog",
            r"nao (?:fiz|reconheco|encomendei)",
            r"invadid",
            r"hackead",
        ),
        kb_articles=("KB-208",),
        label="unauthorised order",
        needs_order=False,
        to_human=True,
        order_bound=False,
    ),
    Intent(
        "invoice",
        (
            # Not the receipt the customer has or found ("my husband found the receipt"): the
            # one asked for.
            r"(?<!found the )(?<!found my )(?<!found our )(?<!have the )(?<!have my )(?<!kept the )"
            r"(?<!kept my )(?<!got the )(?<!with the )(?<!with my )(?<!on the )(?<!on my )invoice",
            r"(?<!found the )(?<!found my )(?<!found our )(?<!have the )(?<!have my )(?<!kept the )"
            r"(?<!kept my )(?<!got the )(?<!with the )(?<!with my )(?<!on the )(?<!on my )receipt",
            r"vat\b(?! (?:no|number|nr|id|reg)\b)",
            r"bill for (?:my|the|this) (?:order|purchase)",
            r"proof of purchase",
            r"facture",
            r"rechnung",
            r"quittung",
            r"beleg",
            r"factura",
            r"recibo",
            r"fattura",
            r"ricevuta",
            r"scontrino",
            r"factuur",
            r"kwitantie",
            r"fatura(?! do (?:meu |seu )?cart)",  # "a fatura do cartão" is the card statement
            r"nota fiscal",
        ),
        kb_articles=("KB-210",),
        label="invoice",
        negatable=True,
    ),
    Intent(
        "loyalty_points",
        (
            r"(?:loyalty|reward|rewards|bonus) (?:points?|program|scheme|card)",
            r"points (?:for|from|on) (?:order|my|the|this)",
            r"how many points",
            r"points do i",
            r"(?:my|\d+|the|of) (?:loyalty |reward )?points",
            r"points? (?:balance|missing|haven'?t|not)",
            r"points? de fidelite",
            r"fidelite",
            r"(?:treue|bonus)punkte",
            r"punkte",
            r"puntos",
            r"punti",
            r"fedelta",
            r"punten",
            r"spaarpunten",
            r"pontos",
            r"fidelidade",
        ),
        kb_articles=("KB-206",),
        label="loyalty points",
        needs_order=False,
        order_bound=False,
    ),
    Intent(
        "payment_declined",
        (
            r"declin",
            r"refusee?",
            r"carte (?:\w+ )?(?:est |a ete )?refusee",
            r"transazione rifiutata",
            r"(?:payment|card|transaction) (?:was |got |keeps (?:getting )?)?(?:rejected|refused"
            r"|failed|failing|denied|not accepted|not going through|won'?t go through)",
            r"(?:won'?t|will not|doesn'?t|does not) (?:accept|take) my (?:card|payment)",
            r"can'?t (?:pay|check ?out|complete (?:the|my) (?:payment|purchase|order))",
            r"payment (?:error|failure|problem)",
            r"(?:paiement|carte|cb) (?:a ete )?refuse",
            r"(?:paiement|carte) (?:a ete )?(?:echoue|rejete)",
            r"abgelehnt",
            r"zahlung (?:fehlgeschlagen|geht nicht)",
            r"rechazad",
            r"(?:pago|tarjeta) (?:no )?(?:pasa|funciona|fallido)",
            r"rifiutat",
            r"(?:pagamento|carta) (?:non )?(?:va a buon fine|fallito|non passa)",
            r"geweigerd",
            r"afgewezen",
            r"betaling (?:mislukt|lukt niet)",
            r"recusad",
            r"(?:pagamento|cartao) (?:nao )?(?:aprovado|passa|falhou)",
        ),
        kb_articles=("KB-209",),
        label="declined payment",
        needs_order=False,
        order_bound=False,
    ),
    Intent(
        "subscription",
        (
            r"subscri",
            r"(?:my|the) sub\b",
            r"pause (?:my|the) (?:sub|plan|membership|box|deliveries)",
            r"auto-?renew",
            r"(?:monthly|annual|recurring) (?:plan|membership|charge|payment|box)",
            r"membership",
            r"renewal",
            r"abonnement",
            r"abonne",
            r"abo\b",
            r"suscrip",
            r"abbonament",
            r"assinatura",
            r"renovac",
            r"rinnovo",
            r"verlenging",
            r"verlaenger",
        ),
        kb_articles=("KB-207",),
        label="subscription",
        needs_order=False,
        order_bound=False,
    ),
)
"""Every intent the rules planner reads, in the order the answer lists them."""
# The language lexicons (written apart from this table) widen every intent's phrases.
INTENTS = tuple(
    replace(i, phrases=tuple(dict.fromkeys((*i.phrases, *phrases_for(i.name))))) for i in INTENTS
)

BY_NAME: dict[str, Intent] = {intent.name: intent for intent in INTENTS}


@cache
def pattern(phrases: tuple[str, ...]) -> re.Pattern[str]:
    """The phrases as one pattern over normalised text, each matched from a word start
    (`phrase_gate.PHRASE_START`)."""
    return re.compile(PHRASE_START + "(?:" + "|".join(_fold_phrase(p) for p in phrases) + ")")


@cache
def phrase_gate(phrases: tuple[str, ...]) -> PhraseGate:
    """A cheap check of whether `pattern(phrases)` can match a clause (phrase_gate.py)."""
    return gate(folded_phrases(phrases))


def folded_phrases(phrases: tuple[str, ...]) -> tuple[str, ...]:
    """The phrases folded like the text they are matched against."""
    return tuple(_fold_phrase(p) for p in phrases)


@cache
def pattern_at(phrases: tuple[str, ...]) -> re.Pattern[str]:
    """The phrases as one pattern to match right at a position (`Intent.not_before`)."""
    return re.compile("(?:" + "|".join(_fold_phrase(p) for p in phrases) + ")")


_ESCAPE = re.compile(r"(\\.)")


def _fold_phrase(phrase: str) -> str:
    """A phrase folded like the text, its escapes kept: lower case would turn `\\S` (not a
    space) into `\\s` (a space) and `\\W` into `\\w`."""
    return "".join(
        part if _ESCAPE.fullmatch(part) else fold(part) for part in _ESCAPE.split(phrase)
    )


TIMEZONE = re.compile(r"\b(?:UTC|[A-Z][a-z]+(?:/[A-Z][A-Za-z_]+)+)\b")
"""What an IANA time-zone name such as Europe/Berlin or America/New_York, or UTC, looks like
(`find_timezone` checks that it is one: "Sir/Madam" looks like one too)."""


def find_timezone(text: str) -> str | None:
    """The first IANA time-zone name (or UTC) in `text` that the zone database knows."""
    for match in TIMEZONE.finditer(text):
        if _known_zone(match.group(0)):
            return match.group(0)
    return None


@cache
def _known_zone(name: str) -> bool:
    if name == "UTC":
        return True  # whether or not the machine has a zone database
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True
