"""The date of a page that gives only a clock time ("5:38am ET AddToCartErrorBudgetBurn
firing", "at 18:35 Berlin time ..."), settled from the data before the specialists run.

The page's date context is what it names: a release ("the auth 3.9.3 deploy", "shipped
4.12.6 at 8:34am ET", "the inventory deploy 5 min ago"), an onset ("since ~22:35", "for 20
min") and the services it is about. Each day that clock time fell on, from the data's latest
minute back a week, is read once (the error summary of every service over the errors' look-
back) and scored: a change the page names on that day counts most, then an incident message
that begins when the page says the trouble began, then the paged service or another the page
names (not to say it is fine) in trouble at that time, each as much; the paged service logging
far more errors and warnings than on the other days counts too when it is not failing itself.
A change is named by its version, its time or its setting ("the timeout change"); a restart
by on-call the page names at its time ("recs pods were restarted at 09:10") counts as a change
does. More evidence is read in `page_day_evidence.py`: the error a page quotes matched in a
day's incident messages (as much as the onset, less for a near miss), the errors it
describes in its own words, a release it dates by a weekday ("since monday's 1.23.0": on that
day, however long before), a setting written as the data writes it (`promotions.max_stack`),
changes "in the last two hours"; the paged service's warnings far above the other days (a
leak's GC pauses) count as its unusual lines do. The best day wins; on a tie, the latest (a
page is about the recent past); with nothing to go on, the latest. The answer says which day
and why; when nothing singles it out or another day is within `MARGIN` of it, the day is a
guess (`guessed`): no rollback is proposed for it and the answer asks an engineer to
confirm the date, so another day's change is never rolled back.

`resolve_page_day` is the pack's `resolve_facts` (graph/facts.py): the plan leaves such a
page's packets without windows (and the page's text in `page_undated`); this writes the
windows of the settled day and resolves the declared facts again for them.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from graph.facts import SharedFacts, record_lookup, resolve_shared_facts
from workers.contracts import Handoff
from workers.roster import Roster

from .page_day_evidence import (
    Message,
    change_span,
    dated_services,
    dated_versions,
    message_evidence,
    on_dated_day,
    settings_named,
    settings_worded,
)
from .page_received import DAYS_BACK, candidates, received_moment
from .page_time import change_moments, stated_onset, versions_named
from .reading import PageReading, read_page
from .services import said_fine
from .signals import NEW_AFTER, Seen, incident_signals, when
from .triage import possessive
from .windows import DAY_GUESS, ERRORS_LOOKBACK, PAGE_DAY, UNDATED, iso, window_inputs

if TYPE_CHECKING:  # the hub loads the MCP SDK, only once a hub runs
    from workers.hub import ToolHub

SUMMARY = "logs.error_summary"
CHANGES = "deploys.list_changes"
ONSET_SLACK = timedelta(minutes=6)
CHANGE_SLACK = timedelta(minutes=3)
NAMED_CHANGE_SPAN = timedelta(hours=24)
"""A release the page names ("the 4.12.5 deploy") is at most this long before the page."""
DATED_CHANGE_SPAN = timedelta(days=DAYS_BACK + 1)
"""One the page dates by a day ("since monday's 1.23.0") is at most this long before it."""
CHANGES_CHUNK = timedelta(days=2)
"""How many days of changes one look-up reads."""
MARGIN = 1.0
"""A best day ahead of the next by less than this (a tie, or a quote matched a little better)
is a guess: the paged service failing on one day of the week alone (2 points) is not."""
SETTING_SPAN = timedelta(hours=3)
"""A config change the page names by its setting ("after the timeout change") is at most this
long before the page (the page is about its effects)."""
RESTART_WORDS = re.compile(r"\b(?:restart\w*|reboot\w*|bounced)\b", re.IGNORECASE)
RESTARTS = "logs.search_logs"
RESTART_SPAN = timedelta(hours=6)
"""A restart the page names is at most this long before it."""
RESTARTS_READ = timedelta(days=8)
"""The longest window the logs server searches."""
NAMED_TROUBLE = 2
"""What another service the page names (not to say it is fine) in trouble at that time counts:
as much as the paged service failing. A page names the services it sees in trouble: the one it
is about, or the incident it is paged beside ("checkout already has an incident open"); and
the paged service's own trouble may not show as errors at all (a victim that only warns, "no
delivery options", or a healthy service paged beside another's incident)."""
WARNED_MIN = 20
"""The fewest warnings over the look-back that count as unusual for the paged service."""
NOW_SPAN = timedelta(minutes=15)
"""What "in trouble at that time" counts: the paged service's errors and warnings in the
last minutes before the page (an incident that ended earlier that day does not count)."""


@dataclass
class Day:
    """One candidate: the page's moment on one day, and what the data shows then."""

    at: datetime
    score: float = 0.0
    why: str = ""
    errors: int = 0
    failing: bool = False
    """The paged service itself was failing then (its own incident messages)."""
    warnings: int = 0
    """The paged service's warnings over the errors' look-back."""


async def _call(hub: ToolHub, tool: str, args: dict[str, Any]) -> dict[str, Any] | None:
    result = await hub.call(tool, args, [tool])
    record_lookup(tool, args, result)
    if not result.ok:
        return None
    try:
        data = json.loads(result.text)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


async def _changes(hub: ToolHub, since: datetime, until: datetime) -> list[dict[str, Any]]:
    """Every change in [since, until), read `CHANGES_CHUNK` at a time (the hub caps a tool
    result's size, and a week of changes is more than it keeps)."""
    out: list[dict[str, Any]] = []
    start = since
    while start < until:
        end = min(until, start + CHANGES_CHUNK)
        listed = await _call(hub, CHANGES, {"since": iso(start), "until": iso(end),
                                            "limit": 200})
        out += [c for c in (listed or {}).get("changes") or [] if isinstance(c, dict)]
        start = end
    return out


def _data_now(packets: Sequence[Handoff]) -> datetime | None:
    """The data's latest minute, from an error summary already looked up with its default
    window (its `until`)."""
    for packet in packets:
        for fact in packet.facts:
            if fact.tool == SUMMARY and not fact.args.get("until"):
                try:
                    until = json.loads(fact.observation).get("until")
                except (json.JSONDecodeError, AttributeError):
                    continue
                moment = when(until)
                if moment is not None:
                    return moment
    return None


def score_days(reading: PageReading, text: str, days: list[Day],
               summaries: dict[datetime, Seen], changes: list[dict[str, Any]],
               recent: dict[datetime, int] | None = None,
               restarts: Sequence[tuple[str, datetime]] = ()) -> None:
    """Score each candidate day (see the module docstring); each `why` says what matched."""
    assert reading.time is not None
    page = reading.time
    named = set(reading.services)
    fine = said_fine(text)
    dated = dated_versions(text)
    versions = set(versions_named(text)) - set(dated)
    span = change_span(text)
    dated_changes = dated_services(text)
    for day in days:
        reasons: list[str] = []
        near = [c for c in changes if (moment := when(c.get("at"))) is not None
                and day.at - NAMED_CHANGE_SPAN <= moment <= day.at]
        by_version = [c for c in near if str(c.get("to")) in versions
                      and (not named or c.get("service") in named)]
        # A release the page dates by a day ("since monday's 1.23.0"): on that local day,
        # however long before the page (the page says the trouble has run since then).
        by_version += [c for c in changes if str(c.get("to")) in dated
                       and (not named or c.get("service") in named)
                       and (moment := when(c.get("at"))) is not None
                       and on_dated_day(moment, day.at, dated[str(c.get("to"))][1], page.tz)]
        by_day = [c for c in changes if str(c.get("service")) in dated_changes
                  and c.get("kind") != "rollback" and (moment := when(c.get("at"))) is not None
                  and on_dated_day(moment, day.at, dated_changes[str(c.get("service"))][1],
                                   page.tz)]
        in_span = [] if span is None else [
            c for c in changes if (moment := when(c.get("at"))) is not None
            and day.at - span <= moment <= day.at and c.get("service") in named - fine
            and c.get("kind") != "rollback"]
        moments = change_moments(text, page, day.at)
        by_moment = [c for c in near for m in moments
                     if abs((when(c.get("at")) or m) - m) <= CHANGE_SLACK
                     and (not named or c.get("service") in named)]
        by_setting = [c for c in settings_worded(text, near, named) + settings_named(text, near)
                      if day.at - SETTING_SPAN <= (when(c.get("at")) or day.at)]
        restarted = [(service, moment) for service, moment in restarts
                     for m in moments if abs(moment - m) <= CHANGE_SLACK
                     and day.at - RESTART_SPAN <= moment <= day.at
                     and (not named or service in named)]
        if by_version or by_moment or by_setting:
            change = (by_version or by_moment or by_setting)[0]
            day.score += 4
            dated_by = dated.get(str(change.get("to")))
            reasons.append(f"the page names {change.get('service')}'s change "
                           f"{change.get('change_id')} ({change.get('to')}) of "
                           + (f"\"{dated_by[0]}\"" if dated_by else "that day"))
        elif by_day:
            change = by_day[0]
            day.score += 4
            reasons.append(f"the page names {possessive(str(change.get('service')))} change of "
                           f"\"{dated_changes[str(change.get('service'))][0]}\": "
                           f"{change.get('change_id')}")
        elif in_span:
            day.score += 4
            assert span is not None
            changed = ", ".join(sorted({str(c.get("service")) for c in in_span}))
            reasons.append(f"the page says {changed} changed in the "
                           f"{int(span.total_seconds()) // 60} minutes before it: "
                           f"{', '.join(str(c.get('change_id')) for c in in_span)}")
        elif restarted:
            service, moment = restarted[0]
            day.score += 4
            reasons.append(f"the page names {possessive(service)} restart by on-call at "
                           f"{moment:%H:%M} UTC that day")
        summary = summaries.get(day.at)
        if summary is None:
            continue
        since = when(summary.data.get("since")) or day.at - ERRORS_LOOKBACK
        onset = stated_onset(text, page, day.at)
        if onset is not None:
            begun = [
                (str(s.get("service")), e) for s in summary.data.get("services") or []
                for e in s.get("top_errors") or []
                if (first := when(e.get("first_seen"))) is not None and first >= since + NEW_AFTER
                and abs(first - onset) <= ONSET_SLACK and int(e.get("count") or 0) >= 4
            ]
            if begun:
                day.score += 3
                service, error = begun[0]
                reasons.append(f"{service} began logging \"{error.get('message')}\" at "
                               f"{str(error.get('first_seen'))[11:16]} UTC, when the page says "
                               "the trouble began")
        signals, heap = incident_signals(summary)
        troubled = {s.service for s in signals}
        matched, matched_why = message_evidence(
            text, [Message(s.service, s.message) for s in (*signals, *heap)],
            named - fine)
        if matched:
            day.score += matched
            reasons.append(matched_why)
        day.warnings = next((int(s.get("warnings") or 0) for s in summary.data.get("services")
                             or [] if s.get("service") == reading.service), 0)
        if reading.service in troubled:
            day.score += 2
            day.failing = True
            reasons.append(f"{reading.service} was failing at that time")
        elif reading.service in {h.service for h in heap}:
            day.score += 1
            reasons.append(f"{reading.service} was under heap pressure at that time")
        others = sorted((named - {reading.service} - fine) & troubled)
        if others:
            day.score += NAMED_TROUBLE
            reasons.append(f"{', '.join(others)} (named in the page) was failing at that time")
        day.errors = (recent or {}).get(day.at, 0)
        day.why = "; ".join(reasons)
    counts = [d.errors for d in days]
    if len(counts) >= 3:
        usual = statistics.median(counts)
        warned = statistics.median(d.warnings for d in days)
        for day in days:
            # The paged service's own lines: another named service failing then does not
            # make them counted already (a victim that only warns, "no delivery options").
            if day.failing:
                continue
            if day.errors >= max(10, 3 * usual):
                day.score += 1
                day.why = "; ".join(filter(None, [
                    day.why, f"{reading.service} logged {day.errors} errors and warnings in "
                    f"the {NOW_SPAN.seconds // 60} minutes before, against {usual:g} on a "
                    "usual day"]))
            elif day.warnings >= max(WARNED_MIN, 3 * warned):
                # GC-pause warnings of a leak near its limit (no errors yet).
                day.score += 1
                day.why = "; ".join(filter(None, [
                    day.why, f"{reading.service} logged {day.warnings} warnings in the "
                    f"{ERRORS_LOOKBACK.seconds // 3600} h before, against {warned:g} on a "
                    "usual day"]))


def guessed(days: Sequence[Day]) -> bool:
    """True when the best day is a guess: nothing or too little singles it out (a score no
    more than `MARGIN` ahead of the next day, a tie included). One
    candidate (the weekday or date the page gives) is no guess."""
    if len(days) <= 1:
        return False
    best, runner_up = sorted((d.score for d in days), reverse=True)[:2]
    return best <= 0 or best - runner_up < MARGIN


async def settle_day(reading: PageReading, text: str, now: datetime, hub: ToolHub
                     ) -> tuple[datetime | None, str, bool]:
    """The page's moment on the day that fits the data best, why (see the module
    docstring), and whether that day is a guess (`guessed`); (None, why, True) when no day
    is possible."""
    if reading.time is None:
        return None, "the page states no time", True
    moments = candidates(reading, text, now)
    if not moments:
        return None, "no day in the data's last week fits the page's time", True
    days = [Day(m) for m in moments]
    if len(days) > 1:
        earliest = min(moments) - (DATED_CHANGE_SPAN if dated_versions(text)
                                   or dated_services(text) else NAMED_CHANGE_SPAN)
        changes = await _changes(hub, earliest, now)
        restarts: list[tuple[str, datetime]] = []
        if RESTART_WORDS.search(text):
            found = await _call(hub, RESTARTS, {
                "text": "restarted by on-call", "level": "INFO", "until": iso(now),
                "since": iso(max(min(moments) - RESTART_SPAN, now - RESTARTS_READ)),
                "limit": 100})
            restarts = [(str(line.get("service")), moment)
                        for line in (found or {}).get("lines") or [] if isinstance(line, dict)
                        if (moment := when(line.get("ts"))) is not None]
        summaries: dict[datetime, Seen] = {}
        recent: dict[datetime, int] = {}
        for moment in moments:
            args = {"since": iso(moment - ERRORS_LOOKBACK), "until": iso(moment)}
            data = await _call(hub, SUMMARY, args)
            if data is not None:
                summaries[moment] = Seen("error_summary", args, data, "")
            short = {"since": iso(moment - NOW_SPAN), "until": iso(moment),
                     "service": reading.service or ""}
            counted = await _call(hub, SUMMARY, short)
            for service in (counted or {}).get("services") or []:
                recent[moment] = int(service.get("errors") or 0) + int(
                    service.get("warnings") or 0)
        score_days(reading, text, days, summaries, changes, recent, restarts)
    best = max(days, key=lambda d: (d.score, d.at))
    guess = guessed(days)
    if best.score <= 0:
        why = ("nothing in the page or the data singles out a day, so the latest "
               f"{reading.time.written} before the data's latest minute")
    else:
        why = best.why
    if guess and best.score > 0:
        rivals = sum(1 for d in days if d.score == best.score) - 1
        why += (f"; {rivals} other day{'s' if rivals > 1 else ''} fit{'' if rivals > 1 else 's'}"
                " as well, so the latest" if rivals else "; no more than that singles it out")
    return best.at, why, guess


async def resolve_page_day(
    declared: SharedFacts,
    order_ids: Sequence[str],
    *,
    hub: ToolHub,
    roster: Roster,
    received_at: datetime | None = None,
) -> SharedFacts:
    """The pack's `resolve_facts`: a page without a date (or, once received at a known
    moment, without a time) gets the windows of the moment that fits it (module docstring;
    `page_received`) and its declared facts resolved again for them."""
    pending = [p for p in declared.packets if UNDATED in p.inputs]
    if not pending:
        return declared
    text = pending[0].inputs[UNDATED]
    reading = read_page(text)
    if reading.time is None and received_at is None:
        # No time in the text and none from delivery: nothing to read the data as of.
        return SharedFacts(packets=[], notes=[
            "could not settle the page's time (the page states no time and came with no "
            "received time): nothing was triaged"])
    if received_at is not None:
        # The delivery time settles it (page_received.py); the data need not be asked.
        at, why = received_moment(reading, text, received_at)
        guess = False
    else:
        now = _data_now(declared.packets)
        if now is None:
            data = await _call(hub, SUMMARY, {"service": reading.service or ""})
            now = when((data or {}).get("until"))
        at, why, guess = (None, "the data's latest minute could not be read", True) if (
            now is None) else await settle_day(reading, text, now, hub)
    if at is None:
        note = f"could not settle the page's date ({why}): nothing was triaged"
        return SharedFacts(packets=[], notes=[note])
    rewritten = []
    for packet in declared.packets:
        inputs = {k: v for k, v in packet.inputs.items() if k != UNDATED}
        inputs.update(window_inputs(packet.recipient, at))
        inputs[PAGE_DAY] = why
        if guess:
            inputs[DAY_GUESS] = "yes"
        rewritten.append(packet.model_copy(update={"inputs": inputs, "facts": ()}))
    resolved = await resolve_shared_facts(rewritten, order_ids, hub=hub, roster=roster)
    note = (f"page date {'guessed' if guess else 'settled'}: {at:%Y-%m-%d %H:%M} UTC ({why})")
    return SharedFacts(
        packets=resolved.packets, notes=[note, *resolved.notes],
        unknown_orders=resolved.unknown_orders, answered=resolved.answered,
    )

