"""The held-out incidents: written after the triage rules were tuned on the queue, to measure
how they generalise (domains/incidents/heldout.jsonl, heldout_labels.jsonl).

Their labels are checked against the designed data like the queue's (no servers), and the set
is scored through the real path (stdio servers, the real saver, the offline model) against the
done-when targets: cause right on at least 90%, no rollback proposed for a false alarm.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from graph.domains import load_domain
from servers.incident_changes import build_changes
from servers.incident_series import ServiceModel, minute_of
from servers.incident_world import HELDOUT_CHANGES, PROFILES
from tests.conftest import MusterEnv
from tests.test_incidents import incident_env, options, seeded

__all__ = ["incident_env", "seeded"]  # fixtures, shared with the queue's tests

DOMAIN = Path(__file__).resolve().parent.parent / "domains" / "incidents"
ROLLBACK = "deploys.rollback"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_heldout_labels_follow_from_the_data() -> None:
    pages = read_jsonl(DOMAIN / "heldout.jsonl")
    labels = read_jsonl(DOMAIN / "heldout_labels.jsonl")
    queue = {row["id"] for row in read_jsonl(DOMAIN / "incidents.jsonl")}
    assert len(pages) >= 12 and [p["id"] for p in pages] == [x["id"] for x in labels]
    assert not queue & {p["id"] for p in pages}
    assert {x["labels"]["category"] for x in labels} == {
        "bad_deploy", "config_change", "dependency_outage", "traffic_spike", "slow_leak",
        "false_alarm"}
    changes = {c.change_id: c for c in build_changes()}
    assert {c.when for c in HELDOUT_CHANGES} <= {c.at for c in changes.values()}
    requests = {p["id"]: p for p in pages}
    for label in labels:
        lab, page = label["labels"], requests[label["id"]]
        paged, where = at(page["paged_at"]), f"{label['id']} ({lab['category']})"
        assert f"[{paged:%Y-%m-%d %H:%M} UTC]" in page["request"], where
        recent = {c.change_id for c in changes.values()
                  if paged - timedelta(hours=2) <= c.at < paged} - {lab["change_id"]}
        assert set(lab["ruled_out_changes"]) == recent, where
        if lab["category"] == "false_alarm":
            model = ServiceModel(PROFILES[lab["paged_service"]])
            assert lab["service"] is None and lab["change_id"] is None and not lab["actions"]
            assert not model.active(minute_of(paged)) and model.leak is None, where
            continue
        onset, model = at(lab["onset"]), ServiceModel(PROFILES[lab["service"]])
        before, after = model.values(minute_of(onset) - 2), model.values(minute_of(onset) + 10)
        if lab["category"] == "slow_leak":
            assert before[6] == model.profile.memory < after[6], where
            assert model.leak_extra(minute_of(paged)) > 0.4, where
        elif lab["category"] == "traffic_spike":
            assert after[0] > 2 * before[0] and after[3] > 10 * before[3], where
        else:
            assert after[3] > 10 * before[3] and after[0] < 1.2 * before[0], where
        if lab["change_id"] is None:
            assert not lab["actions"], where
            quiet = {lab["service"], lab["paged_service"]}
            assert not [c for c in changes.values() if c.service in quiet
                        and onset - timedelta(hours=6) <= c.at <= onset], where
            continue
        change = changes[lab["change_id"]]
        assert change.service == lab["service"], where
        if lab["category"] == "slow_leak":
            assert onset == change.at and change.kind == "deploy", where
        else:
            assert onset - change.at == timedelta(minutes=1), where
            assert change.kind == ("deploy" if lab["category"] == "bad_deploy" else "config")
        later = [c for c in changes.values() if (c.service, c.target) == (change.service,
                 change.target) and c.at > change.at]
        assert not later, f"{where}: {change.change_id} must still be live"
        assert lab["actions"] == [{"tool": ROLLBACK, "args": {"change_id": change.change_id}}]


@pytest.mark.integration
async def test_the_heldout_incidents_meet_the_cause_and_false_alarm_targets(
    incident_env: MusterEnv,
) -> None:
    from graph.app.eval_domain import evaluate_domain, load_cases

    pack = load_domain("incidents")
    cases = load_cases(pack, DOMAIN / "heldout.jsonl")
    assert len(cases) >= 12 and all(c.id.startswith("ho-") for c in cases)
    results = await evaluate_domain(pack, cases, options(incident_env), concurrency=4)
    assert not [r.error for r in results if r.error]
    share = {
        field: sum(r.fields[field][0] for r in results) / len(results)
        for field in ("cause", "actions", "no_false_alarm_rollback")
    }
    assert share["cause"] >= 0.9, share
    assert share["no_false_alarm_rollback"] == 1.0, share
    assert share["actions"] >= 0.9, share
