"""Incident triage as a pure function: from what the specialists observed to the likely cause.

`diagnose` reads the observations (the error summary of every service, the paged service's
heap and other warnings, its week-over-week metrics, the changes of the last days), each with its
citation, and returns a `Diagnosis`: the category, the causal service and change, the onset,
the evidence, what is ruled out and why, and what is still unknown. The deploys worker's
proposal rule and the answer both call it, so the rollback proposed is the cause the answer
names. Rules, in order:

1. An incident message is a top error that is new in the window (first seen at least 5
   minutes after its start), still logged at the page (last seen within 15 minutes of it: an
   incident over by then is not what the page is about), frequent (8 or more; 3 or more when
   it began under 10 minutes before the page) and fast (at least 0.8 a minute since it
   began); everyday noise is none of these. A message naming another service ("payments call
   failed") marks its service as a victim of that one, but only when the named service shows
   trouble of its own in the same summary (incident messages or heap pressure): a caller
   that gives up on a healthy dependency ("payments call timed out after 300ms", with
   payments quiet) is failing on its own. HTTP reason phrases ("504 Gateway Timeout") name
   no service. A page a few minutes into a victim's incident counts the paged service's new
   messages naming a failing service however few they are, when they began right after that
   service's own trouble did (`signals.young_victim_signals`).
2. The causal service is reached from the paged one: the paged service itself when it has
   incident messages of its own, else the service its messages or its warnings name
   ("shipping quote failed (500 from shipping)": a victim that degrades without failing),
   followed to the service that names no other. A paged service that shows nothing of
   another service's incident is not affected by it: that incident (and its change) is
   reported as another service's, never this page's cause, and nothing of it is rolled back.
3. A deploy or config change of the causal service in the 15 minutes before the onset is the
   cause (bad_deploy, config_change): roll it back.
4. Heap pressure (GC-pause warnings, "heap above" sheds) or memory far above the week before
   is a slow leak: the service's last deploy within the look-back started it; roll it back.
   Only the paged service, the causal one or one the paged service's errors name counts: a
   leak elsewhere is another incident, not this page's cause.
5. No change: traffic well above the week before (over the window, or already in its last
   minute) is a traffic spike; a victim paged for another service's failure, or a service
   failing with no change and usual traffic while its messages name a dependency (a
   provider, a database, a timeout, a refused connection), is a dependency outage; neither
   rolls anything back. Traffic well above the week before with no new error message is a
   spike too (overload before any 5xx).
6. No incident message of the paged service's and its metrics as the week before: a false
   alarm, whatever was deployed and whatever other service is failing; but not while its
   last minute is far off the week before (a page minutes into trouble stays open).

Ruled out: every other change in the two hours before the page, with the reason; while the
cause is unknown, never a change of the paged or causal service made in the last 15 minutes
(its errors may not have shown yet), nor the change another service's fresh incident follows
(the paged service may not show it yet).

The observations and the incident messages in them are read in `signals.py`.

Which service a page is about (by name, alert name or on-call words, and the role each
mention plays in its sentence) is read in `services.py`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from .services import ALIASES as ALIASES  # re-exported: read from here before services.py
from .services import SERVICES as SERVICES
from .services import service_named as service_named
from .services import services_named as services_named
from .signals import (
    HEAP,
    LIVE_WITHIN,
    Seen,
    Signal,
    incident_signals,
    when,
    young_victim_signals,
)
from .signals import named_service as _named_service
from .signals import seen_from as seen_from

DEPENDENCY = re.compile(
    r"time(?:d)? ?out|unavailable|refused|unreachable|provider|upstream|failover|"
    r"connection|returned \d{3}|\bdb\b|-db\b|circuit|dns|tls|certificate",
    re.IGNORECASE,
)
"""Words of a message that blames something the service calls (a database, a provider...)."""
TOO_RECENT = timedelta(minutes=15)
"""A change of the paged service this close to the page is never ruled out while the
cause is unknown: its errors may not have had time to show."""
CHANGE_BEFORE_ONSET = timedelta(minutes=15)
RULED_OUT_SPAN = timedelta(hours=2)
SPIKE_RATIO = 1.5
SPIKE_NOW_RATIO = 2.0
"""The window's last minute of traffic against the week before's mean that is a spike
already (a page a few minutes into a surge, before the window's mean moves)."""


@dataclass
class Diagnosis:
    """The likely cause of an incident and what it rests on."""

    category: str
    """bad_deploy, config_change, dependency_outage, traffic_spike, slow_leak, false_alarm,
    or unknown."""
    service: str | None
    """The causal service."""
    paged_service: str | None
    """The service the page is about."""
    change: dict[str, Any] | None = None
    """The causal change (a `list_changes` entry), if any."""
    change_cite: str = ""
    """Where the change was observed."""
    onset: datetime | None = None
    """When the causal service began to misbehave."""
    evidence: list[tuple[str, list[str]]] = field(default_factory=list)
    """Sentences and the findings each rests on."""
    ruled_out: list[tuple[str, str, list[str]]] = field(default_factory=list)
    """(change id, why not, cites)."""
    unknown: list[str] = field(default_factory=list)
    """What the observations could not settle."""
    other: str | None = None
    """Another service with an incident of its own at the page's time that does not reach
    the paged service (so it is not this page's cause)."""
    other_change: dict[str, Any] | None = None
    """The change that other incident follows, if any (never rolled back for this page)."""

    @property
    def change_id(self) -> str | None:
        """The causal change's id."""
        return str(self.change["change_id"]) if self.change else None

    @property
    def rollback(self) -> bool:
        """True when the mitigation is rolling the causal change back."""
        return self.change is not None and self.category in (
            "bad_deploy", "config_change", "slow_leak"
        )


def hhmm(moment: datetime | None) -> str:
    """14:03 (with the date when it is not the page's day: callers add it)."""
    return moment.strftime("%H:%M") if moment else "?"



def _search(seen: Sequence[Seen], *, text: str | None = None, level: str | None = None
            ) -> Seen | None:
    """The first `search_logs` observation with these filters (`text=""`: none)."""
    for item in seen:
        if item.tool != "search_logs":
            continue
        if text is not None and str(item.args.get("text") or "") != text:
            continue
        if level is not None and str(item.args.get("level") or "").upper() != level:
            continue
        return item
    return None


def _week_over_week(seen: Sequence[Seen], service: str | None) -> dict[str, dict[str, Any]]:
    for item in seen:
        if item.tool == "compare_week_over_week" and item.data.get("service") == service:
            return {str(m.get("metric")): {**m, "cite": item.cite}
                    for m in item.data.get("metrics") or [] if isinstance(m, dict)}
    return {}


def _changes(seen: Sequence[Seen], until: datetime | None) -> tuple[list[dict[str, Any]], str]:
    for item in seen:
        if item.tool == "list_changes":
            changes = [
                c for c in item.data.get("changes") or []
                if isinstance(c, dict) and c.get("kind") in ("deploy", "config")
                and (until is None or (when(c.get("at")) or until) <= until)
            ]
            return changes, item.cite
    return [], ""


def _describe(change: dict[str, Any]) -> str:
    kind = change.get("kind")
    what = "deploy" if kind == "deploy" else f"config change of {change.get('target')}"
    return (f"{change.get('service')} {what} {change.get('change_id')} "
            f"({change.get('from')} -> {change.get('to')}) at {hhmm(when(change.get('at')))} "
            f"by {change.get('author')}")


def _warned_about(seen: Sequence[Seen], paged: str | None, until: datetime | None,
                  troubled: set[str]) -> list[tuple[str, str, datetime, str]]:
    """(service, message, first seen, cite) for the paged service's recent WARN lines that
    name a service in trouble ("shipping quote failed (500 from shipping)"): a victim that
    degrades without failing its own requests."""
    item = _search(seen, text="", level="WARN")
    if item is None or paged is None:
        return []
    out: dict[str, tuple[str, str, datetime, str]] = {}
    for line in item.data.get("lines") or []:
        if not isinstance(line, dict) or line.get("service") != paged:
            continue
        moment = when(line.get("ts"))
        if moment is None or (until is not None and moment < until - LIVE_WITHIN):
            continue
        message = str(line.get("message") or "")
        named = _named_service(message, paged)
        if named in troubled:
            seen_first = out.get(named)
            if seen_first is None or moment < seen_first[2]:
                out[named] = (named, message, moment, item.cite)
    return list(out.values())


def _change_before(changes: Sequence[dict[str, Any]], service: str, onset: datetime
                   ) -> dict[str, Any] | None:
    """The service's last change in the 15 minutes before its onset (or that minute)."""
    before = [
        c for c in changes
        if c.get("service") == service and (moment := when(c.get("at"))) is not None
        and onset - CHANGE_BEFORE_ONSET <= moment <= onset + timedelta(minutes=1)
    ]
    return max(before, key=lambda c: str(c.get("at"))) if before else None


def possessive(name: str | None) -> str:
    """`payments'`, `checkout's`."""
    text = str(name)
    return text + ("'" if text.endswith("s") else "'s")


def _spiking(requests: dict[str, Any] | None) -> bool:
    """Traffic well above the week before: over the window, or in its last minute."""
    if not requests:
        return False
    if requests.get("change") == "higher" or float(requests.get("mean_ratio") or 0) >= (
            SPIKE_RATIO):
        return True
    last = float((requests.get("current") or {}).get("last") or 0)
    before = float((requests.get("week_before") or {}).get("mean") or 0)
    return before > 0 and last >= SPIKE_NOW_RATIO * before


MOVING_NOW = {"error_rate": (3.0, 0.01), "latency_p95": (1.8, 0.0)}
"""(ratio, least difference) of the window's last minute against the week before's mean
that says a metric is moving right now, before the window's mean shows it."""


def _moving_now(metrics: dict[str, dict[str, Any]]) -> list[str]:
    """Metrics whose last minute is far off the week before (a page minutes into trouble)."""
    out = []
    for name, (ratio, least) in MOVING_NOW.items():
        metric = metrics.get(name) or {}
        last = float((metric.get("current") or {}).get("last") or 0)
        before = float((metric.get("week_before") or {}).get("mean") or 0)
        if before > 0 and last >= ratio * before and last - before >= least:
            out.append(f"{name} {last:g} against {before:g}")
    return out


def _traffic(requests: dict[str, Any]) -> str:
    current, before = requests.get("current") or {}, requests.get("week_before") or {}
    if float(requests.get("mean_ratio") or 0) >= SPIKE_RATIO:
        return (f"{requests.get('mean_ratio')}× the week before ({current.get('mean')} against "
                f"{before.get('mean')} requests a minute)")
    return (f"{current.get('last')} requests a minute in its last minute against "
            f"{before.get('mean')} the week before (rising)")


def diagnose(seen: Sequence[Seen], *, paged: str | None, at: datetime | None) -> Diagnosis:
    """The likely cause from the observations (see the module docstring for the rules)."""
    summary = next((s for s in seen if s.tool == "error_summary" and not s.args.get("service")),
                   None)
    signals, heap = incident_signals(summary) if summary else ([], [])
    until = at or (when(summary.data.get("until")) if summary else None)
    pressure = _search(seen, text="heap")
    if pressure is not None:
        for line in pressure.data.get("lines") or []:
            moment = when(line.get("ts")) if isinstance(line, dict) else None
            if moment is None or (until is not None and moment < until - LIVE_WITHIN):
                continue
            if HEAP.search(str(line.get("message") or "")):
                heap.append(Signal(
                    str(line.get("service")), str(line.get("message")), None,
                    int(pressure.data.get("total") or 1), moment,
                    (str(line.get("version")),), pressure.cite, None,
                ))
                break
    changes, changes_cite = _changes(seen, until)
    diag = Diagnosis(category="unknown", service=None, paged_service=paged)
    if summary is None:
        diag.unknown.append("the error summary of every service could not be read")
    if not changes_cite:
        diag.unknown.append("the deploy and config-change history could not be read")

    # 1: a victim only of a service in trouble of its own.
    troubled = {s.service for s in signals} | {h.service for h in heap}
    signals = [s if s.names is None or s.names in troubled else replace(s, names=None)
               for s in signals]
    if summary is not None and paged is not None and paged not in {s.service for s in signals}:
        onsets: dict[str, datetime] = {}
        for signal in [*signals, *heap]:
            onsets[signal.service] = min(signal.first_seen, onsets.get(signal.service,
                                                                        signal.first_seen))
        signals += young_victim_signals(summary, paged, troubled, onsets)
    by_service: dict[str, list[Signal]] = {}
    for signal in signals:
        by_service.setdefault(signal.service, []).append(signal)

    def root_of(service: str, path: tuple[str, ...] = ()) -> str | None:
        own = by_service.get(service) or []
        if any(s.names is None for s in own):
            return service
        for signal in sorted(own, key=lambda s: s.first_seen):
            if signal.names and signal.names not in path:
                return root_of(signal.names, (*path, service)) or signal.names
        return service if service in troubled else None

    # 2: the causal service, reached from the paged one: its own errors, or errors or
    # warnings of the paged service that name a service in trouble (a victim).
    causal: str | None = None
    warned = _warned_about(seen, paged, until, troubled)
    if paged is not None and paged in by_service:
        causal = root_of(paged)
    elif warned:
        named = min(warned, key=lambda w: w[2])
        causal = root_of(named[0]) or named[0]
    elif paged is None and signals:
        roots = [s for s in signals if s.names is None]
        causal = min(roots or signals, key=lambda s: s.first_seen).service
    if causal is None and signals:
        # Another service has an incident the paged service shows no sign of.
        roots = [s for s in signals if s.names is None] or signals
        diag.other = min(roots, key=lambda s: s.first_seen).service
    if causal is not None:
        own = by_service.get(causal) or [s for s in signals if s.names == causal]
        diag.service = causal
        if own:
            diag.onset = min(s.first_seen for s in own).replace(second=0)
        for signal in own[:2]:
            versions = f" (only from version {', '.join(signal.versions)})" if len(
                signal.versions) == 1 else ""
            diag.evidence.append((
                f"From {hhmm(signal.first_seen)} {signal.service} logged {signal.count} × "
                f"{signal.status} \"{signal.message}\"{versions}, new in the window.",
                [signal.cite],
            ))
        victims = [s for s in signals if s.names == causal and s.service != causal]
        for victim in victims[:2]:
            diag.evidence.append((
                f"{victim.service} failed because of it from {hhmm(victim.first_seen)}: "
                f"{victim.count} × \"{victim.message}\".",
                [victim.cite],
            ))
        for service, message, first, cite in warned:
            if paged != causal and not any(v.service == paged for v in victims):
                diag.evidence.append((
                    f"{paged} is affected through {service}: it warns \"{message}\" "
                    f"(from {hhmm(first)} in the lines read).", [cite],
                ))
                break

    # 3: a change of the causal service just before the onset.
    if causal is not None and diag.onset is not None:
        change = _change_before(changes, causal, diag.onset)
        if change is not None:
            diag.change, diag.change_cite = change, changes_cite
            diag.category = "bad_deploy" if change.get("kind") == "deploy" else "config_change"
            gap = (diag.onset - when(change["at"])).total_seconds()  # type: ignore[operator]
            diag.evidence.insert(0, (
                f"The {_describe(change)} came {max(1, round(gap / 60))} min before "
                "the errors began in the same service.",
                [changes_cite],
            ))

    metrics = _week_over_week(seen, paged)
    errors = metrics.get("error_rate")
    if diag.change is not None and causal == paged and errors and errors.get("change") == "higher":
        load = metrics.get("requests") or {}
        diag.evidence.append((
            f"{paged} error_rate averages {errors['current'].get('mean')} against "
            f"{errors['week_before'].get('mean')} the week before; requests are "
            f"{load.get('change', 'unknown')} (not a traffic spike).", [str(errors["cite"])],
        ))
    # 4: a slow leak, in the paged service, the causal one or one the paged one's errors name.
    related = {paged, causal} | {s.names for s in signals if s.service == paged}
    heap = [h for h in heap if h.service in related]
    leak_service = heap[0].service if heap else None
    memory = metrics.get("memory")
    if diag.change is None and leak_service is None and memory and memory.get("change") == (
        "higher"
    ) and causal is None:
        leak_service = paged
    if diag.change is None and leak_service is not None:
        deploys = [c for c in changes if c.get("service") == leak_service
                   and c.get("kind") == "deploy"]
        heap_versions = {v for s in heap for v in s.versions}
        started = [c for c in deploys if c.get("to") in heap_versions] or deploys
        diag.category, diag.service = "slow_leak", leak_service
        if heap:
            diag.evidence.append((
                f"{leak_service} is under heap pressure: \"{heap[0].message}\" "
                f"(version {', '.join(sorted(heap_versions))}).", [heap[0].cite],
            ))
        if memory and leak_service == paged:
            diag.evidence.append((
                f"{paged} memory averages {memory['current'].get('mean')} of its limit against "
                f"{memory['week_before'].get('mean')} the week before.", [str(memory["cite"])],
            ))
        if started:
            change = max(started, key=lambda c: str(c.get("at")))
            diag.change, diag.change_cite = change, changes_cite
            diag.onset = when(change.get("at"))
            diag.evidence.insert(0, (
                f"The leak began with the {_describe(change)} on "
                f"{str(change.get('at'))[:10]}: the service's last deploy.", [changes_cite],
            ))
        else:
            diag.unknown.append(f"which change started the leak in {leak_service}")

    # 5: no change to blame.
    requests = metrics.get("requests")
    if diag.category == "unknown" and causal is not None:
        if requests and _spiking(requests) and causal == paged:
            diag.category = "traffic_spike"
            diag.evidence.append((
                f"{paged} traffic is {_traffic(requests)}: load, not a change.",
                [str(requests["cite"])],
            ))
        elif causal != paged:
            diag.category = "dependency_outage"
        elif own_dependency := next(
                (s for s in by_service.get(causal, []) if DEPENDENCY.search(s.message)), None):
            diag.category = "dependency_outage"
            diag.evidence.append((
                f"{possessive(causal)} own errors blame something it calls: "
                f"\"{own_dependency.message}\"; its traffic is as usual.", [own_dependency.cite],
            ))
        elif not metrics:
            diag.unknown.append(
                f"whether {causal} is overloaded (traffic) or failing on its own: no metrics"
            )
        else:
            diag.unknown.append(
                f"why {causal} fails: no change of its own, and its traffic is as usual"
            )
        if diag.category in ("dependency_outage", "traffic_spike") and changes_cite:
            diag.evidence.append((
                f"No deploy or config change of {causal} in the 15 minutes before its onset.",
                [changes_cite],
            ))
    # 6: nothing of the paged service's own moved (another service's incident aside).
    if diag.category == "unknown" and causal is None and leak_service is None:
        moved = [m for m, v in metrics.items() if v.get("change") != "similar"]
        if requests and _spiking(requests):
            diag.category, diag.service = "traffic_spike", paged
            diag.evidence.append((
                f"{paged} traffic is {_traffic(requests)} with no new error message yet: "
                "load, not a change.", [str(requests["cite"])],
            ))
        elif metrics and not moved and (now := _moving_now(metrics)):
            # Never closed as a false alarm while its last minute is off: a page minutes
            # into trouble, before a burst of errors is logged (its own recent change is not
            # ruled out either, below). The metrics are not in the deploys specialist's view,
            # so no change is blamed from them alone.
            diag.unknown.append(
                f"whether {paged} is just starting to fail: its last minute is off the week "
                f"before ({'; '.join(now)}) with no error burst yet; look again in a few minutes"
            )
        elif metrics and not moved:
            diag.category = "false_alarm"
            cite = str(next(iter(metrics.values()))["cite"])
            diag.evidence.append((
                f"Every {paged} metric is as the week before (week over week: similar "
                "throughout) and "
                + (f"{paged} logged no new burst of errors." if diag.other else
                   "no service logged a new burst of errors."),
                [cite] + ([summary.cite] if summary else []),
            ))
        elif not metrics and paged is not None:
            diag.unknown.append(
                f"whether {paged} metrics moved: without them a false alarm cannot be told "
                "from a quiet failure"
            )
        elif moved:
            diag.unknown.append(f"why {paged} {', '.join(moved)} moved with no error burst")
    if diag.other is not None:
        other = by_service.get(diag.other) or []
        other_onset = min((s.first_seen for s in other), default=None)
        if other_onset is not None:
            diag.other_change = _change_before(changes, diag.other,
                                               other_onset.replace(second=0))
        after = f" after {diag.other_change.get('change_id')}" if diag.other_change else ""
        sample = other[0] if other else None
        diag.evidence.append((
            f"{diag.other} has an incident of its own{after} (from {hhmm(other_onset)}"
            + (f": {sample.count} × \"{sample.message}\"" if sample else "")
            + f"), but nothing {paged} logged names it or shows it: not this page's cause.",
            [sample.cite] if sample else [],
        ))

    # Ruled out: every other change in the two hours before the page.
    if until is not None:
        for change in changes:
            moment = when(change.get("at"))
            if moment is None or moment < until - RULED_OUT_SPAN or change is diag.change:
                continue
            owner = change.get("service")
            if diag.category == "unknown" and (owner in (paged, causal) and (
                    moment >= until - TOO_RECENT or owner == causal)
                    or change is diag.other_change):
                diag.unknown.append(
                    f"whether {change.get('change_id')} is involved: the cause is not known yet "
                    "and it is too close to rule out")
                continue
            if diag.onset is not None and moment > diag.onset and owner == diag.service:
                why = f"it came after the onset at {hhmm(diag.onset)}"
            elif diag.onset is not None and moment > diag.onset:
                why = (f"it came after the onset at {hhmm(diag.onset)}, in another service "
                       f"({owner})")
            elif diag.other_change is not None and change is diag.other_change:
                why = (f"it is behind {possessive(owner)} own incident, which does not reach "
                       f"{paged}: rolling it back is for {possessive(owner)} page, not this one")
            elif owner not in by_service:
                why = f"{owner} logged no new errors after it"
            else:
                why = f"the errors of {owner} do not start right after it"
            diag.ruled_out.append((str(change.get("change_id")), why, [changes_cite]))
    return diag
