"""The web inbox in a real browser: Debian's chromium (scripts/ensure_chromium.sh), driven by
Playwright's client (never its own browser download), against real `muster serve` with
accounts, the real SQLite store and real MCP servers.

A wrong password is refused; alice (an agent) logs in, sees both refunds waiting, and her
approval of the $649 one is refused by the server (a refund above $500 needs a team lead), as
is a write of her session with a forged CSRF token; the lead logs in, reads the reference
ticket's pending refund with its evidence, policy and draft reply, approves it from the
keyboard, and sees it executed: the orders server saw one refund call and holds one row.
The search and the timeline page work from the same session. Every wait is Playwright's
own wait on the page (one bound, `HANG_TIMEOUT_S`), never a fixed sleep.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from tests.conftest import HANG_TIMEOUT_S, MusterEnv, calls_so_far
from tests.test_actions import REFUND_TICKET, refund_rows
from tests.test_approvers import BIG_ORDER, BIG_TICKET, add_big_order
from tests.test_serve_accounts import PASSWORDS, Served, served  # noqa: F401 (the fixture)

pytestmark = pytest.mark.integration

WAIT_MS = HANG_TIMEOUT_S * 1000


def chromium_path() -> str:
    exe = shutil.which("chromium")
    if exe is None:
        why = "chromium is not installed (scripts/ensure_chromium.sh installs it)"
        if os.environ.get("CI") or os.environ.get("MUSTER_REQUIRE_CHROMIUM"):
            pytest.fail(f"{why}; CI/MUSTER_REQUIRE_CHROMIUM is set, so the browser tests must run")
        pytest.skip(why)
    return exe


@pytest.fixture
def browser() -> Iterator[object]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium_path(),
            args=["--no-sandbox", "--disable-gpu", "--disable-extensions"],
            timeout=WAIT_MS,
        )
        try:
            yield launched
        finally:
            launched.close()


def test_log_in_see_the_evidence_approve_once(
    served: Served,  # noqa: F811 (before the browser: its setup runs `muster account`)
    muster_env: MusterEnv,
    browser: object,
) -> None:
    from playwright.sync_api import Browser, Page, expect

    assert isinstance(browser, Browser)
    add_big_order(muster_env)
    served.submit(REFUND_TICKET, "ref")
    served.submit(BIG_TICKET, "big")
    expect.set_options(timeout=WAIT_MS)

    def log_in(page: Page, name: str, password: str) -> None:
        page.goto(f"{served.url}/inbox")
        expect(page).to_have_url(f"{served.url}/login")  # no session: the login page
        page.get_by_label("Name").fill(name)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Log in").click()

    context = browser.new_context(viewport={"width": 1366, "height": 768})  # a laptop
    page = context.new_page()
    log_in(page, "alice", "not-her-password")
    expect(page.get_by_role("alert")).to_have_text("Wrong name or password.")

    log_in(page, "alice", PASSWORDS["alice"])
    expect(page).to_have_url(f"{served.url}/inbox")
    expect(page.locator("#me")).to_have_text("alice")
    cards = page.locator("article.approval")
    expect(cards).to_have_count(2)
    big = page.locator('article.approval[data-thread="big"]')
    expect(big.locator(".needs")).to_contain_text("team_lead")
    big.get_by_role("button", name="Approve").click()
    notice = page.locator("#notice")
    expect(notice).to_contain_text("Refused (403, role)")
    expect(notice).to_contain_text("Refunds above $500 need a team lead")
    forged = page.evaluate(
        """async () => (await fetch("/threads/big/decisions", {method: "POST",
            headers: {"Content-Type": "application/json", "X-CSRF-Token": "forged"},
            body: JSON.stringify({decision: "reject"})})).status"""
    )
    assert forged == 403
    assert refund_rows(muster_env, BIG_ORDER) == []
    assert served.thread("big")["thread_status"] == "interrupted"
    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(f"{served.url}/login")

    log_in(page, "lead", PASSWORDS["lead"])
    card = page.locator('article.approval[data-thread="ref"]')
    expect(card.get_by_role("heading", level=3)).to_have_text("orders.issue_refund on thread ref")
    expect(card).to_contain_text("12900 ($129.00)")
    expect(card.locator("ul").first).to_contain_text("POL-BIL-004")  # the policy
    expect(card).to_contain_text("orders.find_order(order_id=12345)")  # the evidence
    expect(card.locator("blockquote.draft")).to_contain_text("refund")
    digest = served.thread("ref")["pending_approvals"][0]["digest"]
    expect(card.locator("code.digest")).to_have_text(digest)
    # From the keyboard: the amount field is labelled, and the approve button takes Enter.
    expect(card.get_by_label("amount_cents (1 to 12900)")).to_have_value("12900")
    card.get_by_role("button", name="Approve").focus()
    page.keyboard.press("Enter")
    expect(notice).to_contain_text("Approved by lead")
    expect(page.locator("#thread-status")).to_have_text("done")
    expect(page.locator("#thread-actions")).to_contain_text("executed")
    assert [r["amount_cents"] for r in refund_rows(muster_env, "12345")] == [12900]
    assert calls_so_far(muster_env.call_log, server="orders", tool="issue_refund") == 1
    expect(page.locator('article.approval[data-thread="ref"]')).to_have_count(0)

    # Search by subject and status, then the timeline of what was found.
    page.get_by_label("Subject").fill(BIG_ORDER)
    page.get_by_label("Status").select_option("interrupted")
    page.get_by_role("button", name="Search").click()
    rows = page.locator("#thread-list tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("big")
    rows.first.get_by_role("button", name="big").click()
    expect(page.locator("#thread-title")).to_have_text("Thread big")
    page.get_by_role("link", name="Timeline").click()
    expect(page).to_have_url(f"{served.url}/inbox/threads/big/timeline")
    expect(page.locator("body")).to_contain_text("big")
    context.close()
