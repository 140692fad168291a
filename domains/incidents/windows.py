"""The windows each specialist reads, as of the page's time.

The plan writes them when the page states its date; `page_day.resolve_page_day` writes them
once it has settled the date of a page that gives only a clock time.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

ERRORS_LOOKBACK = timedelta(hours=3)
"""The error summary's window: long enough that a page an hour or more into an incident
still sees its onset (the triage keeps only messages still logged at the page)."""
METRICS_LOOKBACK = timedelta(minutes=30)
WARN_LOOKBACK = timedelta(minutes=30)
"""The paged service's own warnings (a victim that degrades without failing requests)."""
CHANGES_LOOKBACK = timedelta(days=4)
PAGE_TIME = "page_time"
"""The packet input holding the page's moment as read (UTC), for the answer and scoring."""
PAGE_DAY = "page_day"
"""The packet input saying how the date of a page without one was settled."""
DAY_GUESS = "page_day_guess"
"""The packet input set when that date is a guess (nothing, or too little, singles a day
out): no rollback is proposed and the answer asks an engineer for the date."""
UNDATED = "page_undated"
"""The packet input holding a page whose date is still to settle (its text)."""


def iso(moment: datetime) -> str:
    """`2025-06-12T14:07Z`, the tools' form."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")


def window_inputs(worker: str, at: datetime) -> dict[str, str]:
    """The time inputs of `worker`'s packet for a page sent at `at`."""
    until = iso(at)
    errors_since = iso(at - ERRORS_LOOKBACK)
    common = {PAGE_TIME: until}
    if worker == "logs":
        return {**common, "since": errors_since, "until": until, "errors_since": errors_since}
    if worker == "metrics":
        return {**common, "since": iso(at - METRICS_LOOKBACK), "until": until}
    if worker == "deploys":
        return {**common, "since": iso(at - CHANGES_LOOKBACK), "until": until,
                "errors_since": errors_since, "warn_since": iso(at - WARN_LOOKBACK)}
    return common


def page_time_of(inputs: dict[str, str]) -> datetime | None:
    """The page's moment a packet carries, if any."""
    text = inputs.get(PAGE_TIME)
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", ":00+00:00")).astimezone(UTC)
    except ValueError:
        return None
