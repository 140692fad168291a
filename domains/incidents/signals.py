"""What the error summary says: the observations (`Seen`) and the incident messages in them
(`Signal`), each with its citation.

An incident message is a top error that is new in the window, still logged at the page,
frequent and fast (rule 1 of `triage.py`); heap messages are kept apart (a slow leak). A
message naming another service ("payments call failed") says which service it is a victim of.
A page a few minutes into a victim's incident (`young_victim_signals`) counts the paged
service's new messages naming a failing service however few they are, when they began right
after that service's own trouble did.

Pure functions, standard library only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from .services import SERVICES

NEW_AFTER = timedelta(minutes=5)
MIN_COUNT = 8
MIN_RATE_PER_MIN = 0.8
YOUNG = timedelta(minutes=10)
"""A burst younger than this at the page (a page a few minutes into an incident) needs only
`YOUNG_MIN_COUNT` lines, at the same rate."""
YOUNG_MIN_COUNT = 3
LIVE_WITHIN = timedelta(minutes=15)
"""A message last logged longer than this before the page has stopped: another, earlier
incident (already over), not what the page is about."""
HEAP = re.compile(r"\bheap\b|\bgc pause\b|out of memory", re.IGNORECASE)


@dataclass(frozen=True)
class Seen:
    """One JSON observation and its citation (`packet/finding`)."""

    tool: str
    """The tool's short name (`error_summary`)."""
    args: dict[str, Any]
    """Its arguments."""
    data: dict[str, Any]
    """What it returned."""
    cite: str
    """`packet_id/finding_id`."""


@dataclass(frozen=True)
class Signal:
    """One incident message in one service."""

    service: str
    message: str
    status: Any
    count: int
    first_seen: datetime
    versions: tuple[str, ...]
    cite: str
    names: str | None
    """Another service the message names (the one this service is a victim of), if any."""


def when(text: Any) -> datetime | None:
    """A tool's `YYYY-MM-DDTHH:MM:SSZ` as an aware datetime."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return None


def seen_from(findings: Iterable[tuple[str, Any]]) -> list[Seen]:
    """`Seen` observations from (cite, finding) pairs; text that is not JSON is skipped."""
    out: list[Seen] = []
    for cite, finding in findings:
        try:
            data = json.loads(finding.observation)
        except (json.JSONDecodeError, TypeError):
            continue
        if isinstance(data, dict):
            tool = str(finding.tool).split(".", 1)[-1]
            out.append(Seen(tool, dict(finding.args), data, cite))
    return out


REASON_PHRASES = re.compile(r"\b(?:bad gateway|gateway time-?out)\b", re.IGNORECASE)
"""HTTP reason phrases that contain a service's name without naming it ("504 Gateway Timeout
from payments" names payments)."""


def named_service(message: str, own: str) -> str | None:
    """The other service a message names first ("payments call failed: 504 Gateway Timeout
    from payments" -> payments), or None."""
    lowered = REASON_PHRASES.sub(" ", message.lower())
    found = [(m.start(), name) for name in SERVICES if name != own
             if (m := re.search(rf"\b{name}\b", lowered))]
    return min(found)[1] if found else None


def incident_signals(summary: Seen) -> tuple[list[Signal], list[Signal]]:
    """(incident messages, heap messages) in an all-services error summary, still being
    logged at its end (the page's time)."""
    since, until = when(summary.data.get("since")), when(summary.data.get("until"))
    signals: list[Signal] = []
    heap: list[Signal] = []
    if since is None or until is None:
        return signals, heap
    for service in summary.data.get("services") or []:
        name = str(service.get("service"))
        for error in service.get("top_errors") or []:
            first = when(error.get("first_seen"))
            last = when(error.get("last_seen")) or first
            if first is None or last is None or last < until - LIVE_WITHIN:
                continue
            count = int(error.get("count") or 0)
            message = str(error.get("message") or "")
            signal = Signal(
                name, message, error.get("status"), count, first,
                tuple(error.get("versions") or ()), summary.cite, named_service(message, name),
            )
            minutes = max(1.0, (until - first).total_seconds() / 60)
            enough = count >= MIN_COUNT or (until - first <= YOUNG and count >= YOUNG_MIN_COUNT)
            if HEAP.search(message) and count >= 3:
                heap.append(signal)
            elif first >= since + NEW_AFTER and enough and count / minutes >= MIN_RATE_PER_MIN:
                signals.append(signal)
    return signals, heap


def young_victim_signals(summary: Seen, paged: str, troubled: set[str],
                         onsets: dict[str, datetime]) -> list[Signal]:
    """The paged service's messages that began in the last minutes before the page and name
    a service in trouble ("payments call failed: 500 from payments", 2 lines, 3 minutes after
    payments' deploy): a page a few minutes into a victim's incident, before its burst is big
    enough to count on its own. However few, a new message naming a failing service is how
    the paged service is affected by it; only when it began right after that service's own
    trouble did (`onsets`), so an everyday message that happens to name it is not read so."""
    since, until = when(summary.data.get("since")), when(summary.data.get("until"))
    if since is None or until is None:
        return []
    out: list[Signal] = []
    for service in summary.data.get("services") or []:
        if service.get("service") != paged:
            continue
        for error in service.get("top_errors") or []:
            first = when(error.get("first_seen"))
            last = when(error.get("last_seen")) or first
            message = str(error.get("message") or "")
            named = named_service(message, paged)
            if (first is None or last is None or named not in troubled
                    or first < max(since + NEW_AFTER, until - YOUNG)
                    or last < until - LIVE_WITHIN):
                continue
            began = onsets.get(named)
            if began is None or not began - timedelta(minutes=1) <= first <= began + YOUNG:
                continue  # not right after the named service's own trouble began: noise
            out.append(Signal(paged, message, error.get("status"), int(error.get("count") or 0),
                              first, tuple(error.get("versions") or ()), summary.cite, named))
    return out
