"""Clock times written in words ("about ten to four UTC", "quarter past two ET", "half past
nine CEST"), for `page_time.time_mentions`.

Only with a zone right after (read by `zones.zone_after`), so "five to ten minutes" is no
time. Words give the hour on a twelve-hour clock: "in the morning", "a.m.", "afternoon",
"evening", "p.m.", "tonight" in the same clause say which half of the day; without them the
time is either (`ProseClock.either_half`), and a page without a date is settled on the day
and half its data fits (`page_received.candidates`).

Pure functions, standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import time

NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
MINUTE_WORDS = {"five": 5, "ten": 10, "quarter": 15, "a quarter": 15, "twenty": 20,
                "twenty-five": 25, "twenty five": 25, "half": 30}
PROSE = re.compile(
    r"(?<![\w-])(?P<m>twenty[- ]five|twenty|ten|five|a quarter|quarter|half)\s+"
    r"(?P<rel>past|after|to|till|before|of)\s+"
    r"(?P<h>one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|1[0-2]|0?[1-9])"
    r"(?:\s+o'?clock)?(?![\w:])",
    re.IGNORECASE,
)
MORNING = re.compile(r"\ba\.m\.|\b(?:in the|this) morning\b", re.IGNORECASE)
EVENING = re.compile(r"\bp\.?m\.?(?!\w)|\b(?:afternoon|evening|tonight)\b", re.IGNORECASE)
CLAUSE = re.compile(r"[.;!?\n]")


@dataclass(frozen=True)
class ProseClock:
    """One clock time in words."""

    start: int
    end: int
    clock: time
    either_half: bool
    """True when no word says which half of the day it is (then `clock` is the morning's)."""


def prose_clocks(text: str) -> list[ProseClock]:
    """Every clock time the page writes in words, morning's unless its clause says it is
    the afternoon or evening."""
    out = []
    for match in PROSE.finditer(text):
        word = match.group("h").lower()
        hour = NUMBER_WORDS.get(word) or int(word)
        minute = MINUTE_WORDS[re.sub(r"\s+", " ", match.group("m").lower())]
        if match.group("rel").lower() in ("to", "till", "before", "of"):
            hour, minute = hour - 1, 60 - minute
        hour %= 12
        begin = max((m.end() for m in CLAUSE.finditer(text, 0, match.start())), default=0)
        stop = CLAUSE.search(text, match.end())
        clause = text[begin:stop.start() if stop else len(text)]
        evening = bool(EVENING.search(clause))
        morning = bool(MORNING.search(clause))
        out.append(ProseClock(match.start(), match.end(),
                              time(hour + (12 if evening and not morning else 0), minute),
                              either_half=evening == morning))
    return out
