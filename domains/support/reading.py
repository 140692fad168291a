"""Reading a ticket in context: which intents its own words express, clause by clause, and
which of its requests nobody accounted for.

The steps, each for a way tickets were misread:

1. Only the customer's own words count (`own_words`: no quoted reply, forward or signature).
2. They are matched as `text_norm.normalize` spells them (accents, umlauts, typos).
3. They are split into clauses; an intent's phrase found in a clause counts unless the
   intent is `negatable` and the clause negates it ("please don't cancel", "no need for a
   refund", "bitte nicht stornieren", "annuleer hem niet").
4. Every clause that *asks* for something (a question, "please", "can you", "I want" in any
   of the seven languages) must be accounted for by an intent, or by naming an order; what is
   left is `unaccounted`, and the answer cannot be `complete` without a human (principle 10).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import partial

from . import second_opinion
from .intent_model import load_follow_up_model, load_model
from .intents import BY_NAME, INTENTS, Intent, pattern, pattern_at, phrase_gate
from .order_ids import find_order_ids, ids_in
from .own_words import own_words
from .phrase_gate import clause_starts
from .text_norm import fold, normalize

CLAUSE = re.compile(
    r"(?:[^.!?;\n]|\.(?=\d)|(?:(?<=\bno)|(?<=nr)|(?<=\bstr)|(?<=\bbest)|(?<=\bn))\.(?=[ º°-])"
    # A person's initial ("for Q. Zhang", "E. Kowalski") is no sentence end either.
    r"|(?<=(?<![\w.])(?-i:[A-Z]))\.(?= (?-i:[A-Z])[a-z])"
    r")+"
    r"[.!?;]*",
    re.IGNORECASE,
)
"""A clause: text up to a sentence end, a semicolon or a line break. A point inside an amount
or before a digit ("$129.00", "no.12355") or after "no", "Nr." (also at a word's end:
"bestelnr.", "Bestellnr."), "Str.", "n.º", or a person's initial ("Q. Zhang") is no
sentence end."""
BUT = re.compile(
    # Not after Portuguese "não quero / nunca / já": there "mais" is "more", not "but".
    r"(?:,\s*|(?<!quero)(?<!queria)(?<!n[aã]o)(?<!nunca)(?<!j[aá])(?<!tem)\s+)"
    r"(?=(?:but|mais|pero|ma|mas|however|though)\s)|(?:,|\s[-–—])\s*(?=(?:aber|maar)\s)"
    # "annuler la commande 12364 et aussi changer l'adresse de 12354": two asks, two orders.
    r"|\s+(?=(?:and also|et aussi|und auch|y tambien|y también|e anche|en ook|e tambem"
    r"|e também)\s)"
    # "Mein Nachbar hat ... bekommen, bei mir dagegen: ...": the customer's own case begins.
    r"|[,;:]\s*(?=(?:bei mir|ich dagegen|whereas|while mine|mine however|moi par contre"
    r"|par contre|en revanche|en cambio|a mi en cambio|invece|io invece|bij mij|ik daarentegen"
    r"|ja eu|já eu|por outro lado)\b)",
    re.IGNORECASE,
)
"""Where a clause turns ("…, but my own order…"): each side is read on its own. German
"aber" and Dutch "maar" turn a clause only after a comma or a dash: without one they are mostly
particles ("die hab ich aber nie aufgegeben", "im Paket waren aber Badelatschen")."""

_NEGATION_FILLER = (
    r"(?:want|wanna|need|wish|like|to|a|any|the|it|this|that|my|me|please|pls|have|going|plan"
    r"|planning|be|ask|asking|for|request|requesting|longer|anymore|so|you|we|i|je|veux|pas"
    r"|plus|la|le|les|l'|ich|will|moechte|bitte|es|sie|die|den|quiero|hace|falta|necesito"
    r"|deseo|lo|los|me|mi|voglio|di|serve|piu|wil|het|hem|hoeft|te|quero|o|os|precisa|mais"
    r"|more|nada|rien|un|une|einen|eine|kein|keine|una|uno|um|uma|een|or|nor|and|either|even|really"
    r"|actually|just|go|ahead|with|proceed|cancel|cancelling|refund|return|il|el|der|das|de|het|o"
    r"|demande|demandons|any|een|um|cherche|faire|busco|cerco|suche|looking|seeking|after"
    r"|expecting|interested|in|asking|about|bothered|fussed|asked|requested|vos|lhe|lhes|peco"
    r"|pedi|pedimos)"
)
NEGATED_BEFORE = re.compile(
    r"(?<![\w])(?:don'?t|dont|do not|doesn'?t|does not|did not|didn'?t|won'?t|no need|not|never"
    r"|no longer|without|ne|n'|pas besoin|pas la peine|inutile|nicht|kein|keine|no hace falta"
    r"|no|non|niet|geen|hoeft niet|nao|nem|rien|nada|niente|nichts|niets|nothing"
    # "Bitte auf keinen Fall stornieren": a negation said emphatically, in each language.
    r"|auf keinen fall|keinesfalls|bloss nicht|unter keinen umstaenden|en aucun cas|surtout pas"
    r"|de ninguna manera|de ningun modo|bajo ningun concepto|en ningun caso|in nessun caso"
    r"|per nessun motivo|assolutamente non|in geen geval|absoluut niet|zeker niet"
    r"|de jeito nenhum|de forma alguma|de modo algum|em caso algum|under no circumstances"
    r"|by no means|absolutely not|definitely not|weder|neither|nor)"
    rf"(?:\s+{_NEGATION_FILLER}|\s*(?:d'|l'))*\s*$"
    # The second half of "weder stornieren noch Geld zurück", "nem cancelar nem reembolso".
    r"|(?<![\w])(?:weder\b[^.?!]{0,40}\bnoch|nem\b[^.?!]{0,40}\bnem|ni\b[^.?!]{0,40}\bni"
    r"|ne\b[^.?!]{0,40}\bne|neither\b[^.?!]{0,40}\bnor)"
    rf"(?:\s+{_NEGATION_FILLER}|\s*(?:d'|l'))*\s*$"
    r"|(?<![\w])(?:(?:don'?t|do not|no|not) (?:need|want|asking for|after)|ne (?:demande|veux)"
    r" pas|non (?:voglio|chiedo)|no (?:quiero|pido|necesito)|(?:will|moechte|brauche) kein\w*"
    r"|(?:wil|hoef) geen|nao (?:quero|preciso|peco))\b"
    # The scope ends at a dash or a fresh request of the customer's own ("I don't want to
    # return anything - I want to cancel it", "je ne veux pas de remboursement, je veux...").
    r"(?:(?!\s[-–—]\s|\b(?:i|je|ich|yo|io|ik|eu)\s+(?:\w+\s+)?(?:want|need|would|veux|voudrais"
    r"|will|moechte|quiero|voglio|wil|quero)\b)[^.,;!?]){0,40}$"
)
"""A negation cue right before an intent's phrase, with only small words between."""
NO_LONGER = re.compile(
    r"\b(?:mais|anymore|any more|no longer|nicht mehr|plus|ya no|piu|niet meer)\b"
)
"""'No longer' (normalised): "não quero mais cancelar" calls off a cancellation under way, so it
keeps the order, where "I don't want to cancel" only says what is not asked."""
NOT_WANTING = re.compile(
    r"(?<![\w])(?:(?:don'?t|do not|not) (?:want|need|wish|asking|ask|mean)"
    r"|(?:never|didn'?t|did not) (?:ask|asked|request|requested|want|wanted)"
    r"|no (?:quiero|quero|deseo|pido)"
    r"|nao (?:quero|pe[cç]o)|non (?:voglio|chiedo)|(?:ne )?(?:veux|demande) pas|will (?:\w+ )?nicht"
    r"|ik wil (?:\w+ )?niet|(?:will|moechte|mochte) (?:\w+ )?weder|(?:quero|queria) nem"
    r"|(?:quiero|queria) ni|(?:want|need) neither)(?![\w])"
)
""""I don't want to cancel" says what the customer does not ask for; only a cancellation that
was under way ("please don't cancel", "no need to cancel") makes a negation keeping the order."""
NEGATED_INSIDE = re.compile(
    r"\b(?:hoef\w*|hoeven) (?:ik |je |we |u )?(?:het |dat )?niet\b|\bniet (?:terug|nodig)\b"
    r"|\bbrauche? (?:ich )?(?:\w+ )?nicht\b|\bno need\b|\bdon'?t need\b|\bpas besoin\b"
)
"""A negation inside a phrase that spans a clause ("het geld *hoef ik niet* terug")."""
CONDITION_BEFORE = re.compile(
    r"\b(?:if|unless|wenn|falls|si|se|als|indien|tenzij|caso)\s+(?:\w+\s+){0,2}$"
)
"""A condition opening right before a negation cue: "if I don't get ..." threatens, it does
not decline."""
FRESH_QUESTION = re.compile(r"(?:can|could|will|would|may)\s+(?:you|this|it|that|u|i|we)\b")
"""A phrase that opens with a question of its own."""
_NOT_A_CONJUNCTION = r"(?!(?:weil|da|denn|dass|wenn|omdat|want|dat|als|parce|car|que|quand)\b)"
NEGATED_AFTER = re.compile(rf"^\w*(?:\s+{_NOT_A_CONJUNCTION}[\w#]+){{0,4}}?\s+(?:nicht|niet|pas)\b")
"""A negation right after the verb ("stornieren Sie nicht", "annuleer hem niet")."""

ASKS = re.compile(
    r"\?|(?<![\w])(?:please|pls|plz|can you|could you|can i|could i|would you|will you|i want"
    # "Just need to know what I paid": a request with no "I" ("wondering", "want to know" ask
    # about a purchase not yet made too often: a question there is read as it stands).
    r"|(?:just |really |i )?need to know"
    r"|i need|i'?d like|i would like|i wish|i demand|i expect|help (?:me|us)|need help"
    r"|(?:can|could) you help|how (?:do|can|long|much)"
    r"|what (?:is|are|do|can|should)|when (?:will|can|do)|why|is it possible|let me know"
    r"|kindly|asap|urgent"
    r"|pourriez|pouvez|pourrais|je voudrais|je veux|j'aimerais|merci de|svp|s'il vous plait"
    r"|comment|pourquoi|est-ce que|quand"
    r"|koennen sie|koenntet|ich moechte|ich will|ich haette gern|bitte|wie (?:kann|lange|viel)"
    r"|warum|wann|ich brauche"
    r"|puede|pueden|podrian|podria|quiero|quisiera|necesito|por favor|como|cuando|por que"
    # Italian "come" (how), not English "come through", "come back", "did come."
    r"|potete|potreste|puo|vorrei|voglio|per favore|quando|perche|mi serve"
    r"|come(?!\s*(?:[.!,;)]|$)|\s+(?:through|back|in|out|with|up|on|off|to|from|and|as|here"
    r"|home|across|over|round|around|along|by|apart|loose|today|yesterday|tomorrow|soon|again"
    r"|at|the|a|my|your|it|in time|quickly)\b)"
    r"|kunt u|kun je|kunnen jullie|ik wil|ik zou graag|graag|alstublieft|alsjeblieft|hoe|wanneer"
    r"|waarom|ik heb .{0,20} nodig"
    r"|podem|poderiam|pode|gostaria|quero|preciso|por favor|como|quando|porque)(?![\w])"
)
"""A clause that asks for something (a question, a request), in the seven languages."""
CLOSE_THE_TICKET = re.compile(
    r"(?<![\w])(?:(?:you )?(?:can|may|could) (?:now )?close (?:the|this|my) (?:ticket|case|request)"
    r"|(?:pode|podem) (?:ja )?(?:fechar|encerrar|arquivar)"
    r"|(?:vous pouvez|tu peux|pouvez-vous) (?:\w+ )?(?:fermer|clore|cloturer)"
    r"|(?:koennt|konnt|koennen|konnen|kannst|duerft|durft) (?:\w+ ){0,3}(?:schliessen|zumachen)"
    r"|(?:pueden|puede|podeis) (?:ya )?(?:cerrar|archivar)"
    r"|(?:potete|puoi|puo) (?:\w+ )?(?:chiudere|archiviare)"
    r"|(?:mag|mogen|kunnen|kun je|kunt u) (?:\w+ ){0,2}(?:sluiten|dicht))(?![\w])"
)
"""Asking to close the ticket: the thanks it comes with is no question (acknowledgement)."""
COURTESY = re.compile(
    r"^\W*(?:hi|hello|hey|dear\b.*|good (?:morning|afternoon|evening)|greetings|hiya"
    r"|thanks?(?: you)?(?: (?:so much|a lot|in advance|for (?:your|the) help))?|cheers"
    r"|(?:kind |best )?regards|please help(?: me)?|help|(?:any )?help (?:please|appreciated)"
    r"|i hope you(?:'re| are) (?:well|doing well)|hope you(?:'re| are) well|urgent|asap"
    r"|bonjour|bonsoir|salut|madame|monsieur|merci(?: d'avance| beaucoup)?|cordialement"
    r"|hallo|guten (?:tag|morgen|abend)|sehr geehrte.*|liebe.*|danke(?: schoen| im voraus)?"
    r"|hola|buen(?:os|as) (?:dias|tardes|noches)|estimad[oa]s?.*|gracias(?: de antemano)?"
    r"|ciao|buongiorno|buonasera|salve|gentil[ei].*|grazie(?: mille| in anticipo)?"
    r"|hoi|goedemiddag|goedemorgen|beste.*|geachte.*|bedankt|dank ?u(?: wel)?"
    r"|ola|bom dia|boa (?:tarde|noite)|prezad[oa]s?.*|car[oa]s?.*|obrigad[oa]"
    # A greeting asked as a question ("Oi, tudo bem?", "ça va ?"): no request.
    r"|(?:(?:oi|ola|hi|hey|hello|hola|ciao|salut|hallo|hoi|bonjour)\W+(?:(?:gente|pessoal"
    r"|galera|team|guys|everyone|all|equipe|tutti|ragazzi|chicos|amigos|les gars|leute|jongens"
    r"|allemaal)\W+)?)?(?:tudo bem|tudo bom"
    r"|how are you(?: doing)?|how'?s it going|que tal|como estas|come va|come state|ca va"
    r"|comment allez-vous|wie geht'?s(?: euch| ihnen)?|hoe gaat het(?: met jullie)?)"
    # An offer of photos ("Envio fotografias se for preciso") or of a gift to come ("Je
    # voudrais en offrir une"): context, no request.
    r"|(?:\w+\s){0,4}(?:photos?|pictures?|fotos?|fotografias|bilder|immagini|afbeeldingen)"
    r"(?:\s\w+){0,5}"
    # A deadline the customer needs the item by ("Ich brauche den Rucksack nächste Woche").
    r"|(?:i need (?:it|them|the \w+)|ich brauche (?:ihn|sie|es|den \w+|die \w+|das \w+)"
    r"|j'en ai besoin|lo necesito|la necesito|ne ho bisogno|ik heb (?:het|hem|ze) nodig"
    r"|preciso (?:dele|dela|disso)) (?:\w+ ){0,3}(?:by|until|for|bis|naechste\w*|next|pour|para"
    r"|per|voor|antes|avant|vor|fuer|zum)\b.*"
    r"|(?:je voudrais|ich moechte|i'?d like to|quero|quiero|vorrei|ik wil) (?:en |eine?n? |one "
    r"|uma? |una? |ne )?(?:offrir|schenken|verschenken|oferecer|regalar|regalare)\b.*)\W*$"
)
"""A clause that is only a greeting, a thank-you or a plea for help: nothing to account for."""
UNTOLD_PROBLEM = 0.7
"""The confidence factor of a reading that leaves a stated problem unread (below
graph/abstain.py's REVIEW_BELOW): on the fresh sets scored before they were read (dev_d, dev_e,
h26, dev_f), answers that went out with no human and missed an intent had such a clause.
Only a problem the learned model reads as another intent counts (`Understanding.untold`)."""
COMPANIONS = frozenset({"acknowledgement", "refund_request", "callback"})
"""Intents that often come with another and are no second request of their own ("charged
twice, please refund it", "call me about my late parcel")."""
ASKED_BY_NATURE = frozenset({"goodwill_credit", "invoice", "address_change"})
"""Intents that are always something asked for now, never a past problem a thank-you looks
back on ("a voucher is the least you could do. It did turn up in the end")."""
PROBLEM = re.compile(
    r"(?<![\w])(?:broke|broken|damag|crack|faulty|defect|wrong|missing|never|still|again|late|"
    r"lost|charged|charge|refund|cancel|return|problem|issue|error|fail|stopp|won'?t|can'?t|"
    r"doesn'?t|didn'?t|isn'?t|wasn'?t|not\b|no longer|complain|disappoint|unhappy|"
    r"casse|abime|pas\b|jamais|toujours|encore|rembours|annul|probleme|erreur|"
    r"kaputt|defekt|falsch|nicht|kein|noch|immer|erstatt|stornier|problem|fehler|"
    r"roto|rota|danad|nunca|todavia|aun|reembols|cancel|problema|error|"
    r"rott|danneggi|non\b|mai\b|ancora|rimbors|annull|problema|errore|"
    r"kapot|beschadig|niet\b|nooit|nog|terugbetal|annuleer|probleem|fout|"
    r"partid|quebrad|nao\b|nunca|ainda|reembols|cancel|problema|erro)"
)
"""A clause that states a problem ("the zip was broken when it came"): a question that states
one is about the customer's order (rules.is_about_an_order). Measured on dev_b, counting such
a clause as unaccounted when no intent reads it cost status on 4 in 70 tickets and caught no
wrong answer, so only asking clauses are accounted for."""
THANKS = re.compile(
    r"(?<![\w])(?:thanks|thank you|thx|cheers|merci|danke|gracias|grazie|bedankt|dank u|dank je"
    r"|obrigad[oa]|valeu)(?![\w])"
)
"""A thank-you: a ticket of only thanks and statements asks nothing (acknowledgement)."""
THANKED_FOR = re.compile(
    r"(?<![\w])(?:thanks|thank you|cheers|merci|danke|gracias|grazie|bedankt|obrigad[oa]|valeu)"
    r"\s+(?:so much\s+|a lot\s+|again\s+|very much\s+|vielmals\s+|beaucoup\s+)?"
    r"(?:for|voor|fuer|por|per|pour|pelo|pela)\s+(?:\w+\s+){0,2}(?:refund|reembolso|estorno"
    r"|remboursement|erstattung|rueckerstattung|rimborso|terugbetaling|sorting|fixing|resolving"
    r"|refunding|taking care|handling|dealing|correcting|cancelling|canceling|processing|sorted"
    r"|fixed|resolved|putting right|reimbursing)\b"
)
"""Thanks for something already done ("Thanks for sorting out the double charge on 12333!"):
what the clause names is settled, not asked again."""
FOLLOW_UP_WORDS = frozenset(
    """a an the it its this that these those them they there here me my mine we our us you your i
    im ive id is are was were be been being am do does did done doing can could would will should
    shall may might must please pls plz kindly just so and or but if then also too still again
    now soon today asap what whats why how when where who which whether any anything something
    someone somebody anyone else going on happen happened happening next now sort sorted sorting
    out fix fixed fixing check checked checking look looking looked into help helped know let
    tell advise update updates get got getting give do deal dealt handle handled resolve resolved
    solve solved see need needed want like wanted possible way options option thing things else
    covered cover anything wrong ok okay hey hi hello thanks thank regards cheers about with for
    of in on at to from by up over off all some one side part mean thoughts idea ideas answer
    reply back soon quick quickly urgent works work time normal possible put right correct
    corrected taken care handled dealt
    duplicate charge charges charged refund refunded order orders parcel package item items
    delivery payment money card account purchase problem issue
    je j tu il elle on nous vous ils me moi te le la les l un une des du de d ce c ca cela est
    sont suis etes ai as avez a y en que qu quoi qui comment pourquoi quand ou est-ce faire fais
    fait faut dois doit devez pouvez pouvoir peut peux pourriez pourrait voulez veux propose
    proposez proposer regler resoudre solution normal possible svp merci alors donc et ou mais
    ich du er sie es wir ihr mir mich dir ihnen uns das der die den dem ein eine einen was wie
    warum wann wo ist sind bin bist kann koennen koennten konnen soll sollen muss muessen machen
    mache tun jetzt nun bitte danke und oder aber so denn noch mal loesen helfen geht normal
    yo tu el ella usted ustedes nosotros me te lo la los las le les un una que como por porque
    cuando donde es son esta estan estoy hago hacer hacemos puede pueden podeis podemos debo
    tengo tiene solucionamos solucionar arreglar revisar revisais ayudar ahora y o pero entonces
    io tu lui lei noi voi mi ti ci lo la li le un una che cosa come perche quando dove e sono
    devo faccio fare si puo potete possiamo risolviamo risolvere aiutare ora adesso allora ma o
    ik jij je u hij zij wij we jullie mij me het de een wat hoe waarom wanneer waar is zijn ben
    kan kunt kunnen moet moeten doe doen nu dan en of maar lossen op oplossen helpen dit dat
    eu voce voces ele ela nos me te o a os as um uma que como porque quando onde e sao esta estou
    faco fazer pode podem posso devo resolvo resolver resolvemos ajudar agora entao mas ou fica
    isso isto""".split()
)
"""Words a follow-up question is made of ("What happened?", "Can you sort it out?", "Was the
duplicate put right?"): one that has (almost) nothing else, besides words the ticket's other
clauses already used, asks about the problem the ticket already stated."""
FOLLOW_UP_MORE = frozenset(
    """chance find finding found already yet done processed process confirm confirmed through
    before after ships shipping sent send resend possible time long take takes taking last
    ever anyway meanwhile alright fine good right revert earliest needful kindly asap soonest
    problem problema probleem probleme comigo conmigo los kombinieren combine combiner combinar
    combinare combineren
    deja encore toujours bien bon bonne cela ceci temps combien ca y a-t-il est-il peux-tu
    quoi faire rien chose quelque
    schon bereits noch immer mittlerweile inzwischen etwas nichts woran wieso weshalb wieviel
    wie lange dran liegt liegen gut okay klar denn doch eigentlich selbst selber zeit
    ya todavia aun algo nada bien vale tiempo cuanto cuanta alguna alguno hay ello eso esto
    ainda ja algo alguma algum nada bem tempo quanto quanta da dar tem ha isso aquilo cade
    gia ancora qualcosa niente nulla bene tempo quanto quanta c'e cosa possibile va
    al nog steeds inmiddels iets niets goed tijd hoelang lang wel toch zelf ligt liggen
    mogelijk gaat gaan ging wordt worden werd wird werden wurde geht gehen va vont aller vas van
    ir vai vao vanno andare foi foram era fue fueron war wurde fut ete stato geweest coisa chose
    ding not niet nicht pas non nao keer vez fois volta weer zodat damit afin
    ersatz replacement remplacement reemplazo sostituzione vervanging substituicao troca
    exchange umtausch cambio haette haetten gern gerne wuerde wuerden moechte moechten
    nochmal nochmals erneut wieder opnieuw novamente nuovo nuevo nouveau""".split()
)
"""More words a follow-up is made of, in the seven languages: time ("already", "still",
"how long"), whether ("is it possible", "is there still time"), "something", "anything"."""
FOLLOW_UP_STEMS = tuple(
    """resol risol regl regel erledig geklaer klaer bearbeit verwerk process processad procesad
    elabor trait tratad confirm bestaetig bevestig conferm dauer duur dur tard demor possib
    posib moeglich mogelijk send schick stuur envi invi envoy mand ship dispatch happen passier
    gebeur pasa succed acontec arrang rechtgez corrig korrig corrett updat aktualis actualiz
    atualiz aggiorn bijgewerk nodig brauch necesit precis serv besoin need fix sort handl check
    pruef controll verific revis kijk nachsch nasch machen doen fazer hacer fare faire tun helf
    help ajud ayud aiut ersatz remplac replac reemplaz sostitu vervang substitu separat separad
    separe apart expir verfall verfaell caduc scad vervall venc valid gueltig""".split()
)
"""Word beginnings of the verbs a follow-up asks with, in any of their forms: solved,
processed, confirmed, how long it takes, whether it is possible, sent, happening, fixed."""
MAX_FOLLOW_UP_CONTENT = 1
"""At most this many other words, and an asking clause is a follow-up on the stated problem."""
_WORDS = re.compile(r"[^\W\d_]+")
_PERSON = (
    r"(?:friend|neighbou?r|colleague|sister|brother|mum|mom|mother|father|dad|wife|husband"
    r"|partner|son|daughter|cousin|flatmate|roommate|aunt|uncle|boss|ami|amie|voisin|voisine"
    r"|collegue|soeur|frere|freund|freundin|nachbar|nachbarin|kollege|kollegin|amig[oa]"
    r"|vecin[oa]|amic[oa]|vicin[oa]|collega|vriend|vriendin|buurman|buurvrouw|vizinh[oa]"
    r"|colega)"
)
_PLACE = (
    r"(?:place|house|home|flat|apartment|address|wedding|birthday|party|work|office|shop"
    r"|school)\b"
)
ON_BEHALF = re.compile(
    r"(?<![\w])(?:on (?:his|her|their|my \w+'?s) behalf|on behalf of|for (?:him|her|them),? please"
    r"|look into it for (?:him|her|them)|im namen (?:meines|meiner|von)|de la part de"
    r"|en nombre de|a nome (?:di|del|della)|namens|em nome d[aeo])(?![\w])"
)
"""A customer writing for somebody else ("on behalf of my dad"): that person's order is the
subject asked about, not a mention in passing (LABELS.md: unless the customer asks us to act
on it)."""
OTHER_PERSON = re.compile(
    # "my sister's order", never "my sister's place" (where the customer's own parcel goes).
    rf"(?<![\w])(?:(?:my|a|our) {_PERSON}(?:'s(?! {_PLACE})"
    rf"|(?: (?:also|too|just|recently|already|actually))? (?:bought|ordered|purchased|got"
    rf"|received|has|had|placed))|someone else'?s"
    rf"|another customer'?s|(?:her|his|their) (?:own )?order"
    rf"|(?:refunded|charged|billed|sent|shipped|cancell?ed|delivered to) (?:her|him)\b"
    rf"|commande de (?:mon|ma|mes) {_PERSON}|(?:mon|ma) {_PERSON} a (?:commande|achete|recu)"
    rf"|(?:mein|meine) {_PERSON} hat|(?:bestellung|paket) (?:meines|meiner) {_PERSON}"
    rf"|(?:pedido|compra|paquete) de (?:mi|una?) {_PERSON}|mi {_PERSON} (?:compro|pidio|recibio)"
    rf"|(?:ordine|pacco) (?:del mio|della mia|di un[ao]?) {_PERSON}|(?:il mio|la mia) {_PERSON} ha"
    rf"|(?:bestelling|pakket) van (?:mijn|een) {_PERSON}|(?:mijn|een) {_PERSON} (?:had|heeft)"
    rf"|(?:pedido|encomenda) (?:do meu|da minha|de um[a]?) {_PERSON}"
    rf"|(?:o meu|a minha|meu|minha) {_PERSON} (?:comprou|encomendou|recebeu))(?![\w])"
)
"""A clause about somebody else's order: its id is not this customer's subject."""

_PACKAGING = (
    r"(?:box|parcel|package|packaging|carton|karton|paket|verpackung|colis|emballage|caja"
    r"|paquete|embalaje|scatola|pacco|imballaggio|doos|pakket|verpakking|caixa|pacote"
    r"|embalagem)"
)
_PACKAGING_HARM = (
    r"(?:split|crushed|dented|damaged|torn|ripped|smashed|squashed|caved|open|enfonce|ecrase"
    r"|abime|dechire|eingedrueckt|beschaedigt|aufgerissen|eingerissen|zerdrueckt|kaputt"
    r"|aplastad|rot[oa]|danad|abiert|rovinat|ammaccat|schiacciat|rott|aperta|gedeukt"
    r"|beschadigd|kapot|gescheurd|open|amassad|danificad|rasgad|estragad|abert)\w*"
)
TRANSIT = re.compile(
    rf"\b{_PACKAGING}\b[^.!?;\n]{{0,40}}\b{_PACKAGING_HARM}"
    rf"|\b{_PACKAGING_HARM}\b[^.!?;\n]{{0,15}}\b{_PACKAGING}\b"
    r"|\barrived (?:\w+ )?(?:cracked|broken|smashed|dented|leaking|shattered|in pieces)\b"
    r"|\b(?:kam|ist|war) (?:\w+ ){0,2}(?:zerquetscht|zerdrueckt|zerdeppert|eingedrueckt|zerbrochen"
    r"|kaputt) an\b"
    r"|\b(?:chegou|veio) (?:\w+ ){0,2}(?:amassad|esmagad|partid|quebrad|destruid)\w*"
    r"|\b(?:kapot|beschadigd|gebroken|stuk) (?:\w+ )?aangekomen\b"
    r"|\baangekomen (?:\w+ )?(?:kapot|beschadigd|stuk)\b"
    # "Dead on arrival" is a fault, not harm on the way.
    r"|\b(?:in transit|during (?:shipping|delivery|transit)|(?<!dead )on arrival|(?:courier|driver)"
    r" (?:dropped|threw)|in the (?:van|post|mail|lorry|truck)|beim (?:transport|versand)"
    r"|bei (?:der )?ankunft|pendant le transport"
    r"|a l'arrivee|durante (?:el|il) (?:envio|transporte|trasporto)|all'arrivo|al llegar"
    r"|tijdens (?:het )?(?:transport|verzenden)|bij (?:aankomst|levering)|no transporte"
    r"|na (?:chegada|entrega))\b"
)
"""Words that the harm happened on the way (a dented box, "on arrival", "beim Transport"):
then the item arrived damaged, even where a word of a fault ("it leaks", "kapot") is read too."""
WRONG_ACROSS = re.compile(
    r"\bbestellt,? (?:im paket|in der lieferung|geliefert|bekommen|erhalten|geschickt)"
    r"[^.;!?]{0,25}\b(?:aber|stattdessen)\b"
    r"|(?:(?:you|they|u) (?:sent|shipped|gave|delivered) (?:me |us )?|(?:i|we) (?:received|got) )"
    r"(?:a|an|the|some) [^.?!;]{1,40}[.;!]+ *(?:but |and |yet )?(?:i|we) (?:had )?(?:ordered"
    r"|bought|paid for|purchased)\b"
    r"|(?:ordered|expected)\s*:[^.;!?\n]{1,60}[.;!\n]+\s*(?:received|got|arrived|came)\s*:"
    r"|(?:vous m'avez|on m'a) (?:envoye|livre|expedie) [^.;!?]{1,40}[.;!]+ *(?:or |mais )?"
    r"(?:j'avais|j'ai) commande"
    r"|me (?:enviaron|mandaron|han enviado|han mandado|llego) [^.;!?]{1,40}[.;!]+ *(?:pero )?"
    r"(?:yo )?(?:pedi|habia pedido|compre)\b"
    r"|(?:me )?(?:enviaram|mandaram) [^.;!?]{1,40}[.;!]+ *(?:mas )?(?:eu )?(?:pedi|encomendei"
    r"|tinha encomendado|comprei)\b"
    r"|mi (?:avete|hanno) (?:mandato|spedito|inviato) [^.;!?]{1,40}[.;!]+ *(?:ma )?(?:io )?"
    r"(?:avevo ordinato|ho ordinato|avevo comprato)"
)
"""Something else came, said across two sentences: "You sent me a raincoat. I ordered a
camera", "Expected: a throw. Received: a raincoat"."""


REFUND_MONEY = re.compile(
    r"\b(?:refund|reimburs|rembours|argent|erstatt|rueckerstatt|gutschrift|geld|reembols"
    r"|dinero|rimbors|soldi|denaro|terugbetal|terugstort|estorno|dinheiro|money|funds)"
)
"""The customer's money coming back, in the seven languages (normalised text)."""
PARCEL = re.compile(
    r"\b(?:parcel|package|packet|delivery|deliver|courier|shipment|shipping|arriv|colis"
    r"|livr|paquet|paket|liefer|sendung|zugestellt|pakket|lever|bezorg|paquete|envio|entreg"
    r"|llega|pacco|consegn|spedizion|encomenda chegou|chegou|item|order has not|tracking"
    r"|suivi|sendungsverfolgung|seguimiento|rastreio|tracciamento)"
)
"""Words of a parcel on its way (normalised text)."""
SENT_BACK = re.compile(
    r"\b(?:(?:posted|sent|shipped|mailed|dropped) (?:\w+ ){0,3}back|returned (?:it|them|the)"
    r"|(?:zurueck|retour)(?:geschickt|gesandt|gesendet)|zurueckgeschickt|zurueckgesandt"
    r"|renvoye|retourne|devuelto|devolvi|he devuelto|reenviado|restituit|rispedit|reso"
    r"|teruggestuurd|geretourneerd|teruggezonden|enviei de volta|reenviei)"
)
"""The customer saying they sent an item back (normalised text)."""


TAKEN_OVER = re.compile(
    r"\b(?:hack\w*|gehack\w*|pirat\w*|compromis\w*|kompromittiert|taken over|uebernommen"
    r"|overgenomen|fraud\w*|betrug\w*|frode)"
)
"""Words of an account taken over or a fraud (folded text): an order the customer disowns
there was placed by somebody else."""
PURCHASE_PLAN = re.compile(
    r"^\W*(?:but |so |and )?i(?: am|'m| was| would| 'd|'d)?\s*(?:want|wanna|would like|like"
    r"|going|planning|plan|thinking of|thinking about|hoping|about|looking)\s+(?:to\s+)?"
    r"(?:buy|buying|get|getting|order|ordering|purchase|purchasing|gift|give|giving)\s+"
    r"(?:one|a|an|some|it|them|this|these|two|three|several|\w+ of (?:your|these|those|them))\b"
)
"""A plan to buy, said as the reason for a general question ("I want to buy one for my
nephew"): context, not a request of its own."""
PAST_REFUND = re.compile(
    r"\b(?:already|previously) (?:\w+ ){0,2}(?:refunded|gave me (?:\w+ ){0,2}(?:money|refund)"
    r"|issued (?:a |my )?refund|paid (?:me )?back)|\bdeja (?:\w+ )?rembours"
    r"|\b(?:bereits|schon|inzwischen|mittlerweile) (?:\w+ ){0,3}(?:zurueck|rueck)?erstattet"
    r"|\bya (?:me )?(?:\w+ )?(?:reembolsa|devolvi)"
    r"|\bgia (?:\w+ )?rimborsat|\bal (?:\w+ )?terugbetaald"
    r"|\bja (?:me )?(?:\w+ )?(?:reembols|estorn)"
    # "o dinheiro já caiu", "o reembolso já caiu no cartão": the money is back.
    r"|\b(?:dinheiro|reembolso|estorno|valor) (?:\w+ ){0,2}(?:ja )?caiu\b"
    r"|\bja caiu (?:no|na) (?:cartao|conta)"
    # "the refund for 12348 landed in my account this morning": told as done, with a when;
    # "has the refund landed yet?" and "it has not come through today" stay asked.
    r"|\b(?:refund|money|reimbursement)(?:\s+(?!not\b|never\b|yet\b|\w+nt\b)\w+){0,4}"
    r"\s+(?:landed|came through|went through|showed up|appeared|came back|arrived)"
    r"(?:\s+(?!not\b|never\b|yet\b)\w+){0,4}\s+(?:this morning|yesterday|today|last night"
    r"|last week|earlier|already)\b"
)
"""A refund the customer says was already made ("you already gave me some money back for
the scratch", "mi avete già rimborsato una parte") (normalised text)."""


ARRIVED_AT_LAST = re.compile(
    r"\b(?:finally|at last|eventually) (?:\w+ ){0,3}(?:came|arrived|turned up|showed up"
    r"|got here)|\b(?:came|arrived|turned up|showed up|got here|is here) (?:\w+ ){0,3}"
    r"(?:at last|finally|in the end)"
    r"|\b(?:enfin|finalement) (?:\w+ ){0,3}(?:arrive|recu|livre)"
    r"|\b(?:endlich|doch noch|schliesslich) (?:\w+ ){0,3}(?:angekommen|gekommen|da|geliefert"
    r"|eingetroffen)"
    r"|\b(?:por fin|al fin|finalmente) (?:\w+ ){0,3}(?:llego|llegaron|recibi|ha llegado)"
    r"|\b(?:finalmente|alla fine) (?:\w+ ){0,3}(?:arrivat|consegnat|ricevut)"
    r"|\b(?:eindelijk|toch nog|uiteindelijk) (?:\w+ ){0,3}(?:aangekomen|gekomen|binnen|geleverd"
    r"|bezorgd|er)"
    r"|\b(?:finalmente|enfim|por fim) (?:\w+ ){0,3}(?:chegou|chegaram|recebi)"
)
"""A parcel that arrived at last (normalised text): its lateness is over, the story of the
ticket ("the camera finally came after all that drama with the delays")."""
PUT_RIGHT = re.compile(
    r"\b(?:already|finally|now|glad|good|fijn dat|al|inmiddels|schon|bereits|inzwischen|endlich"
    r"|entretanto|in the end"
    r"|deja|enfin|ya|por fin|gia|finalmente|ja)\b[^.?!]{0,60}\b(?:refunded|reimbursed|fixed|sorted"
    r"|put right|resolved|reversed|teruggestort|terugbetaald|erstattet|zurueckerstattet"
    r"|rueckerstattet|zurueckgebucht|rembourse|corrigid[ao]"
    r"|corrige|devuelto|devolvieron|reembolsad|rimborsat|stornat|estornad|resolvid)"
    # "You did fix the double charge in the end"
    r"|\b(?:did|have|had|finally) (?:\w+ )?(?:fix|sort|refund|revers|correct)\w*\b[^.?!]{0,60}"
    r"\b(?:in the end|eventually|at last|now)\b"
)
"""A double charge the customer says was already put right (normalised text)."""


def _past_troubles(found: list[str], norm: str, asks: bool) -> list[str]:
    """What a clause tells as over, and does not ask about: a parcel that came at last is no
    late delivery, a double charge already put right no double charge (the ticket asks for
    something else: "the double charge was refunded, but I want a voucher for the hassle"),
    a refund already made no refund request ("… but now it's actually not working"; a clause
    that asks about it, "already refunded half, where's the rest?", still is one)."""
    over = set()
    if "refund_request" in found and not asks and PAST_REFUND.search(norm):
        over.add("refund_request")
    if "late_delivery" in found and ARRIVED_AT_LAST.search(norm):
        over.add("late_delivery")
    if "duplicate_charge" in found and not asks and PUT_RIGHT.search(norm):
        over.add("duplicate_charge")
    return [name for name in found if name not in over]


NOT_SENT_YET = re.compile(
    r"\b(?:hasn'?t|has not|have not|haven'?t|isn'?t|is not|not|nao|ainda nao|noch nicht|nicht"
    r"|pas encore|pas|todavia no|aun no|no|non ancora|non|nog niet|niet)"
    r"(?: \w+){0,3} (?:shipped|dispatched|sent|posted|gone out|left|been (?:shipped|sent|posted"
    r"|dispatched)|expedid[oa]|enviad[oa]|despachad[oa]|saiu|versendet|verschickt|raus"
    r"|rausgegangen|expedie|envoyee?|partie?|enviado|salido|spedit[oa]|partit[oa]|verzonden"
    r"|verstuurd)\b"
)
"""A clause saying the order has not gone out yet ("it hasn't shipped yet, right?", "ainda
não foi expedida, certo?"), folded text."""
HOPED_OR_CHECKED = re.compile(
    r"\?|\b(?:right|correct|i hope|hopefully|i assume|i think|i believe|presumably|certo"
    r"|correto|nao e|espero|acho|oder|richtig|hoffe|hoffentlich|vermutlich|n'est-ce pas|j'espere"
    r"|je pense|verdad|espero|creo|vero|spero|credo|toch|hoop|denk)\b"
)
"""Around it: the customer hopes or checks it is so (the premise of cancelling in time)."""


def _not_sent_premise(found: list[str], norm: str, context: str) -> list[str]:
    """A late_delivery read only from "it has not shipped yet, right?" (or "cancel it, it has
    not shipped yet") in a ticket that asks to cancel: the customer hopes it has not gone out
    (so the cancellation is in time), and complains of no delay. A clause with a delay in it
    ("three weeks and still not shipped") keeps it."""
    cancelling = pattern(BY_NAME["cancellation"].phrases)
    if (
        "late_delivery" not in found
        or not NOT_SENT_YET.search(norm)
        # Hoped ("right?"), or said in the same breath as the cancellation ("cancel 12324,
        # it has not shipped yet"): why it is in time.
        or not (HOPED_OR_CHECKED.search(norm) or cancelling.search(norm))
        or LATE_SIGNS.search(norm)
        or not cancelling.search(context)
    ):
        return found
    return [name for name in found if name != "late_delivery"]


LATE_SIGNS = re.compile(
    r"\b(?:still|already|weeks?|days?|supposed|due|ages|forever|immer noch|schon|wochen|tage"
    r"|ainda nao chegou|semanas|dias|ja|toujours|semaines|jours|todavia no ha llegado|ancora"
    r"|settimane|giorni|nog steeds|weken|dagen)\b"
)
"""Words of a delay, which make "not shipped yet" a complaint, not a hope."""


FUTURE_PLAN = re.compile(
    r"\b(?:in the future|some ?day|one day|later on|(?:thinking|considering|planning) (?:of|about)"
    r"|no futuro|um dia|mais tarde|(?:estou|to|tou|ando) (?:a pensar|pensando) em?"
    r"|in zukunft|irgendwann|spaeter mal|a l'avenir|un jour|plus tard|en el futuro|algun dia"
    r"|mas adelante|(?:estoy|estaba) pensando en|in futuro|un giorno|piu avanti|sto pensando di"
    r"|in de toekomst|ooit|ik denk erover)\b"
)
"""A clause about what the customer may do some day ("estou a pensar devolver umas coisas no
futuro", "thinking of returning a few things in the future"): a plan, not a request."""
PLANNED_ONLY = frozenset({"return_request", "refund_request", "cancellation"})
"""What such a clause can plan without asking for it now."""


def _future_plans(found: list[str], norm: str, asks: bool) -> list[str]:
    """`found` less a return, refund or cancellation the customer only plans (`FUTURE_PLAN`)
    in a clause that asks for nothing."""
    if asks or not FUTURE_PLAN.search(norm):
        return found
    return [name for name in found if name not in PLANNED_ONLY]


TAKEN_BACK = re.compile(
    r"^\W*(?:no,? wait|wait,? no|actually,? no|never ?mind|scratch that|forget (?:that|it)\b"
    r"|nee,? wacht|laat maar|vergiss es|vergesst es|laissez tomber|non,? attendez|olvidalo"
    r"|mejor no\b|lascia(?:te)? stare|deixa pra la|esquece)"
)
"""A clause that opens by taking back the one before it (folded text)."""


def _lateness_of_money(found: list[str], norm: str, context: str) -> list[str]:
    """A late_delivery read where what has not arrived is the customer's money ("je n'ai
    toujours rien reçu pour le remboursement", "die Erstattung ist immer noch nicht auf meiner
    Karte", "when does the money come") or where the parcel on its way is the one the
    customer sent back, in a ticket about the refund: that is the refund's status
    (refund_request, LABELS.md decision 4), not a late parcel. The adjacent forms are
    `late_delivery`'s own `not_after`/`not_before`; this reads the whole clause."""
    if "late_delivery" not in found:
        return found
    money_late = REFUND_MONEY.search(norm) and not PARCEL.search(REFUND_MONEY.sub(" ", norm))
    return_on_its_way = SENT_BACK.search(norm) and REFUND_MONEY.search(context)
    if not (money_late or return_on_its_way):
        return found
    kept = [name for name in found if name != "late_delivery"]
    if money_late and "refund_request" not in kept:
        kept.append("refund_request")
    return kept


@dataclass(frozen=True)
class ClauseReading:
    """What one clause of the customer's own words says."""

    text: str
    """The clause as the customer wrote it."""
    intents: tuple[str, ...]
    """Intents its phrases express (negated ones left out)."""
    negated: tuple[str, ...]
    """Intents it mentions only to say the customer does not want them."""
    asks: bool
    """Whether it asks for something (a question or a request)."""


@dataclass(frozen=True)
class Understanding:
    """The whole reading of a ticket's own words."""

    own_text: str
    """The customer's own words (no quoted reply, forward or signature)."""
    clauses: tuple[ClauseReading, ...]
    """Each clause, in order."""
    intents: tuple[str, ...]
    """Every intent expressed, in table order; redundant readings dropped."""
    unaccounted: tuple[str, ...]
    """Clauses that ask for something no intent accounts for."""
    untold: tuple[str, ...] = ()
    """Clauses that state a problem ("refuses to power up", "never even turned it on") no
    intent accounts for, that ask nothing, and in which the learned model, reading the clause
    alone, reads an intent the ticket has not (`second_opinion.reads_another`): not a part to
    name, but a reading that may have missed a request, so a person checks it (`confidence`).
    Without the model's word, on dev_i (100 fresh English tickets, scored before reading) the
    rule sent 3 right answers to a person for a context ("I won't be home all week", "I
    returned it two weeks ago") and caught 1 wrong one; on train 24 and 1. With it: none and
    none, 1 and 0; the 3 wrong answers it still flags on dev_i ("charged $129.00 twice", "arrived
    with a crack") are those the model disagrees with anyway."""

    @property
    def confidence(self) -> float:
        """How sure the reading is: the share of asking clauses an intent accounts for (1.0
        when none asks). A reading of several requests is not marked down here: the learned
        model's agreement (second_opinion.py) already is, and where the model agreed with a
        reading of several, an extra 0.8 for them sent 19 of 937 train tickets (and 2 of 70 on
        dev_b) to a person for nothing while keeping one wrong answer out on train (a KB
        article, not the request), and none on dev, dev_b or dev_c."""
        asking = [c for c in self.clauses if c.asks and not COURTESY.match(fold(c.text))]
        if not asking:
            share = 1.0 if self.intents else 0.0
        else:
            share = 1.0 - len(self.unaccounted) / len(asking)
        return round(share * (UNTOLD_PROBLEM if self.untold else 1.0), 2)


def _negated(intent: Intent, clause: str, start: int, end: int) -> bool:
    if intent.not_after and pattern(intent.not_after).search(clause[:start]):
        return True
    if intent.not_before and pattern_at(intent.not_before).match(clause, end):
        return True
    if not intent.negatable:
        return False
    # A phrase that is itself a question ("... after all can this still be stopped") starts
    # a fresh request: a negation before it is not its own.
    asks_itself = FRESH_QUESTION.match(clause, start)
    cue = NEGATED_BEFORE.search(clause[:start])
    # "If I don't get my money back by Friday": a condition, the money is still asked for.
    if cue and CONDITION_BEFORE.search(clause[: cue.start()]):
        cue = None
    return bool(
        (cue and not asks_itself)
        or NEGATED_AFTER.match(clause[end - 1 :])
        or NEGATED_INSIDE.search(clause, start, end)
    )


def _only_past(intent: Intent, clause: str) -> bool:
    """True when every mention of the intent is one the customer already did ("I had
    already cancelled it"): no cancellation is asked, and none is being called off."""
    if not intent.not_after:
        return False
    before = pattern(intent.not_after)
    return all(before.search(clause[: m.start()]) for m in pattern(intent.phrases).finditer(clause))


def read_clause(text: str, context: str = "") -> ClauseReading:
    """The intents one clause expresses and whether it asks for something; `context` is the
    whole ticket, normalised (an intent's `only_with` phrases are looked for there)."""
    norm = normalize(text)
    starts = clause_starts(norm)
    found: list[str] = []
    negated: list[str] = []
    for intent in INTENTS:
        if not phrase_gate(intent.phrases).may_match(starts, norm):
            continue  # no phrase of it can begin here: not worth running its pattern
        if intent.only_with and not pattern(intent.only_with).search(context):
            continue
        if (
            intent.not_in_questions
            and ("?" in norm or ASKS.search(norm))
            and not CLOSE_THE_TICKET.search(norm)
        ):
            continue
        matches = list(pattern(intent.phrases).finditer(norm))
        if not matches:
            continue
        if all(_negated(intent, norm, m.start(), m.end()) for m in matches):
            negated.append(intent.name)
        else:
            found.append(intent.name)
    asks = bool(ASKS.search(norm))
    if "goodwill_credit" in found and "late_delivery" in found:
        # The delay a voucher is asked for ("für den Ärger mit der verspäteten Lieferung hätte
        # ich gern eine Gutschrift", "pelo atraso eu mereço um cupom") is its reason.
        found.remove("late_delivery")
    found = _past_troubles(_lateness_of_money(found, norm, context), norm, asks)
    found = _not_sent_premise(_future_plans(found, norm, asks), norm, context)
    if (
        "cancellation" in negated
        and "keep_order" not in found
        and (not NOT_WANTING.search(norm) or NO_LONGER.search(norm))
        and not _only_past(BY_NAME["cancellation"], norm)
    ):
        found.append("keep_order")  # "please don't go ahead with cancelling": keep it
    return ClauseReading(
        text=text.strip(),
        intents=tuple(found),
        negated=tuple(negated),
        asks=asks,
    )


def _resolve_redundant(
    found: list[str], apart: frozenset[tuple[str, str]] = frozenset()
) -> tuple[str, ...]:
    """The intents found, less those a more specific one makes redundant, unless the two are
    about different orders (`apart`: "cancel 12364; 12334 I keep, do not cancel it")."""
    return tuple(
        name
        for intent in INTENTS
        if (name := intent.name) in found
        and not any(other in found and (name, other) not in apart for other in BY_NAME[name].unless)
    )


def _apart(clauses: tuple[ClauseReading, ...], own_text: str) -> frozenset[tuple[str, str]]:
    """Pairs (intent, the intent that would make it redundant) read in clauses that name
    different orders: each is its own order's request."""
    ids: dict[str, set[str]] = {}
    own_ids: dict[str, set[str]] = {}  # named by an asking clause itself, not inherited
    last: list[str] = []
    # An id is told from a number by its sentence ("cancel 12374 but don't touch 12344": the
    # second clause alone has no order word), so the ticket's ids are found once, whole.
    in_ticket = find_order_ids(own_text)
    for clause in clauses:
        # A clause naming no order speaks of the last one named ("Ich hab 12334 storniert.
        # Vergesst das bitte").
        stated = ids_in(clause.text, in_ticket) or find_order_ids(clause.text)
        named = stated or last
        last = named
        for name in clause.intents:
            ids.setdefault(name, set()).update(named)
            own_ids.setdefault(name, set()).update(stated if clause.asks else ())
    return frozenset(
        (name, other)
        for name, own in ids.items()
        for other in BY_NAME[name].unless
        if own
        and (
            (ids.get(other) and not own & ids[other])
            # A subscription is no order: cancelling a named order beside it is its own ask.
            or (other == "subscription" and other in ids and not ids[other])
            # Nor are points: a question about them, in a clause naming no order, beside a
            # question naming its order ("has 12321 been sent out yet? And do points expire?").
            or (
                not BY_NAME[other].order_bound
                and other in own_ids
                and not own_ids[other]
                and bool(own_ids.get(name))
            )
        )
    )


def understand(request: str, *, mentions_order: re.Pattern[str] | None = None) -> Understanding:
    """Read a ticket (see the module docstring); `mentions_order` finds an order id in a
    clause, which accounts for a clause that only names its subject."""
    own = own_words(request)
    context = normalize(request)
    clauses = tuple(
        read_clause(part, context)
        for m in CLAUSE.finditer(own)
        for part in BUT.split(m.group(0))
        if part.strip()
    )
    folded = [fold(c.text) for c in clauses]
    words = [set(_WORDS.findall(f)) for f in folded]
    in_clauses = Counter(w for ws in words for w in ws)  # how many clauses use each word
    behalf = written_on_behalf(own)  # once per ticket: folding the whole text is not free
    others = [not behalf and is_other_persons(c.text) for c in clauses]
    asks_something = any(
        c.asks and not COURTESY.match(f) for c, f in zip(clauses, folded, strict=True)
    )
    # What a clause says of somebody else's order is not this customer's request, nor what
    # the customer takes back in the next clause ("Ik wil mijn geld terug. Nee wacht, laat
    # maar, stuur hem toch op").
    taken_back = {n - 1 for n, f in enumerate(folded) if n and TAKEN_BACK.match(f)}
    thanked = {n for n, f in enumerate(folded) if THANKED_FOR.search(f)}
    found = [
        name
        for n, (c, other) in enumerate(zip(clauses, others, strict=True))
        if not other and n not in taken_back
        for name in c.intents
        if n not in thanked or name == "acknowledgement"
    ]
    whole = " ".join(folded)
    if "wrong_item" not in found and WRONG_ACROSS.search(whole):
        found.append("wrong_item")
    disowned = "wrong_item" in found and "unauthorized_order" in found
    if disowned and TAKEN_OVER.search(whole):
        # "Das habe ich NICHT bestellt, jemand hat meinen Account gehackt": an order somebody
        # else placed, not a wrong item in the customer's own parcel.
        found.remove("wrong_item")
    if "defective_item" in found and TRANSIT.search(whole):
        # Harmed on the way: damaged on arrival, not a fault that showed in use.
        found = [name for name in found if name != "defective_item"]
        if "damaged_item" not in found:
            found.append("damaged_item")
    if not found and not asks_something and any(THANKS.search(f) for f in folded):
        found = ["acknowledgement"]  # only thanks, nothing asked: nothing to do
    clashing = any(other in found for name in found for other in BY_NAME[name].unless)
    intents = _resolve_redundant(found, _apart(clauses, own) if clashing else frozenset())
    if "acknowledgement" in intents and len(intents) > 1 and asks_something:
        # Thanks for one thing beside a request for another: the request is what to answer.
        intents = tuple(i for i in intents if i != "acknowledgement")
    if "acknowledgement" in intents and not asks_something:
        # Thanks for what is done, and nothing asked: what the thanking clauses mention is
        # the past ("the refund for the double charge came through, all good"), not a request.
        # A request stated after the thanks, in a clause of its own ("Arrived at last, but
        # after all that I deserve a voucher"), still is one.
        first = next(
            (n for n, c in enumerate(clauses) if "acknowledgement" in c.intents), len(clauses)
        )
        stated = _resolve_redundant(
            [
                name
                for n, (c, other) in enumerate(zip(clauses, others, strict=True))
                if not other and "acknowledgement" not in c.intents
                for name in c.intents
                if name not in COMPANIONS and (n > first or name in ASKED_BY_NATURE)
            ]
        )
        intents = stated or ("acknowledgement",)
    unaccounted: list[str] = []
    for clause, text, other in zip(clauses, folded, others, strict=True):
        if clause.intents or clause.negated or other or not clause.asks:
            continue
        if COURTESY.match(text):
            continue
        if intents and PURCHASE_PLAN.search(text):
            continue  # why a general question is asked ("I want to buy one for my nephew")
        # New content: words of no follow-up and used by no other clause of the ticket.
        content = [w for w in _WORDS.findall(text) if in_clauses[w] == 1 and not _follow_up_word(w)]
        if intents and len(content) <= MAX_FOLLOW_UP_CONTENT:
            continue  # a follow-up on the problem the ticket states ("What can you do?")
        if mentions_order is not None and mentions_order.search(clause.text) and len(text) < 40:
            continue
        clause_norm = normalize(clause.text)
        if intents and second_opinion.is_follow_up_of(
            load_follow_up_model().scores(clause_norm),
            partial(load_model().scores, clause_norm),
            intents,
        ):
            continue  # the learned readers find it about a problem already read
        unaccounted.append(clause.text)
    untold = tuple(
        clause.text
        for clause, text, other in zip(clauses, folded, others, strict=True)
        if intents
        and not (clause.intents or clause.negated or other or clause.asks)
        and PROBLEM.search(text)
        and not THANKS.search(text)
        and second_opinion.reads_another(load_model().scores(normalize(clause.text)), intents)
    )
    return Understanding(
        own_text=own,
        clauses=clauses,
        intents=intents,
        unaccounted=tuple(unaccounted),
        untold=untold,
    )


def _follow_up_word(word: str) -> bool:
    return word in FOLLOW_UP_WORDS or word in FOLLOW_UP_MORE or word.startswith(FOLLOW_UP_STEMS)


def is_other_persons(clause: str) -> bool:
    """True when the clause is about somebody else's order, not the customer's own (see
    `written_on_behalf`: then that person's order is the subject after all)."""
    return bool(OTHER_PERSON.search(fold(clause)))


def written_on_behalf(ticket: str) -> bool:
    """True when the customer writes for somebody else ("on behalf of my dad")."""
    return bool(ON_BEHALF.search(fold(ticket)))
