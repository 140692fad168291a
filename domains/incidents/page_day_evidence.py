"""More of what an on-call engineer reads to tell the day of a page that gives only a clock
time (`page_day.py` scores the days with it).

- **The errors the page quotes** ("gw: POST /login 502 'upstream auth returned 503'") are
  matched against each day's incident messages (new, frequent, still logged at that time, or
  heap pressure): the share of the quote's significant words the message has. Words the page
  uses without quotes ("checkout is failing on inventory reservations") count a little less,
  against the messages of the services the page names: the share of the message's words the
  page has. Everyday words of an error ("failed", "error", "request") and the glue between
  them are no evidence; status codes are.
- **A release dated by a weekday or a relative day** ("since monday's 1.23.0", "no deploys
  since fri (8.3.0)", "the 6.2.0 deploy yesterday evening"): the page has run since then, so
  the change may be days before the page, but it is on that local day.
- **A config change named by its setting**: by a word of it beside a word saying it is a
  change ("after the timeout change" is `upstream.timeout_ms`), or as written in the data
  (`promotions.max_stack went 2 -> 3`), with or without such a word.
- **Changes a page says happened in a span before it** ("profile and cart both deployed in
  the last two hours"): a change of each service it names there, within that span.

Pure functions, standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from .page_time import VERSION
from .services import services_named

QUOTED = re.compile(r"(?<![\w'\"])(?:'([^'\n]{6,200}?)'|\"([^\"\n]{6,200}?)\"|‘([^’\n]{6,200}?)’"
                    r"|“([^”\n]{6,200}?)”)(?![\w'\"])")
"""A quoted error message ('upstream auth returned 503'); an apostrophe inside a word
("monday's", "can't") opens none."""
GENERIC = frozenset("""
the and for from with after before into onto over than then that this these those are was
were has have had not but all any its our their them they you your per via out off who what
when where which while error errors fail failed failing failure failures request requests
returned return returning call calls status code got get gets some lot lots just still now
seeing seen see look looks like about around logs log line lines message messages says said
""".split())
"""Words that say nothing of which error it is."""
QUOTE_SCORE = 3.0
"""A quoted message matched in full counts as much as the onset the page states."""
QUOTE_MIN = 0.5
PROSE_SCORE = 2.0
PROSE_MIN = 0.25
PROSE_WORDS = 2
WEEKDAY_NAMES = {"mon": 0, "monday": 0, "tue": 1, "tues": 1, "tuesday": 1, "wed": 2,
                 "wednesday": 2, "thu": 3, "thur": 3, "thurs": 3, "thursday": 3, "fri": 4,
                 "friday": 4, "sat": 5, "saturday": 5, "sun": 6, "sunday": 6}
DAY_WORD = re.compile(r"(?<![\w.])(?P<w>" + "|".join(sorted(WEEKDAY_NAMES, key=len,
                                                            reverse=True))
                      + r"|yesterday|last night|today|this morning)(?:'s)?(?![\w])",
                      re.IGNORECASE)
VERSION_REACH = 40
"""How far (characters, in the same clause) a day word may be from the version it dates."""
SPAN_WORDS = re.compile(
    r"(?:deploy\w*|shipped|released|rolled out|changed|pushed)\s+(?:\w+\s+){0,2}?"
    r"(?:in|within|over|during)\s+the\s+(?:last|past)\s+(?P<n>\d+|an?|one|two|three|four|"
    r"five|six|few|couple(?: of)?)?\s*(?P<unit>min\w*|h\b|hrs?\b|hours?\b)",
    re.IGNORECASE)
"""A span a page says changes happened in ("both deployed in the last two hours")."""
NEGATED = re.compile(r"\b(?:no|not|nothing|none|without|never)\b|n't\b", re.IGNORECASE)
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "few": 3, "couple": 2, "couple of": 2}
CHANGE_WORDS = re.compile(r"\b(?:change[ds]?|config|setting|flag|bump(?:ed)?|move[ds]?|"
                          r"switch(?:ed)?|tweak(?:ed)?)\b", re.IGNORECASE)
GENERIC_SETTING_WORDS = frozenset({"max", "min", "size", "enabled", "client", "default"})
SETTING = re.compile(r"(?<![\w.])([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+)(?![\w])")
"""A dotted setting name as the data writes it (`promotions.max_stack`)."""


def stem(word: str) -> str:
    """A word's stem, enough to match "reservations" with "reservation" and "timeouts" with
    "timeout"."""
    word = word.lower()
    for suffix in ("ations", "ation", "ings", "ing", "ions", "ion", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    return word[:6].rstrip("e") or word[:6]


def significant(text: str) -> set[str]:
    """The words of a message that tell which error it is: stems of its words of three
    letters or more (not the everyday ones of any error) and its status codes."""
    out = set()
    for word in re.findall(r"[A-Za-z][A-Za-z0-9]+|\d+", text):
        if word.isdigit():
            if len(word) == 3:
                out.add(word)
        elif len(word) >= 3 and word.lower() not in GENERIC:
            out.add(stem(word))
    return out


def quoted(text: str) -> list[set[str]]:
    """The significant words of each error message the page quotes (two or more)."""
    out = []
    for match in QUOTED.finditer(text):
        words = significant(next(g for g in match.groups() if g))
        if len(words) >= 2:
            out.append(words)
    return out


@dataclass(frozen=True)
class Message:
    """One incident message of one day (see `page_day.score_days`)."""

    service: str
    text: str


def message_evidence(text: str, messages: Sequence[Message], named: set[str]
                     ) -> tuple[float, str]:
    """How well a day's incident messages fit the errors the page quotes or describes, and
    why (0 and "" when none does): a quote's share of significant words found in a message,
    scaled to `QUOTE_SCORE` (from `QUOTE_MIN`); else `PROSE_SCORE` when a message of a
    service the page names has `PROSE_WORDS` of its words (not its own name, nor a number)
    in the page, `PROSE_MIN` of them at least."""
    best, why = 0.0, ""
    for quote in quoted(text):
        for message in messages:
            share = len(quote & significant(message.text)) / len(quote)
            if share >= QUOTE_MIN and QUOTE_SCORE * share > best:
                best = QUOTE_SCORE * share
                why = (f"{message.service} logged \"{message.text}\" at that time, the error "
                       "the page quotes" + ("" if share == 1 else " (in part)"))
    if best:
        return round(best, 2), why
    page = significant(text)
    for message in messages:
        if message.service not in named:
            continue
        words = significant(message.text) - {stem(message.service)}
        found = {w for w in words & page if not w.isdigit()}
        if len(found) >= PROSE_WORDS and len(found) / len(words) >= PROSE_MIN:
            return PROSE_SCORE, (f"{message.service} logged \"{message.text}\" at that time, "
                                 "as the page describes its errors")
    return 0.0, ""


def dated_versions(text: str) -> dict[str, tuple[str, int]]:
    """Versions the page dates by a day word in the same clause ("since monday's 1.23.0",
    "since fri (8.3.0)", "the 6.2.0 deploy yesterday evening"): version -> (the word, the
    weekday 0-6, or -1 for yesterday, -2 for today)."""
    out: dict[str, tuple[str, int]] = {}
    for match in VERSION.finditer(text):
        lo = max(0, match.start() - VERSION_REACH)
        hi = min(len(text), match.end() + VERSION_REACH)
        before = re.split(r"[;!?\n]|\.(?!\d)|\s[-—–]\s", text[lo:match.start()])[-1]
        after = re.split(r"[;!?\n]|\.(?!\d)|\s[-—–]\s", text[match.end():hi])[0]
        words = [(len(before) - w.end(), w.group("w")) for w in DAY_WORD.finditer(before)]
        words += [(w.start(), w.group("w")) for w in DAY_WORD.finditer(after)]
        if not words:
            continue
        word = min(words)[1].lower()
        weekday = WEEKDAY_NAMES.get(word)
        if weekday is None:
            weekday = -2 if word in ("today", "this morning") else -1
        out.setdefault(match.group(1), (word, weekday))
    return out


CHANGE_NOUN = re.compile(r"\b(?:update[ds]?|deploy\w*|release[ds]?|rollout|roll-out|change[ds]?|"
                         r"patch(?:ed|es)?|upgrade[ds]?|push(?:ed)?|shipped)\b", re.IGNORECASE)


def dated_services(text: str) -> dict[str, tuple[str, int]]:
    """Services whose change the page dates by a day word in one clause ("the payments
    update from this morning", "checkout's deploy yesterday"): service -> (the word, the
    weekday 0-6, -1 for yesterday, -2 for today); not in a clause that denies a change
    ("no deploys to pricing since monday")."""
    out: dict[str, tuple[str, int]] = {}
    for match in DAY_WORD.finditer(text):
        begin = max((m.end() for m in re.finditer(r"[;!?\n]|\.(?!\d)", text[:match.start()])),
                    default=0)
        stop = re.search(r"[;!?\n]|\.(?!\d)", text[match.end():])
        clause = text[begin:match.end() + (stop.start() if stop else len(text))]
        if not CHANGE_NOUN.search(clause) or NEGATED.search(clause):
            continue
        word = match.group("w").lower()
        weekday = WEEKDAY_NAMES.get(word)
        if weekday is None:
            weekday = -2 if word in ("today", "this morning") else -1
        for service in services_named(clause):
            out.setdefault(service, (word, weekday))
    return out


def on_dated_day(change_at: datetime, day_at: datetime, weekday: int, tz: Any) -> bool:
    """True when a change at `change_at` is before the page (at `day_at`) on the local day
    the page dates it by (`dated_versions`' weekday, or yesterday / today)."""
    if change_at > day_at:
        return False
    changed: date = change_at.astimezone(tz).date()
    paged: date = day_at.astimezone(tz).date()
    if weekday == -1:
        return changed == paged - timedelta(days=1)
    if weekday == -2:
        return changed == paged
    return changed.weekday() == weekday and paged - changed <= timedelta(days=7)


def settings_named(text: str, changes: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Config changes whose setting the page writes as the data does (`promotions.max_stack`)."""
    written = {m.group(1) for m in SETTING.finditer(text.lower())}
    return [c for c in changes if c.get("kind") == "config"
            and str(c.get("target") or "").lower() in written]


def change_span(text: str) -> timedelta | None:
    """The span a page says changes happened in before it ("deployed in the last two
    hours"), or None."""
    match = SPAN_WORDS.search(text)
    if match is None or NEGATED.search(re.split(r"[.;!?\n]", text[:match.start()])[-1]):
        return None  # "no deploys in the last 2 hours"
    count = (match.group("n") or "1").lower()
    number = int(count) if count.isdigit() else NUMBERS.get(count, 1)
    unit = match.group("unit").lower()
    return timedelta(minutes=number * (60 if unit.startswith("h") else 1))


def settings_worded(text: str, changes: list[dict[str, Any]], named: set[str]
                    ) -> list[dict[str, Any]]:
    """Config changes the page names by their setting ("after the timeout change" is
    `upstream.timeout_ms`, "the session cache move" `session_cache.endpoint`)."""
    if not CHANGE_WORDS.search(text):
        return []
    words = set(re.findall(r"[a-z]{4,}", text.lower()))
    out = []
    for change in changes:
        if change.get("kind") != "config" or (named and change.get("service") not in named):
            continue
        target = set(re.split(r"[._\-]+", str(change.get("target") or "").lower()))
        if (target - GENERIC_SETTING_WORDS) & words:
            out.append(change)
    return out
