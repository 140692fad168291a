"""The full deploy and config-change history of the incident world, built deterministically.

The changes the stories rest on (`incident_world.KEY_CHANGES`, and `HELDOUT_CHANGES` for the
held-out set, which the routine draw ignores) are written by hand; around the first,
routine changes are drawn with a fixed seed: on weekdays, in working hours, never inside a
story's quiet span, at least three hours from another change to the same service, and never
after the service's story-bearing deploy or config change (so that change is still the live one
when the data ends, and a rollback of it is allowed). Versions follow: a routine deploy is a
patch release, a story deploy the minor release it names.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from servers.incident_stories import STORIES
from servers.incident_world import (
    DATA_AS_OF,
    HELDOUT_CHANGES,
    KEY_CHANGES,
    METRICS_START,
    PROFILES,
    SERVICES,
)

SEED = "muster-incident-changes-v1"
AUTHORS = ("a.lindqvist", "b.mensah", "c.duarte", "d.nakamura", "e.kowalski", "f.haddad",
           "g.oneill", "h.varga", "i.petrov", "deploy-bot")
ROUTINE_DEPLOYS = (
    "dependency updates", "fix flaky retry in the HTTP client", "add request metrics",
    "refactor request handlers", "bump base image", "remove dead feature flags",
    "improve log messages", "update API docs", "tidy error responses", "upgrade test tooling",
)
DEPLOY_P, CONFIG_P = 0.45, 0.12
MIN_GAP = timedelta(hours=3)


@dataclass(frozen=True)
class Change:
    """One deploy or config change, as the deploys server stores it."""

    change_id: str
    """``dep-<service>-<YYYYMMDD>-<HHMM>`` or ``cfg-<service>-<YYYYMMDD>-<HHMM>``."""
    service: str
    """Service changed."""
    kind: str
    """``deploy`` or ``config``."""
    at: datetime
    """When it was applied (UTC)."""
    author: str
    """Who applied it."""
    target: str
    """What it changes: ``version`` for a deploy, the setting's key for a config change."""
    from_value: str
    """Version or value before."""
    to_value: str
    """Version or value after."""
    summary: str
    """What the change says it does."""


def change_id(kind: str, service: str, when: datetime) -> str:
    """The id of a change: readable, and stable whatever else is in the history."""
    prefix = "dep" if kind == "deploy" else "cfg"
    return f"{prefix}-{service}-{when:%Y%m%d-%H%M}"


def _version(text: str) -> tuple[int, int, int]:
    major, minor, patch = (int(p) for p in text.split("."))
    return major, minor, patch


def _quiet(service: str, when: datetime) -> bool:
    return any(service in s.quiet and s.quiet_from <= when < s.quiet_until for s in STORIES)


def _cutoffs() -> dict[tuple[str, str], datetime]:
    """(service, kind) -> the story-bearing change no routine change may follow."""
    cut: dict[tuple[str, str], datetime] = {}
    for k in KEY_CHANGES:
        if k.kind == "config" or k.to_value:
            cut[(k.service, k.kind)] = max(k.when, cut.get((k.service, k.kind), k.when))
    return cut


def _routine() -> list[tuple[str, str, datetime, str, str, int]]:
    """(service, kind, at, author, summary, config key index) of the routine changes."""
    rng = random.Random(SEED)
    cutoffs = _cutoffs()
    taken: dict[str, list[datetime]] = {s.name: [] for s in SERVICES}
    for k in KEY_CHANGES:
        taken[k.service].append(k.when)
    out = []
    day = METRICS_START
    while day < DATA_AS_OF:
        for profile in SERVICES:
            draws = (rng.random(), rng.randrange(9 * 60, 17 * 60 + 30), rng.random(),
                     rng.randrange(9 * 60, 17 * 60 + 30), rng.randrange(len(AUTHORS)),
                     rng.randrange(len(ROUTINE_DEPLOYS)), rng.randrange(len(profile.config_keys)))
            for kind, p, minute in (("deploy", draws[0], draws[1]), ("config", draws[2], draws[3])):
                when = day + timedelta(minutes=minute)
                if day.weekday() >= 5 or p >= (DEPLOY_P if kind == "deploy" else CONFIG_P):
                    continue
                cutoff = cutoffs.get((profile.name, kind))
                if (when >= DATA_AS_OF or _quiet(profile.name, when)
                        or (cutoff is not None and when >= cutoff)
                        or any(abs(when - t) < MIN_GAP for t in taken[profile.name])):
                    continue
                taken[profile.name].append(when)
                summary = ROUTINE_DEPLOYS[draws[5]] if kind == "deploy" else ""
                out.append((profile.name, kind, when, AUTHORS[draws[4]], summary, draws[6]))
        day += timedelta(days=1)
    return out


def build_changes() -> list[Change]:
    """Every change of the world, oldest first (ties by id), with versions and values chained."""
    drafts: list[tuple[datetime, str, str, str, str, str, str, str]] = []
    # (at, service, kind, author, summary, key, from (config), to (key deploy / config))
    for k in (*KEY_CHANGES, *HELDOUT_CHANGES):  # held-out ones never steer the routine draw
        drafts.append((k.when, k.service, k.kind, k.author, k.summary, k.key, k.from_value,
                       k.to_value))
    for service, kind, when, author, summary, key_index in _routine():
        key, value, other = PROFILES[service].config_keys[key_index]
        if kind == "config":
            drafts.append((when, service, kind, author, summary, key, value, other))
        else:
            drafts.append((when, service, kind, author, summary, "", "", ""))
    drafts.sort(key=lambda d: (d[0], d[1], d[2]))
    versions = {s.name: s.version for s in SERVICES}
    settings: dict[tuple[str, str], str] = {}
    changes = []
    for when, service, kind, author, summary, key, from_value, to_value in drafts:
        if kind == "deploy":
            current = versions[service]
            if to_value:
                if _version(to_value) <= _version(current):
                    raise AssertionError(f"{service} {to_value} is not after {current}")
                new = to_value
            else:
                major, minor, patch = _version(current)
                new = f"{major}.{minor}.{patch + 1}"
            versions[service] = new
            changes.append(Change(change_id(kind, service, when), service, kind, when, author,
                                  "version", current, new, summary))
            continue
        before = settings.get((service, key), from_value)
        after = to_value if before == from_value else from_value  # routine keys alternate
        settings[(service, key)] = after
        text = summary or f"set {key} to {after}"
        changes.append(Change(change_id(kind, service, when), service, kind, when, author, key,
                              before, after, text))
    return changes
