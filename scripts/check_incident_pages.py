"""Check the hand-labelled page corpus (pages.jsonl, pages_labels.jsonl) against the designed data.

Run from the project root: ``.venv/bin/python scripts/check_incident_pages.py``
(optionally ``[pages.jsonl [labels.jsonl]]``; the labels default to ``<pages>_labels.jsonl``).
The pages written for training after the test split froze are checked the same way:
``.venv/bin/python scripts/check_incident_pages.py domains/incidents/corpus_train/pages.jsonl``
(ids ``tr-001``..; ``pages_b.jsonl``, ids ``tb-001``.., likewise; the corpus-wide counts,
50 pages and 12 healthy pages near other trouble, hold for the first corpus only).

It applies the rules of ``tests/test_incident_servers.py::test_labels_follow_from_the_data`` (and
of LABELS.md) to every page, and reads the generated data the way an on-call engineer would: the
metrics and logs are seeded into a temporary directory from ``servers.incident_world`` /
``servers.incident_stories`` (never from ``var/``, which may be stale), and the change history is
``servers.incident_changes.build_changes()``. On top of the test's rules it checks:

- the stated page time: every time the text gives with a zone (``[2025-06-10 09:40 EDT]``,
  ``2025-06-09T14:40:00+02:00``, ``2:07pm ET``, ``14:07 UTC``, ``16:34 Berlin time``,
  ``today 09:12 (UTC+1)``, ``2025/06/10 21:22 +02:00``, ``0810Z``, ``19h12 UTC``,
  ``18:14 Europe/Berlin``...) is converted to UTC, by one pattern written apart from the pack's
  reader; ``assumed_time`` must be one of them and
  equal ``paged_at``, none may lie after the page, and ``assumed_time`` is null exactly when the
  text holds no clock time at all;
- the page names its ``paged_service`` (by name or on-call vocabulary: basket, sign-in, emails...);
- a page about a story (``inc-NN``/``ho-NN``) has that story's category, cause, onset and change
  (``labels.jsonl``/``heldout_labels.jsonl``), is paged while the story is live in the paged
  service, after its onset, and a victim page's own messages name the causal service;
- the story's designed error lines are first logged at the onset (not before), deploy errors by
  the new version only, and the causal change is logged when it happened;
- a false alarm (``healthy-<service>-<date>``) shows nothing: no effect or leak on the paged
  service in the hour before the page or the same hour a week before, every metric ``similar``
  week over week (the metrics server's own verdict), only everyday noise in its logs; and at
  least twelve of them happen while another service has an incident or just after a change or a
  restart.

Exit status 0 when every check holds; otherwise the failures are listed and the status is 1.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from servers import logs, metrics  # noqa: E402
from servers.incident_changes import Change, build_changes  # noqa: E402
from servers.incident_series import METRICS, ServiceModel, minute_of  # noqa: E402
from servers.incident_stories import STORIES  # noqa: E402
from servers.incident_world import PROFILES, SERVICE_NAMES  # noqa: E402

HERE = ROOT / "domains" / "incidents" / "corpus"
DOMAIN = HERE.parent
ROLLBACK = "deploys.rollback"
CATEGORIES = {"bad_deploy", "config_change", "dependency_outage", "traffic_spike", "slow_leak",
              "false_alarm"}
LABEL_KEYS = {"category", "service", "paged_service", "onset", "change_id", "actions",
              "ruled_out_changes", "assumed_time"}
WEEK = timedelta(days=7)
HOUR = timedelta(hours=1)

# June 2025: summer time everywhere that has it.
ZONES = {"UTC": 0, "Z": 0, "GMT": 0, "EDT": -240, "ET": -240, "PDT": -420, "PT": -420,
         "CEST": 120, "BST": 60, "IST": 330, "JST": 540, "AEST": 600, "BERLIN": 120,
         "EUROPE/BERLIN": 120,
         "EASTERN": -240, "PACIFIC": -420}
_Z = "|".join(sorted(ZONES, key=len, reverse=True))
_DATE = r"(?P<date>\d{4}-\d{2}-\d{2}|\d{4}/\d{2}/\d{2}|\d{2}\.\d{2}\.\d{4}|\d{2}/\d{2}/\d{4})"
_CLOCK = (r"(?:(?P<hh>\d{1,2})[:h](?P<mm>\d{2})(?::\d{2}(?:\.\d+)?)?"
          r"|(?P<hh4>[01]\d|2[0-3])(?P<mm4>[0-5]\d)(?=\s?(?:Z|UTC)\b))"
          r"\s?(?P<ampm>[ap]\.?m\.?)?")
_ZONE = (rf"(?:(?P<zone>\b(?:{_Z})\b)(?![+-]\d)|(?:UTC|GMT)\s?(?P<hours>[+-]\d{{1,2}})\b"
         r"|(?P<offset>[+-]\d{2}):?(?P<offmin>\d{2})\b|(?<=\d)Z\b)")
# `14:07`, `14h07`, and `0745Z` / `1407 UTC` (four digits only with a zone).
TIME_FORMS: list[tuple[str, re.Pattern[str]]] = [
    # A time with a zone, with or without a date before it (ISO, slashes, dots, or the
    # date(1) form `Tue Jun 10 07:40:00 UTC 2025`); a written date elsewhere is the page's.
    ("time", re.compile(rf"(?:{_DATE}[T ]?|\b)(?<![\d:]){_CLOCK}\s?\(?{_ZONE}", re.IGNORECASE)),
]
ANY_CLOCK = re.compile(r"\b\d{1,2}:\d{2}\b|\b\d{1,2} ?(am|pm)\b|\bnoon\b|\bmidnight\b", re.I)

VOCABULARY = {
    "gateway": ("gateway", "edge", " gw "),
    "auth": ("auth", "login", "log in", "sign-in", "sign in", "signin", "logged out",
             "tokensigning", "token signing"),
    "checkout": ("checkout", "place orders", "orderplacement", "order placement"),
    "payments": ("payment", "card auth", "pay team", "pay "),
    "cart": ("cart", "basket"),
    "search": ("search", "results page", "product listings"),
    "inventory": ("inventory", "stock"),
    "shipping": ("shipping", "delivery options", "delivery estimate"),
    "notifications": ("notifications", "emails", "mail"),
    "recommendations": ("recommendations", "recs", "reco", "you may also like",
                        "you might also like"),
    "pricing": ("pricing", "prices", "price", "promo"),
    "profile": ("profile", "account page", "avatar", "addresses"),
}
EVERYDAY_WARNS = ("slow request: over the latency objective",)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def z(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:00Z")


def _day(written: str) -> str:
    """`2025-06-10` from `2025-06-10`, `2025/06/10`, `10.06.2025` or `10/06/2025` (day first)."""
    if re.fullmatch(r"\d{4}[-/]\d{2}[-/]\d{2}", written):
        return written.replace("/", "-")
    d, m, y = re.split(r"[./]", written)
    return f"{y}-{m}-{d}"


def stated_times(text: str, paged: datetime) -> list[tuple[str, datetime]]:
    """Every (form, UTC time) the text states with a zone; dateless ones take the page's local
    date in that zone."""
    found: list[tuple[str, datetime]] = []
    for _, pattern in TIME_FORMS:
        for m in pattern.finditer(text):
            hh = int(m.group("hh") or m.group("hh4"))
            mm = int(m.group("mm") or m.group("mm4"))
            ampm = (m.group("ampm") or "").lower().replace(".", "")
            if ampm:
                hh = hh % 12 + (12 if ampm == "pm" else 0)
            if m.group("zone"):
                name, offset = m.group("zone").upper(), ZONES[m.group("zone").upper()]
            elif m.group("hours"):
                name, offset = f"UTC{m.group('hours')}", int(m.group("hours")) * 60
            elif m.group("offset"):
                sign = -1 if m.group("offset").startswith("-") else 1
                offset = sign * (abs(int(m.group("offset"))) * 60 + int(m.group("offmin")))
                name = f"{m.group('offset')}:{m.group('offmin')}"
            else:
                name, offset = "Z", 0
            day = _day(m.group("date")) if m.group("date") else (
                paged + timedelta(minutes=offset)).strftime("%Y-%m-%d")
            local = datetime.fromisoformat(f"{day}T{hh:02d}:{mm:02d}").replace(tzinfo=UTC)
            form = ("dated " if m.group("date") else "") + ("am/pm " if ampm else "") + name
            found.append((form, local - timedelta(minutes=offset)))
    return found


def mentions(text: str, service: str) -> bool:
    low = text.lower()
    return any(word in low for word in VOCABULARY[service])


class Data:
    """The seeded metrics and logs (temporary files) and the change history."""

    def __init__(self, root: Path) -> None:
        logs.ensure_database(root / "logs.sqlite")
        metrics.ensure_database(root / "metrics.sqlite")
        self.logs = sqlite3.connect(root / "logs.sqlite")
        self.metrics = sqlite3.connect(root / "metrics.sqlite")
        self.changes: dict[str, Change] = {c.change_id: c for c in build_changes()}
        self.models = {name: ServiceModel(PROFILES[name]) for name in SERVICE_NAMES}

    def means(self, service: str, since: datetime, until: datetime) -> dict[str, float]:
        cols = ", ".join(f"AVG({m})" for m in METRICS)
        row = self.metrics.execute(
            f"SELECT {cols} FROM samples WHERE service = ? AND minute >= ? AND minute < ?",
            (service, minute_of(since), minute_of(until))).fetchone()
        return dict(zip(METRICS, row, strict=True))

    def verdicts(self, service: str, since: datetime, until: datetime) -> dict[str, str]:
        now, old = self.means(service, since, until), self.means(service, since - WEEK,
                                                                  until - WEEK)
        return {m: metrics._verdict(m, now[m], old[m])[1] for m in METRICS}

    def lines(self, service: str, since: datetime, until: datetime,
              levels: tuple[str, ...] = ("ERROR", "WARN")) -> list[tuple[int, str, str, str]]:
        marks = ", ".join("?" * len(levels))
        return self.logs.execute(
            f"SELECT ts, level, message, version FROM lines WHERE service = ? AND ts >= ?"
            f" AND ts < ? AND level IN ({marks}) ORDER BY ts",
            (service, since.timestamp(), until.timestamp(), *levels)).fetchall()

    def rate(self, service: str, messages: set[str], since: datetime, until: datetime
             ) -> float:
        """ERROR lines a minute with one of these messages."""
        n = sum(1 for _, _, msg, _ in self.lines(service, since, until, ("ERROR",))
                if msg in messages)
        return n / max(1.0, (until - since).total_seconds() / 60)

    def active(self, service: str, since: datetime, until: datetime) -> bool:
        model = self.models[service]
        return any(model.active(m) or model.leak_extra(m) > 0
                   for m in range(minute_of(since), minute_of(until) + 1))

    def trouble_elsewhere(self, service: str, paged: datetime) -> list[str]:
        """Other services with an effect in force, or a leak shedding, at the page."""
        out = []
        for name, model in self.models.items():
            m = minute_of(paged)
            if name != service and (model.active(m) or model.values(m)[6] > 0.88):
                out.append(name)
        return out


def effects_of(service: str, onset: datetime) -> list[Any]:
    return [e for s in STORIES for e in s.effects if e.service == service and e.start == onset]


def check(data: Data, pages_path: Path, labels_path: Path
          ) -> tuple[list[str], dict[str, Counter[str]]]:
    pages = read_jsonl(pages_path)
    labels = read_jsonl(labels_path)
    stories = {x["id"]: x["labels"] for name in ("labels.jsonl", "heldout_labels.jsonl")
               for x in read_jsonl(DOMAIN / name)}
    known_requests = {x["request"] for name in ("incidents.jsonl", "heldout.jsonl")
                      for x in read_jsonl(DOMAIN / name)}
    fails: list[str] = []
    stats: dict[str, Counter[str]] = {"category": Counter(), "time form": Counter(),
                                      "healthy": Counter(), "paged": Counter()}
    healthy_with_trouble = 0

    def need(ok: bool, where: str, what: str) -> None:
        if not ok:
            fails.append(f"{where}: {what}")

    # The first corpus (`corpus/`, split by a hash) and the pages written for training only
    # after the test split froze (`corpus_train/`, ids tr-001..) are checked the same way; the
    # corpus-wide counts hold for the first one.
    whole = pages_path.parent == HERE
    prefix = "pg" if whole else str(pages[0]["id"]).split("-", 1)[0] if pages else "pg"
    need(len(pages) >= 50 or not whole, "corpus", f"only {len(pages)} pages")
    need([p["id"] for p in pages] == [x["id"] for x in labels], "corpus", "ids differ in order")
    need([p["id"] for p in pages] == [f"{prefix}-{i:03d}" for i in range(1, len(pages) + 1)],
         "corpus", f"ids are not {prefix}-001.. in order")
    need(len({p["request"] for p in pages}) == len(pages), "corpus", "duplicate page text")
    for page, label in zip(pages, labels, strict=False):
        lab, where = label["labels"], f"{page['id']} ({label['labels'].get('category')})"
        need(set(page) == {"id", "paged_at", "group", "request"}, where, "page keys")
        need(set(lab) == LABEL_KEYS and set(label) == {"id", "labels", "why"}, where,
             "label keys")
        need(bool(label.get("why")), where, "empty why")
        need(re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00Z", page["paged_at"]) is not None,
             where, "paged_at format")
        paged, text, cat = at(page["paged_at"]), page["request"], lab["category"]
        need(cat in CATEGORIES, where, "unknown category")
        need(text not in known_requests, where, "text copied from the queue or held-out set")
        stats["category"][cat] += 1
        stats["paged"][lab["paged_service"]] += 1

        # --- the stated time ---------------------------------------------------------------
        stated = stated_times(text, paged)
        if lab["assumed_time"] is None:
            need(not stated and not ANY_CLOCK.search(text), where,
                 "assumed_time is null but the text states a time")
            stats["time form"]["no time in text"] += 1
        else:
            need(lab["assumed_time"] == page["paged_at"], where, "assumed_time != paged_at")
            forms = [f for f, w in stated if z(w) == lab["assumed_time"]]
            need(bool(forms), where, f"no stated time converts to {lab['assumed_time']}: "
                 f"{[(f, z(w)) for f, w in stated]}")
            if forms:
                stats["time form"][forms[0]] += 1
        need(all(w <= paged for _, w in stated), where, "a stated time is after the page")

        # --- the page names its service; the group matches ----------------------------------
        need(lab["paged_service"] in SERVICE_NAMES, where, "unknown paged_service")
        if lab["paged_service"] in SERVICE_NAMES:
            need(mentions(text, lab["paged_service"]), where,
                 f"the text does not name {lab['paged_service']}")
        group = page["group"]
        healthy = re.fullmatch(r"healthy-([a-z]+)-(\d{4}-\d{2}-\d{2})", group)
        if cat == "false_alarm":
            need(healthy is not None and healthy.group(1) == lab["paged_service"]
                 and healthy.group(2) == page["paged_at"][:10], where, f"group {group}")
        else:
            story = stories.get(group)
            need(story is not None, where, f"group {group} is not a story id")
            if story is not None:
                for key in ("category", "service", "onset", "change_id"):
                    need(story[key] == lab[key], where, f"{key} differs from {group}'s label")

        # --- the rules of test_labels_follow_from_the_data -----------------------------------
        recent = {c.change_id for c in data.changes.values()
                  if paged - timedelta(hours=2) <= c.at < paged} - {lab["change_id"]}
        need(set(lab["ruled_out_changes"]) == recent
             and len(lab["ruled_out_changes"]) == len(recent), where,
             f"ruled_out {lab['ruled_out_changes']} != {sorted(recent)}")
        if cat == "false_alarm":
            svc = lab["paged_service"]
            need(lab["service"] is None and lab["onset"] is None and lab["change_id"] is None
                 and not lab["actions"], where, "a false alarm names a cause or an action")
            model = data.models[svc]
            need(not model.active(minute_of(paged)), where, "paged service has an effect")
            since = paged - HOUR
            need(not data.active(svc, since, paged), where, "effect or leak in the hour before")
            need(not data.active(svc, since - WEEK, paged - WEEK), where,
                 "effect or leak the week before")
            verdicts = data.verdicts(svc, since, paged)
            need(set(verdicts.values()) == {"similar"}, where, f"week over week: {verdicts}")
            noise = {msg for _, _, msg in PROFILES[svc].noise_errors}
            odd = {msg for _, level, msg, _ in data.lines(svc, since, paged)
                   if (level == "ERROR" and msg not in noise)
                   or (level == "WARN" and msg not in EVERYDAY_WARNS)}
            need(not odd, where, f"non-noise log lines: {sorted(odd)[:3]}")
            restarts = [r for _, _, r, _ in data.lines(svc, paged - HOUR, paged, ("INFO",))
                        if "restarted" in r or "instance started" in r]
            other_restart = any(
                "restarted by on-call" in msg
                for other in SERVICE_NAMES if other != svc
                for _, _, msg, _ in data.lines(other, paged - HOUR, paged, ("INFO",)))
            if (data.trouble_elsewhere(svc, paged) or lab["ruled_out_changes"] or restarts
                    or other_restart):
                healthy_with_trouble += 1
            stats["healthy"][svc] += 1
            continue
        if lab["onset"] is None or lab["service"] not in SERVICE_NAMES:
            need(False, where, "an incident without onset or service")
            continue
        onset, model = at(lab["onset"]), data.models[lab["service"]]
        before, after = model.values(minute_of(onset) - 2), model.values(minute_of(onset) + 10)
        need(onset <= paged, where, "paged before the onset")
        if cat == "slow_leak":
            need(before[6] == model.profile.memory < after[6], where, "memory does not climb")
            need(model.leak_extra(minute_of(paged)) > 0.4, where, "leak not near the limit")
            verdict = data.verdicts(lab["service"], paged - HOUR, paged)
            need(verdict["memory"] == "higher", where, "memory not higher week over week")
            gc = [m for _, lv, m, _ in data.lines(lab["service"], paged - HOUR, paged)
                  if m.startswith("GC pause")]
            need(bool(gc), where, "no GC pause WARN in the hour before")
        elif cat == "traffic_spike":
            need(after[0] > 2 * before[0] and after[3] > 10 * before[3], where, "no spike")
            if paged - onset > timedelta(minutes=10):  # past the ramp: requests higher w/w
                since = max(onset + timedelta(minutes=10), paged - timedelta(minutes=30))
                need(data.verdicts(lab["service"], since, paged)["requests"] == "higher", where,
                     "requests not higher week over week")
        else:
            need(after[3] > 10 * before[3] and after[0] < 1.2 * before[0], where,
                 "no 5xx jump at the onset (or requests moved)")
        if cat != "slow_leak":
            m = minute_of(paged)
            need(bool(model.active(m)), where, "causal service not affected at the page")
            need(bool(data.models[lab["paged_service"]].active(m)), where,
                 "paged service not affected at the page")
            designed = {msg for e in effects_of(lab["service"], onset) for _, _, msg in e.errors}
            need(bool(designed), where, "no designed error at this onset")
            noise = {msg for _, _, msg in PROFILES[lab["service"]].noise_errors}
            hits = [(ts, ver) for ts, lv, msg, ver in data.lines(
                lab["service"], onset - 6 * HOUR, paged, ("ERROR",))
                if msg in designed - noise]
            if designed - noise:  # a new message: first logged at the onset, not before
                need(bool(hits) and onset.timestamp() <= hits[0][0]
                     < (onset + timedelta(minutes=5)).timestamp(), where,
                     "designed errors not first logged at the onset")
            elif designed:  # an everyday message amplified (ho-06, ho-10): its rate jumps
                during = data.rate(lab["service"], designed, onset, paged)
                usual = data.rate(lab["service"], designed, onset - 6 * HOUR, onset)
                need(during > 20 * max(usual, 0.01), where,
                     "the amplified everyday error does not jump at the onset")
            if lab["change_id"] and cat == "bad_deploy" and hits:
                new = data.changes[lab["change_id"]].to_value
                need({v for _, v in hits} == {new}, where, "errors not only from the new version")
            if lab["paged_service"] != lab["service"]:
                names = [msg for _, _, msg, _ in data.lines(lab["paged_service"], onset, paged)
                         if lab["service"] in msg]
                need(bool(names), where, "the victim's messages do not name the cause")
        if lab["change_id"] is None:
            need(not lab["actions"], where, "an action without a change")
            quiet = {lab["service"], lab["paged_service"]}
            near = [c for c in data.changes.values() if c.service in quiet
                    and onset - 6 * HOUR <= c.at <= onset
                    and c.change_id not in lab["ruled_out_changes"]]
            need(not near, where, f"a change near the onset: {[c.change_id for c in near]}")
            continue
        change = data.changes.get(lab["change_id"])
        if change is None:
            need(False, where, f"unknown change {lab['change_id']}")
            continue
        need(change.service == lab["service"] and change.at <= onset, where, "change mismatch")
        logged = data.logs.execute(
            "SELECT ts FROM lines WHERE service = ? AND message LIKE ?",
            (change.service, f"%({change.change_id})%")).fetchall()
        need(bool(logged) and logged[0][0] == change.at.timestamp()
             or change.at < logs.LOGS_START, where, "change not logged when it happened")
        if cat in ("bad_deploy", "config_change"):
            need(onset - change.at == timedelta(minutes=1), where, "onset is not change + 1 min")
            need(change.kind == ("deploy" if cat == "bad_deploy" else "config"), where, "kind")
        else:
            need(onset == change.at and change.kind == "deploy", where, "leak deploy mismatch")
        later = [c for c in data.changes.values() if (c.service, c.target) == (
            change.service, change.target) and c.at > change.at]
        need(not later, where, f"{change.change_id} is no longer live")
        need(lab["actions"] == [{"tool": ROLLBACK, "args": {"change_id": change.change_id}}],
             where, "actions must be the rollback of change_id")
    need(set(stats["category"]) == CATEGORIES, "corpus", "a category is missing")
    need(healthy_with_trouble >= 12 or not whole, "corpus",
         f"only {healthy_with_trouble} healthy pages near another incident, change or restart")
    stats["healthy"]["(near other trouble)"] = healthy_with_trouble
    return fails, stats


def main(argv: list[str]) -> int:
    pages_path = Path(argv[0]) if argv else HERE / "pages.jsonl"
    labels_path = Path(argv[1]) if len(argv) > 1 else pages_path.with_name(
        pages_path.stem + "_labels.jsonl")
    with tempfile.TemporaryDirectory() as tmp:
        data = Data(Path(tmp))
        try:
            fails, stats = check(data, pages_path, labels_path)
        finally:
            data.logs.close()
            data.metrics.close()
    for name, counter in stats.items():
        print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in sorted(counter.items())))
    if fails:
        print(f"\n{len(fails)} failure(s):")
        for line in fails:
            print("  " + line)
        return 1
    print("\nall checks hold")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
