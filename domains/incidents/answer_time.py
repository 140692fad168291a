"""The page time an incident answer assumed, and how it says so: the packets' moment (the
plan's, or `page_day.resolve_page_day`'s for a page without a date, with how its day was
settled and whether it is a guess), else the text's.

Pure functions over a thread's state.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from graph.state import MusterState
from workers.contracts import Handoff

from .reading import PageReading, read_page
from .windows import DAY_GUESS, PAGE_DAY, page_time_of


def assumed_time(values: MusterState | dict[str, Any]) -> tuple[datetime | None, str]:
    """The page's moment the triage assumed (UTC) and, for a page without a date, how its
    day was settled: the packets' (the plan's, or `resolve_page_day`'s), else the text's."""
    for packet in values.get("packets") or []:
        inputs = packet.inputs if isinstance(packet, Handoff) else dict(
            packet.get("inputs") or {})
        moment = page_time_of(inputs)
        if moment is not None:
            return moment, str(inputs.get(PAGE_DAY) or "")
    return read_page(str(values.get("request") or "")).at, ""


def day_guessed(values: MusterState | dict[str, Any]) -> bool:
    """True when the date of a page without one was only guessed (`page_day.guessed`)."""
    return any(bool((p.inputs if isinstance(p, Handoff) else dict(p.get("inputs") or {}))
                    .get(DAY_GUESS)) for p in values.get("packets") or [])


def time_claim(reading: PageReading, at: datetime | None, day_reason: str,
               guess: bool = False) -> str:
    """How the answer states the page time it assumed ("Page time read as 2025-06-10 13:40
    UTC (09:40 EDT)."), or that it could not tell it."""
    page = reading.time
    if page is None and reading.unknown_zone:
        return (f"Page time: could not tell: \"{reading.unknown_zone}\" is in a zone Muster "
                "does not know, so the page was not triaged as of any time.")
    if page is None and at is not None:
        return (f"Page time: the page states no time, so it was triaged as of when it was "
                f"received: {at:%Y-%m-%d %H:%M} UTC.")
    if page is None:
        return ("Page time: could not tell: the page states no time and came with no "
                "received time, so it was not triaged as of any time (not even the data's "
                "latest minute).")
    if at is None:
        return (f"Page time: could not tell which day \"{page.written}\" is: the page gives no "
                "date and none could be settled from the data.")
    shown = page.local(at)
    text = f"Page time read as {at:%Y-%m-%d %H:%M} UTC"
    if page.zone is None:
        text += " (the page gives no zone: read as UTC)"
    elif shown != f"{at:%H:%M} UTC":
        text += f" ({shown})"
    if page.day is None and guess:
        text += ("; the page gives no date and the day is a guess, not settled by the data"
                 + (f" ({day_reason})" if day_reason else "")
                 + ": an engineer should confirm the date")
    elif page.day is None:
        text += (f"; the page gives no date, so the day is the one whose data fits it: "
                 f"{day_reason}" if day_reason else "; the page gives no date")
    return text + "."
