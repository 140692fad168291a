"""A page read as of when it was received (`InputState.received_at`, a labelled page's
`paged_at`): a page stating no time is triaged as of its arrival, one giving a clock time
but no date falls on the latest such time before it arrived, and both say so; without a
received time, nothing changes (tests/test_incident_reading.py). Entry points check the form.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from checkpoints.threads import thread_config
from domains.incidents import plugin
from domains.incidents.page_received import received_moment
from domains.incidents.reading import read_page
from domains.incidents.services import paged_service_of
from graph.app.cli import build_parser
from graph.app.eval_domain import load_cases
from graph.app.runtime import open_runtime, stream_run
from graph.domains import load_domain
from graph.received import parse_received_at
from tests.conftest import MusterEnv, calls_so_far
from tests.test_incidents import incident_env, options, seeded

__all__ = ["incident_env", "seeded"]  # fixtures, re-used


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_a_page_stating_no_time_is_read_as_of_its_arrival_to_the_minute() -> None:
    reading = read_page("checkout can't place orders, still failing for everyone")
    at, why = received_moment(reading, "", utc("2025-06-12 14:09:41"))
    assert at == utc("2025-06-12 14:09")
    assert "states no time" in why and "2025-06-12 14:09 UTC" in why


@pytest.mark.parametrize(
    ("page", "received", "expected"),
    [
        # the same day, the clock a little before the arrival
        ("22:14 CEST payments auth failures", "2025-06-10 20:16", "2025-06-10 20:14"),
        # just after midnight UTC: the day before
        ("23:58 UTC cart errors", "2025-06-11 00:05", "2025-06-10 23:58"),
        # a sender's clock a few minutes ahead is still that day
        ("14:12 UTC cart errors", "2025-06-12 14:09", "2025-06-12 14:12"),
        # a weekday beside the time: the latest such weekday before the arrival
        ("Sat 4:18 PM EDT cart errors", "2025-06-12 14:09", "2025-06-07 20:18"),
    ],
)
def test_a_clock_time_without_a_date_falls_on_the_latest_day_before_the_arrival(
    page: str, received: str, expected: str
) -> None:
    reading = read_page(page)
    assert reading.dateless
    at, why = received_moment(reading, page, utc(received))
    assert at == utc(expected)
    assert "received" in why


def test_a_route_of_a_service_throwing_errors_names_it_as_paged() -> None:
    page = (
        "checkout confirm is on fire since r.okafor's 4.13.0 (the multi-currency payment-intent "
        "builder). POST /api/checkout/confirm throwing 500s"
    )
    assert paged_service_of(page) == "checkout"


def test_an_eval_line_gives_its_arrival_in_the_packs_field_and_a_bad_one_is_refused(
    tmp_path: Path,
) -> None:
    pack = load_domain("incidents")
    labels = {"category": "false_alarm", "service": None, "actions": []}
    pages = tmp_path / "pages.jsonl"
    rows: list[dict[str, Any]] = [
        {"id": "p1", "paged_at": "2025-06-12T14:09:00Z", "request": "cart", "labels": labels},
        {"id": "p2", "received_at": "2025-06-12T14:10:00+02:00", "request": "x", "labels": labels},
        {"id": "p3", "request": "cart errors", "labels": labels},
    ]
    pages.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert [c.received_at for c in load_cases(pack, pages)] == [
        "2025-06-12T14:09:00Z", "2025-06-12T14:10:00+02:00", None,
    ]
    rows[0]["paged_at"] = "2025-06-12 14:09"  # no offset: which zone?
    pages.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(Exception, match="p1: received time .* has no offset"):
        load_cases(pack, pages)


def test_run_refuses_a_received_time_it_cannot_read(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    args = parser.parse_args(["run", "x", "--received-at", "2025-06-12T14:09:00Z"])
    assert args.received_at == "2025-06-12T14:09:00Z"
    for bad in ("yesterday", "2025-06-12T14:09"):
        with pytest.raises(SystemExit) as stopped:
            parser.parse_args(["run", "x", "--received-at", bad])
        assert stopped.value.code == 2
        assert "--received-at" in capsys.readouterr().err
    with pytest.raises(ValueError, match="not ISO 8601"):
        parse_received_at("soon")


async def run_page(
    env: MusterEnv, page: str, received_at: str | None
) -> tuple[dict[str, Any], Any]:
    thread = f"recv-{uuid.uuid4().hex[:8]}"
    payload: dict[str, Any] = {"request": page}
    if received_at is not None:
        payload["received_at"] = received_at
    async with open_runtime(options(env)) as runtime:
        await stream_run(runtime, thread, payload)
        snapshot = await runtime.graph.aget_state(thread_config(thread))
    return dict(snapshot.values), snapshot


@pytest.mark.integration
async def test_a_page_with_no_time_is_triaged_as_of_its_arrival_and_says_so(
    incident_env: MusterEnv,
) -> None:
    page = "basket totals not loading, cart errors everywhere"
    values, snapshot = await run_page(incident_env, page, "2025-06-10T19:30:00Z")
    assert calls_so_far(incident_env.call_log, server="logs") > 0
    (pending,) = snapshot.interrupts  # the config change the cart errors follow
    assert pending.value["args"] == {"change_id": "cfg-cart-20250610-1905"}
    answer = plugin.compose_answer(values)  # type: ignore[arg-type]
    assert "triaged as of when it was received: 2025-06-10 19:30 UTC" in answer.text
    assert answer.needs_human  # the text itself states no time: a person confirms it
    # The label is the time the text states: none, whatever the triage went on.
    assert plugin.score(values, {"assumed_time": None})["time"][0]


@pytest.mark.integration
async def test_the_arrival_settles_the_day_of_a_page_without_a_date(
    incident_env: MusterEnv,
) -> None:
    page = "3:30pm EDT basket totals not loading, cart errors"
    # The data alone picks June 10 (tests/test_incident_reading.py); a page received on June
    # 11 is June 11's, however the data looks then, and nothing is rolled back for June 10.
    values, snapshot = await run_page(incident_env, page, "2025-06-11T19:31:00Z")
    assert plugin.assumed_time(values)[0] == utc("2025-06-11 19:30")
    assert not any(
        i.value.get("args") == {"change_id": "cfg-cart-20250610-1905"} for i in snapshot.interrupts
    )
    text = plugin.compose_answer(values).text  # type: ignore[arg-type]
    assert "the page was received 2025-06-11 19:31 UTC" in text
