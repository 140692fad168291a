"""When a page was sent, read from its text the way people write times: in UTC, in their own
zone, with or without a date.

`read_page_time` finds the page's own time: the first time in the text that is neither an
onset ("since 09:21 PDT", "started ~09:10 IST") nor a change ("checkout shipped 4.12.6 at
8:34am ET"), so a header (`[2025-06-10 09:40 EDT]`, `2025-06-06T12:24:00-04:00`), a leading
clock (`9:25am ET CheckoutSuccessRateLow fired`, `today 21:12 (UTC+1) ...`, `at 18:35 Berlin
time ...`) or the alert's own time (`| 11:36 UTC |`, `firing at 5:38am ET`). A zoned time is
never read as UTC: an abbreviation, an offset (`+02:00`, `UTC+1`, `GMT-4`) or a place (`Berlin
time`) gives its zone, and only a time with no zone at all is read as UTC (said so in the
answer). A time without a date keeps `day=None`: the page's date context decides it (a date
stated elsewhere in the page, else `page_day.py` from the data). A page with no time at all
reads as None, never as "now". An alert payload's own time key (`startsAt=...`) is the page's
time, as is any payload key's that names no change (`"since": "..."`, `"date": ...`);
a restart's ("bounced at 11:40") is a change's. Zones are read in `zones.py` (an
unknown one makes the time unknown), dates and the weekday beside the time in `page_date.py`,
clock times in words with a zone ("about ten to four UTC") in `prose_clock.py`.

Pure functions, standard library only (datetime, zoneinfo).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo

from .page_date import month_day as month_day  # re-exported: read from here before page_date
from .page_date import stated_day, weekday_beside
from .prose_clock import prose_clocks
from .zones import UTC_ZONE, Zone, zone_after
from .zones import zone_named as zone_named

ISO = re.compile(
    r"(?<!\d)(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<h>\d{2}):(?P<m>\d{2})(?::\d{2}(?:[.,]\d+)?)?"
    r"(?P<off>Z|[+-]\d{2}:?\d{2})?(?![\d:])"
)
"""A dated time: `2025-06-06T12:24:00-04:00`, `2025-06-12T14:07Z`, `2025-06-10 09:40`."""
CLOCK = re.compile(
    r"(?<![\w:.\-/])(?:(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?::[0-5]\d)?\s?(?P<ampm>[ap]\.?m\.?)?"
    r"|(?P<h12>1[0-2]|0?[1-9])\s?(?P<ampm12>[ap]\.?m\.?)"
    r"|(?P<hf>[01]?\d|2[0-3])h(?P<mf>[0-5]\d)"
    r"|(?P<h4>[01]\d|2[0-3])(?P<m4>[0-5]\d)(?=\s?(?:Z|UTC|GMT)\b)"
    r"|(?P<hd>[01]?\d|2[0-3])\.(?P<md>[0-5]\d)(?=\s?(?-i:[A-Z]{2,5}|UTC[+\u2212-]\d)\b))"
    r"(?=Z\b|(?![\w:]))",
    re.IGNORECASE,
)
"""A clock time: `14:07`, `9:25am`, `2:07 pm`, `9am`, `14h07`, `0745Z` or `1407 UTC` (four
digits only with a zone), `14.07 CEST` (a dot only with a zone)."""
ALERT_KEY = re.compile(
    r"(?:starts_?at|active_?at|fired_?at|triggered_?at|alert(?:ed)?_?at|timestamp)\W*$"
    r"|^\s*(?:started|triggered|fired|opened|created|raised|alerted)(?:\s+at)?\s*:\s*$",
    re.IGNORECASE)
"""An alert payload's own time key (`startsAt=`, `fired_at:`), or an alerting tool's header
line (Opsgenie's `Started: 2025-06-09T08:10:00-04:00`): the page's own time, not an onset."""
PAYLOAD_KEY = re.compile(r"""["'](?P<key>[A-Za-z][\w.-]*)["']\s*:\s*["']?$|(?<![\w.-])"""
                         r"(?P<label>[A-Za-z][\w.-]*)=[\"']?$")
"""A time that is the value of a payload's key (`"since": "..."`, `"date": "..."`,
`created_at=...`): what the key names, not the prose around it."""
CHANGE_KEY = re.compile(r"deploy|release|change|restart|rollout|config|version", re.IGNORECASE)
"""A payload key naming a change (`"deployed_at"`, `last_change_at=`): a change's time; any
other key (`since`, `date`, `created_at`, `occurred_at`) is the alert's own time."""
PLACEHOLDER_BEFORE = 1971
EPOCH = re.compile(
    r"""(?:["'](?P<key>[A-Za-z][\w.-]*)["']\s*:\s*["']?|(?<![\w.-])(?P<label>[A-Za-z][\w.-]*)=["']?)"""
    r"(?P<seconds>1\d{9})(?P<millis>\d{3})?(?![\d.])"
)
"""A time written as Unix seconds or milliseconds, as the value of a payload key
(`ts=1749596700`, `"last_updated": 1749634560`, `"startsAt": 1749634560000`): UTC by
definition. Only after a key: a bare ten-digit number may be anything else."""
"""A dated time before this year is a payload's placeholder, no time at all: Alertmanager's
`endsAt: 0001-01-01T00:00:00Z` (a firing alert), an unset epoch `1970-01-01T00:00:00Z`."""
ONSET_BEFORE = re.compile(
    # From a word start: "restarted at 13:40" is a restart, a change, not an onset.
    r"(?<![\w])(?:since|start\w*|began|begun|begin\w*|from|onset|first seen|kicked off|jumped|"
    r"spiked|climbing)\W+(?:(?:about|around|approx\w*|roughly|at|~|shortly|just|a little|a bit"
    r"|before|after)\W*)*$"
    r"|(?<![\w])(?:start\w*|began|begun|begin\w*|kicked off)\W+(?:\w+\W+){1,2}?"
    r"(?:at|around|about|~)\W*$",
    re.IGNORECASE,
)
"""Words right before a time that make it the onset, not the page's time ("since about
09:10", "since shortly before 4am")."""
CHANGE_BEFORE = re.compile(
    r"(?:deploy\w*|shipped|ship|releas\w*|pushed|rolled out|rollout|restart\w*|went out|"
    r"bounced|reboot\w*|recycled|redeploy\w*|bump\w*|flipped|toggled|enabled|disabled|"
    r"raised|lowered|upgraded|migrated|tweaked|modified|updated|cfg|config\w*|patch\w*|hotfix|"
    r"merged|applied|changed|reverted|rolled back)\b(?:[^.;!?,]|\.(?=\d)){0,30}$",
    re.IGNORECASE,
)
"""Words shortly before a time that make it a change's time (in the same clause: "since the
6.2.0 rollout yesterday evening, 07:10 EDT" is the page's time)."""
ONSET_DURATION = re.compile(
    r"\b(?:for(?: the last)?|after|about|over|nearly|almost)?\s*(?P<n>\d+|an?|half an?)\s*"
    r"(?P<unit>m\b|min\w*|h\b|hrs?\b|hours?\b)(?:\s+(?:now|in\b|already))?",
    re.IGNORECASE,
)
DURATION_MARKERS = re.compile(
    r"\b(?:for|after|in)\b|\bnow\b|\balready\b|\bbeen\b|\bgoing\b|\bfiring\b",
    re.IGNORECASE,
)
RATE_BEFORE = re.compile(
    r"(?<![\w.])(?:~|about |around |over |nearly |almost )?\d[\d,]*\+?\s+(?:[a-z'-]+\s+){1,2}"
    r"(?:in|within|over)(?: the last| the past)?\s*$", re.IGNORECASE)
"""A count of things right before a duration: the duration is the count's window, not how
long the trouble has lasted ("happened to ~40 people in 20 minutes", "120 failed logins over
10 min"; "502s for 20 min" is an onset, a status being no count)."""
TODAY = re.compile(r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", re.IGNORECASE)
YESTERDAY = re.compile(r"\b(?:yesterday|last night)\b", re.IGNORECASE)
VERSION = re.compile(r"(?<![\w.])v?(\d+\.\d+\.\d+)(?![\w.]*\d)")
AGO = re.compile(
    r"(?P<n>\d+)\s*(?:m\b|mins?\b|minutes?\b)\s*(?:ago\b|before\b|after (?:the |a |its )?"
    r"(?=[^;!?\n]{0,30}?(?:deploy|release|change|restart|rollout)))",
    re.IGNORECASE,
)
"""A change some minutes before the page: "deployed 10 min ago", "6 min after the deploy"."""



@dataclass(frozen=True)
class Mention:
    """One time in a page."""

    start: int
    end: int
    written: str
    """As written, zone included."""
    clock: time
    """The wall-clock time, in `zone`."""
    zone: Zone | None
    """The zone the text gives it (None: none stated)."""
    day: date | None
    """The local date the text gives it (None: none stated)."""
    kind: str
    """`page`, `onset` or `change`, from the words before it."""
    unknown_zone: str = ""
    """A zone the text names but no table knows (`18:35 Springfield time`)."""
    either_half: bool = False
    """Written in words with no word for the half of the day ("ten to four UTC"): `clock`
    is the morning's, and it may be twelve hours later."""


@dataclass(frozen=True)
class PageTime:
    """The page's own time, as read: its clock, zone and date (when the page states them)."""

    written: str
    """As written: `2025-06-10 09:40 EDT`, `5:38am ET`."""
    clock: time
    """Wall-clock time, in `zone`."""
    zone: Zone | None
    """The zone the page gives (None: no zone stated; read as UTC)."""
    day: date | None
    """The local date (None: the page states none; `page_day` resolves it)."""
    unknown_zone: str = ""
    """A zone named but not known (the time is then not trusted)."""
    weekday: int | None = None
    """The weekday written beside the time (0 = Monday), for a page without a date."""
    either_half: bool = False
    """A time in words that may be the morning's or twelve hours later (`Mention`)."""

    @property
    def tz(self) -> tzinfo:
        """The zone the clock is read in."""
        return self.zone.tz if self.zone else UTC

    def on(self, day: date) -> datetime:
        """The page's moment, in UTC, were it sent on local `day`."""
        local = datetime.combine(day, self.clock, tzinfo=self.tz)
        return local.astimezone(UTC)

    @property
    def utc(self) -> datetime | None:
        """The page's moment in UTC, when the page states its date."""
        return self.on(self.day) if self.day else None

    def local(self, moment: datetime) -> str:
        """`moment` as the page would write it: `09:40 EDT`, `18:35 Berlin time (CEST)`."""
        local = moment.astimezone(self.tz)
        if self.zone is None:
            return f"{local:%H:%M} UTC"
        name = self.zone.written
        shown = local.strftime("%Z") if isinstance(self.tz, ZoneInfo) else ""
        if shown and shown != name:
            return f"{local:%H:%M} {name}, {shown} that day"
        return f"{local:%H:%M} {name}"




def time_mentions(text: str) -> list[Mention]:
    """Every time in the page, in order, with the zone and date it is written with and what
    it is (`page`, `onset`, `change`) from the words before it."""
    mentions: list[Mention] = []
    taken: list[tuple[int, int]] = []
    for match in ISO.finditer(text):
        if int(match.group("date")[:4]) < PLACEHOLDER_BEFORE:
            taken.append((match.start(), match.end()))  # `endsAt: 0001-01-01T00:00:00Z`
            continue
        day = date.fromisoformat(match.group("date"))
        clock = time(int(match.group("h")), int(match.group("m")))
        end = match.end()
        unknown = ""
        if match.group("off"):
            zone = zone_named(match.group("off"))
        else:
            zone, end, unknown = zone_after(text, end)
        mentions.append(Mention(match.start(), end, text[match.start():end].strip(), clock, zone,
                                day, _kind(text, match.start()), unknown))
        taken.append((match.start(), end))
    for match in EPOCH.finditer(text):
        moment = datetime.fromtimestamp(int(match.group("seconds")), tz=UTC)
        start = match.start("seconds")
        key = match.group("key") or match.group("label")
        kind = "change" if CHANGE_KEY.search(key) else "page"
        mentions.append(Mention(start, match.end(), match.group(0).strip(), moment.time()
                                .replace(second=0, microsecond=0), UTC_ZONE, moment.date(),
                                kind))
        taken.append((start, match.end()))
    for match in CLOCK.finditer(text):
        if any(a <= match.start() < b for a, b in taken):
            continue
        hour = int(next(g for g in (match.group(k) for k in ("h", "h12", "hf", "h4", "hd")) if g))
        minute = int(match.group("m") or match.group("mf") or match.group("m4")
                     or match.group("md") or 0)
        ampm = (match.group("ampm") or match.group("ampm12") or "").lower().replace(".", "")
        if ampm and not 1 <= hour <= 12:
            continue
        if ampm == "pm" and hour != 12:
            hour += 12
        elif ampm == "am" and hour == 12:
            hour = 0
        zone, end, unknown = zone_after(text, match.end())
        mentions.append(Mention(match.start(), end, text[match.start():end].strip(),
                                time(hour, minute), zone, None, _kind(text, match.start()),
                                unknown))
    spans = taken + [(m.start, m.end) for m in mentions]
    for prose in prose_clocks(text):
        if any(a <= prose.start < b or prose.start <= a < prose.end for a, b in spans):
            continue
        zone, end, unknown = zone_after(text, prose.end)
        if zone is None and not unknown:
            continue  # only with a zone: "five to ten minutes" is no time
        mentions.append(Mention(prose.start, end, text[prose.start:end].strip(), prose.clock,
                                zone, None, _kind(text, prose.start), unknown,
                                prose.either_half))
    return sorted((replace(m, written=_balanced(m.written)) for m in mentions),
                  key=lambda m: m.start)


def _balanced(written: str) -> str:
    """`09:04 PDT` for a time written inside parentheses (`(09:04 PDT)`)."""
    return written.rstrip(")").strip() if written.count(")") > written.count("(") else written


def _kind(text: str, start: int) -> str:
    before = text[max(0, start - 40):start]
    key = PAYLOAD_KEY.search(before)
    if key is not None:
        return "change" if CHANGE_KEY.search(key.group("key") or key.group("label")) else "page"
    before = re.split(r"[;!?\n|]|\.(?!\d)|\s-\s", before)[-1]
    if ALERT_KEY.search(before):
        return "page"
    if ONSET_BEFORE.search(before):
        return "onset"
    if CHANGE_BEFORE.search(before):
        return "change"
    return "page"


def read_page_time(text: str) -> PageTime | None:
    """The page's own time (see the module docstring), or None when the page states none.
    A time without a zone takes the zone of another time in the page (a header's); without
    a date, the one date the page states (else `day` stays None)."""
    mentions = time_mentions(text)
    page = next((m for m in mentions if m.kind == "page"), None)
    if page is None:
        return None
    if page.zone is None and not page.unknown_zone:
        # A chat thread's lines ("maria [11:48]: ...", "maria [11:50 CEST]: ...") are read at
        # the one line that states its own zone: the time the page was written down with.
        page = next((m for m in mentions if m.kind == "page" and m.zone is not None), page)
    zone = page.zone
    if zone is None and not page.unknown_zone:
        zone = next((m.zone for m in mentions if m.zone is not None), None)
    day = page.day
    if day is None:
        full, _ = stated_day(text)
        day = full
    return PageTime(page.written, page.clock, zone, day, page.unknown_zone,
                    weekday_beside(text, page.start, page.end), page.either_half)



def _moment(mention: Mention, page: PageTime, at: datetime) -> datetime:
    """A clock time the page mentions, in UTC: in its own zone or the page's, on its own day
    or the page's (the day before when that would put it after the page)."""
    tz = mention.zone.tz if mention.zone else page.tz
    local_at = at.astimezone(tz)
    moment = datetime.combine(mention.day or local_at.date(), mention.clock, tzinfo=tz)
    if mention.day is None and moment > local_at + timedelta(minutes=5):
        moment -= timedelta(days=1)
    return moment.astimezone(UTC)


def stated_onset(text: str, page: PageTime, at: datetime) -> datetime | None:
    """When the page says the trouble began, in UTC, given the page's moment `at`: an onset
    time ("since ~22:35", "started 09:11 PDT", zone and date as the page's), else a duration
    ("for 20 min", "about half an hour in", "still firing after 70 min"); None if neither."""
    for mention in time_mentions(text):
        if mention.kind != "onset":
            continue
        return _moment(mention, page, at)
    for match in ONSET_DURATION.finditer(text):
        around = text[max(0, match.start() - 12):match.end() + 8]
        if not DURATION_MARKERS.search(around) or AGO.match(text, match.start(
                "n")) or "ago" in around.lower():
            continue
        if RATE_BEFORE.search(text[max(0, match.start("n") - 40):match.start("n")]):
            continue  # "40 people in 20 minutes": a rate's window
        count = match.group("n").lower()
        number = 0.5 if count.startswith("half") else 1.0 if count in ("a", "an") else float(count)
        unit = match.group("unit").lower()
        minutes = number * (60 if unit.startswith("h") else 1)
        if 5 <= minutes <= 12 * 60:  # shorter is an alert's own window ("for 2m")
            return at - timedelta(minutes=minutes)
    return None


def versions_named(text: str) -> list[str]:
    """Release versions a page names (`4.12.6`, `v5.4.0`)."""
    return list(dict.fromkeys(VERSION.findall(text)))


def change_moments(text: str, page: PageTime, at: datetime) -> list[datetime]:
    """When the page says a change happened, in UTC: a change's time ("shipped 4.12.6 at
    8:34am ET", in the page's zone and on its day) or "N min ago" ("deployed 10 min ago")."""
    out: list[datetime] = []
    for mention in time_mentions(text):
        if mention.kind != "change":
            continue
        out.append(_moment(mention, page, at))
    for match in AGO.finditer(text):
        near = text[max(0, match.start() - 40):match.end() + 30]
        if re.search(r"deploy|releas|change|restart|rollout|shipped|pushed", near, re.I):
            out.append(at - timedelta(minutes=int(match.group("n"))))
    return out


def says_today(text: str) -> bool:
    """True when the page places its time today ("today 21:12", "tonight")."""
    return bool(TODAY.search(text)) and not YESTERDAY.search(text)


def iso_minute(moment: datetime | None) -> str | None:
    """`2025-06-10T13:40:00Z` (the labels' form), or None."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:00Z") if moment else None
