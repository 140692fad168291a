"""Which services a page names, and which one it is about.

A page names services by name, by alert name (`CheckoutSuccessRateLow`, `LoginFailuresSpike`,
`EdgeUpstreamTimeoutRatio`) or in on-call words (`ALIASES`: basket, sign-in, card auth, mail,
reco widget, promo engine...), with plural and `-ing` forms of each term. `services_named`
lists them in the order the page first names each.

The service a page is about (`paged_service_of`) is not always the first it names: on-call
pages name other services as context ("payments just deployed and #payments is on fire, is the
basket ok?", "recs pods were restarted 10 min ago; now SearchQueryP95High fired"). Each
mention is read for its role in its clause: the subject of the alert (inside an alert name,
or followed by "alert", "fired", "warn"... unless the page says it is over), the one asked
about ("is shipping affected?", "make sure cart isn't caught up in it") and one said to be
failing ("checkout is slow") count for it, and the one an alert label or payload key names
(`service=cart`, `"service": "checkout"`) most; a service named as the subject of a change, a
restart or an incident of its own ("checkout's 4.13.0 is failing", "the inventory deploy",
"pricing got restarted", "profile is having its incident") or said to be fine counts against
it. Each service scores its best mention; the best-scored wins, on a tie the one whose best
mention comes first.

Pure functions, standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SERVICES = (
    "gateway", "auth", "checkout", "payments", "cart", "search", "inventory", "shipping",
    "notifications", "recommendations", "pricing", "profile",
)
"""The services of the bundled incident data (servers/incident_world.py)."""
ALIASES: dict[str, tuple[str, ...]] = {
    "gateway": ("api gateway", "api-gateway", "edge", "edge proxy", "ingress", "load balancer",
                "gw", "envoy", "nginx"),
    "auth": ("login", "log in", "log-in", "logon", "sign-in", "sign in", "signin", "sign-on",
             "sso", "idp", "oauth", "jwt", "authentication", "token signing",
             "session validation", "password hashing"),
    "checkout": ("place an order", "placing orders", "order placement", "order confirm",
                 "order confirmation page", "purchase", "purchase flow"),
    "payments": ("payment", "pmt", "card auth", "card authorisation", "card authorization",
                 "card payment", "card decline", "psp", "authorize", "authorise", "acquirer",
                 "3ds", "refund"),
    "cart": ("basket", "add-to-cart", "add to cart", "add to basket", "add-to-basket"),
    "search": ("search result", "product search", "results page", "search page",
               "product listing", "autocomplete", "typeahead", "search suggest", "facet"),
    "inventory": ("stock", "stock level", "reservation", "stock reservation", "warehouse"),
    "shipping": ("delivery option", "delivery quote", "delivery estimate", "carrier",
                 "shipping quote", "shipping rate", "rate card", "shipping label",
                 "tracking page", "parcel"),
    "notifications": ("email", "e-mail", "mail", "sms", "push notification", "notification",
                      "notif", "mailer"),
    "recommendations": ("recs", "recommended", "recommendation", "reco", "recos",
                        "recommender", "personalisation", "personalization",
                        "you may also like", "you might also like", "related products"),
    "pricing": ("price", "promotion", "promo", "promo engine", "discount", "coupon",
                "voucher"),
    "profile": ("account page", "my account", "addresses", "address book", "avatar",
                "account settings", "saved address", "preferences", "acct"),
}
"""On-call vocabulary for each service ("basket" is cart, "sign-in" is auth); each term also
matches its plural and `-s`/`-es` forms ("baskets", "addresses")."""
CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
"""Where an alert name's words meet: `PaymentAuthLatencyHigh` -> Payment Auth Latency High."""
ALERT_NAME = re.compile(r"^\W*[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*){1,}\W*$")
"""A token that is an alert name: words run together in CamelCase (`CartLatencyP95High`)."""

ALERT_WORDS = re.compile(
    r"^[\s\w/.%>-]{0,40}?\b(?:alert|alarm|alerts|monitor|warn|warning|fired|firing|paged|"
    r"triggered|tripped|blipped|pinged|flapp\w*)\b", re.IGNORECASE)
"""Right after a service: it is the subject of the page's alert ("sign-in latency alert",
"shipping POST /labels 500 alert fired")."""
ASKED_BEFORE = re.compile(
    r"\b(?:is|are|was|were|make sure|check(?:ing)? (?:if|whether)|whether|if|is our|are our)"
    r"\s+(?:the\s+|our\s+)?$", re.IGNORECASE)
ASKED_AFTER = re.compile(
    r"^(?:\s+(?:is|are|isn't|aren't|not|also|too|itself|really|still|even|being))*\s+"
    r"(?:ok|okay|fine|affected|hit|impacted|healthy|alright|all right|caught up|involved|"
    r"degraded|impacted)\b", re.IGNORECASE)
"""Around a service: the page asks whether it is affected ("is the basket ok?")."""
CONTEXT_AFTER = re.compile(
    r"^(?:'s)?\s+v?\d+\.\d+\.\d+"
    r"|^(?:'s)?(?:\s+(?!and\b|or\b)[\w#.-]+){0,2}?\s+(?:deploy\w*|shipped|ship|released?|"
    r"releasing|rolled|rollout|pushed|restarted|rebooted|went out|on fire|broke|"
    r"is having|has an?|has its|had an?|had its|is in the middle|got restarted)\b",
    re.IGNORECASE)
"""After a service: it is named as the subject of a change, a restart or an incident of its
own ("checkout shipped 4.12.6", "Payments 7.5.0 is on fire", "profile is having its
incident", "recs pods were restarted")."""
CONTEXT_AROUND = re.compile(
    r"^(?:\s+[\w.-]+)?\s+(?:deploy|release|restart|rollout|change|patch|incident)\b",
    re.IGNORECASE)
SYMPTOM_AFTER = re.compile(
    r"^(?:'s|:|[/.-][\w/.-]*)?(?:\s+(?!and\b|but\b|calls?\b)[\w/.-]+){0,3}?\s+"
    r"(?:(?:is|are|keeps?|still|now)\s+)*"
    r"(?:failing|fails|failed|erroring|errors?|5xx|[2-5]\d\d\w*|timing out|timeouts?|slow|"
    r"down|broken|degraded|flaky|latency|p9[59]|spiking|throwing|returning|crawling)\b",
    re.IGNORECASE)
"""After a service: the page says it is failing ("checkout is slow", "search 500s", a route of
it: "/api/checkout/confirm throwing 500s"); not in a
question or a guess ("is payments down?", "looks like payments is timing out"), nor of a
call to it ("the payments call timed out": the caller's failure)."""
HEDGE = re.compile(r"\b(?:looks like|seems like|maybe|perhaps|could|might|is it|suspect)\b",
                   re.IGNORECASE)
HEALTHY_AFTER = re.compile(
    r"^(?:\s+[\w/.-]+){0,2}?\s+(?:is|are|looks?|seems?)\s+(?:fine|ok|okay|normal|healthy|"
    r"green)\b|^\s+(?:works|is working)\b", re.IGNORECASE)
"""After a service: the page says it is healthy ("stock levels look fine", "profile is
fine")."""
LABEL_BEFORE = re.compile(
    r"""(?:^|[\s{,(])["']?(?:service|svc|app|application|component)["']?\s*[:=]\s*["']?$""",
    re.IGNORECASE)
"""Right before a service: an alert label or payload key names it (`service=checkout`,
`"service": "checkout"`): the alert's subject, above the words of its alert name
(`PaymentIntentBuildFailures` with `service: checkout` is about checkout)."""
LABEL_SCORE = 5
OVER = re.compile(r"\b(?:resolved|cleared|recovered|earlier)\b", re.IGNORECASE)
"""An alert the page says is over ("fired earlier and resolved") is not what it pages about."""
CLAUSE_END = re.compile(r"[;!?\n]|\.(?=\s|$)|\s-\s|,\s(?=[a-z])|\(|\)")


@dataclass(frozen=True)
class Mention:
    """One service named in a page."""

    service: str
    start: int
    end: int
    """Where it is in the page's words (`_words`)."""
    in_alert_name: bool
    """Named inside an alert name (`CartLatencyP95High`)."""


def _words(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The page in lower case with its alert names split into words
    (`AddToCartErrorBudgetBurn` -> `add to cart error budget burn`), and where each alert
    name lies in it."""
    parts: list[str] = []
    alerts: list[tuple[int, int]] = []
    at = 0
    for token in text.split(" "):
        split = CAMEL.sub(" ", token)
        if ALERT_NAME.match(token) and split != token:
            alerts.append((at, at + len(split)))
        parts.append(split)
        at += len(split) + 1
    return " ".join(parts).lower(), alerts


def _term(term: str) -> str:
    """A term and its plural: `basket` also matches `baskets`, `address` `addresses`."""
    return re.escape(term) + r"(?:s|es)?"


def mentions(text: str) -> list[Mention]:
    """Every service mention in a page, in order; where terms overlap, the longest wins
    ("card auth" is payments, not auth)."""
    lowered, alerts = _words(text)
    found: list[tuple[int, int, str]] = []
    for name in SERVICES:
        for term in (name, *ALIASES.get(name, ())):
            for match in re.finditer(rf"(?<![\w]){_term(term)}(?!\w)", lowered):
                found.append((match.start(), -(match.end() - match.start()), name))
    found.sort()
    out: list[Mention] = []
    covered_until = -1
    for start, negative_length, name in found:
        if start < covered_until:
            continue  # inside a longer term already read ("auth" in "card auth")
        covered_until = start - negative_length
        in_alert = any(a <= start < b for a, b in alerts)
        out.append(Mention(name, start, covered_until, in_alert))
    return out


def services_named(text: str) -> list[str]:
    """Every service a page names, in the order it first names each: by name, by alert name
    (`CheckoutSuccessRateLow`, `LoginFailuresSpike`) or by on-call vocabulary ("basket",
    "sign-in", "card auth", "results page")."""
    return list(dict.fromkeys(m.service for m in mentions(text)))


def _role(lowered: str, mention: Mention) -> int:
    """How much a mention says the page is about its service (module docstring)."""
    begin = max((m.end() for m in CLAUSE_END.finditer(lowered, 0, mention.start)), default=0)
    stop = CLAUSE_END.search(lowered, mention.end)
    before = lowered[begin:mention.start]
    after = lowered[mention.end:stop.start() if stop else len(lowered)]
    score = 0
    if LABEL_BEFORE.search(before):
        score += LABEL_SCORE
    if mention.in_alert_name:
        score += 3
    elif ALERT_WORDS.match(after) and not OVER.search(after):
        score += 2
    if ASKED_BEFORE.search(before) and ASKED_AFTER.match(after):
        score += 3
    question = stop is not None and stop.group() == "?"
    if (SYMPTOM_AFTER.match(after) and not question and not HEDGE.search(before)
            and not re.match(r"\s+calls?\b", after)):
        score += 1
    elif HEALTHY_AFTER.match(after):
        score -= 1
    if CONTEXT_AFTER.match(after) or (re.search(r"\b(?:the|their|its|a|that|this)\s+$", before)
                                      and CONTEXT_AROUND.match(after)):
        score -= 2
    return score


def said_fine(text: str) -> set[str]:
    """The services a page names only to say they are healthy ("cart looks fine", "profile and
    cart look ok"): every mention of each is followed by a healthy word in its clause."""
    lowered, _ = _words(text)
    verdicts: dict[str, bool] = {}
    found = mentions(text)
    for i, mention in enumerate(found):
        stop = CLAUSE_END.search(lowered, mention.end)
        after = lowered[mention.end:stop.start() if stop else len(lowered)]
        nxt = found[i + 1] if i + 1 < len(found) else None
        if nxt is not None and re.fullmatch(r"\s*(?:and|&|\+|or|,)\s*",
                                            lowered[mention.end:nxt.start]):
            after = lowered[nxt.end:stop.start() if stop else len(lowered)]  # "x and y look ok"
        fine = HEALTHY_AFTER.match(after) is not None
        verdicts[mention.service] = verdicts.get(mention.service, True) and fine
    return {name for name, fine in verdicts.items() if fine}


def paged_service_of(text: str) -> str | None:
    """The service the page is about: its best-scored mention (module docstring), the first
    named on a tie; None when it names none."""
    found = mentions(text)
    if not found:
        return None
    lowered, _ = _words(text)
    best: dict[str, tuple[int, int]] = {}
    for mention in found:
        score = _role(lowered, mention)
        seen = best.get(mention.service)
        if seen is None or score > seen[0]:
            best[mention.service] = (score, mention.start)
    return max(best, key=lambda name: (best[name][0], -best[name][1]))


def service_named(text: str) -> str | None:
    """The service a page is about (`paged_service_of`), else None."""
    return paged_service_of(text)
