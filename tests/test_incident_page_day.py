"""The day of a page that gives only a clock time: the evidence an on-call engineer reads it
from (the errors the page quotes or describes, a release dated by a weekday, a setting named
as the data writes it, changes "in the last two hours"), the guess when nothing settles it
(no rollback, a human asked), and clock times written in words.

Pure: hand-made error summaries and change lists over the designed data's shapes
(`tests/test_incident_reading.py`'s helpers), and a fake hub for the change look-ups.
"""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta
from types import SimpleNamespace
from typing import Any

from domains.incidents import plugin, triage
from domains.incidents.page_day import Day, _changes, candidates, guessed, score_days
from domains.incidents.page_day_evidence import (
    change_span,
    dated_services,
    dated_versions,
    message_evidence,
    settings_named,
)
from domains.incidents.page_time import read_page_time
from domains.incidents.reading import read_page
from domains.incidents.services import paged_service_of
from domains.incidents.windows import DAY_GUESS
from tests.test_incident_reading import (
    cart_incident,
    findings,
    noise,
    service,
    summary,
    utc,
)
from workers.contracts import Handoff

JUNE = (12, 11, 10, 9, 8)


def _days(text: str, bodies: dict[int, list[dict[str, Any]]],
          changes: list[dict[str, Any]] | None = None,
          warnings: dict[int, int] | None = None) -> list[Day]:
    """Every candidate of `text` on June 12..8, scored over `bodies` (day of June -> the
    services' summaries then; the paged service's everyday noise on the others)."""
    reading = read_page(text)
    assert reading.time is not None and reading.dateless
    days = [Day(reading.time.on(date(2025, 6, d))) for d in JUNE]
    summaries = {}
    for day in days:
        body = bodies.get(day.at.day) or [noise(reading.service or "cart", day.at)]
        for part in body:
            part["warnings"] = (warnings or {}).get(day.at.day, 2) if part[
                "service"] == reading.service else part.get("warnings", 0)
        summaries[day.at] = triage.Seen("error_summary", {}, summary(*body, until=day.at), "")
    score_days(reading, text, days, summaries, changes or [], None)
    return days


def _best(days: list[Day]) -> date:
    return max(days, key=lambda d: (d.score, d.at)).at.date()


def _live(name: str, message: str, at: datetime, count: int = 60) -> dict[str, Any]:
    """`name` logging `message` for the 15 minutes before `at` (an incident message)."""
    return service(name, (message, count, at - timedelta(minutes=15),
                          at - timedelta(seconds=30)))


# --- the errors the page quotes or describes ---------------------------------------------------


def test_a_quoted_error_settles_the_day_it_was_logged_over_a_near_miss() -> None:
    text = "13:55 AEST - gw: POST /login 502 'upstream auth returned 503', ~3%. auth looks sick"
    at = {d: read_page(text).time.on(date(2025, 6, d)) for d in JUNE}  # type: ignore[union-attr]
    days = _days(text, {
        12: [_live("gateway", "upstream auth returned 500", at[12]),
             _live("auth", "Argon2VerifyError: unsupported hash prefix", at[12])],
        11: [_live("gateway", "upstream auth returned 503", at[11]),
             _live("auth", "token signing key unavailable: kms request failed", at[11])],
    })
    # Both days have the gateway and auth failing; only the 11th logged the quoted message.
    assert _best(days) == date(2025, 6, 11)
    assert "the error the page quotes" in max(days, key=lambda d: d.score).why
    assert not guessed(days)


def test_the_errors_a_page_describes_in_its_own_words_count_for_the_named_services() -> None:
    message = "inventory reservation failed: 503 from inventory"
    assert message_evidence("checkout is failing on inventory reservations right now",
                            [triage_message("checkout", message)], {"checkout"})[0] > 0
    # A service the page does not name is no evidence, nor are the everyday words of errors.
    assert message_evidence("checkout is failing on inventory reservations",
                            [triage_message("cart", message)], {"checkout"})[0] == 0
    assert message_evidence("checkout requests failing with errors",
                            [triage_message("checkout", "request failed: error")],
                            {"checkout"})[0] == 0


def triage_message(service_name: str, text: str) -> Any:
    from domains.incidents.page_day_evidence import Message

    return Message(service_name, text)


# --- a release dated by a weekday, a setting, changes in a span --------------------------------


def test_a_release_dated_by_a_weekday_counts_on_every_day_since_not_only_the_next() -> None:
    assert dated_versions("memory rising since monday's 1.23.0 - days of climbing") == {
        "1.23.0": ("monday", 0)}
    assert dated_versions("no deploys since fri (8.3.0). restart?")["8.3.0"][1] == 4
    assert dated_versions("since the 6.2.0 deploy yesterday evening")["6.2.0"][1] == -1
    assert dated_versions("pricing 1.23.0 has a leak") == {}
    release = {"change_id": "dep-pricing-20250609-1500", "service": "pricing", "kind": "deploy",
               "at": "2025-06-09T15:00:00Z", "target": "version", "from": "1.22.4",
               "to": "1.23.0"}
    text = "02:30 GMT pricing p95 3x, heap 84%. memory rising since monday's 1.23.0"
    # Without the weekday, "the 1.23.0" within 24 h puts the page on the 10th; with it, every
    # day since Monday fits, and the pricing warnings of the 12th (GC pauses) single it out.
    days = _days(text, {}, [release], warnings={12: 67})
    assert _best(days) == date(2025, 6, 12) and not guessed(days)
    assert [d.at.day for d in days if d.score >= 4] == [12, 11, 10]
    # The weekday alone ties those days: a guess.
    assert guessed(_days(text, {}, [release]))


def test_a_services_change_dated_by_a_day_word_counts_on_the_day_after_it() -> None:
    text = ("checkout spinning, 'service unavailable'. Writing at 8:35am ET. Is it the "
            "payments update from this morning?")
    assert dated_services(text) == {"payments": ("this morning", -2)}
    assert dated_services("no deploys to pricing since monday") == {}
    update = {"change_id": "dep-payments-20250610-1156", "service": "payments",
              "kind": "deploy", "at": "2025-06-10T11:56:00Z", "target": "version",
              "from": "7.4.0", "to": "7.4.1"}
    days = _days(text, {}, [update])
    assert _best(days) == date(2025, 6, 10) and not guessed(days)


def test_a_setting_written_as_the_data_writes_it_names_its_config_change() -> None:
    change = {"change_id": "cfg-pricing-20250610-1419", "service": "pricing", "kind": "config",
              "at": "2025-06-10T14:19:00Z", "target": "promotions.max_stack", "from": "2",
              "to": "3"}
    text = ("15:40 BST PromoEvalErrors warn on pricing. promotions.max_stack went 2 -> 3 at "
            "15:19 BST, is that breaking promos?")
    assert settings_named(text, [change]) == [change]
    assert _best(_days(text, {}, [change])) == date(2025, 6, 10)


def test_changes_a_page_says_happened_in_a_span_before_it_name_the_day() -> None:
    assert change_span("profile and cart both deployed in the last two hours") == timedelta(
        hours=2)
    assert change_span("no deploys in the last 2 hours") is None
    text = "16:00 CEST RecsErrors warn. profile and cart both deployed in the last two hours"
    deploy = {"change_id": "dep-cart-20250609-1353", "service": "cart", "kind": "deploy",
              "at": "2025-06-09T13:53:00Z", "target": "version", "from": "1", "to": "2"}
    assert _best(_days(text, {}, [deploy])) == date(2025, 6, 9)


# --- a guess proposes no rollback --------------------------------------------------------------


def test_a_day_nothing_singles_out_or_a_tie_is_a_guess_and_one_failing_day_is_not() -> None:
    at = utc("2025-06-12 09:40")
    assert guessed([Day(at, 0.0), Day(at - timedelta(days=1), 0.0)])
    assert guessed([Day(at, 2.0), Day(at - timedelta(days=1), 2.0)])
    assert not guessed([Day(at, 2.0), Day(at - timedelta(days=1), 0.0)])
    assert not guessed([Day(at, 0.0)])  # the one day the page's weekday or date allows


def test_a_guessed_day_proposes_no_rollback_and_the_answer_asks_a_human() -> None:
    errors = summary(cart_incident(), noise("shipping"))
    packet = Handoff(id="deploys-3", recipient="deploys", objective="find the change",
                     inputs={"paged_service": "cart", "page_time": "2025-06-09T09:40Z"})
    seen = findings(warnings=[], errors=errors)
    (proposed,) = plugin.suggest_rollback(packet, seen)  # settled day: the cart deploy
    guess = packet.model_copy(update={"inputs": {**packet.inputs, DAY_GUESS: "yes"}})
    assert plugin.suggest_rollback(guess, seen) == []
    assert plugin.check_rollback(proposed, guess, seen) is not None
    assert plugin.check_rollback(proposed, packet, seen) is None
    reading = read_page("09:40 UTC cart 500s")
    claim = plugin.time_claim(reading, utc("2025-06-09 09:40"), "cart was failing", True)
    assert "guess" in claim and "confirm" in claim
    assert plugin.day_guessed({"packets": [guess]}) and not plugin.day_guessed(
        {"packets": [packet]})


async def test_a_week_of_changes_is_read_in_pieces_the_hub_keeps_whole() -> None:
    class Hub:
        def __init__(self) -> None:
            self.windows: list[tuple[str, str]] = []

        async def call(self, tool: str, args: dict[str, Any], allowed: list[str]) -> Any:
            self.windows.append((args["since"], args["until"]))
            since = datetime.fromisoformat(args["since"].replace("Z", "+00:00"))
            until = datetime.fromisoformat(args["until"].replace("Z", "+00:00"))
            whole = until - since <= timedelta(days=2)  # a longer list is cut: not JSON
            body = json.dumps({"changes": [{"change_id": f"c-{args['since']}"}]})
            return SimpleNamespace(ok=True, text=body if whole else body[:10])

    hub = Hub()
    found = await _changes(hub, utc("2025-06-01 00:00"), utc("2025-06-12 15:00"))  # type: ignore[arg-type]
    assert len(found) == len(hub.windows) == 6


# --- clock times in words, and a service label -------------------------------------------------


def test_a_clock_time_in_words_with_a_zone_is_the_pages_time_in_either_half_of_the_day() -> None:
    page = read_page_time("the account page is erroring. it's about ten to four UTC. profile")
    assert page is not None and page.clock == time(3, 50) and page.either_half
    evening = read_page_time("this evening, quarter past seven CEST: cart 500s")
    assert evening is not None and evening.clock == time(19, 15) and not evening.either_half
    assert read_page_time("five to ten minutes of cart errors") is None
    text = "it's about ten to four UTC, profile 503s"
    moments = candidates(read_page(text), text, utc("2025-06-12 15:00"))
    assert utc("2025-06-12 03:50") in moments and utc("2025-06-11 15:50") in moments
    assert len(moments) == 15  # 15:50 on the 12th is after the data's end


def test_a_service_label_in_an_alert_payload_names_the_paged_service() -> None:
    payload = ('{"labels": {"alertname": "PaymentIntentBuildFailures", "service": "checkout", '
               '"severity": "critical"}}')
    assert paged_service_of(payload) == "checkout"
    assert paged_service_of("CartLatencyP95High firing service=checkout") == "checkout"
