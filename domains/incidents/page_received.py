"""The page's moment from when it was received, for a page whose text leaves it open.

A pager delivers every page at a known moment (`InputState.received_at`; an eval or batch
line's `paged_at`). That is the alert's own time, which an on-call engineer reads when the
text gives none: a page stating no time is triaged as of its arrival, and one giving a clock
time but no date ("22:14 CEST") is on the latest day that clock time fell on before it
arrived. Neither is silent: the answer says which time it assumed and why
(`answer_time.time_claim`). Without a received time, `page_day` settles the date from the data
and a page stating no time is not triaged.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from .page_time import month_day
from .reading import PageReading

DAYS_BACK = 7
"""How many days before the data's latest minute (or the page's arrival) a page's clock time
may fall on."""
RECEIVED_SLACK = timedelta(minutes=10)
"""How far a page's own clock may run ahead of its delivery (a sender's clock a few minutes
off) and still be that day's."""


def received_moment(
    reading: PageReading, text: str, received: datetime
) -> tuple[datetime | None, str]:
    """The page's moment (UTC) given when it arrived, and why; (None, why) when its clock
    time fell on no day before it arrived (a weekday or date that does not fit)."""
    arrived = received.astimezone(UTC).replace(second=0, microsecond=0)
    if reading.time is None:
        return arrived, (
            f"the page states no time, so it is triaged as of when it was "
            f"received, {arrived:%Y-%m-%d %H:%M} UTC"
        )
    moments = candidates(reading, text, arrived + RECEIVED_SLACK)
    if not moments:
        return None, (
            f"no day before it was received ({arrived:%Y-%m-%d %H:%M} UTC) fits "
            f"{reading.time.written}"
        )
    return moments[0], (
        f"the page was received {arrived:%Y-%m-%d %H:%M} UTC, so the latest "
        f"{reading.time.written} before then"
    )


def candidates(reading: PageReading, text: str, now: datetime) -> list[datetime]:
    """The page's moment on each local day from the data's latest minute back a week (only
    the stated month and day, if the page gives one without a year, or the weekday written
    beside its time), latest first; both halves of the day for a time in words that says
    neither ("ten to four UTC")."""
    assert reading.time is not None
    page = reading.time
    wanted = month_day(text)
    local_now = now.astimezone(page.tz).date()
    out: list[datetime] = []
    for back in range(DAYS_BACK + 1):
        day = local_now - timedelta(days=back)
        if wanted is not None and (day.month, day.day) != wanted:
            continue
        if page.weekday is not None and day.weekday() != page.weekday:
            continue
        for moment in (
            page.on(day),
            page.on(day) + timedelta(hours=12) if page.either_half else None,
        ):
            if moment is not None and moment <= now:
                out.append(moment)
    return sorted(out, reverse=True)
