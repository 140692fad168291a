"""The web inbox's other decisions in a real browser: edit, reject and respond (issue 27,
item 3), on a laptop-sized window.

Same setup as tests/test_inbox.py (Debian's chromium driven by Playwright's client, real
`muster serve` with accounts, real SQLite store and MCP servers). The lead logs in with three
threads waiting: the reference refund, the $649 refund and a clarifying question. The page
fits the window (no sideways scrolling at 1366x768 or 1280x720); the reference refund is
approved from the keyboard for a smaller amount typed into its field (one refund row, of
that amount); the $649 one is rejected (no refund row); the question is answered in free
text and its thread goes on with the order it names. Every wait is Playwright's own wait
on the page, never a sleep.
"""

from __future__ import annotations

import pytest

from tests.conftest import HANG_TIMEOUT_S, MusterEnv, calls_so_far
from tests.test_actions import REFUND_TICKET, refund_rows
from tests.test_approvers import BIG_ORDER, BIG_TICKET, add_big_order
from tests.test_inbox import browser  # noqa: F401 (the fixture)
from tests.test_serve_accounts import PASSWORDS, Served, served  # noqa: F401 (the fixture)

pytestmark = pytest.mark.integration

WAIT_MS = HANG_TIMEOUT_S * 1000
QUESTION_TICKET = "I was charged twice for my order"
"""No order id: the thread asks which order (tests/test_serve.py)."""


def test_edit_reject_and_respond_in_the_inbox(
    served: Served,  # noqa: F811 (before the browser: its setup runs `muster account`)
    muster_env: MusterEnv,
    browser: object,  # noqa: F811
) -> None:
    from playwright.sync_api import Browser, expect

    assert isinstance(browser, Browser)
    add_big_order(muster_env)
    served.submit(REFUND_TICKET, "ref")
    served.submit(BIG_TICKET, "big")
    served.submit(QUESTION_TICKET, "ask")
    assert served.thread("ask")["pending_questions"], "the question thread asks nothing"
    expect.set_options(timeout=WAIT_MS)

    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.goto(f"{served.url}/inbox")
    page.get_by_label("Name").fill("lead")
    page.get_by_label("Password").fill(PASSWORDS["lead"])
    page.get_by_label("Password").press("Enter")
    expect(page).to_have_url(f"{served.url}/inbox")
    expect(page.locator("article.approval")).to_have_count(2)
    expect(page.locator("article.question")).to_have_count(1)
    fits = "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    assert page.evaluate(fits), "the inbox scrolls sideways at 1366x768"
    page.set_viewport_size({"width": 1280, "height": 720})
    assert page.evaluate(fits), "the inbox scrolls sideways at 1280x720"
    notice = page.locator("#notice")

    # Edit: a smaller refund, typed into the amount field, approved with Enter on Approve.
    ref = page.locator('article.approval[data-thread="ref"]')
    amount = ref.get_by_label("amount_cents (1 to 12900)")
    amount.focus()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type("5000")
    ref.get_by_label("Note for the audit log").fill("half now, the rest after the bank confirms")
    ref.get_by_role("button", name="Approve").focus()
    page.keyboard.press("Enter")
    expect(notice).to_contain_text("Approved by lead")
    expect(page.locator("#thread-status")).to_have_text("done")
    expect(page.locator("#thread-actions")).to_contain_text("executed")
    assert [r["amount_cents"] for r in refund_rows(muster_env, "12345")] == [5000]
    assert calls_so_far(muster_env.call_log, server="orders", tool="issue_refund") == 1
    (record,) = [a for a in served.thread("ref")["actions"] if a["status"] == "executed"]
    assert record["args"]["amount_cents"] == 5000 and record["decided_by"] == "lead"

    # Reject: the $649 refund, from the keyboard; nothing is refunded.
    # (Clicked: a redraw keeps this card and its focus, as the last test checks.)
    big = page.locator('article.approval[data-thread="big"]')
    big.get_by_role("button", name="Reject").click()
    expect(notice).to_contain_text("Rejected by lead")
    expect(page.locator('article.approval[data-thread="big"]')).to_have_count(0)
    served.wait_for("big", "done")
    assert refund_rows(muster_env, BIG_ORDER) == []
    actions = served.thread("big")["actions"]
    assert [(a["status"], a["decided_by"]) for a in actions][-1] == ("rejected", "lead")

    # Respond: the question is answered in free text; the thread goes on with the answer.
    # Typed and sent in one step of the page (a redraw keeps what was typed: the last test).
    question = page.locator("article.question")
    expect(question.get_by_label("Your answer")).to_be_editable()
    question.locator("form").evaluate(
        """(form, text) => { form.elements.answer.value = text;
            form.requestSubmit(form.querySelector("button[type=submit]")); }""",
        "It is order #12345",
    )
    expect(notice).to_contain_text("Answered: thread ask continues.")
    expect(page.locator("article.question")).to_have_count(0)
    # Order 12345 was refunded in part above: the thread goes on about it, and is done.
    after = served.wait_for("ask", "done")
    assert not after["pending_questions"]
    assert "12345" in after["answer"]["text"]
    answers = [r for r in after["audit"] if r["event"] == "authenticated"]
    assert [r["actor"] for r in answers] == ["lead"]
    context.close()


def test_a_redraw_keeps_what_was_typed_in_another_card(
    served: Served,  # noqa: F811 (before the browser: its setup runs `muster account`)
    muster_env: MusterEnv,
    browser: object,  # noqa: F811
) -> None:
    """A half-typed decision survives another thread's change: the inbox watches the thread
    it shows (big), big is rejected from elsewhere (the API), the cards are redrawn without
    it, and the ref card still holds the amount and note typed into it, with the focus and
    the caret where they were; Enter then approves with them."""
    from playwright.sync_api import Browser, expect

    assert isinstance(browser, Browser)
    add_big_order(muster_env)
    served.submit(REFUND_TICKET, "ref")
    served.submit(BIG_TICKET, "big")
    expect.set_options(timeout=WAIT_MS)
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.goto(f"{served.url}/inbox")
    page.get_by_label("Name").fill("lead")
    page.get_by_label("Password").fill(PASSWORDS["lead"])
    page.get_by_label("Password").press("Enter")
    expect(page.locator("article.approval")).to_have_count(2)

    big = page.locator('article.approval[data-thread="big"]')
    big.get_by_role("button", name="Open thread").click()
    expect(page.locator('#thread[data-watching="big"]')).to_have_count(1)  # its events come

    ref = page.locator('article.approval[data-thread="ref"]')
    amount = ref.get_by_label("amount_cents (1 to 12900)")
    amount.fill("5000")
    note = ref.get_by_label("Note for the audit log")
    note.focus()
    page.keyboard.type("half now, the rest la")  # half-typed: the focus stays in it

    with served.client() as client:  # big changes: decided from another place
        rejected = client.post(
            "/threads/big/decisions", json={"decision": "reject"}, headers=served.bearer("lead")
        )
    assert rejected.status_code == 202, rejected.text
    expect(page.locator("#thread-status")).to_have_text("done")  # the page saw it change
    expect(big).to_have_count(0)  # and redrew the cards without it
    expect(page.locator("article.approval")).to_have_count(1)

    expect(amount).to_have_value("5000")
    expect(note).to_have_value("half now, the rest la")
    expect(note).to_be_focused()
    page.keyboard.type("ter")  # the caret is where it was
    expect(note).to_have_value("half now, the rest later")
    page.keyboard.press("Enter")  # submits the ref card: Approve, with what was typed
    expect(page.locator("#notice")).to_contain_text("Approved by lead")
    served.wait_for("ref", "done")
    assert [r["amount_cents"] for r in refund_rows(muster_env, "12345")] == [5000]
    (record,) = [a for a in served.thread("ref")["actions"] if a["status"] == "executed"]
    assert record["args"]["amount_cents"] == 5000
    context.close()
