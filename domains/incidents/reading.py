"""What a page says before any tool is called: the service it is about, when it was sent,
and what of it the reading could not account for.

`read_page` is pure: the plan, the answer and the scorer read a page the same way. A page
whose service or time cannot be told is not guessed: the parts not understood go to
`TicketReading.unaccounted`, so the answer is partial and asks a human (graph/abstain.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

from .page_time import PageTime, read_page_time
from .services import SERVICES, paged_service_of, services_named

SNIPPET = 90
"""How much of the page an unaccounted part quotes."""


@dataclass(frozen=True)
class PageReading:
    """A page, as read from its text."""

    service: str | None
    """The service it is about: the one its alert or question is about, else the first it
    names (`services.paged_service_of`; None: it names none)."""
    services: tuple[str, ...]
    """Every service it names, in order."""
    time: PageTime | None
    """Its own time (None: the text states none)."""
    unaccounted: tuple[str, ...] = field(default=())
    """What the reading could not account for (each makes the answer partial)."""
    unknown_zone: str = ""
    """A time the page gives in a zone no table knows (`09:15 Springfield time`)."""

    @property
    def at(self) -> datetime | None:
        """The page's moment in UTC, when its text states the date too."""
        return self.time.utc if self.time else None

    @property
    def dateless(self) -> bool:
        """True when the page gives a clock time and zone but no date ("5:38am ET")."""
        return self.time is not None and self.time.day is None and not self.time.unknown_zone

    @property
    def confidence(self) -> float:
        """How much of what the page needs the reading has: its service and its time,
        half each; a time whose date or zone the text does not give counts a little less."""
        score = 0.5 if self.service else 0.0
        if self.time is not None and not self.time.unknown_zone:
            score += 0.5 if self.time.day and self.time.zone else 0.4
        return round(score, 2)


def _snippet(text: str) -> str:
    flat = " ".join(text.split()).replace('"', "'")
    return flat if len(flat) <= SNIPPET else flat[: SNIPPET - 1] + "…"


@lru_cache(maxsize=256)
def read_page(request: str) -> PageReading:
    """The page's service and time, and what could not be told (see `PageReading`); pure, so
    the plan, the answer and the scorer share one reading of a page (cached)."""
    services = tuple(services_named(request))
    page_time = read_page_time(request)
    unaccounted: list[str] = []
    if not services:
        unaccounted.append(
            f"which service the page is about: it names none of {', '.join(SERVICES)} "
            f"(page: '{_snippet(request)}')"
        )
    if page_time is None:
        unaccounted.append(
            f"when the page was sent: its text states no time "
            f"(page: '{_snippet(request)}')"
        )
    elif page_time.unknown_zone:
        unaccounted.append(
            f"the time zone of '{page_time.written} {page_time.unknown_zone}': not a zone "
            "Muster knows, so the page's time is not known"
        )
    return PageReading(
        service=paged_service_of(request) if services else None,
        services=services,
        time=None if page_time is None or page_time.unknown_zone else page_time,
        unaccounted=tuple(unaccounted),
        unknown_zone=f"{page_time.written} {page_time.unknown_zone}" if page_time and (
            page_time.unknown_zone) else "",
    )
