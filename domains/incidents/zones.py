"""Time zones as pages write them: abbreviations (`EDT`, `CEST`, `IST`), offsets (`+02:00`,
`UTC+1`, `GMT-4`), zoneinfo names (`Europe/Berlin`) and places (`Berlin time`, `12:44 Berlin:`,
`10:07 a.m. Eastern`).

`zone_after` reads the zone written right after a time; a zone it cannot place (`WAT`,
`Mars/Olympus`, `Springfield time`) is returned as unknown, so the time is never read as UTC.

Pure functions, standard library only (datetime, zoneinfo).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, timedelta, timezone, tzinfo
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

# zoneinfo knows regions ("Europe/Berlin"), not abbreviations: the tz database keeps no map
# from "CEST" to a zone, and abbreviations are ambiguous ("IST" is India, Ireland and Israel;
# "CST" is US Central and China). So the abbreviations pages use need a table of their own:
# one naming a season (EDT, CEST, BST, IST...) is that fixed offset, read literally; one
# naming a region without a season (ET, PT...) is that region's zone, whose offset on the
# page's date zoneinfo knows (ET in June is EDT).
FIXED_OFFSETS: dict[str, int] = {
    "UTC": 0, "GMT": 0, "UT": 0, "Z": 0, "WET": 0,
    "BST": 60, "WEST": 60, "CET": 60, "CEST": 120, "EET": 120, "EEST": 180, "MSK": 180,
    "IST": 330,  # India Standard Time, UTC+05:30 (not Irish or Israel time)
    "SGT": 480, "HKT": 480, "AWST": 480, "JST": 540, "KST": 540, "ACST": 570,
    "AEST": 600, "AEDT": 660, "NZST": 720, "NZDT": 780,
    "EDT": -240, "EST": -300, "CDT": -300, "CST": -360, "MDT": -360, "MST": -420,
    "PDT": -420, "PST": -480, "AKDT": -480, "AKST": -540, "HST": -600, "BRT": -180,
}
"""Abbreviations that name one offset (minutes east of UTC)."""
REGION_ABBREVIATIONS: dict[str, str] = {
    "ET": "America/New_York", "CT": "America/Chicago", "MT": "America/Denver",
    "PT": "America/Los_Angeles",
}
"""Abbreviations that name a region whatever the season (zoneinfo gives the offset)."""
PLACES: dict[str, str] = {
    "eastern": "America/New_York", "new york": "America/New_York", "ny": "America/New_York",
    "nyc": "America/New_York", "boston": "America/New_York", "central": "America/Chicago",
    "mountain": "America/Denver", "pacific": "America/Los_Angeles",
    "san francisco": "America/Los_Angeles", "sf": "America/Los_Angeles",
    "seattle": "America/Los_Angeles", "uk": "Europe/London", "india": "Asia/Kolkata",
    "bangalore": "Asia/Kolkata", "bengaluru": "Asia/Kolkata", "mumbai": "Asia/Kolkata",
    "delhi": "Asia/Kolkata", "new delhi": "Asia/Kolkata", "pune": "Asia/Kolkata",
    "hyderabad": "Asia/Kolkata", "chennai": "Asia/Kolkata", "munich": "Europe/Berlin",
    "frankfurt": "Europe/Berlin", "hamburg": "Europe/Berlin", "cet": "Europe/Berlin",
    "central european": "Europe/Berlin", "utc": "UTC", "gmt": "UTC",
}
"""Places people name a zone by that are not a zoneinfo city ("Berlin" is: Europe/Berlin)."""

_ABBREVIATION = "|".join(sorted({*FIXED_OFFSETS, *REGION_ABBREVIATIONS}, key=len, reverse=True))
_LOWER = "|".join(sorted((z.lower() for z in FIXED_OFFSETS if len(z) >= 3
                          and z not in ("IST", "EST", "WET")), key=len, reverse=True))
"""Abbreviations as people type them in chat (`16:07 cest`), three letters or more and not a
word of their own (`ist`, `est`, `wet`)."""
_OFFSET = r"(?:UTC|GMT|UT)\s*[+\u2212-]\s*\d{1,2}(?::?\d{2})?"

ZONE = re.compile(
    r"\s?\(?\s?(?:(?P<offset>" + _OFFSET + r"|[+\u2212-]\d{2}:?\d{2}(?!\d))"
    r"|(?P<abbr>(?:\b|(?<=\d)(?=Z))(?:" + _ABBREVIATION + r"))\b"
    r"|(?P<lower>\b(?:" + _LOWER + r"))\b"
    r"|(?P<iana>\b[A-Z][a-z]+/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?)"
    r"|(?P<odd>\b(?!(?:GET|PUT|POST|ALERT|TEST|HOST|LAST|NEXT|JUST|SENT|LIST|REST|EXIT)\b)"
    r"(?-i:[A-Z]{2,3}T))\b(?![:/])"
    r"|(?P<place>[A-Za-z][A-Za-z]+(?:[ _][A-Za-z]+)?)\s+time\b"
    r"|(?<=\()(?P<inner>[A-Za-z][A-Za-z]+(?:[ _][A-Za-z]+)?)(?=\)))\)?"
)
"""A zone right after a time: `EDT`, `(UTC+1)`, `GMT-4`, `+02:00`, `Europe/Berlin`, `Berlin
time`, `(Berlin)`; an abbreviation no table holds (`WAT`, `CAT`) is caught so that it makes the
time unknown instead of being read as UTC."""
BARE_PLACE = re.compile(
    r"\s?(?:in\s+)?(?P<place>[A-Z][a-z]+(?:[ _][A-Z][a-z]+)?)"
    r"(?=\s*(?:[:,;)|\u2013-]|$|\s+local\b))")
"""A place right after a time with no "time" after it (`12:44 Berlin:`, `09:10 Chicago,`):
read as a zone only when it is one (a zoneinfo city or a place in `PLACES`), never a city of
Antarctica's research stations (`Casey`, `Davis`: people's names)."""
ZONE_WORD = re.compile(r"\s?(?P<place>(?i:eastern|pacific|central|mountain))\b")
"""A US zone word after a time (`10:07 a.m. Eastern`), whatever follows it."""


@dataclass(frozen=True)
class Zone:
    """A time zone as a page names it."""

    written: str
    """As written: `EDT`, `UTC+1`, `Berlin time`, `+02:00`."""
    tz: tzinfo
    """Its zone: a fixed offset or a zoneinfo region."""


UTC_ZONE = Zone("UTC", UTC)


@cache
def _zone_cities() -> dict[str, str]:
    """zoneinfo's own place names: `berlin` -> Europe/Berlin, `new york` -> America/New_York."""
    out: dict[str, str] = {}
    for key in sorted(available_timezones()):
        if "/" in key and not key.startswith(("Etc/", "SystemV/", "US/")):
            out.setdefault(key.rsplit("/", 1)[-1].replace("_", " ").lower(), key)
    return out


def zone_named(words: str) -> Zone | None:
    """The zone a page names: an abbreviation (`EDT`, `ET`), an offset (`UTC+1`, `GMT-04:00`,
    `+02:00`) or a place (`Berlin`, `New York`, `Eastern`); None when it is none of these."""
    text = words.strip().strip("()").strip()
    if not text:
        return None
    upper = text.upper()
    if upper in FIXED_OFFSETS:
        return Zone(text, timezone(timedelta(minutes=FIXED_OFFSETS[upper])) if
                    FIXED_OFFSETS[upper] else UTC)
    if upper in REGION_ABBREVIATIONS:
        return Zone(text, ZoneInfo(REGION_ABBREVIATIONS[upper]))
    offset = re.fullmatch(r"(?:UTC|GMT|UT)?\s*([+\u2212-])\s*(\d{1,2})(?::?(\d{2}))?", upper)
    if offset:
        sign = -1 if offset.group(1) in "-\u2212" else 1
        minutes = int(offset.group(2)) * 60 + int(offset.group(3) or 0)
        if minutes > 14 * 60:
            return None
        return Zone(text, timezone(sign * timedelta(minutes=minutes)) if minutes else UTC)
    place = re.sub(r"\s+time$", "", text, flags=re.IGNORECASE).strip().lower().replace("_", " ")
    key = PLACES.get(place) or _zone_cities().get(place)
    if key is None:
        return None
    try:
        return Zone(text, ZoneInfo(key) if key != "UTC" else UTC)
    except ZoneInfoNotFoundError:
        return None


def _place_zone(name: str) -> Zone | None:
    """A place name as a zone (`Berlin`, `New York`), or None when it names no place."""
    key = name.lower().replace("_", " ")
    region = PLACES.get(key) or _zone_cities().get(key)
    if region is None or region.startswith("Antarctica/") or region == "UTC":
        return None
    return Zone(name, ZoneInfo(region))


def zone_after(text: str, end: int) -> tuple[Zone | None, int, str]:
    """The zone written right after a time ending at `end`: (zone, new end, unknown name)."""
    match = ZONE.match(text, end)
    if match is None:
        bare = BARE_PLACE.match(text, end) or ZONE_WORD.match(text, end)
        if bare is not None and (place := _place_zone(bare.group("place"))) is not None:
            return place, bare.end(), ""
        return None, end, ""
    if match.group("iana"):
        try:
            return Zone(match.group("iana"), ZoneInfo(match.group("iana"))), match.end(), ""
        except (ZoneInfoNotFoundError, ValueError):
            return None, end, match.group("iana")
    if match.group("odd"):
        return None, end, match.group("odd")
    written = (match.group("offset") or match.group("abbr") or match.group("lower")
               or match.group("inner") or "")
    if match.group("place"):
        written = f"{match.group('place')} time"
    zone = zone_named(written)
    if zone is None:
        return None, end, written if match.group("place") else ""
    if match.group("place"):
        zone = Zone(f"{match.group('place')} time", zone.tz)
    return zone, match.end(), ""

