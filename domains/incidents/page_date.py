"""Dates as pages write them besides their times: `2025-06-10`, `2025/06/10`, `June 10`,
`10 Jun 2025`, `12-Jun-2025`, `12/06/2025` (day first unless the page's zone is American),
`12.06.2025`, a year on its own (`Thu Jun 12 10:07:00 EDT 2025`), and the weekday written
beside the page's time (`Saturday 22:15 CEST`), which narrows the day of a page without a date.

Pure functions, standard library only.
"""

from __future__ import annotations

import re
from datetime import date

MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = (r"(?:january|february|march|april|may|june|july|august|september|october|november|"
          r"december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)(?![a-z])\.?")
"""A month: its name or its abbreviation, as a whole word ("maybe 20-25 minutes" and "decided
12" are no dates)."""
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
WEEKDAY = re.compile(
    r"\b(?:(?P<full>(?i:monday|tuesday|wednesday|thursday|friday|saturday|sunday))"
    r"|(?P<short>Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)\.?)(?!\w)",
)
"""A weekday written beside the page's time (`Saturday 22:15 CEST`, `9:45 a.m. UTC Monday`)."""
DATE_WORDS = re.compile(
    rf"\b(?:(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?[\s-]+(?P<m1>{_MONTH})|(?P<m2>{_MONTH})[\s-]+"
    rf"(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?)(?:,?[\s-]+(?P<y>\d{{4}}))?\b",
    re.IGNORECASE,
)
"""A date in words: `June 10`, `10 Jun 2025`, `Jun 10th`, `12-Jun-2025`."""
ISO_DATE = re.compile(r"(?<!\d)(\d{4})[-/](\d{2})[-/](\d{2})(?!\d)")
NUMERIC_DATE = re.compile(
    r"(?<![\w/.:-])(?P<a>\d{1,2})(?P<sep>[/.])(?P<b>\d{1,2})"
    r"(?:(?P=sep)(?P<y>\d{4})(?![\w/.])|(?=,?\s+\d{1,2}[:h.]?\d{2}\b))")
"""A date in numbers: `12/06/2025`, `12.06.2025`, or `6/12` right before a time (without a
year, only there: `1/2 hosts` is no date). Day first, unless the page's zone is American (then
month first, `6/12 10:07 ET`) or one number cannot be a month."""
AMERICAN_ZONE = re.compile(r"\b(?:ET|EDT|EST|CT|CDT|CST|MT|MDT|MST|PT|PDT|PST|AKDT|HST)\b"
                           r"|\b(?i:eastern|pacific|central|mountain)\b|\bUTC-[4-8]\b")
LONE_YEAR = re.compile(r"(?<![\w/.:-])(20\d{2})(?![\w/.:-])")
"""A year on its own (`Thu Jun 12 10:07:00 EDT 2025`, the date(1) form)."""


def stated_day(text: str) -> tuple[date | None, tuple[int, int] | None]:
    """The one date a page states besides its times' own: (full date, or (month, day) with no
    year); (None, None) when it states none or several."""
    days = {date(int(y), int(m), int(d)) for y, m, d in ISO_DATE.findall(text)
            if 1 <= int(m) <= 12 and 1 <= int(d) <= 31 and int(y) >= 1971}  # not 0001-01-01
    month_days: set[tuple[int, int]] = set()
    for match in DATE_WORDS.finditer(text):
        month = MONTHS.index(str(match.group("m1") or match.group("m2"))[:3].lower()) + 1
        day = int(match.group("d1") or match.group("d2"))
        if not 1 <= day <= 31:
            continue
        if match.group("y"):
            days.add(date(int(match.group("y")), month, day))
        else:
            month_days.add((month, day))
    american = bool(AMERICAN_ZONE.search(text))
    for match in NUMERIC_DATE.finditer(text):
        a, b = int(match.group("a")), int(match.group("b"))
        month, day = (a, b) if (american and a <= 12) or b > 12 else (b, a)
        if not (1 <= month <= 12 and 1 <= day <= 31):
            continue
        if match.group("y"):
            days.add(date(int(match.group("y")), month, day))
        else:
            month_days.add((month, day))
    month_days -= {(d.month, d.day) for d in days}
    years = set(LONE_YEAR.findall(text))
    if not days and len(month_days) == 1 and len(years) == 1:
        month, day = next(iter(month_days))
        return date(int(next(iter(years))), month, day), None
    if len(days) == 1 and not month_days:
        return next(iter(days)), None
    if not days and len(month_days) == 1:
        return None, next(iter(month_days))
    return None, None


def weekday_beside(text: str, start: int, end: int) -> int | None:
    """The weekday written right before or after a time (`Saturday 22:15 CEST`, `9:45 a.m. UTC
    Monday`, `Tue 04:10`), else None; one further away ("climbing since Thursday") is not the
    page's."""
    for match in WEEKDAY.finditer(text):
        gap = text[match.end():start] if match.end() <= start else text[end:match.start()]
        if match.start() < end and match.end() > start:
            continue
        lead = text[max(0, match.start() - 8):match.start()].lower()
        if re.search(r"since|from|until|after|before|last", lead):
            continue
        if len(gap) <= 12 and not re.search(r"[.;!?\n|]|since|from|until|after|before", gap):
            word = (match.group("full") or match.group("short")).lower()
            return WEEKDAYS.index(word[:3])
    return None


def month_day(text: str) -> tuple[int, int] | None:
    """A date the page states without a year (`June 10`), for a page time without a date."""
    return stated_day(text)[1]
