"""Per-minute behaviour of each service: a daily load curve, plus the stories' effects.

`ServiceModel.values` is the noise-free value of every metric at a minute; the metrics server
stores it with seeded noise (`samples`), and the logs server draws its error and warning lines
from the same rates, so both tell the same story.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from datetime import datetime

from servers.incident_stories import STORIES, Effect, Leak
from servers.incident_world import DATA_AS_OF, METRICS_START, ServiceProfile

SEED = "muster-incident-metrics-v1"
FADE_MIN = 5
"""Minutes an effect takes to fade after its end."""

METRICS: dict[str, tuple[str, str]] = {
    "requests": ("req/min", "requests served per minute"),
    "latency_p50": ("ms", "median response time"),
    "latency_p95": ("ms", "95th-percentile response time"),
    "error_rate": ("ratio", "share of responses that were 5xx (0.01 = 1%)"),
    "cpu": ("ratio", "CPU used, share of the allocation"),
    "db_pool": ("ratio", "database connection pool in use, share of its size"),
    "memory": ("ratio", "memory used, share of the container limit"),
}
"""Metric name -> (unit, meaning). The order is the column order of a sample."""

Values = tuple[float, float, float, float, float, float, float]
"""One minute of one service: the metrics in `METRICS` order."""


def minute_of(when: datetime) -> int:
    """Minutes since the Unix epoch (UTC) of a time, rounded down."""
    return int(when.timestamp()) // 60


_DAY_SHAPE = [
    0.35 + 0.65 * (0.5 - 0.5 * math.cos(2 * math.pi * (m / 60 - 4) / 24)) for m in range(1440)
]  # quietest at 04:00 UTC, busiest at 16:00 UTC


def load(minute: int) -> float:
    """Traffic at a minute as a share of the daily peak (weekends run at 80%)."""
    weekday = (minute // 1440 + 3) % 7  # the epoch's day 0 was a Thursday
    return _DAY_SHAPE[minute % 1440] * (0.8 if weekday >= 5 else 1.0)


_FIRST, _LAST = minute_of(METRICS_START), minute_of(DATA_AS_OF)
_LOADS = [load(m) for m in range(_FIRST, _LAST)]  # the same for every service: computed once


def _strength(start: int, end: int, ramp_min: int, minute: int) -> float:
    """How much of an effect is in force at a minute: 0 before, ramping to 1, fading after."""
    if minute < start:
        return 0.0
    if minute < end:
        return min(1.0, (minute - start + 1) / max(1, ramp_min))
    return max(0.0, 1.0 - (minute - end + 1) / FADE_MIN)


class ServiceModel:
    """One service's profile with the effects and leak the stories give it, as noise-free
    per-minute columns over METRICS_START to DATA_AS_OF (computed once, column by column)."""

    def __init__(self, profile: ServiceProfile) -> None:
        self.profile = profile
        """Its normal behaviour."""
        self.effects = tuple(
            (e, minute_of(e.start), minute_of(e.end))
            for s in STORIES for e in s.effects if e.service == profile.name)
        """Every effect on it, in time order, with its start and end as epoch minutes."""
        leaks = [s.leak for s in STORIES if s.leak is not None and s.leak.service == profile.name]
        self.leak: Leak | None = leaks[0] if leaks else None
        """Its memory leak, if any."""
        self._resets = sorted(map(minute_of, (self.leak.start, *self.leak.restarts))
                              ) if self.leak is not None else []
        self._active: dict[int, list[tuple[Effect, float]]] = {}
        self.columns = self._columns()
        """The metrics in `METRICS` order, one list each, index = minute - first minute."""

    @classmethod
    def of(cls, profile: ServiceProfile) -> ServiceModel:
        """The model of a service, from the stories."""
        return cls(profile)

    def active(self, minute: int) -> list[tuple[Effect, float]]:
        """The effects in force at a minute, with their strength."""
        return self._active.get(minute, [])

    def leak_extra(self, minute: int) -> float:
        """Extra memory share from the leak at a minute (0 before its deploy, and with none;
        each restart sets it back to 0)."""
        if self.leak is None or minute < self._resets[0]:
            return 0.0
        since = max(m for m in self._resets if m <= minute)
        return self.leak.memory_per_hour * (minute - since) / 60

    def values(self, minute: int) -> Values:
        """The noise-free metrics at a minute (inside the data's span)."""
        i = minute - _FIRST
        if not 0 <= i < len(_LOADS):
            raise ValueError(f"minute {minute} is outside the data")
        c = self.columns
        return (c[0][i], c[1][i], c[2][i], c[3][i], c[4][i], c[5][i], c[6][i])

    def _columns(self) -> tuple[list[float], ...]:
        p = self.profile
        requests = [p.rpm * level for level in _LOADS]
        p50 = [p.p50_ms * (0.85 + 0.15 * level) for level in _LOADS]
        p95 = [p.p95_ms * (0.75 + 0.25 * level) for level in _LOADS]
        errors = [p.error_rate] * len(_LOADS)
        cpu = [p.cpu * (0.3 + 0.7 * level) for level in _LOADS]
        pool = [p.db_pool * (0.3 + 0.7 * level) for level in _LOADS]
        memory = [p.memory] * len(_LOADS)
        for effect, start, end in self.effects:
            for minute in range(max(start, _FIRST), min(end + FADE_MIN, _LAST)):
                s, i = _strength(start, end, effect.ramp_min, minute), minute - _FIRST
                if s <= 0:
                    continue
                self._active.setdefault(minute, []).append((effect, s))
                requests[i] *= 1 + (effect.requests_x - 1) * s
                p50[i] *= 1 + (effect.p50_x - 1) * s
                p95[i] *= 1 + (effect.p95_x - 1) * s
                if effect.error_rate is not None:
                    errors[i] += (effect.error_rate - errors[i]) * s
                if effect.cpu is not None:
                    cpu[i] += (effect.cpu - cpu[i]) * s
                if effect.db_pool is not None:
                    pool[i] += (effect.db_pool - pool[i]) * s
        if self.leak is not None:
            for minute in range(max(minute_of(self.leak.start), _FIRST), _LAST):
                extra, i = self.leak_extra(minute), minute - _FIRST
                memory[i] += extra
                p95[i] *= 1 + self.leak.p95_per_memory * extra
                p50[i] *= 1 + 0.5 * extra
                cpu[i] += 0.25 * extra
                errors[i] += max(0.0, memory[i] - 0.88) * 0.5
        clip = [min(v, 1.0) for v in cpu], [min(v, 1.0) for v in pool], [min(v, 1.0)
                                                                          for v in memory]
        return (requests, p50, p95, errors, *clip)


def samples(profile: ServiceProfile) -> Iterator[tuple[str, int, float, float, float, float,
                                                        float, float, float]]:
    """Every stored minute of a service, METRICS_START to DATA_AS_OF, with seeded noise:
    (service, epoch minute, requests, latency_p50, latency_p95, error_rate, cpu, db_pool,
    memory)."""
    requests, p50, p95, errors, cpu, pool, memory = ServiceModel(profile).columns
    uniform = random.Random(f"{SEED}:{profile.name}").random
    n, k = len(_LOADS), 2 * math.sqrt(3)  # (u - 0.5) * k * sd: zero mean, deviation sd

    def noise(sd: float) -> list[float]:
        return [(uniform() - 0.5) * k * sd for _ in range(n)]

    spread = [uniform() for _ in range(n)]
    return zip(
        [profile.name] * n, range(_FIRST, _LAST),
        [float(round(v * (1 + e))) for v, e in zip(requests, noise(0.03), strict=True)],
        [v * (1 + e) for v, e in zip(p50, noise(0.04), strict=True)],
        [v * (1 + e) for v, e in zip(p95, noise(0.06), strict=True)],
        [min(1.0, v * (0.4 + 1.2 * u if v < 0.01 else 0.9 + 0.2 * u))
         for v, u in zip(errors, spread, strict=True)],
        [min(1.0, max(0.0, v + e)) for v, e in zip(cpu, noise(0.015), strict=True)],
        [min(1.0, max(0.0, v + e)) for v, e in zip(pool, noise(0.015), strict=True)],
        [min(1.0, max(0.0, v + e)) for v, e in zip(memory, noise(0.004), strict=True)],
        strict=True,
    )
